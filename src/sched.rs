//! Static scheduling model: can a pod template land on a NodePool?
//!
//! Follows Karpenter's semantics: a pool's requirement set is its `requirements` plus every
//! template label (as `In [value]`) plus `karpenter.sh/nodepool` and `karpenter.k8s.aws/ec2nodeclass`;
//! the pod's nodeSelector and one required-affinity term at a time must intersect it; well-known
//! labels the pool does not mention are unconstrained, custom ones are unknown and do not match.
//! All hard (NoSchedule/NoExecute) taints must be tolerated; startup taints do not count.
//!
//! The Kueue side ([`flavor_reject`], [`assignable_variants`]) follows Kueue's flavor assigner: a
//! flavor is only assigned when the template's own nodeSelector / required affinity, restricted to
//! the label keys of that resource group's flavors, matches the flavor's `nodeLabels`, and the
//! template (plus the flavor's tolerations) tolerates the flavor's hard `nodeTaints`.
//!
//! Placeholders ([`is_placeholder`]: `${VAR}`, `{{ .Values.x }}`, `<VAR>`, `NUM_GPUS`, …) on either
//! side match anything: the linter cannot know what they become.

use crate::catalog;
use crate::diag::Loc;
use crate::index::{Index, Variant};
use crate::model::{Expr, NodePool, PodTemplate, Taint, Toleration};
use crate::yaml::Node;

/// A value an envsubst / Helm / Kustomize pipeline fills in later (one notion for all rules).
pub use crate::quantity::is_placeholder;

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
        // EKS Auto Mode's NodePools derive these from the instance type, like karpenter.k8s.aws/.
        || key.starts_with("eks.amazonaws.com/instance-")
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
#[derive(Debug)]
pub struct PoolReqs<'a> {
    by_key: Vec<(&'a str, Vec<PoolReq<'a>>)>,
}

impl<'a> PoolReqs<'a> {
    /// The pool's requirement set (built once per pool and kept with it).
    pub fn of<'p>(pool: &'p NodePool<'a>) -> &'p Self {
        pool.sched.get_or_init(|| Self::build(pool))
    }

    fn build(pool: &NodePool<'a>) -> Self {
        let mut by_key: Vec<(&'a str, Vec<PoolReq<'a>>)> = Vec::new();
        let mut add =
            |key: &'a str, r: PoolReq<'a>| match by_key.iter_mut().find(|(k, _)| *k == key) {
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
        if let Some(nc) = pool.node_class_ref.and_then(|n| n.get("name"))
            && let Some(v) = nc.as_str()
        {
            add(
                "karpenter.k8s.aws/ec2nodeclass",
                PoolReq {
                    op: "In",
                    values: vec![v],
                    loc: pool.loc(nc),
                },
            );
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
        self.get(key).is_some_and(|rs| {
            rs.iter()
                .any(|r| matches!(r.op, "In" | "Exists" | "Gt" | "Lt" | "Gte" | "Lte"))
        })
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
                "In" => r.values.contains(&value) || r.values.iter().any(|v| is_placeholder(v)),
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
    let (Ok(v), Some(Ok(b))) = (
        value.parse::<i64>(),
        bound.first().map(|b| b.parse::<i64>()),
    ) else {
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
    if req.values.iter().any(|v| is_placeholder(v)) {
        return None;
    }
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
            .map(|r| {
                issue(
                    format!("the pool requires `{key}` to be absent"),
                    Some(r.loc),
                )
            }),
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
    bounded_cached(pool).map(<[_]>::to_vec)
}

/// [`bounded_instances`], computed once per pool.
fn bounded_cached<'p>(pool: &'p NodePool<'_>) -> Option<&'p [&'static catalog::Instance]> {
    pool.bounded
        .get_or_init(|| compute_bounded(pool))
        .as_deref()
}

fn compute_bounded(pool: &NodePool<'_>) -> Option<Vec<&'static catalog::Instance>> {
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

/// The most GPUs per node the pool's `instance-gpu-count` requirements allow (`In`, `Lt`, `Lte`),
/// with where that bound is written.
fn gpu_count_cap(pool: &NodePool<'_>) -> Option<(u64, Option<Loc>)> {
    let mut cap: Option<(u64, Option<Loc>)> = None;
    for r in &pool.requirements {
        if r.key != "karpenter.k8s.aws/instance-gpu-count" {
            continue;
        }
        let nums: Option<Vec<i64>> = r.values.iter().map(|v| v.parse::<i64>().ok()).collect();
        let Some(nums) = nums.filter(|n| !n.is_empty()) else {
            continue;
        };
        let bound = match r.op {
            "In" => nums.iter().copied().max(),
            "Lt" => nums.first().map(|b| b - 1),
            "Lte" => nums.first().copied(),
            _ => None,
        };
        if let Some(b) = bound {
            let b = b.max(0) as u64;
            if cap.is_none_or(|(c, _)| b < c) {
                cap = Some((b, Some(pool.loc(r.node))));
            }
        }
    }
    cap
}

/// Label-side check of a set of pod requirements (one affinity term plus the base) against a pool.
fn check_term<'a>(
    pool: &NodePool<'a>,
    pr: &PoolReqs<'a>,
    reqs: &[&Req<'_>],
    nvidia_gpus: u64,
) -> Vec<LabelIssue> {
    let mut issues: Vec<LabelIssue> = reqs.iter().filter_map(|r| check_req(pr, r)).collect();
    if !issues.is_empty() {
        return issues;
    }
    // A pool whose requirements rule out accelerators never has GPU instance labels.
    if gpu_capability(pool) == GpuCapability::None {
        let wants_gpu = reqs.iter().find(|r| {
            let k = r.key;
            (k.starts_with("karpenter.k8s.aws/instance-gpu-")
                || k.starts_with("karpenter.k8s.aws/instance-accelerator-"))
                && match r.op {
                    "In" => r.values.iter().any(|v| *v != "0"),
                    "Exists" | "Gt" | "Gte" => true,
                    _ => false,
                }
        });
        if let Some(r) = wants_gpu {
            let loc = pool
                .requirements
                .iter()
                .find(|e| {
                    e.key.starts_with("karpenter.k8s.aws/instance-")
                        || e.key == "node.kubernetes.io/instance-type"
                })
                .map(|e| pool.loc(e.node));
            issues.push(LabelIssue {
                pod: r.loc,
                key: r.key.to_string(),
                pool: loc,
                reason: format!(
                    "the pool's requirements rule out GPU instances, so its nodes never have {}",
                    r.describe()
                ),
            });
            return issues;
        }
    }
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
    // The most GPUs one node of this pool can have, when something bounds it.
    let mut max_gpus: Option<(u64, Option<Loc>)> = gpu_count_cap(pool);
    // Instance-derived labels: does any instance the pool may launch satisfy the pod?
    if let Some(set) = bounded_cached(pool) {
        let inst_reqs: Vec<&&Req> = reqs
            .iter()
            .filter(|r| {
                catalog::is_instance_label(normalize_key(r.key))
                    && !r.values.iter().any(|v| is_placeholder(v))
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
                return issues;
            }
        } else {
            let max = fitting.iter().map(|i| i.gpu_count).max().unwrap_or(0) as u64;
            if max_gpus.is_none_or(|(m, _)| max < m) {
                max_gpus = Some((max, bound_loc));
            }
        }
    }
    if let Some((max, loc)) = max_gpus
        && nvidia_gpus > max
    {
        issues.push(LabelIssue {
            pod: reqs.first().map_or(
                Loc {
                    file: pool.file,
                    span: pool.spec.span,
                },
                |r| r.loc,
            ),
            key: "nvidia.com/gpu".into(),
            pool: loc,
            reason: format!(
                "one pod needs {nvidia_gpus} GPUs but the largest instance the pool may launch has {max}"
            ),
        });
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
                let b = vals
                    .first()
                    .and_then(|v| v.parse::<i64>().ok())
                    .unwrap_or(1);
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
                if vals
                    .iter()
                    .any(|v| catalog::is_accelerator_family(family_of_type(v)))
                {
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
    let mentions = pool
        .taints
        .iter()
        .any(|t| crate::model::is_gpu_resource(t.key))
        || pool.limits.is_some_and(|l| {
            l.entries()
                .any(|(k, _, _)| crate::model::is_gpu_resource(k))
        });
    if mentions {
        GpuCapability::Explicit
    } else {
        GpuCapability::Possible
    }
}

/// Label side of the fit: the closest term's mismatches (empty when some term fits).
pub fn label_issues(pod: &PodConstraints<'_>, pool: &NodePool<'_>) -> Vec<LabelIssue> {
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
        let issues = check_term(pool, pr, &reqs, pod.nvidia_gpus);
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
pub fn fit<'a>(pod: &PodConstraints<'_>, pool: &NodePool<'a>, eks: bool) -> Verdict<'a> {
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

/// Whether a template is placed outside Karpenter: a fixed `nodeName`, or a selector on a managed
/// node group / Fargate label (those nodes are not NodePool nodes, so NodePools say nothing).
pub fn targets_other_capacity(t: &PodTemplate<'_>) -> bool {
    if t.spec
        .get("nodeName")
        .and_then(Node::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return true;
    }
    let other = |key: &str, values: &[&str]| {
        matches!(
            key,
            "eks.amazonaws.com/nodegroup" | "alpha.eksctl.io/nodegroup-name"
        ) || (key == "eks.amazonaws.com/compute-type" && values.contains(&"fargate"))
    };
    let selector = t
        .node_selector()
        .into_iter()
        .any(|(k, _, v)| other(k, &[v.as_str().unwrap_or("")]));
    let terms = t.affinity_terms();
    let affinity = !terms.is_empty()
        && terms.iter().all(|term| {
            term.iter()
                .any(|e| matches!(e.op, "In" | "Exists") && other(e.key, &e.values))
        });
    selector || affinity
}

/// Why Kueue would never assign a ResourceFlavor to a pod template.
#[derive(Debug, Clone)]
pub enum FlavorReject {
    /// The template's own nodeSelector / required affinity disagrees with the flavor's nodeLabels.
    Labels {
        key: String,
        /// The template's selector entry or affinity expression.
        pod: Loc,
        /// The flavor's nodeLabels entry on that key (absent when the flavor lacks the key).
        flavor: Option<Loc>,
    },
    /// A NoSchedule/NoExecute `nodeTaints` entry neither the template nor the flavor tolerates.
    Taint { taint: String, flavor: Loc },
}

/// Whether a node carrying exactly `labels` satisfies one pod requirement.
fn holds_on(labels: &[(&str, &str)], r: &Req<'_>) -> bool {
    if r.values.iter().any(|v| is_placeholder(v)) {
        return true;
    }
    let v = labels.iter().find(|(k, _)| *k == r.key).map(|(_, v)| *v);
    if v.is_some_and(is_placeholder) {
        return true;
    }
    match r.op {
        "In" => v.is_some_and(|v| r.values.contains(&v)),
        "NotIn" => !v.is_some_and(|v| r.values.contains(&v)),
        "Exists" => v.is_some(),
        "DoesNotExist" => v.is_none(),
        "Gt" | "Lt" => v.is_some_and(|v| numeric(r.op, v, &r.values)),
        _ => true,
    }
}

/// Kueue's flavor check for template `ti` and flavor `fi` (`None`: Kueue may assign it).
pub fn flavor_reject(ix: &Index<'_>, ti: usize, fi: usize) -> Option<FlavorReject> {
    let t = ix.templates.get(ti)?;
    let f = ix.flavors.get(fi)?;
    let fobj = ix.objects.get(f.obj)?;
    // Hard nodeTaints gate admission; the flavor's own tolerations count.
    let tolerations: Vec<Toleration> = t
        .tolerations()
        .into_iter()
        .chain(f.tolerations.iter().copied())
        .collect();
    for taint in fobj
        .spec()
        .and_then(|s| s.get("nodeTaints"))
        .into_iter()
        .flat_map(|n| n.items())
        .filter_map(Taint::from_node)
        .filter(Taint::is_hard)
    {
        if !tolerations.iter().any(|x| x.tolerates(&taint)) {
            return Some(FlavorReject::Taint {
                taint: taint.display(),
                flavor: fobj.loc(taint.node),
            });
        }
    }
    // Only keys some flavor of the same resource group sets are compared.
    let cq = ix
        .queues
        .get(ti)
        .copied()
        .flatten()
        .and_then(|q| q.cluster_queue);
    let mut allowed: Vec<&str> = f.node_labels.iter().map(|(k, _, _)| *k).collect();
    if let Some(cq) = cq.and_then(|c| ix.cluster_queues.get(c))
        && let Some((_, _, covered)) = cq.flavors.iter().find(|(n, _, _)| *n == f.name)
    {
        for (name, _, cov) in &cq.flavors {
            if cov != covered {
                continue;
            }
            if let Some(other) = ix.flavor(name).and_then(|i| ix.flavors.get(i)) {
                allowed.extend(other.node_labels.iter().map(|(k, _, _)| *k));
            }
        }
    }
    let labels: Vec<(&str, &str)> = f
        .node_labels
        .iter()
        .filter_map(|(k, _, v)| Some((*k, v.as_str()?)))
        .collect();
    let label_loc = |key: &str| {
        f.node_labels
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| fobj.loc(v))
    };
    let reject = |r: &Req<'_>| FlavorReject::Labels {
        key: r.key.to_string(),
        pod: r.loc,
        flavor: label_loc(r.key),
    };
    let pod = PodConstraints::from_template(t);
    let relevant = |r: &&Req<'_>| allowed.contains(&r.key);
    if let Some(r) = pod
        .base
        .iter()
        .filter(relevant)
        .find(|r| !holds_on(&labels, r))
    {
        return Some(reject(r));
    }
    if pod.terms.is_empty() {
        return None;
    }
    let mut first_failure = None;
    for term in &pod.terms {
        match term.iter().filter(relevant).find(|r| !holds_on(&labels, r)) {
            None => return None,
            Some(r) => {
                first_failure.get_or_insert(r);
            }
        }
    }
    first_failure.map(reject)
}

/// The ways template `ti` may really run: `Index::variants` minus flavors Kueue would never assign
/// to it ([`flavor_reject`]), keeping only the flavors of the resource group that covers one of its
/// GPU resources when there is such a group (a CPU-only group's flavor is assigned alongside the GPU
/// flavor, never instead of it). Empty when the template goes through Kueue but no flavor fits.
pub fn assignable_variants<'i, 'a>(ix: &'i Index<'a>, ti: usize) -> Vec<&'i Variant<'a>> {
    let Some(vs) = ix.variants.get(ti) else {
        return Vec::new();
    };
    if vs.iter().all(|v| v.flavor.is_none()) {
        return vs.iter().collect();
    }
    let ok: Vec<&Variant> = vs
        .iter()
        .filter(|v| {
            v.flavor
                .is_none_or(|fi| flavor_reject(ix, ti, fi).is_none())
        })
        .collect();
    let gpu_resources: Vec<&str> = ix.templates[ti]
        .gpu_containers()
        .flat_map(|c| c.accelerators())
        .map(|(n, _)| n)
        .filter(|n| crate::model::is_gpu_resource(n))
        .collect();
    let cq = ix.queues[ti]
        .and_then(|q| q.cluster_queue)
        .and_then(|c| ix.cluster_queues.get(c));
    let in_gpu_group = |fi: usize| {
        let name = ix.flavors[fi].name;
        cq.is_some_and(|cq| {
            cq.flavors
                .iter()
                .any(|(n, _, cov)| *n == name && cov.iter().any(|r| gpu_resources.contains(r)))
        })
    };
    let preferred: Vec<&Variant> = ok
        .iter()
        .copied()
        .filter(|v| v.flavor.is_some_and(in_gpu_group))
        .collect();
    if preferred.is_empty() { ok } else { preferred }
}

/// A label value as YAML must spell it to stay a string (`"true"`, `"8"`).
pub fn yaml_value(v: &str) -> String {
    let lower = v.to_ascii_lowercase();
    let special = matches!(
        lower.as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    ) || v.parse::<f64>().is_ok();
    if special {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}

/// For a pod value the pool's own constraint on the same key rejects: the values it allows.
/// How to make a label requirement (`shown`, e.g. `` `role=gpu` ``) meet a pool: the values the
/// pool allows for that key, or a similar label it sets. `None` when the pool offers neither.
pub fn label_hint(
    pool: &NodePool<'_>,
    key: &str,
    value: Option<&str>,
    shown: &str,
) -> Option<String> {
    let allowed = allowed_values(pool, key);
    if !allowed.is_empty() && value.is_some() {
        return Some(format!(
            "use a `{key}` value NodePool `{}` allows ({}), or allow {shown} in its requirement on that key",
            pool.name,
            crate::diag::backticked(&allowed, ", ")
        ));
    }
    let labels = "its `spec.template.metadata.labels`";
    Some(match similar_pool_label(pool, key, value)? {
        (k, v) if !v.is_empty() => format!(
            "did you mean `{k}: {}`? NodePool `{}` sets that label on its nodes; otherwise add {shown} to {labels}",
            yaml_value(&v),
            pool.name
        ),
        (k, _) => format!(
            "did you mean `{k}`? NodePool `{}` defines that label; otherwise add {shown} to {labels}",
            pool.name
        ),
    })
}

pub fn allowed_values<'a>(pool: &NodePool<'a>, key: &str) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for (k, _, v) in &pool.labels {
        if *k == key {
            out.extend(v.as_str());
        }
    }
    for r in &pool.requirements {
        if normalize_key(r.key) == normalize_key(key) && r.op == "In" {
            out.extend(r.values.iter().copied());
        }
    }
    out
}

/// A label the pool does set that looks like what the pod meant by `key=value`: same value under
/// another key, or a key a few edits away. Returns (key, value) as the pool writes it.
pub fn similar_pool_label<'a>(
    pool: &NodePool<'a>,
    key: &str,
    value: Option<&str>,
) -> Option<(&'a str, String)> {
    let mut candidates: Vec<(&'a str, String)> = pool
        .labels
        .iter()
        .filter_map(|(k, _, v)| Some((*k, v.as_str()?.to_string())))
        .collect();
    for r in &pool.requirements {
        if matches!(r.op, "In" | "Exists") && !is_well_known(r.key) {
            candidates.push((r.key, r.values.first().copied().unwrap_or("").to_string()));
        }
    }
    let near = |k: &str| {
        let d = crate::rules::edit_distance(k, key);
        d > 0 && d <= (key.len().max(k.len()) / 4).max(2)
    };
    let short = |k: &str| k.rsplit('/').next().unwrap_or(k).to_string();
    candidates
        .iter()
        .find(|(k, v)| {
            *k != key
                && value.is_some_and(|x| x == v)
                && (near(k) || short(k).contains(&short(key)) || short(key).contains(&short(k)))
        })
        .or_else(|| {
            candidates
                .iter()
                .find(|(k, v)| *k != key && value.is_some_and(|x| x == v))
        })
        .or_else(|| candidates.iter().find(|(k, _)| near(k)))
        .cloned()
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
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
                true,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]",
                true,
            ),
            ("  tolerations: [{operator: Exists}]", true),
            (
                "  tolerations: [{key: nvidia.com/gpu, value: \"true\"}]",
                true,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, value: \"false\"}]",
                false,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]",
                false,
            ),
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
            (
                "  nodeSelector: {topology.kubernetes.io/zone: us-east-1a}",
                true,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}",
                true,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}",
                false,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-family: g5}",
                false,
            ),
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
            (
                "- {key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}",
                GpuCapability::None,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"0\"]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}",
                GpuCapability::None,
            ),
            (
                "- {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: kubernetes.io/arch, operator: In, values: [amd64]}",
                GpuCapability::Possible,
            ),
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

    fn pool_with(reqs: &str, labels: &str) -> String {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: x}}\nspec:\n  template:\n    metadata:\n      labels: {{{labels}}}\n    spec:\n      requirements:\n{reqs}\n"
        )
    }

    #[test]
    fn placeholders_match_anything() {
        let pool = pool_with(
            "        - {key: team, operator: In, values: [\"${TEAM}\"]}",
            "role: gpu",
        );
        for sel in [
            "  nodeSelector: {role: \"${ROLE}\"}",
            "  nodeSelector: {team: ml}",
            "  nodeSelector: {karpenter.sh/nodepool: \"{{ .Values.pool }}\"}",
        ] {
            pool_and_pod(&pool, &pod(sel), |pool, t| {
                let v = label_issues(&PodConstraints::from_template(t), pool);
                assert!(v.is_empty(), "{sel}: {v:?}");
            });
        }
    }

    #[test]
    fn gpu_count_requirement_bounds_gpus_per_pod() {
        let pool = pool_with(
            "        - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: [\"2\"]}",
            "",
        );
        pool_and_pod(&pool, &pod(""), |pool, t| {
            let v = label_issues(&PodConstraints::from_template(t), pool);
            assert_eq!(v.len(), 1, "{v:?}");
            assert!(v[0].reason.contains("has 1"), "{v:?}");
        });
        let p1 = pod("").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 1");
        pool_and_pod(&pool, &p1, |pool, t| {
            assert!(label_issues(&PodConstraints::from_template(t), pool).is_empty());
        });
    }

    #[test]
    fn gpu_labels_never_on_pools_without_gpus() {
        let cpu = pool_with(
            "        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}",
            "",
        );
        pool_and_pod(
            &cpu,
            &pod("  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a100}"),
            |pool, t| {
                assert_eq!(
                    label_issues(&PodConstraints::from_template(t), pool).len(),
                    1
                );
            },
        );
        pool_and_pod(
            &cpu,
            &pod("  nodeSelector: {kubernetes.io/arch: amd64}"),
            |pool, t| {
                assert!(label_issues(&PodConstraints::from_template(t), pool).is_empty());
            },
        );
        // An open pool does not constrain the GPU model; EKS Auto Mode labels are well-known.
        let open = pool_with(
            "        - {key: kubernetes.io/arch, operator: In, values: [amd64]}",
            "",
        );
        for sel in [
            "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a100}",
            "  nodeSelector: {eks.amazonaws.com/instance-gpu-name: l4}",
        ] {
            pool_and_pod(&open, &pod(sel), |pool, t| {
                assert!(
                    label_issues(&PodConstraints::from_template(t), pool).is_empty(),
                    "{sel}"
                );
            });
        }
    }

    const KUEUE: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100-spot}
spec:
  nodeLabels: {gpu-type: a100, karpenter.sh/capacity-type: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {gpu-type: a100, karpenter.sh/capacity-type: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: zone-only}
spec:
  nodeLabels: {topology.kubernetes.io/zone: us-east-1a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tainted}
spec:
  nodeLabels: {gpu-type: a100}
  nodeTaints: [{key: reserved, value: "yes", effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors: [{name: default}]
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: a100-spot}, {name: a100}, {name: zone-only}, {name: tainted}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    spec:
      nodeSelector: {gpu-type: a100, karpenter.sh/capacity-type: on-demand}
      containers:
        - name: c
          resources: {limits: {nvidia.com/gpu: 1, cpu: 1}}
"#;

    #[test]
    fn kueue_flavor_assignment() {
        let files = vec![crate::source::SourceFile::from_text(
            "k.yaml".into(),
            KUEUE.into(),
        )];
        let settings = crate::config::Settings::default();
        let ix = crate::index::Index::build(&files, &settings);
        let reject = |name: &str| flavor_reject(&ix, 0, ix.flavor(name).unwrap());
        // Same key, other value: rejected.
        assert!(
            matches!(reject("a100-spot"), Some(FlavorReject::Labels { ref key, .. }) if key == "karpenter.sh/capacity-type")
        );
        assert!(reject("a100").is_none());
        // The group's flavors set `gpu-type`; this one does not, so the pod's selector rejects it.
        assert!(
            matches!(reject("zone-only"), Some(FlavorReject::Labels { ref key, .. }) if key == "gpu-type")
        );
        assert!(matches!(
            reject("tainted"),
            Some(FlavorReject::Taint { .. })
        ));
        // The CPU group's flavor sets no keys the pod selects: assignable, but not the GPU variant.
        assert!(reject("default").is_none());
        let names: Vec<&str> = assignable_variants(&ix, 0)
            .iter()
            .filter_map(|v| v.flavor)
            .map(|f| ix.flavors[f].name)
            .collect();
        assert_eq!(names, vec!["a100"]);
    }
}
