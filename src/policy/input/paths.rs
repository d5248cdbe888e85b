//! Field paths inside an object: the path to a node (found by identity) and back.

use crate::yaml::{Node, Value as Y};

/// One step of a field path: a map key or a list index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// The path of `target` inside `root`, found by identity.
pub fn path_to(root: Node<'_>, target: Node<'_>) -> Option<Vec<Seg>> {
    fn walk<'n>(n: Node<'n>, target: Node<'_>, prune: bool, out: &mut Vec<Step<'n>>) -> bool {
        if n.is(target) {
            return true;
        }
        let at = target.span().start();
        // Spans nest, so only the child whose span holds the target's start can hold it; aliases
        // copy nodes with their anchor's span, which the unpruned second pass covers.
        let holds =
            |c: Node<'_>| !prune || (c.span().start() <= at && at < c.span().end().max(at + 1));
        match n.value() {
            Y::Scalar { .. } => false,
            Y::Seq(items) => items.iter().enumerate().any(|(i, c)| {
                holds(c) && {
                    out.push(Step::Index(i));
                    walk(c, target, prune, out) || {
                        out.pop();
                        false
                    }
                }
            }),
            Y::Map(entries) => entries.iter().any(|(k, v)| {
                // The span first: reading a key's text costs more.
                if !holds(v) {
                    return false;
                }
                let Some(key) = k.as_str() else { return false };
                out.push(Step::Key(key));
                walk(v, target, prune, out) || {
                    out.pop();
                    false
                }
            }),
        }
    }
    enum Step<'n> {
        Key(&'n str),
        Index(usize),
    }
    let mut out = Vec::new();
    let found = walk(root, target, true, &mut out) || {
        out.clear();
        walk(root, target, false, &mut out)
    };
    found.then(|| {
        out.into_iter()
            .map(|s| match s {
                Step::Key(k) => Seg::Key(k.to_string()),
                Step::Index(i) => Seg::Index(i),
            })
            .collect()
    })
}

/// The node at `path` inside `root`, or the deepest one that exists on the way (with how many
/// steps resolved).
pub fn resolve<'n>(root: Node<'n>, path: &[Seg]) -> (Node<'n>, usize) {
    let mut at = root;
    for (i, seg) in path.iter().enumerate() {
        let next = match seg {
            Seg::Key(k) => at.get(k),
            Seg::Index(ix) => at.as_seq().and_then(|s| s.get(*ix)),
        };
        match next {
            Some(n) => at = n,
            None => return (at, i),
        }
    }
    (at, path.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::yaml::test_root as doc;

    #[test]
    fn paths_resolve_to_the_deepest_existing_node() {
        let n = doc("spec:\n  containers:\n  - name: a\n    image: x\n");
        let path = |p: &[Seg]| p.to_vec();
        let k = |s: &str| Seg::Key(s.into());
        let (node, steps) = resolve(
            n,
            &path(&[k("spec"), k("containers"), Seg::Index(0), k("image")]),
        );
        assert_eq!((node.as_str(), steps), (Some("x"), 4));
        let (node, steps) = resolve(n, &path(&[k("spec"), k("volumes"), Seg::Index(0)]));
        assert_eq!(steps, 1);
        assert!(node.as_map().is_some());
        let image = n.at(&["spec", "containers"]).and_then(|c| c.items().next());
        let image = image.and_then(|c| c.get("image")).expect("image");
        assert_eq!(
            path_to(n, image),
            Some(vec![k("spec"), k("containers"), Seg::Index(0), k("image")])
        );
    }
}
