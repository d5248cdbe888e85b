//! What a pool may launch: catalog-bounded instance sets, GPUs per node, GPU capability.

use super::requirements::numeric;
use crate::catalog;
use crate::diag::Loc;
use crate::model::NodePool;

/// GPU instance types from the catalog a pool is limited to, when its requirements name only
/// known families, types or GPU names (`None`: the pool's instance set is open or unknown).
pub fn bounded_instances(pool: &NodePool<'_>) -> Option<Vec<&'static catalog::Instance>> {
    bounded_cached(pool).map(<[_]>::to_vec)
}

/// [`bounded_instances`], computed once per pool.
pub(super) fn bounded_cached<'p>(
    pool: &'p NodePool<'_>,
) -> Option<&'p [&'static catalog::Instance]> {
    pool.bounded
        .get_or_init(|| compute_bounded(pool))
        .as_deref()
}

/// The requirement that limits the pool's instance types (`In` on instance type, family or GPU
/// name), else the pool's name: where to point on the pool's side of an instance finding.
pub fn bounding_requirement<'a>(pool: &NodePool<'a>) -> crate::yaml::Node<'a> {
    pool.requirements
        .iter()
        .find(|r| {
            r.op == "In"
                && matches!(
                    catalog::karpenter_key(r.key),
                    "node.kubernetes.io/instance-type"
                        | "karpenter.k8s.aws/instance-family"
                        | "karpenter.k8s.aws/instance-gpu-name"
                )
        })
        .map_or(pool.anchor, |r| r.node)
}

/// Whether `key In values` limits instances to known catalog ones: instance types, families or
/// GPU names that all stand in the catalog.
pub(super) fn names_catalog_instances(key: &str, values: &[&str]) -> bool {
    !values.is_empty()
        && match catalog::karpenter_key(key) {
            "node.kubernetes.io/instance-type" => values
                .iter()
                .all(|v| catalog::instances().iter().any(|i| i.instance_type == *v)),
            "karpenter.k8s.aws/instance-family" => values
                .iter()
                .all(|v| catalog::instances().iter().any(|i| i.family == *v)),
            "karpenter.k8s.aws/instance-gpu-name" => {
                values.iter().all(|v| catalog::gpu_names().contains(v))
            }
            _ => false,
        }
}

fn compute_bounded(pool: &NodePool<'_>) -> Option<Vec<&'static catalog::Instance>> {
    if !pool.uses_aws_catalog() {
        return None;
    }
    let bounding = pool
        .requirements
        .iter()
        .any(|r| r.op == "In" && names_catalog_instances(r.key, &r.values));
    if !bounding {
        return None;
    }
    let mut set: Vec<_> = catalog::instances()
        .iter()
        .filter(|i| pool_allows(pool, i))
        .collect();
    // Kept with the pool for the run, thousands of pools in a platform monorepo.
    set.shrink_to_fit();
    Some(set)
}

/// Instance labels whose catalog values are stable enough to judge by (not the memory labels,
/// whose reported values have changed between releases); Auto Mode's keys as Karpenter's.
pub fn is_stable_instance_label(key: &str) -> bool {
    matches!(
        catalog::karpenter_key(super::requirements::normalize_key(key)),
        "node.kubernetes.io/instance-type"
            | "kubernetes.io/arch"
            | "karpenter.k8s.aws/instance-family"
            | "karpenter.k8s.aws/instance-category"
            | "karpenter.k8s.aws/instance-generation"
            | "karpenter.k8s.aws/instance-size"
            | "karpenter.k8s.aws/instance-gpu-count"
            | "karpenter.k8s.aws/instance-gpu-name"
            | "karpenter.k8s.aws/instance-gpu-manufacturer"
            | "karpenter.k8s.aws/instance-cpu"
    )
}

/// Catalog instances the pool's requirements on instance labels allow, bounded set or not (none
/// for a pool of another provider, whose instances the catalog does not hold).
pub fn allowed_instances(pool: &NodePool<'_>) -> Vec<&'static catalog::Instance> {
    if !pool.uses_aws_catalog() {
        return Vec::new();
    }
    catalog::instances()
        .iter()
        .filter(|i| pool_allows(pool, i))
        .collect()
}

/// Whether the pool's requirements on instance labels allow the instance.
fn pool_allows(pool: &NodePool<'_>, i: &catalog::Instance) -> bool {
    pool.requirements.iter().all(|r| match i.label(r.key) {
        Some(v) => expr_holds(r.op, &r.values, &v),
        None => true,
    })
}

/// Whether a label value meets one requirement (`op` with `values`), Karpenter's operators.
pub fn expr_holds(op: &str, values: &[&str], v: &str) -> bool {
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
pub(super) fn gpu_count_cap(pool: &NodePool<'_>) -> Option<(u64, Option<Loc>)> {
    let mut cap: Option<(u64, Option<Loc>)> = None;
    for r in &pool.requirements {
        if catalog::karpenter_key(r.key) != "karpenter.k8s.aws/instance-gpu-count" {
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

/// Whose accelerators an instance family carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Maker {
    Nvidia,
    Neuron,
    /// Gaudi (`dl1`), Qualcomm (`dl2q`), AMD (`g4ad`), or none at all (CPU families).
    Other,
}

fn maker_of_family(f: &str) -> Maker {
    if f.starts_with("inf") || f.starts_with("trn") {
        Maker::Neuron
    } else if f == "g4ad" || f.starts_with("dl") {
        Maker::Other
    } else if f.starts_with('g') || f.starts_with('p') {
        // The catalog's families and newer NVIDIA ones alike (`g7e`, `p6e-gb200`).
        Maker::Nvidia
    } else {
        Maker::Other
    }
}

fn maker_of_category(c: &str) -> Maker {
    match c {
        "g" | "gr" | "p" => Maker::Nvidia,
        "inf" | "trn" => Maker::Neuron,
        _ => Maker::Other,
    }
}

/// Whether the pool may launch an instance that has `resource` (an extended resource a pod
/// requests), as far as its pins on instance families, categories and types tell: a pool
/// confined to Trainium offers no `nvidia.com/gpu`, one confined to NVIDIA GPU families no
/// `aws.amazon.com/neuron`. Other resources, and pools that pin nothing, may be offered.
pub fn offers(pool: &NodePool<'_>, resource: &str) -> bool {
    let wanted = if resource.starts_with("nvidia.com/") {
        Maker::Nvidia
    } else if resource.starts_with("aws.amazon.com/neuron") {
        Maker::Neuron
    } else {
        return true;
    };
    !pool.requirements.iter().any(|r| {
        if r.op != "In" || r.values.is_empty() || r.values.iter().any(|v| super::is_placeholder(v))
        {
            return false;
        }
        let maker: fn(&str) -> Maker = match catalog::karpenter_key(r.key) {
            "karpenter.k8s.aws/instance-family" => maker_of_family,
            "karpenter.k8s.aws/instance-category" => maker_of_category,
            "node.kubernetes.io/instance-type" if pool.uses_aws_catalog() => {
                |t| maker_of_family(family_of_type(t))
            }
            _ => return false,
        };
        r.values.iter().all(|v| maker(v) != wanted)
    })
}

pub fn gpu_capability(pool: &NodePool<'_>) -> GpuCapability {
    let mut explicit = false;
    for r in &pool.requirements {
        let vals = &r.values;
        match (catalog::karpenter_key(r.key), r.op) {
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
            // Azure: the GPU SKUs are the N family (NC, ND, NV, NG); its GPU labels read as
            // AWS's do.
            (
                "karpenter.azure.com/sku-gpu-count"
                | "karpenter.azure.com/sku-gpu-name"
                | "karpenter.azure.com/sku-gpu-manufacturer",
                "DoesNotExist",
            ) => return GpuCapability::None,
            ("karpenter.azure.com/sku-gpu-count", "In")
                if vals.iter().all(|v| v.parse::<u64>().is_ok_and(|n| n == 0)) =>
            {
                return GpuCapability::None;
            }
            (k, "In" | "Exists" | "Gt" | "Gte")
                if k.starts_with("karpenter.azure.com/sku-gpu-") =>
            {
                explicit = true
            }
            ("karpenter.azure.com/sku-family", "In") => {
                if vals.iter().any(|v| v.eq_ignore_ascii_case("N")) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            ("karpenter.azure.com/sku-series" | "karpenter.azure.com/sku-name", "In") => {
                let sku = |v: &str| -> bool {
                    let v = v.strip_prefix("Standard_").unwrap_or(v);
                    v.starts_with('N') || v.starts_with('n')
                };
                if vals.iter().any(|v| sku(v)) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            ("node.kubernetes.io/instance-type", "In")
                if vals.iter().any(|v| v.starts_with("Standard_")) =>
            {
                if vals.iter().any(|v| v.starts_with("Standard_N")) {
                    explicit = true;
                } else {
                    return GpuCapability::None;
                }
            }
            // Another provider's instance types say nothing the catalog can read.
            ("node.kubernetes.io/instance-type", "In") if !pool.uses_aws_catalog() => {}
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

/// Catalog instances a pod with these constraints may get from `pool`: the pool's bounded set
/// (or, for an open pool, the catalog when the pod's own selector names known types, families or
/// GPU names), narrowed by the pod's ANDed requirements on instance labels and by the GPUs one
/// pod needs. `None`: the set is open or unknown.
pub fn instances_for(
    pod: &crate::model::constraints::PodConstraints<'_>,
    pool: &NodePool<'_>,
) -> Option<Vec<&'static catalog::Instance>> {
    let bounding = |r: &&crate::model::constraints::Req<'_>| {
        r.op == "In" && names_catalog_instances(r.key, &r.values)
    };
    if !pool.uses_aws_catalog() {
        return None;
    }
    let base: Vec<&'static catalog::Instance> = match bounded_cached(pool) {
        Some(b) => b.to_vec(),
        None if pod.base.iter().any(|r| bounding(&r)) => catalog::instances()
            .iter()
            .filter(|i| pool_allows(pool, i))
            .collect(),
        None => return None,
    };
    Some(
        base.into_iter()
            .filter(|i| i.gpu_count as u64 >= pod.nvidia_gpus)
            .filter(|i| {
                pod.base.iter().all(|r| {
                    r.values.iter().any(|v| super::is_placeholder(v))
                        || i.label(r.key)
                            .is_none_or(|v| expr_holds(r.op, &r.values, &v))
                })
            })
            .collect(),
    )
}

/// Catalog instances a pod may get from `pool`: [`instances_for`], or for an open pool the
/// catalog's GPU instances the pool's requirements allow, narrowed the same way. For explaining
/// a placement (`gpuops why`), where an open pool still has a cheapest candidate.
pub fn candidate_instances(
    pod: &crate::model::constraints::PodConstraints<'_>,
    pool: &NodePool<'_>,
) -> Vec<&'static catalog::Instance> {
    if !pool.uses_aws_catalog() {
        return Vec::new();
    }
    if let Some(known) = instances_for(pod, pool) {
        return known;
    }
    catalog::instances()
        .iter()
        .filter(|i| i.gpu_count > 0 && i.gpu_count as u64 >= pod.nvidia_gpus)
        .filter(|i| pool_allows(pool, i))
        .filter(|i| {
            pod.base.iter().all(|r| {
                r.values.iter().any(|v| super::is_placeholder(v))
                    || i.label(r.key)
                        .is_none_or(|v| expr_holds(r.op, &r.values, &v))
            })
        })
        .collect()
}

/// The most GPUs one node of the pool may have: the largest catalog instance its requirements
/// allow, capped by its `instance-gpu-count` bound (`None`: no GPU instance is allowed). Only for
/// a pool whose instances the catalog holds ([`NodePool::uses_aws_catalog`]).
pub fn max_gpus_per_node(pool: &NodePool<'_>) -> Option<u64> {
    let largest = catalog::instances()
        .iter()
        .filter(|i| i.gpu_count > 0 && pool_allows(pool, i))
        .map(|i| i.gpu_count as u64)
        .max()?;
    Some(match gpu_count_cap(pool) {
        Some((cap, _)) => largest.min(cap),
        None => largest,
    })
}
