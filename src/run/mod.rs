//! The pipeline every command shares:
//!
//! ```text
//! settings ─▶ read (discover, plan and build sources, parse, context)
//!          ─▶ check (clusters; per cluster one index, the rules and policies in parallel)
//!          ─▶ remap (findings on rendered sources back to the files that produced them)
//!          ─▶ finish (suppressions, configured severities, sorted)  ─▶ Outcome
//! ```
//!
//! `lint` runs it whole ([`lint_repo`]); `why` and `cost` read with [`read_repo`]; `render` and
//! the tests lint files they already hold ([`lint`], [`lint_with`]). The CLI only parses
//! arguments and prints what comes back. Nothing here prints or reads process-wide state: notes
//! (skipped templates, sources not linted, CEL rules not checked) come back in the [`Outcome`].

mod check;
pub mod clusters;
mod read;

pub use check::{RULE_CHUNK, check, finish, lint, lint_with};
pub use clusters::{ClusterScope, clusters, explain as explain_clusters};
pub use read::{Repo, read_repo};

use crate::config::{self, ConfigError, Settings};
use crate::diag::Diagnostic;
use crate::policy::{self, Policies};
use crate::source::SourceFile;
use std::path::{Path, PathBuf};

/// The result of linting a set of files.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
    /// Policies that failed at run time (error, time budget); the rest of the run went on.
    pub policy_errors: Vec<policy::PolicyError>,
    /// What was read but not linted, one line each (`note: …`), for people: templates skipped,
    /// sources not rendered, CEL rules of user CRDs not checked.
    pub notes: Vec<String>,
}

/// The config a run uses: the file `config` names, else the `.gpuops.yaml` found upward from
/// `first`; `None` when there is none or `no_config`.
pub fn config_path(config: Option<&Path>, no_config: bool, first: &Path) -> Option<PathBuf> {
    if no_config {
        return None;
    }
    config
        .map(Path::to_path_buf)
        .or_else(|| config::discover(first))
}

/// The settings of a run ([`config_path`]), or the defaults when there is no config.
pub fn settings(
    config: Option<&Path>,
    no_config: bool,
    first: &Path,
) -> Result<Settings, ConfigError> {
    match config_path(config, no_config, first) {
        Some(p) => config::load(&p, &crate::rules::names()),
        None => Ok(Settings::default()),
    }
}

/// A linted repository: the outcome, and the files its findings point into (rendered sources
/// replaced by the files that produced them).
pub struct Linted {
    pub outcome: Outcome,
    pub files: Vec<SourceFile>,
}

/// Lints what [`read_repo`] read (plus any file added to it, such as stdin): check, remap,
/// finish. `policies`: the run's loaded policies; `None` runs the bundled pack (as far as the
/// settings enable it).
pub fn lint_repo(repo: Repo, settings: &Settings, policies: Option<&Policies>) -> Linted {
    let Repo { files, sources, .. } = repo;
    // Findings on rendered sources move to the files that produced them before suppressions are
    // read there.
    let mut outcome = check(&files, settings, policies);
    let (files, source_notes) = sources.remap(&mut outcome.diagnostics, files);
    finish(&files, settings, policies, &mut outcome);
    let mut notes = skipped_notes(&files);
    notes.extend(templates_only_note(&files));
    notes.extend(source_notes);
    notes.append(&mut outcome.notes);
    outcome.notes = notes;
    Linted { outcome, files }
}

/// When only templates were found (`job_template.yaml`), nothing was linted: said once, so that
/// "no findings in 0 files" is not taken for a clean result.
fn templates_only_note(files: &[SourceFile]) -> Option<String> {
    if files.iter().any(|f| !f.is_context()) {
        return None;
    }
    let templates: Vec<&str> = files
        .iter()
        .filter(|f| {
            f.role == crate::source::Role::Derived
                && crate::source::paths::is_yaml_template(std::path::Path::new(&f.path))
        })
        .map(|f| f.path.as_str())
        .collect();
    let first = templates.first()?;
    let (more, them) = match templates.len() {
        1 => (" is named as a template".to_string(), "it"),
        n => (
            format!(" and {} more are named as templates", n - 1),
            "them",
        ),
    };
    Some(format!(
        "note: nothing linted: {first}{more} (another tool fills {them} in); render {them} and lint the output via stdin (`envsubst < FILE | gpuops lint -`)"
    ))
}

/// One line per template that was not linted, with how to lint it.
fn skipped_notes(files: &[SourceFile]) -> Vec<String> {
    let mut out = Vec::new();
    // A template found beside the manifests is not linted by design: no note for it.
    for f in files
        .iter()
        .filter(|f| f.role != crate::source::Role::Derived)
    {
        let Some(s) = &f.skipped else { continue };
        let how = if let Some(h) = &s.hint {
            h.as_str()
        } else if s.reason.starts_with("Go") {
            "render it (helm template …) and lint the output via stdin"
        } else if s.reason == "field reference" {
            "a page of what each field may hold, not an object: nothing to lint"
        } else {
            "render it and lint the output via stdin"
        };
        let p = f.pos(s.span.start());
        out.push(format!(
            "note: skipped {} {}:{}:{} ({}); {how}",
            s.reason, f.path, p.line, p.col, s.marker
        ));
    }
    out
}
