//! Multi-document YAML into a small tree in which every node knows its span.
//!
//! Built on saphyr-parser events. Anchors are recorded and aliases expanded under a node budget
//! (alias bombs stop with a located error), nesting depth is bounded, duplicate keys are kept as
//! problems (first value wins), and merge keys (`<<`) are applied the way go-yaml does.

use compact_str::CompactString;
use foldhash::{HashMap, HashMapExt};
use saphyr_parser::{Event, Parser, ScalarStyle};

/// A position in a file: byte offset plus 1-based line and 1-based column (in characters).
/// Nodes keep only byte offsets; a position is worked out from the text when a report needs it
/// ([`Pos::of`], or `SourceFile::pos`, which keeps a line table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Files over 4 GiB are never parsed (see `source::MAX_FILE_BYTES`), so 32 bits suffice.
    pub byte: u32,
    pub line: u32,
    pub col: u32,
}

impl Pos {
    /// The line and column of `byte` in `text`, counted from the start (clamped to the text and
    /// to a character boundary).
    pub fn of(text: &str, byte: usize) -> Pos {
        let mut byte = byte.min(text.len());
        while !text.is_char_boundary(byte) {
            byte -= 1;
        }
        let before = &text.as_bytes()[..byte];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        Pos {
            byte: byte as u32,
            line: before.iter().filter(|&&b| b == b'\n').count() as u32 + 1,
            col: text[line_start..byte].chars().count() as u32 + 1,
        }
    }

    /// The byte offset of 1-based `line` and `col` (in characters) in `text`, clamped to it.
    pub fn offset_of(text: &str, line: u32, col: u32) -> usize {
        let mut at = 0;
        for _ in 1..line.max(1) {
            match text[at..].find('\n') {
                Some(i) => at += i + 1,
                None => return text.len(),
            }
        }
        let rest = &text[at..];
        let line_len = rest.find('\n').unwrap_or(rest.len());
        at + rest[..line_len]
            .char_indices()
            .nth(col.saturating_sub(1) as usize)
            .map_or(line_len, |(i, _)| i)
    }
}

/// Bits of `Span::end` that hold the offset; the three above hold a scalar node's style. Files
/// over 32 MiB are never parsed, so 29 bits are plenty.
const END_BITS: u32 = 29;
const END_MASK: u32 = (1 << END_BITS) - 1;

/// A half-open byte range. Every node carries one, so it is two 32-bit offsets and nothing else
/// (8 bytes: a 50,000-object repository is millions of nodes); line and column are read off the
/// text when a report needs them. A scalar node's [`Style`] rides in the top bits of the end.
#[derive(Clone, Copy, Default)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The range `start..end` (offsets past 512 MiB are clamped; no parsed file is that big).
    pub fn new(start: usize, end: usize) -> Self {
        let clamp = |b: usize| b.min(END_MASK as usize) as u32;
        let start = clamp(start);
        Span {
            start,
            end: clamp(end).max(start),
        }
    }
    /// An empty span at `byte`.
    pub fn at(byte: usize) -> Self {
        Span::new(byte, byte)
    }
    pub fn start(&self) -> usize {
        self.start as usize
    }
    /// Byte offset just past the end.
    pub fn end(&self) -> usize {
        (self.end & END_MASK) as usize
    }
    pub fn len(&self) -> usize {
        self.end() - self.start()
    }
    /// The byte range, for slicing the file's text.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start()..self.end()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Line and column of the start, read off `text`, the file the span is in.
    pub fn start_pos(&self, text: &str) -> Pos {
        Pos::of(text, self.start())
    }
    /// Line and column (in characters) of the end, read off `text`.
    pub fn end_pos(&self, text: &str) -> Pos {
        Pos::of(text, self.end())
    }
    /// The same range with another end (kept at or after the start).
    pub fn with_end(self, end: usize) -> Self {
        Span {
            end: (self.end & !END_MASK) | (end.min(END_MASK as usize) as u32).max(self.start),
            ..self
        }
    }
    fn tagged(self, style: Style) -> Self {
        Span {
            end: (self.end & END_MASK) | ((style as u32) << END_BITS),
            ..self
        }
    }
    fn style(self) -> Style {
        match self.end >> END_BITS {
            1 => Style::SingleQuoted,
            2 => Style::DoubleQuoted,
            3 => Style::Literal,
            4 => Style::Folded,
            _ => Style::Plain,
        }
    }
    fn key(&self) -> (u32, u32) {
        (self.start, self.end & END_MASK)
    }
}

// Spans compare as ranges: the style bits are the node's, not the place's.
impl PartialEq for Span {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Span {}
impl PartialOrd for Span {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Span {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}
impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.key().hash(h);
    }
}
impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start(), self.end())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain = 0,
    SingleQuoted = 1,
    DoubleQuoted = 2,
    Literal = 3,
    Folded = 4,
}

/// Children are exact-size boxed slices and short scalars live inline (no heap allocation up to
/// 24 bytes): a 50,000-object repository is millions of nodes, so their size is the memory bill.
/// A value is 24 bytes and a node 32; a scalar's style is kept in its span.
#[derive(Clone, Debug)]
pub enum Value {
    Scalar { text: CompactString },
    Seq(Box<[Node]>),
    Map(Box<[(Node, Node)]>),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

/// What a YAML 1.1 reader (Kubernetes, go-yaml v2) would make of a plain scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yaml11 {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

impl Node {
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }
    /// The scalar's text, whatever its type (`true`, `1`, `"a"` all give their text).
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
    pub fn style(&self) -> Option<Style> {
        match &self.value {
            Value::Scalar { .. } => Some(self.span.style()),
            _ => None,
        }
    }
    /// A scalar node.
    pub fn scalar(span: Span, text: &str, style: Style) -> Node {
        Node {
            span: span.tagged(style),
            value: Value::Scalar { text: text.into() },
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self.yaml11(), Some(Yaml11::Null))
    }
    /// The map entry for `key`: (key node, value node).
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, v)| (k, v))
    }
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }
    /// Follows a path of map keys.
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }
    pub fn str_at(&self, path: &[&str]) -> Option<&str> {
        self.at(path).and_then(|n| n.as_str()).filter(|_| true)
    }
    /// Iterates a map's entries as (key text, key node, value node); non-string keys are skipped.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Node, &Node)> {
        self.as_map()
            .unwrap_or(&[])
            .iter()
            .filter_map(|(k, v)| k.as_str().map(|s| (s, k, v)))
    }
    pub fn items(&self) -> impl Iterator<Item = &Node> {
        self.as_seq().unwrap_or(&[]).iter()
    }
    /// Type of a scalar as Kubernetes' YAML 1.1 reader resolves it.
    pub fn yaml11(&self) -> Option<Yaml11> {
        match &self.value {
            Value::Scalar { text } => Some(if self.span.style() == Style::Plain {
                resolve_plain(text)
            } else {
                Yaml11::Str
            }),
            _ => None,
        }
    }
}

fn resolve_plain(t: &str) -> Yaml11 {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml11::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "n" | "N" | "no" | "No" | "NO" | "true" | "True"
        | "TRUE" | "false" | "False" | "FALSE" | "on" | "On" | "ON" | "off" | "Off" | "OFF" => {
            return Yaml11::Bool;
        }
        _ => {}
    }
    let body = t.strip_prefix(['-', '+']).unwrap_or(t).replace('_', "");
    if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        return Yaml11::Int;
    }
    if let Some(hex) = body.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Yaml11::Int;
    }
    if matches!(
        body.as_str(),
        ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN"
    ) {
        return Yaml11::Float;
    }
    if is_go_yaml_float(&body) {
        return Yaml11::Float;
    }
    Yaml11::Str
}

/// go-yaml v2's float form (sign already stripped): `.5`, `1.`, `1.5`, and exponents with or
/// without a dot (`1e3` is the number 1000 to Kubernetes, though YAML 1.1 proper says string).
fn is_go_yaml_float(body: &str) -> bool {
    let b = body.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i, i > start)
    };
    let (mut i, int_digits) = digits(0);
    let mut any = int_digits;
    if b.get(i) == Some(&b'.') {
        let (j, frac) = digits(i + 1);
        if !int_digits && !frac {
            return false;
        }
        any = true;
        i = j;
    }
    if !any {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let (k, exp) = digits(j);
        if !exp {
            return false;
        }
        i = k;
    }
    i == b.len()
}

/// One document of a stream.
#[derive(Debug)]
pub struct Document {
    pub root: Node,
}

/// Something wrong with the text of a file, at a place in it.
#[derive(Clone, Debug)]
pub struct Problem {
    pub span: Span,
    pub message: String,
    /// For a duplicate key: where the first one stands.
    pub first: Option<Span>,
}

/// Limits that keep hostile input from costing unbounded time or memory.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub max_depth: usize,
    /// Nodes that alias expansion may create in one file.
    pub max_alias_nodes: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_depth: 200,
            max_alias_nodes: 100_000,
        }
    }
}

/// Converts saphyr's character-based markers to byte offsets.
struct Offsets<'a> {
    text: &'a str,
    ascii: bool,
    /// Byte offset of each char, built only for non-ASCII text.
    table: Vec<usize>,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str) -> Self {
        let ascii = text.is_ascii();
        let table = if ascii {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i).collect()
        };
        Offsets { text, ascii, table }
    }
    fn byte(&self, m: &saphyr_parser::Marker) -> usize {
        if self.ascii {
            m.index().min(self.text.len())
        } else {
            self.table
                .get(m.index())
                .copied()
                .unwrap_or(self.text.len())
        }
    }
    fn span(&self, s: &saphyr_parser::Span) -> Span {
        Span::new(self.byte(&s.start), self.byte(&s.end))
    }
}

/// An open collection. Its children sit on the parser's shared child stack from `base` on (a
/// map's as key, value, key, value…), so each collection is allocated once, at its exact size.
struct Frame {
    start: Span,
    anchor: usize,
    base: usize,
    map: bool,
}

/// The result of parsing one file.
#[derive(Debug, Default)]
pub struct Parsed {
    pub docs: Vec<Document>,
    pub problems: Vec<Problem>,
}

fn count_nodes(n: &Node) -> usize {
    match &n.value {
        Value::Scalar { .. } => 1,
        Value::Seq(s) => 1 + s.iter().map(count_nodes).sum::<usize>(),
        Value::Map(m) => {
            1 + m
                .iter()
                .map(|(k, v)| count_nodes(k) + count_nodes(v))
                .sum::<usize>()
        }
    }
}

/// Parses a multi-document YAML stream. Stops at the first syntax error (saphyr would repeat it
/// forever); documents completed before it are kept.
pub fn parse(text: &str, budget: Budget) -> Parsed {
    let offsets = Offsets::new(text);
    let mut out = Parsed::default();
    let mut stack: Vec<Frame> = Vec::new();
    let mut children: Vec<Node> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut alias_nodes = 0usize;
    let mut root: Option<Node> = None;

    for ev in Parser::new_from_str(text) {
        let (event, span) = match ev {
            Ok(e) => e,
            Err(e) => {
                out.problems.push(Problem {
                    span: Span::at(offsets.byte(e.marker())),
                    message: format!("YAML syntax error: {}", e.info()),
                    first: None,
                });
                return out;
            }
        };
        let span = offsets.span(&span);
        let finished: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => None,
            Event::DocumentStart(_) => {
                anchors.clear();
                root = None;
                None
            }
            Event::DocumentEnd => {
                if let Some(r) = root.take() {
                    out.docs.push(Document { root: r });
                }
                None
            }
            Event::Scalar(value, style, anchor, _tag) => {
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let span = match style {
                    Style::SingleQuoted | Style::DoubleQuoted => clip_quoted(text, span, style),
                    _ => span,
                };
                // Copied, not adopted: the scanner's buffers carry slack capacity.
                Some((Node::scalar(span, &value, style), anchor))
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(target) => {
                    alias_nodes += count_nodes(target);
                    if alias_nodes > budget.max_alias_nodes {
                        out.problems.push(Problem {
                            span,
                            message: format!(
                                "alias expansion exceeds {} nodes (an alias bomb?); the rest of the file is not read",
                                budget.max_alias_nodes
                            ),
                            first: None,
                        });
                        return out;
                    }
                    let mut n = target.clone();
                    // The alias's place; a scalar keeps its anchor's style.
                    n.span = match n.style() {
                        Some(style) => span.tagged(style),
                        None => span,
                    };
                    Some((n, 0))
                }
                None => {
                    out.problems.push(Problem {
                        span,
                        message: "alias to an unknown anchor".into(),
                        first: None,
                    });
                    return out;
                }
            },
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= budget.max_depth {
                    out.problems.push(Problem {
                        span,
                        message: format!(
                            "nesting deeper than {} levels; the rest of the file is not read",
                            budget.max_depth
                        ),
                        first: None,
                    });
                    return out;
                }
                stack.push(Frame {
                    start: span,
                    anchor,
                    base: children.len(),
                    map: matches!(event, Event::MappingStart(..)),
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(f) => {
                    let end = children[f.base..]
                        .last()
                        .map_or(span.end(), |n| n.span.end())
                        .max(f.start.end());
                    let value = if f.map {
                        let mut entries = Vec::with_capacity((children.len() - f.base) / 2);
                        let mut it = children.drain(f.base..);
                        while let (Some(k), Some(v)) = (it.next(), it.next()) {
                            entries.push((k, v));
                        }
                        drop(it);
                        Value::Map(apply_merge_keys(entries).into_boxed_slice())
                    } else {
                        Value::Seq(children.drain(f.base..).collect())
                    };
                    Some((
                        Node {
                            span: Span::new(f.start.start(), end),
                            value,
                        },
                        f.anchor,
                    ))
                }
                None => None,
            },
        };
        if let Some((node, anchor)) = finished {
            if anchor != 0 {
                anchors.insert(anchor, node.clone());
            }
            match stack.last() {
                None => root = Some(node),
                Some(f) if f.map && (children.len() - f.base) % 2 == 1 => {
                    // `node` is a value; its key is on top. A repeated key is dropped with it.
                    let key = &children[children.len() - 1];
                    let dup = key.as_str().filter(|k| *k != "<<").and_then(|k| {
                        children[f.base..children.len() - 1]
                            .iter()
                            .step_by(2)
                            .find(|ek| ek.as_str() == Some(k))
                            .map(|ek| ek.span)
                    });
                    match dup {
                        Some(first) => {
                            out.problems.push(Problem {
                                span: key.span,
                                message: format!(
                                    "duplicate key `{}`: Kubernetes rejects the object (the first value is the one linted)",
                                    key.as_str().unwrap_or_default()
                                ),
                                first: Some(first),
                            });
                            children.pop();
                        }
                        None => children.push(node),
                    }
                }
                Some(_) => children.push(node),
            }
        }
    }
    out
}

/// Where a quoted scalar starting at `start` really ends: saphyr's span of a block-context quoted
/// scalar runs on over a comment that follows it on the line.
pub(crate) fn quoted_end(text: &str, start: usize, style: Style) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = if style == Style::DoubleQuoted {
        b'"'
    } else {
        b'\''
    };
    if bytes.get(start) != Some(&quote) {
        return None;
    }
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A quoted scalar's span cut at its closing quote (see [`quoted_end`]).
fn clip_quoted(text: &str, span: Span, style: Style) -> Span {
    match quoted_end(text, span.start(), style) {
        Some(end) if end < span.end() => span.with_end(end),
        _ => span,
    }
}

/// `<<: *base` / `<<: [*a, *b]`: keys of the merged maps that the map does not set itself.
fn apply_merge_keys(entries: Vec<(Node, Node)>) -> Vec<(Node, Node)> {
    if !entries.iter().any(|(k, _)| k.as_str() == Some("<<")) {
        return entries;
    }
    let mut own: Vec<(Node, Node)> = Vec::with_capacity(entries.len());
    let mut merged: Vec<(Node, Node)> = Vec::new();
    for (k, v) in entries {
        if k.as_str() == Some("<<") && k.style() == Some(Style::Plain) {
            let sources: Vec<Node> = match v.value {
                Value::Map(_) => vec![v],
                Value::Seq(items) => items.into_vec(),
                Value::Scalar { .. } => vec![],
            };
            for src in sources {
                if let Value::Map(m) = src.value {
                    for (mk, mv) in m.into_vec() {
                        let known = merged.iter().any(|(e, _)| e.as_str() == mk.as_str());
                        if !known {
                            merged.push((mk, mv));
                        }
                    }
                }
            }
        } else {
            own.push((k, v));
        }
    }
    for (mk, mv) in merged {
        if !own.iter().any(|(k, _)| k.as_str() == mk.as_str()) {
            own.push((mk, mv));
        }
    }
    own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_stay_small() {
        // Millions of nodes in a large repository: their size is the memory bill.
        assert_eq!(std::mem::size_of::<Span>(), 8);
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    #[test]
    fn styles_ride_in_the_span_and_do_not_change_its_range() {
        let src = "a: 'x'\nb: \"y\"\nc: |\n  z\nd: w\n";
        let p = parse(src, Budget::default());
        let root = &p.docs[0].root;
        let style = |k: &str| root.get(k).unwrap().style().unwrap();
        assert_eq!(style("a"), Style::SingleQuoted);
        assert_eq!(style("b"), Style::DoubleQuoted);
        assert_eq!(style("c"), Style::Literal);
        assert_eq!(style("d"), Style::Plain);
        let b = root.get("b").unwrap().span;
        assert_eq!(&src[b.range()], "\"y\"");
        assert_eq!(b, Span::new(b.start(), b.end()));
        assert_eq!(root.get("a").unwrap().yaml11(), Some(Yaml11::Str));
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let src = "é: 1\nb: 2\n";
        assert_eq!(
            Pos::of(src, 0),
            Pos {
                byte: 0,
                line: 1,
                col: 1
            }
        );
        assert_eq!(Pos::of(src, 4).col, 4);
        assert_eq!(
            Pos::of(src, 6),
            Pos {
                byte: 6,
                line: 2,
                col: 1
            }
        );
        // Inside a character: its start.
        assert_eq!(Pos::of(src, 1).byte, 0);
        assert_eq!(Pos::offset_of(src, 2, 2), 7);
        assert_eq!(Pos::offset_of(src, 9, 1), src.len());
    }

    #[test]
    fn spans_are_bytes_lines_and_columns() {
        let src = "a: 1\nb:\n  c: \"é\"\n  d: x\n";
        let p = parse(src, Budget::default());
        assert!(p.problems.is_empty());
        let root = &p.docs[0].root;
        let d = root.at(&["b", "d"]).unwrap();
        assert_eq!(d.as_str(), Some("x"));
        let at = d.span.start_pos(src);
        assert_eq!((at.line, at.col), (4, 6));
        assert_eq!(&src[d.span.range()], "x");
        let c = root.at(&["b", "c"]).unwrap();
        assert_eq!(&src[c.span.range()], "\"é\"");
    }

    #[test]
    fn multi_document_and_empty_documents() {
        let p = parse("a: 1\n---\n---\nb: 2\n", Budget::default());
        assert_eq!(p.docs.len(), 3);
        assert!(p.docs[1].root.is_null());
    }

    #[test]
    fn duplicate_key_is_a_problem_and_first_value_wins() {
        let src = "a: 1\nb: 2\na: 3\n";
        let p = parse(src, Budget::default());
        assert_eq!(p.problems.len(), 1);
        assert_eq!(p.problems[0].span.start_pos(src).line, 3);
        assert_eq!(p.problems[0].first.unwrap().start_pos(src).line, 1);
        assert_eq!(p.docs[0].root.get("a").unwrap().as_str(), Some("1"));
    }

    #[test]
    fn syntax_error_stops_with_location() {
        let p = parse("a: 1\n---\nb: [1, 2\nc: 3\n", Budget::default());
        assert_eq!(p.docs.len(), 1);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.starts_with("YAML syntax error"));
    }

    #[test]
    fn alias_bomb_is_stopped() {
        let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='k' {
            s.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let p = parse(&s, Budget::default());
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("alias"));
    }

    #[test]
    fn deep_nesting_is_stopped() {
        // Flow nesting trips the scanner's own recursion limit; block nesting ours.
        let s = "[".repeat(10_000);
        let p = parse(&s, Budget::default());
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].message.contains("recursion limit"));
        let block: String = (0..300)
            .map(|i| format!("{}- \n", "  ".repeat(i)))
            .collect();
        let p = parse(&block, Budget::default());
        assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
        assert!(p.problems[0].message.contains("nesting"));
    }

    #[test]
    fn merge_keys_apply_without_overriding() {
        let p = parse(
            "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n",
            Budget::default(),
        );
        let m = p.docs[0].root.get("m").unwrap();
        assert_eq!(m.get("x").unwrap().as_str(), Some("1"));
        assert_eq!(m.get("y").unwrap().as_str(), Some("3"));
    }

    #[test]
    fn quoted_scalar_span_stops_at_its_quote() {
        let src = "a: \"x\" # note\nb: 'it''s' # c\n";
        let p = parse(src, Budget::default());
        let a = p.docs[0].root.get("a").unwrap();
        assert_eq!(&src[a.span.range()], "\"x\"");
        assert_eq!((a.span.end_pos(src).line, a.span.end_pos(src).col), (1, 7));
        let b = p.docs[0].root.get("b").unwrap();
        assert_eq!(&src[b.span.range()], "'it''s'");
    }

    #[test]
    fn yaml11_types() {
        let p = parse(
            "a: yes\nb: \"yes\"\nc: 0755\nd: 1_000\ne: 1.5\nf: ${VAR}\ng: 1e3\nh: 1.2.3\ni: e3\nj: .5\n",
            Budget::default(),
        );
        let r = &p.docs[0].root;
        assert_eq!(r.get("a").unwrap().yaml11(), Some(Yaml11::Bool));
        assert_eq!(r.get("b").unwrap().yaml11(), Some(Yaml11::Str));
        assert_eq!(r.get("c").unwrap().yaml11(), Some(Yaml11::Int));
        assert_eq!(r.get("d").unwrap().yaml11(), Some(Yaml11::Int));
        assert_eq!(r.get("e").unwrap().yaml11(), Some(Yaml11::Float));
        assert_eq!(r.get("f").unwrap().yaml11(), Some(Yaml11::Str));
        assert_eq!(r.get("g").unwrap().yaml11(), Some(Yaml11::Float));
        assert_eq!(r.get("h").unwrap().yaml11(), Some(Yaml11::Str));
        assert_eq!(r.get("i").unwrap().yaml11(), Some(Yaml11::Str));
        assert_eq!(r.get("j").unwrap().yaml11(), Some(Yaml11::Float));
    }
}
