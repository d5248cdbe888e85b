use crate::diag::Diagnostic;
use crate::source::SourceFile;
use serde_json::{Value, json};

/// `--format json`: a stable, versioned document.
pub fn json(
    diags: &[Diagnostic],
    files: &[SourceFile],
    documents: usize,
    objects: usize,
    run_errors: &[String],
) -> String {
    let (errors, warnings) = super::counts(diags);
    let items: Vec<Value> = diags
        .iter()
        .map(|d| {
            let (s, end) = files[d.loc.file].span_pos(d.loc.span);
            let at = |loc: crate::diag::Loc| files[loc.file].pos(loc.span.start());
            json!({
                "rule": d.rule,
                "severity": d.severity,
                "message": d.message,
                "help": d.help,
                "path": files[d.loc.file].path,
                "line": s.line,
                "column": s.col,
                "end_line": end.line,
                "end_column": end.col,
                "object": d.object,
                "suppressed": d.suppressed.as_ref().map(|s| json!({
                    "kind": s.kind,
                    "reason": s.reason,
                    "path": files[s.loc.file].path,
                    "line": at(s.loc).line,
                })),
                "related": d.related.iter().map(|r| json!({
                    "path": files[r.loc.file].path,
                    "line": at(r.loc).line,
                    "column": at(r.loc).col,
                    "message": r.message,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    // Templates that were not linted (not YAML until rendered), with their first marker.
    let skipped: Vec<Value> = files
        .iter()
        .filter_map(|f| {
            let s = f.skipped.as_ref()?;
            Some(json!({
                "path": f.path,
                "line": f.pos(s.span.start()).line,
                "column": f.pos(s.span.start()).col,
                "reason": s.reason,
                "marker": s.marker,
            }))
        })
        .collect();
    let doc = json!({
        "version": 1,
        "diagnostics": items,
        "skipped": skipped,
        // Problems that fail the run outside the findings (exit 2): an unreadable path, a policy
        // that failed at run time.
        "errors": run_errors,
        "summary": {
            "files": files.iter().filter(|f| !f.is_context()).count(),
            "documents": documents,
            "objects": objects,
            "errors": errors,
            "warnings": warnings,
            "suppressed": super::suppressed(diags),
        }
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
