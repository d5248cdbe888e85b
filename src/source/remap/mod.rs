//! Pointing a finding in rendered output back at the file and line that produced it: what every
//! kind of build shares (a node's path in a document, followed in another tree). How each kind
//! places a finding is its own: [`crate::source::kustomize::remap`] follows the origin file and
//! the patches and transformers of the kustomization chain, [`crate::source::helm::remap`] the
//! `# Source:` template and the values files.

use super::tree::Forest;
use crate::source::SourceFile;
use crate::yaml::{Node, Span, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One step of a path from a document root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    /// A list item: its index and, when it has one, what identifies it across patches
    /// (`name`, `key`, …), so a base and an overlay that reorder a list still agree.
    Item {
        index: usize,
        id: Option<(&'static str, String)>,
    },
}

/// Where a node stands in its document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodePath {
    pub segs: Vec<Seg>,
    /// The finding is on the key of the last entry rather than on its value.
    pub on_key: bool,
}

const ITEM_IDS: [&str; 4] = ["name", "key", "mountPath", "containerPort"];

fn item_id(n: Node<'_>) -> Option<(&'static str, String)> {
    ITEM_IDS
        .iter()
        .find_map(|k| n.get(k).and_then(Node::as_str).map(|v| (*k, v.to_string())))
}

pub(crate) fn contains(outer: Span, inner: Span) -> bool {
    outer.start() <= inner.start() && inner.end() <= outer.end()
}

/// The path from `root` to the node at `span` (or to the deepest node holding it).
pub fn path_to(root: Node<'_>, span: Span) -> NodePath {
    let mut segs = Vec::new();
    let mut node = root;
    'descend: loop {
        if node.span() == span {
            break;
        }
        match node.value() {
            Value::Map(entries) => {
                for (k, v) in entries.iter() {
                    let Some(key) = k.as_str() else { continue };
                    if k.span() == span || (contains(k.span(), span) && !contains(v.span(), span)) {
                        segs.push(Seg::Key(key.to_string()));
                        return NodePath { segs, on_key: true };
                    }
                    if contains(v.span(), span) {
                        segs.push(Seg::Key(key.to_string()));
                        node = v;
                        continue 'descend;
                    }
                }
            }
            Value::Seq(items) => {
                for (index, it) in items.iter().enumerate() {
                    if contains(it.span(), span) {
                        segs.push(Seg::Item {
                            index,
                            id: item_id(it),
                        });
                        node = it;
                        continue 'descend;
                    }
                }
            }
            Value::Scalar { .. } => {}
        }
        break;
    }
    NodePath {
        segs,
        on_key: false,
    }
}

/// How far a path could be followed in another tree.
#[derive(Clone, Copy, Debug)]
pub struct Found<'a> {
    /// Steps matched.
    pub depth: usize,
    /// The key node of the last step, when it was a map key.
    pub key: Option<Node<'a>>,
    pub node: Node<'a>,
}

impl Found<'_> {
    pub(crate) fn span(&self, on_key: bool) -> Span {
        match (on_key, self.key) {
            (true, Some(k)) => k.span(),
            _ => self.node.span(),
        }
    }
}

/// Follows `segs` from `root` as far as they go. List items with an identity are matched by it,
/// others by index.
pub fn follow<'a>(root: Node<'a>, segs: &[Seg]) -> Found<'a> {
    let mut f = Found {
        depth: 0,
        key: None,
        node: root,
    };
    for s in segs {
        let next = match s {
            Seg::Key(k) => f.node.entry(k).map(|(kn, v)| (Some(kn), v)),
            Seg::Item { index, id } => {
                let mut items = f.node.items();
                match id {
                    Some((k, v)) => {
                        items.find(|it| it.get(k).and_then(Node::as_str) == Some(v.as_str()))
                    }
                    None => items.nth(*index),
                }
                .map(|it| (None, it))
            }
        };
        match next {
            Some((k, n)) => {
                f.depth += 1;
                f.key = k;
                f.node = n;
            }
            None => break,
        }
    }
    f
}

/// A place in a file known by identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: PathBuf,
    pub span: Span,
}

/// Where a finding goes, with notes for other places worth a look.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub place: Place,
    pub notes: Vec<(Place, String)>,
}

/// What is known about the files a build read.
pub struct Ctx<'a> {
    pub forest: &'a Forest,
    pub cache: &'a BTreeMap<PathBuf, SourceFile>,
}

impl Ctx<'_> {
    pub fn file(&self, p: &Path) -> Option<&SourceFile> {
        self.forest
            .get(p)
            .map(|k| &k.file)
            .or_else(|| self.cache.get(p))
    }
}

/// The document of `file` that holds `span`, with its index.
pub(crate) fn doc_at(file: &SourceFile, span: Span) -> Option<(usize, Node<'_>)> {
    file.docs
        .iter()
        .enumerate()
        .rfind(|(_, d)| d.root().span().start() <= span.start())
        .map(|(i, d)| (i, d.root()))
}

pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The span of `len` bytes from `start`, clamped to the text.
pub fn span_at(text: &str, start: usize, len: usize) -> Span {
    let start = start.min(text.len());
    Span::new(start, (start + len).min(text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::test_root as root;

    #[test]
    fn paths_follow_list_items_by_identity() {
        let rendered =
            root("spec:\n  containers:\n  - name: b\n    image: y\n  - name: a\n    image: x\n");
        let n = rendered
            .at(&["spec", "containers"])
            .unwrap()
            .as_seq()
            .unwrap()
            .get(1)
            .unwrap()
            .get("image")
            .unwrap();
        let p = path_to(rendered, n.span());
        assert_eq!(
            p.segs,
            vec![
                Seg::Key("spec".into()),
                Seg::Key("containers".into()),
                Seg::Item {
                    index: 1,
                    id: Some(("name", "a".into()))
                },
                Seg::Key("image".into()),
            ]
        );
        let text = "spec:\n  containers:\n    - name: a\n      image: x\n";
        let origin = root(text);
        let f = follow(origin, &p.segs);
        assert_eq!(f.depth, 4);
        assert_eq!(f.node.span().start_pos(text).line, 4);
    }

    #[test]
    fn key_findings_stay_on_keys() {
        let r = root("a:\n  b: 1\n");
        let (k, _) = r.get("a").unwrap().entry("b").unwrap();
        let p = path_to(r, k.span());
        assert!(p.on_key);
        assert_eq!(p.segs.len(), 2);
    }
}
