//! Writing for the user: stdout that survives a closed pipe, and config errors on stderr.

use gpuops::config;
use gpuops::diag::Severity;
use gpuops::report::{self, HumanOptions};
use gpuops::source::SourceFile;
use std::io::{IsTerminal, Write};

pub(crate) fn print(s: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = out.write_all(s.as_bytes());
    let _ = out.flush();
}

pub(super) fn config_error(e: &config::ConfigError) {
    let name = e.path.display().to_string();
    let count = e.problems.len();
    eprintln!(
        "error: invalid config {name}: {count} problem{}",
        if count == 1 { "" } else { "s" }
    );
    for p in &e.problems {
        let d = gpuops::diag::Diagnostic::new(
            "config",
            Severity::Error,
            gpuops::diag::Loc {
                file: 0,
                span: p.span,
            },
            p.message.clone(),
        );
        let files = [SourceFile {
            path: name.clone(),
            text: e.text.as_str().into(),
            docs: Vec::new(),
            problems: Vec::new(),
            skipped: None,
            role: Default::default(),
            lines: Default::default(),
        }];
        let s = report::human(
            &[d],
            &files,
            HumanOptions {
                color: std::io::stderr().is_terminal(),
                width: 100,
            },
        );
        // Drop the per-report summary line; the header above says how many.
        let body = s.rsplit_once("\n1 error").map_or(s.as_str(), |(b, _)| b);
        eprintln!("{body}");
    }
}
