use super::{Ctx, usable};
use crate::diag::Diagnostic;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a Kueue ClusterQueue without `spec.namespaceSelector` that a LocalQueue in the files
    /// points at. Where the files hold several ClusterQueues of that name (overlays, clusters),
    /// it is flagged only when none of them has a selector.
    ///
    /// ## Why is this bad?
    /// A ClusterQueue admits workloads only from the namespaces its `namespaceSelector` selects,
    /// and a missing selector selects none (only an empty one, `{}`, selects every namespace).
    /// Every workload submitted through the LocalQueues that point at it is marked inadmissible
    /// ("Workload namespace doesn't match ClusterQueue selector") and stays suspended: no pod is
    /// created and the quota is never used.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ClusterQueue
    /// metadata: {name: gpu}
    /// spec:                      # no namespaceSelector: no namespace may submit
    ///   resourceGroups:
    ///     - coveredResources: [nvidia.com/gpu]
    ///       flavors:
    ///         - name: a100
    ///           resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
    /// ---
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: LocalQueue
    /// metadata: {name: team-a, namespace: team-a}
    /// spec: {clusterQueue: gpu}
    /// ```
    ///
    /// ## Fix
    /// Select the namespaces that may submit (`namespaceSelector: {matchLabels: {team: a}}`), or
    /// every namespace: `namespaceSelector: {}`.
    name: "clusterqueue-admits-no-namespace",
    category: "kueue",
    kinds: &["ClusterQueue"],
    severity: Error,
    summary: "a ClusterQueue without a namespaceSelector, which admits workloads from no namespace",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    // The LocalQueues that point at each ClusterQueue name.
    let mut doors: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, lq) in ix.local_queues.iter().enumerate() {
        if let Some(name) = lq.cluster_queue.and_then(usable) {
            doors.entry(name).or_default().push(i);
        }
    }
    if doors.is_empty() {
        return;
    }
    // Whether any ClusterQueue of a name has a selector (`null` is none).
    let mut selected: HashMap<&str, bool> = HashMap::new();
    for cq in &ix.cluster_queues {
        let o = &ix.objects[cq.obj];
        let has = o
            .spec()
            .and_then(|s| s.get("namespaceSelector"))
            .is_some_and(|n| !n.is_null());
        *selected.entry(cq.name).or_default() |= has;
    }
    for cq in &ix.cluster_queues {
        let (Some(lqs), Some(false)) = (doors.get(cq.name), selected.get(cq.name)) else {
            continue;
        };
        let o = &ix.objects[cq.obj];
        let first = &ix.local_queues[lqs[0]];
        let lo = &ix.objects[first.obj];
        // The `spec` key, where the selector belongs.
        let at = o
            .root
            .entries()
            .find(|(k, _, _)| *k == "spec")
            .map_or(o.anchor(), |(_, key, _)| key);
        let mut d = cx
            .on(
                o,
                at,
                format!(
                    "ClusterQueue `{}` has no `namespaceSelector`, which selects no namespace: Kueue never admits the workloads of {} that points at it{}, and they stay suspended",
                    cq.name,
                    lo.describe(),
                    match lqs.len() {
                        1 => String::new(),
                        n => format!(" (or of the {} other LocalQueues that do)", n - 1),
                    },
                ),
            )
            .help("select the namespaces that may submit, or all of them: `namespaceSelector: {}`");
        for &i in lqs.iter().take(3) {
            let lq = &ix.local_queues[i];
            if let Some(n) = lq.cluster_queue {
                d = d.related(
                    ix.objects[lq.obj].loc(n),
                    format!(
                        "LocalQueue `{}` in namespace `{}`",
                        lq.name,
                        lq.namespace.unwrap_or("default")
                    ),
                );
            }
        }
        out.push(d);
    }
}
