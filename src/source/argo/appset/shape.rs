//! An ApplicationSet's template as a value to build Applications from, every node keeping its
//! span in the ApplicationSet (so what is reported about a generated Application points there):
//! a generator's own `template` laid over the ApplicationSet's, the parameters filled in, and
//! `templatePatch` applied.

use crate::yaml::{Node, Shape, Span, Style, Value as YValue};

/// The subtree as a shape, spans and quoting kept.
pub(super) fn copy<'a>(n: Node<'a>) -> Shape<'a> {
    match n.value() {
        YValue::Scalar { text } => Shape::Scalar {
            span: n.span(),
            text: text.to_string(),
            style: n.style().unwrap_or(Style::Plain),
        },
        YValue::Seq(s) => Shape::Seq {
            span: n.span(),
            items: s.iter().map(copy).collect(),
        },
        YValue::Map(m) => Shape::Map {
            span: n.span(),
            entries: m.iter().map(|(k, v)| (copy(k), copy(v))).collect(),
        },
    }
}

/// A subtree of another text (a rendered `templatePatch`) placed at `span`.
pub(super) fn relocated<'a>(n: Node<'_>, span: Span) -> Shape<'a> {
    match n.value() {
        YValue::Scalar { text } => Shape::Scalar {
            span,
            text: text.to_string(),
            style: n.style().unwrap_or(Style::Plain),
        },
        YValue::Seq(s) => Shape::Seq {
            span,
            items: s.iter().map(|i| relocated(i, span)).collect(),
        },
        YValue::Map(m) => Shape::Map {
            span,
            entries: m
                .iter()
                .map(|(k, v)| (relocated(k, span), relocated(v, span)))
                .collect(),
        },
    }
}

/// Replaces each scalar (keys too) `f` gives a text for; `f` returning `Err` stops it.
pub(super) fn fill<E>(
    s: &mut Shape<'_>,
    f: &mut dyn FnMut(&str) -> Result<Option<String>, E>,
) -> Result<(), E> {
    match s {
        Shape::Scalar { text, style, .. } => {
            if let Some(new) = f(text)? {
                *text = new;
                // A filled-in value is a string, whatever it reads as.
                if *style == Style::Plain {
                    *style = Style::DoubleQuoted;
                }
            }
        }
        Shape::Seq { items, .. } => {
            for i in items {
                fill(i, f)?;
            }
        }
        Shape::Map { entries, .. } => {
            for (k, v) in entries {
                fill(k, f)?;
                fill(v, f)?;
            }
        }
        Shape::Copy(_) => {}
    }
    Ok(())
}

fn key<'s>(s: &'s Shape<'_>) -> Option<&'s str> {
    match s {
        Shape::Scalar { text, .. } => Some(text),
        _ => None,
    }
}

/// Go's zero value, as `mergo` tells an unset field: null, "", `false`, 0, empty collections.
fn is_empty(s: &Shape<'_>) -> bool {
    match s {
        Shape::Scalar { text, style, .. } => {
            *style == Style::Plain && matches!(text.as_str(), "" | "~" | "null" | "false" | "0")
                || text.is_empty()
        }
        Shape::Seq { items, .. } => items.is_empty(),
        Shape::Map { entries, .. } => entries.is_empty(),
        Shape::Copy(_) => false,
    }
}

/// A map's value at `k`.
pub(super) fn get<'s, 'a>(s: &'s Shape<'a>, k: &str) -> Option<&'s Shape<'a>> {
    match s {
        Shape::Map { entries, .. } => entries
            .iter()
            .find(|(ek, _)| key(ek) == Some(k))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// Sets a map's value at `k` (added at the end when absent).
pub(super) fn set<'a>(s: &mut Shape<'a>, k: Shape<'a>, v: Shape<'a>) {
    if let Shape::Map { entries, .. } = s {
        let name = key(&k).map(str::to_string);
        match entries
            .iter_mut()
            .find(|(ek, _)| key(ek).map(str::to_string) == name)
        {
            Some(slot) => slot.1 = v,
            None => entries.push((k, v)),
        }
    }
}

/// `mergo.Merge(dst, src)` as Argo CD lays the ApplicationSet's template under a generator's
/// own: what the generator's template leaves unset (or zero) comes from the ApplicationSet's;
/// maps merge key by key.
pub(super) fn fill_gaps<'a>(dst: Shape<'a>, src: Shape<'a>) -> Shape<'a> {
    match (dst, src) {
        (
            Shape::Map { span, mut entries },
            Shape::Map {
                entries: from_src, ..
            },
        ) => {
            for (k, v) in from_src {
                let name = key(&k).map(str::to_string);
                match entries
                    .iter_mut()
                    .find(|(ek, _)| key(ek).map(str::to_string) == name)
                {
                    Some(slot) => {
                        let mine = std::mem::replace(
                            &mut slot.1,
                            Shape::Seq {
                                span,
                                items: Vec::new(),
                            },
                        );
                        slot.1 = fill_gaps(mine, v);
                    }
                    None => entries.push((k, v)),
                }
            }
            Shape::Map { span, entries }
        }
        (dst, src) if is_empty(&dst) => src,
        (dst, _) => dst,
    }
}

/// A strategic merge patch as Argo CD applies `templatePatch` to a generated Application (whose
/// fields declare no merge keys): maps merge, `null` removes, anything else replaces. The
/// directives of a map are honoured: `$patch: replace` (the patch's map instead of a merge),
/// `$patch: delete` (the key goes) and `$retainKeys` (only the keys listed stay); other `$`
/// keys (`$setElementOrder/…`) order or trim lists without merge keys, which are replaced whole
/// anyway, and are dropped.
pub(super) fn patch<'a>(base: Shape<'a>, p: Shape<'a>) -> Shape<'a> {
    if directive(&p) == Some("replace") {
        return without_directives(p);
    }
    match (base, p) {
        (
            Shape::Map { span, mut entries },
            Shape::Map {
                entries: changes, ..
            },
        ) => {
            let retain: Option<Vec<String>> = changes
                .iter()
                .find(|(k, _)| key(k) == Some("$retainKeys"))
                .map(|(_, v)| match v {
                    Shape::Seq { items, .. } => {
                        items.iter().filter_map(key).map(str::to_string).collect()
                    }
                    _ => Vec::new(),
                });
            for (k, v) in changes {
                if key(&k).is_some_and(|n| n.starts_with('$')) {
                    continue;
                }
                let name = key(&k).map(str::to_string);
                let at = entries
                    .iter()
                    .position(|(ek, _)| key(ek).map(str::to_string) == name);
                let removes = matches!(&v, Shape::Scalar { text, style: Style::Plain, .. }
                    if matches!(text.as_str(), "" | "~" | "null"))
                    || directive(&v) == Some("delete");
                match (at, removes) {
                    (Some(i), true) => {
                        entries.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => {
                        let mine = std::mem::replace(
                            &mut entries[i].1,
                            Shape::Seq {
                                span,
                                items: Vec::new(),
                            },
                        );
                        entries[i].1 = patch(mine, v);
                    }
                    (None, false) => entries.push((k, without_directives(v))),
                }
            }
            if let Some(keep) = retain {
                entries.retain(|(k, _)| key(k).is_some_and(|n| keep.iter().any(|r| r == n)));
            }
            Shape::Map { span, entries }
        }
        (_, p) => without_directives(p),
    }
}

/// The `$patch` directive of a map.
fn directive<'s>(s: &'s Shape<'_>) -> Option<&'s str> {
    match s {
        Shape::Map { entries, .. } => entries
            .iter()
            .find(|(k, _)| key(k) == Some("$patch"))
            .and_then(|(_, v)| key(v)),
        _ => None,
    }
}

/// The shape without its patch directives, at every depth: what the patch adds as it is.
fn without_directives(s: Shape<'_>) -> Shape<'_> {
    match s {
        Shape::Map { span, entries } => Shape::Map {
            span,
            entries: entries
                .into_iter()
                .filter(|(k, _)| !key(k).is_some_and(|n| n.starts_with('$')))
                .map(|(k, v)| (k, without_directives(v)))
                .collect(),
        },
        Shape::Seq { span, items } => Shape::Seq {
            span,
            items: items.into_iter().map(without_directives).collect(),
        },
        scalar => scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, construct, parse};

    fn doc(text: &str) -> crate::yaml::Parsed {
        parse(text, Budget::default())
    }

    fn json(s: &Shape<'_>, anchor: Node<'_>) -> serde_json::Value {
        crate::yaml::to_json(construct(anchor.shared_text(), s).root())
    }

    #[test]
    fn a_generator_template_is_laid_over_the_applicationset_template() {
        let p = doc(
            "a: {metadata: {name: x, labels: {a: '1'}}, spec: {project: p, source: {path: ''}}}\nb: {metadata: {labels: {b: '2'}}, spec: {source: {path: here, repoURL: r}}}\n",
        );
        let root = p.docs[0].root();
        let merged = fill_gaps(copy(root.get("b").unwrap()), copy(root.get("a").unwrap()));
        assert_eq!(
            json(&merged, root),
            serde_json::json!({"metadata": {"labels": {"b": "2", "a": "1"}, "name": "x"}, "spec": {"source": {"path": "here", "repoURL": "r"}, "project": "p"}})
        );
    }

    /// The document's `patch` applied to its `base`, as JSON.
    fn patched(p: &crate::yaml::Parsed) -> serde_json::Value {
        let root = p.docs[0].root();
        let out = patch(
            copy(root.get("base").unwrap()),
            copy(root.get("patch").unwrap()),
        );
        json(&out, root)
    }

    #[test]
    fn a_patch_merges_maps_replaces_lists_and_removes_nulls() {
        let p = doc(
            "base: {spec: {project: p, syncPolicy: {automated: {prune: true}}, info: [a], source: {path: x}}}\npatch: {spec: {syncPolicy: {automated: null, syncOptions: [b]}, info: [c], source: {helm: {releaseName: r}}}}\n",
        );
        assert_eq!(
            patched(&p),
            serde_json::json!({"spec": {"project": "p", "syncPolicy": {"syncOptions": ["b"]}, "info": ["c"], "source": {"path": "x", "helm": {"releaseName": "r"}}}})
        );
    }

    #[test]
    fn patch_directives_replace_delete_and_retain() {
        let p = doc(
            "base: {spec: {project: p, syncPolicy: {automated: {prune: true}, retry: {limit: 2}}, source: {path: x, helm: {releaseName: r}}, info: {a: '1'}}}\npatch: {spec: {syncPolicy: {$patch: replace, syncOptions: [b]}, source: {$retainKeys: [path, repoURL], repoURL: u}, info: {$patch: delete}, destination: {$patch: merge, name: in-cluster}}}\n",
        );
        assert_eq!(
            patched(&p),
            serde_json::json!({"spec": {"project": "p", "syncPolicy": {"syncOptions": ["b"]}, "source": {"path": "x", "repoURL": "u"}, "destination": {"name": "in-cluster"}}})
        );
    }

    #[test]
    fn filled_scalars_keep_their_spans_and_read_as_strings() {
        let text = "name: '{{c}}'\nn: 1\n";
        let p = doc(text);
        let root = p.docs[0].root();
        let mut s = copy(root);
        fill::<()>(&mut s, &mut |t| {
            Ok(t.contains("{{").then(|| "007".to_string()))
        })
        .unwrap();
        let d = construct(root.shared_text(), &s);
        let n = d.root().get("name").unwrap();
        assert_eq!(&text[n.span().range()], "'{{c}}'");
        assert_eq!(
            crate::yaml::to_json(d.root()),
            serde_json::json!({"name": "007", "n": 1})
        );
    }
}
