use super::Ctx;
use super::gpu_rollout_exceeds_quota::{per_pod, quota_caps};
use crate::diag::Diagnostic;
use crate::sched::template_pods;

declare_rule! {
    /// ## What it does
    /// Flags a GPU pod template that asks for more of an accelerator (`nvidia.com/gpu`,
    /// `amd.com/gpu`, `aws.amazon.com/neuron*`, …) in one pod than the ResourceQuota of its
    /// namespace allows in total (`requests.nvidia.com/gpu`). The pod's ask is the sum over its
    /// containers (requests, else limits). Quotas with `scopes` or a `scopeSelector`, objects
    /// without a namespace, templates scaled to zero and counts that are not written out are not
    /// judged.
    ///
    /// ## Why is this bad?
    /// Quota admission refuses a pod whose requests exceed what the namespace may use, even when
    /// nothing else runs there. No pod of the workload is ever created: a Deployment's ReplicaSet
    /// and a Job's controller retry and report `exceeded quota` events, and the model server or
    /// training run never starts. A GPU count raised in the workload and not in the quota (or the
    /// other way round) is the usual cause.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: ResourceQuota
    /// metadata: {name: gpus, namespace: research}
    /// spec:
    ///   hard: {requests.nvidia.com/gpu: "2"}
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata: {name: train, namespace: research}
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: trainer
    ///           resources:
    ///             limits: {nvidia.com/gpu: 4}
    /// ```
    ///
    /// ## Fix
    /// Ask for no more than the quota allows, or raise the quota's `requests.<resource>` to at
    /// least what one pod asks.
    name: "gpu-pod-exceeds-quota",
    category: "resources",
    kinds: &["pod templates", "ResourceQuota"],
    severity: Error,
    summary: "one GPU pod asks for more accelerators than its namespace's ResourceQuota allows",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let caps = quota_caps(ix);
    if caps.is_empty() {
        return;
    }
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let o = ix.owner(t);
        let Some(ns) = o.namespace else { continue };
        if template_pods(o, t) == Some(0) {
            continue;
        }
        for (res, n) in per_pod(t) {
            let Some(cap) = caps.get(&(ns, res)) else {
                continue;
            };
            if n <= cap.hard {
                continue;
            }
            // Point at the first app container that asks for it.
            let at = t
                .containers
                .iter()
                .filter(|c| !c.init)
                .find_map(|c| {
                    c.requests
                        .and_then(|r| r.get(res))
                        .or_else(|| c.limits.and_then(|l| l.get(res)))
                })
                .unwrap_or(t.spec);
            out.push(
                cx.on(
                    o,
                    at,
                    format!(
                        "each pod of {} asks for {n} `{res}`, but ResourceQuota `{}` allows {} `requests.{res}` in namespace `{ns}` altogether: quota admission refuses every pod, so none ever starts",
                        o.describe(),
                        cap.quota.name_or_unnamed(),
                        cap.hard,
                    ),
                )
                    .related(cap.quota.loc(cap.at), format!("the namespace's cap on `{res}`"))
                    .help(format!(
                        "ask for at most {} `{res}` per pod, or raise the quota's `requests.{res}` to at least {n}",
                        cap.hard
                    )),
            );
        }
    }
}
