//! Hostile input reaches every output format: findings far into a minified line and names of
//! any length render without a panic.

use super::{Format, Run, emit};
use crate::diag::{Diagnostic, Loc, ObjectRef, Severity};
use crate::source::SourceFile;
use crate::yaml::Span;

fn render_all(diags: &[Diagnostic], files: &[SourceFile]) -> Vec<String> {
    let run = Run {
        diagnostics: diags,
        files,
        documents: 1,
        objects: 1,
        exit_code: 1,
        fail_on: Some(Severity::Error),
        errors: &[],
    };
    Format::ALL
        .iter()
        .flat_map(|&f| [emit(f, &run, false), emit(f, &run, true)])
        .collect()
}

/// A finding at column 1,000,000 panicked the human output ("Formatting argument out of
/// range"): miette pads to a label's column with `{:width$}`.
#[test]
fn finding_at_column_one_million_renders_in_every_format() {
    let line = format!("{{a: {}, b: [x]}}", "y".repeat(1_000_000));
    let at = line.len() - 4;
    let other = SourceFile::from_text("b.yaml".into(), format!("{}z: 1\n", " ".repeat(70_000)));
    let files = vec![SourceFile::from_text("a.yaml".into(), line.clone()), other];
    let loc = |file, start, end| Loc {
        file,
        span: Span::new(start, end),
    };
    let name = "n".repeat(100_000);
    let diags = vec![
        Diagnostic::new(
            "invalid-yaml",
            Severity::Error,
            loc(0, at, at + 1),
            "far right",
        )
        .related(loc(0, 1, 2), "near the start")
        .related(loc(0, 5, at), "a long span")
        .related(loc(1, 70_000, 70_001), "in another file"),
        Diagnostic::new("invalid-yaml", Severity::Warning, loc(0, 1, 2), "near")
            .related(loc(0, at, at + 1), "far right, same file")
            .help(format!("rename `{name}`")),
        Diagnostic::new(
            "invalid-yaml",
            Severity::Error,
            loc(0, 3, line.len()),
            format!("object `{name}`"),
        )
        .object(Some(ObjectRef {
            kind: name.clone(),
            namespace: Some(name.clone()),
            name: Some(name.clone()),
        })),
    ];
    let out = render_all(&diags, &files);
    let human = &out[0];
    assert!(
        human.contains("a.yaml:1:"),
        "{}",
        &human[..human.len().min(2000)]
    );
    assert!(
        human.contains("yyy…"),
        "{}",
        &human[..human.len().min(2000)]
    );
    assert!(human.contains("b.yaml:1:70001"));
}

/// A minified one-line manifest linted for real: every format renders its findings.
#[test]
fn one_line_manifest_lints_and_renders() {
    let pad = "p".repeat(200_000);
    let text = format!(
        "{{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\", \"metadata\": {{\"name\": \"x\", \"annotations\": {{\"a\": \"{pad}\"}}}}, \"spec\": {{\"template\": {{\"spec\": {{\"containers\": [{{\"name\": \"c\", \"image\": \"nvcr.io/x:1\", \"resources\": {{\"requests\": {{\"nvidia.com/gpu\": 1}}}}}}], \"restartPolicy\": \"Never\"}}}}}}}}"
    );
    let files = vec![SourceFile::from_text("min.yaml".into(), text)];
    let out = crate::lint(&files, &crate::config::Settings::default());
    assert!(!out.diagnostics.is_empty());
    render_all(&out.diagnostics, &files);
}
