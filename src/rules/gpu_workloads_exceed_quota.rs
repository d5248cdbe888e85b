use super::Ctx;
use super::gpu_inference_pdb_missing::{autoscaled, scalers};
use super::gpu_rollout_exceeds_quota::{per_pod, quota_caps};
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::sched::template_pods;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a namespace's ResourceQuota on an accelerator (`requests.nvidia.com/gpu`,
    /// `requests.amd.com/gpu`, …) that is smaller than what the namespace's long-running GPU
    /// workloads ask for together: the Deployments and StatefulSets in it, each at its written
    /// replica count, or at the `minReplicas` of the autoscaler that scales it (the fewest pods
    /// it ever keeps). One workload whose replicas alone exceed the quota is flagged too. A workload written twice counts once, at its larger count; a pod larger
    /// than the whole quota is `gpu-pod-exceeds-quota`'s finding and is not counted.
    /// Quotas with `scopes` or a `scopeSelector`, objects without a namespace, and counts that
    /// are not written out are not judged.
    ///
    /// ## Why is this bad?
    /// Quota admission refuses each pod that would take the namespace past its cap. The
    /// ReplicaSets and StatefulSets of the workloads that come last keep retrying and report
    /// `exceeded quota` events, and some model servers run with fewer replicas than written, or
    /// none: which ones depends on the order they happen to be created in.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: ResourceQuota
    /// metadata: {name: gpus, namespace: serving}
    /// spec:
    ///   hard: {requests.nvidia.com/gpu: "4"}
    /// ---
    /// # and, in namespace serving, Deployments `chat` (3 replicas of 1 GPU) and
    /// # `embed` (2 replicas of 1 GPU): 5 GPUs asked for, 4 allowed
    /// ```
    ///
    /// ## Fix
    /// Raise the quota to what the workloads ask for, or lower their replica counts (or the
    /// autoscalers' `minReplicas`) until they fit.
    name: "gpu-workloads-exceed-quota",
    category: "resources",
    kinds: &["ResourceQuota"],
    severity: Warning,
    summary: "a namespace's GPU Deployments and StatefulSets together ask for more than its ResourceQuota allows",
    check: check,
}

/// At most this many workloads are pointed at as related places; the message counts them all.
const SHOWN: usize = 8;

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let caps = quota_caps(ix);
    if caps.is_empty() {
        return;
    }
    let scalers = scalers(ix);
    // (namespace, resource) → the workloads' GPUs by (kind, name), in written order, and where
    // each (kind, name) stands in that list.
    type Asks<'i, 'a> = Vec<(&'a str, &'a str, u64, &'i Object<'a>)>;
    let mut asks: HashMap<(&str, &str), Asks> = HashMap::new();
    let mut at: HashMap<(&str, &str, &str, &str), usize> = HashMap::new();
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let o = ix.owner(t);
        let (Some(ns), Some(name)) = (o.namespace, o.name) else {
            continue;
        };
        if o.group != "apps" || !matches!(o.kind, "Deployment" | "StatefulSet") {
            continue;
        }
        let pods = match autoscaled(&scalers, o) {
            Some((_, _, min)) => Some(min),
            None => template_pods(o, t),
        };
        let Some(pods) = pods.filter(|&p| p > 0) else {
            continue;
        };
        for (res, n) in per_pod(t) {
            let Some(cap) = caps.get(&(ns, res)) else {
                continue;
            };
            if n == 0 || n > cap.hard {
                continue;
            }
            let total = pods.saturating_mul(n);
            let list = asks.entry((ns, res)).or_default();
            match at.get(&(ns, res, o.kind, name)) {
                Some(&i) => list[i].2 = list[i].2.max(total),
                None => {
                    at.insert((ns, res, o.kind, name), list.len());
                    list.push((o.kind, name, total, o));
                }
            }
        }
    }
    let mut keys: Vec<_> = asks.keys().copied().collect();
    keys.sort_unstable();
    for key @ (ns, res) in keys {
        let (list, cap) = (&asks[&key], &caps[&key]);
        let total: u64 = list.iter().map(|w| w.2).sum();
        if total <= cap.hard {
            continue;
        }
        let who = match list.as_slice() {
            [(_, _, _, o)] => format!("{} asks for {total} at its replica count", o.describe()),
            _ => format!(
                "its {} GPU Deployments and StatefulSets ask for {total} together at their replica counts",
                list.len()
            ),
        };
        let mut d = cx
            .on(
                cap.quota,
                cap.at,
                format!(
                    "ResourceQuota `{}` allows {} `requests.{res}` in namespace `{ns}`, but {who}: quota admission refuses the pods past the cap, so replicas holding {} of them are never created",
                    cap.quota.name_or_unnamed(),
                    cap.hard,
                    total - cap.hard,
                ),
            )
            .help(format!(
                "raise `requests.{res}` to {total}, or lower the workloads' replicas (or their autoscalers' `minReplicas`) until they fit in {}",
                cap.hard
            ));
        for (kind, _, n, o) in list.iter().take(SHOWN) {
            d = d.related(o.loc(o.anchor()), format!("{kind} asks for {n}"));
        }
        out.push(d);
    }
}
