//! The tree of one document: nodes in one array, and the handle readers walk it with.

use super::{Builder, END_BITS, Span, Style};
use std::sync::Arc;

/// The kinds a node's span carries in its top bits: a scalar's [`Style`] (0–4), or a collection.
pub(super) const SEQ: u32 = 5;
pub(super) const MAP: u32 = 6;

/// In a stored span's start: a scalar whose text is in the document's pool, not the file's.
/// Offsets never reach it (see [`END_BITS`]).
pub(super) const POOLED: u32 = 1 << 31;

/// Bytes of a scalar's text that its node holds.
pub(super) const INLINE: usize = 8;

/// One node as stored: its span (whose top bits say what it is) and eight bytes.
///
/// A scalar's text is usually written as it reads, inside its span (the quotes aside), so the
/// span gives its place and length; then the eight bytes are its first eight, and the text of a
/// short scalar (most keys) never needs a load from elsewhere in memory. When escapes or folded
/// lines make it read differently, or it is an alias's, the text is in the document's pool, and
/// the bytes are its offset and length there.
///
/// A collection's bytes are where its children start in the document's node array and how many
/// there are (a map's as key, value, key, value…). 16 bytes: a 50,000-object repository is
/// millions of nodes.
#[derive(Clone, Copy)]
pub(super) struct Raw {
    pub(super) sp: Span,
    pub(super) x: [u8; INLINE],
}

impl Raw {
    #[inline]
    pub(super) fn kind(&self) -> u32 {
        self.sp.end >> END_BITS
    }
    #[inline]
    pub(super) fn span(&self) -> Span {
        Span {
            start: self.sp.start & !POOLED,
            end: self.sp.end,
        }
    }
    #[inline]
    pub(super) fn pooled(&self) -> bool {
        self.sp.start & POOLED != 0
    }
    /// The first number: a pooled scalar's offset, a collection's first child.
    #[inline]
    pub(super) fn lo(&self) -> u32 {
        u32::from_le_bytes([self.x[0], self.x[1], self.x[2], self.x[3]])
    }
    /// The second number: a pooled scalar's length, a collection's size.
    #[inline]
    pub(super) fn hi(&self) -> u32 {
        u32::from_le_bytes([self.x[4], self.x[5], self.x[6], self.x[7]])
    }
    /// Bytes before a scalar's text in its span: its opening quote.
    #[inline]
    fn quote(&self) -> usize {
        usize::from(matches!(self.kind(), 1 | 2))
    }
    /// A scalar's length in bytes.
    #[inline]
    pub(super) fn len(&self) -> Option<usize> {
        match self.kind() {
            SEQ.. => None,
            _ if self.pooled() => Some(self.hi() as usize),
            _ => Some(self.span().len().saturating_sub(2 * self.quote())),
        }
    }
    /// A scalar's text: from the node itself when short, else from the file's text or the pool.
    #[inline]
    pub(super) fn text<'s>(&'s self, text: &'s str, pool: &'s str) -> Option<&'s str> {
        let len = self.len()?;
        let (src, start) = if self.pooled() {
            (pool, self.lo() as usize)
        } else if len <= INLINE {
            return std::str::from_utf8(&self.x[..len]).ok();
        } else {
            (text, self.span().start() + self.quote())
        };
        src.get(start..start + len)
    }
    /// Whether it is a scalar reading `key`, whose first bytes are `prefix`.
    #[inline]
    pub(super) fn reads(&self, key: &str, prefix: [u8; INLINE], text: &str, pool: &str) -> bool {
        if self.len() != Some(key.len()) {
            return false;
        }
        if !self.pooled() && (self.x != prefix || key.len() <= INLINE) {
            return self.x == prefix;
        }
        self.text(text, pool) == Some(key)
    }
}

impl Raw {
    /// Whether both are scalars of the same text (in the same document).
    #[inline]
    pub(super) fn same_scalar(&self, other: &Raw, text: &str, pool: &str) -> bool {
        let Some(len) = self.len() else { return false };
        if other.len() != Some(len) {
            return false;
        }
        if !self.pooled() && !other.pooled() && (self.x != other.x || len <= INLINE) {
            return self.x == other.x;
        }
        self.text(text, pool) == other.text(text, pool)
    }
}

/// The first bytes of a scalar's text, zero-padded.
#[inline]
pub(super) fn prefix(s: &str) -> [u8; INLINE] {
    let mut p = [0u8; INLINE];
    let n = s.len().min(INLINE);
    p[..n].copy_from_slice(&s.as_bytes()[..n]);
    p
}

/// Two numbers as a node's bytes.
pub(super) fn pair(lo: u32, hi: u32) -> [u8; INLINE] {
    let mut x = [0u8; INLINE];
    x[..4].copy_from_slice(&lo.to_le_bytes());
    x[4..].copy_from_slice(&hi.to_le_bytes());
    x
}

/// The nodes of one document in one array, with the file's text their scalars point into and
/// the few scalar texts that are not written as they read.
pub(super) struct Tree {
    pub(super) text: Arc<str>,
    pub(super) pool: Box<str>,
    pub(super) nodes: Box<[Raw]>,
}

impl Tree {
    /// A scalar's text (a collection's is empty).
    #[inline]
    fn text_of<'s>(&'s self, raw: &'s Raw) -> &'s str {
        raw.text(&self.text, &self.pool).unwrap_or_default()
    }
    #[inline]
    fn node<'a>(&'a self, raw: &'a Raw) -> Node<'a> {
        Node { tree: self, raw }
    }
}

/// A node of a parsed document: a handle into its document's arena (two references).
#[derive(Clone, Copy)]
pub struct Node<'a> {
    tree: &'a Tree,
    pub(super) raw: &'a Raw,
}

/// What a node holds.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    Scalar { text: &'a str },
    Seq(Seq<'a>),
    Map(Map<'a>),
}

/// A sequence's items.
#[derive(Clone, Copy)]
pub struct Seq<'a> {
    tree: &'a Tree,
    raws: &'a [Raw],
}

/// A map's entries, in the order written (after merge keys are applied).
#[derive(Clone, Copy)]
pub struct Map<'a> {
    tree: &'a Tree,
    /// Key, value, key, value…
    raws: &'a [Raw],
}

impl<'a> Seq<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        self.raws.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raws.is_empty()
    }
    #[inline]
    pub fn get(&self, i: usize) -> Option<Node<'a>> {
        self.raws.get(i).map(|r| self.tree.node(r))
    }
    #[inline]
    pub fn iter(&self) -> Items<'a> {
        Items {
            tree: self.tree,
            raws: self.raws.iter(),
        }
    }
}

impl<'a> IntoIterator for Seq<'a> {
    type Item = Node<'a>;
    type IntoIter = Items<'a>;
    #[inline]
    fn into_iter(self) -> Items<'a> {
        self.iter()
    }
}

impl<'a> Map<'a> {
    /// The number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.raws.len() / 2
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raws.is_empty()
    }
    /// The `i`th entry: (key node, value node).
    #[inline]
    pub fn get(&self, i: usize) -> Option<(Node<'a>, Node<'a>)> {
        let k = self.raws.get(2 * i)?;
        let v = self.raws.get(2 * i + 1)?;
        Some((self.tree.node(k), self.tree.node(v)))
    }
    #[inline]
    pub fn first(&self) -> Option<(Node<'a>, Node<'a>)> {
        self.get(0)
    }
    #[inline]
    pub fn iter(&self) -> Entries<'a> {
        Entries {
            tree: self.tree,
            raws: self.raws.chunks_exact(2),
        }
    }
}

impl<'a> IntoIterator for Map<'a> {
    type Item = (Node<'a>, Node<'a>);
    type IntoIter = Entries<'a>;
    #[inline]
    fn into_iter(self) -> Entries<'a> {
        self.iter()
    }
}

/// A sequence's items, in order.
#[derive(Clone)]
pub struct Items<'a> {
    tree: &'a Tree,
    raws: std::slice::Iter<'a, Raw>,
}

impl<'a> Iterator for Items<'a> {
    type Item = Node<'a>;
    #[inline]
    fn next(&mut self) -> Option<Node<'a>> {
        self.raws.next().map(|r| self.tree.node(r))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raws.size_hint()
    }
    #[inline]
    fn nth(&mut self, n: usize) -> Option<Node<'a>> {
        self.raws.nth(n).map(|r| self.tree.node(r))
    }
}
impl DoubleEndedIterator for Items<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.raws.next_back().map(|r| self.tree.node(r))
    }
}
impl ExactSizeIterator for Items<'_> {}

/// A map's entries as (key node, value node), in order.
#[derive(Clone)]
pub struct Entries<'a> {
    tree: &'a Tree,
    raws: std::slice::ChunksExact<'a, Raw>,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Node<'a>, Node<'a>);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.raws
            .next()
            .map(|kv| (self.tree.node(&kv[0]), self.tree.node(&kv[1])))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raws.size_hint()
    }
}
impl DoubleEndedIterator for Entries<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        self.raws
            .next_back()
            .map(|kv| (self.tree.node(&kv[0]), self.tree.node(&kv[1])))
    }
}
impl ExactSizeIterator for Entries<'_> {}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value() {
            Value::Scalar { text } => write!(f, "{:?}@{:?}", text, self.span()),
            Value::Seq(s) => s.fmt(f),
            Value::Map(m) => m.fmt(f),
        }
    }
}
impl std::fmt::Debug for Seq<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
impl std::fmt::Debug for Map<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
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

impl<'a> Node<'a> {
    /// Whether both are the same node of the same document (not merely equal).
    #[inline]
    pub fn is(self, other: Node<'_>) -> bool {
        std::ptr::eq(self.raw, other.raw)
    }
    /// Where it is written (for an alias: where the alias is).
    #[inline]
    pub fn span(self) -> Span {
        self.raw.span()
    }
    #[inline]
    fn kind(self) -> u32 {
        self.raw.kind()
    }
    #[inline]
    fn children(self, n: usize) -> &'a [Raw] {
        let start = self.raw.lo() as usize;
        self.tree.nodes.get(start..start + n).unwrap_or_default()
    }
    #[inline]
    pub fn value(self) -> Value<'a> {
        match self.kind() {
            SEQ => Value::Seq(Seq {
                tree: self.tree,
                raws: self.children(self.raw.hi() as usize),
            }),
            MAP => Value::Map(Map {
                tree: self.tree,
                raws: self.children(2 * self.raw.hi() as usize),
            }),
            _ => Value::Scalar {
                text: self.scalar_text(),
            },
        }
    }
    #[inline]
    fn scalar_text(self) -> &'a str {
        self.tree.text_of(self.raw)
    }
    // By the stored kind: a scalar's text (checked UTF-8) is not looked at.
    #[inline]
    pub fn as_map(self) -> Option<Map<'a>> {
        (self.kind() == MAP).then(|| Map {
            tree: self.tree,
            raws: self.children(2 * self.raw.hi() as usize),
        })
    }
    #[inline]
    pub fn as_seq(self) -> Option<Seq<'a>> {
        (self.kind() == SEQ).then(|| Seq {
            tree: self.tree,
            raws: self.children(self.raw.hi() as usize),
        })
    }
    /// Whether it is a mapping (by the stored kind, without reading anything).
    #[inline]
    pub fn is_map(self) -> bool {
        self.kind() == MAP
    }
    /// The scalar's text, whatever its type (`true`, `1`, `"a"` all give their text).
    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        (self.kind() < SEQ).then(|| self.scalar_text())
    }
    #[inline]
    pub fn style(self) -> Option<Style> {
        (self.kind() < SEQ).then(|| self.raw.sp.style())
    }
    pub fn is_null(self) -> bool {
        matches!(self.yaml11(), Some(Yaml11::Null))
    }
    /// Whether it is a `{NAME}` or `[NAME]` slot: a flow map of one upper-case, kebab- or
    /// snake-case key and no value (`{image-url}`), or a flow list of one upper-case word, which YAML reads as a collection but a test or a
    /// script replaces (`strings.ReplaceAll`, `sed 's|\[URL\]|…|'`) before the apply.
    pub fn is_brace_slot(self) -> bool {
        let upper = |name: &str| {
            name.len() >= 2
                && name.starts_with(|c: char| c.is_ascii_uppercase())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        };
        // A fill-in name in a flow map may be written in kebab or snake case too
        // (`{collector-image-url}`): YAML reads no real value of a string field so.
        let named = |name: &str| {
            upper(name)
                || (name.len() >= 2
                    && name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && name.contains(['-', '_'])
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')))
        };
        let written = self.tree.text.get(self.span().range()).unwrap_or_default();
        if let Some(m) = self.as_map().filter(|m| m.len() == 1) {
            return written.starts_with('{')
                && m.first()
                    .is_some_and(|(k, v)| v.is_null() && k.as_str().is_some_and(named));
        }
        if let Some(s) = self.as_seq().filter(|s| s.len() == 1) {
            return written.starts_with('[')
                && s.get(0).is_some_and(|item| {
                    item.style() == Some(super::Style::Plain) && item.as_str().is_some_and(upper)
                });
        }
        false
    }
    /// The map entry for `key`: (key node, value node).
    #[inline]
    pub fn entry(self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        if self.kind() != MAP {
            return None;
        }
        // Length and first bytes first: they are in the stored node, the text is elsewhere in
        // memory.
        let (text, pool, p) = (&*self.tree.text, &*self.tree.pool, prefix(key));
        self.children(2 * self.raw.hi() as usize)
            .chunks_exact(2)
            .find(|kv| kv[0].reads(key, p, text, pool))
            .map(|kv| (self.tree.node(&kv[0]), self.tree.node(&kv[1])))
    }
    #[inline]
    pub fn get(self, key: &str) -> Option<Node<'a>> {
        self.entry(key).map(|(_, v)| v)
    }
    /// Follows a path of map keys.
    #[inline]
    pub fn at(self, path: &[&str]) -> Option<Node<'a>> {
        path.iter().try_fold(self, |n, k| n.get(k))
    }
    #[inline]
    pub fn str_at(self, path: &[&str]) -> Option<&'a str> {
        self.at(path).and_then(|n| n.as_str())
    }
    /// Iterates a map's entries as (key text, key node, value node); non-string keys are skipped.
    #[inline]
    pub fn entries(self) -> impl Iterator<Item = (&'a str, Node<'a>, Node<'a>)> + 'a {
        let raws = match self.kind() {
            MAP => self.children(2 * self.raw.hi() as usize),
            _ => &[],
        };
        let tree = self.tree;
        raws.chunks_exact(2).filter_map(move |kv| {
            kv[0].len()?;
            Some((tree.text_of(&kv[0]), tree.node(&kv[0]), tree.node(&kv[1])))
        })
    }
    /// A sequence's items (none for anything else).
    #[inline]
    pub fn items(self) -> Items<'a> {
        match self.as_seq() {
            Some(s) => s.iter(),
            None => Items {
                tree: self.tree,
                raws: [].iter(),
            },
        }
    }
    /// Type of a scalar as Kubernetes' YAML 1.1 reader resolves it.
    #[inline]
    pub fn yaml11(self) -> Option<Yaml11> {
        // A quoted or block scalar is a string: its text is not read.
        Some(match self.style()? {
            Style::Plain => resolve_plain(self.scalar_text()),
            _ => Yaml11::Str,
        })
    }
    /// The text of the file the node was parsed from, which documents built from its nodes
    /// ([`super::construct`]) share.
    pub fn shared_text(self) -> Arc<str> {
        self.tree.text.clone()
    }

    /// A copy of this subtree as a document of its own, spans kept, with each scalar (keys too)
    /// for which `fill` gives a text replaced by it.
    pub fn rewritten(self, fill: &mut dyn FnMut(&str) -> Option<String>) -> Document {
        let mut b = Builder::new(self.tree.text.clone());
        let root = b.copy(self, fill);
        b.finish(root)
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
    let unsigned = t.strip_prefix(['-', '+']).unwrap_or(t);
    // Numbers start with a digit or a dot once underscores are dropped: most scalars are names,
    // decided here without a copy.
    if !unsigned
        .bytes()
        .find(|&b| b != b'_')
        .is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        return Yaml11::Str;
    }
    let body: std::borrow::Cow<'_, str> = if unsigned.contains('_') {
        unsigned.replace('_', "").into()
    } else {
        unsigned.into()
    };
    if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        return Yaml11::Int;
    }
    if let Some(hex) = body.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Yaml11::Int;
    }
    if matches!(&*body, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN") {
        return Yaml11::Float;
    }
    if is_go_yaml_float(&body) {
        return Yaml11::Float;
    }
    Yaml11::Str
}

/// go-yaml v2's float form (sign already stripped): `.5`, `1.`, `1.5`, and exponents with or
/// without a dot (`1e3` is the number 1000 to Kubernetes, though YAML 1.1 proper says string),
/// of a value a float64 holds.
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
    // go-yaml keeps the text a string when Go's ParseFloat fails, as it does past the largest
    // float64 (`2e70684`, a commit hash).
    i == b.len() && body.parse::<f64>().is_ok_and(f64::is_finite)
}

/// One document of a stream: its nodes in one array.
pub struct Document {
    pub(super) tree: Tree,
    pub(super) root: Raw,
}

impl Document {
    pub fn root(&self) -> Node<'_> {
        self.tree.node(&self.root)
    }
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.root().fmt(f)
    }
}
