//! Output formats: one emitter per format, all reading the same sorted diagnostics.
//!
//! Adding a format: a file here with a unit struct that implements [`Emitter`], and its line in
//! the `formats!` table below (which names it for `--format` and `--output-file`).

mod changed;
pub mod fingerprint;
mod github;
mod gitlab;
mod human;
mod json;
mod junit;
mod output_file;
pub mod progress;
mod rules_doc;
mod sarif;
mod uri;

pub use changed::ChangedFiles;
pub use github::github;
pub use gitlab::gitlab;
pub use human::{HumanOptions, human};
pub use json::json;
pub use junit::junit;
pub use output_file::{AtomicFile, OutputFile};
pub use rules_doc::rules_markdown;
pub use sarif::sarif;

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;

/// One output format: the whole run as text. `color` only matters to formats read by people.
pub trait Emitter: Sync {
    fn emit(&self, run: &Run, color: bool) -> String;
}

/// The formats: `Variant => "name", emitter`, in the order `--help` lists them.
macro_rules! formats {
    ($($variant:ident => $name:literal, $emitter:expr;)*) => {
        /// Output formats accepted by `--format` and `--output-file FORMAT=PATH`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
        pub enum Format {
            $($variant,)*
        }

        impl Format {
            pub const ALL: &[Format] = &[$(Format::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Format::$variant => $name,)*
                }
            }

            pub fn emitter(self) -> &'static dyn Emitter {
                match self {
                    $(Format::$variant => &$emitter,)*
                }
            }
        }
    };
}

formats! {
    Human => "human", human::Human;
    Json => "json", json::Json;
    Sarif => "sarif", sarif::Sarif;
    Github => "github", github::Github;
    Junit => "junit", junit::Junit;
    Gitlab => "gitlab", gitlab::Gitlab;
}

impl Format {
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.iter().copied().find(|f| f.name() == name)
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
    /// The lowest severity that fails the run (`None`: nothing does), for JUnit failures.
    pub fail_on: Option<Severity>,
    /// Problems outside the findings that fail the run (an unreadable path), for SARIF.
    pub errors: &'a [String],
}

/// The run in one format.
pub fn emit(format: Format, run: &Run, color: bool) -> String {
    format.emitter().emit(run, color)
}

/// The exit status for these findings: 1 when an unsuppressed finding reaches `fail_on`.
pub fn exit_code(diags: &[Diagnostic], fail_on: Option<Severity>) -> u8 {
    u8::from(diags.iter().any(|d| fails(d, fail_on)))
}

/// Whether a finding fails the run: not suppressed, and at or above `fail_on`.
pub fn fails(d: &Diagnostic, fail_on: Option<Severity>) -> bool {
    d.suppressed.is_none() && fail_on.is_some_and(|min| d.severity >= min)
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

#[cfg(test)]
mod tests;
