//! Helm values of the charts whose objects the linter knows how to derive. Today one: the
//! `karpenter-resources` chart of the EKS data add-ons (`karpenter_resources_helm_config` of the
//! add-ons modules, or a `helm_release` of that chart), which makes one NodePool and one
//! EC2NodeClass per release from `name`, `nodePool` (labels, taints, requirements, limits,
//! disruption, weight) and `ec2NodeClass`. Its pools are where the platform's GPU pods land, so
//! they are read as context; the values stay where they are written (the heredoc in the `.tf`).

use super::eval::{Eval, Val};
use super::heredoc;
use super::manifest::{attr, shape};
use crate::yaml::compat;
use crate::yaml::{Budget, Document, Node, Shape, Span, construct};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body, Structure};
use std::ops::Range;
use std::sync::Arc;

/// One element of a release's `values` list.
enum Values<'e> {
    /// A YAML heredoc, parsed where it stands.
    Heredoc(Range<usize>),
    /// `yamlencode({ … })` / `jsonencode({ … })`: evaluated.
    Encoded(&'e Expression),
}

/// The objects the known charts' values in `body` make.
pub fn read(body: &Body, ev: &mut Eval<'_, '_>, text: &Arc<str>) -> Vec<Document> {
    let mut found = Vec::new();
    for b in body.iter().filter_map(Structure::as_block) {
        releases(b, &mut found);
    }
    let mut out = Vec::new();
    let mut heredocs = Vec::new();
    for v in found {
        match v {
            Values::Heredoc(r) => heredocs.push(r),
            Values::Encoded(e) => {
                let v = ev.eval(e);
                if matches!(v.val, Val::Map(_)) {
                    let values = construct(text.clone(), &shape(&v));
                    out.extend(karpenter_resources(values.root(), text));
                }
            }
        }
    }
    for range in heredocs
        .into_iter()
        .filter_map(|s| heredoc::heredoc_body(text, s))
    {
        let blanked = heredoc::blank_outside(text, range);
        let blanked: Arc<str> = Arc::from(heredoc::mask_quoting_interpolations(&blanked));
        if compat::structural_template_markers(&heredoc::mask_values(&blanked)).is_some() {
            continue;
        }
        let parsed = compat::parse_shared(&blanked, Budget::default());
        for d in &parsed.docs {
            out.extend(karpenter_resources(d.root(), text));
        }
    }
    out
}

/// The values of `karpenter-resources` releases in a block.
fn releases<'e>(b: &'e Block, out: &mut Vec<Values<'e>>) {
    let chart = attr(b, "chart").and_then(|c| match c {
        Expression::String(s) => Some(s.value().as_str()),
        _ => None,
    });
    if b.ident.as_str() == "resource"
        && b.labels.first().map(|l| l.as_str()) == Some("helm_release")
        && chart == Some("karpenter-resources")
    {
        values(attr(b, "values"), out);
    }
    if let Some(Expression::Object(releases)) = attr(b, "karpenter_resources_helm_config") {
        for (_, r) in releases.iter() {
            if let Expression::Object(r) = r.expr() {
                for (k, v) in r.iter() {
                    if k.as_ident().map(|i| i.as_str()) == Some("values") {
                        values(Some(v.expr()), out);
                    }
                }
            }
        }
    }
}

/// The elements of a `values = [<<-EOT … EOT, yamlencode({ … }), …]` list.
fn values<'e>(e: Option<&'e Expression>, out: &mut Vec<Values<'e>>) {
    if let Some(Expression::Array(a)) = e {
        for v in a.iter() {
            match v {
                Expression::HeredocTemplate(h) => out.extend(h.span().map(Values::Heredoc)),
                Expression::FuncCall(f)
                    if !f.name.is_namespaced()
                        && matches!(f.name.name.as_str(), "yamlencode" | "jsonencode") =>
                {
                    out.extend(f.args.iter().next().map(Values::Encoded));
                }
                _ => {}
            }
        }
    }
}

/// The chart's NodePool and EC2NodeClass for one release's values.
fn karpenter_resources(values: Node<'_>, text: &Arc<str>) -> Vec<Document> {
    let Some(name) = values.get("name").filter(|n| n.as_str().is_some()) else {
        return Vec::new();
    };
    let at = name.span();
    let key = |k: &str| Shape::str(at, k);
    let str = |v: &str| Shape::str(at, v);
    let map = |entries| Shape::Map { span: at, entries };
    let enabled = |n: Option<Node<'_>>| {
        n.and_then(|n| n.get("enabled"))
            .and_then(|e| e.as_str())
            .is_none_or(|e| e != "false")
    };
    let mut out = Vec::new();
    let pool = values.get("nodePool");
    if pool.is_some() && enabled(pool) {
        let field = |k: &str| pool.and_then(|p| p.get(k));
        // `labels` is a list of one-entry maps, each rendered into the pool's labels after the
        // chart's own two: a label of the same name comes later and wins when Helm decodes it.
        let given: Vec<(Node, Node)> = field("labels")
            .map(|l| l.items())
            .into_iter()
            .flatten()
            .flat_map(|l| l.as_map().into_iter().flatten())
            .collect();
        let mut labels: Vec<(Shape, Shape)> = ["NodePool", "NodeGroupType"]
            .into_iter()
            .filter(|own| !given.iter().any(|(k, _)| k.as_str() == Some(own)))
            .map(|own| (key(own), Shape::Copy(name)))
            .collect();
        labels.extend(
            given
                .into_iter()
                .map(|(k, v)| (Shape::Copy(k), Shape::Copy(v))),
        );
        let mut spec = vec![(
            key("nodeClassRef"),
            map(vec![
                (key("group"), str("karpenter.k8s.aws")),
                (key("kind"), str("EC2NodeClass")),
                (key("name"), Shape::Copy(name)),
            ]),
        )];
        for k in ["taints", "requirements"] {
            if let Some(v) = field(k).filter(|v| v.as_seq().is_some()) {
                spec.push((key(k), Shape::Copy(v)));
            }
        }
        let mut pool_spec = vec![(
            key("template"),
            map(vec![
                (key("metadata"), map(vec![(key("labels"), map(labels))])),
                (key("spec"), map(spec)),
            ]),
        )];
        for k in ["disruption", "limits", "weight"] {
            if let Some(v) = field(k).filter(|v| !v.is_null()) {
                pool_spec.push((key(k), Shape::Copy(v)));
            }
        }
        out.push(object(
            "karpenter.sh/v1",
            "NodePool",
            name,
            map(pool_spec),
            at,
            text,
        ));
    }
    let class = values.get("ec2NodeClass");
    if class.is_some() && enabled(class) {
        let mut spec = Vec::new();
        if let Some(f) = class
            .and_then(|c| c.get("amiFamily"))
            .filter(|f| !f.is_null())
        {
            spec.push((key("amiFamily"), Shape::Copy(f)));
        }
        out.push(object(
            "karpenter.k8s.aws/v1",
            "EC2NodeClass",
            name,
            map(spec),
            at,
            text,
        ));
    }
    out
}

fn object(
    api: &str,
    kind: &str,
    name: Node<'_>,
    spec: Shape<'_>,
    at: Span,
    text: &Arc<str>,
) -> Document {
    let key = |k: &str| Shape::str(at, k);
    let root = Shape::Map {
        span: at,
        entries: vec![
            (key("apiVersion"), Shape::str(at, api)),
            (key("kind"), Shape::str(at, kind)),
            (
                key("metadata"),
                Shape::Map {
                    span: at,
                    entries: vec![
                        (key("name"), Shape::Copy(name)),
                        (
                            key("annotations"),
                            Shape::Map {
                                span: at,
                                entries: vec![(
                                    key(crate::model::nodepool::DEFINED_BY),
                                    Shape::str(at, crate::model::nodepool::CHART_VALUES),
                                )],
                            },
                        ),
                    ],
                },
            ),
            (key("spec"), spec),
        ],
    };
    construct(text.clone(), &root)
}

#[cfg(test)]
mod tests {
    #[test]
    fn karpenter_resources_values_make_the_chart_s_pool_and_class() {
        let text = r#"module "eks_data_addons" {
  enable_karpenter_resources = true
  karpenter_resources_helm_config = {
    g6-gpu = {
      values = [
        <<-EOT
      name: g6-gpu
      clusterName: ${module.eks.cluster_name}
      ec2NodeClass:
        amiFamily: Bottlerocket
      nodePool:
        labels:
          - type: karpenter
          - gpuType: l4
        taints:
          - key: nvidia.com/gpu
            value: "Exists"
            effect: "NoSchedule"
        requirements:
          - key: "karpenter.k8s.aws/instance-family"
            operator: In
            values: ["g6"]
        limits:
          cpu: 1000
      EOT
      ]
    }
  }
}
"#;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("addons.tf");
        std::fs::write(&p, text).unwrap();
        let files = super::super::read_module(&[p]).pop().unwrap().unwrap();
        assert_eq!(files.len(), 1);
        let f = &files[0];
        let kinds: Vec<_> = f
            .docs
            .iter()
            .map(|d| d.root().str_at(&["kind"]).unwrap())
            .collect();
        assert_eq!(kinds, ["NodePool", "EC2NodeClass"]);
        let pool = f.docs[0].root();
        let labels = pool
            .at(&["spec", "template", "metadata", "labels"])
            .unwrap();
        assert_eq!(labels.str_at(&["NodeGroupType"]), Some("g6-gpu"));
        assert_eq!(labels.str_at(&["gpuType"]), Some("l4"));
        let taint = pool
            .at(&["spec", "template", "spec", "taints"])
            .unwrap()
            .items()
            .next()
            .unwrap();
        assert_eq!(f.pos(taint.get("key").unwrap().span().start()).line, 16);
        assert_eq!(
            pool.str_at(&["spec", "template", "spec", "nodeClassRef", "name"]),
            Some("g6-gpu")
        );
        // A label the values give again replaces the chart's own: Helm keeps the last key.
        let p = dir.path().join("addons.tf");
        std::fs::write(
            &p,
            text.replace("- type: karpenter", "- NodeGroupType: spark-executor-gpu"),
        )
        .unwrap();
        let files = super::super::read_module(&[p]).pop().unwrap().unwrap();
        let labels = files[0].docs[0]
            .root()
            .at(&["spec", "template", "metadata", "labels"])
            .unwrap();
        assert_eq!(
            labels.str_at(&["NodeGroupType"]),
            Some("spark-executor-gpu")
        );
        assert_eq!(labels.str_at(&["NodePool"]), Some("g6-gpu"));
    }

    #[test]
    fn a_release_s_yamlencoded_values_are_evaluated() {
        let text = r#"locals {
  gpu_taint = { key = "nvidia.com/gpu", effect = "NoSchedule" }
}
resource "helm_release" "h100" {
  name  = "h100"
  chart = "karpenter-resources"
  values = [yamlencode({
    name = "h100"
    nodePool = {
      labels = [{ gpu = "h100" }]
      taints = [local.gpu_taint]
    }
    ec2NodeClass = { enabled = false }
  })]
}
"#;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h100.tf");
        std::fs::write(&p, text).unwrap();
        let files = super::super::read_module(&[p]).pop().unwrap().unwrap();
        let f = &files[0];
        assert_eq!(f.docs.len(), 1, "the node class is disabled");
        let pool = f.docs[0].root();
        assert_eq!(pool.str_at(&["metadata", "name"]), Some("h100"));
        let taint = pool
            .at(&["spec", "template", "spec", "taints"])
            .unwrap()
            .items()
            .next()
            .unwrap();
        assert_eq!(taint.str_at(&["key"]), Some("nvidia.com/gpu"));
        assert_eq!(f.pos(taint.get("key").unwrap().span().start()).line, 2);
    }
}

/// The default a variable's declaration in `text` gives it (`variable "kueue_version" {
/// default = "v0.8.1" }`), as written. Text only, as for [`input_versions`].
pub fn variable_default<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let at = text.find(&format!("variable \"{name}\""))?;
    text[at..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('}'))
        .find_map(|l| {
            let value = l.trim_start().strip_prefix("default")?.trim_start();
            Some(value.strip_prefix('=')?.trim().trim_matches('"'))
        })
}

/// The string a `locals` block in `text` gives `name` (`karpenter_version = "v0.34.0"`), as
/// written. Text only, as [`variable_default`].
pub fn local_value<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let mut in_locals = false;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("locals") && t.ends_with('{') {
            in_locals = true;
        } else if in_locals && l.starts_with('}') {
            in_locals = false;
        } else if in_locals
            && let Some(v) = t.strip_prefix(name).map(str::trim_start)
            && let Some(v) = v.strip_prefix('=')
        {
            return v.trim().strip_prefix('"')?.split('"').next();
        }
    }
    None
}

/// The `version`s of module inputs named for a controller, as Cluster Toolkit's modules take
/// them (`kueue = { install = true, version = "v0.10.0" }`), or their `chart_version`s, as EKS
/// Blueprints add-ons take them (`karpenter = { chart_version = "v0.34.0" }`): the first before
/// the object closes at its own indentation. Text only: the module's inputs need no evaluation.
pub fn input_versions<'t>(text: &'t str, name: &str) -> Vec<&'t str> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let body = line.trim_start();
        let opens = body
            .strip_prefix(name)
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix('='))
            .is_some_and(|r| r.trim() == "{");
        if !opens {
            continue;
        }
        let indent = line.len() - body.len();
        for inner in lines.by_ref() {
            let b = inner.trim_start();
            if b.starts_with('}') && inner.len() - b.len() <= indent {
                break;
            }
            if let Some(v) = b
                .strip_prefix("version")
                .or_else(|| b.strip_prefix("chart_version"))
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('='))
                .map(|r| r.trim().trim_matches('"'))
                .filter(|v| !v.is_empty())
            {
                out.push(v);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod input_tests {
    use super::input_versions;

    #[test]
    fn a_module_input_names_the_release() {
        let tf = "module \"install\" {\n  kueue = {\n    install = true\n    vars = {\n      n = 1\n    }\n    version = \"v0.10.0\"\n  }\n  jobset = {\n    version = \"v0.7.2\"\n  }\n}\n";
        assert_eq!(input_versions(tf, "kueue"), vec!["v0.10.0"]);
        // Not beyond the object's end.
        let other = "kueue = {\n  install = true\n}\nversion = \"1.2.0\"\n";
        assert!(input_versions(other, "kueue").is_empty());
        // EKS Blueprints add-ons: the chart's version, beside an input of a longer name.
        let addons = "  karpenter_node = {\n    version = \"9\"\n  }\n  karpenter = {\n    chart_version       = \"v0.34.0\"\n  }\n";
        assert_eq!(input_versions(addons, "karpenter"), vec!["v0.34.0"]);
    }
}
