//! Pointing a finding in a kustomize build back at its source: the node's YAML path in the
//! rendered document is followed in the object's origin file (named by its
//! `config.kubernetes.io/origin` annotation). A patch of the kustomization chain that set the field
//! (a strategic-merge patch holding the whole path, a JSON 6902 operation whose value holds it, or
//! one that edited items of the list the finding is on) wins over the origin; a field the origin
//! lacks, or holds with another value, comes from a transformer (`namespace:`, `namePrefix:`,
//! `commonLabels:`, `images:`, `replicas:`) or, failing that, from a patch entry aimed at the
//! object; the last resort is the deepest node of the path the origin has.

use super::Origin;
use crate::source::builder::Mapping;
use crate::source::remap::{
    Ctx, NodePath, Place, Resolved, Seg, doc_at, follow, line_starts, path_to,
};
use crate::source::tree::{Forest, Kustomization, Target};
use crate::source::{SourceFile, first_key};
use crate::yaml::{self, Budget, Node, Pos, Span, Style};
use std::path::{Path, PathBuf};

/// What a kustomize build keeps for remapping: the kustomization built (identity) and where each
/// document of its output came from.
#[derive(Debug)]
pub(in crate::source) struct Map {
    pub top: PathBuf,
    pub origins: Vec<Origin>,
}

impl Mapping for Map {
    fn resolve(&self, cx: &Ctx, output: &SourceFile, span: Span) -> Option<Resolved> {
        resolve(cx, &self.top, &self.origins, output, span)
    }

    fn through(&self, cx: &Ctx, file: &Path) -> Option<(Place, String)> {
        let k = cx.forest.get(&self.top)?;
        (!file.starts_with(&k.dir)).then(|| {
            let place = Place {
                file: k.path.clone(),
                span: entry_towards(cx.forest, k, file),
            };
            (place, "reached through this kustomization".into())
        })
    }

    fn made_from(&self, _output: &SourceFile, doc: usize) -> Option<&Path> {
        match self.origins.get(doc) {
            Some(Origin::File(p)) => Some(p),
            _ => None,
        }
    }
}

/// The entry of an overlay that leads to `file` (a resource, or a base that reads it), else
/// its `resources:` key: where "reached through this kustomization" points.
fn entry_towards(forest: &Forest, k: &Kustomization, file: &Path) -> Span {
    k.refs
        .iter()
        .find(|r| match &r.target {
            Target::File(f) => f == file,
            Target::Kustomization(c) => forest.files_read(c).contains(file),
            _ => false,
        })
        .map(|r| r.span)
        .or_else(|| k.root()?.entry("resources").map(|(kn, _)| kn.span()))
        .unwrap_or_else(|| first_key(&k.file))
}

/// The rendered object a finding is in.
struct Obj<'a> {
    kind: &'a str,
    group: &'a str,
    name: Option<&'a str>,
}

impl<'a> Obj<'a> {
    fn of(root: Node<'a>) -> Obj<'a> {
        let api = root.str_at(&["apiVersion"]).unwrap_or("");
        Obj {
            kind: root.str_at(&["kind"]).unwrap_or(""),
            group: api.rsplit_once('/').map_or("", |(g, _)| g),
            name: root.str_at(&["metadata", "name"]),
        }
    }
}

/// The object in an origin file the rendered object came from: same kind, then the name that
/// the rendered one is (or contains, after prefixes, suffixes and hashes).
fn find_object<'a>(file: &'a SourceFile, obj: &Obj) -> Option<Node<'a>> {
    let same_kind: Vec<Node<'_>> = file
        .docs
        .iter()
        .map(|d| d.root())
        .filter(|r| r.str_at(&["kind"]) == Some(obj.kind))
        .collect();
    if same_kind.len() == 1 {
        return same_kind.first().copied();
    }
    let rendered = obj.name?;
    same_kind
        .iter()
        .copied()
        .filter_map(|r| {
            let n = r.str_at(&["metadata", "name"])?;
            rendered.contains(n).then_some((n == rendered, n.len(), r))
        })
        .max_by_key(|(exact, len, _)| (*exact, *len))
        .map(|(_, _, r)| r)
}

/// Kustomize target names are regular expressions; gpuops carries no regex engine for them, so
/// a pattern with regex syntax is taken to match.
fn pattern_matches(p: &str, s: &str) -> bool {
    p == s || p.chars().any(|c| "^$*+?()[]{}|\\".contains(c))
}

fn target_matches(t: Node<'_>, obj: &Obj, names: &[&str]) -> bool {
    let field = |f: &str, actual: &str| {
        t.str_at(&[f])
            .is_none_or(|p| p.is_empty() || pattern_matches(p, actual))
    };
    let name_ok = match t.str_at(&["name"]) {
        None | Some("") => true,
        Some(p) => names.iter().any(|n| pattern_matches(p, n)),
    };
    field("kind", obj.kind) && field("group", obj.group) && name_ok
}

/// `/spec/template/0` → tokens.
fn pointer(p: &str) -> Vec<String> {
    p.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// How many leading tokens of a JSON pointer agree with a path.
fn common_prefix(tokens: &[String], segs: &[Seg]) -> usize {
    tokens
        .iter()
        .zip(segs)
        .take_while(|(t, s)| match s {
            Seg::Key(k) => *t == k,
            Seg::Item { index, .. } => t.as_str() == "-" || t.parse::<usize>() == Ok(*index),
        })
        .count()
}

/// A patch's claim on a finding: higher is closer. A patch that holds the whole path scores
/// above [`STRONG`].
const STRONG: usize = 1000;

struct Hit {
    score: usize,
    span: Span,
}

/// What a JSON 6902 patch (a list of operations) says about the path; also notes for removals
/// next to it.
fn json_ops(
    ops: Node<'_>,
    path: &NodePath,
    rendered: Node<'_>,
    notes: &mut Vec<(Span, String)>,
) -> Option<Hit> {
    let segs = &path.segs;
    let mut best: Option<Hit> = None;
    for op in ops.items() {
        let Some((pnode, p)) = op.get("path").and_then(|n| n.as_str().map(|s| (n, s))) else {
            continue;
        };
        let tokens = pointer(p);
        let common = common_prefix(&tokens, segs);
        let hit = if common == tokens.len() && tokens.len() <= segs.len() {
            // The operation wrote a subtree holding the finding: it counts when its value has
            // the rest of the path.
            op.get("value").and_then(|v| {
                let f = follow(v, &segs[tokens.len()..]);
                (f.depth == segs.len() - tokens.len()).then(|| Hit {
                    score: STRONG + segs.len(),
                    span: f.span(path.on_key),
                })
            })
        } else if common == segs.len() && rendered.as_seq().is_some() {
            // It edited items of the list the finding is on (`remove …/tolerations/0`).
            Some(Hit {
                score: segs.len(),
                span: pnode.span(),
            })
        } else {
            if op.str_at(&["op"]) == Some("remove") && common + 1 == tokens.len() {
                notes.push((
                    pnode.span(),
                    format!("this patch removes `{p}` from the object"),
                ));
            }
            None
        };
        if let Some(h) = hit
            && best.as_ref().is_none_or(|b| h.score > b.score)
        {
            best = Some(h);
        }
    }
    best
}

/// Maps spans of an inline patch (a block scalar in a kustomization) to the kustomization file.
struct Inline {
    /// Line (1-based) the scalar's content starts on: a block scalar's span starts at its
    /// content, not at the `|` indicator.
    first_line: u32,
    indent: usize,
    text_lines: Vec<usize>,
    outer_lines: Vec<usize>,
    /// The scalar itself, for anything that cannot be placed exactly.
    whole: Span,
}

impl Inline {
    fn new(outer: &str, scalar: Node<'_>, text: &str) -> Option<Inline> {
        if !matches!(scalar.style(), Some(Style::Literal | Style::Folded)) {
            return None;
        }
        let outer_lines = line_starts(outer);
        let first_line = Pos::of(outer, scalar.span().start()).line;
        let first = *outer_lines.get((first_line as usize).checked_sub(1)?)?;
        let line = &outer[first..];
        let indent = line.len() - line.trim_start_matches(' ').len();
        Some(Inline {
            first_line,
            indent,
            text_lines: line_starts(text),
            outer_lines,
            whole: scalar.span(),
        })
    }

    /// The outer file's byte offset of a byte offset in the block's own text.
    fn byte(&self, outer: &str, byte: usize) -> Option<usize> {
        let l = self.text_lines.partition_point(|&st| st <= byte);
        let in_line = byte.checked_sub(*self.text_lines.get(l.checked_sub(1)?)?)?;
        let outer_start = *self
            .outer_lines
            .get((self.first_line as usize + l).checked_sub(2)?)?;
        let at = outer_start + self.indent + in_line;
        (at <= outer.len() && outer.is_char_boundary(at)).then_some(at)
    }

    fn span(&self, outer: &str, s: Span) -> Span {
        match (self.byte(outer, s.start()), self.byte(outer, s.end())) {
            (Some(a), Some(b)) => Span::new(a, b),
            _ => self.whole,
        }
    }
}

/// The best patch claim on a path across the kustomization chain, outer kustomization first.
struct PatchScan {
    best: Option<(usize, Place)>,
    notes: Vec<(Place, String)>,
    /// The first patch entry aimed at the object (the kustomization line that caused a field
    /// no patch could be tied to).
    aimed: Option<Place>,
}

fn scan_patches(
    cx: &Ctx,
    chain: &[&Kustomization],
    obj: &Obj,
    names: &[&str],
    path: &NodePath,
    rendered: Node<'_>,
) -> PatchScan {
    let mut scan = PatchScan {
        best: None,
        notes: Vec::new(),
        aimed: None,
    };
    for k in chain {
        let Some(root) = k.root() else { continue };
        for field in ["patches", "patchesStrategicMerge", "patchesJson6902"] {
            for entry in root.get(field).into_iter().flat_map(Node::items) {
                scan_entry(cx, k, entry, obj, names, path, rendered, &mut scan);
            }
        }
    }
    scan
}

#[allow(clippy::too_many_arguments)]
fn scan_entry(
    cx: &Ctx,
    k: &Kustomization,
    entry: Node<'_>,
    obj: &Obj,
    names: &[&str],
    path: &NodePath,
    rendered: Node<'_>,
    scan: &mut PatchScan,
) {
    let target = entry.get("target");
    if let Some(t) = target
        && !target_matches(t, obj, names)
    {
        return;
    }
    // The patch text: a file named by `path:` (or by the entry itself), or inline.
    let (file_node, inline_node) = match entry.as_str() {
        Some(s) if s.contains('\n') => (None, Some(entry)),
        Some(_) => (Some(entry), None),
        None => (entry.get("path"), entry.get("patch")),
    };
    let mut docs: Vec<(PathBuf, Node<'_>)> = Vec::new();
    let parsed_inline;
    let mut inline: Option<Inline> = None;
    if let Some(n) = file_node {
        let file = k
            .refs
            .iter()
            .find(|r| r.span == n.span())
            .and_then(|r| match &r.target {
                Target::File(f) => Some(f.clone()),
                _ => None,
            });
        if let Some(f) = file
            && let Some(sf) = cx.file(&f)
        {
            docs.extend(sf.docs.iter().map(|d| (f.clone(), d.root())));
        }
    } else if let Some(n) = inline_node
        && let Some(text) = n.as_str()
    {
        parsed_inline = yaml::parse(text, Budget::default());
        inline = Inline::new(&k.file.text, n, text);
        if inline.is_none() {
            // Not a block scalar: the whole patch is the best place there is.
            inline = Some(Inline {
                first_line: 0,
                indent: 0,
                text_lines: Vec::new(),
                outer_lines: Vec::new(),
                whole: n.span(),
            });
        }
        docs.extend(
            parsed_inline
                .docs
                .iter()
                .map(|d| (k.path.clone(), d.root())),
        );
    }
    let place = |file: &PathBuf, span: Span| Place {
        file: file.clone(),
        span: match &inline {
            Some(m) => m.span(&k.file.text, span),
            None => span,
        },
    };
    for (file, root) in docs {
        let mut notes = Vec::new();
        let hit = if root.as_seq().is_some() {
            json_ops(root, path, rendered, &mut notes)
        } else {
            let aimed_here = target.is_some()
                || (root.str_at(&["kind"]) == Some(obj.kind)
                    && root
                        .str_at(&["metadata", "name"])
                        .is_some_and(|n| names.contains(&n)));
            if !aimed_here {
                continue;
            }
            let f = follow(root, &path.segs);
            (f.depth == path.segs.len()).then(|| Hit {
                score: STRONG + path.segs.len(),
                span: f.span(path.on_key),
            })
        };
        if scan.aimed.is_none() {
            scan.aimed = Some(Place {
                file: k.path.clone(),
                span: entry.span(),
            });
        }
        for (s, m) in notes {
            scan.notes.push((place(&file, s), m));
        }
        if let Some(h) = hit
            && scan.best.as_ref().is_none_or(|(b, _)| h.score > *b)
        {
            scan.best = Some((h.score, place(&file, h.span)));
        }
    }
}

/// `registry/x:tag@sha256:…` → `registry/x`.
fn image_name(image: &str) -> &str {
    let no_digest = image.split('@').next().unwrap_or(image);
    match no_digest.rfind(':') {
        Some(i) if !no_digest[i..].contains('/') => &no_digest[..i],
        _ => no_digest,
    }
}

/// The kustomization field that sets a path: `namespace:`, `namePrefix:`/`nameSuffix:`,
/// `commonLabels:`/`labels:`, `commonAnnotations:`, `images:`, `replicas:`.
fn transformer(
    chain: &[&Kustomization],
    segs: &[Seg],
    names: &[&str],
    rendered: Node<'_>,
) -> Option<Place> {
    let key = |i: usize| match segs.get(i) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    let n = segs.len();
    for k in chain {
        let Some(root) = k.root() else { continue };
        let at = |n: Option<Node<'_>>| n.map(|n| n.span());
        let entry_key = |map: Option<Node<'_>>, name: &str| map?.entry(name).map(|(k, _)| k.span());
        let hit = match (key(0), key(1), n) {
            (Some("metadata"), Some("namespace"), 2) => at(root.get("namespace")),
            (Some("metadata"), Some("name"), 2) => {
                at(root.get("namePrefix").or_else(|| root.get("nameSuffix")))
            }
            _ if n >= 2 && matches!(key(n - 2), Some("labels" | "matchLabels")) => {
                let label = key(n - 1).unwrap_or_default();
                entry_key(root.get("commonLabels"), label).or_else(|| {
                    root.get("labels")
                        .into_iter()
                        .flat_map(Node::items)
                        .find_map(|l| entry_key(l.get("pairs"), label))
                })
            }
            _ if n >= 2 && key(n - 2) == Some("annotations") => entry_key(
                root.get("commonAnnotations"),
                key(n - 1).unwrap_or_default(),
            ),
            _ if n >= 3
                && key(n - 1) == Some("image")
                && matches!(key(n - 3), Some("containers" | "initContainers")) =>
            {
                let image = image_name(rendered.as_str().unwrap_or_default());
                root.get("images")
                    .into_iter()
                    .flat_map(Node::items)
                    .find(|i| {
                        i.str_at(&["name"]) == Some(image) || i.str_at(&["newName"]) == Some(image)
                    })
                    .map(|i| i.span())
            }
            (Some("spec"), Some("replicas"), 2) => root
                .get("replicas")
                .into_iter()
                .flat_map(Node::items)
                .find(|r| r.str_at(&["name"]).is_some_and(|n| names.contains(&n)))
                .and_then(|r| r.get("count").map(|c| c.span())),
            _ => None,
        };
        if let Some(span) = hit {
            return Some(Place {
                file: k.path.clone(),
                span,
            });
        }
    }
    None
}

/// A finding in a kustomize build of `top`: see the module documentation.
pub fn resolve(
    cx: &Ctx,
    top: &Path,
    origins: &[Origin],
    rendered_file: &SourceFile,
    span: Span,
) -> Option<Resolved> {
    let (di, root) = doc_at(rendered_file, span)?;
    let path = path_to(root, span);
    let rendered = follow(root, &path.segs).node;
    let obj = Obj::of(root);
    let chain = cx.forest.chain(top);
    match origins.get(di)? {
        Origin::Generated { kustomization } => generated(cx, kustomization, &obj),
        Origin::File(p) => from_file(cx, &chain, p, &obj, &path, rendered),
        _ => None,
    }
}

fn generated(cx: &Ctx, kustomization: &Path, obj: &Obj) -> Option<Resolved> {
    let k = cx.forest.get(kustomization)?;
    let root = k.root()?;
    let rendered = obj.name.unwrap_or_default();
    let span = ["configMapGenerator", "secretGenerator"]
        .iter()
        .filter_map(|f| root.entry(f))
        .find_map(|(_, list)| {
            list.items()
                .filter_map(|i| i.get("name"))
                .find(|n| n.as_str().is_some_and(|s| rendered.contains(s)))
                .map(|n| n.span())
        })
        .unwrap_or(root.span());
    Some(Resolved {
        place: Place {
            file: k.path.clone(),
            span,
        },
        notes: Vec::new(),
    })
}

fn from_file(
    cx: &Ctx,
    chain: &[&Kustomization],
    origin: &Path,
    obj: &Obj,
    path: &NodePath,
    rendered: Node<'_>,
) -> Option<Resolved> {
    let of = cx.file(origin)?;
    let odoc = find_object(of, obj);
    let names: Vec<&str> = [obj.name, odoc.and_then(|d| d.str_at(&["metadata", "name"]))]
        .into_iter()
        .flatten()
        .collect();
    let scan = scan_patches(cx, chain, obj, &names, path, rendered);
    let resolved = |place: Place, notes: Vec<(Place, String)>| {
        Some(Resolved {
            notes: notes.into_iter().filter(|(p, _)| *p != place).collect(),
            place,
        })
    };
    if let Some((_, place)) = scan.best {
        return resolved(place, Vec::new());
    }
    let at_origin = |span: Span| Place {
        file: origin.to_path_buf(),
        span,
    };
    let found = odoc.map(|d| follow(d, &path.segs));
    let full = found.filter(|f| f.depth == path.segs.len());
    if let Some(f) = full {
        let changed = match (f.node.as_str(), rendered.as_str()) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        };
        if !changed {
            return resolved(at_origin(f.span(path.on_key)), scan.notes);
        }
    }
    if let Some(place) = transformer(chain, &path.segs, &names, rendered) {
        return resolved(place, Vec::new());
    }
    if let Some(f) = full {
        return resolved(at_origin(f.span(path.on_key)), scan.notes);
    }
    if let Some(place) = scan.aimed {
        return resolved(place, Vec::new());
    }
    let span = found.map_or(of.docs.first()?.root().span(), |f| f.node.span());
    resolved(at_origin(span), scan.notes)
}

#[cfg(test)]
mod tests;
