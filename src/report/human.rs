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

fn build<'a>(d: &'a Diagnostic, files: &'a [SourceFile]) -> Report<'a> {
    let f = &files[d.loc.file];
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        Some(d.rule.to_string()),
        source_span(d.loc),
    )];
    let mut related = Vec::new();
    for r in &d.related {
        if r.loc.file == d.loc.file {
            labels.push(LabeledSpan::new_with_span(
                Some(r.message.clone()),
                source_span(r.loc),
            ));
        } else {
            let rf = &files[r.loc.file];
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
    if f.text.is_empty() {
        message = format!("{message} ({})", location(files, d.loc));
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
            text: &f.text,
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
