//! In-source suppressions, applied once after every rule ran:
//!
//! - `ignore.gpuops.dev/<rule>: "<reason>"` in an object's (or a pod template's) annotations,
//! - `# gpuops:ignore[<rule>,…] <reason>` at the end of a line or alone on the line above,
//! - `# gpuops:ignore-file[<rule>,…] <reason>` in the comments that open a file.
//!
//! A suppressed finding is kept and marked, so JSON and SARIF can show what was hidden and why.
//! Suppressions that cannot work are `suppression-invalid` findings; those that matched nothing in
//! a rule that ran are `unused-suppression` findings.

use crate::config::Settings;
use crate::diag::{Diagnostic, FileId, Loc, ObjectRef, Suppression, SuppressionKind};
use crate::model::{self, Object};
use crate::rules::{self, Rule, suppression_invalid, unused_suppression};
use crate::source::SourceFile;
use crate::yaml::{Node, Span, Style, Value};
use rayon::prelude::*;

/// The rules whose findings come from this pass: they judge other rules' findings, so they only
/// mean something when those rules run too.
pub static RULES: [&Rule; 2] = [&suppression_invalid::RULE, &unused_suppression::RULE];

const COMMENT_MARK: &str = "gpuops:ignore";
const ANNOTATION_PREFIX: &str = "ignore.gpuops.dev/";

/// What a suppression covers, most specific first (the order decides which one a finding shows
/// when several cover it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    /// Findings that start on this 1-based line.
    Line(u32),
    /// Findings inside a pod template (byte range).
    Template { start: usize, end: usize },
    /// Findings inside an object's document, or about that object in the same file.
    Object {
        start: usize,
        end: usize,
        object: ObjectRef,
    },
    /// Every finding in the file.
    File,
}

impl Scope {
    /// Whether the finding `d`, which starts on `line` of its file, is in scope.
    fn covers(&self, d: &Diagnostic, line: u32) -> bool {
        let at = d.loc.span.start();
        match self {
            Scope::Line(l) => line == *l,
            Scope::Template { start, end } => (*start..*end).contains(&at),
            Scope::Object { start, end, object } => {
                (*start..*end).contains(&at) || d.object.as_ref() == Some(object)
            }
            Scope::File => true,
        }
    }
}

/// One rule suppressed at one place.
#[derive(Debug)]
struct Entry {
    rule: &'static str,
    kind: SuppressionKind,
    reason: String,
    /// The annotation key, or the rule's name inside the comment.
    loc: Loc,
    scope: Scope,
    /// What the user wrote, for messages: `# gpuops:ignore[x]`, annotation `ignore.gpuops.dev/x`.
    written: String,
    used: bool,
}

/// A suppression that cannot take effect.
#[derive(Debug)]
struct Invalid {
    loc: Loc,
    message: String,
    help: String,
}

/// The suppressions of one file.
#[derive(Debug, Default)]
struct Found {
    entries: Vec<Entry>,
    invalid: Vec<Invalid>,
}

/// Marks the findings that a suppression covers, then adds `suppression-invalid` and
/// `unused-suppression` findings. With `settings.suppressions` off nothing is suppressed and
/// nothing is unused, but malformed suppressions are still reported.
///
/// Unused suppressions are only reported for rules that ran (`policy::enabled`): turning a
/// rule off or selecting others with `--rule` must not make its suppressions look stale.
pub fn apply(
    files: &[SourceFile],
    settings: &Settings,
    policies: Option<&crate::policy::Policies>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut found: Vec<Found> = files
        .par_iter()
        .enumerate()
        .map(|(fid, f)| scan(fid, f))
        .collect();
    // Policies come from the run's directories: a name some other run loaded is unknown here.
    for f in &mut found {
        let (known, unknown): (Vec<Entry>, Vec<Entry>) = f.entries.drain(..).partition(|e| {
            !e.rule.starts_with(crate::policy::PREFIX)
                || crate::policy::known(policies, e.rule).is_some()
        });
        f.entries = known;
        f.invalid.extend(unknown.into_iter().map(|e| Invalid {
            loc: e.loc,
            message: format!(
                "{} names unknown rule `{}`, so it suppresses nothing",
                e.written, e.rule
            ),
            help: "`gpuops rules` lists the rule names".to_string(),
        }));
    }
    if found
        .iter()
        .all(|f| f.entries.is_empty() && f.invalid.is_empty())
    {
        return;
    }

    if settings.suppressions {
        for d in diagnostics.iter_mut() {
            if d.suppressed.is_some() || RULES.iter().any(|r| r.name == d.rule) {
                continue;
            }
            let Some(file) = found.get_mut(d.loc.file) else {
                continue;
            };
            let mut best: Option<usize> = None;
            let line = files[d.loc.file].pos(d.loc.span.start()).line;
            for i in 0..file.entries.len() {
                let e = &mut file.entries[i];
                if e.rule != d.rule || !e.scope.covers(d, line) {
                    continue;
                }
                // Every covering suppression counts as used, so none of them is called stale;
                // the finding shows the most specific one.
                e.used = true;
                if best.is_none_or(|b| file.entries[i].scope < file.entries[b].scope) {
                    best = Some(i);
                }
            }
            if let Some(b) = best {
                let e = &file.entries[b];
                d.suppressed = Some(Suppression {
                    kind: e.kind,
                    reason: e.reason.clone(),
                    loc: e.loc,
                });
            }
        }
    }

    if crate::policy::enabled(settings, suppression_invalid::RULE.name) {
        for f in &mut found {
            for inv in f.invalid.drain(..) {
                diagnostics.push(
                    Diagnostic::new(
                        suppression_invalid::RULE.name,
                        suppression_invalid::RULE.severity,
                        inv.loc,
                        inv.message,
                    )
                    .help(inv.help),
                );
            }
        }
    }

    if settings.suppressions && crate::policy::enabled(settings, unused_suppression::RULE.name) {
        for e in found.iter().flat_map(|f| &f.entries) {
            if e.used || !crate::policy::enabled(settings, e.rule) {
                continue;
            }
            let place = match &e.scope {
                Scope::Line(line) => format!("on line {line}"),
                Scope::Template { .. } => "in this pod template".to_string(),
                Scope::Object { object, .. } => format!("about {}", describe(object)),
                Scope::File => "in this file".to_string(),
            };
            diagnostics.push(
                Diagnostic::new(
                    unused_suppression::RULE.name,
                    unused_suppression::RULE.severity,
                    e.loc,
                    format!(
                        "{} suppresses nothing: `{}` reports no finding {place}",
                        e.written, e.rule
                    ),
                )
                .help(
                    "remove it: the finding it was written for is fixed or has moved, and a stale suppression would hide the next one",
                ),
            );
        }
    }
}

fn describe(o: &ObjectRef) -> String {
    let name = o.name.as_deref().unwrap_or("<unnamed>");
    match &o.namespace {
        Some(ns) => format!("{} {ns}/{name}", o.kind),
        None => format!("{} {name}", o.kind),
    }
}

/// The suppressions written in one file. Both forms spell `gpuops` literally, so the text of most
/// files is searched once and nothing else is done.
fn scan(fid: FileId, f: &SourceFile) -> Found {
    let mut found = Found::default();
    if !f.text.contains("gpuops") {
        return found;
    }
    if f.text.contains(ANNOTATION_PREFIX) {
        scan_annotations(fid, f, &mut found);
    }
    if f.text.contains(COMMENT_MARK) {
        let mut spans = Vec::new();
        for d in &f.docs {
            scalar_spans(&f.text, d.root(), &mut spans);
        }
        scan_comments(fid, &f.text, &disjoint(spans), &mut found);
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Annotations

fn scan_annotations(fid: FileId, f: &SourceFile, found: &mut Found) {
    for d in &f.docs {
        let Some(o) = Object::from_node(fid, d.root()) else {
            continue;
        };
        // `kind: List` (kubectl output): its items are the objects, as in the index.
        if o.kind.ends_with("List") && o.group.is_empty() {
            for item in o.root.get("items").into_iter().flat_map(|n| n.items()) {
                if let Some(io) = Object::from_node(fid, item) {
                    object_annotations(&io, found);
                }
            }
        } else {
            object_annotations(&o, found);
        }
    }
}

fn object_annotations(o: &Object<'_>, found: &mut Found) {
    let obj_meta = o.metadata();
    if let Some(ann) = o.annotations() {
        let scope = Scope::Object {
            start: o.root.span().start(),
            end: o.root.span().end(),
            object: o.obj_ref(),
        };
        annotation_entries(o.file, ann, &scope, found);
    }
    for t in model::pod_templates(0, o) {
        let Some(meta) = t.metadata else { continue };
        // A bare Pod is its own template: its annotations were read above.
        if obj_meta.is_some_and(|m| m.is(meta)) {
            continue;
        }
        let Some(ann) = meta.get("annotations") else {
            continue;
        };
        let scope = Scope::Template {
            start: meta.span().start().min(t.spec.span().start()),
            end: meta.span().end().max(t.spec.span().end()),
        };
        annotation_entries(o.file, ann, &scope, found);
    }
}

fn annotation_entries(fid: FileId, ann: Node<'_>, scope: &Scope, found: &mut Found) {
    for (key, key_node, value) in ann.entries() {
        let Some(name) = key.strip_prefix(ANNOTATION_PREFIX) else {
            continue;
        };
        let loc = Loc {
            file: fid,
            span: key_node.span(),
        };
        let written = format!("annotation `{key}`");
        // An annotation key holds one `/`: policies are spelled `ignore.gpuops.dev/policy.<id>`.
        if let Some(id) = name.strip_prefix(crate::policy::PREFIX) {
            found.invalid.push(Invalid {
                loc,
                message: format!(
                    "{written} is not a valid annotation key (one `/` at most), so Kubernetes rejects it"
                ),
                help: format!("write `{ANNOTATION_PREFIX}policy.{id}`"),
            });
            continue;
        }
        let policy_name = name
            .strip_prefix("policy.")
            .map(|id| format!("{}{id}", crate::policy::PREFIX));
        let Some(rule) = resolve(policy_name.as_deref().unwrap_or(name), loc, &written, found)
        else {
            continue;
        };
        let reason = value
            .as_str()
            .filter(|_| !value.is_null())
            .map(str::trim)
            .unwrap_or_default();
        if reason.is_empty() {
            found.invalid.push(Invalid {
                loc,
                message: format!(
                    "{written} gives no reason, so it suppresses nothing: a suppression says why the finding does not apply"
                ),
                help: format!("put the reason in the value: `{key}: \"<why this is safe>\"`"),
            });
            continue;
        }
        found.entries.push(Entry {
            rule,
            kind: SuppressionKind::Annotation,
            reason: reason.to_string(),
            loc,
            scope: scope.clone(),
            written,
            used: false,
        });
    }
}

/// The registered rule a suppression names; anything else is recorded as invalid.
fn resolve(name: &str, loc: Loc, written: &str, found: &mut Found) -> Option<&'static str> {
    match rules::find(name) {
        Some(r) if RULES.iter().any(|m| m.name == r.name) => {
            found.invalid.push(Invalid {
                loc,
                message: format!(
                    "{written}: `{name}` is about suppressions themselves and cannot be suppressed in the source"
                ),
                help: format!("turn it off in .gpuops.yaml instead (`rules: {{{name}: off}}`)"),
            });
            None
        }
        Some(r) => Some(r.name),
        None if crate::policy::interned(name).is_some() => crate::policy::interned(name),
        None => {
            let hint = rules::closest(name)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            found.invalid.push(Invalid {
                loc,
                message: format!(
                    "{written} names unknown rule `{name}`{hint}, so it suppresses nothing"
                ),
                help: "`gpuops rules` lists the rule names".to_string(),
            });
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comments

/// Byte ranges of every scalar (keys included): a `#` inside one is text, not a comment. The
/// parser already knows where quoted, block and plain scalars start and end, which a line scanner
/// would have to re-learn (a `'` in `don't` opens nothing; a `#` in a `|` block is text).
fn scalar_spans(text: &str, n: Node<'_>, out: &mut Vec<(usize, usize)>) {
    match n.value() {
        Value::Scalar { .. } => {
            let (start, end) = (n.span().start(), n.span().end());
            let style = n.style().unwrap_or(Style::Plain);
            let end = match style {
                Style::DoubleQuoted | Style::SingleQuoted => {
                    crate::yaml::quoted_end(text, start, style)
                }
                _ => None,
            }
            .unwrap_or(end);
            if end > start {
                out.push((start, end));
            }
        }
        Value::Seq(items) => items.iter().for_each(|i| scalar_spans(text, i, out)),
        Value::Map(entries) => {
            for (k, v) in entries {
                scalar_spans(text, k, out);
                scalar_spans(text, v, out);
            }
        }
    }
}

/// Sorts the ranges and merges overlaps (an alias repeats its anchor's nodes), so a binary search
/// finds the one range a byte could be in.
fn disjoint(mut spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Whether byte `at` lies inside one of the sorted, disjoint scalar ranges.
fn in_scalar(spans: &[(usize, usize)], at: usize) -> bool {
    let i = spans.partition_point(|&(s, _)| s <= at);
    i > 0 && at < spans[i - 1].1
}

/// A line of the file: where it starts and its text without the line break (`\n` or `\r\n`).
struct Line<'t> {
    start: usize,
    text: &'t str,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        let body = body.strip_suffix('\r').unwrap_or(body);
        out.push(Line { start, text: body });
        start += piece.len();
    }
    out
}

/// Offset in the line of the `#` that opens a comment: at the line start or after a space or
/// tab (YAML), and outside any scalar.
fn comment_start(line: &Line<'_>, spans: &[(usize, usize)]) -> Option<usize> {
    let bytes = line.text.as_bytes();
    line.text.match_indices('#').map(|(i, _)| i).find(|&i| {
        let separated = i == 0 || matches!(bytes[i - 1], b' ' | b'\t');
        separated && !in_scalar(spans, line.start + i)
    })
}

fn comment_only(line: &Line<'_>, spans: &[(usize, usize)]) -> bool {
    comment_start(line, spans).is_some_and(|i| line.text[..i].trim().is_empty())
}

/// Offset in the comment of `gpuops:ignore` when it starts the comment or a `#`-separated part of
/// it (`# keep: see ADR-12 # gpuops:ignore[…] …`); prose that mentions it further in is no
/// directive.
fn directive_start(comment: &str) -> Option<usize> {
    let mut at = 0;
    while let Some(rel) = comment[at..].find('#') {
        let hash = at + rel;
        let body = &comment[hash + 1..];
        let lead = body.len() - body.trim_start().len();
        if body[lead..].starts_with(COMMENT_MARK) {
            return Some(hash + 1 + lead);
        }
        at = hash + 1;
    }
    None
}

/// A parsed `gpuops:ignore[…] reason` or `gpuops:ignore-file[…] reason`.
#[derive(Debug, PartialEq, Eq)]
struct Directive<'t> {
    file: bool,
    /// Rule names with their byte offset in the directive.
    names: Vec<(usize, &'t str)>,
    reason: &'t str,
}

/// `Err` holds the form the user attempted, for the message.
fn parse_directive(d: &str) -> Result<Directive<'_>, &'static str> {
    let rest = d.strip_prefix(COMMENT_MARK).unwrap_or(d);
    let (file, rest) = match rest.strip_prefix("-file") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let form = if file {
        "gpuops:ignore-file"
    } else {
        "gpuops:ignore"
    };
    let Some(list) = rest.strip_prefix('[') else {
        return Err(form);
    };
    let Some(close) = list.find(']') else {
        return Err(form);
    };
    let list_at = d.len() - list.len();
    let mut names = Vec::new();
    let mut offset = 0;
    for part in list[..close].split(',') {
        let lead = part.len() - part.trim_start().len();
        let name = part.trim();
        if name.is_empty() {
            return Err(form);
        }
        names.push((list_at + offset + lead, name));
        offset += part.len() + 1;
    }
    // A separator before the reason (`: `, `-- `, `— `) is not part of it.
    let reason = list[close + 1..]
        .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '-' | '—'))
        .trim_end();
    Ok(Directive {
        file,
        names,
        reason,
    })
}

fn scan_comments(fid: FileId, text: &str, spans: &[(usize, usize)], found: &mut Found) {
    let lines = lines(text);
    // The leading block ends at the first line with content; a `---` is content too, so
    // `gpuops:ignore-file` means "this whole file", never "from this document on".
    let leading_end = lines
        .iter()
        .position(|l| {
            let t = l.text.trim_start();
            !t.is_empty() && !t.starts_with('#')
        })
        .unwrap_or(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if !line.text.contains(COMMENT_MARK) {
            continue;
        }
        let Some(hash) = comment_start(line, spans) else {
            continue;
        };
        let Some(rel) = directive_start(&line.text[hash..]) else {
            continue;
        };
        let at = hash + rel;
        let directive = &line.text[at..];
        let line_no = i as u32 + 1;
        let span_of =
            |from: usize, len: usize| Span::new(line.start + from, line.start + from + len);
        let whole = Loc {
            file: fid,
            span: span_of(hash, line.text.trim_end().len() - hash),
        };
        let parsed = match parse_directive(directive) {
            Ok(p) => p,
            Err(form) => {
                found.invalid.push(Invalid {
                    loc: whole,
                    message: format!(
                        "`{form}` names no rule, so it suppresses nothing: write `# {form}[rule-name] <reason>`"
                    ),
                    help: "`gpuops rules` lists the rule names; several go in one list: `[rule-a,rule-b]`"
                        .to_string(),
                });
                continue;
            }
        };
        let own_line = line.text[..hash].trim().is_empty();
        let (kind, scope, form) = if parsed.file {
            if !own_line || i >= leading_end {
                found.invalid.push(Invalid {
                    loc: whole,
                    message: "`gpuops:ignore-file` counts only in the comments at the top of the file, before any content; this one suppresses nothing".to_string(),
                    help: "move it above the first line of YAML, or use `# gpuops:ignore[rule] <reason>` on the offending line".to_string(),
                });
                continue;
            }
            (SuppressionKind::File, Scope::File, "gpuops:ignore-file")
        } else if own_line {
            // Alone on its line: it covers the next line that is not itself a comment, so
            // several directives (or a longer explanation) may stack above one line.
            let mut j = i + 1;
            while lines.get(j).is_some_and(|l| comment_only(l, spans)) {
                j += 1;
            }
            (
                SuppressionKind::Comment,
                Scope::Line(j as u32 + 1),
                "gpuops:ignore",
            )
        } else {
            (
                SuppressionKind::Comment,
                Scope::Line(line_no),
                "gpuops:ignore",
            )
        };
        let reason = parsed.reason;
        let mut rules = Vec::new();
        for (off, name) in &parsed.names {
            let loc = Loc {
                file: fid,
                span: span_of(at + off, name.len()),
            };
            let written = format!("`# {form}[{name}]`");
            if let Some(rule) = resolve(name, loc, &written, found) {
                rules.push((rule, loc, written));
            }
        }
        if reason.is_empty() {
            let names: Vec<&str> = parsed.names.iter().map(|(_, n)| *n).collect();
            let list = names.join(",");
            found.invalid.push(Invalid {
                loc: whole,
                message: format!(
                    "`# {form}[{list}]` gives no reason, so it suppresses nothing: a suppression says why the finding does not apply"
                ),
                help: format!("add the reason after the brackets: `# {form}[{list}] <why this is safe>`"),
            });
            continue;
        }
        for (rule, loc, written) in rules {
            found.entries.push(Entry {
                rule,
                kind,
                reason: reason.to_string(),
                loc,
                scope: scope.clone(),
                written,
                used: false,
            });
        }
    }
}

#[cfg(test)]
mod tests;
