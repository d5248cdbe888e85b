//! What a kustomization's inputs say before (or after) it is built: a file too large to build,
//! a resource that is a template another tool fills in, a generator that is a plugin, the
//! resource whose YAML a failed build could not read.

use crate::source::tree::{Kustomization, Ref, Target, identity};
use crate::source::{MAX_FILE_BYTES, SourceFile, Sources, parsed_file};
use crate::yaml::{ProblemKind, Span};
use std::path::Path;

/// The key kustomize could not convert to JSON, from its message (`…: json: unsupported type:
/// map[interface {}]interface {}`, after a dump of the resource that shows the mapping as
/// `map[interface {}]interface {}{9092:"…"`): a key YAML reads as a number or a boolean.
/// The message [`super::clean_error`] makes of it names the key alone (`the key \`9092\` is
/// not a string`).
pub(crate) fn non_string_key(message: &str) -> Option<&str> {
    const MAP: &str = "map[interface {}]interface {}{";
    const NAMED: &str = "the key `";
    if !message.contains("json: unsupported type: map[interface {}]interface {}") {
        return None;
    }
    let key = match message.find(NAMED) {
        Some(i) => message[i + NAMED.len()..].split('`').next()?,
        None => {
            let rest = &message[message.find(MAP)? + MAP.len()..];
            &rest[..rest.find(':')?]
        }
    };
    (!key.is_empty() && !key.contains(['"', ' ', '{', '}', '`'])).then_some(key)
}

/// The first resource file of a build that writes `key` as a plain mapping key (`9092:`), and
/// where: the place of [`non_string_key`]'s failure.
pub(super) fn key_fault(s: &Sources, top: &Path, key: &str) -> Option<(SourceFile, Span, String)> {
    fn find(n: crate::yaml::Node<'_>, key: &str) -> Option<Span> {
        if let Some(m) = n.as_map() {
            return m.iter().find_map(|(k, v)| {
                let plain = k.style() == Some(crate::yaml::Style::Plain);
                if plain && k.as_str() == Some(key) {
                    Some(k.span())
                } else {
                    find(v, key)
                }
            });
        }
        n.as_seq()?.iter().find_map(|i| find(i, key))
    }
    first_resource(s.forest.chain(top), |f| {
        let span = f.docs.iter().find_map(|d| find(d.root(), key))?;
        let what = format!(
            "the key `{key}` is not a string (YAML reads it as a number or a boolean), and kustomize converts each resource to JSON, whose keys are strings: quote it (`\"{key}\":`)"
        );
        Some((span, what))
    })
}

/// The first resource file of a build (its kustomizations' `resources` entries, in order) of
/// which `fault` tells where and what.
fn first_resource(
    chain: Vec<&Kustomization>,
    fault: impl Fn(&SourceFile) -> Option<(Span, String)>,
) -> Option<(SourceFile, Span, String)> {
    chain.into_iter().find_map(|c| {
        c.refs
            .iter()
            .filter(|r| r.field == "resources")
            .find_map(|r| {
                let Target::File(p) = &r.target else {
                    return None;
                };
                let f = parsed_file(p)?;
                let (span, what) = fault(&f)?;
                Some((f, span, what))
            })
    })
}

/// An entry of `k` naming a file over the size raw reading keeps to: kustomize would read all
/// of it and, at tens of megabytes, run into the build time limit instead of failing.
pub(super) fn oversized(k: &Kustomization) -> Option<&Ref> {
    k.refs.iter().find(|r| match &r.target {
        Target::File(f) => std::fs::metadata(f).is_ok_and(|m| m.len() > MAX_FILE_BYTES),
        _ => false,
    })
}

/// A resource of the kustomization that is a template another tool fills in first
/// (`storage: {{CACHE_PVC_SIZE}}` that a script's `sed` replaces): kustomize cannot build it as
/// written. The entry, with the template's first marker.
pub(super) fn template_resource(k: &Kustomization) -> Option<(&Ref, String)> {
    // Asked once per build, cache key and batch of every overlay over the same base: read once.
    let (i, marker) = k
        .template
        .get_or_init(|| find_template_resource(k))
        .as_ref()?;
    Some((k.refs.get(*i)?, marker.clone()))
}

/// The first file a kustomization reads that is committed encrypted (git-crypt, Ansible
/// Vault…), with the tool: the checkout is decrypted before it is built.
pub(super) fn encrypted_input(k: &Kustomization) -> Option<(&Ref, &'static str)> {
    k.refs.iter().find_map(|r| {
        let Target::File(f) = &r.target else {
            return None;
        };
        let mut head = [0u8; 20];
        let n = std::io::Read::read(&mut std::fs::File::open(f).ok()?, &mut head).ok()?;
        Some((r, crate::text::encrypted_by(&head[..n])?))
    })
}

/// The resources of a kustomization when every one is an operator's sample as kubebuilder
/// scaffolds it (`config/samples/`, still holding `TODO(user)`): placeholders to fill in, as the
/// raw files are (see `scaffold_sample`); the first of them. A kustomization with a sample
/// filled in is built whole.
pub(super) fn scaffold_resource(k: &Kustomization) -> Option<&Ref> {
    let mut files = k.refs.iter().filter(|r| r.field == "resources").peekable();
    let first = *files.peek()?;
    files
        .all(|r| {
            let Target::File(f) = &r.target else {
                return false;
            };
            // Read only where the path may be one: every build asks.
            let path = f.to_string_lossy();
            path.contains("/config/samples/")
                && std::fs::metadata(f).is_ok_and(|m| m.len() <= MAX_FILE_BYTES)
                && std::fs::read_to_string(f)
                    .is_ok_and(|t| crate::source::scaffold_sample(&path, &t))
        })
        .then_some(first)
}

fn find_template_resource(k: &Kustomization) -> Option<(usize, String)> {
    k.refs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.field == "resources")
        .find_map(|(i, r)| {
            let Target::File(f) = &r.target else {
                return None;
            };
            if !std::fs::metadata(f).is_ok_and(|m| m.len() <= MAX_FILE_BYTES) {
                return None;
            }
            let text = std::fs::read_to_string(f).ok()?;
            Some((i, template_hint(&text)?.marker))
        })
}

/// Whether a file's text is a template, and its first marker: any marker where the text does
/// not parse, one that changes the structure where it does.
pub(super) fn template_hint(text: &str) -> Option<crate::yaml::compat::TemplateHint> {
    // Most files hold no marker at all: ruled out before any parse.
    if !text.contains('{') && !text.contains('%') {
        return None;
    }
    let parsed = crate::yaml::compat::parse(text, crate::yaml::Budget::default());
    match crate::yaml::compat::syntax_error(&parsed) {
        Some(_) => crate::yaml::compat::template_markers(text),
        None => crate::yaml::compat::structural_template_markers(text),
    }
}

/// The first resource file of a build (its kustomizations' `resources` entries, in order) that
/// does not parse or holds a duplicate key: the file, where, and what (without the advice the
/// `invalid-yaml` finding adds for a file read on its own).
pub(super) fn yaml_fault(s: &Sources, top: &Path) -> Option<(SourceFile, Span, String)> {
    let chain = s.forest.chain(top);
    // A kustomization that is not YAML itself is the place.
    if chain.iter().any(|c| !c.file.problems.is_empty()) {
        return None;
    }
    first_resource(chain, |f| {
        let problem = f
            .problems
            .iter()
            .find(|p| matches!(p.kind, ProblemKind::Syntax | ProblemKind::Content))?;
        let what = problem
            .message
            .split_once(": YAML forbids it")
            .map_or(problem.message.as_str(), |(w, _)| w)
            .to_string();
        Some((problem.span, what))
    })
}

/// A `generators` or `transformers` entry of `k` whose configuration is a plugin's (KSOPS,
/// an exec or KRM function): any `apiVersion` but kustomize's `builtin`. kustomize runs it only
/// with plugins enabled, which a linter never does. The entry, with the plugin's kind.
/// The built-in generator that inflates a Helm chart (what `helmCharts:` configures inline).
pub(super) const HELM_GENERATOR: &str = "HelmChartInflationGenerator";

pub(super) fn plugin_entry(k: &Kustomization) -> Option<(&Ref, String)> {
    k.refs
        .iter()
        .filter(|r| matches!(r.field, "generators" | "transformers"))
        .find_map(|r| {
            let Target::File(f) = &r.target else {
                return None;
            };
            if !std::fs::metadata(f).is_ok_and(|m| m.len() <= 1 << 20) {
                return None;
            }
            let text = std::fs::read_to_string(f).ok()?;
            let parsed = crate::yaml::compat::parse(&text, crate::yaml::Budget::default());
            let root = parsed.docs.first()?.root();
            let api = root.str_at(&["apiVersion"])?;
            let kind = root.str_at(&["kind"]).unwrap_or(api);
            // The built-in Helm generator, configured in its own file: a chart to inflate.
            (api != "builtin" || kind == HELM_GENERATOR).then(|| (r, kind.to_string()))
        })
}

/// Builds `k` (the top of `chain`) with `wrap`. Refused only for reading a file outside a
/// kustomization's directory, it is built again without kustomize's load restrictor when
/// everything the build names lies inside this repository: Flux builds every kustomization so
/// (confined to its source's checkout), and Argo CD does with `--load-restrictor
/// LoadRestrictionsNone` in its `kustomize.buildOptions`, the option such a tree's author
/// evidently uses. Its objects are then linted; nothing outside the repository is read.
pub(super) fn build_as_flux(
    s: &Sources,
    tool: &super::Tool,
    k: &Kustomization,
    chain: &[&Kustomization],
    wrap: &super::Wrap,
) -> Result<super::Built, super::Failed> {
    let build = |loading| super::build(tool, &k.dir, wrap, loading, s.config.timeout);
    match build(super::Loading::Restricted) {
        Err(f) if super::outside_root(&f.message) && confined(s, chain) => {
            build(super::Loading::Unrestricted).map_err(|_| f)
        }
        other => other,
    }
}

/// Whether every path the kustomizations of a build name lies inside the repository (after
/// symbolic links), so that a build without kustomize's load restrictor reads nothing else.
fn confined(s: &Sources, chain: &[&Kustomization]) -> bool {
    let root = identity(&s.root);
    chain.iter().all(|c| {
        c.dir.starts_with(&root)
            && c.refs.iter().all(|r| match &r.target {
                Target::Kustomization(p) | Target::File(p) | Target::Dir(p) => p.starts_with(&root),
                Target::Missing(p) => identity(p).starts_with(&root),
                Target::Remote => false,
            })
    })
}
