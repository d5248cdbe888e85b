//! Multi-document YAML into a small tree in which every node knows its span.
//!
//! Built on saphyr-parser events. Each document's nodes live in one array, 16 bytes a node;
//! scalars point into the file's text (shared with the documents) unless escapes or folding make
//! them read differently from what is written. [`Node`] is a handle into that array.
//!
//! Anchors are recorded and an alias shares its anchor's nodes, under a budget on the nodes a
//! full expansion would have (alias bombs stop with a located error); nesting depth is bounded,
//! duplicate keys with different values are kept as problems (the last value wins, as kubectl
//! reads it; the same key and value twice is not), and merge keys (`<<`) are applied the way go-yaml does.
//!
//! Reading a file is linear in its size: each event is handled in constant time (amortized),
//! duplicate keys of a large map are found through a hash of the key text and merge keys through
//! sets, and alias expansion is counted against the budget. `scaling_tests` reads each construct
//! at n and 4n and fails on a square.

use foldhash::{HashMap, HashMapExt};
use saphyr_parser::{Event, Parser, ScalarStyle};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain = 0,
    SingleQuoted = 1,
    DoubleQuoted = 2,
    Literal = 3,
    Folded = 4,
}

pub mod compat;
mod construct;
mod json;
mod node;
mod span;

use span::END_BITS;
pub use span::{Pos, Span};

pub use construct::{Shape, construct};
pub use json::to_json;
pub use node::{Document, Entries, Items, Map, Node, Seq, Value, Yaml11};
use node::{MAP, POOLED, Raw, SEQ, Tree, pair, prefix};

/// Something wrong with the text of a file, at a place in it.
#[derive(Clone, Debug)]
pub struct Problem {
    pub span: Span,
    pub message: String,
    /// For a duplicate key: where the first one stands.
    pub first: Option<Span>,
    pub kind: ProblemKind,
}

/// What kind of problem a file has: rules and the go-yaml fallback tell them apart by this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// The parser stopped: the rest of the file is not read.
    Syntax,
    /// A duplicate key, an alias or nesting budget, content that is not text.
    #[default]
    Content,
    /// A kustomization or chart that does not build (`source-build-failed`).
    Build,
    /// A kustomization that does not build only because a file it reads is missing (or it is an
    /// empty placeholder): usually an input a build step generates.
    MissingInput,
    /// A source an Argo CD Application syncs that cannot be synced: Argo CD certainly tries.
    Sync,
    /// A `.tf` file that is not valid HCL (`invalid-hcl`).
    Hcl,
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
/// map's as key, value, key, value…) until it closes and they move to the arena together.
struct Frame {
    start: Span,
    anchor: usize,
    base: usize,
    map: bool,
    /// A map's keys by the hash of their text, to the key's index in the child stack: built once
    /// the map has [`HASHED_KEYS`] keys, so a duplicate is found in constant time, not by
    /// comparing with every earlier key (a 100,000-key map took 49 s).
    keys: Option<HashMap<u64, usize>>,
}

/// Keys of one map above which duplicates are looked up in a hash map (below, comparing with
/// each earlier key is cheaper).
const HASHED_KEYS: usize = 16;

fn text_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one(s)
}

/// The result of parsing one file.
#[derive(Debug, Default)]
pub struct Parsed {
    pub docs: Vec<Document>,
    pub problems: Vec<Problem>,
}

/// Builds one document's arena. A collection's children are appended when it closes, so they
/// are contiguous; an alias is a new node over its anchor's children, not a copy of them. The
/// arena grows in scratch space a thread reuses from document to document and is copied out at
/// its exact size, so growing leaves no garbage behind.
struct Builder {
    text: Arc<str>,
    pool: String,
    nodes: Vec<Raw>,
}

thread_local! {
    static SCRATCH: std::cell::Cell<(Vec<Raw>, String)> = const { std::cell::Cell::new((Vec::new(), String::new())) };
}

/// Scratch space above this is not kept for the next document.
const KEEP_SCRATCH: usize = 1 << 16;

impl Builder {
    fn new(text: Arc<str>) -> Self {
        let (nodes, pool) = SCRATCH.with(|s| s.take());
        Builder { text, pool, nodes }
    }

    /// A scalar whose text is `value`: a span into the file when it reads as written there (the
    /// quotes aside), else a copy in the pool.
    fn scalar(&mut self, span: Span, value: &str, style: Style) -> Raw {
        let written = self.text.get(span.range()).and_then(|w| match style {
            Style::SingleQuoted | Style::DoubleQuoted => {
                w.get(1..w.len().saturating_sub(1)).map(|inner| (1, inner))
            }
            _ => Some((0, w)),
        });
        match written {
            Some((_, w)) if w == value => Raw {
                sp: span.tagged(style),
                x: prefix(value),
            },
            _ => self.pooled(span.tagged(style), value),
        }
    }

    /// A scalar at `sp` (style included) whose text is copied to the pool.
    fn pooled(&mut self, sp: Span, value: &str) -> Raw {
        let at = self.pool.len().min(u32::MAX as usize) as u32;
        self.pool.push_str(value);
        Raw {
            sp: Span {
                start: sp.start | POOLED,
                end: sp.end,
            },
            x: pair(at, value.len().min(u32::MAX as usize) as u32),
        }
    }

    fn text_of<'s>(&'s self, r: &'s Raw) -> Option<&'s str> {
        r.text(&self.text, &self.pool)
    }

    /// A collection over `children` (a map's as key, value…), which move to the arena.
    fn collection(&mut self, span: Span, map: bool, children: impl Iterator<Item = Raw>) -> Raw {
        let first = self.nodes.len();
        self.nodes.extend(children);
        let n = self.nodes.len() - first;
        Raw {
            sp: span.kinded(if map { MAP } else { SEQ }),
            x: pair(first as u32, if map { n / 2 } else { n } as u32),
        }
    }

    /// The children of a collection already in the arena.
    fn children(&self, r: Raw) -> &[Raw] {
        let n = match r.kind() {
            SEQ => r.hi() as usize,
            MAP => 2 * r.hi() as usize,
            _ => 0,
        };
        let start = r.lo() as usize;
        self.nodes.get(start..start + n).unwrap_or_default()
    }

    /// Nodes a full expansion of `r` would have.
    fn count(&self, r: Raw) -> usize {
        1 + self
            .children(r)
            .iter()
            .map(|&c| self.count(c))
            .sum::<usize>()
    }

    /// `<<: *base` / `<<: [*a, *b]`: keys of the merged maps that the map does not set itself.
    fn merge_keys(&self, entries: &[Raw]) -> Option<Vec<Raw>> {
        let is_merge = |k: Raw| self.text_of(&k) == Some("<<") && k.sp.style() == Style::Plain;
        if !entries.chunks_exact(2).any(|kv| is_merge(kv[0])) {
            return None;
        }
        let mut own: Vec<Raw> = Vec::with_capacity(entries.len());
        let mut merged: Vec<Raw> = Vec::new();
        // Key texts seen, so each key is looked up once rather than compared with every other.
        let mut merged_keys: foldhash::HashSet<Option<&str>> = foldhash::HashSet::default();
        for kv in entries.chunks_exact(2) {
            let (k, v) = (kv[0], kv[1]);
            if !is_merge(k) {
                own.extend([k, v]);
                continue;
            }
            let sources: &[Raw] = match v.kind() {
                MAP => std::slice::from_ref(&kv[1]),
                SEQ => self.children(v),
                _ => &[],
            };
            for &src in sources {
                if src.kind() != MAP {
                    continue;
                }
                for mkv in self.children(src).chunks_exact(2) {
                    if merged_keys.insert(self.text_of(&mkv[0])) {
                        merged.extend([mkv[0], mkv[1]]);
                    }
                }
            }
        }
        let own_keys: foldhash::HashSet<Option<&str>> = entries
            .chunks_exact(2)
            .filter(|kv| !is_merge(kv[0]))
            .map(|kv| self.text_of(&kv[0]))
            .collect();
        for mkv in merged.chunks_exact(2) {
            if !own_keys.contains(&self.text_of(&mkv[0])) {
                own.extend([mkv[0], mkv[1]]);
            }
        }
        Some(own)
    }

    /// Copies `n` (from any document) into this arena, scalars through `fill`.
    fn copy(&mut self, n: Node<'_>, fill: &mut dyn FnMut(&str) -> Option<String>) -> Raw {
        match n.value() {
            Value::Scalar { text } => {
                let style = n.span().style();
                match fill(text) {
                    Some(new) => self.pooled(n.span(), &new),
                    None => self.scalar(n.span(), text, style),
                }
            }
            Value::Seq(s) => {
                let items: Vec<Raw> = s.iter().map(|i| self.copy(i, fill)).collect();
                self.collection(n.span(), false, items.into_iter())
            }
            Value::Map(m) => {
                let mut entries = Vec::with_capacity(2 * m.len());
                for (k, v) in m.iter() {
                    entries.push(self.copy(k, fill));
                    entries.push(self.copy(v, fill));
                }
                self.collection(n.span(), true, entries.into_iter())
            }
        }
    }

    /// The document with root `root`; the builder starts afresh for the next one.
    fn finish(&mut self, root: Raw) -> Document {
        let doc = Document {
            tree: Tree {
                text: self.text.clone(),
                pool: self.pool.as_str().into(),
                nodes: self.nodes.as_slice().into(),
            },
            root,
        };
        self.pool.clear();
        self.nodes.clear();
        doc
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        let mut nodes = std::mem::take(&mut self.nodes);
        let mut pool = std::mem::take(&mut self.pool);
        nodes.clear();
        pool.clear();
        nodes.shrink_to(KEEP_SCRATCH);
        pool.shrink_to(KEEP_SCRATCH);
        SCRATCH.with(|s| s.set((nodes, pool)));
    }
}

/// Parses a multi-document YAML stream. Stops at the first syntax error (saphyr would repeat it
/// forever); documents completed before it are kept.
pub fn parse(text: &str, budget: Budget) -> Parsed {
    parse_shared(&Arc::from(text), budget)
}

/// [`parse`] of a text the documents then share (their scalars point into it).
pub fn parse_shared(shared: &Arc<str>, budget: Budget) -> Parsed {
    parse_with_values(shared, budget, &[])
}

/// [`parse_shared`], with the quoted scalars that start at the given offsets (sorted) read as the
/// given values: the go-yaml reading of scalars [`compat`] had to rewrite.
pub(crate) fn parse_with_values(
    shared: &Arc<str>,
    budget: Budget,
    values: &[(usize, String)],
) -> Parsed {
    let text: &str = shared;
    let offsets = Offsets::new(text);
    let mut out = Parsed::default();
    let mut b = Builder::new(shared.clone());
    let mut stack: Vec<Frame> = Vec::new();
    let mut children: Vec<Raw> = Vec::new();
    let mut anchors: HashMap<usize, Raw> = HashMap::new();
    let mut alias_nodes = 0usize;
    let mut root: Option<Raw> = None;

    for ev in Parser::new_from_str(text) {
        let (event, span) = match ev {
            Ok(e) => e,
            Err(e) => {
                out.problems.push(Problem {
                    span: Span::at(offsets.byte(e.marker())),
                    message: format!("YAML syntax error: {}", e.info()),
                    first: None,
                    kind: ProblemKind::Syntax,
                });
                return out;
            }
        };
        let span = offsets.span(&span);
        let finished: Option<(Raw, usize)> = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => None,
            Event::DocumentStart(_) => {
                anchors.clear();
                root = None;
                None
            }
            Event::DocumentEnd => {
                if let Some(r) = root.take() {
                    out.docs.push(b.finish(r));
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
                let (span, value) = match style {
                    Style::SingleQuoted | Style::DoubleQuoted => {
                        let span = clip_quoted(text, span, style);
                        let given = values
                            .binary_search_by_key(&span.start(), |(at, _)| *at)
                            .ok()
                            .map(|k| values[k].1.as_str());
                        (span, given.unwrap_or(&value))
                    }
                    _ => (span, &*value),
                };
                Some((b.scalar(span, value, style), anchor))
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(&target) => {
                    alias_nodes += b.count(target);
                    if alias_nodes > budget.max_alias_nodes {
                        out.problems.push(Problem {
                            span,
                            message: format!(
                                "alias expansion exceeds {} nodes (an alias bomb?); the rest of the file is not read",
                                budget.max_alias_nodes
                            ),
                            first: None,
                            kind: ProblemKind::Content,
                        });
                        return out;
                    }
                    // The alias's place; the anchor's value (and a scalar's style). A scalar's text
                    // is not where the alias is written: it goes to the pool.
                    let at = span.kinded(target.kind());
                    let raw = match b.text_of(&target).map(str::to_owned) {
                        Some(text) => b.pooled(at, &text),
                        None => Raw { sp: at, ..target },
                    };
                    Some((raw, 0))
                }
                None => {
                    out.problems.push(Problem {
                        span,
                        message: "alias to an unknown anchor".into(),
                        first: None,
                        kind: ProblemKind::Content,
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
                        kind: ProblemKind::Content,
                    });
                    return out;
                }
                stack.push(Frame {
                    start: span,
                    anchor,
                    base: children.len(),
                    map: matches!(event, Event::MappingStart(..)),
                    keys: None,
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(f) => {
                    let end = children[f.base..]
                        .last()
                        .map_or(span.end(), |n| n.span().end())
                        .max(f.start.end());
                    let span = Span::new(f.start.start(), end);
                    let raw = match f.map.then(|| b.merge_keys(&children[f.base..])) {
                        Some(Some(merged)) => b.collection(span, true, merged.into_iter()),
                        _ => b.collection(span, f.map, children.drain(f.base..)),
                    };
                    children.truncate(f.base);
                    Some((raw, f.anchor))
                }
                None => None,
            },
        };
        if let Some((node, anchor)) = finished {
            if anchor != 0 {
                anchors.insert(anchor, node);
            }
            match stack.last_mut() {
                None => root = Some(node),
                Some(f) if f.map && (children.len() - f.base) % 2 == 1 => {
                    // `node` is a value; its key is on top. A repeated key is dropped with it.
                    let key_at = children.len() - 1;
                    let key = children[key_at];
                    // Keys are compared node to node (length, first bytes, then the text), and
                    // read as text only for a message: this runs for every entry of every map.
                    let merge = key.len() == Some(2) && b.text_of(&key) == Some("<<");
                    let earlier = &children[f.base..key_at];
                    let same = |ek: &Raw| ek.same_scalar(&key, &b.text, &b.pool);
                    let dup = if key.len().is_none() || merge {
                        None
                    } else if earlier.len() / 2 < HASHED_KEYS {
                        earlier
                            .iter()
                            .enumerate()
                            .step_by(2)
                            .find(|(_, ek)| same(ek))
                            .map(|(i, _)| f.base + i)
                    } else {
                        let keys = f.keys.get_or_insert_with(|| {
                            let mut m = HashMap::with_capacity(earlier.len());
                            for (i, ek) in earlier.iter().enumerate().step_by(2) {
                                if let Some(t) = b.text_of(ek) {
                                    m.entry(text_hash(t)).or_insert(f.base + i);
                                }
                            }
                            m
                        });
                        let h = text_hash(b.text_of(&key).unwrap_or_default());
                        match keys.get(&h) {
                            Some(&i) if same(&children[i]) => Some(i),
                            // Two texts with one hash: rare enough to compare one by one.
                            Some(_) => earlier
                                .iter()
                                .enumerate()
                                .step_by(2)
                                .find(|(_, ek)| same(ek))
                                .map(|(i, _)| f.base + i),
                            None => {
                                keys.insert(h, key_at);
                                None
                            }
                        }
                    };
                    // The same key with the same value written twice reads the same whatever
                    // keeps which: kubectl and Argo CD apply it as meant (only kustomize refuses
                    // it, and a failed build is reported as such).
                    let identical = dup.is_some_and(|i| {
                        // A block sequence written at its key's indentation starts, for the
                        // parser, at its first item's content: the dash belongs to it.
                        let value = |r: std::ops::Range<usize>| {
                            let start = match b.text.get(..r.start) {
                                Some(before) if before.ends_with("- ") => r.start - 2,
                                _ => r.start,
                            };
                            b.text.get(start..r.end)
                        };
                        match (
                            value(children[i + 1].span().range()),
                            value(node.span().range()),
                        ) {
                            // Blanks after a value are no part of it.
                            (Some(x), Some(y)) => {
                                x.trim_end() == y.trim_end() || same_shifted(x, y)
                            }
                            _ => false,
                        }
                    });
                    match dup.map(|i| children[i].span()) {
                        Some(_) if identical => {
                            children.pop();
                        }
                        Some(first) => {
                            out.problems.push(Problem {
                                span: key.span(),
                                message: format!(
                                    "duplicate key `{}`: YAML forbids it, so kustomize and strict parsers refuse the file, and readers that accept it keep only the last of the values (as gpuops reads it)",
                                    crate::text::shorten(
                                        b.text_of(&key).unwrap_or_default(),
                                        crate::text::MAX_SHOWN
                                    )
                                ),
                                first: Some(first),
                                kind: ProblemKind::Content,
                            });
                            // The last value wins, as in go-yaml's maps behind kubectl; the
                            // first key stays where it is.
                            children.pop();
                            if let Some(i) = dup {
                                children[i + 1] = node;
                            }
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

/// Whether two block values read the same but for where they are indented (a list written
/// twice, once at each of two indentations): line by line the same text at the same indentation
/// relative to their own lines after the first.
fn same_shifted(x: &str, y: &str) -> bool {
    fn shape(t: &str) -> Option<(&str, Vec<(usize, &str)>)> {
        let mut lines = t.lines();
        let first = lines.next()?.trim_end();
        let rest: Vec<(usize, &str)> = lines
            .filter(|l| !l.trim().is_empty())
            .map(|l| (l.len() - l.trim_start().len(), l.trim()))
            .collect();
        let min = rest.iter().map(|(i, _)| *i).min().unwrap_or(0);
        Some((first, rest.into_iter().map(|(i, l)| (i - min, l)).collect()))
    }
    x.contains('\n') && shape(x).is_some_and(|a| shape(y).is_some_and(|b| a == b))
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

/// The root of `text`'s first document, for unit tests. The document is leaked: nodes borrow
/// it, and it lives as long as the test.
#[cfg(test)]
pub(crate) fn test_root(text: &str) -> Node<'static> {
    let d = parse(text, Budget::default()).docs.into_iter().next();
    Box::leak(Box::new(d.expect("one document"))).root()
}

#[cfg(test)]
mod scaling_tests;
#[cfg(test)]
mod tests;
