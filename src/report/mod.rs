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

/// Counts by severity of the findings that are not suppressed.
pub fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    diags
        .iter()
        .filter(|d| d.suppressed.is_none())
        .fold((0, 0), |(e, w), d| match d.severity {
            Severity::Error => (e + 1, w),
            Severity::Warning => (e, w + 1),
        })
}

/// How many findings a suppression covers.
pub fn suppressed(diags: &[Diagnostic]) -> usize {
    diags.iter().filter(|d| d.suppressed.is_some()).count()
}

/// GitHub Actions workflow commands: one annotation per finding that is not suppressed.
pub fn github(diags: &[Diagnostic], files: &[SourceFile]) -> String {
    let esc = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let esc_prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for d in diags.iter().filter(|d| d.suppressed.is_none()) {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let s = d.loc.span;
        let end = s.end_pos(&files[d.loc.file].text);
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
            end.line.max(s.start.line),
            end.col,
            esc_prop(d.rule),
            esc(&msg)
        ));
    }
    out
}
