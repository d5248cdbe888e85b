use super::Ctx;
use super::gpu_inference_pdb_missing::autoscaled;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::model::kinds::is_server_kind;
use crate::sched::template_pods;
use crate::yaml::Node;
use std::collections::{HashMap, HashSet};

declare_rule! {
    /// ## What it does
    /// Flags a PodDisruptionBudget that allows no eviction at all of the pods of a GPU
    /// Deployment or StatefulSet: `maxUnavailable: 0` (or `0%`), or a `minAvailable` at or above
    /// the workload's replica count (`minAvailable: 1` over one replica, `100%`, or a percentage
    /// that rounds up to every replica). The replica count is `spec.replicas`, or the floor of a
    /// HorizontalPodAutoscaler or KEDA ScaledObject that targets the workload; a count that is
    /// not written out is not judged. A PDB counts when it is in the workload's namespace (where
    /// either names none, or a placeholder, when both lie in one directory) and its selector
    /// matches the pod template's labels. The budget is judged over every pod it selects, those
    /// of CPU workloads included (one workload defined twice counts once), as the disruption
    /// controller counts them; when one of their counts is not written out, only
    /// `maxUnavailable: 0` is judged.
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
    let mut by_ns: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_dir: HashMap<Option<&str>, Vec<usize>> = HashMap::new();
    for (i, p) in pdbs.iter().enumerate() {
        if let Some(ns) = p.namespace {
            by_ns.entry(ns).or_default().push(i);
        }
        by_dir.entry(dir_of(p.file)).or_default().push(i);
    }
    // The budgets of one namespace; where either side names none (or a placeholder), those of
    // one directory, as copies of a layout elsewhere in the repository may pair a budget with
    // another layout's workload.
    let candidates = |obj: &Object| -> Vec<usize> {
        let near = by_dir.get(&dir_of(obj.file)).into_iter().flatten();
        match obj.namespace {
            Some(ns) => by_ns
                .get(ns)
                .into_iter()
                .flatten()
                .chain(near.filter(|&&i| pdbs[i].namespace.is_none()))
                .copied()
                .collect(),
            None => near.copied().collect(),
        }
    };
    let selects = |i: usize, t: &crate::model::PodTemplate| {
        let labels = t.metadata.and_then(|m| m.get("labels"));
        pdbs[i]
            .spec()
            .and_then(|s| s.get("selector"))
            .is_some_and(|sel| crate::model::selects(sel, labels))
    };
    // Every pod a budget selects counts, GPU or not: the disruption controller allows evictions
    // over all of them. One workload defined twice (an export beside its source) counts once.
    // `None`: a selected workload's count is not written out, so neither is the budget's.
    let mut pods: Vec<Option<u64>> = vec![Some(0); pdbs.len()];
    let mut counted: HashSet<(usize, &str, Option<&str>, Option<&str>)> = HashSet::new();
    for t in &ix.templates {
        let obj = ix.owner(t);
        if !is_server_kind(obj) {
            continue;
        }
        let n = replicas_of(&scalers, obj, t).map(|(n, _)| n);
        for i in candidates(obj) {
            if selects(i, t) && counted.insert((i, obj.kind, obj.namespace, obj.name)) {
                pods[i] = pods[i].zip(n).map(|(a, b)| a + b);
            }
        }
    }
    let mut reported: HashSet<(usize, &str, Option<&str>, Option<&str>)> = HashSet::new();
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let obj = ix.owner(t);
        if !is_server_kind(obj) {
            continue;
        }
        let Some((replicas, count_at)) = replicas_of(&scalers, obj, t) else {
            continue;
        };
        if replicas == 0 {
            continue;
        }
        for i in candidates(obj) {
            if !selects(i, t) || !reported.insert((i, obj.kind, obj.namespace, obj.name)) {
                continue;
            }
            let p = pdbs[i];
            let Some(spec) = p.spec() else { continue };
            // An unknown count leaves only `maxUnavailable: 0` certain.
            let total = pods[i].map_or(replicas, |n| n.max(replicas));
            let Some((field, at)) = blocks(spec, total) else {
                continue;
            };
            if pods[i].is_none() && !field.starts_with("maxUnavailable") {
                continue;
            }
            let which = match (replicas, total) {
                (1, 1) => "the single replica".to_string(),
                (r, t) if r == t => format!("the {r} replicas"),
                (r, t) => format!("the {t} pods it selects, {r} of them"),
            };
            let pods_word = if replicas == 1 { "replica" } else { "replicas" };
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
                .related(count_at, format!("{replicas} {pods_word}"))
                .help(
                    "allow one pod to go at a time (`maxUnavailable: 1`) and run two or more replicas where the service must stay up through a drain",
                ),
            );
        }
    }
}

/// How many pods a workload runs (its autoscaler's floor, else its own count) and where that
/// is written.
fn replicas_of(
    scalers: &[&Object<'_>],
    obj: &Object<'_>,
    t: &crate::model::PodTemplate<'_>,
) -> Option<(u64, crate::diag::Loc)> {
    match autoscaled(scalers, obj) {
        Some((s, node, min)) => Some((min, s.loc(node.unwrap_or(s.anchor())))),
        None => template_pods(obj, t).map(|n| {
            (
                n,
                obj.loc(
                    obj.spec()
                        .and_then(|s| s.get("replicas"))
                        .unwrap_or(obj.anchor()),
                ),
            )
        }),
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
