use super::Ctx;
use crate::catalog;
use crate::diag::Diagnostic;
use crate::model::{Expr, NodePool, is_gpu_resource};
use crate::quantity::is_placeholder;
use crate::sched::{GpuCapability, gpu_capability};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a Karpenter NodePool (or v1alpha5 Provisioner) that explicitly launches GPU or other
    /// accelerator instances (`instance-gpu-*` requirements, the `g`/`p` categories, GPU families
    /// or instance types) but has no `NoSchedule` or `NoExecute` taint in `taints`.
    /// `startupTaints` do not count (they are removed once the node is initialized), and a
    /// `PreferNoSchedule` taint alone is not enough (it only steers).
    ///
    /// ## Why is this bad?
    /// Without a hard taint, any pending pod that fits (web apps, CI runners, batch jobs that need
    /// no GPU) gets packed onto expensive GPU nodes. They take CPU and memory the GPU workloads
    /// need, and they keep the node busy so consolidation cannot remove it: you pay GPU prices
    /// for CPU work, and a GPU can sit idle on a node full of other pods while GPU pods wait.
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
    ///         - key: karpenter.k8s.aws/instance-family
    ///           operator: In
    ///           values: [g6e, p5]
    ///       # no taints
    /// ```
    ///
    /// ## Fix
    /// Taint the pool and tolerate the taint in GPU pods. Keying the taint on the resource name
    /// lets EKS's ExtendedResourceToleration admission plugin add the toleration to every pod
    /// that requests `nvidia.com/gpu`.
    /// ```yaml
    /// spec:
    ///   template:
    ///     spec:
    ///       taints:
    ///         - key: nvidia.com/gpu
    ///           effect: NoSchedule
    /// ```
    name: "gpu-nodepool-untainted",
    category: "cost",
    kinds: &["NodePool"],
    severity: Warning,
    summary: "a GPU NodePool without a NoSchedule/NoExecute taint lets any pod onto GPU nodes",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in &cx.ix.nodepools {
        if gpu_capability(pool) != GpuCapability::Explicit {
            continue;
        }
        // A placeholder effect (`${EFFECT}`) may well be a hard one.
        if pool
            .taints
            .iter()
            .any(|t| t.is_hard() || is_placeholder(t.effect))
        {
            continue;
        }
        let owner = &cx.ix.objects[pool.obj];
        let limit_key = pool
            .limits
            .into_iter()
            .flat_map(|l| l.entries())
            .find(|(k, _, _)| is_gpu_resource(k));
        let taint_key = pool.taints.iter().find(|t| is_gpu_resource(t.key));
        let (node, why, neuron) = if let Some((r, n)) = gpu_marker(pool) {
            (n, format!(" (`{}`)", describe(r)), is_neuron(r))
        } else if let Some((k, kn, _)) = limit_key {
            (
                kn,
                format!(" (its `limits` budget `{k}`)"),
                k.starts_with("aws.amazon.com/neuron"),
            )
        } else if let Some(t) = taint_key {
            let at = t.node.get("key").unwrap_or(t.node);
            (
                at,
                format!(" (its `{}` taint)", t.key),
                t.key.starts_with("aws.amazon.com/neuron"),
            )
        } else {
            (pool.anchor, String::new(), false)
        };
        let what = if neuron {
            "Neuron (Inferentia/Trainium)"
        } else {
            "GPU"
        };
        let soft: Vec<_> = pool
            .taints
            .iter()
            .filter(|t| t.effect == "PreferNoSchedule")
            .collect();
        let mut notes = Vec::new();
        if !soft.is_empty() {
            notes.push("a PreferNoSchedule taint only steers pods away; the scheduler still places other pods there when nothing else fits");
        }
        if !pool.startup_taints.is_empty() {
            notes.push(
                "startupTaints are removed once the node is initialized and keep nothing off it",
            );
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        let mut d = cx.on(
            owner,
            node,
            format!(
                "{} `{}` launches {what} instances{why} but has no NoSchedule or NoExecute taint{notes}: pods that need no accelerator get packed onto these expensive nodes and keep them from scaling down",
                owner.kind, pool.name
            ),
        );
        for t in soft {
            let at = t.node.get("effect").unwrap_or(t.node);
            d = d.related(pool.loc(at), "PreferNoSchedule only steers");
        }
        for t in &pool.startup_taints {
            let at = t.node.get("key").unwrap_or(t.node);
            d = d.related(
                pool.loc(at),
                "a startup taint, removed once the node is ready",
            );
        }
        let key = if neuron {
            "aws.amazon.com/neuron"
        } else {
            "nvidia.com/gpu"
        };
        let path = if pool.legacy_provisioner {
            "spec.taints"
        } else {
            "spec.template.spec.taints"
        };
        // The plugin tolerates the taint of the resource a pod requests: Neuron pods ask for
        // devices or for cores.
        let cores = if neuron {
            "; pods that request `aws.amazon.com/neuroncore` get one for that key instead"
        } else {
            ""
        };
        // Only an AWS pool may run on EKS.
        let eks = if pool.uses_aws_catalog() {
            format!(
                "\n(on EKS, pods that request `{key}` get this toleration from the ExtendedResourceToleration admission plugin{cores})"
            )
        } else {
            String::new()
        };
        out.push(d.help(format!(
            "add a hard taint under `{path}` and tolerate it in the pods that need the accelerator:\n- key: {key}\n  effect: NoSchedule{eks}"
        )));
    }
}

/// The requirement that makes the pool a GPU pool, and its most specific node (the GPU value in
/// an `In` list, else the key).
fn gpu_marker<'p, 'a>(pool: &'p NodePool<'a>) -> Option<(&'p Expr<'a>, Node<'a>)> {
    for r in &pool.requirements {
        let key_node = r.node.get("key").unwrap_or(r.node);
        let value_nodes = || r.node.get("values").into_iter().flat_map(|n| n.items());
        let first_value =
            |pred: &dyn Fn(&str) -> bool| value_nodes().find(|n| n.as_str().is_some_and(pred));
        let hit = match (catalog::karpenter_key(r.key), r.op) {
            ("karpenter.k8s.aws/instance-gpu-count", "In") => {
                first_value(&|v| v.parse::<u64>().map_or(true, |n| n > 0))
            }
            (k, "In" | "Exists" | "Gt" | "Gte")
                if k.starts_with("karpenter.k8s.aws/instance-gpu-")
                    || k.starts_with("karpenter.k8s.aws/instance-accelerator-") =>
            {
                Some(key_node)
            }
            ("karpenter.k8s.aws/instance-category", "In") => {
                first_value(&catalog::is_accelerator_category)
            }
            ("karpenter.k8s.aws/instance-family", "In") => {
                first_value(&catalog::is_accelerator_family)
            }
            ("node.kubernetes.io/instance-type", "In") => {
                first_value(&|v| catalog::is_accelerator_family(family_of(v)))
            }
            _ => None,
        };
        if let Some(n) = hit {
            return Some((r, n));
        }
    }
    None
}

fn family_of(instance_type: &str) -> &str {
    instance_type
        .split_once('.')
        .map_or(instance_type, |(f, _)| f)
}

/// Whether the requirement selects AWS Neuron (Inferentia, Trainium) rather than GPUs.
pub(super) fn is_neuron(r: &Expr) -> bool {
    let neuron = |v: &str| {
        let v = family_of(v);
        v.starts_with("inf") || v.starts_with("trn")
    };
    let key = catalog::karpenter_key(r.key);
    key.starts_with("karpenter.k8s.aws/instance-accelerator-")
        || (matches!(
            key,
            "karpenter.k8s.aws/instance-category"
                | "karpenter.k8s.aws/instance-family"
                | "node.kubernetes.io/instance-type"
        ) && !r.values.is_empty()
            && r.values.iter().all(|v| neuron(v)))
}

/// `key Op [values]` for messages.
fn describe(r: &Expr) -> String {
    if r.values.is_empty() {
        format!("{} {}", r.key, r.op)
    } else {
        format!("{} {} [{}]", r.key, r.op, r.values.join(", "))
    }
}
