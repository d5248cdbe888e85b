//! EKS managed node groups (`eks_managed_node_groups` of a module, `aws_eks_node_group`
//! resources): nodes that exist without Karpenter, which pods schedule onto. Each group becomes a
//! NodePool-shaped object of its instance types, labels and taints, read as context, so a pod
//! pinned to a node group is checked against it and a reference to it is not missing.
//!
//! EKS labels every node of a group `eks.amazonaws.com/nodegroup: <name>` and
//! `eks.amazonaws.com/capacityType: ON_DEMAND|SPOT`; taint effects are written `NO_SCHEDULE`.

use super::eval::{Eval, V, Val};
use super::manifest::{attr, for_each_instance, shape};
use crate::yaml::{Document, Shape, Span, construct};
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body, Structure};
use std::ops::Range;
use std::sync::Arc;

/// The node groups `body` defines, as documents.
pub fn read(body: &Body, ev: &mut Eval<'_, '_>, text: &Arc<str>) -> Vec<Document> {
    let mut out = Vec::new();
    for b in body.iter().filter_map(Structure::as_block) {
        match (b.ident.as_str(), b.labels.first().map(|l| l.as_str())) {
            ("module", _) => {
                let Some(groups) = attr(b, "eks_managed_node_groups") else {
                    continue;
                };
                let defaults = attr(b, "eks_managed_node_group_defaults").map(|d| ev.eval(d));
                let maps = group_maps(groups, ev);
                // Merged in order: a later map's group of the same name replaces an earlier one.
                let mut entries: Vec<&(String, Range<usize>, V)> = Vec::new();
                for e in maps.iter().flat_map(V::entries) {
                    entries.retain(|(n, _, _)| *n != e.0);
                    entries.push(e);
                }
                for (name, ks, g) in entries {
                    let g = match &defaults {
                        Some(d) => merged(d, g),
                        None => g.clone(),
                    };
                    let name_v = g
                        .get("name")
                        .filter(|n| n.str().is_some())
                        .cloned()
                        .unwrap_or(V {
                            val: Val::Str(name.clone()),
                            span: ks.clone(),
                        });
                    out.extend(group(&name_v, &g, text));
                }
            }
            ("resource", Some("aws_eks_node_group")) => {
                for_each_instance(b, ev, |ev| {
                    let g = resource_group(b, ev);
                    if let Some(name) = g.get("name").cloned() {
                        out.extend(group(&name, &g, text));
                    }
                });
            }
            _ => {}
        }
    }
    out
}

/// The maps of groups an `eks_managed_node_groups` value may hold, in merge order: each
/// argument of a `merge`, and both branches of a condition, since a group a variable switches
/// on may exist in the cluster whatever the variable's default says.
fn group_maps(e: &Expression, ev: &mut Eval<'_, '_>) -> Vec<V> {
    match e {
        Expression::FuncCall(f) if !f.name.is_namespaced() && f.name.name.as_str() == "merge" => {
            f.args.iter().flat_map(|a| group_maps(a, ev)).collect()
        }
        Expression::Conditional(c) => {
            let mut maps = group_maps(&c.true_expr, ev);
            maps.extend(group_maps(&c.false_expr, ev));
            maps
        }
        Expression::Parenthesis(p) => group_maps(p.inner(), ev),
        _ => vec![ev.eval(e)],
    }
}

/// A group's settings over the module's defaults.
fn merged(defaults: &V, g: &V) -> V {
    let mut entries: Vec<(String, Range<usize>, V)> = defaults.entries().to_vec();
    for (k, ks, v) in g.entries() {
        entries.retain(|(d, _, _)| d != k);
        entries.push((k.clone(), ks.clone(), v.clone()));
    }
    V {
        val: Val::Map(entries),
        span: g.span.clone(),
    }
}

/// An `aws_eks_node_group` resource's settings in the module's shape (`taint` blocks as a list).
fn resource_group(b: &Block, ev: &mut Eval<'_, '_>) -> V {
    let mut entries = Vec::new();
    let span = b.ident.span().unwrap_or(0..0);
    for s in b.body.iter() {
        match s {
            Structure::Attribute(a) => {
                let key = match a.key.as_str() {
                    "node_group_name" => "name",
                    k => k,
                };
                let v = ev.eval(&a.value);
                entries.push((key.to_string(), a.key.span().unwrap_or(0..0), v));
            }
            Structure::Block(t) if t.ident.as_str() == "taint" => {
                let mut fields = Vec::new();
                for a in t.body.iter().filter_map(Structure::as_attribute) {
                    fields.push((
                        a.key.as_str().to_string(),
                        a.key.span().unwrap_or(0..0),
                        ev.eval(&a.value),
                    ));
                }
                let tspan = t.ident.span().unwrap_or(0..0);
                let taint = V {
                    val: Val::Map(fields),
                    span: tspan.clone(),
                };
                match entries.iter_mut().find(|(k, _, _)| k == "taints") {
                    Some((
                        _,
                        _,
                        V {
                            val: Val::List(l), ..
                        },
                    )) => l.push(taint),
                    _ => entries.push((
                        "taints".into(),
                        tspan.clone(),
                        V {
                            val: Val::List(vec![taint]),
                            span: tspan,
                        },
                    )),
                }
            }
            _ => {}
        }
    }
    V {
        val: Val::Map(entries),
        span,
    }
}

use hcl_edit::Span as _;

fn sp(r: &Range<usize>) -> Span {
    Span::new(r.start, r.end)
}

/// The NodePool of one group; `None` when its instance types are not known (it could be any).
fn group(name: &V, g: &V, text: &Arc<str>) -> Option<Document> {
    let name_text = name.str()?;
    let types = g.get("instance_types")?;
    if types.items().is_empty() || types.items().iter().any(|t| t.str().is_none()) {
        return None;
    }
    let at = sp(&name.span);
    let key = |k: &str| Shape::str(at, k);
    let spot = g
        .get("capacity_type")
        .and_then(V::str)
        .is_some_and(|c| c.eq_ignore_ascii_case("SPOT"));
    let cap = g.get("capacity_type").map_or(at, |c| sp(&c.span));
    let mut labels = vec![
        (
            key("eks.amazonaws.com/nodegroup"),
            Shape::str(at, name_text),
        ),
        (
            key("eks.amazonaws.com/capacityType"),
            Shape::str(cap, if spot { "SPOT" } else { "ON_DEMAND" }),
        ),
    ];
    if let Some(l) = g.get("labels") {
        for (k, ks, v) in l.entries() {
            labels.push((Shape::str(sp(ks), k.clone()), shape(v)));
        }
    }
    let requirements = vec![
        Shape::Map {
            span: sp(&types.span),
            entries: vec![
                (
                    key("key"),
                    Shape::str(sp(&types.span), "node.kubernetes.io/instance-type"),
                ),
                (key("operator"), Shape::str(sp(&types.span), "In")),
                (key("values"), shape(types)),
            ],
        },
        Shape::Map {
            span: cap,
            entries: vec![
                (key("key"), Shape::str(cap, "karpenter.sh/capacity-type")),
                (key("operator"), Shape::str(cap, "In")),
                (
                    key("values"),
                    Shape::Seq {
                        span: cap,
                        items: vec![Shape::str(cap, if spot { "spot" } else { "on-demand" })],
                    },
                ),
            ],
        },
    ];
    let taints: Vec<Shape> = match g.get("taints") {
        Some(t) => match &t.val {
            Val::Map(m) => m.iter().filter_map(|(_, _, t)| taint(t)).collect(),
            Val::List(l) => l.iter().filter_map(taint).collect(),
            _ => Vec::new(),
        },
        None => Vec::new(),
    };
    let mut spec = vec![(
        key("requirements"),
        Shape::Seq {
            span: at,
            items: requirements,
        },
    )];
    if !taints.is_empty() {
        spec.push((
            key("taints"),
            Shape::Seq {
                span: at,
                items: taints,
            },
        ));
    }
    let limits = g.get("max_size").and_then(|m| limits(m, types));
    let map = |entries| Shape::Map { span: at, entries };
    let root = map(vec![
        (key("apiVersion"), Shape::str(at, "karpenter.sh/v1")),
        (key("kind"), Shape::str(at, "NodePool")),
        (
            key("metadata"),
            map(vec![
                (key("name"), Shape::str(at, name_text)),
                (
                    key("annotations"),
                    map(vec![(
                        key("gpuops.dev/defined-by"),
                        Shape::str(at, "EKS managed node group"),
                    )]),
                ),
            ]),
        ),
        (key("spec"), {
            let mut pool = vec![(
                key("template"),
                map(vec![
                    (key("metadata"), map(vec![(key("labels"), map(labels))])),
                    (key("spec"), map(spec)),
                ]),
            )];
            pool.extend(limits.map(|l| (key("limits"), l)));
            map(pool)
        }),
    ]);
    Some(construct(text.clone(), &root))
}

/// What `max_size` nodes of the group's largest instance type hold, as a NodePool's `limits`
/// (so capacity and cost count the group); `None` when a type is not in the catalog.
fn limits(max: &V, types: &V) -> Option<Shape<'static>> {
    let n: u64 = max.str()?.parse().ok()?;
    let mut vcpu = 0u64;
    let mut mem = 0u64;
    let mut gpus = 0u64;
    for t in types.items() {
        let i = crate::catalog::instances()
            .iter()
            .find(|i| Some(i.instance_type) == t.str())?;
        vcpu = vcpu.max(u64::from(i.vcpu));
        mem = mem.max(i.memory_mib);
        gpus = gpus.max(u64::from(i.gpu_count));
    }
    let at = sp(&max.span);
    let mut entries = vec![
        (
            Shape::str(at, "cpu"),
            Shape::plain(at, (n * vcpu).to_string()),
        ),
        (
            Shape::str(at, "memory"),
            Shape::str(at, format!("{}Mi", n * mem)),
        ),
    ];
    if gpus > 0 {
        entries.push((
            Shape::str(at, "nvidia.com/gpu"),
            Shape::plain(at, (n * gpus).to_string()),
        ));
    }
    Some(Shape::Map { span: at, entries })
}

/// A taint in Kubernetes' spelling (`NO_SCHEDULE` → `NoSchedule`).
fn taint(t: &V) -> Option<Shape<'static>> {
    let key = t.get("key")?;
    let effect = t.get("effect")?;
    let e = match effect.str()? {
        "NO_SCHEDULE" => "NoSchedule",
        "NO_EXECUTE" => "NoExecute",
        "PREFER_NO_SCHEDULE" => "PreferNoSchedule",
        _ => return None,
    };
    let mut entries = vec![
        (Shape::str(sp(&key.span), "key"), shape(key)),
        (
            Shape::str(sp(&effect.span), "effect"),
            Shape::str(sp(&effect.span), e),
        ),
    ];
    if let Some(v) = t.get("value").filter(|v| !matches!(v.val, Val::Null)) {
        entries.push((Shape::str(sp(&v.span), "value"), shape(v)));
    }
    Some(Shape::Map {
        span: sp(&t.span),
        entries,
    })
}

#[cfg(test)]
mod tests {
    fn derived(text: &str) -> Vec<crate::source::SourceFile> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eks.tf");
        std::fs::write(&p, text).unwrap();
        super::super::read_module(&[p]).pop().unwrap().unwrap()
    }

    #[test]
    fn a_managed_gpu_node_group_is_a_tainted_pool_of_its_instance_types() {
        let text = r#"module "eks" {
  source = "terraform-aws-modules/eks/aws"
  eks_managed_node_group_defaults = { capacity_type = "SPOT" }
  eks_managed_node_groups = {
    gpu = {
      instance_types = ["g5.2xlarge"]
      max_size       = 2
      labels         = { accelerator = "nvidia" }
      taints = {
        gpu = { key = "nvidia.com/gpu", value = "true", effect = "NO_SCHEDULE" }
      }
    }
    cpu = { instance_types = var.cpu_types }
  }
}
resource "aws_eks_node_group" "infer" {
  node_group_name = "infer"
  instance_types  = ["g6.xlarge"]
  taint {
    key    = "nvidia.com/gpu"
    effect = "NO_EXECUTE"
  }
}
"#;
        let files = derived(text);
        assert_eq!(files.len(), 1);
        let f = &files[0];
        assert_eq!(f.role, crate::source::Role::Derived);
        assert!(f.is_context());
        let names: Vec<_> = f
            .docs
            .iter()
            .map(|d| d.root().str_at(&["metadata", "name"]).unwrap())
            .collect();
        assert_eq!(names, ["gpu", "infer"]);
        let gpu = f.docs[0].root();
        let t = gpu
            .at(&["spec", "template", "spec", "taints"])
            .unwrap()
            .items()
            .next()
            .unwrap();
        assert_eq!(t.str_at(&["effect"]), Some("NoSchedule"));
        assert_eq!(f.pos(t.get("key").unwrap().span().start()).line, 10);
        // max_size nodes of its instance type bound what it holds (and costs).
        assert_eq!(gpu.str_at(&["spec", "limits", "nvidia.com/gpu"]), Some("2"));
        let labels = gpu.at(&["spec", "template", "metadata", "labels"]).unwrap();
        assert_eq!(
            labels.str_at(&["eks.amazonaws.com/capacityType"]),
            Some("SPOT")
        );
        assert_eq!(labels.str_at(&["accelerator"]), Some("nvidia"));
        let infer = f.docs[1].root();
        let t = infer
            .at(&["spec", "template", "spec", "taints"])
            .unwrap()
            .items()
            .next()
            .unwrap();
        assert_eq!(t.str_at(&["effect"]), Some("NoExecute"));
    }

    #[test]
    fn groups_merged_in_under_a_condition_may_exist() {
        // The capacity-block group exists only once a reservation id is given; the default
        // is empty, but a cluster built with one has it.
        let text = r#"variable "reservation_id" {
  default = ""
}
module "eks" {
  source = "terraform-aws-modules/eks/aws"
  eks_managed_node_groups = merge({
    gpu = { instance_types = ["g6.4xlarge"], labels = { NodeGroupType = "g6-mng" } }
    }, length(var.reservation_id) > 0 ? {
    cbr = { instance_types = ["p4de.24xlarge"], labels = { node-type = "p4de" } }
  } : {}, { gpu = { instance_types = ["g6.8xlarge"] } })
}
"#;
        let files = derived(text);
        let names: Vec<_> = files[0]
            .docs
            .iter()
            .map(|d| d.root().str_at(&["metadata", "name"]).unwrap())
            .collect();
        assert_eq!(names, ["cbr", "gpu"]);
        // The last map's `gpu` replaces the first one.
        let gpu = files[0].docs[1].root();
        assert!(
            gpu.at(&["spec", "template", "metadata", "labels", "NodeGroupType"])
                .is_none()
        );
    }
}
