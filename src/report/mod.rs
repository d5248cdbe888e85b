//! Output formats: one emitter per format, all reading the same sorted diagnostics.

mod human;
mod json;
mod sarif;

pub use human::{HumanOptions, human};
pub use json::json;
pub use sarif::sarif;

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;

/// Output format names accepted by `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
}

/// Counts by severity.
pub fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    (errors, diags.len() - errors)
}

/// GitHub Actions workflow commands: one annotation per finding.
pub fn github(diags: &[Diagnostic], files: &[SourceFile]) -> String {
    let esc = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let esc_prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for d in diags {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let s = d.loc.span;
        let mut msg = d.message.clone();
        if let Some(h) = &d.help {
            msg.push_str("\nhelp: ");
            msg.push_str(h);
        }
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            esc_prop(&files[d.loc.file].path),
            s.start.line,
            s.start.col,
            s.end.line.max(s.start.line),
            s.end.col,
            esc_prop(d.rule),
            esc(&msg)
        ));
    }
    out
}
