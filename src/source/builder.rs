//! What every kind of built source goes through. A [`Builder`] turns a *unit* (a kustomization
//! with what wraps it, a chart with what it is rendered with) into an [`Outcome`] by running its
//! tool: built, failed with a message the kind places, or skipped with a reason. Each outcome
//! becomes exactly one file of the run ([`Added`]: the output, the failure as a problem in the file
//! at fault, or the source marked skipped) and one `--explain-sources` line. The output keeps a
//! [`Mapping`] that points findings on it back at the files it was made from.

use super::cached::Cached;
use super::remap::{Ctx, Place, Resolved};
use super::{Build, Line, SourceFile, Sources};
use crate::yaml::{Problem, ProblemKind, Span};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One kind of source that a tool builds.
pub(super) trait Builder: Sync + Sized {
    /// What one build is of.
    type Unit: Sync;
    /// A successful build, before it is a file of the run.
    type Built: Send;
    /// What a failure says besides its message: where the tool places the fault.
    type Fault: Send;

    /// The run's own units of this kind, from what [`Sources::plan`] found. What cannot even
    /// become a unit gets its `--explain-sources` line here.
    fn planned(&self, s: &mut Sources) -> Vec<Self::Unit>;

    /// Runs the tool on `unit`, or says why not.
    fn build(&self, s: &Sources, unit: &Self::Unit) -> Outcome<Self>;

    /// Builds the units, in their order. Each on its own, in parallel, unless the kind knows a
    /// cheaper way.
    fn build_all(&self, s: &Sources, units: &[&Self::Unit]) -> Vec<Outcome<Self>> {
        s.build_each(self, units)
    }

    /// The output as a file of the run, with what maps it back.
    fn output(&self, s: &Sources, unit: &Self::Unit, built: Self::Built, app: For) -> Added;

    /// The failure as a problem in the file and at the place the message points to.
    fn failure(&self, s: &Sources, unit: &Self::Unit, f: Failed<Self::Fault>, app: For) -> Added;

    /// The source itself, marked skipped.
    fn skip(&self, s: &Sources, unit: &Self::Unit, skip: Skip, app: For) -> Added;
}

/// What became of one build.
pub(super) enum Outcome<B: Builder> {
    Built(B::Built),
    /// What an earlier run built from the same inputs, read from the cache.
    Cached(B::Built),
    Failed(Failed<B::Fault>),
    Skipped(Skip),
}

impl<B: Builder> Outcome<B> {
    pub(super) fn is_built(&self) -> bool {
        matches!(self, Outcome::Built(_) | Outcome::Cached(_))
    }
}

/// A build that failed: the tool's message, trimmed.
pub(super) struct Failed<F> {
    pub(super) message: String,
    /// The command that ran; empty when none did.
    pub(super) command: String,
    pub(super) at: F,
    /// Killed at the time limit rather than failed.
    pub(super) timed_out: bool,
}

/// A build that was not run.
pub(super) struct Skip {
    pub(super) reason: String,
    /// What in the source makes it skipped, as written.
    pub(super) marker: String,
    pub(super) span: Span,
    /// The command that builds it by hand, for `--explain-sources`.
    pub(super) by_hand: String,
}

/// A build still running at the time limit (a slow machine, a large vendored tree): nothing is
/// known against the source, so it is listed as skipped, not reported as failing.
fn time_limit<F>(f: Failed<F>) -> Skip {
    Skip {
        reason: "not built within the time limit".into(),
        marker: f.message,
        span: Span::default(),
        by_hand: f.command,
    }
}

/// Whom a build is for: the run's own sources, or an Argo CD Application (named, with its
/// options).
#[derive(Clone, Copy)]
pub(super) struct For<'a>(pub(super) Option<&'a str>);

impl For<'_> {
    /// ` for <Application>`, after what was built.
    pub(super) fn suffix(self) -> String {
        self.0.map(|a| format!(" for {a}")).unwrap_or_default()
    }

    /// `Sync` when an Argo CD Application deploys the source (it certainly tries to build it),
    /// else `Build`.
    pub(super) fn failure_kind(self) -> ProblemKind {
        match self.0 {
            Some(_) => ProblemKind::Sync,
            None => ProblemKind::Build,
        }
    }
}

/// What an outcome adds to the run: exactly one file, and its `--explain-sources` line.
pub(super) struct Added {
    file: SourceFile,
    line: Option<Line>,
    output: Option<Output>,
}

/// What a build's output keeps, beyond the file.
pub(super) struct Output {
    /// What was built (identity): a kustomization file, a chart directory.
    pub(super) source: PathBuf,
    /// `source` as `--explain-sources` names it.
    pub(super) shown: String,
    pub(super) map: Box<dyn Mapping>,
    /// Files the build read that remapping points into, parsed, by identity.
    pub(super) read: Vec<(PathBuf, SourceFile)>,
}

impl Added {
    /// The output `file`. `explained`: the path and detail of its `build` line.
    pub(super) fn output(file: SourceFile, explained: (String, String), output: Output) -> Added {
        Added {
            file,
            line: Some(line("build", explained)),
            output: Some(output),
        }
    }

    /// A failure, as one problem at `span` in the file at fault (`path`, `text`). `explained`:
    /// the path and detail of its `failed` line.
    pub(super) fn failure(
        path: String,
        text: String,
        span: Span,
        message: String,
        kind: ProblemKind,
        explained: Option<(String, String)>,
    ) -> Added {
        Added {
            file: SourceFile {
                path,
                text: text.into(),
                docs: Vec::new(),
                problems: vec![Problem {
                    span,
                    message,
                    first: None,
                    kind,
                }],
                skipped: None,
                role: Default::default(),
                lines: Default::default(),
            },
            line: explained.map(|e| line("failed", e)),
            output: None,
        }
    }

    /// The source (`path`, `text`) marked skipped; `hint` says how to lint it by hand in the
    /// report's notes. `explained`: the path and detail of its `skipped` line.
    pub(super) fn skip(
        path: String,
        text: String,
        skip: Skip,
        hint: Option<String>,
        explained: (String, String),
    ) -> Added {
        Added {
            file: SourceFile {
                path,
                text: text.into(),
                docs: Vec::new(),
                problems: Vec::new(),
                skipped: Some(crate::source::Skipped {
                    reason: skip.reason,
                    marker: skip.marker,
                    span: skip.span,
                    hint,
                }),
                role: Default::default(),
                lines: Default::default(),
            },
            line: Some(line("skipped", explained)),
            output: None,
        }
    }
}

fn line(what: &'static str, (path, detail): (String, String)) -> Line {
    Line { what, path, detail }
}

/// `3 documents`.
pub(super) fn documents(n: usize) -> String {
    format!("{n} document{}", if n == 1 { "" } else { "s" })
}

/// What a build's output keeps to point findings on it back at the files it was made from.
pub(super) trait Mapping: std::fmt::Debug + Send + Sync {
    /// Where the output at `span` came from.
    fn resolve(&self, cx: &Ctx, output: &SourceFile, span: Span) -> Option<Resolved>;

    /// A note for a finding moved to `file` when the file is not part of what was built itself
    /// (for a kustomization: the overlay entry that reached it).
    fn through(&self, _cx: &Ctx, _file: &Path) -> Option<(Place, String)> {
        None
    }

    /// The file document `doc` of the output was made from, when it is known.
    fn made_from(&self, output: &SourceFile, doc: usize) -> Option<&Path>;
}

impl Sources {
    /// The run's own builds of one kind: planned, built (`ahead`: outcomes made beforehand for
    /// the same units, else none) and added to `files`.
    pub(super) fn render_kind<B: Cached>(
        &mut self,
        b: &B,
        files: &mut Vec<SourceFile>,
        ahead: Vec<Outcome<B>>,
    ) {
        let units = b.planned(self);
        // Outcomes made for other units (or none) are made again here.
        let outcomes = if ahead.len() == units.len() {
            ahead
        } else {
            self.build_cached(b, &units)
        };
        for (u, o) in units.iter().zip(outcomes) {
            self.add(b, u, o, files, None);
        }
    }

    /// Builds each unit on its own, in parallel, in order.
    pub(super) fn build_each<B: Builder>(&self, b: &B, units: &[&B::Unit]) -> Vec<Outcome<B>> {
        units.par_iter().map(|u| b.build(self, u)).collect()
    }

    /// Adds an outcome to `files`: always one file. `app`: the Argo CD Application (and
    /// options) the build is for.
    pub(super) fn add<B: Builder>(
        &mut self,
        b: &B,
        unit: &B::Unit,
        outcome: Outcome<B>,
        files: &mut Vec<SourceFile>,
        app: Option<&str>,
    ) {
        let app = For(app);
        let cached = matches!(outcome, Outcome::Cached(_));
        let mut added = match outcome {
            Outcome::Built(built) | Outcome::Cached(built) => b.output(self, unit, built, app),
            Outcome::Failed(f) if f.timed_out => b.skip(self, unit, time_limit(f), app),
            Outcome::Failed(f) => b.failure(self, unit, f, app),
            Outcome::Skipped(skip) => b.skip(self, unit, skip, app),
        };
        if let Some(l) = added.line.as_mut().filter(|_| cached) {
            l.what = "cached";
        }
        self.lines.extend(added.line);
        if let Some(o) = added.output {
            for (p, f) in o.read {
                self.cache.entry(p).or_insert(f);
            }
            self.builds.push(Build {
                fid: files.len(),
                source: o.source,
                shown: o.shown,
                map: o.map,
            });
        }
        files.push(added.file);
    }
}
