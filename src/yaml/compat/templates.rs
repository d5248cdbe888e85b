//! Telling templates from YAML: Go/Helm, Jinja, Terraform template, printf and format markers.
//!
//! One pass over the lines, each line scanned once: linear in the text.

use super::is_blank;
use crate::yaml::Span;

/// Why a file that failed to parse is taken for a template, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateHint {
    /// `Go template`, `Jinja template`, `Terraform template` or `printf template`.
    pub kind: &'static str,
    /// The first template marker as written (shortened when long).
    pub marker: String,
    /// Where that marker stands.
    pub span: Span,
}

/// Words that open a Go template action in Helm charts and operator manifests; an action that
/// starts with anything else (Argo's `{{inputs.parameters.x}}`) is not taken for one unless it
/// fills a whole line.
const GO_TEMPLATE_WORDS: &[&str] = &[
    "if", "else", "end", "range", "with", "define", "template", "block", "include", "toYaml",
    "toJson", "tpl", "required", "default", "quote", "squote", "printf", "print", "lookup",
    "nindent", "indent", "trim", "upper", "lower", "b64enc", "fromYaml", "list", "dict", "get",
    "hasKey", "empty", "coalesce", "ternary", "not", "and", "or", "eq", "ne", "len", "index",
];

/// Names that only Helm puts in a template.
const HELM_WORDS: &[&str] = &[
    ".Values",
    ".Release",
    ".Chart",
    ".Capabilities",
    ".Files",
    ".Template",
    "include ",
    "toYaml",
    "tpl ",
];

/// Whether a file is clearly a template (filled in by a program before anything reads it as
/// YAML), with its first marker. Markers are Go template actions filling a line or standing
/// unquoted in a value (`{{- if .Values.gpu }}`, `image: {{ .Values.image }}`, clusterloader2's
/// `replicas: {{.Replicas}}`, which parses as a flow mapping), Helm expressions even in quotes,
/// Jinja tags (`{% if %}`, `{# … #}`), Terraform `templatefile()` directives and expressions
/// (`%{ if x ~}`, `${indent(4, v)}`; not an envsubst `${NAME}`) and values that are only a printf
/// verb (`name: %s`). Comments and block scalar contents are not looked at.
pub fn template_markers(text: &str) -> Option<TemplateHint> {
    markers(text, true)
}

/// For a file that parses: the markers of [`template_markers`] that change what it parses to
/// (unquoted actions, directive lines, printf verbs). A quoted expression is a string the
/// linter treats as a placeholder, so a file with only those is still linted.
pub fn structural_template_markers(text: &str) -> Option<TemplateHint> {
    markers(text, false)
}

fn markers(text: &str, quoted: bool) -> Option<TemplateHint> {
    // Every marker has a `{` or a `%`: most files are ruled out by two fast scans.
    if !text.contains('{') && !text.contains('%') {
        return None;
    }
    let mut block_scalar: Option<usize> = None;
    let mut line_start = 0;
    for raw in text.split('\n') {
        let start = line_start;
        line_start += raw.len() + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if let Some(parent) = block_scalar {
            if body.trim().is_empty() || indent > parent {
                continue;
            }
            block_scalar = None;
        }
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if let Some((at, end, kind)) = line_marker(line, quoted) {
            let marker = &line[at..end];
            let shown = if marker.chars().count() > 60 {
                format!("{}…", marker.chars().take(59).collect::<String>())
            } else {
                marker.to_string()
            };
            return Some(TemplateHint {
                kind,
                marker: shown,
                span: Span::new(start + at, start + end),
            });
        }
        if opens_block_scalar(body) {
            block_scalar = Some(indent);
        }
    }
    None
}

/// The first template marker of a line: (start, end, kind), byte offsets in the line.
fn line_marker(line: &str, quoted: bool) -> Option<(usize, usize, &'static str)> {
    let b = line.as_bytes();
    let whole_line = line.trim_start().starts_with("{{") || line.trim_start().starts_with("{%");
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let prev = if i == 0 { b' ' } else { b[i - 1] };
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            } else if quoted
                && b[i..].starts_with(b"{{")
                && let Some(end) = close_of(line, i, "}}")
                && HELM_WORDS.iter().any(|w| line[i..end].contains(w))
            {
                return Some((i, end, "Go template"));
            }
            i += 1;
            continue;
        }
        if c == b'#' && (i == 0 || is_blank(prev)) {
            return None;
        }
        if (c == b'"' || c == b'\'') && matches!(prev, b' ' | b'\t' | b'[' | b'{' | b',') {
            quote = Some(c);
        } else if b[i..].starts_with(b"{%") || b[i..].starts_with(b"{#") {
            let close = if c == b'{' && b.get(i + 1) == Some(&b'%') {
                "%}"
            } else {
                "#}"
            };
            if let Some(end) = close_of(line, i, close) {
                return Some((i, end, "Jinja template"));
            }
        } else if b[i..].starts_with(b"{{") {
            let end = close_of(line, i, "}}");
            let action = &line[i..end.unwrap_or(line.len())];
            if whole_line || (end.is_some() && looks_like_go_template(action)) {
                return Some((i, end.unwrap_or(line.len()), "Go template"));
            }
            // Any other closed `{{ name }}` starting a value outside quotes: a Jinja or
            // mustache variable a program fills in (YAML would read a mapping inside a
            // mapping). Inside a plain scalar (`step-{{item}}`) it is text.
            if let Some(end) = end
                && matches!(prev, b' ' | b'\t' | b'[' | b',')
            {
                return Some((i, end, "Jinja template"));
            }
        } else if b[i..].starts_with(b"%{") {
            // Terraform template directives: `%{ if enable_ipv6 ~}`, `%{ endfor }` (not curl's
            // `-w %{http_code}`).
            if let Some(end) = line[i + 2..].find('}').map(|k| i + 3 + k) {
                let word = line[i + 2..end - 1]
                    .trim_start_matches(['~', ' '])
                    .split(|c: char| !c.is_ascii_alphabetic())
                    .next()
                    .unwrap_or("");
                if matches!(word, "if" | "else" | "endif" | "for" | "endfor") {
                    return Some((i, end, "Terraform template"));
                }
            }
        } else if b[i..].starts_with(b"${")
            && let Some(end) = line[i + 2..].find('}').map(|k| i + 3 + k)
            && is_terraform_expression(&line[i + 2..end - 1])
        {
            return Some((i, end, "Terraform template"));
        } else if c == b'%' && matches!(prev, b' ' | b'\t') && is_printf_value(line, i) {
            return Some((i, i + 2, "printf template"));
        } else if quoted
            && c == b'{'
            && matches!(prev, b' ' | b'\t')
            && let Some(end) = format_field(line, i)
        {
            return Some((i, end, "format template"));
        }
        i += 1;
    }
    None
}

/// The end of a Python/shell format field standing in a value (`image: {username}/serve:1`):
/// `{name}` glued to more text, which no YAML flow mapping is. Only for a file that fails to
/// parse.
fn format_field(line: &str, at: usize) -> Option<usize> {
    let rest = &line[at + 1..];
    let close = rest.find('}')?;
    let name = &rest[..close];
    let after = rest[close + 1..].chars().next()?;
    let is_name = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let glued = !matches!(after, ' ' | '\t' | ',' | ']' | '}' | '#');
    (is_name && glued && line[..at].trim_end().ends_with(':')).then_some(at + close + 2)
}

/// Whether `${…}` holds a Terraform expression (a function call, a conditional, a reference
/// into a variable or resource), not an envsubst name (`${GPU_COUNT}`), which stays a value.
fn is_terraform_expression(inner: &str) -> bool {
    let inner = inner.trim().trim_start_matches('~').trim();
    let word_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    let rest = inner[word_end..].trim_start();
    word_end > 0
        && (rest.starts_with('(')
            || rest.starts_with('?')
            || (rest.starts_with('.')
                && matches!(
                    &inner[..word_end],
                    "var" | "local" | "each" | "module" | "data"
                )))
}

/// Whether the unquoted value starting at `at` is only a printf verb (`name: %s`, `- %d`): a
/// format string filled in by code before anything reads it as YAML.
fn is_printf_value(line: &str, at: usize) -> bool {
    let before = line[..at].trim_end();
    if !(before.ends_with(':') || before.ends_with('-')) {
        return false;
    }
    let value = line[at..].split(" #").next().unwrap_or("").trim_end();
    let verb = value.strip_prefix('%').unwrap_or("");
    matches!(verb, "s" | "d" | "v" | "q" | "f" | "t" | "x" | "+v" | "#v")
}

/// The end (exclusive) of `close` after the opener at `at`.
fn close_of(line: &str, at: usize, close: &str) -> Option<usize> {
    line[at + 2..].find(close).map(|k| at + 2 + k + close.len())
}

/// Whether `{{ … }}` reads as a Go template action: a field or variable (`.x`, `$x`), a
/// comment, or a keyword or function Helm templates use.
fn looks_like_go_template(action: &str) -> bool {
    let body = action
        .trim_start_matches('{')
        .trim_start_matches('-')
        .trim_start();
    if body.starts_with('.') || body.starts_with('$') || body.starts_with("/*") {
        return true;
    }
    let word: String = body
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    GO_TEMPLATE_WORDS.contains(&word.as_str()) || HELM_WORDS.iter().any(|w| body.contains(w))
}

/// Whether a line (without its indentation) ends with a block scalar header (`key: |`, `- >-`).
fn opens_block_scalar(body: &str) -> bool {
    let code = match body.find(" #") {
        Some(k) => &body[..k],
        None => body,
    };
    let code = code.trim_end();
    let (before, last) = match code.rsplit_once([' ', '\t']) {
        Some((b, l)) => (b.trim_end(), l),
        None => ("", code),
    };
    let header = last.starts_with(['|', '>'])
        && last.len() <= 3
        && last[1..]
            .bytes()
            .all(|b| b == b'-' || b == b'+' || b.is_ascii_digit());
    let owner = before.is_empty()
        || before.ends_with(':')
        || before == "-"
        || before.ends_with(" -")
        || before
            .rsplit([' ', '\t'])
            .next()
            .is_some_and(|t| t.starts_with(['!', '&']));
    header && owner
}
