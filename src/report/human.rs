use crate::diag::{Diagnostic, Loc, Severity};
use crate::source::SourceFile;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use rayon::prelude::*;
use std::fmt;

pub struct Human;

impl super::Emitter for Human {
    fn emit(&self, run: &super::Run, color: bool) -> String {
        human(
            run.diagnostics,
            run.files,
            HumanOptions { color, width: 100 },
        )
    }
}

/// How the human report looks.
#[derive(Clone, Copy, Debug)]
pub struct HumanOptions {
    pub color: bool,
    pub width: usize,
}

/// A file's text under its display name, borrowed (no copy per finding).
struct Src<'a> {
    name: &'a str,
    text: &'a str,
}

impl SourceCode for Src<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let c = self.text.read_span(span, before, after)?;
        // `str`'s own line_count counts from the start of the file, which makes miette merge
        // distant labels into one huge snippet; count the lines of the excerpt instead.
        let lines = c.data().iter().filter(|&&b| b == b'\n').count() + 1;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.to_string(),
            c.data(),
            *c.span(),
            c.line(),
            c.column(),
            lines,
        )))
    }
}

fn source_span(loc: Loc) -> SourceSpan {
    SourceSpan::new(loc.span.start().into(), loc.span.len())
}

/// One finding (or one related place in another file) as miette sees it.
struct Report<'a> {
    code: Option<&'a str>,
    severity: miette::Severity,
    message: String,
    help: Option<&'a str>,
    src: Src<'a>,
    labels: Vec<LabeledSpan>,
    related: Vec<Report<'a>>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.code.map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help.map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        (!self.src.text.is_empty()).then_some(&self.src as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.src.text.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.clone().into_iter()))
    }
    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn miette::Diagnostic> + 'b>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related.iter().map(|r| r as &dyn miette::Diagnostic),
        ))
    }
}

fn location(files: &[SourceFile], loc: Loc) -> String {
    let f = &files[loc.file];
    let p = f.pos(loc.span.start());
    format!("{}:{}:{}", f.path, p.line, p.col)
}

/// Bytes in a line past which it is not handed to miette: it pads to a label's column with
/// `{:width$}`, which panics past 65,535 (a minified one-line file), and a line that long says
/// nothing shown whole. A place on or next to such a line is shown as a window of its line.
const MAX_LINE: usize = 1000;

/// Characters of the line shown before and after the start of a place shown as a window.
const WINDOW_BEFORE: usize = 30;
const WINDOW_AFTER: usize = 50;

/// Whether a place is on, or next to (miette shows a line of context), a line too long for
/// miette.
fn far_right(f: &SourceFile, loc: Loc) -> bool {
    let long = |b: usize| f.longest_line_near(b, 1) > MAX_LINE;
    long(loc.span.start()) || long(loc.span.end())
}

/// The part of the line around the start of `loc`, and carets under the place, each line
/// indented by two spaces. Work is bounded by the window, not by the line.
fn window(f: &SourceFile, loc: Loc) -> String {
    let text: &str = &f.text;
    let floor = |mut b: usize| {
        b = b.min(text.len());
        while !text.is_char_boundary(b) {
            b -= 1;
        }
        b
    };
    let at = floor(loc.span.start());
    let line_start = f.line_start(at);
    let from = floor(at.saturating_sub(4 * WINDOW_BEFORE).max(line_start));
    let before: Vec<char> = text[from..at].chars().collect();
    let cut_before = before.len() > WINDOW_BEFORE || from > line_start;
    let before = &before[before.len().saturating_sub(WINDOW_BEFORE)..];
    let tail = &text[at..floor(at + 4 * WINDOW_AFTER)];
    let tail = &tail[..tail.find(['\n', '\r']).unwrap_or(tail.len())];
    let after: Vec<char> = tail.chars().take(WINDOW_AFTER + 1).collect();
    let cut_after = after.len() > WINDOW_AFTER || tail.len() == 4 * WINDOW_AFTER;
    let after = &after[..after.len().min(WINDOW_AFTER)];
    // Control characters (tabs) would move the carets.
    let clean = |c: &char| if c.is_control() { ' ' } else { *c };
    let mut line = String::from("  ");
    if cut_before {
        line.push('…');
    }
    line.extend(before.iter().map(clean));
    line.extend(after.iter().map(clean));
    if cut_after {
        line.push('…');
    }
    let pad = before.len() + usize::from(cut_before);
    let marked = text
        .get(at..floor(loc.span.end()))
        .map_or(0, |s| s.chars().take(after.len()).count())
        .max(1);
    format!("{line}\n  {}{}", " ".repeat(pad), "^".repeat(marked))
}

/// A place in a line too long for miette: located in its message, shown as a window of the line.
fn windowed<'a>(files: &'a [SourceFile], loc: Loc, message: &str) -> Report<'a> {
    let f = &files[loc.file];
    Report {
        code: None,
        severity: miette::Severity::Advice,
        message: format!("{message} ({})\n{}", location(files, loc), window(f, loc)),
        help: None,
        src: Src {
            name: &f.path,
            text: "",
        },
        labels: Vec::new(),
        related: Vec::new(),
    }
}

fn build<'a>(d: &'a Diagnostic, files: &'a [SourceFile]) -> Report<'a> {
    let f = &files[d.loc.file];
    let far = !f.text.is_empty() && far_right(f, d.loc);
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        Some(d.rule.to_string()),
        source_span(d.loc),
    )];
    let mut related = Vec::new();
    for r in &d.related {
        let rf = &files[r.loc.file];
        if !rf.text.is_empty() && far_right(rf, r.loc) {
            related.push(windowed(files, r.loc, &r.message));
        } else if r.loc.file == d.loc.file && !far {
            labels.push(LabeledSpan::new_with_span(
                Some(r.message.clone()),
                source_span(r.loc),
            ));
        } else {
            related.push(Report {
                code: None,
                severity: miette::Severity::Advice,
                message: format!("{} ({})", r.message, location(files, r.loc)),
                help: None,
                src: Src {
                    name: &rf.path,
                    text: &rf.text,
                },
                labels: vec![LabeledSpan::new_with_span(
                    Some(r.message.clone()),
                    source_span(r.loc),
                )],
                related: Vec::new(),
            });
        }
    }
    let mut message = d.message.clone();
    let mut text: &str = &f.text;
    if f.text.is_empty() {
        message = format!("{message} ({})", location(files, d.loc));
    } else if far {
        message = format!(
            "{message} ({})\n{}",
            location(files, d.loc),
            window(f, d.loc)
        );
        text = "";
    }
    Report {
        code: Some(d.rule),
        severity: match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        },
        message,
        help: d.help.as_deref(),
        src: Src {
            name: &f.path,
            text,
        },
        labels,
        related,
    }
}

/// The human report: every finding with its source excerpt, then a summary line; suppressed
/// findings only count in a line of their own.
pub fn human(diags: &[Diagnostic], files: &[SourceFile], opts: HumanOptions) -> String {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(opts.width)
        .with_links(false)
        .with_context_lines(1);
    let shown: Vec<&Diagnostic> = diags.iter().filter(|d| d.suppressed.is_none()).collect();
    // Each finding renders on its own, on every core: thousands of excerpts take a while.
    let rendered: Vec<String> = shown
        .par_iter()
        .map(|&d| {
            let r = build(d, files);
            let mut s = String::new();
            if handler.render_report(&mut s, &r).is_err() {
                s = format!("{}: {} [{}]\n", location(files, d.loc), d.message, d.rule);
            }
            s.push('\n');
            s
        })
        .collect();
    let mut out = rendered.concat();
    let (errors, warnings) = super::counts(diags);
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if shown.is_empty() {
        out.push_str(&format!(
            "no findings in {}\n",
            plural(files.iter().filter(|f| !f.is_context()).count(), "file")
        ));
    } else {
        out.push_str(&format!(
            "{}, {} in {}\n",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(files.iter().filter(|f| !f.is_context()).count(), "file")
        ));
    }
    let suppressed = super::suppressed(diags);
    if suppressed > 0 {
        out.push_str(&format!(
            "{} suppressed (--no-suppressions to show)\n",
            plural(suppressed, "finding")
        ));
    }
    out
}
