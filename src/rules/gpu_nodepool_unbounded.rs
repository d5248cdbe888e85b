use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::is_gpu_resource;
use crate::sched::{GpuCapability, gpu_capability};

declare_rule! {
    /// ## What it does
    /// Flags a Karpenter NodePool that explicitly launches GPU instances but has no `limits`, or
    /// whose `limits` cap none of `nvidia.com/gpu` (or another accelerator resource), `cpu`,
    /// `memory` or `nodes`. For a v1alpha5 Provisioner the limits live in
    /// `spec.limits.resources`. Static NodePools (`spec.replicas`) are bounded by their replica
    /// count, and pools that launch only `reserved` capacity by the capacity reservations their
    /// node class selects: neither is flagged.
    ///
    /// ## Why is this bad?
    /// `limits` is the only thing that caps how much capacity Karpenter launches for a pool.
    /// Without it, a burst of pending pods, a Job with a huge `parallelism`, a runaway controller
    /// or a retry loop makes Karpenter launch as many GPU nodes as EC2 quotas allow, at tens of
    /// dollars per node-hour. A limit on `ephemeral-storage` or `pods` alone does not stop it.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: karpenter.k8s.aws/instance-category
    ///           operator: In
    ///           values: [g, p]
    ///   # no limits
    /// ```
    ///
    /// ## Fix
    /// Cap the pool at what the budget (and the Kueue quota it serves) allows:
    /// ```yaml
    /// spec:
    ///   limits:
    ///     nvidia.com/gpu: 16
    ///     cpu: "512"
    ///     memory: 2048Gi
    /// ```
    name: "gpu-nodepool-unbounded",
    category: "cost",
    kinds: &["NodePool"],
    severity: Warning,
    summary: "a GPU NodePool without limits on GPUs, CPU or memory",
    check: check,
}

/// Limits that bound how many nodes the pool launches.
fn bounds(resource: &str) -> bool {
    matches!(resource, "cpu" | "memory" | "nodes") || is_gpu_resource(resource)
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in &cx.ix.nodepools {
        if gpu_capability(pool) != GpuCapability::Explicit {
            continue;
        }
        // A static NodePool runs exactly `replicas` nodes; one that launches only reserved
        // capacity (EC2 capacity reservations its node class selects) as many as are reserved.
        if !pool.legacy_provisioner && pool.spec.get("replicas").is_some_and(|r| !r.is_null()) {
            continue;
        }
        if pool.capacity_types() == ["reserved"] {
            continue;
        }
        let set: Vec<&str> = pool
            .limits
            .into_iter()
            .flat_map(|l| l.entries())
            .filter(|(_, _, v)| !v.is_null())
            .map(|(k, _, _)| k)
            .collect();
        if set.iter().any(|k| bounds(k)) {
            continue;
        }
        let owner = &cx.ix.objects[pool.obj];
        let limits = pool.spec.entry("limits");
        let limits_key = limits.map(|(k, _)| k);
        // A Provisioner reads only `spec.limits.resources`; entries beside it are dropped.
        let misplaced: Vec<&str> = limits
            .filter(|_| pool.legacy_provisioner)
            .into_iter()
            .flat_map(|(_, v)| v.entries())
            .map(|(k, _, _)| k)
            .filter(|k| bounds(k))
            .collect();
        let empty = pool
            .limits
            .into_iter()
            .flat_map(|l| l.entries())
            .find(|(k, _, v)| bounds(k) && v.is_null());
        let (node, what) = match limits_key {
            Some(k) if !misplaced.is_empty() => (
                k,
                format!(
                    "its limits ({}) sit directly under `spec.limits`, and a Provisioner reads only `spec.limits.resources`",
                    crate::diag::backticked(&misplaced, ", ")
                ),
            ),
            Some(k) => match empty {
                Some((name, kn, _)) => (kn, format!("its `{name}` limit is empty")),
                None if set.is_empty() => (k, "`limits` sets no resource".to_string()),
                None => {
                    let names = set
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    // `gpu: 20`: a name no node reports caps nothing at all.
                    let native = |s: &str| {
                        matches!(
                            s,
                            "cpu" | "memory" | "pods" | "ephemeral-storage" | "storage"
                        ) || s.starts_with("hugepages-")
                    };
                    let why = if set.iter().all(|s| !s.contains('/') && !native(s)) {
                        "a resource name no node reports (an extended resource has a domain, as `nvidia.com/gpu` does)"
                    } else {
                        "which does not bound the number of nodes"
                    };
                    (k, format!("`limits` caps only {names}, {why}"))
                }
            },
            None => (pool.anchor, "there are no `limits`".to_string()),
        };
        // Inferentia and Trainium pools are named for what they launch, and capped on it.
        let neuron = pool
            .requirements
            .iter()
            .any(super::gpu_nodepool_untainted::is_neuron);
        let (kind, device) = if neuron {
            ("Neuron", "aws.amazon.com/neuron")
        } else {
            ("GPU", "nvidia.com/gpu")
        };
        let example = if pool.legacy_provisioner {
            format!("limits:\n  resources:\n    {device}: 16\n    cpu: \"512\"\n    memory: 2048Gi")
        } else {
            format!("limits:\n  {device}: 16\n  cpu: \"512\"\n  memory: 2048Gi")
        };
        out.push(
            cx.on(
                owner,
                node,
                format!(
                    "{} `{}` launches {kind} instances but {what}: nothing caps how many {kind} nodes Karpenter launches, so a burst of pending pods or a runaway job can run up an unbounded bill",
                    owner.kind, pool.name
                ),
            )
            .help(format!(
                "cap the pool under `spec` at what the budget{} allows, e.g.\n{example}",
                if cx.ix.cluster_queues.is_empty() {
                    ""
                } else {
                    " (and the Kueue quota it serves)"
                }
            )),
        );
    }
}
