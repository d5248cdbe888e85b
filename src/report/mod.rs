//! Output formats: one emitter per format, all reading the same sorted diagnostics.

mod changed;
pub mod fingerprint;
mod gitlab;
mod human;
mod json;
mod junit;
mod output_file;
pub mod progress;
mod rules_doc;
mod sarif;

pub use changed::ChangedFiles;
pub use gitlab::gitlab;
pub use human::{HumanOptions, human};
pub use json::json;
pub use junit::junit;
pub use output_file::OutputFile;
pub use rules_doc::rules_markdown;
pub use sarif::sarif;

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;

/// Output format names accepted by `--format` and `--output-file FORMAT=PATH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
    Junit,
    Gitlab,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Human,
        Format::Json,
        Format::Sarif,
        Format::Github,
        Format::Junit,
        Format::Gitlab,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Github => "github",
            Format::Junit => "junit",
            Format::Gitlab => "gitlab",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// One lint run as the emitters see it.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// Sorted, suppressed ones included (each emitter decides how to show them).
    pub diagnostics: &'a [Diagnostic],
    pub files: &'a [SourceFile],
    pub documents: usize,
    pub objects: usize,
    /// The status the process exits with (0, 1 or 2), for SARIF `invocations`.
    pub exit_code: u8,
    /// Problems outside the findings that fail the run (an unreadable path), for SARIF.
    pub errors: &'a [String],
}

/// The run in one format. `color` only matters to human output.
pub fn emit(format: Format, run: &Run, color: bool) -> String {
    match format {
        Format::Human => human(
            run.diagnostics,
            run.files,
            HumanOptions { color, width: 100 },
        ),
        Format::Json => json(
            run.diagnostics,
            run.files,
            run.documents,
            run.objects,
            run.errors,
        ),
        Format::Sarif => sarif(run),
        Format::Github => github(run.diagnostics, run.files),
        Format::Junit => junit(run.diagnostics, run.files),
        Format::Gitlab => gitlab(run.diagnostics, run.files),
    }
}

/// The exit status for these findings: 1 when an unsuppressed finding reaches `fail_on`.
pub fn exit_code(diags: &[Diagnostic], fail_on: Option<Severity>) -> u8 {
    let failing = fail_on.is_some_and(|min| {
        diags
            .iter()
            .any(|d| d.severity >= min && d.suppressed.is_none())
    });
    u8::from(failing)
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
