use super::Ctx;
use crate::diag::Diagnostic;
use crate::index::Index;
use crate::model::{NodePool, PodTemplate, Taint, is_gpu_resource};
use crate::sched;
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a GPU pod template that the NodePools able to serve it would reject because it does
    /// not tolerate their `NoSchedule` / `NoExecute` taints. The pools considered are those whose
    /// labels and requirements fit the template's nodeSelector and required node affinity and that
    /// can launch GPU instances. Tolerations Kueue injects from the ResourceFlavor the workload is
    /// admitted to count; `PreferNoSchedule` taints and `startupTaints` do not. On EKS
    /// (`cluster: {eks: true}`, or a pool whose node class is AWS's: an `EC2NodeClass`, SageMaker
    /// HyperPod's or EKS Auto Mode's, as Karpenter's AWS provider runs on EKS) a `NoSchedule` taint
    /// whose key is an extended resource the pod requests is tolerated by the
    /// ExtendedResourceToleration admission plugin, which EKS always runs (and AKS: a pool of
    /// `karpenter.azure.com` node classes): no finding (`gpuops
    /// why` says the plugin tolerates it). A pod whose GPU comes from a
    /// DRA ResourceClaim (`gpu.nvidia.com`) requests no extended resource, so that plugin gives it
    /// no toleration. A toleration whose key is a near miss of the taint's (`nvidia/gpu` for
    /// `nvidia.com/gpu`) tolerates nothing: the finding points at it too. A template queued to a
    /// ClusterQueue whose MultiKueue or ProvisioningRequest AdmissionCheck places it elsewhere is
    /// not judged by these pools.
    ///
    /// ## Why is this bad?
    /// Karpenter will not launch a node for a pod that does not tolerate the NodePool's taints, and
    /// the scheduler will not place it on existing GPU nodes: the pods stay `Pending` forever and
    /// the training run or inference service never starts, while any GPU nodes that do exist sit
    /// idle and keep costing money.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata: {name: gpu}
    /// spec:
    ///   template:
    ///     spec:
    ///       nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: gpu}  # not EKS or AKS
    ///       taints:
    ///         - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
    /// ---
    /// apiVersion: batch/v1
    /// kind: Job
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: train
    ///           resources:
    ///             limits:
    ///               nvidia.com/gpu: 8   # no toleration for nvidia.com/gpu
    /// ```
    ///
    /// ## Fix
    /// Add a toleration for the taint to the pod template (or to the `tolerations` of the
    /// ResourceFlavor the workload's ClusterQueue admits it to):
    /// ```yaml
    /// tolerations:
    ///   - key: nvidia.com/gpu
    ///     operator: Exists
    ///     effect: NoSchedule
    /// ```
    name: "gpu-toleration-missing",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Error,
    summary: "a GPU pod template does not tolerate the taints of the NodePools that could serve it",
    check: check,
    chunked: true,
}

/// One untolerated taint of one template, gathered over its Kueue variants.
struct Miss<'a> {
    pool: usize,
    taint: Taint<'a>,
    /// Flavors under which it is missing (`None`: no Kueue flavor).
    flavors: Vec<Option<usize>>,
    /// How many GPU pools the template's selectors fit.
    candidates: usize,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.nodepools.is_empty() {
        return;
    }
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() || sched::targets_other_capacity(t) || ix.elsewhere[ti].is_some() {
            continue;
        }
        let mut misses: Vec<Miss> = Vec::new();
        for (v, placement) in ix.landings_of(ti) {
            let candidates = placement.gpu_pools();
            // One verdict per taint class, on its first pool: the others have the same taints.
            let verdicts: Vec<(usize, sched::Verdict)> = placement
                .gpu_classes
                .iter()
                .map(|c| {
                    let p = c.pools[0] as usize;
                    (
                        p,
                        sched::taints(&v.constraints, &ix.nodepools[p], ix.settings.eks),
                    )
                })
                .collect();
            // A pod pinned to no pool, whose only candidates are pools derived from Terraform or
            // chart values: the cluster may have others it tolerates.
            let unpinned = v.constraints.base.is_empty() && v.constraints.terms.is_empty();
            let only_derived = placement.gpu_classes.iter().all(|c| {
                c.pools
                    .iter()
                    .all(|&p| ix.nodepools[p as usize].is_derived())
            });
            if verdicts.is_empty()
                || (unpinned && only_derived)
                || verdicts.iter().any(|(_, vd)| vd.untolerated.is_empty())
            {
                continue;
            }
            // The closest pool: fewest untolerated taints, then first. On EKS a taint the
            // admission plugin tolerates is tolerated: the plugin cannot be turned off there.
            let Some((p, vd)) = verdicts
                .iter()
                .min_by_key(|(p, vd)| (vd.untolerated.len(), *p))
            else {
                continue;
            };
            for taint in &vd.untolerated {
                let same = |m: &&mut Miss| {
                    m.taint.key == taint.key
                        && m.taint.value == taint.value
                        && m.taint.effect == taint.effect
                };
                match misses.iter_mut().find(same) {
                    Some(m) => {
                        if !m.flavors.contains(&v.flavor) {
                            m.flavors.push(v.flavor);
                        }
                        m.candidates = m.candidates.max(candidates);
                    }
                    None => misses.push(Miss {
                        pool: *p,
                        taint: *taint,
                        flavors: vec![v.flavor],
                        candidates,
                    }),
                }
            }
        }
        for m in misses {
            out.push(finding(cx, t, &m));
        }
    }
}

fn finding(cx: &Ctx, t: &PodTemplate, m: &Miss) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let pool: &NodePool = &ix.nodepools[m.pool];
    let taint = m.taint.display();
    let node = anchor(t);
    let what = describe(ix, t);
    let flavors: Vec<&str> = m
        .flavors
        .iter()
        .filter_map(|f| f.and_then(|f| ix.flavors.get(f)).map(|f| f.name))
        .collect();
    let via = if flavors.is_empty() {
        String::new()
    } else {
        format!(
            " (once Kueue admits it to ResourceFlavor {})",
            crate::diag::backticked(&flavors, " or ")
        )
    };
    let toleration = toleration_yaml(&m.taint);
    let flavor_hint = if flavors.is_empty() {
        String::new()
    } else {
        format!(
            ", or add it to the `spec.tolerations` of ResourceFlavor `{}` so Kueue injects it",
            flavors[0]
        )
    };
    // A managed node group's nodes exist already: the scheduler, not Karpenter, turns it away.
    let (noun, consequence) = if pool.eks_node_group {
        (
            "EKS managed node group",
            "the scheduler places none of its pods on those nodes and they stay Pending",
        )
    } else {
        (
            "NodePool",
            "Karpenter will not launch a node for it and its pods stay Pending",
        )
    };
    let which = if m.candidates == 1 {
        "the only GPU NodePool its selectors fit".to_string()
    } else {
        format!(
            "the closest of the {} GPU NodePools its selectors fit (it tolerates none of them)",
            m.candidates
        )
    };
    let d = cx.at(
        t.loc(node),
        format!(
            "{what}{via} does not tolerate taint `{taint}` of {noun} `{}`, {which}: {consequence}",
            pool.name
        ),
    );
    let d = d.object(Some(owner.obj_ref())).related(
        pool.loc(m.taint.node),
        format!("{noun} `{}` taint `{taint}`", pool.name),
    );
    // A toleration written for this taint under a misspelt key tolerates nothing.
    let near = t
        .tolerations()
        .into_iter()
        .find(|tol| near_miss(tol.key, m.taint.key));
    match near {
        Some(tol) => d
            .related(
                t.loc(tol.node.get("key").unwrap_or(tol.node)),
                format!(
                    "this toleration's key `{}` is a near miss of `{}`: it tolerates nothing",
                    tol.key, m.taint.key
                ),
            )
            .help(format!(
                "correct the toleration's key `{}` to `{}`, or add this toleration to the pod template's `spec.tolerations`{flavor_hint}:\n{toleration}",
                tol.key, m.taint.key
            )),
        None => d.help(format!(
            "add this toleration to the pod template's `spec.tolerations`{flavor_hint}:\n{toleration}"
        )),
    }
}

/// Whether a toleration key is a likely misspelling of a taint key: a few edits away, or the
/// same vendor and name with the domain cut short (`nvidia/gpu` for `nvidia.com/gpu`).
fn near_miss(key: &str, taint_key: &str) -> bool {
    if key.is_empty() || key == taint_key {
        return false;
    }
    let parts = |k: &str| {
        let (domain, name) = k.rsplit_once('/').unwrap_or(("", k));
        let vendor = domain.split('.').next().unwrap_or("");
        (vendor.to_ascii_lowercase(), name.to_ascii_lowercase())
    };
    let close = crate::text::edit_distance_within(key, taint_key, 3)
        .is_some_and(|d| crate::text::close_enough(taint_key, d));
    close || (taint_key.contains('/') && parts(key) == parts(taint_key))
}

/// The template's `tolerations` key, else the GPU resource key in the GPU container's limits,
/// else its first GPU ResourceClaim.
fn anchor<'a>(t: &PodTemplate<'a>) -> Node<'a> {
    if let Some((k, _)) = t.spec.entry("tolerations") {
        return k;
    }
    for c in t.gpu_containers() {
        for m in [c.limits, c.requests].into_iter().flatten() {
            if let Some((_, k, _)) = m.entries().find(|(n, _, _)| is_gpu_resource(n)) {
                return k;
            }
        }
    }
    t.dra_gpus().first().map_or(t.spec, |g| g.entry)
}

/// `Job ml/train` for a single-template workload, else with the template path.
fn describe(ix: &Index, t: &PodTemplate) -> String {
    let owner = ix.owner(t);
    match owner.kind {
        "Pod" | "Job" | "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "CronJob" => {
            owner.describe()
        }
        _ => format!("{} (`{}`)", owner.describe(), t.path),
    }
}

fn toleration_yaml(t: &Taint) -> String {
    if t.value.is_empty() {
        format!(
            "  - key: {}\n    operator: Exists\n    effect: {}",
            t.key, t.effect
        )
    } else {
        format!(
            "  - key: {}\n    operator: Equal\n    value: \"{}\"\n    effect: {}",
            t.key, t.value, t.effect
        )
    }
}

#[cfg(test)]
mod tests {
    use super::near_miss;
    use crate::config::Settings;

    #[test]
    fn near_misses_of_taint_keys() {
        assert!(near_miss("nvidia/gpu", "nvidia.com/gpu"));
        assert!(near_miss("nvidia.com/gpus", "nvidia.com/gpu"));
        assert!(near_miss("NVIDIA.com/gpu", "nvidia.com/gpu"));
        assert!(!near_miss("nvidia.com/gpu", "nvidia.com/gpu"));
        assert!(!near_miss("dedicated", "nvidia.com/gpu"));
        assert!(!near_miss("", "nvidia.com/gpu"));
        assert!(!near_miss("amd.com/gpu", "nvidia.com/gpu"));
    }
    use crate::diag::Severity;
    use crate::source::SourceFile;

    const FILES: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          resources:
            limits: {nvidia.com/gpu: 8}
"#;

    fn run(text: &str, eks: bool) -> Vec<crate::diag::Diagnostic> {
        let files = vec![SourceFile::from_text("t.yaml".into(), text.into())];
        let settings = Settings {
            eks,
            only: Some(vec![super::RULE.name.to_string()]),
            ..Settings::default()
        };
        crate::lint(&files, &settings).diagnostics
    }

    #[test]
    fn eks_extended_resource_toleration_tolerates() {
        // EKS always runs the admission plugin: the pod gets the toleration and schedules.
        let d = run(FILES, true);
        assert!(d.is_empty(), "{d:#?}");
    }

    #[test]
    fn without_eks_it_is_an_error() {
        // A pool whose node class is neither AWS's nor Azure's: nothing says the cluster runs
        // the admission plugin.
        let text = FILES.replace(
            "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}",
            "nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: gpu}",
        );
        let d = run(&text, false);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].severity, Severity::Error);
        // AKS runs the plugin too.
        let aks = FILES.replace(
            "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}",
            "nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}",
        );
        assert!(run(&aks, false).is_empty());
    }

    #[test]
    fn an_aws_node_class_means_eks() {
        // Karpenter's AWS provider runs on EKS: the admission plugin is there.
        let d = run(FILES, false);
        assert!(d.is_empty(), "{d:#?}");
        // A v1beta1 reference by name only, to an EC2NodeClass of the files.
        let by_name = FILES.replace(
            "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}",
            "nodeClassRef: {name: gpu}",
        );
        let class = "---\napiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata:\n  name: gpu\nspec:\n  amiFamily: AL2\n";
        assert!(run(&format!("{by_name}{class}"), false).is_empty());
        // Without the class, the name says nothing of the provider.
        assert_eq!(run(&by_name, false).len(), 1);
    }

    #[test]
    fn eks_does_not_cover_other_keys_or_no_execute() {
        let text = FILES.replace(
            "        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}",
            "        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}\n        - {key: gpu, effect: NoSchedule}\n        - {key: nvidia.com/gpu, effect: NoExecute}",
        );
        let d = run(&text, true);
        let sev: Vec<_> = d.iter().map(|d| d.severity).collect();
        assert_eq!(
            sev.iter().filter(|s| **s == Severity::Error).count(),
            2,
            "{d:#?}"
        );
        assert_eq!(d.len(), 2, "{d:#?}");
    }

    #[test]
    fn malformed_input_does_not_panic() {
        let text = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: "${POOL}"}
spec:
  template:
    metadata: {labels: [not, a, map]}
    spec:
      requirements: {key: oops}
      taints: "nvidia.com/gpu:NoSchedule"
  disruption: []
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p2}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: [abc]}
        - {operator: In}
        - {key: k, operator: Gt, values: []}
      taints: [{effect: NoSchedule}, {key: a}]
  disruption: {consolidationPolicy: {x: 1}, budgets: {nodes: 0}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f}
spec: {nodeLabels: [a], tolerations: {key: x}, nodeTaints: [{key: t}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {resourceGroups: [{flavors: [{name: f}, {name: {}}]}, 3]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: [cq]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    metadata: {annotations: [x]}
    spec:
      nodeSelector: [a, b]
      tolerations: {key: x}
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: Gt, values: [x]}, {values: [1]}]}, {}]}}}
      containers:
        - name: c
          resources: {limits: {nvidia.com/gpu: "${GPUS}"}, requests: [1]}
        - resources: {limits: {nvidia.com/gpu: 99999999999999999999}}
"#;
        let files = vec![SourceFile::from_text("t.yaml".into(), text.into())];
        for eks in [false, true] {
            let settings = Settings {
                eks,
                only: Some(vec![
                    "gpu-toleration-missing".into(),
                    "nodeselector-matches-no-nodepool".into(),
                    "flavor-matches-no-nodepool".into(),
                    "training-consolidation-underutilized".into(),
                ]),
                ..Settings::default()
            };
            let _ = crate::lint(&files, &settings);
        }
    }
}
