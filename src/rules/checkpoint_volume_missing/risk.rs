//! Why a training pod is likely to go away where it runs: spot capacity, Karpenter's
//! consolidation and expiry, Kueue preemption.

use crate::diag::{Diagnostic, Loc, Severity};
use crate::model::PodTemplate;
use crate::rules::Ctx;
use crate::rules::priorityclass_not_found::WPC_LABEL;
use crate::rules::training_consolidation_underutilized::{Policy, protected};
use crate::sched::{GpuCapability, PodConstraints, Req};

const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

/// Why the pod is likely to go away, with the places that say so.
pub(super) struct Risk {
    pub(super) reasons: Vec<String>,
    pub(super) related: Vec<(Loc, String)>,
}

/// Adds the places that make the loss likely; with none in view the finding stays a warning
/// (every cluster replaces nodes, but nothing here says how often).
pub(super) fn with_risk(mut d: Diagnostic, r: &Risk) -> Diagnostic {
    for (loc, msg) in &r.related {
        d = d.related(*loc, msg.clone());
    }
    if r.reasons.is_empty() {
        d = d.with_severity(Severity::Warning);
    }
    d
}

/// Whether the pod's constraints (after flavor injection) let it run on spot capacity.
fn allows_spot(c: &PodConstraints) -> bool {
    let ok = |r: &&Req| {
        r.key != CAPACITY_TYPE
            || match r.op {
                "In" => r.values.contains(&"spot"),
                "NotIn" => !r.values.contains(&"spot"),
                "DoesNotExist" => false,
                _ => true,
            }
    };
    c.base.iter().all(|r| ok(&r))
        && (c.terms.is_empty() || c.terms.iter().any(|t| t.iter().all(|r| ok(&r))))
}

/// A requirement of the pod itself that asks for spot.
fn selects_spot<'r>(c: &'r PodConstraints) -> Option<&'r Req<'r>> {
    c.base
        .iter()
        .chain(c.terms.iter().flatten())
        .find(|r| r.key == CAPACITY_TYPE && r.op == "In" && r.values.contains(&"spot"))
}

pub(super) fn risk_of(cx: &Ctx, ti: usize, preempting: Option<usize>) -> Risk {
    let mut risk = Risk {
        reasons: Vec::new(),
        related: Vec::new(),
    };
    let t = &cx.ix.templates[ti];
    let variants = cx
        .ix
        .variants
        .get(ti)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let own = t.constraints();
    if let Some(r) = selects_spot(own) {
        risk.reasons
            .push("its node selector asks for spot capacity".to_string());
        risk.related
            .push((r.loc, "spot capacity selected here".to_string()));
    } else if let Some((fname, loc)) = variants.iter().filter_map(|v| v.flavor).find_map(|fi| {
        let f = &cx.ix.flavors[fi];
        f.node_labels
            .iter()
            .find(|(k, _, v)| *k == CAPACITY_TYPE && v.as_str() == Some("spot"))
            .map(|(_, _, v)| (f.name, cx.ix.objects[f.obj].loc(*v)))
    }) {
        risk.reasons.push(format!(
            "Kueue may admit it to ResourceFlavor `{fname}`, whose nodes are spot"
        ));
        risk.related.push((
            loc,
            format!("ResourceFlavor `{fname}` selects spot capacity"),
        ));
    } else if cx.ix.uses_karpenter() && cx.ix.elsewhere.get(ti).copied().flatten().is_none() {
        // (A pod an admission check places elsewhere lands on none of these pools.)
        // Pools the pod can land on; with none (or no fit information), every pool. A pool
        // without GPU instances is no place for these pods, whatever its labels and taints.
        let gpu = |p: &usize| cx.ix.pools.capability[*p] != GpuCapability::None;
        let fitting: Vec<usize> = cx.ix.landing_pools(ti).into_iter().filter(gpu).collect();
        // Nor a pool confined to another maker's accelerators (NVIDIA pools for a Neuron job).
        let asks = crate::sched::gpu_resources(t);
        let offers = |p: &usize| {
            asks.iter()
                .all(|r| crate::sched::offers(&cx.ix.nodepools[*p], r))
        };
        // A pod whose selectors or tolerations fit none of the pools never lands on one (it
        // runs on nodes from elsewhere, or stays Pending): no pool's spot or consolidation is
        // its risk.
        let fits_none = fitting.is_empty()
            && cx
                .ix
                .variant_placements
                .get(ti)
                .is_some_and(|v| !v.is_empty());
        let candidates: Vec<usize> = if fits_none {
            Vec::new()
        } else if fitting.is_empty() {
            (0..cx.ix.nodepools.len())
                .filter(gpu)
                .filter(offers)
                .collect()
        } else {
            fitting
        };
        let spot: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&pi| {
                cx.ix.nodepools[pi].capacity_types().contains(&"spot")
                    && (variants.is_empty() || variants.iter().any(|v| allows_spot(&v.constraints)))
            })
            .collect();
        if spot.is_empty() {
            disruption_risk(cx, t, &candidates, &mut risk);
        }
        if let Some(&first) = spot.first() {
            let pool = &cx.ix.nodepools[first];
            let names: Vec<String> = spot
                .iter()
                .map(|&pi| format!("`{}`", cx.ix.nodepools[pi].name))
                .collect();
            let noun = if names.len() == 1 {
                "NodePool"
            } else {
                "NodePools"
            };
            risk.reasons.push(format!(
                "{noun} {} may run it on spot capacity",
                names.join(", ")
            ));
            let at = pool
                .requirements
                .iter()
                .find(|r| r.key == CAPACITY_TYPE)
                .map_or(pool.anchor, |r| r.node);
            risk.related.push((
                pool.loc(at),
                format!("NodePool `{}` may launch spot instances", pool.name),
            ));
        }
    }
    if let Some(ci) = preempting {
        let cq = &cx.ix.cluster_queues[ci];
        risk.reasons.push(format!(
            "ClusterQueue `{}` preempts admitted workloads",
            cq.name
        ));
        if let Some(p) = cq.preemption {
            let obj = &cx.ix.objects[cq.obj];
            let at = obj
                .root
                .at(&["spec"])
                .and_then(|s| s.entry("preemption"))
                .map_or(p, |(k, _)| k);
            risk.related.push((
                obj.loc(at),
                format!("ClusterQueue `{}` may preempt it", cq.name),
            ));
        }
    }
    risk
}

/// The priority Kueue gives a template's workload: its WorkloadPriorityClass, else its pods'
/// PriorityClass, else 0. `None`: a class not in view.
pub(super) fn priority_of(cx: &Ctx, ti: usize) -> Option<i64> {
    let value = |kind: &str, name: &str| cx.ix.named(kind, name).into_iter().find_map(class_value);
    let t = &cx.ix.templates[ti];
    match cx.ix.owner(t).label(WPC_LABEL) {
        Some((_, n)) => value("WorkloadPriorityClass", n.as_str()?),
        None => match t.priority_class() {
            Some(n) => value("PriorityClass", n.as_str()?),
            None => Some(0),
        },
    }
}

/// Per ClusterQueue that preempts only for a higher priority ([`ClusterQueue::preempts_only_lower`]):
/// the highest priority a workload there may have, from every priority class in view (anyone may
/// submit with one) and the workloads in view that use the queue; `None`: one of them uses a
/// class not in view. A workload at that priority is evicted for nothing the repository runs.
///
/// [`ClusterQueue::preempts_only_lower`]: crate::model::ClusterQueue::preempts_only_lower
pub(super) fn priority_ceilings(cx: &Ctx) -> std::collections::HashMap<usize, Option<i64>> {
    let mut out = std::collections::HashMap::new();
    if !cx.ix.cluster_queues.iter().any(|q| q.preempts_only_lower()) {
        return out;
    }
    let classes = ["WorkloadPriorityClass", "PriorityClass"]
        .iter()
        .flat_map(|kind| cx.ix.of_kind(kind))
        .map(class_value)
        .try_fold(0i64, |m, v| Some(m.max(v?)));
    for (ti, q) in cx.ix.queues.iter().enumerate() {
        let Some(ci) = q.and_then(|q| q.cluster_queue) else {
            continue;
        };
        if !cx.ix.cluster_queues[ci].preempts_only_lower() {
            continue;
        }
        let p = priority_of(cx, ti);
        let e = out.entry(ci).or_insert(classes);
        *e = e.zip(p).map(|(a, b)| a.max(b));
    }
    out
}

/// A PriorityClass's or WorkloadPriorityClass's `value`.
fn class_value(o: &crate::model::Object) -> Option<i64> {
    o.root.get("value")?.as_str()?.parse().ok()
}

/// Karpenter's own disruption of the pools the pod may land on: consolidation of underutilized
/// nodes (unless the pods carry `karpenter.sh/do-not-disrupt: "true"`), else expiry, which that
/// annotation does not hold back.
fn disruption_risk(cx: &Ctx, t: &PodTemplate, candidates: &[usize], risk: &mut Risk) {
    if cx.ix.nodepools.is_empty() {
        risk.reasons.push(
            "Karpenter manages the nodes (config `cluster.karpenter`) and consolidates, expires and replaces them"
                .to_string(),
        );
        return;
    }
    // Node groups (EKS managed, the cluster autoscaler's) are neither consolidated nor expired
    // by Karpenter.
    let pools = || {
        candidates
            .iter()
            .filter(|&&pi| cx.ix.pools.capability[pi] != GpuCapability::None)
            .map(|&pi| &cx.ix.nodepools[pi])
            .filter(|p| p.is_karpenter())
    };
    if !protected(t) {
        let consolidating = pools().find_map(|p| {
            let version = cx.ix.objects.get(p.obj).map_or("v1", |o| o.version);
            Policy::of(p, version).map(|policy| (p, policy))
        });
        if let Some((pool, policy)) = consolidating {
            let default = if policy.by_default {
                ", its default"
            } else {
                ""
            };
            risk.reasons.push(format!(
                "NodePool `{}` consolidates underutilized nodes with `{}`{default}",
                pool.name, policy.name
            ));
            risk.related.push((
                pool.loc(policy.node),
                format!("NodePool `{}` consolidates underutilized nodes", pool.name),
            ));
            return;
        }
    }
    if let Some((pool, after, node)) =
        pools().find_map(|p| p.expire_after().map(|(a, n)| (p, a, n)))
    {
        let how = if node.is_some() {
            format!("`expireAfter: {after}`")
        } else {
            format!("`expireAfter` defaults to {after}")
        };
        risk.reasons.push(format!(
            "NodePool `{}` replaces its nodes on expiry ({how}), which `karpenter.sh/do-not-disrupt` does not prevent",
            pool.name
        ));
        risk.related.push((
            pool.loc(node.unwrap_or(pool.anchor)),
            format!("NodePool `{}` expires its nodes after {after}", pool.name),
        ));
    }
}
