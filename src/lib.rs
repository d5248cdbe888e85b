//! gpuops: lint and render GPU platform manifests (Karpenter, Kueue, Kubernetes).

pub mod catalog;
pub mod config;
pub mod diag;
pub mod index;
pub mod model;
pub mod quantity;
pub mod render;
pub mod report;
pub mod rules;
pub mod sched;
pub mod source;
pub mod sources;
pub mod yaml;
pub mod yaml_compat;

use config::{Level, Settings};
use diag::Diagnostic;
use rayon::prelude::*;
use source::SourceFile;

/// The result of linting a set of files.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
}

/// Whether a rule runs under these settings.
pub fn rule_enabled(settings: &Settings, name: &str) -> bool {
    if let Some(only) = &settings.only
        && !only.iter().any(|o| o == name)
    {
        return false;
    }
    settings.level(name) != Some(Level::Off)
}

/// Lints parsed files: index once, run the enabled rules in parallel, apply configured
/// severities, and sort (path, line, column, rule) so parallel runs are byte-identical.
pub fn lint(files: &[SourceFile], settings: &Settings) -> Outcome {
    let ix = index::Index::build(files, settings);
    let mut diagnostics: Vec<Diagnostic> = rules::all()
        .par_iter()
        .filter(|r| rule_enabled(settings, r.name))
        .flat_map_iter(|r| {
            let cx = rules::Ctx { ix: &ix, rule: r };
            let mut out = Vec::new();
            (r.check)(&cx, &mut out);
            out
        })
        .collect();
    for d in &mut diagnostics {
        match settings.level(d.rule) {
            Some(Level::Warning) => d.severity = diag::Severity::Warning,
            Some(Level::Error) => d.severity = diag::Severity::Error,
            _ => {}
        }
    }
    diagnostics.sort_by(|a, b| {
        (
            &files[a.loc.file].path,
            a.loc.span.start,
            a.rule,
            &a.message,
        )
            .cmp(&(
                &files[b.loc.file].path,
                b.loc.span.start,
                b.rule,
                &b.message,
            ))
    });
    diagnostics.dedup();
    Outcome {
        diagnostics,
        files: files.len(),
        documents: ix.documents,
        objects: ix.objects.len(),
    }
}
