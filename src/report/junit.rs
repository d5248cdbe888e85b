//! `--format junit`: JUnit XML for GitLab (`artifacts:reports:junit`), Jenkins and other CI test
//! report views. One `<testsuite>` per file with findings, one `<testcase>` per finding.
//!
//! Only findings at or above the failing severity (`--fail-on`) are `<failure>`s: the others are
//! `<skipped>` with the finding in `<system-out>`, so a run that exits 0 is not a failed (or, in
//! Jenkins, unstable) build. A testcase is named by rule and object, never by line, so a test's
//! history survives lines moving; a second finding of one rule on one object gets ` (2)`.
//!
//! The document stays within the Jenkins xUnit plugin's `junit-10.xsd`, the schema GitLab and
//! Jenkins readers accept: `testsuite` carries the required `name`, `tests`, `failures` and
//! `errors` (plus `file`); `testcase` only `name` and `classname` (that schema has no `file` or
//! `line` on a testcase, so the place is in the body). No times or timestamps, so the output of
//! two runs is byte-identical.

use crate::diag::{Diagnostic, Severity};
use crate::source::SourceFile;
use std::fmt::Write;

pub struct Junit;

impl super::Emitter for Junit {
    fn emit(&self, run: &super::Run, _color: bool) -> String {
        junit(run.diagnostics, run.files, run.fail_on)
    }
}

/// JUnit XML of the findings that are not suppressed. A run without findings still has one passing
/// testcase: some readers (Jenkins' by default) fail a build on a report with no tests.
pub fn junit(diags: &[Diagnostic], files: &[SourceFile], fail_on: Option<Severity>) -> String {
    let shown: Vec<&Diagnostic> = diags.iter().filter(|d| d.suppressed.is_none()).collect();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    if shown.is_empty() {
        let linted = files.iter().filter(|f| !f.is_context()).count();
        let name = format!(
            "no findings in {linted} file{}",
            if linted == 1 { "" } else { "s" }
        );
        let _ = write!(
            out,
            "<testsuites name=\"gpuops\" tests=\"1\" failures=\"0\" errors=\"0\">\n  \
             <testsuite name=\"gpuops\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">\n    \
             <testcase name=\"{}\" classname=\"gpuops\"/>\n  </testsuite>\n</testsuites>\n",
            attr(&name)
        );
        return out;
    }
    let failing = |d: &&&Diagnostic| super::fails(d, fail_on);
    let _ = writeln!(
        out,
        "<testsuites name=\"gpuops\" tests=\"{}\" failures=\"{}\" errors=\"0\">",
        shown.len(),
        shown.iter().filter(failing).count()
    );
    // Diagnostics come sorted by path, so each file's findings are one run.
    for group in shown.chunk_by(|a, b| a.loc.file == b.loc.file) {
        let path = files.get(group[0].loc.file).map_or("", |f| f.path.as_str());
        let failures = group.iter().filter(failing).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{p}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\" file=\"{p}\">",
            group.len(),
            group.len() - failures,
            p = attr(path),
        );
        let mut names: Vec<String> = Vec::with_capacity(group.len());
        for d in group {
            let name = unique(test_name(d), &names);
            testcase(&mut out, d, files, path, &name, super::fails(d, fail_on));
            names.push(name);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// `rule: Kind namespace/name`, or the rule alone for a finding on no object.
fn test_name(d: &Diagnostic) -> String {
    let Some(o) = &d.object else {
        return d.rule.to_string();
    };
    match (&o.namespace, &o.name) {
        (Some(ns), Some(n)) => format!("{}: {} {ns}/{n}", d.rule, o.kind),
        (None, Some(n)) => format!("{}: {} {n}", d.rule, o.kind),
        _ => format!("{}: {}", d.rule, o.kind),
    }
}

/// `name`, or `name (2)`, `name (3)`… when the suite already has it.
fn unique(name: String, taken: &[String]) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (2..)
        .map(|n| format!("{name} ({n})"))
        .find(|n| !taken.contains(n))
        .unwrap_or(name)
}

fn testcase(
    out: &mut String,
    d: &Diagnostic,
    files: &[SourceFile],
    path: &str,
    name: &str,
    fails: bool,
) {
    let pos = |loc: crate::diag::Loc| {
        files
            .get(loc.file)
            .map_or_else(Default::default, |f| f.pos(loc.span.start()))
    };
    let place = |loc: crate::diag::Loc| {
        let p = files.get(loc.file).map_or("", |f| f.path.as_str());
        let at = pos(loc);
        format!("{p}:{}:{}", at.line, at.col)
    };
    let mut body = format!(
        "{}[{}]: {}\n  at {}",
        d.severity,
        d.rule,
        d.message,
        place(d.loc)
    );
    if let Some(o) = &d.object {
        let _ = write!(body, "\n  object: {}", o.kind);
        match (&o.namespace, &o.name) {
            (Some(ns), Some(n)) => {
                let _ = write!(body, " {ns}/{n}");
            }
            (None, Some(n)) => {
                let _ = write!(body, " {n}");
            }
            _ => {}
        }
    }
    for r in &d.related {
        let _ = write!(body, "\n  related: {} ({})", r.message, place(r.loc));
    }
    if let Some(h) = &d.help {
        let _ = write!(body, "\nhelp: {h}");
    }
    let _ = writeln!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\">",
        attr(name),
        attr(path)
    );
    let what = format!("type=\"{}\" message=\"{}\"", d.severity, attr(&d.message));
    let body = text(&body);
    let _ = if fails {
        writeln!(out, "      <failure {what}>{body}</failure>")
    } else {
        // Below the failing severity: reported, not failed.
        writeln!(
            out,
            "      <skipped {what}/>\n      <system-out>{body}</system-out>"
        )
    };
    out.push_str("    </testcase>\n");
}

/// Escapes element text. Characters XML 1.0 cannot hold at all, even as references (most C0
/// controls, U+FFFE, U+FFFF), are written as `\u{…}` so the document always parses.
fn text(s: &str) -> String {
    escape(s, false)
}

/// Escapes a double-quoted attribute value; newlines and tabs become references because a parser
/// would otherwise normalise them to spaces.
fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, in_attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attr => out.push_str("&quot;"),
            '\n' if in_attr => out.push_str("&#10;"),
            '\t' if in_attr => out.push_str("&#9;"),
            // A literal CR would be read back as a newline.
            '\r' => out.push_str("&#13;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:04X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(text("a<b & c>\"d\""), "a&lt;b &amp; c&gt;\"d\"");
        assert_eq!(attr("x\"y\n\tz"), "x&quot;y&#10;&#9;z");
        assert_eq!(
            text("bell\u{7}esc\u{1b}\r\n"),
            "bell\\u{0007}esc\\u{001B}&#13;\n"
        );
        assert_eq!(text("\u{FFFF}é"), "\\u{FFFF}é");
    }
}
