use super::{Ctx, template_anchor};
use crate::diag::Diagnostic;
use crate::index::{Class, is_server_kind};
use crate::model::Object;
use crate::sched::template_pods;
use crate::yaml::Node;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a GPU Deployment or StatefulSet classified as inference that runs more than one
    /// replica while no PodDisruptionBudget in the repository selects its pods, in a cluster that
    /// runs Karpenter (a NodePool in the files, or `cluster: {karpenter: true}` in the config)
    /// unless its selectors fit only capacity Karpenter does not manage (a managed node group),
    /// or it tolerates such capacity's taints but not those of any Karpenter pool it fits.
    /// Without Karpenter, nodes are drained when people upgrade them, and a model server sample
    /// or benchmark beside no pool is not judged. A PDB counts when
    /// it is in the same namespace (a missing namespace on either side matches any, as Kustomize
    /// often sets it later), in any file, and its `selector` matches the pod template's labels.
    ///
    /// The replica count is the workload's `spec.replicas`, or the `minReplicas` of a
    /// HorizontalPodAutoscaler (or the `minReplicaCount` of a KEDA ScaledObject) that targets it.
    /// A workload with `replicas: 1`, or with no `replicas` and no autoscaler (the default is 1),
    /// is not flagged: a PDB cannot keep a single replica serving through a drain anyway.
    ///
    /// ## Why is this bad?
    /// Karpenter consolidation, drift and node expiry drain GPU nodes; without a PDB the eviction
    /// API lets every replica on the drained nodes go at once. A model server needs minutes to
    /// pull its image and load weights onto a new GPU, so all replicas gone together means an
    /// outage, not a blip.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: apps/v1
    /// kind: Deployment
    /// metadata:
    ///   name: llm
    /// spec:
    ///   replicas: 3
    ///   template:
    ///     metadata:
    ///       labels: {app: llm}
    ///     spec:
    ///       containers:
    ///         - name: vllm
    ///           image: vllm/vllm-openai:v0.6.3
    ///           resources:
    ///             limits: {nvidia.com/gpu: 1}
    /// # no PodDisruptionBudget selects app=llm
    /// ```
    ///
    /// ## Fix
    /// ```yaml
    /// apiVersion: policy/v1
    /// kind: PodDisruptionBudget
    /// metadata:
    ///   name: llm
    /// spec:
    ///   maxUnavailable: 1
    ///   selector:
    ///     matchLabels: {app: llm}
    /// ```
    name: "gpu-inference-pdb-missing",
    category: "disruption",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a GPU inference Deployment/StatefulSet with several replicas and no PodDisruptionBudget",
    check: check,
}

/// The autoscalers among the files: HorizontalPodAutoscalers and KEDA ScaledObjects.
pub(super) fn scalers<'i, 'a>(ix: &'i crate::index::Index<'a>) -> Vec<&'i Object<'a>> {
    ix.of_kind("HorizontalPodAutoscaler")
        .chain(ix.of_kind("ScaledObject"))
        .collect()
}

/// The autoscaler that targets the object, with its floor: (min node, value).
pub(super) fn autoscaled<'a>(
    scalers: &[&'a Object<'a>],
    obj: &Object<'_>,
) -> Option<(&'a Object<'a>, Option<Node<'a>>, u64)> {
    scalers.iter().copied().find_map(|s| {
        let spec = s.spec()?;
        let target = spec.get("scaleTargetRef")?;
        let kind = target
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or("Deployment");
        let same_ns =
            s.namespace.is_none() || obj.namespace.is_none() || s.namespace == obj.namespace;
        if kind != obj.kind || target.get("name").and_then(Node::as_str) != obj.name || !same_ns {
            return None;
        }
        let (key, default) = if s.kind == "ScaledObject" {
            ("minReplicaCount", 0)
        } else {
            ("minReplicas", 1)
        };
        let n = spec.get(key);
        let min = match n.and_then(Node::as_str) {
            Some(v) => v.trim().parse::<u64>().ok()?,
            None => default,
        };
        Some((s, n, min))
    })
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    // PDBs by namespace (`None`: no namespace written, matches any).
    let mut pdbs: HashMap<Option<&str>, Vec<&Object>> = HashMap::new();
    for o in ix.of_kind("PodDisruptionBudget") {
        pdbs.entry(o.namespace).or_default().push(o);
    }
    let scalers = scalers(ix);
    for (ti, t) in ix.templates.iter().enumerate() {
        if !t.requests_gpu() || ix.classes.get(ti).map(|c| c.class()) != Some(Class::Inference) {
            continue;
        }
        let obj = ix.owner(t);
        if !is_server_kind(obj) || !ix.uses_karpenter() || cx.off_karpenter(ti) {
            continue;
        }
        let (replicas, at, via) = match autoscaled(&scalers, obj) {
            Some((s, node, min)) => (min, node.unwrap_or(s.anchor()), Some(s)),
            None => match template_pods(obj, t) {
                Some(n) => (
                    n,
                    obj.spec()
                        .and_then(|s| s.get("replicas"))
                        .unwrap_or(obj.anchor()),
                    None,
                ),
                None => continue,
            },
        };
        if replicas < 2 {
            continue;
        }
        let labels = t.metadata.and_then(|m| m.get("labels"));
        let candidates = match obj.namespace {
            Some(_) => pdbs
                .get(&obj.namespace)
                .into_iter()
                .chain(pdbs.get(&None))
                .flatten()
                .copied()
                .collect::<Vec<_>>(),
            None => pdbs.values().flatten().copied().collect(),
        };
        let covered = candidates.iter().any(|p| {
            p.spec()
                .and_then(|s| s.get("selector"))
                .is_some_and(|sel| crate::model::selects(sel, labels))
        });
        if covered {
            continue;
        }
        let count = match via {
            Some(s) => format!(
                "at least {replicas} replicas (the floor of {} `{}`)",
                s.kind,
                s.name_or_unnamed()
            ),
            None => format!("{replicas} replicas"),
        };
        let example = labels
            .and_then(|l| l.entries().next())
            .and_then(|(k, _, v)| Some(format!("{k}: {}", v.as_str()?)))
            .unwrap_or_else(|| "app: <label of the pods>".to_string());
        let mut d = cx
            .at(
                via.map_or(obj.loc(at), |s| s.loc(at)),
                format!(
                    "{} runs {count} of a {} model server and no PodDisruptionBudget selects its pods: a node drain (a Karpenter consolidation, drift or expiry, a node upgrade) may evict every replica at once, and each takes minutes to reload its model ({})",
                    obj.describe(),
                    ix.templates[ti].accelerator_name(),
                    ix.classes[ti].evidence
                ),
            )
            .object(Some(obj.obj_ref()))
            .help(format!(
                "add a PodDisruptionBudget in the same namespace, e.g.\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {}\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n      {example}",
                obj.name_or_unnamed()
            ));
        if via.is_some()
            && let Some(k) = template_anchor(obj, t)
        {
            d = d.related(obj.loc(k), "the pods it scales");
        }
        out.push(d);
    }
}
