use super::uri::Artifact;
use crate::diag::Severity;
use crate::rules;
use rayon::prelude::*;
use serde_json::{Value, json};

pub struct Sarif;

impl super::Emitter for Sarif {
    fn emit(&self, run: &super::Run, _color: bool) -> String {
        sarif(run)
    }
}

fn region(span: crate::yaml::Span, file: &crate::source::SourceFile) -> Value {
    let (s, end) = file.span_pos(span);
    json!({
        "startLine": s.line,
        "startColumn": s.col,
        "endLine": end.line.max(s.line),
        "endColumn": if end.line > s.line || end.col > s.col { end.col } else { s.col + 1 },
    })
}

/// A `physicalLocation`: the file as a URI reference, and the region when its lines are the
/// file's.
fn physical(loc: crate::diag::Loc, files: &[crate::source::SourceFile]) -> Value {
    let file = &files[loc.file];
    let artifact = Artifact::of(&file.path);
    let mut p = json!({"artifactLocation": artifact.location(&file.path)});
    if artifact.has_lines() {
        p["region"] = region(loc.span, file);
    }
    p
}

/// SARIF 2.1.0 for GitHub code scanning; rule help comes from the rule explanations.
pub fn sarif(run: &super::Run) -> String {
    let (diags, files) = (run.diagnostics, run.files);
    let fingerprints = super::fingerprint::fingerprints(diags, files);
    let rule_list: Vec<Value> = rules::all()
        .iter()
        .map(|r| {
            json!({
                "id": r.name,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.explanation()},
                "help": {"text": r.explanation(), "markdown": r.explanation()},
                "defaultConfiguration": {"level": match r.severity { Severity::Error => "error", Severity::Warning => "warning" }},
                "properties": {"category": r.category},
            })
        })
        .collect();
    // One result per finding, built on every core (a large repository has thousands).
    let results: Vec<Value> = diags
        .par_iter()
        .zip(&fingerprints)
        .map(|(d, fingerprint)| {
            let mut text = d.message.clone();
            if let Some(h) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let mut result = json!({
                "ruleId": d.rule,
                "ruleIndex": rules::all().iter().position(|r| r.name == d.rule),
                "level": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "message": {"text": text},
                "locations": [{"physicalLocation": physical(d.loc, files)}],
                "relatedLocations": d.related.iter().enumerate().map(|(i, r)| json!({
                    "id": i + 1,
                    "message": {"text": r.message},
                    "physicalLocation": physical(r.loc, files),
                })).collect::<Vec<_>>(),
                // Code scanning matches results across commits by these, not by line numbers.
                "partialFingerprints": {(super::fingerprint::SARIF_KEY): fingerprint},
            });
            // SARIF 2.1.0 §3.35: a finding suppressed in the source stays in the log, marked.
            if let Some(s) = &d.suppressed {
                result["suppressions"] = json!([{
                    "kind": "inSource",
                    "justification": s.reason,
                    "location": {"physicalLocation": physical(s.loc, files)},
                }]);
            }
            result
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gpuops",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rule_list,
            }},
            "originalUriBaseIds": super::uri::base_ids(),
            "columnKind": "unicodeCodePoints",
            "invocations": [invocation(run)],
            "results": results,
        }]
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// SARIF §3.20: how the run ended. Findings are a successful execution (exit 1 included); exit 2
/// (an unreadable path, a bad config) is not, and the problems are its notifications.
fn invocation(run: &super::Run) -> Value {
    let description = match run.exit_code {
        0 => "no finding at or above the failing severity",
        1 => "findings at or above the failing severity",
        _ => "the run failed: see toolExecutionNotifications",
    };
    let mut inv = json!({
        "executionSuccessful": run.exit_code != 2,
        "exitCode": run.exit_code,
        "exitCodeDescription": description,
    });
    if !run.errors.is_empty() {
        inv["toolExecutionNotifications"] = run
            .errors
            .iter()
            .map(|e| json!({"level": "error", "message": {"text": e}}))
            .collect();
    }
    inv
}
