//! Pointing a finding in `helm template` output back at its source: the `# Source:` comment
//! before the document names the template; the keys of the path are searched in it in order. A
//! scalar rendered by a templated line that appears exactly once as `key: value` in the values
//! files points at that line, the template line as a note.

use crate::source::SourceFile;
use crate::source::builder::Mapping;
use crate::source::remap::{
    Ctx, NodePath, Place, Resolved, Seg, contains, doc_at, follow, line_starts, path_to, span_at,
};
use crate::yaml::{Node, Span};
use std::path::{Path, PathBuf};

/// What a `helm template` output keeps for remapping: the template each `# Source:` comment
/// names (by byte offset), and the values files the render read.
#[derive(Debug)]
pub(in crate::source) struct Map {
    pub sources: Vec<(usize, Option<PathBuf>)>,
    pub values: Vec<PathBuf>,
}

impl Mapping for Map {
    fn resolve(&self, cx: &Ctx, output: &SourceFile, span: Span) -> Option<Resolved> {
        resolve(cx, &self.sources, &self.values, output, span)
    }

    fn made_from(&self, output: &SourceFile, doc: usize) -> Option<&Path> {
        let start = output.docs.get(doc)?.root().span().start();
        self.sources
            .iter()
            .rfind(|(offset, _)| *offset <= start)
            .and_then(|(_, p)| p.as_deref())
    }
}

/// The line of `text` where `keys` appear in order, each searched after the previous one
/// (keys not found are skipped): byte offset and length of the last key found, and whether it
/// is the last of `keys`.
fn find_keys(text: &str, keys: &[&str]) -> Option<(usize, usize, bool)> {
    let lines: Vec<(usize, &str)> = line_starts(text)
        .into_iter()
        .map(|s| {
            let e = text[s..].find('\n').map_or(text.len(), |i| s + i);
            (s, &text[s..e])
        })
        .collect();
    let mut from = 0;
    let mut last = None;
    for (n, key) in keys.iter().enumerate() {
        let found = lines.iter().enumerate().skip(from).find_map(|(i, (s, l))| {
            let body = l.trim_start();
            let body = body.strip_prefix("- ").unwrap_or(body).trim_start();
            let offset = s + (l.len() - body.len());
            [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
                .iter()
                .find(|k| {
                    body.strip_prefix(k.as_str())
                        .is_some_and(|r| r.starts_with(':'))
                })
                .map(|k| (i, offset, k.len()))
        });
        if let Some((i, offset, len)) = found {
            from = i + 1;
            last = Some((offset, len, n + 1 == keys.len()));
        }
    }
    last
}

/// `key: value` lines of a values file (quotes on either side allowed, a trailing comment
/// ignored): byte offset and length of each value.
fn values_lines(text: &str, key: &str, value: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for s in line_starts(text) {
        let e = text[s..].find('\n').map_or(text.len(), |i| s + i);
        let line = &text[s..e];
        let body = line.trim_start();
        let body = body.strip_prefix("- ").unwrap_or(body).trim_start();
        let rest = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
            .iter()
            .find_map(|k| body.strip_prefix(k.as_str())?.strip_prefix(':'));
        let Some(rest) = rest else { continue };
        let v = rest.split(" #").next().unwrap_or(rest).trim();
        let unquoted = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
            .unwrap_or(v);
        if unquoted == value && !v.is_empty() {
            // `v` is a slice of `text`: its offset is where it starts.
            out.push((v.as_ptr() as usize - text.as_ptr() as usize, v.len()));
        }
    }
    out
}

/// A finding in `helm template` output: see the module documentation.
pub fn resolve(
    cx: &Ctx,
    sources: &[(usize, Option<PathBuf>)],
    values: &[PathBuf],
    rendered_file: &SourceFile,
    span: Span,
) -> Option<Resolved> {
    let template = sources
        .iter()
        .rfind(|(at, _)| *at <= span.start())?
        .1
        .as_ref()?;
    let tf = cx.file(template)?;
    let doc = doc_at(rendered_file, span).filter(|(_, r)| contains(r.span(), span));
    let (path, rendered) = match doc {
        Some((_, root)) => {
            let p = path_to(root, span);
            let n = follow(root, &p.segs).node;
            (p, Some(n))
        }
        None => (
            NodePath {
                segs: Vec::new(),
                on_key: false,
            },
            None,
        ),
    };
    let keys: Vec<&str> = path
        .segs
        .iter()
        .filter_map(|s| match s {
            Seg::Key(k) => Some(k.as_str()),
            Seg::Item { .. } => None,
        })
        .collect();
    let hit = find_keys(&tf.text, &keys);
    let template_place = Place {
        file: template.clone(),
        span: match hit {
            Some((at, len, _)) => span_at(&tf.text, at, len),
            None => span_at(&tf.text, 0, tf.text.find('\n').unwrap_or(tf.text.len())),
        },
    };
    // The value came from template code, not the template's text: its own key is not in the
    // template (`toYaml .Values.resources`), or its line holds an action.
    let templated = match hit {
        Some((at, _, true)) => {
            let end = tf.text[at..].find('\n').map_or(tf.text.len(), |i| at + i);
            tf.text[at..end].contains("{{")
        }
        _ => tf.text.contains("{{"),
    };
    let value = rendered
        .filter(|n| n.as_seq().is_none() && n.as_map().is_none())
        .and_then(Node::as_str)
        .filter(|v| !v.is_empty());
    if let (true, Some(Seg::Key(key)), Some(value)) = (templated, path.segs.last(), value) {
        let mut matches = Vec::new();
        for v in values {
            if let Some(vf) = cx.file(v) {
                for (at, len) in values_lines(&vf.text, key, value) {
                    matches.push(Place {
                        file: v.clone(),
                        span: span_at(&vf.text, at, len),
                    });
                }
            }
        }
        if let [only] = matches.as_slice() {
            return Some(Resolved {
                place: only.clone(),
                notes: vec![(template_place, "rendered by this template line".into())],
            });
        }
    }
    Some(Resolved {
        place: template_place,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Pos;

    #[test]
    fn keys_are_found_in_order_in_templates() {
        let t = "metadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n";
        let (at, len, last) = find_keys(
            t,
            &[
                "spec",
                "template",
                "spec",
                "containers",
                "name",
                "resources",
                "limits",
            ],
        )
        .unwrap();
        assert_eq!(&t[at..at + len], "resources");
        assert_eq!(Pos::of(t, at).line, 8);
        assert!(!last);
    }

    #[test]
    fn values_lines_match_key_and_value() {
        let v = "gpu:\n  count: 2 # per pod\n  other: 2\n  \"nvidia.com/gpu\": \"2\"\n";
        let hits = values_lines(v, "count", "2");
        assert_eq!(hits.len(), 1);
        assert_eq!(&v[hits[0].0..hits[0].0 + hits[0].1], "2");
        assert_eq!(Pos::of(v, hits[0].0).line, 2);
        assert_eq!(values_lines(v, "nvidia.com/gpu", "2").len(), 1);
    }
}
