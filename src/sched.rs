//! Static scheduling model: can a pod template land on a NodePool?
//!
//! Follows Karpenter's semantics: a pool's requirement set is its `requirements` plus every
//! template label (as `In [value]`) plus `karpenter.sh/nodepool` and `karpenter.k8s.aws/ec2nodeclass`;
//! the pod's nodeSelector and one required-affinity term at a time must intersect it; well-known
//! labels the pool does not mention are unconstrained, custom ones are unknown and do not match.
//! All hard (NoSchedule/NoExecute) taints must be tolerated; startup taints do not count.

use crate::catalog;
use crate::diag::Loc;
use crate::model::{Expr, NodePool, PodTemplate, Taint, Toleration};
use crate::yaml::Node;

/// One `key=value` the pod requires (nodeSelector entry or a Kueue-injected flavor label).
#[derive(Debug, Clone)]
pub struct Sel<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub loc: Loc,
}

/// One requirement of the pod, in node-affinity form.
#[derive(Debug, Clone)]
pub struct Req<'a> {
    pub key: &'a str,
    pub op: &'a str,
    pub values: Vec<&'a str>,
    pub loc: Loc,
}

impl<'a> Req<'a> {
    pub fn from_sel(s: &Sel<'a>) -> Self {
        Req {
            key: s.key,
            op: "In",
            values: vec![s.value],
            loc: s.loc,
        }
    }
    pub fn from_expr(e: &Expr<'a>, file: crate::diag::FileId) -> Self {
        Req {
            key: e.key,
            op: e.op,
            values: e.values.clone(),
            loc: Loc {
                file,
                span: e.node.span,
            },
        }
    }
    pub fn describe(&self) -> String {
        match self.op {
            "In" if self.values.len() == 1 => format!("{}={}", self.key, self.values[0]),
            "Exists" | "DoesNotExist" => format!("{} {}", self.key, self.op),
            _ => format!("{} {} [{}]", self.key, self.op, self.values.join(", ")),
        }
    }
}

/// The pod's node constraints: ANDed requirements plus ORed affinity terms.
#[derive(Debug, Clone, Default)]
pub struct PodConstraints<'a> {
    pub base: Vec<Req<'a>>,
    /// Required node-affinity terms; empty means no affinity.
    pub terms: Vec<Vec<Req<'a>>>,
    pub tolerations: Vec<Toleration<'a>>,
    /// Extended resources the pod requests (for EKS's ExtendedResourceToleration).
    pub extended: Vec<&'a str>,
    /// nvidia.com/gpu one pod needs (for the instance-size check).
    pub nvidia_gpus: u64,
}

impl<'a> PodConstraints<'a> {
    pub fn from_template(t: &PodTemplate<'a>) -> Self {
        let base = t
            .node_selector()
            .into_iter()
            .filter_map(|(k, _, v)| {
                Some(Req {
                    key: k,
                    op: "In",
                    values: vec![v.as_str()?],
                    loc: t.loc(v),
                })
            })
            .collect();
        let terms = t
            .affinity_terms()
            .iter()
            .map(|term| term.iter().map(|e| Req::from_expr(e, t.file)).collect())
            .collect();
        let mut extended: Vec<&str> = Vec::new();
        let mut nvidia: u64 = 0;
        let mut nvidia_init: u64 = 0;
        for c in &t.containers {
            for (name, _) in c.accelerators() {
                if !extended.contains(&name) {
                    extended.push(name);
                }
            }
            let n = c
                .limits
                .and_then(|l| l.get("nvidia.com/gpu"))
                .or_else(|| c.requests.and_then(|r| r.get("nvidia.com/gpu")))
                .and_then(Node::as_str)
                .and_then(crate::quantity::whole)
                .unwrap_or(0)
                .max(0) as u64;
            if c.init {
                nvidia_init = nvidia_init.max(n);
            } else {
                nvidia += n;
            }
        }
        PodConstraints {
            base,
            terms,
            tolerations: t.tolerations(),
            extended,
            nvidia_gpus: nvidia.max(nvidia_init),
        }
    }
}

/// Why a pod's label constraints do not meet a pool.
#[derive(Debug, Clone)]
pub struct LabelIssue {
    /// The pod's constraint (selector entry, affinity expression, injected flavor label).
    pub pod: Loc,
    pub key: String,
    /// The pool's side (the label or requirement that disagrees), when there is one.
    pub pool: Option<Loc>,
    pub reason: String,
}

#[derive(Debug, Clone, Default)]
pub struct Verdict<'a> {
    /// Label mismatches of the closest affinity term (empty: the labels fit).
    pub labels: Vec<LabelIssue>,
    /// Hard taints no toleration matches.
    pub untolerated: Vec<Taint<'a>>,
    /// Hard taints tolerated only by EKS's ExtendedResourceToleration admission plugin.
    pub eks_only: Vec<Taint<'a>>,
}

impl Verdict<'_> {
    pub fn fits(&self) -> bool {
        self.labels.is_empty() && self.untolerated.is_empty()
    }
}

/// Labels Karpenter or Kubernetes put on every node with values from the instance or the cloud:
/// a pool need not mention them for a pod to select them.
pub fn is_well_known(key: &str) -> bool {
    matches!(
        key,
        "karpenter.sh/capacity-type"
            | "karpenter.sh/nodepool"
            | "topology.kubernetes.io/zone"
            | "topology.kubernetes.io/region"
            | "topology.k8s.aws/zone-id"
            | "node.kubernetes.io/instance-type"
            | "kubernetes.io/arch"
            | "kubernetes.io/os"
            | "kubernetes.io/hostname"
            | "node.kubernetes.io/windows-build"
            | "failure-domain.beta.kubernetes.io/zone"
            | "failure-domain.beta.kubernetes.io/region"
            | "beta.kubernetes.io/arch"
            | "beta.kubernetes.io/os"
            | "beta.kubernetes.io/instance-type"
    ) || key.starts_with("karpenter.k8s.aws/")
}

/// Fixed value sets of some well-known labels.
fn fixed_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "karpenter.sh/capacity-type" => Some(&["on-demand", "spot", "reserved"]),
        "kubernetes.io/arch" | "beta.kubernetes.io/arch" => Some(&["amd64", "arm64"]),
        "kubernetes.io/os" | "beta.kubernetes.io/os" => Some(&["linux", "windows"]),
        "karpenter.k8s.aws/instance-tenancy" => Some(&["default", "dedicated"]),
        _ => None,
    }
}

/// One constraint of the pool on a key, with where it is written.
#[derive(Debug, Clone)]
struct PoolReq<'a> {
    op: &'a str,
    values: Vec<&'a str>,
    loc: Loc,
}

/// The pool's requirement set, per key.
pub struct PoolReqs<'a> {
    by_key: Vec<(&'a str, Vec<PoolReq<'a>>)>,
}

impl<'a> PoolReqs<'a> {
    pub fn of(pool: &NodePool<'a>) -> Self {
        let mut by_key: Vec<(&'a str, Vec<PoolReq<'a>>)> = Vec::new();
        let mut add = |key: &'a str, r: PoolReq<'a>| match by_key.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => by_key.push((key, vec![r])),
        };
        for (k, _, v) in &pool.labels {
            if let Some(val) = v.as_str() {
                add(
                    k,
                    PoolReq {
                        op: "In",
                        values: vec![val],
                        loc: pool.loc(v),
                    },
                );
            }
        }
        for r in &pool.requirements {
            add(
                normalize_key(r.key),
                PoolReq {
                    op: r.op,
                    values: r.values.clone(),
                    loc: pool.loc(r.node),
                },
            );
        }
        add(
            "karpenter.sh/nodepool",
            PoolReq {
                op: "In",
                values: vec![pool.name],
                loc: pool.loc(pool.anchor),
            },
        );
        if let Some(nc) = pool.node_class_ref.and_then(|n| n.get("name")) {
            if let Some(v) = nc.as_str() {
                add(
                    "karpenter.k8s.aws/ec2nodeclass",
                    PoolReq {
                        op: "In",
                        values: vec![v],
                        loc: pool.loc(nc),
                    },
                );
            }
        }
        PoolReqs { by_key }
    }

    fn get(&self, key: &str) -> Option<&[PoolReq<'a>]> {
        self.by_key
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether the pool sets this label on its nodes (by template label or requirement).
    pub fn defines(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|rs| rs.iter().any(|r| matches!(r.op, "In" | "Exists" | "Gt" | "Lt" | "Gte" | "Lte")))
    }

    /// Whether a node of this pool may carry `key=value`.
    fn admits(&self, key: &str, value: &str) -> Result<(), Option<Loc>> {
        let Some(rs) = self.get(key) else {
            return match fixed_values(key) {
                Some(set) if !set.contains(&value) => Err(None),
                _ => Ok(()),
            };
        };
        for r in rs {
            let ok = match r.op {
                "In" => r.values.contains(&value),
                "NotIn" => !r.values.contains(&value),
                "Exists" => true,
                "DoesNotExist" => false,
                op @ ("Gt" | "Lt" | "Gte" | "Lte") => numeric(op, value, &r.values),
                _ => true,
            };
            if !ok {
                return Err(Some(r.loc));
            }
        }
        Ok(())
    }

    /// The first pool requirement on `key` (for pointing at the other side).
    fn first_loc(&self, key: &str) -> Option<Loc> {
        self.get(key).and_then(|rs| rs.first()).map(|r| r.loc)
    }
}

fn numeric(op: &str, value: &str, bound: &[&str]) -> bool {
    let (Ok(v), Some(Ok(b))) = (value.parse::<i64>(), bound.first().map(|b| b.parse::<i64>())) else {
        return false;
    };
    match op {
        "Gt" => v > b,
        "Lt" => v < b,
        "Gte" => v >= b,
        "Lte" => v <= b,
        _ => false,
    }
}

/// Deprecated beta keys Karpenter normalizes to their stable equivalents.
fn normalize_key(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        k => k,
    }
}

/// Candidate values to try for a key when the pod's requirement is not a plain `In`.
fn pool_values<'b>(pr: &'b PoolReqs<'_>, key: &str) -> Vec<&'b str> {
    pr.get(key)
        .into_iter()
        .flatten()
        .filter(|r| r.op == "In")
        .flat_map(|r| r.values.iter().copied())
        .collect()
}

/// Checks one pod requirement against the pool.
fn check_req(pr: &PoolReqs<'_>, req: &Req<'_>) -> Option<LabelIssue> {
    let key = normalize_key(req.key);
    let issue = |reason: String, pool: Option<Loc>| LabelIssue {
        pod: req.loc,
        key: req.key.to_string(),
        pool,
        reason,
    };
    let defined = pr.get(key).is_some();
    if !defined && !is_well_known(key) {
        return match req.op {
            "NotIn" | "DoesNotExist" => None,
            _ => Some(issue(
                format!("the pool does not set label `{key}` on its nodes"),
                None,
            )),
        };
    }
    let in_values = pool_values(pr, key);
    match req.op {
        "In" => {
            let any = req.values.iter().any(|v| pr.admits(key, v).is_ok());
            if any {
                None
            } else {
                let loc = req
                    .values
                    .iter()
                    .find_map(|v| pr.admits(key, v).err())
                    .flatten();
                let allowed = if in_values.is_empty() {
                    String::new()
                } else {
                    format!(" (it allows {})", in_values.join(", "))
                };
                Some(issue(
                    format!(
                        "the pool's nodes never have `{key}` = {}{allowed}",
                        req.values.join(" or ")
                    ),
                    loc.or_else(|| pr.first_loc(key)),
                ))
            }
        }
        "NotIn" => {
            if !in_values.is_empty() && in_values.iter().all(|v| req.values.contains(v)) {
                Some(issue(
                    format!("every `{key}` value the pool allows is excluded"),
                    pr.first_loc(key),
                ))
            } else {
                None
            }
        }
        "Exists" => pr
            .get(key)
            .into_iter()
            .flatten()
            .find(|r| r.op == "DoesNotExist")
            .map(|r| issue(format!("the pool requires `{key}` to be absent"), Some(r.loc))),
        "DoesNotExist" => pr
            .get(key)
            .into_iter()
            .flatten()
            .find(|r| matches!(r.op, "In" | "Exists"))
            .map(|r| issue(format!("the pool always sets `{key}`"), Some(r.loc))),
        "Gt" | "Lt" => {
            if in_values.is_empty() {
                return None;
            }
            let ok = in_values
                .iter()
                .any(|v| numeric(req.op, v, &req.values) && pr.admits(key, v).is_ok());
            (!ok).then(|| {
                issue(
                    format!(
                        "no `{key}` value the pool allows ({}) is {} {}",
                        in_values.join(", "),
                        req.op,
                        req.values.join(",")
                    ),
                    pr.first_loc(key),
                )
            })
        }
        _ => None,
    }
}

/// GPU instance types from the catalog a pool is limited to, when its requirements name only
/// known families, types or GPU names (`None`: the pool's instance set is open or unknown).
pub fn bounded_instances(pool: &NodePool<'_>) -> Option<Vec<&'static catalog::Instance>> {
    let bounding = pool.requirements.iter().any(|r| {
        r.op == "In"
            && !r.values.is_empty()
            && match r.key {
                "node.kubernetes.io/instance-type" => r
                    .values
                    .iter()
                    .all(|v| catalog::instances().iter().any(|i| i.instance_type == *v)),
                "karpenter.k8s.aws/instance-family" => r
                    .values
                    .iter()
                    .all(|v| catalog::instances().iter().any(|i| i.family == *v)),
                "karpenter.k8s.aws/instance-gpu-name" => {
                    r.values.iter().all(|v| catalog::gpu_names().contains(v))
                }
                _ => false,
            }
    });
    if !bounding {
        return None;
    }
    Some(
        catalog::instances()
            .iter()
            .filter(|i| {
                pool.requirements.iter().all(|r| match i.label(r.key) {
                    Some(v) => expr_holds(r.op, &r.values, &v),
                    None => true,
                })
            })
            .collect(),
    )
}

fn expr_holds(op: &str, values: &[&str], v: &str) -> bool {
    match op {
        "In" => values.contains(&v),
        "NotIn" => !values.contains(&v),
        "Exists" => true,
        "DoesNotExist" => false,
        _ => numeric(op, v, values),
    }
}

/// Label-side check of a set of pod requirements (one affinity term plus the base) against a pool.
fn check_term<'a>(
    pool: &NodePool<'a>,
    pr: &PoolReqs<'a>,
    reqs: &[&Req<'a>],
    nvidia_gpus: u64,
) -> Vec<LabelIssue> {
    let mut issues: Vec<LabelIssue> = reqs.iter().filter_map(|r| check_req(pr, r)).collect();
    if !issues.is_empty() {
        return issues;
    }
    // Instance-derived labels: does any instance the pool may launch satisfy the pod?
    if let Some(set) = bounded_instances(pool) {
        let inst_reqs: Vec<&&Req> = reqs
            .iter()
            .filter(|r| {
                catalog::instances()
                    .first()
                    .and_then(|i| i.label(normalize_key(r.key)))
                    .is_some()
            })
            .collect();
        let fitting: Vec<_> = set
            .iter()
            .filter(|i| {
                inst_reqs.iter().all(|r| {
                    i.label(normalize_key(r.key))
                        .is_some_and(|v| expr_holds(r.op, &r.values, &v))
                })
            })
            .collect();
        let bound_loc = pool
            .requirements
            .iter()
            .find(|r| {
                matches!(
                    r.key,
                    "node.kubernetes.io/instance-type"
                        | "karpenter.k8s.aws/instance-family"
                        | "karpenter.k8s.aws/instance-gpu-name"
                )
            })
            .map(|r| pool.loc(r.node));
        if fitting.is_empty() {
            if let Some(first) = inst_reqs.first() {
                issues.push(LabelIssue {
                    pod: first.loc,
                    key: first.key.to_string(),
                    pool: bound_loc,
                    reason: format!(
                        "none of the instance types the pool may launch has {}",
                        first.describe()
                    ),
                });
            }
        } else if nvidia_gpus > 0 {
            let max = fitting.iter().map(|i| i.gpu_count).max().unwrap_or(0) as u64;
            if max < nvidia_gpus {
                issues.push(LabelIssue {
                    pod: reqs.first().map_or(
                        Loc {
                            file: pool.file,
                            span: pool.spec.span,
                        },
                        |r| r.loc,
                    ),
                    key: "nvidia.com/gpu".into(),
                    pool: bound_loc,
                    reason: format!(
                        "one pod needs {nvidia_gpus} GPUs but the largest instance the pool may launch has {max}"
                    ),
                });
            }
        }
    }
    issues
}

/// Whether the pool could launch an instance with GPUs at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuCapability {
    /// Its requirements ask for GPU instances (gpu labels, GPU families/categories/types).
    Explicit,
    /// Its requirements leave the instance type open: a GPU pod can make it launch one.
    Possible,
    /// Its requirements rule GPU instances out.
    None,
}

fn family_of_type(t: &str) -> &str {
    t.split_once('.').map_or(t, |(f, _)| f)
}

pub fn gpu_capability(pool: &NodePool<'_>) -> GpuCapability {
    let mut explicit = false;
    for r in &pool.requirements {
        let vals = &r.values;
        match (r.key, r.op) {
            (
                "karpenter.k8s.aws/instance-gpu-count"
                | "karpenter.k8s.aws/instance-gpu-name"
                | "karpenter.k8s.aws/instance-gpu-manufacturer"
                | "karpenter.k8s.aws/instance-gpu-memory"
                | "karpenter.k8s.aws/instance-accelerator-name"
                | "karpenter.k8s.aws/instance-accelerator-count",
                "DoesNotExist",
            ) => return GpuCapability::None,
            ("karpenter.k8s.aws/instance-gpu-count", "In") => {
                if vals.iter().all(|v| v.parse::<u64>().is_ok_and(|n| n == 0)) {
                    return GpuCapability::None;
                }
                explicit = true;
            }
            ("karpenter.k8s.aws/instance-gpu-count", "Lt" | "Lte") => {
                let b = vals.first().and_then(|v| v.parse::<i64>().ok()).unwrap_or(1);
                if (r.op == "Lt" && b <= 1) || (r.op == "Lte" && b < 1) {
                    return GpuCapability::None;
                }
            }
            (k, "In" | "Exists" | "Gt" | "Gte")
                if k.starts_with("karpenter.k8s.aws/instance-gpu-")
                    || k.starts_with("karpenter.k8s.aws/instance-accelerator-") =>
            {
                explicit = true
            }
            ("karpenter.k8s.aws/instance-category", "In") => {
                if vals.iter().any(|v| catalog::is_accelerator_category(v)) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            ("karpenter.k8s.aws/instance-family", "In") => {
                if vals.iter().any(|v| catalog::is_accelerator_family(v)) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            ("node.kubernetes.io/instance-type", "In") => {
                if vals.iter().any(|v| catalog::is_accelerator_family(family_of_type(v))) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            _ => {}
        }
    }
    if explicit {
        return GpuCapability::Explicit;
    }
    // A pool that labels or taints itself for GPUs, or budgets GPUs, is a GPU pool too.
    let mentions = pool.taints.iter().any(|t| crate::model::is_gpu_resource(t.key))
        || pool
            .limits
            .is_some_and(|l| l.entries().any(|(k, _, _)| crate::model::is_gpu_resource(k)));
    if mentions {
        GpuCapability::Explicit
    } else {
        GpuCapability::Possible
    }
}

/// Label side of the fit: the closest term's mismatches (empty when some term fits).
pub fn label_issues<'a>(pod: &PodConstraints<'a>, pool: &NodePool<'a>) -> Vec<LabelIssue> {
    let pr = PoolReqs::of(pool);
    let empty: Vec<Req> = Vec::new();
    let terms: Vec<&Vec<Req>> = if pod.terms.is_empty() {
        vec![&empty]
    } else {
        pod.terms.iter().collect()
    };
    let mut best: Option<Vec<LabelIssue>> = None;
    for term in terms {
        let reqs: Vec<&Req> = pod.base.iter().chain(term.iter()).collect();
        let issues = check_term(pool, &pr, &reqs, pod.nvidia_gpus);
        if issues.is_empty() {
            return issues;
        }
        if best.as_ref().is_none_or(|b| issues.len() < b.len()) {
            best = Some(issues);
        }
    }
    best.unwrap_or_default()
}

/// Full verdict: labels and taints.
pub fn fit<'a>(pod: &PodConstraints<'a>, pool: &NodePool<'a>, eks: bool) -> Verdict<'a> {
    let mut v = Verdict {
        labels: label_issues(pod, pool),
        ..Verdict::default()
    };
    for taint in pool.taints.iter().filter(|t| t.is_hard()) {
        if pod.tolerations.iter().any(|t| t.tolerates(taint)) {
            continue;
        }
        if eks && taint.effect == "NoSchedule" && pod.extended.contains(&taint.key) {
            v.eks_only.push(*taint);
        } else {
            v.untolerated.push(*taint);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NodePool, Object, PodTemplate};
    use crate::yaml::{Budget, parse};

    fn pool_and_pod(pool_yaml: &str, pod_yaml: &str, f: impl FnOnce(&NodePool, &PodTemplate)) {
        let p = parse(pool_yaml, Budget::default());
        let q = parse(pod_yaml, Budget::default());
        let po = Object::from_node(0, &p.docs[0].root).unwrap();
        let pool = NodePool::from_object(0, &po).unwrap();
        let qo = Object::from_node(1, &q.docs[0].root).unwrap();
        let tpl = crate::model::pod_templates(1, &qo).pop().unwrap();
        f(&pool, &tpl);
    }

    const POOL: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata:
      labels: {role: gpu}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d, p5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
"#;

    fn pod(extra: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{extra}\n  containers:\n    - name: c\n      resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
        )
    }

    #[test]
    fn tolerations_follow_kubernetes_semantics() {
        for (tol, ok) in [
            ("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", true),
            ("  tolerations: [{key: nvidia.com/gpu, operator: Exists}]", true),
            ("  tolerations: [{operator: Exists}]", true),
            ("  tolerations: [{key: nvidia.com/gpu, value: \"true\"}]", true),
            ("  tolerations: [{key: nvidia.com/gpu, value: \"false\"}]", false),
            ("  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]", false),
            ("  tolerations: [{key: other, operator: Exists}]", false),
            ("  tolerations: []", false),
        ] {
            pool_and_pod(POOL, &pod(tol), |pool, t| {
                let v = fit(&PodConstraints::from_template(t), pool, false);
                assert_eq!(v.untolerated.is_empty(), ok, "{tol}");
            });
        }
    }

    #[test]
    fn eks_extended_resource_toleration() {
        pool_and_pod(POOL, &pod("  tolerations: []"), |pool, t| {
            let v = fit(&PodConstraints::from_template(t), pool, true);
            assert!(v.untolerated.is_empty());
            assert_eq!(v.eks_only.len(), 1);
        });
    }

    #[test]
    fn selectors_against_labels_and_requirements() {
        for (sel, ok) in [
            ("  nodeSelector: {role: gpu}", true),
            ("  nodeSelector: {node-role: gpu}", false),
            ("  nodeSelector: {role: cpu}", false),
            ("  nodeSelector: {karpenter.sh/capacity-type: spot}", true),
            ("  nodeSelector: {karpenter.sh/nodepool: gpu}", true),
            ("  nodeSelector: {karpenter.sh/nodepool: other}", false),
            ("  nodeSelector: {topology.kubernetes.io/zone: us-east-1a}", true),
            ("  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}", true),
            ("  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}", false),
            ("  nodeSelector: {karpenter.k8s.aws/instance-family: g5}", false),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: In, values: [cpu]}]}, {matchExpressions: [{key: role, operator: Exists}]}]}}}",
                true,
            ),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: NotIn, values: [a]}]}]}}}",
                true,
            ),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/capacity-type, operator: NotIn, values: [spot, on-demand]}]}]}}}",
                false,
            ),
        ] {
            pool_and_pod(POOL, &pod(sel), |pool, t| {
                let v = label_issues(&PodConstraints::from_template(t), pool);
                assert_eq!(v.is_empty(), ok, "{sel}: {v:?}");
            });
        }
    }

    #[test]
    fn gpu_count_above_largest_instance() {
        let p = pod("").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 16");
        pool_and_pod(POOL, &p, |pool, t| {
            let v = label_issues(&PodConstraints::from_template(t), pool);
            assert_eq!(v.len(), 1);
            assert!(v[0].reason.contains("largest instance"));
        });
    }

    #[test]
    fn gpu_capability_of_pools() {
        let cases = [
            ("- {key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}", GpuCapability::Explicit),
            ("- {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}", GpuCapability::None),
            ("- {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"0\"]}", GpuCapability::Explicit),
            ("- {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}", GpuCapability::None),
            ("- {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}", GpuCapability::Explicit),
            ("- {key: kubernetes.io/arch, operator: In, values: [amd64]}", GpuCapability::Possible),
        ];
        for (req, want) in cases {
            let y = format!(
                "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: x}}\nspec:\n  template:\n    spec:\n      requirements:\n        {req}\n"
            );
            let p = parse(&y, Budget::default());
            let o = Object::from_node(0, &p.docs[0].root).unwrap();
            let pool = NodePool::from_object(0, &o).unwrap();
            assert_eq!(gpu_capability(&pool), want, "{req}");
        }
    }
}
