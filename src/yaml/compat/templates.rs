//! Telling templates from YAML: Go/Helm, Jinja, Terraform template, printf and format markers.
//!
//! One pass over the lines, each line scanned once: linear in the text.

use super::is_blank;
use crate::yaml::Span;

mod values;
use values::{bracket_token, choice_list, format_field, is_printf_value, is_terraform_expression};

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

/// For a file that does not parse: its first fill-in placeholder, an envsubst `${NAME}`, a
/// Backstage or GitHub Actions expression `${{ values.name }}`, a `sed` target `%NAME%`, an
/// `@NAME@` or `@@NAME@@` (a scalar cannot start with `@` either), a script's `__NAME__` token, a
/// `<name>` to replace by hand (`<EDIT: …>`),
/// or a Sphinx substitution `|name|` (nor with
/// `|`, a block scalar's indicator), when
/// filling every placeholder with a plain word makes it parse (`{ value: ${ISVC_PATH}/v1 }` in a
/// flow mapping reads as a nested mapping, and a scalar cannot start with `%`, until the tool has
/// run). A file still broken once filled is broken YAML.
pub fn placeholder_markers(text: &str) -> Option<TemplateHint> {
    let b = text.as_bytes();
    let mut filled = b.to_vec();
    let mut first: Option<(usize, usize, &'static str)> = None;
    let mut i = 0;
    while i < b.len() {
        // A comment is not filled in: a placeholder there is not where the file breaks.
        if b[i] == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            i += b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .unwrap_or(b.len() - i);
            continue;
        }
        // `${NAME}`: a name of letters, digits and `_`; `%NAME%`, `%notebook-name%`: a letter first.
        let found = match b[i] {
            // `${{ values.name }}`: an expression Backstage's scaffolder or a GitHub Actions
            // workflow fills in, closed on its line.
            b'$' if b[i + 1..].starts_with(b"{{") => {
                // The first `}}` before the line ends; without one, nothing up to the line's
                // end is an expression either (so each byte is looked at once).
                let stop = (i + 3..b.len())
                    .find(|&j| b[j] == b'\n' || b[j..].starts_with(b"}}"))
                    .unwrap_or(b.len());
                if b.get(stop) != Some(&b'}') {
                    i = stop;
                    continue;
                }
                Some((stop + 2, "expression template"))
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let n = b[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                (n > 0 && b.get(i + 2 + n) == Some(&b'}'))
                    .then_some((i + n + 3, "envsubst template"))
            }
            // `__NAME__`, upper case: a token an install script replaces (`sed s/__ARGS__/…/`).
            b'_' if b.get(i + 1) == Some(&b'_')
                && b.get(i + 2).is_some_and(u8::is_ascii_uppercase)
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) =>
            {
                let n = b[i + 2..]
                    .iter()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
                    .count();
                let run = &b[i + 2..i + 2 + n];
                (n >= 3 && run.ends_with(b"__") && run[..n - 2].iter().any(|&c| c != b'_'))
                    .then_some((i + 2 + n, "__NAME__ template"))
            }
            // `%NAME%` for sed; `@NAME@` as configure, Maven or a script's `replace()` fills it
            // (or `@@NAME@@`, a Makefile's `sed`); `|name|`, a Sphinx substitution a
            // documentation build fills in.
            b'%' | b'@' | b'|' => {
                let d = b[i];
                let open = if d != b'|' && b.get(i + 1) == Some(&d) {
                    2
                } else {
                    1
                };
                let n = b[i + open..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
                    .count();
                let kind = match d {
                    b'%' => "sed template",
                    b'@' => "@NAME@ template",
                    _ => "|name| template",
                };
                let end = i + open + n;
                (b.get(i + open).is_some_and(u8::is_ascii_alphabetic)
                    && b.get(end..end + open)
                        .is_some_and(|c| c.iter().all(|&c| c == d)))
                .then_some((end + open, kind))
            }
            // `<your-bucket>`, `<EDIT: add the pod selector>`: a fill-in a reader replaces by
            // hand, closed on its line.
            b'<' if b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) => {
                let n = b[i + 1..]
                    .iter()
                    .take(120)
                    .take_while(|&&c| !matches!(c, b'<' | b'>' | b'\n'))
                    .count();
                (b.get(i + 1 + n) == Some(&b'>')).then_some((i + n + 2, "<name> placeholder"))
            }
            _ => None,
        };
        match found {
            Some((end, kind)) => {
                // The same length, so that spans still point into the file as written. One
                // alone on its line is filled with lines (a block, or nothing): a blank line,
                // which also stays inside a block scalar it stands in.
                filled[i..end].fill(b'x');
                let line_start = b[..i]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |p| p + 1);
                let alone = b[line_start..i].iter().all(|&c| c == b' ')
                    && b[end..]
                        .iter()
                        .take_while(|&&c| c != b'\n')
                        .all(|&c| c == b' ' || c == b'\r');
                if alone {
                    filled[i..end].fill(b' ');
                }
                first.get_or_insert((i, end, kind));
                i = end;
            }
            None => i += 1,
        }
    }
    let (start, end, kind) = first?;
    let filled = String::from_utf8(filled).ok()?;
    let parsed = super::parse(&filled, crate::yaml::Budget::default());
    super::syntax_error(&parsed)
        .is_none()
        .then(|| TemplateHint {
            kind,
            marker: text[start..end].to_string(),
            span: Span::new(start, end),
        })
}

/// For a file that parses: the markers of [`template_markers`] that change what it parses to
/// (unquoted actions, directive lines, printf verbs). A quoted expression is a string the
/// linter treats as a placeholder, so a file with only those is still linted.
pub fn structural_template_markers(text: &str) -> Option<TemplateHint> {
    markers(text, false)
}

/// A document of AWS Step Functions task parameters (the Job of an `eks:runJob` state, kept as
/// YAML and turned into the state machine's JSON): a key ending in `.$` takes its value from the
/// execution's input (`name.$: $.submission.name`, `States.Format(…)`) when the state runs. No
/// Kubernetes field, label or annotation key ends so.
pub fn step_functions_parameters(text: &str) -> Option<TemplateHint> {
    if !text.contains(".$") {
        return None;
    }
    let mut line_start = 0;
    for raw in text.split('\n') {
        let start = line_start;
        line_start += raw.len() + 1;
        let body = raw.trim_start();
        let body = body.strip_prefix("- ").map_or(body, str::trim_start);
        if body.starts_with('#') {
            continue;
        }
        let Some(i) = body.find(".$") else { continue };
        let (key, rest) = body.split_at(i);
        let rest = rest[2..].trim_start_matches(['"', '\'']);
        let Some(value) = rest.strip_prefix(':') else {
            continue;
        };
        let value = value.trim_start().trim_start_matches(['"', '\'']);
        let key = key.trim_start_matches(['"', '\'']);
        if key.is_empty()
            || key.contains(char::is_whitespace)
            || !(value.starts_with('$') || value.starts_with("States."))
        {
            continue;
        }
        let at = start + (raw.len() - body.len());
        let end = start + raw.trim_end().len();
        return Some(TemplateHint {
            kind: "AWS Step Functions parameters",
            marker: crate::text::shorten(body.trim_end(), 60).to_string(),
            span: Span::new(at, end.max(at)),
        });
    }
    None
}

fn markers(text: &str, quoted: bool) -> Option<TemplateHint> {
    // Every marker has a `{`, a `%`, a `[[` or a ` | `: most files are ruled out by fast scans.
    if !text.contains('{') && !text.contains('%') && !text.contains("[[") && !text.contains(" | ") {
        return None;
    }
    let mut block_scalar: Option<usize> = None;
    // The quote of a quoted scalar that goes on past its line (a chat template in a ConfigMap,
    // a manifest in an argument): its next lines are the string's text, not the file's.
    let mut quoted_scalar: Option<u8> = None;
    // In a file that parses, the column of the key (or item) whose plain scalar value goes on
    // over the more indented lines below it (a long alert description a build folded).
    let mut plain_scalar: Option<usize> = None;
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
        if let Some(q) = quoted_scalar {
            if let Some(end) = closing_quote(line.as_bytes(), 0, q) {
                quoted_scalar = open_quote(&line[end + 1..]);
            }
            continue;
        }
        if let Some(owner) = plain_scalar {
            if body.trim().is_empty() || indent > owner {
                continue;
            }
            plain_scalar = None;
        }
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        // A line that is only `${name}`, where keys go, is filled with whole lines (a block, or
        // nothing) before the YAML is read: Terraform's `templatefile()`, envsubst.
        let whole_line = quoted
            && body
                .trim_end()
                .strip_prefix("${")
                .and_then(|r| r.strip_suffix('}'))
                .is_some_and(|name| {
                    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
        let found = if whole_line {
            Some((indent, indent + body.trim_end().len(), "Terraform template"))
        } else {
            line_marker(line, quoted)
        };
        if let Some((at, end, kind)) = found {
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
        } else {
            quoted_scalar = open_quote(line);
            if !quoted && quoted_scalar.is_none() {
                plain_scalar = plain_value_owner(body).map(|col| indent + col);
            }
        }
    }
    None
}

/// The column (within `body`) of the key or sequence item whose value on this line is a plain
/// scalar, which may go on over more indented lines: `key: text`, `- key: text`, `- text`.
fn plain_value_owner(body: &str) -> Option<usize> {
    let (col, rest) = match body.strip_prefix("- ") {
        Some(r) => (2 + (r.len() - r.trim_start().len()), r.trim_start()),
        None => (0, body),
    };
    let value = match rest.split_once(": ") {
        Some((key, v)) if !key.contains(['"', '\'', '{', '[']) => v.trim_start(),
        // An item that is itself a plain scalar.
        _ if col > 0 && !rest.ends_with(':') => return plain(rest).then_some(col - 2),
        _ => return None,
    };
    plain(value).then_some(col)
}

/// Whether a value as written starts a plain scalar (no quote, flow collection, block header,
/// anchor, alias, tag or comment).
fn plain(value: &str) -> bool {
    !value.is_empty() && !value.starts_with(['"', '\'', '{', '[', '|', '>', '&', '*', '!', '#'])
}

/// The quote (`"` or `'`) of a scalar that `line` opens and does not close: one that starts a
/// value (after `: `, `- `, `[`, `{`, `,` or at the line's start), outside comments.
fn open_quote(line: &str) -> Option<u8> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'#' && (i == 0 || b[i - 1] == b' ') {
            return None;
        }
        if c == b'"' || c == b'\'' {
            let prev = b[..i].iter().rev().find(|&&p| p != b' ' && p != b'\t');
            let starts_value = match prev {
                None => true,
                Some(b'[' | b'{' | b',') => true,
                Some(b':' | b'-') => i > 0 && matches!(b[i - 1], b' ' | b'\t'),
                _ => false,
            };
            if starts_value {
                match closing_quote(b, i + 1, c) {
                    Some(end) => {
                        i = end + 1;
                        continue;
                    }
                    None => return Some(c),
                }
            }
        }
        i += 1;
    }
    None
}

/// Where the quoted scalar opened by `quote` closes on this line, searching from `from`: an
/// unescaped `"` (`\"` is escaped), or a `'` not doubled (`''` is one quote).
fn closing_quote(b: &[u8], from: usize, quote: u8) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            c if c == quote => {
                if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The next occurrence of a needle at or after a position that grows along a line, searched for
/// once per occurrence: searching afresh from every `{` made a line of them quadratic.
struct Next {
    needle: &'static str,
    /// The last search: where it started and what it found.
    last: Option<(usize, Option<usize>)>,
}

impl Next {
    fn new(needle: &'static str) -> Self {
        Next { needle, last: None }
    }

    /// The offset of the first occurrence at or after `pos`.
    fn from(&mut self, line: &str, pos: usize) -> Option<usize> {
        if let Some((from, found)) = self.last
            && from <= pos
            && found.is_none_or(|k| k >= pos)
        {
            return found;
        }
        let found = line
            .get(pos..)
            .and_then(|r| r.find(self.needle))
            .map(|k| pos + k);
        self.last = Some((pos, found));
        found
    }
}

/// What [`line_marker`] looks for along one line, each found once (see [`Next`]).
struct Finders {
    close_go: Next,
    close_jinja: Next,
    close_comment: Next,
    close_brace: Next,
    helm: Vec<Next>,
    /// The last run of `{` met: its start and end, and where the action body after it starts.
    run: Option<(usize, usize, usize)>,
}

impl Finders {
    fn new() -> Self {
        Finders {
            close_go: Next::new("}}"),
            close_jinja: Next::new("%}"),
            close_comment: Next::new("#}"),
            close_brace: Next::new("}"),
            helm: HELM_WORDS.iter().map(|w| Next::new(w)).collect(),
            run: None,
        }
    }

    /// Whether a Helm word stands in `line[from..end]`.
    fn helm_word(&mut self, line: &str, from: usize, end: usize) -> bool {
        self.helm.iter_mut().any(|n| {
            n.from(line, from)
                .is_some_and(|k| k + n.needle.len() <= end)
        })
    }

    /// Where the body of the `{{` action at `at` starts (after its braces, `-` and blanks); the
    /// same for every `{` of one run, so a run is read once.
    fn body_start(&mut self, line: &str, at: usize) -> usize {
        if let Some((start, end, body)) = self.run
            && start <= at
            && at < end
        {
            return body;
        }
        let b = line.as_bytes();
        let end = at + b[at..].iter().take_while(|&&c| c == b'{').count();
        let rest = &line[end..];
        let body = end + (rest.len() - rest.trim_start_matches('-').trim_start().len());
        self.run = Some((at, end, body));
        body
    }
}

/// The first template marker of a line: (start, end, kind), byte offsets in the line. Linear in
/// the line: every search for a closer or a word is done once per occurrence ([`Finders`]).
fn line_marker(line: &str, quoted: bool) -> Option<(usize, usize, &'static str)> {
    let b = line.as_bytes();
    let mut find = Finders::new();
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
                && let Some(end) = find.close_go.from(line, i + 2).map(|k| k + 2)
                && find.helm_word(line, i, end)
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
                &mut find.close_jinja
            } else {
                &mut find.close_comment
            };
            if let Some(end) = close.from(line, i + 2).map(|k| k + 2) {
                return Some((i, end, "Jinja template"));
            }
        } else if b[i..].starts_with(b"{{") {
            let end = find.close_go.from(line, i + 2).map(|k| k + 2);
            let go = |find: &mut Finders, end: usize| {
                let body = find.body_start(line, i);
                looks_like_go_template(&line[body.min(end)..end], || {
                    find.helm_word(line, body, end)
                })
            };
            // In a file that parses, an action inside a plain scalar's text (`description: A
            // total of {{ $value }} GPUs`, a Prometheus or Alertmanager template) is text: only
            // one that starts a value changes what the file reads as.
            let starts_value = quoted || {
                let before = line[..i].trim_end();
                before.is_empty() || before.ends_with([':', '-', '[', ',', '{'])
            };
            if whole_line || (starts_value && end.is_some_and(|end| go(&mut find, end))) {
                return Some((i, end.unwrap_or(line.len()), "Go template"));
            }
            // Any other closed `{{ name }}` starting a value outside quotes: a Jinja or
            // mustache variable a program fills in (YAML would read a mapping inside a
            // mapping). Inside a plain scalar (`step-{{item}}`) it is text.
            if let Some(end) = end
                && matches!(prev, b' ' | b'\t' | b'[' | b',')
                && starts_value
            {
                return Some((i, end, "Jinja template"));
            }
        } else if b[i..].starts_with(b"%{") {
            // Terraform template directives: `%{ if enable_ipv6 ~}`, `%{ endfor }` (not curl's
            // `-w %{http_code}`).
            if let Some(end) = find.close_brace.from(line, i + 2).map(|k| k + 1) {
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
            && let Some(end) = find.close_brace.from(line, i + 2).map(|k| k + 1)
            && is_terraform_expression(&line[i + 2..end - 1])
        {
            return Some((i, end, "Terraform template"));
        } else if quoted
            && b[i..].starts_with(b"${")
            && matches!(line[..i].trim_end().as_bytes().last(), Some(b'[' | b','))
            && let Some(end) = find.close_brace.from(line, i + 2).map(|k| k + 1)
            && end > i + 3
            && line[i + 2..end - 1]
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            // `values: [${CLUSTERS}]`: envsubst fills a flow list in before the YAML is read;
            // unfilled, its `{` cannot stand in a flow collection.
            return Some((i, end, "envsubst template"));
        } else if c == b'%' && matches!(prev, b' ' | b'\t') && is_printf_value(line, i) {
            return Some((i, i + 2, "printf template"));
        } else if c == b'['
            && matches!(prev, b' ' | b'\t')
            && let Some(end) = bracket_token(line, i)
        {
            return Some((i, end, "[[NAME]] template"));
        } else if c == b'['
            && matches!(prev, b' ' | b'\t')
            && let Some(end) = choice_list(line, i)
        {
            return Some((i, end, "field reference"));
        } else if c == b'{'
            && matches!(prev, b' ' | b'\t')
            && let Some(end) = format_field(line, i, find.close_brace.from(line, i + 1), quoted)
        {
            return Some((i, end, "format template"));
        }
        i += 1;
    }
    None
}

/// Whether the body of a `{{ … }}` action (after its braces and `-`) reads as a Go template
/// action: a field or variable (`.x`, `$x`), a comment, or a keyword or function Helm templates
/// use; `helm_word` says whether a Helm word stands in the body.
fn looks_like_go_template(body: &str, helm_word: impl FnOnce() -> bool) -> bool {
    if body.starts_with('.') || body.starts_with('$') || body.starts_with("/*") {
        return true;
    }
    // No keyword is longer than this: a long word is not read to its end.
    let word: String = body
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .take(16)
        .collect();
    GO_TEMPLATE_WORDS.contains(&word.as_str()) || helm_word()
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
