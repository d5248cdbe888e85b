use super::Ctx;
use super::gpu_inference_pdb_missing::autoscaled;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::model::kinds::is_server_kind;
use crate::sched::template_pods;
use crate::yaml::Node;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a PodDisruptionBudget that allows no eviction at all of the pods of a GPU
    /// Deployment or StatefulSet: `maxUnavailable: 0` (or `0%`), or a `minAvailable` at or above
    /// the workload's replica count (`minAvailable: 1` over one replica, `100%`, or a percentage
    /// that rounds up to every replica). The replica count is `spec.replicas`, or the floor of a
    /// HorizontalPodAutoscaler or KEDA ScaledObject that targets the workload; a count that is
    /// not written out is not judged. A PDB counts when it is in the workload's namespace (where
    /// either names none, or a placeholder, when both lie in one directory) and its selector
    /// matches the pod template's labels.
    ///
    /// ## Why is this bad?
    /// The eviction API refuses every eviction such a budget covers, so a node running one of
    /// these pods can never be drained: Karpenter never consolidates or replaces it for drift,
    /// the cluster autoscaler never scales it down, and `kubectl drain` for a node upgrade hangs
    /// until someone deletes the pod by hand (managed upgrades force it after their timeout). An
    /// idle or outdated GPU node then keeps billing. A budget cannot keep a single replica
    /// serving through a drain anyway: it only stops the drain.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: policy/v1
    /// kind: PodDisruptionBudget
    /// metadata: {name: llm}
    /// spec:
    ///   minAvailable: 1          # the Deployment runs 1 replica
    ///   selector:
    ///     matchLabels: {app: llm}
    /// ```
    ///
    /// ## Fix
    /// Allow one pod to go at a time (`maxUnavailable: 1`), and run at least two replicas where
    /// the service must stay up through a drain. To keep a long job's node from voluntary
    /// disruption, annotate its pods with `karpenter.sh/do-not-disrupt: "true"` instead.
    name: "gpu-pdb-blocks-eviction",
    category: "disruption",
    kinds: &["PodDisruptionBudget", "pod templates"],
    severity: Warning,
    summary: "a PodDisruptionBudget that allows no eviction of a GPU workload's pods",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let pdbs: Vec<&Object> = ix
        .of_kind("PodDisruptionBudget")
        .filter(|o| o.group == "policy")
        .collect();
    if pdbs.is_empty() {
        return;
    }
    let scalers = super::gpu_inference_pdb_missing::scalers(ix);
    let dir_of = |file: crate::diag::FileId| {
        ix.files
            .get(file)
            .map(|f| f.path.rsplit_once('/').map_or("", |(d, _)| d))
    };
    // A budget and a workload of one namespace; where either names none (or a placeholder),
    // only those of one directory, as copies of a layout elsewhere in the repository may pair a
    // budget with another layout's workload. Looked up by namespace and by directory, built once.
    let mut by_ns: HashMap<&str, Vec<&Object>> = HashMap::new();
    let mut by_dir: HashMap<Option<&str>, Vec<&Object>> = HashMap::new();
    for p in &pdbs {
        if let Some(ns) = p.namespace {
            by_ns.entry(ns).or_default().push(p);
        }
        by_dir.entry(dir_of(p.file)).or_default().push(p);
    }
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let obj = ix.owner(t);
        if !is_server_kind(obj) {
            continue;
        }
        let (replicas, count_at) = match autoscaled(&scalers, obj) {
            Some((s, node, min)) => (min, s.loc(node.unwrap_or(s.anchor()))),
            None => match template_pods(obj, t) {
                Some(n) => (
                    n,
                    obj.loc(
                        obj.spec()
                            .and_then(|s| s.get("replicas"))
                            .unwrap_or(obj.anchor()),
                    ),
                ),
                None => continue,
            },
        };
        if replicas == 0 {
            continue;
        }
        let labels = t.metadata.and_then(|m| m.get("labels"));
        let near = by_dir.get(&dir_of(obj.file)).into_iter().flatten();
        let candidates: Vec<&Object> = match obj.namespace {
            Some(ns) => by_ns
                .get(ns)
                .into_iter()
                .flatten()
                .chain(near.filter(|p| p.namespace.is_none()))
                .copied()
                .collect(),
            None => near.copied().collect(),
        };
        for p in candidates {
            let Some(spec) = p.spec() else { continue };
            let selected = spec
                .get("selector")
                .is_some_and(|sel| crate::model::selects(sel, labels));
            if !selected {
                continue;
            }
            let Some((field, at)) = blocks(spec, replicas) else {
                continue;
            };
            let (pods, which) = if replicas == 1 {
                ("replica", "the single replica".to_string())
            } else {
                ("replicas", format!("the {replicas} replicas"))
            };
            out.push(
                cx.on(
                    p,
                    at,
                    format!(
                        "PodDisruptionBudget `{}` allows no eviction of {which} of {} (`{field}`): no drain can take a node running one, so autoscalers never remove that GPU node (Karpenter consolidation and drift, cluster-autoscaler scale-down) and node upgrades wait on it",
                        p.name_or_unnamed(),
                        obj.describe(),
                    ),
                )
                .related(count_at, format!("{replicas} {pods}"))
                .help(
                    "allow one pod to go at a time (`maxUnavailable: 1`) and run two or more replicas where the service must stay up through a drain",
                ),
            );
        }
    }
}

/// Whether a budget allows no eviction among `replicas` pods: the field that says so, as
/// written, and its value's node. Percentages round up, as the disruption controller does.
fn blocks<'a>(spec: Node<'a>, replicas: u64) -> Option<(String, Node<'a>)> {
    let value = |key: &str| -> Option<(Node<'a>, u64)> {
        let n = spec.get(key)?;
        let s = n.as_str()?.trim();
        let count = match s.strip_suffix('%') {
            Some(p) => (p.parse::<u64>().ok()? * replicas).div_ceil(100),
            None => s.parse().ok()?,
        };
        Some((n, count))
    };
    let shown = |key: &str, n: Node<'_>| format!("{key}: {}", n.as_str().unwrap_or_default());
    if let Some((n, max)) = value("maxUnavailable") {
        return (max == 0).then(|| (shown("maxUnavailable", n), n));
    }
    let (n, min) = value("minAvailable")?;
    (min >= replicas).then(|| (shown("minAvailable", n), n))
}
