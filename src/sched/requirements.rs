//! The label side of placement: a pool's requirement set and whether pod requirements meet it.

use super::instances::{
    GpuCapability, bounded_cached, expr_holds, gpu_capability, gpu_count_cap,
    is_stable_instance_label, names_catalog_instances,
};
use super::is_placeholder;
use crate::catalog;
use crate::diag::Loc;
use crate::model::NodePool;
use crate::model::constraints::{PodConstraints, Req};

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

use crate::model::requirements::PoolReq;
pub use crate::model::requirements::{PoolReqs, normalize_key};

impl<'a> PoolReqs<'a> {
    /// Per key the pool constrains: the values an `In`-only key may take (their union), or
    /// `None` when some constraint on it is not a plain `In` (the candidate index then always
    /// keeps the pool for that key).
    pub(super) fn shapes(&self) -> impl Iterator<Item = (&'a str, Option<Vec<&'a str>>)> + '_ {
        self.by_key.iter().map(|(k, rs)| {
            let plain = rs
                .iter()
                .all(|r| r.op == "In" && !r.values.iter().any(|v| is_placeholder(v)));
            let values = plain.then(|| rs.iter().flat_map(|r| r.values.iter().copied()).collect());
            (*k, values)
        })
    }

    fn get(&self, key: &str) -> Option<&[PoolReq<'a>]> {
        self.by_key
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| &**v)
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

pub fn numeric(op: &str, value: &str, bound: &[&str]) -> bool {
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
            let k = catalog::karpenter_key(r.key);
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
                    let k = catalog::karpenter_key(e.key);
                    k.starts_with("karpenter.k8s.aws/instance-")
                        || k == "node.kubernetes.io/instance-type"
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
                catalog::karpenter_key(r.key),
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
        let fitting: Vec<_> = set.iter().filter(|i| meets(i, &inst_reqs)).collect();
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
    } else if let Some(issue) = pinned_elsewhere(pool, reqs) {
        issues.push(issue);
        return issues;
    }
    if let Some((max, loc)) = max_gpus
        && nvidia_gpus > max
    {
        issues.push(LabelIssue {
            pod: reqs.first().map_or(
                Loc {
                    file: pool.file,
                    span: pool.spec.span(),
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

/// Whether an instance has every instance label the pod requires, with a value that meets it.
fn meets(i: &catalog::Instance, reqs: &[&&Req<'_>]) -> bool {
    reqs.iter().all(|r| {
        i.label(normalize_key(r.key))
            .is_some_and(|v| expr_holds(r.op, &r.values, &v))
    })
}

/// For a pool whose instance types are open: when the pod pins catalog instances (an instance
/// type, a family or a GPU model the catalog holds every size of) and the pool's requirements on
/// stable instance labels rule out every one of them (`instance-category In [inf, trn]` against
/// `p5.48xlarge`), Karpenter can launch nothing for the pod from this pool.
fn pinned_elsewhere(pool: &NodePool<'_>, reqs: &[&Req<'_>]) -> Option<LabelIssue> {
    let placeholder = |values: &[&str]| values.iter().any(|v| is_placeholder(v));
    let pin = reqs.iter().find(|r| {
        r.op == "In" && !placeholder(&r.values) && names_catalog_instances(r.key, &r.values)
    })?;
    let pod_reqs: Vec<&&Req> = reqs
        .iter()
        .filter(|r| is_stable_instance_label(r.key) && !placeholder(&r.values))
        .collect();
    let pool_reqs: Vec<&crate::model::Expr> = pool
        .requirements
        .iter()
        .filter(|r| is_stable_instance_label(r.key) && !placeholder(&r.values))
        .collect();
    let pinned: Vec<&catalog::Instance> = catalog::instances()
        .iter()
        .filter(|i| meets(i, &pod_reqs))
        .collect();
    let admits = |i: &catalog::Instance| {
        pool_reqs.iter().all(|r| {
            i.label(r.key)
                .is_none_or(|v| expr_holds(r.op, &r.values, &v))
        })
    };
    // No pinned instance at all: the pod's own selectors disagree, which is not this pool's doing.
    if pinned.is_empty() || pinned.iter().any(|i| admits(i)) {
        return None;
    }
    let blocking = pool_reqs.iter().find(|r| {
        pinned.iter().all(|i| {
            i.label(r.key)
                .is_some_and(|v| !expr_holds(r.op, &r.values, &v))
        })
    });
    Some(LabelIssue {
        pod: pin.loc,
        key: pin.key.to_string(),
        pool: blocking.map(|r| pool.loc(r.node)),
        reason: format!(
            "the pool admits no instance type with {}: its instance requirements rule them out",
            pin.describe()
        ),
    })
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
