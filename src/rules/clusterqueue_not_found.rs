use super::{Ctx, usable};
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags a Kueue LocalQueue whose `spec.clusterQueue` names a ClusterQueue that is neither in
    /// the linted files nor declared external in `.gpuops.yaml`.
    ///
    /// ## Why is this bad?
    /// A LocalQueue is only a namespaced door into a ClusterQueue. When the ClusterQueue does not
    /// exist, Kueue marks the LocalQueue inactive and every Job submitted to it stays suspended:
    /// its Workload is never admitted, no pod is created, and the GPUs sit idle while the team
    /// waits. `spec.clusterQueue` is immutable, so fixing it later means recreating the LocalQueue.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: LocalQueue
    /// metadata:
    ///   name: team-a
    ///   namespace: ml
    /// spec:
    ///   clusterQueue: gpu-queu   # the ClusterQueue is called `gpu-queue`
    /// ```
    ///
    /// ## Fix
    /// Name an existing ClusterQueue. If it is created outside the repo (by a platform team, by
    /// Terraform), declare it:
    /// ```yaml
    /// # .gpuops.yaml
    /// external:
    ///   ClusterQueue: [gpu-queue]
    /// ```
    name: "clusterqueue-not-found",
    category: "references",
    kinds: &["LocalQueue"],
    severity: Error,
    summary: "a LocalQueue points at a ClusterQueue that does not exist",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for lq in &cx.ix.local_queues {
        let Some(node) = lq.cluster_queue else {
            continue;
        };
        let Some(name) = usable(node) else { continue };
        if cx.ix.exists("ClusterQueue", None, name) {
            continue;
        }
        let owner = &cx.ix.objects[lq.obj];
        let mut d = cx.on(
            owner,
            node,
            format!(
                "{} points at ClusterQueue `{name}`, which does not exist: Kueue keeps the LocalQueue inactive and never admits the Jobs submitted to it",
                owner.describe()
            ),
        );
        let best = cx
            .ix
            .near_cluster_queues()
            .closest(name)
            .map(|(d, n, &i)| (d, n, &cx.ix.cluster_queues[i]));
        let external = format!(
            "if it is created outside this repo, declare it in .gpuops.yaml: `external: {{ClusterQueue: [{name}]}}`"
        );
        let help = match best {
            Some((_, _, q)) => {
                let o = &cx.ix.objects[q.obj];
                d = d.related(o.loc(o.anchor()), "the closest ClusterQueue");
                format!("did you mean `{}`? Otherwise, {external}", q.name)
            }
            None => format!("name an existing ClusterQueue or add it to the repo; {external}"),
        };
        let d = d.help(help);
        out.extend(if best.is_some() {
            Some(d)
        } else {
            cx.unresolved(d, "ClusterQueue")
        });
    }
}
