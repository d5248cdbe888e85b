//! Building a kustomization with origin annotations, and taking them off again.
//!
//! The overlay is built through a wrapper kustomization in a private temporary directory:
//! `resources: [<relative path to the overlay>]` plus `buildMetadata: [originAnnotations]`, so
//! every object comes out annotated with the file it was read from, without touching the repo.
//! kustomize refuses an absolute path as a resource root ("new root cannot be absolute") but takes
//! a relative one that leaves the wrapper's directory: directory resources are not subject to the
//! load restrictor, so the default `--load-restrictor` stays in force.
//!
//! Several overlays may share one wrapper and one process ([`build_many`]); the output is then
//! split back into each overlay's own build by the directories its documents' origins name.
//!
//! `builder` makes kustomize a kind of built source (its units, batches, and the file each
//! outcome becomes); [`remap`] points findings on a build back at its sources.

use super::exec::{self, Invocation};
use super::tree::{identity, normalize, relative};
use crate::yaml::{self, Budget, Node};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod failures;
pub(crate) use failures::{
    crashed, lacks_input, namespace_from_builder, older_form, outside_root, written_by,
    written_files,
};
mod builder;
mod cached;
mod inputs;
pub mod remap;

pub use builder::Builds;
pub(super) use builder::{Kustomize, Unit};

/// How a build failure starts its message; the `source-build-failed` rule owns such problems.
pub const FAILED: &str = "`kustomize build` failed: ";

/// The annotation `buildMetadata: [originAnnotations]` adds.
pub const ORIGIN_KEY: &str = "config.kubernetes.io/origin";

/// The program that builds kustomizations: standalone kustomize, else kubectl's built-in one.
#[derive(Clone, Debug)]
pub struct Tool {
    pub program: PathBuf,
    /// `build` for kustomize, `kustomize` for kubectl.
    pub subcommand: &'static str,
}

impl Tool {
    pub fn find() -> Option<Tool> {
        if let Some(p) = exec::which("kustomize") {
            return Some(Tool {
                program: p,
                subcommand: "build",
            });
        }
        exec::which("kubectl").map(|p| Tool {
            program: p,
            subcommand: "kustomize",
        })
    }
}

/// Where a document of a kustomize build came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read from this file (identity).
    File(PathBuf),
    /// Made by a generator configured in this kustomization file (identity).
    Generated {
        kustomization: PathBuf,
    },
    /// From a remote base.
    Remote,
    Unknown,
}

/// A successful build.
#[derive(Debug)]
pub struct Built {
    /// The output with the origin annotations removed.
    pub text: String,
    /// Per document of `text`, where it came from.
    pub origins: Vec<Origin>,
    pub command: String,
}

/// A failed build: the tool's message, trimmed, and the kustomization directory it names as the
/// one at fault (when it is not the overlay itself).
#[derive(Debug)]
pub struct Failed {
    pub message: String,
    pub at: Option<PathBuf>,
    pub command: String,
    /// It failed only because a file it reads is missing (or the kustomization is an empty
    /// placeholder): read from kustomize's whole message, before it is shortened.
    pub missing_input: bool,
    /// Killed at the time limit.
    pub timed_out: bool,
}

/// What the wrapper kustomization adds around the overlay: an Argo CD Application's kustomize
/// options.
#[derive(Clone, Debug, Default)]
pub struct Wrap {
    /// Kustomization fields (`namePrefix: …`), one per line.
    pub fields: String,
    /// Component directories (identities).
    pub components: Vec<PathBuf>,
}

impl Wrap {
    /// Nothing is added: the build is the kustomization's own.
    pub fn is_plain(&self) -> bool {
        self.fields.is_empty() && self.components.is_empty()
    }
}

/// How kustomize may read files: under its default load restrictor (only inside each
/// kustomization's directory), or without it (`--load-restrictor LoadRestrictionsNone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loading {
    Restricted,
    Unrestricted,
}

/// Builds the kustomization in `dir` (an identity), through a wrapper with `wrap` added.
pub fn build(
    tool: &Tool,
    dir: &Path,
    wrap: &Wrap,
    loading: Loading,
    timeout: Duration,
) -> Result<Built, Failed> {
    let run = match run_wrapper(tool, &[dir], wrap, ORIGINS, loading, timeout) {
        Ok(r) => r,
        Err(message) => {
            return Err(Failed {
                message,
                at: None,
                command: String::new(),
                missing_input: false,
                timed_out: false,
            });
        }
    };
    match run.out {
        Ok(text) => {
            let (text, origins) = strip_origins(&text, &run.wrapper_dir);
            Ok(Built {
                text,
                origins,
                command: run.command,
            })
        }
        Err(e) => {
            let timed_out = matches!(e, exec::ExecError::Timeout(_));
            let (message, at, missing_input) = match e {
                exec::ExecError::Failed(m) => {
                    let (message, at) = clean_error(&m, &run.scratch_path);
                    let generated = failures::generated_kustomization(&message);
                    (
                        message,
                        at,
                        lacks_input(&m) || outside_root(&m) || generated,
                    )
                }
                other => (other.to_string(), None, false),
            };
            Err(Failed {
                message,
                at,
                command: run.command,
                missing_input,
                timed_out,
            })
        }
    }
}

/// Builds several kustomizations in one process, each what [`build`] (without a `wrap`) gives
/// it, in `tops` order. A `kustomize` process costs a quarter of a second before it reads
/// anything, and a GitOps repository has an overlay per application and cluster: one process for
/// many overlays takes about what one overlay alone takes.
///
/// `tops` are the overlay directories (identities), each with the kustomization directories its
/// build reads (its own included). Directories of different tops are the same or apart, never
/// one inside another. A document belongs to the one top reading the directory its origin
/// annotation names; from a directory several tops read (a shared base), to the one whose own
/// kustomization transformed it: overlays of one base that do not collide differ by a
/// `namespace:`, a prefix or a suffix, and the transformer annotations say which kustomization
/// configured it. `None` when the build fails or a document cannot be told apart that way
/// (then each is built on its own, and reports its own failure).
pub fn build_many(
    tool: &Tool,
    tops: &[(&Path, Vec<&Path>)],
    timeout: Duration,
) -> Option<Vec<Built>> {
    let dirs: Vec<&Path> = tops.iter().map(|(d, _)| *d).collect();
    let run = run_wrapper(
        tool,
        &dirs,
        &Wrap::default(),
        BATCH_METADATA,
        Loading::Restricted,
        timeout,
    )
    .ok()?;
    let text = run.out.ok()?;
    // The tops reading a directory at or above `at`.
    let readers = |at: &Path| -> Vec<usize> {
        (0..tops.len())
            .filter(|&i| tops[i].1.iter().any(|d| at.starts_with(d)))
            .collect()
    };
    let mut parts: Vec<(String, Vec<Origin>)> = vec![(String::new(), Vec::new()); tops.len()];
    for doc in documents(&text) {
        let (doc, origin, configured) = strip_batch_document(doc, &run.wrapper_dir)?;
        let at = match &origin {
            Origin::File(f) => f.parent()?,
            Origin::Generated { kustomization } => kustomization.parent()?,
            Origin::Remote | Origin::Unknown => return None,
        };
        let candidates = readers(at);
        let owner = match candidates.as_slice() {
            [one] => *one,
            [] => return None,
            // The candidate that alone reads a kustomization that transformed the document.
            many => {
                let own: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&i| {
                        configured.iter().any(|k| {
                            let by = k.parent().unwrap_or(k);
                            tops[i].1.contains(&by)
                                && many.iter().all(|&j| j == i || !tops[j].1.contains(&by))
                        })
                    })
                    .collect();
                match own.as_slice() {
                    [one] => *one,
                    _ => return None,
                }
            }
        };
        let (part, origins) = &mut parts[owner];
        if !part.is_empty() {
            part.push_str("---\n");
        }
        part.push_str(&doc);
        origins.push(origin);
    }
    Some(
        parts
            .into_iter()
            .map(|(text, origins)| Built {
                text,
                origins,
                command: run.command.clone(),
            })
            .collect(),
    )
}

/// The annotation `buildMetadata: [transformerAnnotations]` adds: the kustomizations whose
/// transformers changed the object.
const TRANSFORMATIONS_KEY: &str = "alpha.config.kubernetes.io/transformations";

/// What the wrapper asks kustomize to record, alone and in a batch.
const ORIGINS: &str = "buildMetadata: [originAnnotations]\n";
const BATCH_METADATA: &str = "buildMetadata: [originAnnotations, transformerAnnotations]\n";

/// One document of a batch's output without the annotations the batch asked for (as
/// [`strip_origins`] leaves a document of a build alone), its origin, and the kustomization files
/// that configured its transformations. `None` when it is not one document with an origin.
fn strip_batch_document(text: &str, wrapper: &Path) -> Option<(String, Origin, Vec<PathBuf>)> {
    let parsed = yaml::parse(text, Budget::default());
    let [d] = parsed.docs.as_slice() else {
        return None;
    };
    let (ann_key, ann_map) = d.root().get("metadata")?.entry("annotations")?;
    let (ok, ov) = ann_map.entry(ORIGIN_KEY)?;
    let origin = parse_origin(ov.as_str().unwrap_or_default(), wrapper);
    let mut ours = vec![ok];
    let mut configured = Vec::new();
    if let Some((tk, tv)) = ann_map.entry(TRANSFORMATIONS_KEY) {
        ours.push(tk);
        let list = yaml::parse(tv.as_str().unwrap_or_default(), Budget::default());
        for item in list.docs.first().into_iter().flat_map(|d| d.root().items()) {
            let k = item.str_at(&["configuredIn"])?;
            configured.push(identity(&normalize(&wrapper.join(k))));
        }
    }
    let cuts: Vec<std::ops::Range<usize>> = if ann_map.as_map()?.len() == ours.len() {
        vec![entry_lines(text, ann_key.span().start())]
    } else {
        let mut c: Vec<_> = ours
            .iter()
            .map(|k| entry_lines(text, k.span().start()))
            .collect();
        c.sort_by_key(|r| r.start);
        c
    };
    Some((cut(text, cuts), origin, configured))
}

/// `text` without the line ranges `cuts` (in order; one that overlaps the one before is
/// left out).
fn cut(text: &str, cuts: Vec<std::ops::Range<usize>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for c in cuts {
        if c.start >= at {
            out.push_str(&text[at..c.start]);
            at = c.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// The documents of kustomize's output, each with its own lines: kustomize writes `---` alone
/// on a line between documents, and indents everything inside one.
fn documents(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let t = rest?;
        let mut at = 0;
        while at < t.len() {
            let end = t[at..].find('\n').map_or(t.len(), |i| at + i + 1);
            if at > 0 && t[at..end].trim_end_matches(['\n', '\r']) == "---" {
                rest = Some(&t[end..]);
                return Some(&t[..at]);
            }
            at = end;
        }
        rest = None;
        (!t.is_empty()).then_some(t)
    })
}

/// One run of the build tool on a wrapper kustomization over `dirs`.
struct WrapperRun {
    out: Result<String, exec::ExecError>,
    command: String,
    wrapper_dir: PathBuf,
    scratch_path: PathBuf,
}

/// Writes a wrapper kustomization over `dirs` (with `wrap` added) in a private temporary
/// directory, and runs the tool on it. `Err`: the wrapper could not be written.
fn run_wrapper(
    tool: &Tool,
    dirs: &[&Path],
    wrap: &Wrap,
    metadata: &str,
    loading: Loading,
    timeout: Duration,
) -> Result<WrapperRun, String> {
    let scratch = tempfile::Builder::new()
        .prefix("gpuops-kustomize-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let wrapper_dir = scratch.path().join("wrapper");
    std::fs::create_dir(&wrapper_dir)
        .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
    let wrapper_dir = identity(&wrapper_dir);
    // A JSON string is a valid YAML scalar whatever the path holds.
    let quoted = |to: &Path| {
        let rel_s = relative(&wrapper_dir, to)
            .to_string_lossy()
            .replace('\\', "/");
        serde_json::to_string(&rel_s).unwrap_or_else(|_| format!("\"{rel_s}\""))
    };
    let mut wrapper =
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            .to_string();
    for d in dirs {
        wrapper.push_str(&format!("  - {}\n", quoted(d)));
    }
    if !wrap.components.is_empty() {
        wrapper.push_str("components:\n");
        for c in &wrap.components {
            wrapper.push_str(&format!("  - {}\n", quoted(c)));
        }
    }
    wrapper.push_str(&wrap.fields);
    wrapper.push_str(metadata);
    std::fs::write(wrapper_dir.join("kustomization.yaml"), wrapper)
        .map_err(|e| format!("cannot write the build wrapper: {e}"))?;
    let mut args = vec![tool.subcommand.into()];
    if loading == Loading::Unrestricted {
        args.extend(["--load-restrictor".into(), "LoadRestrictionsNone".into()]);
    }
    args.push(wrapper_dir.clone().into());
    let inv = Invocation {
        program: &tool.program,
        args,
        cwd: dirs.first().copied().unwrap_or(&wrapper_dir),
        scratch: scratch.path(),
        timeout,
    };
    let command = exec::describe(&inv);
    let out = exec::run(&inv);
    let scratch_path = identity(scratch.path());
    // The wrapper and its directory go away here, before anything is reported.
    drop(scratch);
    Ok(WrapperRun {
        out,
        command,
        wrapper_dir,
        scratch_path,
    })
}

/// Reads an origin annotation's value (`path: …`, or `configuredIn: …` for generated objects,
/// `repo: …` for remote ones). Paths in it are relative to the top kustomization: the wrapper.
fn parse_origin(text: &str, wrapper: &Path) -> Origin {
    let parsed = yaml::parse(text, Budget::default());
    let Some(root) = parsed.docs.first().map(|d| d.root()) else {
        return Origin::Unknown;
    };
    if root.get("repo").is_some() {
        return Origin::Remote;
    }
    if let Some(p) = root.str_at(&["path"]) {
        return Origin::File(identity(&normalize(&wrapper.join(p))));
    }
    if let Some(k) = root.str_at(&["configuredIn"]) {
        return Origin::Generated {
            kustomization: identity(&normalize(&wrapper.join(k))),
        };
    }
    Origin::Unknown
}

/// Byte offset of the start of the line holding `pos`.
fn line_start(text: &str, byte: usize) -> usize {
    let b = byte.min(text.len());
    text[..b].rfind('\n').map_or(0, |i| i + 1)
}

/// The lines of a block mapping entry that starts at `pos`: its own line and every following
/// line indented deeper (or blank).
fn entry_lines(text: &str, byte: usize) -> std::ops::Range<usize> {
    let start = line_start(text, byte);
    let indent = byte.min(text.len()) - start;
    let mut end = text[start..]
        .find('\n')
        .map_or(text.len(), |i| start + i + 1);
    while end < text.len() {
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
        let line = &text[end..line_end];
        let body = line.trim_start_matches(' ');
        let deeper = line.len() - body.len() > indent;
        if !(deeper || body.trim().is_empty()) || line.starts_with("---") {
            break;
        }
        end = line_end;
    }
    start..end
}

/// Removes the origin annotations (and an `annotations:` map they leave empty) from kustomize's
/// output, and returns the origin of each document.
pub fn strip_origins(text: &str, wrapper: &Path) -> (String, Vec<Origin>) {
    let parsed = yaml::parse(text, Budget::default());
    let mut cuts = Vec::new();
    let mut origins = Vec::with_capacity(parsed.docs.len());
    for d in &parsed.docs {
        let metadata = d.root().get("metadata");
        let ann = metadata.and_then(|m| m.entry("annotations"));
        let found = ann.and_then(|(ak, av)| av.entry(ORIGIN_KEY).map(|e| (ak, av, e)));
        let Some((ann_key, ann_map, (k, v))) = found else {
            origins.push(Origin::Unknown);
            continue;
        };
        origins.push(parse_origin(v.as_str().unwrap_or_default(), wrapper));
        let only = ann_map.as_map().is_some_and(|m| m.len() == 1);
        let from: Node<'_> = if only { ann_key } else { k };
        cuts.push(entry_lines(text, from.span().start()));
    }
    (cut(text, cuts), origins)
}

/// Turns kustomize's (or kubectl's) error output into one readable line: the klog wrapper and
/// the wrapper kustomization's part of the error chain go, absolute paths become relative.
/// Returns the message and the kustomization directory the error chain ends in.
pub fn clean_error(raw: &str, scratch: &Path) -> (String, Option<PathBuf>) {
    // kustomize's notices about deprecated fields (`# Warning: 'vars' is deprecated…`) come
    // before the error and are no part of it.
    let raw: Vec<&str> = raw
        .lines()
        .filter(|l| !l.trim_start().starts_with("# Warning:"))
        .collect();
    let mut msg = raw.join("\n").trim().to_string();
    // kubectl logs through klog: `E1123 … run.go:72] "command failed" err="…"` or `err=<` …
    // `>` for multi-line messages.
    if let Some(i) = msg.find("err=\"") {
        let body = &msg[i + 5..];
        let body = body.rfind('"').map_or(body, |j| &body[..j]);
        msg = body.replace("\\\"", "\"").replace("\\\\", "\\");
    } else if let Some(i) = msg.find("err=<") {
        let body = &msg[i + 5..];
        let body = body.rfind('>').map_or(body, |j| &body[..j]);
        msg = body.to_string();
    }
    for prefix in ["Error: ", "error: "] {
        if let Some(rest) = msg.strip_prefix(prefix) {
            msg = rest.to_string();
        }
    }
    // Everything up to the last directory kustomize descended into is the chain from the wrapper
    // down to the failing kustomization.
    let mut at = None;
    let last = [
        "recursed accumulation of path '",
        "couldn't make target for path '",
    ]
    .iter()
    .filter_map(|m| msg.rfind(m).map(|i| i + m.len()))
    .max();
    if let Some(i) = last {
        let rest = &msg[i..];
        if let Some(j) = rest.find("': ") {
            at = Some(PathBuf::from(&rest[..j]));
            msg = rest[j + 3..].to_string();
        }
    }
    // kustomize tries a missing resource as a file and then as a directory and reports both:
    // the first half says it all.
    if let Some(i) = msg.find("': must build at directory: ") {
        msg.truncate(i + 1);
    }
    if let Some(rest) = msg.strip_prefix("accumulating resources: accumulation err='")
        && let Some(inner) = rest.strip_suffix('\'')
    {
        msg = inner.to_string();
    }
    let msg = msg.replace(scratch.to_string_lossy().as_ref(), "<tmp>");
    let msg = match std::env::current_dir().ok().map(|c| identity(&c)) {
        Some(cwd) => {
            let prefix = format!("{}/", cwd.to_string_lossy());
            msg.replace(&prefix, "")
        }
        None => msg,
    };
    let mut one_line = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    // A dump of the whole resource, then why: the key it could not convert is all that matters.
    if let Some(key) = inputs::non_string_key(&one_line) {
        one_line = format!(
            "the key `{key}` is not a string: json: unsupported type: map[interface {{}}]interface {{}}"
        );
    }
    // Go pointers printed in some errors (`&{0xc00051e270 0xc001802e00}`) differ from run to
    // run: the same build must read the same.
    static POINTER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b0x[0-9a-f]{6,}\b").expect("a valid pattern")
    });
    if one_line.contains("0x") {
        one_line = POINTER.replace_all(&one_line, "0x…").into_owned();
    }
    const MAX: usize = 400;
    if one_line.len() > MAX {
        let mut cut = MAX;
        while !one_line.is_char_boundary(cut) {
            cut -= 1;
        }
        one_line.truncate(cut);
        one_line.push('…');
    }
    (one_line, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_pointers_in_errors_are_masked() {
        let (msg, _) = clean_error(
            "Error: merging from generator &{0xc00051e270 0xc001802e00}: id resid.ResId{} does not exist",
            Path::new("/nowhere"),
        );
        assert_eq!(
            msg,
            "merging from generator &{0x… 0x…}: id resid.ResId{} does not exist"
        );
    }

    #[test]
    fn missing_inputs_are_told_from_other_failures() {
        assert!(lacks_input(
            "Error: loading KV pairs: env source files: [params.env]: evalsymlink failure on 'a/params.env' : lstat a/params.env: no such file or directory"
        ));
        assert!(lacks_input("Error: kustomization.yaml is empty"));
        // A directory without a kustomization is a missing input only where a template of one
        // lies, which a build step fills in.
        let d = tempfile::tempdir().unwrap();
        let missing = format!(
            "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
            d.path().display()
        );
        assert!(!super::failures::generated_kustomization(&missing));
        std::fs::write(
            d.path().join("kustomization.yaml.in"),
            "resources: [@IMG@]\n",
        )
        .unwrap();
        assert!(super::failures::generated_kustomization(&missing));
        assert!(namespace_from_builder(
            "Error: field specified in var '{namespace Service.v1.[noGrp] {metadata.namespace}}' not found in corresponding resource"
        ));
        assert!(!namespace_from_builder(
            "Error: field specified in var '{image Deployment.v1.apps {spec.template.spec.containers[0].image}}' not found in corresponding resource"
        ));
        assert!(crashed(
            "panic: runtime error: invalid memory address or nil pointer dereference [signal SIGSEGV] goroutine 1 [running]: sigs.k8s.io/kustomize/kyaml/yaml.(*RNode).Content(...)"
        ));
        assert!(!crashed(
            "Error: accumulating resources: panic: is a file name"
        ));
        let restricted = "Error: accumulating resources from '../x.yaml': security; file 'x.yaml' is not in or below 'a'";
        assert!(!lacks_input(restricted));
        assert!(outside_root(restricted));
        assert!(older_form(restricted).is_none());
    }

    #[test]
    fn a_key_that_is_no_string_is_named() {
        let raw = "E1128 run.go:72] \"command failed\" err=\"map[string]interface {}{\\\"apiVersion\\\":\\\"v1\\\", \\\"data\\\":map[interface {}]interface {}{9092:\\\"a/kafka:9092\\\"}, \\\"kind\\\":\\\"ConfigMap\\\"}: json: unsupported type: map[interface {}]interface {}\"";
        let (msg, _) = clean_error(raw, Path::new("/nowhere"));
        assert_eq!(
            msg,
            "the key `9092` is not a string: json: unsupported type: map[interface {}]interface {}"
        );
        assert_eq!(inputs::non_string_key(&msg), Some("9092"));
    }

    #[test]
    fn forms_of_older_kustomize_releases_are_told() {
        assert!(older_form("invalid Kustomization: json: cannot unmarshal string into Go struct field Kustomization.patches of type types.Patch").is_some());
        assert!(older_form("Invalid Input: namespace is blank for resource \"RoleBinding.v1.rbac.authorization.k8s.io/x.[noNs]\"").is_some());
        assert!(older_form("considering field 'spec/template/spec/containers/0/env/0/value' of object Deployment.v1.apps/d.ns: visit traversal on path: [0 env 0 value]: fieldName: 0: wrong node kind: expected SequenceNode but got MappingNode").is_some());
        assert!(
            older_form(
                "considering field 'spec/replicas' of object Deployment.v1.apps/d: wrong node kind"
            )
            .is_none()
        );
        assert!(older_form("invalid Kustomization: json: unknown field \"postBuild\"").is_none());
        assert!(
            older_form(
                "error unmarshaling JSON: while decoding JSON: json: unknown field \"apiGroup\""
            )
            .is_some()
        );
    }

    #[test]
    fn origins_are_read_and_removed() {
        let out = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ../../repo/base/cm.yaml\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    config.kubernetes.io/origin: |\n      configuredIn: ../../repo/overlay/kustomization.yaml\n      configuredBy:\n        apiVersion: builtin\n        kind: ConfigMapGenerator\n    keep: \"yes\"\n  name: b\n";
        let (text, origins) = strip_origins(out, Path::new("/w/x"));
        assert_eq!(
            text,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    keep: \"yes\"\n  name: b\n"
        );
        assert_eq!(
            origins,
            vec![
                Origin::File(PathBuf::from("/repo/base/cm.yaml")),
                Origin::Generated {
                    kustomization: PathBuf::from("/repo/overlay/kustomization.yaml")
                }
            ]
        );
    }

    #[test]
    fn klog_errors_are_trimmed_to_the_failing_kustomization() {
        let raw = r#"E1123 10:10:29.965853   28447 run.go:72] "command failed" err="accumulating resources: accumulation err='accumulating resources from '../../kzb/broken': '/kzb/broken' must resolve to a file': recursed accumulation of path '/kzb/broken': accumulating resources: accumulation err='accumulating resources from 'missing.yaml': no such file or directory'""#;
        let (m, at) = clean_error(raw, Path::new("/tmp/none"));
        assert_eq!(
            m,
            "accumulating resources from 'missing.yaml': no such file or directory"
        );
        assert_eq!(at, Some(PathBuf::from("/kzb/broken")));
        let (m, _) = clean_error("Error: boom\n", Path::new("/tmp/none"));
        assert_eq!(m, "boom");
        // Deprecation notices before the error are no part of it.
        let (m, _) = clean_error(
            "# Warning: 'vars' is deprecated. Please use 'replacements' instead.\n# Warning: 'commonLabels' is deprecated.\nError: boom\n",
            Path::new("/tmp/none"),
        );
        assert_eq!(m, "boom");
    }
}
