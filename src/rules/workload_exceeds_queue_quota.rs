use super::Ctx;
use crate::diag::Diagnostic;
use crate::index::{admission, show_quantity};

declare_rule! {
    /// ## What it does
    /// Flags a workload submitted to Kueue whose total request of a GPU resource is more than its
    /// ClusterQueue may ever admit. The total is what Kueue admits at once: every pod set, pods ×
    /// GPUs per pod (`parallelism` of a Job, every replica of a PyTorchJob, every replicated Job
    /// of a JobSet, every worker group of a RayCluster; one pod of a Deployment, one group of a
    /// LeaderWorkerSet). The most a ClusterQueue admits on a flavor is its `nominalQuota`; in a
    /// cohort, plus its `borrowingLimit`, or without one, plus all the other queues of the cohort
    /// may lend (their nominal quota, capped by their `lendingLimit`). Only the flavors Kueue may
    /// assign to the pod sets count (their `nodeLabels` and `nodeTaints` against the pod
    /// template); pod sets may get different flavors, so the workload is flagged only when a pod
    /// set exceeds every flavor it may get, or the whole exceeds them together. GPUs a pod gets
    /// from DRA ResourceClaimTemplates count as Kueue charges them: their devices, under the
    /// resource Kueue's `deviceClassMappings` name for their device class.
    ///
    /// The rule is silent when it cannot know: a pod count or quota that is a placeholder,
    /// partial admission (`kueue.x-k8s.io/job-min-parallelism`), or a cohort that has a Cohort
    /// object (which may hold quota of its own or borrow from a parent).
    ///
    /// ## Why is this bad?
    /// Kueue admits a workload only when all of it fits in the quota at once. A job larger than
    /// the most its queue may ever hold is never admitted: it stays suspended with no event
    /// beyond "couldn't assign flavors", while the team waits for GPUs that never come.
    ///
    /// ## Example
    /// ```yaml
    /// # ClusterQueue `training`: flavor a100, nvidia.com/gpu nominalQuota 16, no cohort
    /// apiVersion: kubeflow.org/v1
    /// kind: PyTorchJob
    /// metadata:
    ///   name: llm
    ///   labels:
    ///     kueue.x-k8s.io/queue-name: training
    /// spec:
    ///   pytorchReplicaSpecs:
    ///     Master: {replicas: 1, template: ...}   # 8 GPUs
    ///     Worker: {replicas: 3, template: ...}   # 8 GPUs each: 32 in all
    /// ```
    ///
    /// ## Fix
    /// Make the job fit (fewer replicas or GPUs per pod), or raise the flavor's `nominalQuota`
    /// (or `borrowingLimit`, in a cohort that has the GPUs) in the ClusterQueue to at least the
    /// job's total.
    name: "workload-exceeds-queue-quota",
    category: "kueue",
    kinds: &["workloads"],
    severity: Error,
    summary: "a workload asks for more GPUs at once than its ClusterQueue may ever admit",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.cluster_queues.is_empty() {
        return;
    }
    let quotas = ix.quotas();
    for (oi, _) in cx.objects() {
        let Some((cqi, verdicts)) = admission(ix, quotas, oi) else {
            continue;
        };
        let obj = &ix.objects[oi];
        let cq = &ix.cluster_queues[cqi];
        let cq_obj = &ix.objects[cq.obj];
        let label = ix
            .queues
            .get(ix.template_range(oi).start)
            .copied()
            .flatten()
            .and_then(|q| q.label);
        for a in verdicts.iter().filter(|a| a.fits == Some(false)) {
            let r = a.request.resource;
            let total = a.request.total();
            let flavors: Vec<String> = a
                .caps
                .iter()
                .map(|c| format!("`{}`: {}", c.flavor, c.describe()))
                .collect();
            let most = a.max.map_or("?".into(), show_quantity);
            let single = a.request.podsets.len() == 1;
            let breakdown = a.request.breakdown(ix);
            let needs = if single && a.request.podsets[0].pods == 1 {
                format!("{total} {r}")
            } else {
                format!("{total} {r} at once ({breakdown})")
            };
            let node = label.unwrap_or_else(|| obj.anchor());
            let mut d = cx.on(
                obj,
                node,
                format!(
                    "{} needs {needs}, but ClusterQueue `{}` may admit at most {most} on the flavors it may get ({}): Kueue never admits the workload, so it stays suspended",
                    obj.describe(),
                    cq.name,
                    flavors.join("; ")
                ),
            );
            for c in a.caps.iter().take(3) {
                d = d.related(
                    cq_obj.loc(c.node()),
                    format!(
                        "ClusterQueue `{}` gives flavor `{}` {}",
                        cq.name,
                        c.flavor,
                        c.describe()
                    ),
                );
            }
            // A quota written in Terraform may be a variable's default that a caller or a
            // var-file sets otherwise: not certain.
            if ix.files.get(cq_obj.file).is_some_and(|f| {
                crate::source::terraform::is_terraform(std::path::Path::new(&f.path))
            }) {
                d = d.with_severity(crate::diag::Severity::Warning);
            }
            out.push(d.help(format!(
                "make the workload fit in {most} {r}, or raise the flavor's `nominalQuota` (or `borrowingLimit`, in a cohort that has the GPUs) in ClusterQueue `{}` to at least {total}",
                cq.name
            )));
        }
    }
}
