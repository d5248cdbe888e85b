//! Positions and byte ranges in a file's text.

use super::Style;

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
pub(super) const END_BITS: u32 = 29;
const END_MASK: u32 = (1 << END_BITS) - 1;

/// A half-open byte range. Every node carries one, so it is two 32-bit offsets and nothing else
/// (8 bytes: a 50,000-object repository is millions of nodes); line and column are read off the
/// text when a report needs them. A scalar node's [`Style`] rides in the top bits of the end.
#[derive(Clone, Copy, Default)]
pub struct Span {
    pub(super) start: u32,
    pub(super) end: u32,
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
    pub(super) fn tagged(self, style: Style) -> Self {
        self.kinded(style as u32)
    }
    /// The same range marked as a node of `kind` (a scalar style, [`SEQ`] or [`MAP`]).
    pub(super) fn kinded(self, kind: u32) -> Self {
        Span {
            end: (self.end & END_MASK) | (kind << END_BITS),
            ..self
        }
    }
    pub(super) fn style(self) -> Style {
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
