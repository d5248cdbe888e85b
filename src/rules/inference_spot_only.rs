use super::{Ctx, template_anchor};
use crate::diag::Diagnostic;
use crate::index::{Class, is_server_kind};

declare_rule! {
    /// ## What it does
    /// Flags a GPU Deployment or StatefulSet classified as inference when every NodePool it can
    /// land on (labels, requirements and taints, after Kueue injects its flavor) launches only
    /// spot capacity: the pool's `karpenter.sh/capacity-type` allows only `spot`, or the pod
    /// itself (its nodeSelector, required affinity or its Kueue flavor's `nodeLabels`) selects
    /// `spot` on pools that would also offer on-demand. A pool without a capacity-type
    /// requirement launches on-demand (Karpenter's default), and `reserved` counts as a fallback.
    /// Nothing is reported when the workload lands on no pool (other rules say why), nor for one
    /// that a KEDA ScaledObject scales to zero (`minReplicaCount: 0`, the default): a worker
    /// draining a queue, down whenever the queue is empty, whose messages a reclaim only delays.
    ///
    /// ## Why is this bad?
    /// Spot GPU capacity is reclaimed with two minutes' notice, often for a whole instance family
    /// in a zone at once, and may then be unavailable for hours. A model server with no
    /// on-demand fallback goes down with it and cannot come back until spot returns; training
    /// can checkpoint and resume, a serving endpoint cannot.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: inference
    /// spec:
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: karpenter.sh/capacity-type
    ///           operator: In
    ///           values: [spot]
    /// ```
    ///
    /// ## Fix
    /// Allow on-demand in the pool (Karpenter prefers spot when both are allowed and falls back
    /// to on-demand), or give the server a second pool with on-demand capacity it may land on:
    /// ```yaml
    ///         - key: karpenter.sh/capacity-type
    ///           operator: In
    ///           values: [spot, on-demand]
    /// ```
    name: "inference-spot-only",
    category: "availability",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a GPU inference Deployment/StatefulSet that can land only on spot capacity",
    check: check,
    chunked: true,
}

const KEY: &str = crate::index::CAPACITY_TYPE;

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let keda: Vec<_> = ix.of_kind("ScaledObject").collect();
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() || ix.classes.get(ti).map(|c| c.class()) != Some(Class::Inference) {
            continue;
        }
        let obj = ix.owner(t);
        if !is_server_kind(obj)
            || super::gpu_inference_pdb_missing::autoscaled(&keda, obj)
                .is_some_and(|(_, _, min)| min == 0)
        {
            continue;
        }
        let cap = crate::index::landing_capacity(ix, ti);
        if cap.pools.is_empty() || cap.any(ix, |c| c != "spot") {
            continue;
        }
        let pools = &cap.pools;
        let pod_loc = cap.pod_loc;
        let names: Vec<&str> = pools.iter().map(|&p| ix.nodepools[p].name).collect();
        let first = &ix.nodepools[pools[0]];
        let pool_req = first
            .requirements
            .iter()
            .find(|r| r.key == KEY)
            .map(|r| first.loc(r.node))
            .or_else(|| {
                first
                    .labels
                    .iter()
                    .find(|(k, _, _)| *k == KEY)
                    .map(|(_, _, v)| first.loc(*v))
            });
        let pools_allow_on_demand = pools.iter().any(|&p| {
            ix.nodepools[p]
                .capacity_types()
                .iter()
                .any(|c| *c != "spot")
        });
        let own = pod_loc.filter(|_| pools_allow_on_demand);
        // Capacity outside Karpenter (an EKS managed node group from Terraform) is named as what
        // it is, and fixed where it is defined.
        let karpenter = pools.iter().all(|&p| ix.nodepools[p].is_karpenter());
        let noun = if karpenter {
            "NodePool"
        } else {
            first.defined_by.unwrap_or("node group")
        };
        let (loc, why) = match own {
            Some(loc) => (
                loc,
                "its own selector asks for `spot` on pools that would also launch on-demand"
                    .to_string(),
            ),
            _ => (
                template_anchor(obj, t).map_or(obj.loc(obj.anchor()), |n| obj.loc(n)),
                format!(
                    "the {} it can land on ({}) {} only spot capacity",
                    match (karpenter, names.len()) {
                        (true, 1) => "NodePool",
                        (true, _) => "NodePools",
                        (false, 1) => noun,
                        (false, _) => "pools",
                    },
                    crate::diag::backticked(&names, ", "),
                    if names.len() == 1 {
                        "launches"
                    } else {
                        "launch"
                    },
                ),
            ),
        };
        let mut d = cx
            .at(
                loc,
                format!(
                    "GPU model server {} has no on-demand fallback: {why}; a spot reclaim takes its replicas down with two minutes' notice and they stay Pending until spot GPUs return ({})",
                    obj.describe(),
                    ix.classes[ti].evidence
                ),
            )
            .object(Some(obj.obj_ref()))
            .help(if own.is_some() {
                format!("drop the `{KEY}: spot` selector (Karpenter already prefers spot where the pool allows both), or allow `on-demand` beside it")
            } else if !karpenter {
                format!("give it on-demand capacity to land on: an on-demand {noun} beside the spot one, or a NodePool that allows `on-demand`")
            } else {
                format!("allow on-demand where it lands (`{KEY}` `In [spot, on-demand]`: Karpenter prefers spot and falls back), or let it reach a pool with on-demand capacity")
            });
        if let Some(l) = pool_req {
            let what = if own.is_some() {
                format!("NodePool `{}` would also launch on-demand", first.name)
            } else if !karpenter {
                format!("{noun} `{}` is spot here", first.name)
            } else {
                format!("NodePool `{}` limits its capacity type here", first.name)
            };
            d = d.related(l, what);
        }
        out.push(d);
    }
}
