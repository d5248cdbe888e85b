use crate::diag::{Diagnostic, Severity, SuppressionKind};
use crate::source::SourceFile;
use rayon::prelude::*;
use serde::Serialize;

pub struct Json;

impl super::Emitter for Json {
    fn emit(&self, run: &super::Run, _color: bool) -> String {
        json(
            run.diagnostics,
            run.files,
            run.documents,
            run.objects,
            run.errors,
        )
    }
}

// The document's shapes, borrowed from the findings. Fields are in alphabetical order: the
// format's key order since its first version (it was a sorted map). Serializing these directly
// instead of building a map per finding takes a quarter of the time at thousands of findings.

#[derive(Serialize)]
struct Document<'a> {
    diagnostics: Vec<Item<'a>>,
    /// Problems that fail the run outside the findings (exit 2): an unreadable path, a policy
    /// that failed at run time.
    errors: &'a [String],
    skipped: Vec<Skipped<'a>>,
    summary: Summary,
    version: u32,
}

#[derive(Serialize)]
struct Item<'a> {
    column: u32,
    end_column: u32,
    end_line: u32,
    help: Option<&'a str>,
    line: u32,
    message: &'a str,
    object: Option<Object<'a>>,
    path: &'a str,
    related: Vec<Related<'a>>,
    rule: &'a str,
    severity: Severity,
    suppressed: Option<Suppressed<'a>>,
}

#[derive(Serialize)]
struct Object<'a> {
    kind: &'a str,
    name: Option<&'a str>,
    namespace: Option<&'a str>,
}

#[derive(Serialize)]
struct Related<'a> {
    column: u32,
    line: u32,
    message: &'a str,
    path: &'a str,
}

#[derive(Serialize)]
struct Suppressed<'a> {
    kind: SuppressionKind,
    line: u32,
    path: &'a str,
    reason: &'a str,
}

/// A template that was not linted (not YAML until rendered), with its first marker.
#[derive(Serialize)]
struct Skipped<'a> {
    column: u32,
    line: u32,
    marker: &'a str,
    path: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
struct Summary {
    documents: usize,
    errors: usize,
    files: usize,
    objects: usize,
    suppressed: usize,
    warnings: usize,
}

/// `--format json`: a stable, versioned document.
pub fn json(
    diags: &[Diagnostic],
    files: &[SourceFile],
    documents: usize,
    objects: usize,
    run_errors: &[String],
) -> String {
    let (errors, warnings) = super::counts(diags);
    // Line and column of thousands of findings, on every core (each file's line table is built
    // once, by whichever thread needs it first).
    let diagnostics = diags
        .par_iter()
        .map(|d| {
            let (s, end) = files[d.loc.file].span_pos(d.loc.span);
            let at = |loc: crate::diag::Loc| files[loc.file].pos(loc.span.start());
            Item {
                column: s.col,
                end_column: end.col,
                end_line: end.line,
                help: d.help.as_deref(),
                line: s.line,
                message: &d.message,
                object: d.object.as_ref().map(|o| Object {
                    kind: &o.kind,
                    name: o.name.as_deref(),
                    namespace: o.namespace.as_deref(),
                }),
                path: &files[d.loc.file].path,
                related: d
                    .related
                    .iter()
                    .map(|r| Related {
                        column: at(r.loc).col,
                        line: at(r.loc).line,
                        message: &r.message,
                        path: &files[r.loc.file].path,
                    })
                    .collect(),
                rule: d.rule,
                severity: d.severity,
                suppressed: d.suppressed.as_ref().map(|s| Suppressed {
                    kind: s.kind,
                    line: at(s.loc).line,
                    path: &files[s.loc.file].path,
                    reason: &s.reason,
                }),
            }
        })
        .collect();
    let skipped = files
        .iter()
        .filter(|f| f.role != crate::source::Role::Derived)
        .filter_map(|f| {
            let s = f.skipped.as_ref()?;
            let at = f.pos(s.span.start());
            Some(Skipped {
                column: at.col,
                line: at.line,
                marker: &s.marker,
                path: &f.path,
                reason: &s.reason,
            })
        })
        .collect();
    let doc = Document {
        diagnostics,
        errors: run_errors,
        skipped,
        summary: Summary {
            documents,
            errors,
            files: files.iter().filter(|f| !f.is_context()).count(),
            objects,
            suppressed: super::suppressed(diags),
            warnings,
        },
        version: 1,
    };
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
