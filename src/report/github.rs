//! GitHub Actions workflow commands: annotations on the pull request's files.

use super::{Emitter, Run};
use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;

pub struct Github;

impl Emitter for Github {
    fn emit(&self, run: &Run, _color: bool) -> String {
        github(run.diagnostics, run.files)
    }
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
        let (s, end) = files[d.loc.file].span_pos(d.loc.span);
        let mut msg = d.message.clone();
        if let Some(h) = &d.help {
            msg.push_str("\nhelp: ");
            msg.push_str(h);
        }
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            esc_prop(&files[d.loc.file].path),
            s.line,
            s.col,
            end.line.max(s.line),
            end.col,
            esc_prop(d.rule),
            esc(&msg)
        ));
    }
    out
}
