//! `--format gitlab`: a GitLab Code Quality report (`artifacts:reports:codequality`), the Code
//! Climate issue subset GitLab reads: `description`, `check_name`, `fingerprint`, `severity`,
//! `location.path` and `location.lines.begin`.

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;
use serde_json::{Value, json};

pub struct Gitlab;

impl super::Emitter for Gitlab {
    fn emit(&self, run: &super::Run, _color: bool) -> String {
        gitlab(run.diagnostics, run.files)
    }
}

/// One issue per finding that is not suppressed. `fingerprint` is the stable identity of
/// [`super::fingerprint`]: GitLab compares it between the merge request and its target branch to
/// tell new findings from fixed ones, and drops issues that share one.
///
/// Severity: an error (pods that never schedule, jobs the API server rejects) is `critical`, a
/// warning `minor`; GitLab's other levels are left for nothing gpuops reports.
pub fn gitlab(diags: &[Diagnostic], files: &[SourceFile]) -> String {
    let fingerprints = super::fingerprint::fingerprints(diags, files);
    let issues: Vec<Value> = diags
        .iter()
        .zip(&fingerprints)
        .filter(|(d, _)| d.suppressed.is_none())
        .map(|(d, fingerprint)| {
            let (s, end) = files
                .get(d.loc.file)
                .map_or_else(Default::default, |f| f.span_pos(d.loc.span));
            let mut issue = json!({
                "type": "issue",
                "check_name": d.rule,
                "description": d.message,
                "severity": match d.severity {
                    Severity::Error => "critical",
                    Severity::Warning => "minor",
                },
                "fingerprint": fingerprint,
                "location": {
                    "path": files.get(d.loc.file).map_or("", |f| f.path.as_str()),
                    "lines": {"begin": s.line, "end": end.line.max(s.line)},
                },
            });
            if let Some(h) = &d.help {
                issue["content"] = json!({ "body": h });
            }
            issue
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}
