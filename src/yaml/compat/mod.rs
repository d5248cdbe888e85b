//! Reading the YAML that Kubernetes tooling reads, and telling templates from broken YAML.
//!
//! kubectl, ArgoCD and sigs.k8s.io/yaml read YAML with go-yaml, which is laxer than
//! saphyr-parser in a few places that real repositories rely on. A file that fails to parse is
//! rewritten in place and parsed again; the rewrite keeps the length of the text and every byte of
//! content at its offset, so the spans of the result point into the original text. What it
//! changes:
//!
//! - a flow collection closed at or left of the column of its key (`key: [` … `]` under `key`):
//!   the run of closing brackets (and commas) moves up to the end of the last content line, into
//!   the whitespace and comments between them;
//! - tabs indenting a line inside a flow collection become spaces;
//! - a tab right after a `:` value indicator becomes a space;
//! - a quoted scalar in block context whose continuation lines stand at or left of the column of
//!   its key (or `-`), which go-yaml reads (it checks no indentation inside quotes) and saphyr
//!   rejects: its line breaks become spaces, so it stays where it is on one line, and it is
//!   given the value go-yaml reads from the original (see [`go_quoted_value`]);
//! - content of a flow collection on a line at or left of the column of its key: the line joins
//!   the last content line (the line breaks and comments between become spaces);
//! - a comment right after a closing quote (`key: "value"# note`), which go-yaml reads as a
//!   comment and saphyr rejects for the missing space: the comment is blanked.
//!
//! Everything else is left to saphyr: what neither parser reads stays a located syntax error.
//! Telling a template (not YAML until rendered) from broken YAML is [`templates`]'s.
//!
//! Both the rewrite and template detection are linear in the text: the rewrite reads each line
//! once (moving closers has a budget of bytes it may re-read, past which the text is left as it
//! is), and template detection searches for each closer and word once per line, not once per
//! `{`. `yaml::scaling_tests` guards this.

use crate::yaml::{self, Budget, Parsed, Problem, Span};

/// Whether a problem is a syntax error (as opposed to a duplicate key or a budget overrun).
pub fn is_syntax_error(p: &Problem) -> bool {
    p.kind == yaml::ProblemKind::Syntax
}

/// Where the first syntax error of a parse stands, if there is one.
pub fn syntax_error(p: &Parsed) -> Option<Span> {
    p.problems
        .iter()
        .find(|p| is_syntax_error(p))
        .map(|p| p.span)
}

/// Parses like [`yaml::parse`]; when that stops at a syntax error and go-yaml would have read
/// further, parses the rewritten text instead (see the module documentation).
pub fn parse(text: &str, budget: Budget) -> Parsed {
    parse_shared(&std::sync::Arc::from(text), budget)
}

/// [`parse`] of a text the documents then share (see [`yaml::parse_shared`]).
pub fn parse_shared(shared: &std::sync::Arc<str>, budget: Budget) -> Parsed {
    let text: &str = shared;
    let first = yaml::parse_shared(shared, budget);
    let Some(failed_at) = syntax_error(&first) else {
        return first;
    };
    let Some(fixed) = rewritten(text) else {
        return first;
    };
    let second = yaml::parse_with_values(&std::sync::Arc::from(fixed.text), budget, &fixed.values);
    match syntax_error(&second) {
        // The rewrite did not get past the error: report the original one.
        Some(at) if at.start() <= failed_at.start() => first,
        _ => second,
    }
}

/// The text with what saphyr cannot read but go-yaml can rewritten, or `None` if nothing
/// needed it. Same length, content bytes at the same offsets, line breaks before content kept
/// (but those inside a quoted scalar put on one line).
pub fn rewrite(text: &str) -> Option<String> {
    rewritten(text).map(|r| r.text)
}

/// A rewritten text, and the values of the quoted scalars it put on one line, by start offset
/// (in order).
struct Rewritten {
    text: String,
    values: Vec<(usize, String)>,
}

fn rewritten(text: &str) -> Option<Rewritten> {
    let mut r = Rewriter {
        src: text.as_bytes(),
        out: text.as_bytes().to_vec(),
        changed: false,
        depth: 0,
        quote: None,
        block_scalar: None,
        limit: -1,
        last_content: 0,
        open_quote: None,
        values: Vec::new(),
        moved: 0,
    };
    let mut start = 0;
    loop {
        let end = r.src[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(r.src.len(), |i| start + i);
        let stop = if end > start && r.src[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        r.line(start, stop);
        if end >= r.src.len() {
            break;
        }
        start = end + 1;
    }
    if !r.changed || r.moved > move_budget(text.len()) {
        return None;
    }
    Some(Rewritten {
        text: String::from_utf8(r.out).ok()?,
        values: r.values,
    })
}

/// A scanner that knows just enough YAML lexing (quotes, comments, flow brackets, block scalars)
/// to find flow context; it reads `src` and writes the rewrite into `out`.
struct Rewriter<'a> {
    src: &'a [u8],
    out: Vec<u8>,
    changed: bool,
    /// Nesting of flow collections.
    depth: usize,
    /// The quote character of a quoted scalar that continues on the next line.
    quote: Option<u8>,
    /// Inside a block scalar: its lines are those indented deeper than this (or blank).
    block_scalar: Option<isize>,
    /// For the outermost open flow collection: a closer at or left of this column is one saphyr
    /// rejects (the column of the key or `-` that owns the collection).
    limit: isize,
    /// Offset just past the last byte of content seen (not whitespace, not comment).
    last_content: usize,
    /// The quoted scalar opened in block context that is being read.
    open_quote: Option<OpenQuote>,
    /// Values of the quoted scalars put on one line, by start offset.
    values: Vec<(usize, String)>,
    /// Bytes moving closers has read (see [`move_budget`]).
    moved: usize,
}

/// Bytes that moving closers may read in a text of `len` bytes. Each move reads from the last
/// content to the closer, so thousands of closer lines under one item would read the lines
/// between again and again; past this the text is not rewritten and saphyr's error stands.
fn move_budget(len: usize) -> usize {
    4 * len + 4096
}

/// A quoted scalar opened in block context.
struct OpenQuote {
    /// Offset of its opening quote.
    start: usize,
    /// Column of the key or `-` that owns it: saphyr wants continuation lines right of it.
    owner: isize,
    /// Whether a continuation line with content stands at or left of `owner`.
    under: bool,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Whether position `i` of `line` ends a token: a blank, or the end of the line.
fn blank_or_end(line: &[u8], i: usize) -> bool {
    line.get(i).is_none_or(|&b| is_blank(b))
}

fn is_document_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"...")) && blank_or_end(line, 3)
}

impl Rewriter<'_> {
    fn line(&mut self, start: usize, stop: usize) {
        let line = &self.src[start..stop];
        if self.quote.is_some() {
            let indent = line.iter().take_while(|&&b| b == b' ').count();
            let blank = line.iter().all(|&b| is_blank(b));
            if let Some(open) = &mut self.open_quote {
                if indent as isize <= open.owner && !blank {
                    open.under = true;
                }
            } else if self.depth > 0
                && !blank
                && indent as isize <= self.limit
                && !is_document_marker(line)
            {
                // A quoted scalar of a flow collection continued at or left of its key's column.
                self.join(start, indent);
            }
            return self.scan(start, stop, 0, -1, false, false);
        }
        if self.depth > 0 {
            let lead = line.iter().take_while(|&&b| is_blank(b)).count();
            for i in start..start + lead {
                // go-yaml allows tabs as whitespace anywhere in flow context.
                if self.out[i] == b'\t' {
                    self.out[i] = b' ';
                    self.changed = true;
                }
            }
            let mut from = lead;
            let closer = line
                .get(lead)
                .is_some_and(|b| matches!(b, b']' | b'}' | b','));
            if closer && lead as isize <= self.limit {
                from = self.move_closers(start, stop, lead);
            } else if lead < line.len()
                && line[lead] != b'#'
                && lead as isize <= self.limit
                && !is_document_marker(line)
            {
                self.join(start, lead);
            }
            return self.scan(start, stop, from, -1, false, false);
        }
        if is_document_marker(line) {
            self.block_scalar = None;
            return self.scan(start, stop, 3, -1, false, true);
        }
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        if let Some(parent) = self.block_scalar {
            if line.iter().all(|&b| is_blank(b)) || indent as isize > parent {
                return;
            }
            self.block_scalar = None;
        }
        if line.first() == Some(&b'%') {
            return;
        }
        self.scan(start, stop, indent, indent as isize, true, true)
    }

    /// Content of a flow collection on a line at or left of its key's column, which go-yaml reads
    /// (it checks no indentation in flow context) and saphyr rejects: the line joins the last
    /// content line, the line breaks and comments between them becoming spaces.
    fn join(&mut self, start: usize, lead: usize) {
        let (a, b) = (self.last_content, start + lead);
        self.moved += b.saturating_sub(a);
        if a >= b || self.moved > move_budget(self.src.len()) {
            return;
        }
        self.out[a..b].fill(b' ');
        self.changed = true;
    }

    fn content(&mut self, at: usize) {
        self.last_content = at + 1;
    }

    /// The tab right after a `:` at `colon` becomes a space (saphyr wants a space there).
    fn tab_after_colon(&mut self, line: &[u8], start: usize, colon: usize) {
        if line.get(colon + 1) == Some(&b'\t') {
            self.out[start + colon + 1] = b' ';
            self.changed = true;
        }
    }

    /// Reads `src[start..stop]` from column `from`. `node_col` is the column of the node that
    /// owns what follows on this line (key or `-`); `line_head` says nothing precedes `from` on
    /// the line; `at_token` says a new token (not the inside of a plain scalar) may start.
    fn scan(
        &mut self,
        start: usize,
        stop: usize,
        from: usize,
        mut node_col: isize,
        mut line_head: bool,
        mut at_token: bool,
    ) {
        let src = self.src;
        let line = &src[start..stop];
        let mut seen_value = false;
        let mut j = from;
        while j < line.len() {
            let c = line[j];
            let p = start + j;
            if let Some(q) = self.quote {
                if q == b'"' && c == b'\\' {
                    self.content(p);
                    j += 2;
                    continue;
                }
                if c == q {
                    if q == b'\'' && line.get(j + 1) == Some(&b'\'') {
                        j += 2;
                        continue;
                    }
                    self.quote = None;
                    at_token = false;
                    self.content(p);
                    if let Some(open) = self.open_quote.take()
                        && open.under
                    {
                        self.one_line(open.start, p + 1, &line[j + 1..]);
                    }
                    if line.get(j + 1) == Some(&b'#') {
                        // go-yaml reads a comment wherever a token may end: right after a quote.
                        self.out[p + 1..stop].fill(b' ');
                        self.changed = true;
                        return;
                    }
                    j += 1;
                    continue;
                }
                if !is_blank(c) {
                    self.content(p);
                }
                j += 1;
                continue;
            }
            if is_blank(c) {
                j += 1;
                continue;
            }
            let after_blank = j == 0 || is_blank(line[j - 1]);
            if c == b'#' && after_blank {
                return;
            }
            if self.depth > 0 {
                match c {
                    b'"' | b'\'' => {
                        let prev = if j == 0 { b' ' } else { line[j - 1] };
                        let json_value =
                            prev == b':' && j >= 2 && matches!(line[j - 2], b'"' | b'\'');
                        if matches!(prev, b' ' | b'\t' | b'[' | b'{' | b',') || json_value {
                            self.quote = Some(c);
                        }
                    }
                    b'[' | b'{' => self.depth += 1,
                    b']' | b'}' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            at_token = false;
                        }
                    }
                    b':' => self.tab_after_colon(line, start, j),
                    _ => {}
                }
                self.content(p);
                j += 1;
                continue;
            }
            if !at_token {
                // Inside a plain scalar, or after a quoted key: only `: ` matters.
                if c == b':' && blank_or_end(line, j + 1) {
                    self.tab_after_colon(line, start, j);
                    seen_value = true;
                    at_token = true;
                }
                self.content(p);
                j += 1;
                continue;
            }
            match c {
                b'-' | b'?' | b':' if blank_or_end(line, j + 1) => {
                    if c == b'-' {
                        node_col = j as isize;
                    } else if c == b':' {
                        self.tab_after_colon(line, start, j);
                        seen_value = true;
                    }
                }
                b'&' | b'!' | b'*' => {
                    // Anchor, tag or alias: a token of its own; after an alias nothing starts.
                    while j + 1 < line.len() && !is_blank(line[j + 1]) {
                        j += 1;
                    }
                    at_token = c != b'*';
                }
                b'"' | b'\'' => {
                    if !seen_value {
                        node_col = j as isize;
                    }
                    self.quote = Some(c);
                    self.open_quote = Some(OpenQuote {
                        start: p,
                        owner: node_col,
                        under: false,
                    });
                    at_token = false;
                }
                b'[' | b'{' => {
                    self.depth = 1;
                    self.limit = if line_head { j as isize - 1 } else { node_col };
                    at_token = false;
                }
                b'|' | b'>' => {
                    self.block_scalar = Some(node_col);
                    return;
                }
                _ => {
                    if !seen_value {
                        node_col = j as isize;
                    }
                    at_token = false;
                }
            }
            line_head = false;
            self.content(p);
            j += 1;
        }
    }

    /// Puts the quoted scalar `start..end` on one line (its line breaks become spaces) and keeps
    /// the value go-yaml reads from it, when what follows it on its line is nothing or a comment
    /// (a multi-line key is an error in go-yaml too) and go-yaml reads it at all.
    fn one_line(&mut self, start: usize, end: usize, rest: &[u8]) {
        let after = rest.iter().find(|&&b| !is_blank(b));
        if after.is_some_and(|&b| b != b'#') {
            return;
        }
        let Some(value) = go_quoted_value(&self.src[start..end]) else {
            return;
        };
        for b in &mut self.out[start..end] {
            if matches!(*b, b'\n' | b'\r') {
                *b = b' ';
            }
        }
        self.values.push((start, value));
        self.changed = true;
    }

    /// Moves the run of closing brackets and commas that opens the line at `first` up to just
    /// after the last content, and returns where reading the line resumes.
    ///
    /// The bytes between (whitespace, comments, line breaks) are blanked; the run takes the place
    /// of blank bytes before the last line break, so no line break moves. When there are too few
    /// of those, the last line break moves right instead, which only shifts columns on the
    /// closer's line: allowed when nothing but blanks or a comment follows the run.
    fn move_closers(&mut self, start: usize, stop: usize, first: usize) -> usize {
        let line = &self.src[start..stop];
        let mut depth = self.depth;
        let mut end = first;
        let mut i = first;
        while i < line.len() {
            match line[i] {
                b']' | b'}' => {
                    depth = depth.saturating_sub(1);
                    i += 1;
                    end = i;
                    if depth == 0 {
                        break;
                    }
                }
                b',' => {
                    i += 1;
                    end = i;
                }
                b' ' | b'\t' => i += 1,
                _ => break,
            }
        }
        let rest = &line[end..];
        let rest_has_content = match rest.iter().position(|&b| !is_blank(b)) {
            None => false,
            Some(k) => !(rest[k] == b'#' && k > 0),
        };
        let a = self.last_content;
        let w_end = start + first;
        self.moved += w_end.saturating_sub(a);
        if self.moved > move_budget(self.src.len()) {
            return first;
        }
        let Some(nl) = self
            .out
            .get(a..w_end)
            .unwrap_or_default()
            .iter()
            .rposition(|&b| b == b'\n')
            .map(|k| a + k)
        else {
            return first;
        };
        let nl_start = if nl > a && self.out[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        let is_break = |b: u8| b == b'\n' || b == b'\r';
        let free = (a..nl_start).filter(|&k| !is_break(self.out[k])).count();
        let run_len = end - first;
        let taken = run_len.min(free);
        if taken < run_len && rest_has_content {
            return first;
        }
        let mut seg = Vec::with_capacity(start + end - a);
        seg.extend_from_slice(&self.out[start + first..start + end]);
        let mut skipped = 0;
        for k in a..nl_start {
            let b = self.out[k];
            if is_break(b) {
                seg.push(b);
            } else if skipped < taken {
                skipped += 1;
            } else {
                seg.push(b' ');
            }
        }
        seg.extend_from_slice(&self.out[nl_start..w_end]);
        seg.resize(start + end - a, b' ');
        self.out[a..start + end].copy_from_slice(&seg);
        self.changed = true;
        self.last_content = a + run_len;
        self.depth = depth;
        end
    }
}

/// The value go-yaml reads from the quoted scalar `s` (both quotes included), or `None` where
/// go-yaml stops with an error (an unknown escape, a document marker opening a line) or `s` holds
/// a line break other than CR and LF (which go-yaml folds and saphyr does not). Follows go-yaml's
/// `yaml_parser_scan_flow_scalar`: a line break between words folds to a space, `n` more make `n`
/// newlines, blanks around line breaks are dropped, `\` before a line break joins the lines.
fn go_quoted_value(s: &[u8]) -> Option<String> {
    let quote = *s.first()?;
    let single = quote == b'\'';
    let text = std::str::from_utf8(s).ok()?;
    if text.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return None;
    }
    let is_break = |b: u8| b == b'\n' || b == b'\r';
    let break_len = |i: usize| {
        if s[i] == b'\r' && s.get(i + 1) == Some(&b'\n') {
            2
        } else {
            1
        }
    };
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut whitespaces: Vec<u8> = Vec::new();
    let mut leading_break = false;
    let mut trailing_breaks = 0;
    let mut i = 1;
    loop {
        let line_start = i > 0 && is_break(s[i - 1]);
        if line_start
            && (s[i..].starts_with(b"---") || s[i..].starts_with(b"..."))
            && s.get(i + 3).is_none_or(|&b| is_blank(b) || is_break(b))
        {
            return None;
        }
        if i >= s.len() {
            return None;
        }
        let mut leading_blanks = false;
        while let Some(&c) = s.get(i)
            && !is_blank(c)
            && !is_break(c)
        {
            if single && c == b'\'' && s.get(i + 1) == Some(&b'\'') {
                out.push(b'\'');
                i += 2;
            } else if c == quote {
                break;
            } else if !single && c == b'\\' && s.get(i + 1).is_some_and(|&b| is_break(b)) {
                i += 1 + break_len(i + 1);
                leading_blanks = true;
                break;
            } else if !single && c == b'\\' {
                let e = *s.get(i + 1)?;
                let hex = match e {
                    b'x' => 2,
                    b'u' => 4,
                    b'U' => 8,
                    _ => 0,
                };
                let ch = if hex > 0 {
                    let digits = std::str::from_utf8(s.get(i + 2..i + 2 + hex)?).ok()?;
                    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return None;
                    }
                    char::from_u32(u32::from_str_radix(digits, 16).ok()?)?
                } else {
                    match e {
                        b'0' => '\0',
                        b'a' => '\u{7}',
                        b'b' => '\u{8}',
                        b't' | b'\t' => '\t',
                        b'n' => '\n',
                        b'v' => '\u{b}',
                        b'f' => '\u{c}',
                        b'r' => '\r',
                        b'e' => '\u{1b}',
                        b' ' => ' ',
                        b'"' => '"',
                        b'\'' => '\'',
                        b'\\' => '\\',
                        b'N' => '\u{85}',
                        b'_' => '\u{a0}',
                        b'L' => '\u{2028}',
                        b'P' => '\u{2029}',
                        _ => return None,
                    }
                };
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                i += 2 + hex;
            } else {
                out.push(c);
                i += 1;
            }
        }
        if s.get(i) == Some(&quote) {
            break;
        }
        while let Some(&c) = s.get(i)
            && (is_blank(c) || is_break(c))
        {
            if is_blank(c) {
                if !leading_blanks {
                    whitespaces.push(c);
                }
                i += 1;
            } else {
                if !leading_blanks {
                    whitespaces.clear();
                    leading_break = true;
                    leading_blanks = true;
                } else {
                    trailing_breaks += 1;
                }
                i += break_len(i);
            }
        }
        if leading_blanks {
            if leading_break && trailing_breaks == 0 {
                out.push(b' ');
            } else {
                out.extend(std::iter::repeat_n(b'\n', trailing_breaks));
            }
            leading_break = false;
            trailing_breaks = 0;
        } else {
            out.append(&mut whitespaces);
        }
    }
    if i + 1 != s.len() {
        return None;
    }
    String::from_utf8(out).ok()
}

mod templates;
pub use templates::{
    TemplateHint, placeholder_markers, step_functions_parameters, structural_template_markers,
    template_markers,
};

#[cfg(test)]
mod tests;
