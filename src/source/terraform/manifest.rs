//! Manifests written in HCL: `kubernetes_manifest` with `manifest = { … }` (or a local, a
//! `merge(…)`), and `kubectl_manifest` with `yaml_body = yamlencode(…)`/`jsonencode(…)`. A static
//! `for_each` makes one document per element, `count = 0` none.

use super::eval::{Eval, V, Val};
use crate::yaml::{Document, Shape, Span, construct};
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body, Structure};
use std::ops::Range;
use std::sync::Arc;

/// The documents of the HCL-written manifests in `body`.
pub fn read(body: &Body, ev: &mut Eval<'_, '_>, text: &Arc<str>) -> Vec<Document> {
    let mut out = Vec::new();
    for b in body.iter().filter_map(Structure::as_block) {
        let Some(field) = manifest_field(b) else {
            continue;
        };
        let Some(expr) = attr(b, field).and_then(|e| written(e, field == "yaml_body")) else {
            continue;
        };
        for_each_instance(b, ev, |ev| {
            let v = ev.eval(expr);
            if matches!(v.val, Val::Map(_)) {
                out.push(construct(text.clone(), &shape(&v)));
            }
        });
    }
    out
}

/// The attribute that holds the manifest of a resource that applies one.
pub fn manifest_field(b: &Block) -> Option<&'static str> {
    if b.ident.as_str() != "resource" {
        return None;
    }
    match b.labels.first().map(|l| l.as_str()) {
        Some("kubernetes_manifest") => Some("manifest"),
        Some("kubectl_manifest") => Some("yaml_body"),
        _ => None,
    }
}

/// The expression that is the object: the map itself, or what `yamlencode`/`jsonencode` encode
/// for a `yaml_body`. Heredocs and decoded strings are read as YAML elsewhere.
fn written(e: &Expression, encoded: bool) -> Option<&Expression> {
    match e {
        Expression::FuncCall(f)
            if encoded
                && !f.name.is_namespaced()
                && matches!(f.name.name.as_str(), "yamlencode" | "jsonencode") =>
        {
            f.args.iter().next()
        }
        Expression::Object(_) | Expression::Traversal(_) | Expression::FuncCall(_) if !encoded => {
            // `yamldecode(…)` is read as YAML text, not evaluated here.
            match e {
                Expression::FuncCall(f) if f.name.name.as_str() != "merge" => None,
                _ => Some(e),
            }
        }
        _ => None,
    }
}

pub fn attr<'b>(b: &'b Block, name: &str) -> Option<&'b Expression> {
    b.body
        .iter()
        .filter_map(Structure::as_attribute)
        .find(|a| a.key.as_str() == name)
        .map(|a| &a.value)
}

/// Runs `f` once per instance of the resource `b`: per element of a static `for_each` (with
/// `each` bound), per index of a static `count`, once with `each`/`count` unknown otherwise.
pub fn for_each_instance(b: &Block, ev: &mut Eval<'_, '_>, mut f: impl FnMut(&mut Eval<'_, '_>)) {
    let unknown = |name: &str, span: Range<usize>| V {
        val: Val::Unknown(name.to_string()),
        span,
    };
    let mark = ev.bound.len();
    if let Some(e) = attr(b, "for_each") {
        let coll = ev.eval(e);
        // A set of strings: each key and value is the string.
        let pairs = coll.pairs(true).unwrap_or_else(|| {
            vec![(
                unknown("each.key", coll.span.clone()),
                unknown("each.value", coll.span.clone()),
            )]
        });
        for (k, v) in pairs {
            ev.bound.push(("each".into(), each(k, v)));
            f(ev);
            ev.bound.truncate(mark);
        }
        return;
    }
    if let Some(e) = attr(b, "count") {
        let n = ev.eval(e);
        let count = n.str().and_then(|s| s.parse::<usize>().ok());
        match count {
            Some(0) => {}
            // Each index gives the same document unless it uses `count.index`: once is enough.
            Some(_) | None => {
                let index = V {
                    val: Val::Map(vec![(
                        "index".into(),
                        n.span.clone(),
                        unknown("count.index", n.span.clone()),
                    )]),
                    span: n.span.clone(),
                };
                ev.bound.push(("count".into(), index));
                f(ev);
                ev.bound.truncate(mark);
            }
        }
        return;
    }
    f(ev);
}

/// `each` as an object with `key` and `value`.
fn each(k: V, v: V) -> V {
    let span = k.span.clone();
    V {
        val: Val::Map(vec![
            ("key".into(), span.clone(), k),
            ("value".into(), v.span.clone(), v),
        ]),
        span,
    }
}

fn span(r: &Range<usize>) -> Span {
    Span::new(r.start, r.end)
}

/// A value as a document node. What is unknown is a placeholder (`${…}`), never judged.
pub fn shape(v: &V) -> Shape<'static> {
    let at = span(&v.span);
    match &v.val {
        Val::Null => Shape::plain(at, "null"),
        Val::Bool(b) => Shape::plain(at, if *b { "true" } else { "false" }),
        Val::Num(n) => Shape::plain(at, n.clone()),
        Val::Str(s) => Shape::str(at, s.clone()),
        Val::Unknown(t) => Shape::str(at, format!("${{{t}}}")),
        Val::List(l) => Shape::Seq {
            span: at,
            items: l.iter().map(shape).collect(),
        },
        Val::Map(m) => Shape::Map {
            span: at,
            entries: m
                .iter()
                .map(|(k, ks, x)| (Shape::str(span(ks), k.clone()), shape(x)))
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::read;

    #[test]
    fn an_hcl_map_manifest_is_a_document_located_at_its_attributes() {
        let text = r#"locals {
  gpu = "nvidia.com/gpu"
}
resource "kubernetes_manifest" "pool" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = "gpu" }
    spec = {
      template = {
        spec = {
          taints = [{ key = local.gpu, effect = "NoSchedule" }]
        }
      }
      weight = 10
    }
  }
}
"#;
        let f = read("main.tf".into(), text.into()).unwrap();
        assert_eq!(f.docs.len(), 1);
        let root = f.docs[0].root();
        assert_eq!(root.str_at(&["metadata", "name"]), Some("gpu"));
        let key = root
            .at(&["spec", "template", "spec", "taints"])
            .and_then(|t| t.items().next())
            .and_then(|t| t.get("key"))
            .unwrap();
        assert_eq!(key.as_str(), Some("nvidia.com/gpu"));
        // The local's value is written in this file: the finding points at it.
        assert_eq!(f.pos(key.span().start()).line, 2);
        let weight = root.at(&["spec", "weight"]).unwrap();
        assert_eq!(weight.yaml11(), Some(crate::yaml::Yaml11::Int));
    }

    #[test]
    fn for_each_expands_count_zero_drops_unknowns_are_placeholders() {
        let text = r#"variable "queues" {
  default = { a = 4, b = 8 }
}
variable "enabled" {
  default = false
}
resource "kubectl_manifest" "q" {
  for_each  = var.queues
  yaml_body = yamlencode({
    apiVersion = "kueue.x-k8s.io/v1beta2"
    kind       = "LocalQueue"
    metadata   = { name = each.key, namespace = module.ns.name }
    spec       = { clusterQueue = "gpu-${each.value}" }
  })
}
resource "kubernetes_manifest" "off" {
  count    = var.enabled ? 1 : 0
  manifest = { kind = "ClusterQueue" }
}
"#;
        let f = read("main.tf".into(), text.into()).unwrap();
        let names: Vec<_> = f
            .docs
            .iter()
            .map(|d| {
                (
                    d.root().str_at(&["metadata", "name"]).unwrap().to_string(),
                    d.root()
                        .str_at(&["spec", "clusterQueue"])
                        .unwrap()
                        .to_string(),
                    d.root()
                        .str_at(&["metadata", "namespace"])
                        .unwrap()
                        .to_string(),
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("a".into(), "gpu-4".into(), "${module.ns.name}".into()),
                ("b".into(), "gpu-8".into(), "${module.ns.name}".into())
            ]
        );
    }
}
