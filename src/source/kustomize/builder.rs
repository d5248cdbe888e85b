//! Kustomize as a [`Builder`]: a unit is a kustomization file with what an Argo CD Application
//! wraps around it. The run's own overlays are built many to a process ([`Sources::build_tops`]).

use super::inputs::{
    key_fault, non_string_key, oversized, plugin_entry, template_hint, template_resource,
    yaml_fault,
};
use super::{FAILED, Origin, Tool, Wrap, remap};
use crate::source::builder::{Added, Builder, Failed, For, Outcome, Output, Skip, documents};
use crate::source::tree::{Target, identity};
use crate::source::{
    MAX_FILE_BYTES, SourceFile, Sources, display_canonical, first_key, parsed_file,
};
use crate::yaml::{ProblemKind, Span};
use std::path::{Path, PathBuf};

/// Builds kustomizations with the tool [`Sources::plan`] found.
pub(in crate::source) struct Kustomize;

/// One kustomization to build.
pub(in crate::source) struct Unit {
    /// Identity of the kustomization file.
    pub top: PathBuf,
    pub wrap: Wrap,
}

/// Where kustomize's message places a failure.
pub(in crate::source) struct Fault {
    /// The kustomization directory it names as the one at fault (when it is not the one built).
    dir: Option<PathBuf>,
    /// It failed only because a file it reads is missing (or the kustomization is an empty
    /// placeholder).
    missing_input: bool,
}

/// The builds of the top kustomizations, in `tops` order, made while the raw files are read.
#[derive(Default)]
pub struct Builds(pub(in crate::source) Vec<Outcome<Kustomize>>);

/// How overlays may share a build process (see [`Sources::batches`]).
#[derive(Clone, Copy)]
enum Packing {
    /// Overlays of one base together, when their own kustomizations tell their objects apart.
    Loose,
    /// No kustomization in common.
    Strict,
}

impl Kustomize {
    /// The run's own: the top kustomizations as they are.
    fn tops(s: &Sources) -> Vec<Unit> {
        s.tops
            .iter()
            .map(|t| Unit {
                top: t.clone(),
                wrap: Wrap::default(),
            })
            .collect()
    }
}

impl Sources {
    /// Adds the run's own kustomize builds to `files` (`ahead`: the tops built while the raw
    /// files were read). A top that fails (or is skipped) takes the kustomizations it lists down
    /// with it (an aggregate that lists a base and an overlay of it, "already registered id"):
    /// each of those that no other build reaches is built on its own, a few levels down, and
    /// kept when it builds; one that fails too adds nothing, its parent's finding stands for it.
    pub(in crate::source) fn render_kustomize(
        &mut self,
        files: &mut Vec<SourceFile>,
        ahead: Vec<Outcome<Kustomize>>,
    ) {
        let b = Kustomize;
        let units = b.planned(self);
        let outcomes = if ahead.len() == units.len() {
            ahead
        } else {
            self.build_cached(&b, &units)
        };
        let mut reached: std::collections::BTreeSet<PathBuf> = Default::default();
        let mut failed: Vec<PathBuf> = Vec::new();
        for (u, o) in units.iter().zip(&outcomes) {
            match o {
                // A top that is skipped (a template resource, a plugin) builds none of the
                // kustomizations it lists either.
                Outcome::Failed(f) if !f.at.missing_input => failed.push(u.top.clone()),
                Outcome::Skipped(_) => failed.push(u.top.clone()),
                Outcome::Failed(_) => {}
                _ => reached.extend(
                    self.forest
                        .chain(&u.top)
                        .into_iter()
                        .map(|k| k.path.clone()),
                ),
            }
        }
        for (u, o) in units.iter().zip(outcomes) {
            self.add(&b, u, o, files, None);
        }
        for _ in 0..3 {
            let mut next: Vec<Unit> = Vec::new();
            for top in &failed {
                let Some(k) = self.forest.get(top) else {
                    continue;
                };
                for c in k.children() {
                    let buildable = self.forest.get(c).is_some_and(|k| !k.component);
                    if buildable && reached.insert(c.clone()) {
                        next.push(Unit {
                            top: c.clone(),
                            wrap: Wrap::default(),
                        });
                    }
                }
            }
            // A base another of them builds through is linted there, not twice.
            let through: std::collections::BTreeSet<PathBuf> = next
                .iter()
                .flat_map(|u| self.forest.chain(&u.top).into_iter().skip(1))
                .map(|k| k.path.clone())
                .collect();
            next.retain(|u| !through.contains(&u.top));
            if next.is_empty() {
                break;
            }
            failed.clear();
            let outcomes = self.build_cached(&b, &next);
            for (u, o) in next.iter().zip(outcomes) {
                if o.is_built() {
                    // Built on its own after all: no longer only "linted through" its parent.
                    if let Some(k) = self.forest.get(&u.top) {
                        let path = k.file.path.clone();
                        self.lines
                            .retain(|l| !(l.what == "through" && l.path == path));
                    }
                    self.add(&b, u, o, files, None);
                } else if matches!(&o, Outcome::Failed(f) if !f.at.missing_input)
                    || matches!(&o, Outcome::Skipped(_))
                {
                    failed.push(u.top.clone());
                }
            }
        }
    }
}

/// The one file an outcome for a kustomization that cannot be read comes to: a failure on
/// `top` itself.
/// How the reason for skipping a kustomization that is a template itself begins.
const TEMPLATE_ITSELF: &str = "Kustomization that is a ";

fn unreadable(top: &Path, app: For) -> Added {
    Added::failure(
        display_canonical(top),
        String::new(),
        Span::default(),
        format!("{FAILED}cannot read the kustomization"),
        app.failure_kind(),
        None,
    )
}

impl Builder for Kustomize {
    type Unit = Unit;
    type Built = super::Built;
    type Fault = Fault;

    fn planned(&self, s: &mut Sources) -> Vec<Unit> {
        Kustomize::tops(s)
    }

    fn build(&self, s: &Sources, unit: &Unit) -> Outcome<Kustomize> {
        let failed = |message: &str| {
            Outcome::Failed(Failed {
                message: message.into(),
                command: String::new(),
                at: Fault {
                    dir: None,
                    missing_input: false,
                },
                timed_out: false,
            })
        };
        let Some(k) = s.forest.get(&unit.top) else {
            return failed("cannot read the kustomization");
        };
        let by_hand = format!(
            "kustomize build {} | gpuops lint -",
            display_canonical(&k.dir)
        );
        let chain = s.forest.chain(&unit.top);
        for c in &chain {
            let in_top = c.path == k.path;
            // A kustomization that is itself a template (gomplate's `{{<- if … >}}`, Helm's
            // `{{- if }}`) is rendered by its own tool first; kustomize cannot read it as written.
            if let Some(hint) = template_hint(&c.file.text) {
                return Outcome::Skipped(Skip {
                    reason: format!(
                        "{TEMPLATE_ITSELF}{} itself (filled in before it is built)",
                        hint.kind
                    ),
                    marker: hint.marker,
                    span: if in_top {
                        hint.span
                    } else {
                        first_key(&k.file)
                    },
                    by_hand,
                });
            }
            // Skipped for what an entry `r` of it holds: the entry is marked where the top
            // itself lists it, else the top's first key.
            let at = |reason: String, r: &crate::source::tree::Ref| {
                Outcome::Skipped(Skip {
                    reason,
                    marker: r.raw.clone(),
                    span: if in_top { r.span } else { first_key(&k.file) },
                    by_hand: by_hand.clone(),
                })
            };
            if let Some(r) = c.refs.iter().find(|r| r.target == Target::Remote) {
                return at(
                    "Kustomization with a remote resource (not fetched)".into(),
                    r,
                );
            }
            if let Some(span) = c.helm_charts {
                return Outcome::Skipped(Skip {
                    reason:
                        "Kustomization with helmCharts (needs --enable-helm, which fetches charts)"
                            .into(),
                    marker: c.file.text.get(span.range()).unwrap_or("helmCharts").into(),
                    span: if in_top { span } else { first_key(&k.file) },
                    by_hand,
                });
            }
            if let Some((r, kind)) = plugin_entry(c) {
                let reason = if kind == super::inputs::HELM_GENERATOR {
                    format!(
                        "Kustomization with a `{kind}` (needs --enable-helm, which fetches charts)"
                    )
                } else {
                    format!(
                        "Kustomization with a plugin generator or transformer (`{kind}`, run only with kustomize's plugins enabled)"
                    )
                };
                return at(reason, r);
            }
            if let Some((r, tool)) = super::inputs::encrypted_input(c) {
                let reason = format!(
                    "Kustomization with a file encrypted by {tool} (`{}`, decrypted before it is built)",
                    r.raw
                );
                return at(reason, r);
            }
            if let Some(r) = super::inputs::scaffold_resource(c) {
                let reason = format!(
                    "Kustomization of an operator's scaffolded samples only (`{}` and the others still hold kubebuilder's `TODO(user)`)",
                    r.raw
                );
                return at(reason, r);
            }
            if let Some((r, marker)) = template_resource(c) {
                let reason = format!(
                    "Kustomization with a template resource (`{}` holds `{marker}`, filled in before it is built)",
                    r.raw
                );
                return at(reason, r);
            }
            if let Some(r) = oversized(c) {
                let reason = format!(
                    "Kustomization naming a file over the {} MiB size limit (not built)",
                    MAX_FILE_BYTES >> 20
                );
                return at(reason, r);
            }
        }
        let Some(tool) = &s.tool else {
            return failed("no kustomize");
        };
        match super::inputs::build_as_flux(s, tool, k, &chain, &unit.wrap) {
            Ok(b) => Outcome::Built(b),
            Err(f) => Outcome::Failed(Failed {
                message: f.message,
                command: f.command,
                at: Fault {
                    dir: f.at,
                    missing_input: f.missing_input,
                },
                timed_out: f.timed_out,
            }),
        }
    }

    /// Each overlay's build waits on a `kustomize` process, so they run on threads of their own
    /// (as many at once as there are cores), many overlays to a process (see
    /// [`super::build_many`] and [`Sources::batches`]).
    fn build_all(&self, s: &Sources, units: &[&Unit]) -> Vec<Outcome<Kustomize>> {
        if units.is_empty() {
            return Vec::new();
        }
        // A wrap is an Application's: such builds are not shared.
        if units.iter().any(|u| !u.wrap.is_plain()) {
            return s.build_each(self, units);
        }
        let workers = rayon::current_num_threads().max(1);
        let all: Vec<usize> = (0..units.len()).collect();
        // A worker's share, so every core has a process; at most 64, so that a batch that fails
        // (and is built again apart) or runs into the output limit costs little.
        let cap = units.len().div_ceil(workers).clamp(1, 64);
        let batches = s.batches(units, &all, Packing::Loose, cap);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut done: Vec<(usize, Outcome<Kustomize>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers.min(batches.len()))
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(batch) = batches.get(b) else { break };
                            mine.extend(s.build_batch(units, batch));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, r)| r).collect()
    }

    fn output(&self, s: &Sources, unit: &Unit, b: super::Built, app: For) -> Added {
        let top = &unit.top;
        let Some(k) = s.forest.get(top) else {
            return unreadable(top, app);
        };
        let dir = display_canonical(&k.dir);
        let for_app = app.suffix();
        let file = SourceFile::rendered(
            format!("{} (kustomize build{for_app})", k.file.path),
            b.text,
        );
        let mut origins = b.origins;
        if origins.len() != file.docs.len() {
            origins = vec![Origin::Unknown; file.docs.len()];
        }
        let read = s.forest.files_read(top);
        let mut shown_read: Vec<String> = read
            .iter()
            .map(|p| {
                s.forest
                    .get(p)
                    .map_or_else(|| display_canonical(p), |k| k.file.path.clone())
            })
            .collect();
        shown_read.sort();
        let unrestricted = if b.command.contains("LoadRestrictionsNone") {
            "; it reads a file outside a kustomization's directory, which kustomize refuses by default: built as Flux builds it, without the load restrictor, since everything it names is in this repository"
        } else {
            ""
        };
        let detail = format!(
            "`{}` in {dir}{for_app} (through a temporary wrapper kustomization: `resources: [<relative path to {dir}>]`, `buildMetadata: [originAnnotations]`{unrestricted}): {} from {}",
            b.command,
            documents(file.docs.len()),
            shown_read.join(", ")
        );
        let read = read
            .into_iter()
            .filter(|p| s.forest.get(p).is_none() && !s.cache.contains_key(p))
            .filter_map(|p| Some((p.clone(), parsed_file(&p)?)))
            .collect();
        let output = Output {
            source: top.clone(),
            shown: k.file.path.clone(),
            map: Box::new(remap::Map {
                top: top.clone(),
                origins,
            }),
            read,
        };
        Added::output(file, (k.file.path.clone(), detail), output)
    }

    fn failure(&self, s: &Sources, unit: &Unit, f: Failed<Fault>, app: For) -> Added {
        let Some(k) = s.forest.get(&unit.top) else {
            return unreadable(&unit.top, app);
        };
        // The kustomization the error chain ends in, else the one built.
        let at =
            f.at.dir
                .as_deref()
                .map(identity)
                .and_then(|d| s.forest.by_path.values().find(|k| k.dir == d))
                .unwrap_or(k);
        let named = at.refs.iter().find(|r| {
            f.message.contains(&format!("'{}'", r.raw))
                || f.message.contains(&format!("({})", r.raw))
        });
        // Else an entry anywhere in what the build reads that points at nothing kustomize can
        // read, and that the message names (`… in directory 'manifests/networkpolicies'`): the
        // base that lists it is at fault, whichever overlay is built.
        let (at, named) = match named {
            Some(r) => (at, Some(r)),
            None => s
                .forest
                .chain(&unit.top)
                .into_iter()
                .find_map(|c| {
                    let r = c.refs.iter().find(|r| match &r.target {
                        Target::Missing(p) | Target::Dir(p) => {
                            super::failures::names_path(&f.message, p)
                        }
                        _ => false,
                    })?;
                    Some((c, Some(r)))
                })
                .unwrap_or((at, None)),
        };
        let span = named
            .map(|r| r.span)
            .or_else(|| at.file.problems.first().map(|p| p.span))
            .or_else(|| super::failures::field_named(at, &f.message))
            .unwrap_or_else(|| first_key(&at.file));
        // kustomize could not read a resource as YAML (its line numbers count from the
        // document's start): the file's own first problem is the place, and says what it is.
        let fault = (named.is_none() && f.message.contains("yaml: "))
            .then(|| yaml_fault(s, &unit.top))
            .flatten()
            .or_else(|| key_fault(s, &unit.top, non_string_key(&f.message)?));
        let (path, text, span, message) = match fault {
            Some((file, span, problem)) => (
                file.path.clone(),
                file.text.to_string(),
                span,
                format!(
                    "{FAILED}`{}` is not YAML kustomize reads: {problem}",
                    file.path
                ),
            ),
            None => (
                at.file.path.clone(),
                at.file.text.to_string(),
                span,
                format!("{FAILED}{}", f.message),
            ),
        };
        // Built by a script of its own tree with kustomize v3.
        let old = s
            .old_kustomize
            .iter()
            .find(|(_, dir)| k.dir.starts_with(dir))
            .map(|(script, _)| script.as_str());
        // Likely generated, built as intended, or not this repository's to build, unless deployed.
        let crashed = super::crashed(&f.message);
        let older = super::older_form(&f.message);
        let unnamespaced = super::namespace_from_builder(&f.message);
        // A top in a copy of another project's manifests (built, if at all, with its tooling),
        // or inside a Helm chart's directory (whose files Helm never builds with kustomize).
        let charted = super::failures::in_chart(&k.dir);
        let vendored = crate::source::in_vendored_tree(&k.file.path) || charted;
        // A file a script here writes (a setup script's sealed Secret), absent until it runs.
        let script =
            super::written_by(&s.script_outputs, &f.message).filter(|_| f.at.missing_input);
        let kind = match app.failure_kind() {
            ProblemKind::Build
                if f.at.missing_input
                    || old.is_some()
                    || older.is_some()
                    || unnamespaced
                    || crashed
                    || vendored =>
            {
                ProblemKind::MissingInput
            }
            ProblemKind::Sync if script.is_some() => ProblemKind::MissingInput,
            k => k,
        };
        let reported = if let Some(script) = script {
            &format!(
                "`{script}` writes the missing file: reported as source-build-failed only where the cluster is declared complete"
            )
        } else if crashed && kind == ProblemKind::MissingInput {
            "kustomize crashed on it, a fault of kustomize that another release may not have: reported as source-build-failed only where something deploys it"
        } else if let Some(form) = older.filter(|_| kind == ProblemKind::MissingInput) {
            &format!(
                "written for an older kustomize ({form}), which a current kustomize refuses: reported as source-build-failed only where something deploys it"
            )
        } else if unnamespaced && kind == ProblemKind::MissingInput {
            "a var reads the namespace of a resource that has none, which whatever builds it gives (a parent's `namespace:`): reported as source-build-failed only where something deploys it"
        } else if charted && kind == ProblemKind::MissingInput {
            "inside a Helm chart's directory, whose files Helm never builds with kustomize: reported as source-build-failed only where something deploys it"
        } else if vendored && kind == ProblemKind::MissingInput {
            "in a vendored copy of another project's manifests: reported as source-build-failed only where something deploys it"
        } else if let Some(script) =
            old.filter(|_| !f.at.missing_input && kind == ProblemKind::MissingInput)
        {
            &format!(
                "`{script}` builds with kustomize v3 (`--load_restrictor`), which reads what a current kustomize refuses: reported as source-build-failed only where something deploys it"
            )
        } else if kind == ProblemKind::MissingInput && super::outside_root(&f.message) {
            "it reads a file outside its directory, which builds with `--load-restrictor LoadRestrictionsNone`: reported as source-build-failed only where something deploys it"
        } else if kind == ProblemKind::MissingInput {
            "a file it reads is missing, usually one a build step generates: reported as source-build-failed only where something deploys it"
        } else if kind == ProblemKind::Build && crate::source::in_test_tree(&at.file.path) {
            "in a test tree: reported as source-build-failed only where something deploys it"
        } else {
            "reported as source-build-failed"
        };
        let detail = format!(
            "`{}` in {}{}: {} ({reported})",
            f.command,
            display_canonical(&k.dir),
            app.suffix(),
            f.message
        );
        Added::failure(
            path,
            text,
            span,
            message,
            kind,
            Some((k.file.path.clone(), detail)),
        )
    }

    fn skip(&self, s: &Sources, unit: &Unit, skip: Skip, app: For) -> Added {
        let Some(k) = s.forest.get(&unit.top) else {
            return unreadable(&unit.top, app);
        };
        let detail = format!(
            "{}{}: {}; build it yourself and lint the output with `{}`",
            skip.reason,
            app.suffix(),
            skip.marker,
            skip.by_hand
        );
        // The notes name the directory as the file's path has it.
        let dir = Path::new(&k.file.path)
            .parent()
            .map(display_canonical)
            .unwrap_or_else(|| ".".into());
        let render = if skip.reason.starts_with(TEMPLATE_ITSELF) {
            "render it, then "
        } else {
            ""
        };
        let hint = format!("{render}lint it with `kustomize build {dir} | gpuops lint -`");
        Added::skip(
            k.file.path.clone(),
            k.file.text.to_string(),
            skip,
            Some(hint),
            (k.file.path.clone(), detail),
        )
    }
}

impl Sources {
    /// Builds the top kustomizations (from the cache what an earlier run built from the same
    /// inputs), many to a process, on threads of their own: the caller reads and parses the
    /// raw files meanwhile.
    pub fn build_tops(&self) -> Builds {
        Builds(self.build_cached(&Kustomize, &Kustomize::tops(self)))
    }

    /// Builds one batch of [`Sources::batches`]: in one process, else (a collision, a failure)
    /// in batches that share no kustomization, else each on its own.
    fn build_batch(&self, units: &[&Unit], batch: &[usize]) -> Vec<(usize, Outcome<Kustomize>)> {
        let alone = |i: usize| (i, Kustomize.build(self, units[i]));
        if batch.len() < 2 {
            return batch.iter().map(|&i| alone(i)).collect();
        }
        if let Some(built) = self.build_together(units, batch) {
            return batch.iter().copied().zip(built).collect();
        }
        let strict = self.batches(units, batch, Packing::Strict, batch.len());
        if strict.len() == 1 {
            return batch.iter().map(|&i| alone(i)).collect();
        }
        let mut out = Vec::with_capacity(batch.len());
        for sub in strict {
            match (sub.len() > 1)
                .then(|| self.build_together(units, &sub))
                .flatten()
            {
                Some(built) => out.extend(sub.iter().copied().zip(built)),
                None => out.extend(sub.iter().map(|&i| alone(i))),
            }
        }
        out
    }

    /// `members` (indices into `units`) cut into batches of at most `cap`, each built in one
    /// process. Kustomization directories of tops in one batch are never one inside another
    /// (each document then has one directory its origin stands in), and with
    /// [`Packing::Strict`] never shared; with [`Packing::Loose`], overlays of one base share a
    /// batch when each sets its own `namespace:`, `namePrefix:` or `nameSuffix:` (which tells
    /// their objects apart, and names the overlay that transformed each). A top that is skipped
    /// or fails before any build goes alone.
    fn batches(
        &self,
        units: &[&Unit],
        members: &[usize],
        packing: Packing,
        cap: usize,
    ) -> Vec<Vec<usize>> {
        let mut batches: Vec<Vec<(usize, Vec<&Path>)>> = Vec::new();
        let mut alone: Vec<Vec<usize>> = Vec::new();
        for &i in members {
            let top = &units[i].top;
            let Some(mine) = self.batch_dirs(top) else {
                alone.push(vec![i]);
                continue;
            };
            let renamed = self.renaming(top);
            let fits = |other: &(usize, Vec<&Path>)| {
                let (j, theirs) = other;
                let shared = mine.iter().any(|d| theirs.contains(d));
                let nested = mine.iter().any(|d| {
                    theirs
                        .iter()
                        .any(|t| t != d && (d.starts_with(t) || t.starts_with(d)))
                });
                let told_apart = || {
                    let theirs = self.renaming(&units[*j].top);
                    renamed.is_some() && theirs.is_some() && renamed != theirs
                };
                !nested && (!shared || (matches!(packing, Packing::Loose) && told_apart()))
            };
            match batches
                .iter_mut()
                .find(|b| b.len() < cap && b.iter().all(fits))
            {
                Some(b) => b.push((i, mine)),
                None => batches.push(vec![(i, mine)]),
            }
        }
        batches
            .into_iter()
            .map(|b| b.into_iter().map(|(i, _)| i).collect())
            .chain(alone)
            .collect()
    }

    /// The top's own `namespace:`, `namePrefix:` and `nameSuffix:`, when it sets any.
    fn renaming(&self, top: &Path) -> Option<[Option<&str>; 3]> {
        let root = self.forest.get(top)?.root()?;
        let field = |k: &str| root.get(k).and_then(|n| n.as_str());
        let set = [field("namespace"), field("namePrefix"), field("nameSuffix")];
        set.iter().any(Option::is_some).then_some(set)
    }

    /// The kustomization directories a build of `top` reads, its own first; `None` when it is
    /// not built with others (a remote base or `helmCharts` skip it, no tool fails it, a
    /// `buildMetadata` of its own would be taken off with the batch's).
    fn batch_dirs(&self, top: &Path) -> Option<Vec<&Path>> {
        self.tool.as_ref()?;
        // The chain starts with the top's own kustomization; empty when it cannot be read. Every
        // kustomization it builds through must be known, or a document from an unknown one
        // could be taken for another overlay's.
        let chain = self.forest.chain(top);
        let plain = !chain.is_empty()
            && chain.iter().all(|c| {
                c.helm_charts.is_none()
                    && oversized(c).is_none()
                    && template_resource(c).is_none()
                    && super::inputs::encrypted_input(c).is_none()
                    && super::inputs::scaffold_resource(c).is_none()
                    && c.root().is_some_and(|r| r.get("buildMetadata").is_none())
                    && c.refs.iter().all(|r| {
                        // What kustomize will refuse fails the build: it fails alone.
                        !matches!(
                            r.target,
                            Target::Remote | Target::Missing(_) | Target::Dir(_)
                        )
                    })
                    && c.children().all(|k| self.forest.get(k).is_some())
            });
        plain.then(|| chain.iter().map(|c| c.dir.as_path()).collect())
    }

    /// Builds `batch` in one process; `None` when it cannot be built together.
    fn build_together(&self, units: &[&Unit], batch: &[usize]) -> Option<Vec<Outcome<Kustomize>>> {
        let tool: &Tool = self.tool.as_ref()?;
        let tops: Option<Vec<(&Path, Vec<&Path>)>> = batch
            .iter()
            .map(|&i| {
                let top = &units[i].top;
                Some((self.forest.get(top)?.dir.as_path(), self.batch_dirs(top)?))
            })
            .collect();
        let built = super::build_many(tool, &tops?, self.config.timeout)?;
        Some(built.into_iter().map(Outcome::Built).collect())
    }
}
