//! Static scheduling model: can a pod template land on a NodePool?
//!
//! Follows Karpenter's semantics: a pool's requirement set is its `requirements` plus every
//! template label (as `In [value]`) plus `karpenter.sh/nodepool` and `karpenter.k8s.aws/ec2nodeclass`;
//! the pod's nodeSelector and one required-affinity term at a time must intersect it; well-known
//! labels the pool does not mention are unconstrained, custom ones are unknown and do not match.
//! All hard (NoSchedule/NoExecute) taints must be tolerated; startup taints do not count.
//!
//! The Kueue side ([`flavor_reject`], [`assignable_variants`]) follows Kueue's flavor assigner: a
//! flavor is only assigned when the template's own nodeSelector / required affinity, restricted to
//! the label keys of that resource group's flavors, matches the flavor's `nodeLabels`, and the
//! template (plus the flavor's tolerations) tolerates the flavor's hard `nodeTaints`.
//!
//! Placeholders ([`is_placeholder`]: `${VAR}`, `{{ .Values.x }}`, `<VAR>`, `NUM_GPUS`, …) on either
//! side match anything: the linter cannot know what they become.

mod candidates;

mod hints;
mod instances;
mod pods;
mod requirements;

pub use crate::model::constraints::*;
pub use candidates::*;
pub use hints::*;
pub use instances::*;
pub use pods::*;
pub use requirements::*;

use crate::model::{NodePool, Taint};

/// A value an envsubst / Helm / Kustomize pipeline fills in later (one notion for all rules).
pub use crate::quantity::is_placeholder;

/// One `key=value` the pod requires (nodeSelector entry or a Kueue-injected flavor label).

#[derive(Debug, Clone, Default)]
pub struct Verdict<'a> {
    /// Label mismatches of the closest affinity term (empty: the labels fit).
    pub labels: Vec<LabelIssue>,
    /// Hard taints no toleration matches.
    pub untolerated: Vec<Taint<'a>>,
    /// Hard taints tolerated only by the ExtendedResourceToleration admission plugin (EKS, AKS).
    pub eks_only: Vec<Taint<'a>>,
}

impl Verdict<'_> {
    pub fn fits(&self) -> bool {
        self.labels.is_empty() && self.untolerated.is_empty()
    }
}

/// Full verdict: labels and taints.
pub fn fit<'a>(pod: &PodConstraints<'_>, pool: &NodePool<'a>, eks: bool) -> Verdict<'a> {
    Verdict {
        labels: label_issues(pod, pool),
        ..taints(pod, pool, eks)
    }
}

/// Taint side of the fit (the verdict's `labels` stay empty).
pub fn taints<'a>(pod: &PodConstraints<'_>, pool: &NodePool<'a>, eks: bool) -> Verdict<'a> {
    let mut v = Verdict::default();
    // An EKS managed node group is on EKS whatever the config says, and its nodes exist
    // nowhere else: a taint the admission plugin tolerates there is tolerated. A Karpenter pool
    // of AWS's node classes is on EKS too: such a taint is tolerated there, and the finding says
    // only that the manifest relies on the plugin.
    let certain_eks = pool.eks_node_group;
    let eks = eks || pool.admission_tolerates_resources();
    for taint in pool.taints.iter().filter(|t| t.is_hard()) {
        if pod.tolerations.iter().any(|t| t.tolerates(taint)) {
            continue;
        }
        let extended = taint.effect == "NoSchedule" && pod.extended.contains(&taint.key);
        if extended && certain_eks {
            continue;
        }
        if eks && extended {
            v.eks_only.push(*taint);
        } else {
            v.untolerated.push(*taint);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{FlavorReject, assignable_variants, flavor_reject};
    use crate::model::{NodePool, Object, PodTemplate};
    use crate::yaml::{Budget, parse};

    fn pool_and_pod(pool_yaml: &str, pod_yaml: &str, f: impl FnOnce(&NodePool, &PodTemplate)) {
        let p = parse(pool_yaml, Budget::default());
        let q = parse(pod_yaml, Budget::default());
        let po = Object::from_node(0, p.docs[0].root()).unwrap();
        let pool = NodePool::from_object(0, &po).unwrap();
        let qo = Object::from_node(1, q.docs[0].root()).unwrap();
        let tpl = crate::model::pod_templates(1, &qo).pop().unwrap();
        f(&pool, &tpl);
    }

    const POOL: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata:
      labels: {role: gpu}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d, p5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
"#;

    fn pod(extra: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{extra}\n  containers:\n    - name: c\n      resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
        )
    }

    #[test]
    fn tolerations_follow_kubernetes_semantics() {
        for (tol, ok) in [
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
                true,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]",
                true,
            ),
            ("  tolerations: [{operator: Exists}]", true),
            (
                "  tolerations: [{key: nvidia.com/gpu, value: \"true\"}]",
                true,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, value: \"false\"}]",
                false,
            ),
            (
                "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]",
                false,
            ),
            ("  tolerations: [{key: other, operator: Exists}]", false),
            ("  tolerations: []", false),
        ] {
            pool_and_pod(POOL, &pod(tol), |pool, t| {
                // The pool's node class is AWS's: a miss of the extended-resource taint is
                // EKS-only, a miss all the same.
                let v = fit(&PodConstraints::from_template(t), pool, false);
                assert_eq!(
                    v.untolerated.is_empty() && v.eks_only.is_empty(),
                    ok,
                    "{tol}"
                );
            });
        }
    }

    #[test]
    fn eks_extended_resource_toleration() {
        pool_and_pod(POOL, &pod("  tolerations: []"), |pool, t| {
            let v = fit(&PodConstraints::from_template(t), pool, true);
            assert!(v.untolerated.is_empty());
            assert_eq!(v.eks_only.len(), 1);
        });
    }

    #[test]
    fn selectors_against_labels_and_requirements() {
        for (sel, ok) in [
            ("  nodeSelector: {role: gpu}", true),
            ("  nodeSelector: {node-role: gpu}", false),
            ("  nodeSelector: {role: cpu}", false),
            ("  nodeSelector: {karpenter.sh/capacity-type: spot}", true),
            ("  nodeSelector: {karpenter.sh/nodepool: gpu}", true),
            ("  nodeSelector: {karpenter.sh/nodepool: other}", false),
            (
                "  nodeSelector: {topology.kubernetes.io/zone: us-east-1a}",
                true,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}",
                true,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}",
                false,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-family: g5}",
                false,
            ),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: role, operator: In, values: [cpu]}]}, {matchExpressions: [{key: role, operator: Exists}]}]}}}",
                true,
            ),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: NotIn, values: [a]}]}]}}}",
                true,
            ),
            (
                "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/capacity-type, operator: NotIn, values: [spot, on-demand]}]}]}}}",
                false,
            ),
        ] {
            pool_and_pod(POOL, &pod(sel), |pool, t| {
                let v = label_issues(&PodConstraints::from_template(t), pool);
                assert_eq!(v.is_empty(), ok, "{sel}: {v:?}");
            });
        }
    }

    #[test]
    fn gpu_count_above_largest_instance() {
        let p = pod("").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 16");
        pool_and_pod(POOL, &p, |pool, t| {
            let v = label_issues(&PodConstraints::from_template(t), pool);
            assert_eq!(v.len(), 1);
            assert!(v[0].reason.contains("largest instance"));
        });
    }

    #[test]
    fn gpu_capability_of_pools() {
        let cases = [
            (
                "- {key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}",
                GpuCapability::None,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"0\"]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}",
                GpuCapability::None,
            ),
            (
                "- {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: kubernetes.io/arch, operator: In, values: [amd64]}",
                GpuCapability::Possible,
            ),
            // Azure: GPU SKUs are the N family.
            (
                "- {key: karpenter.azure.com/sku-family, operator: In, values: [D]}",
                GpuCapability::None,
            ),
            (
                "- {key: karpenter.azure.com/sku-family, operator: In, values: [D, N]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.azure.com/sku-name, operator: In, values: [Standard_D2s_v4]}",
                GpuCapability::None,
            ),
            (
                "- {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4]}",
                GpuCapability::Explicit,
            ),
            (
                "- {key: karpenter.azure.com/sku-gpu-count, operator: Gt, values: [\"0\"]}",
                GpuCapability::Explicit,
            ),
        ];
        for (req, want) in cases {
            let y = format!(
                "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: x}}\nspec:\n  template:\n    spec:\n      requirements:\n        {req}\n"
            );
            let p = parse(&y, Budget::default());
            let o = Object::from_node(0, p.docs[0].root()).unwrap();
            let pool = NodePool::from_object(0, &o).unwrap();
            assert_eq!(gpu_capability(&pool), want, "{req}");
        }
    }

    fn pool_with(reqs: &str, labels: &str) -> String {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: x}}\nspec:\n  template:\n    metadata:\n      labels: {{{labels}}}\n    spec:\n      requirements:\n{reqs}\n"
        )
    }

    #[test]
    fn placeholders_match_anything() {
        let pool = pool_with(
            "        - {key: team, operator: In, values: [\"${TEAM}\"]}",
            "role: gpu",
        );
        for sel in [
            "  nodeSelector: {role: \"${ROLE}\"}",
            "  nodeSelector: {team: ml}",
            "  nodeSelector: {karpenter.sh/nodepool: \"{{ .Values.pool }}\"}",
        ] {
            pool_and_pod(&pool, &pod(sel), |pool, t| {
                let v = label_issues(&PodConstraints::from_template(t), pool);
                assert!(v.is_empty(), "{sel}: {v:?}");
            });
        }
    }

    #[test]
    fn gpu_count_requirement_bounds_gpus_per_pod() {
        let pool = pool_with(
            "        - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: [\"2\"]}",
            "",
        );
        pool_and_pod(&pool, &pod(""), |pool, t| {
            let v = label_issues(&PodConstraints::from_template(t), pool);
            assert_eq!(v.len(), 1, "{v:?}");
            assert!(v[0].reason.contains("has 1"), "{v:?}");
        });
        let p1 = pod("").replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 1");
        pool_and_pod(&pool, &p1, |pool, t| {
            assert!(label_issues(&PodConstraints::from_template(t), pool).is_empty());
        });
    }

    #[test]
    fn gpu_labels_never_on_pools_without_gpus() {
        let cpu = pool_with(
            "        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}",
            "",
        );
        pool_and_pod(
            &cpu,
            &pod("  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a100}"),
            |pool, t| {
                assert_eq!(
                    label_issues(&PodConstraints::from_template(t), pool).len(),
                    1
                );
            },
        );
        pool_and_pod(
            &cpu,
            &pod("  nodeSelector: {kubernetes.io/arch: amd64}"),
            |pool, t| {
                assert!(label_issues(&PodConstraints::from_template(t), pool).is_empty());
            },
        );
        // An open pool does not constrain the GPU model; EKS Auto Mode labels are well-known.
        let open = pool_with(
            "        - {key: kubernetes.io/arch, operator: In, values: [amd64]}",
            "",
        );
        for sel in [
            "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a100}",
            "  nodeSelector: {eks.amazonaws.com/instance-gpu-name: l4}",
        ] {
            pool_and_pod(&open, &pod(sel), |pool, t| {
                assert!(
                    label_issues(&PodConstraints::from_template(t), pool).is_empty(),
                    "{sel}"
                );
            });
        }
    }

    #[test]
    fn eks_auto_mode_pools_are_labelled_auto_and_bounded_by_their_instance_labels() {
        let auto = |reqs: &str| {
            pool_with(reqs, "").replace(
                "    spec:\n      requirements:",
                "    spec:\n      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}\n      requirements:",
            )
        };
        let selects_auto = pod("  nodeSelector: {eks.amazonaws.com/compute-type: auto}");
        let g6e = "        - {key: eks.amazonaws.com/instance-family, operator: In, values: [g6e]}";
        // Auto Mode labels its nodes `compute-type: auto`; self-managed Karpenter's nodes are not.
        pool_and_pod(&auto(g6e), &selects_auto, |pool, t| {
            assert!(pool.is_auto_mode());
            let v = label_issues(&PodConstraints::from_template(t), pool);
            assert!(v.is_empty(), "{v:?}");
        });
        let own = pool_with(
            "        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}",
            "",
        );
        pool_and_pod(&own, &selects_auto, |pool, t| {
            assert!(!pool.is_auto_mode());
            assert_eq!(
                label_issues(&PodConstraints::from_template(t), pool).len(),
                1
            );
        });
        // Auto Mode's instance labels bound the instance types as Karpenter's do.
        for (auto_req, karpenter_req) in [
            (
                "        - {key: eks.amazonaws.com/instance-category, operator: In, values: [inf, trn]}",
                "        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [inf, trn]}",
            ),
            (
                "        - {key: eks.amazonaws.com/instance-generation, operator: Gt, values: [\"4\"]}",
                "        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: [\"4\"]}",
            ),
            (
                g6e,
                "        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}",
            ),
        ] {
            let types = |yaml: &str| {
                let mut out = Vec::new();
                pool_and_pod(yaml, &pod(""), |pool, _| {
                    out = allowed_instances(pool)
                        .iter()
                        .map(|i| i.instance_type)
                        .collect::<Vec<_>>();
                    out.push(match gpu_capability(pool) {
                        GpuCapability::Explicit => "explicit",
                        GpuCapability::Possible => "possible",
                        GpuCapability::None => "none",
                    });
                });
                out
            };
            let (a, k) = (types(&auto(auto_req)), types(&pool_with(karpenter_req, "")));
            assert_eq!(a, k, "{auto_req}");
            assert!(
                !a.iter().any(|t| t.starts_with("g4dn.")),
                "{auto_req}: {a:?}"
            );
        }
    }

    #[test]
    fn open_pools_still_rule_out_the_instances_a_pod_pins() {
        // Instance types open (no bounding requirement), category `g` only.
        let g = pool_with(
            "        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [g]}",
            "",
        );
        for (sel, fits) in [
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}",
                false,
            ),
            (
                "  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}",
                false,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}",
                true,
            ),
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-family: g6e}",
                true,
            ),
            // Not pinned to catalog rows: the pool is open, nothing to judge.
            (
                "  nodeSelector: {karpenter.k8s.aws/instance-gpu-count: \"8\"}",
                true,
            ),
            (
                "  nodeSelector: {node.kubernetes.io/instance-type: \"${TYPE}\"}",
                true,
            ),
        ] {
            pool_and_pod(&g, &pod(sel), |pool, t| {
                let v = label_issues(&PodConstraints::from_template(t), pool);
                assert_eq!(v.is_empty(), fits, "{sel}: {v:?}");
                if let Some(i) = v.first() {
                    assert!(i.reason.contains("admits no instance type"), "{i:?}");
                    assert!(i.pool.is_some(), "{i:?}");
                }
            });
        }
        // EKS Auto Mode's keys the same way: a Neuron pool never launches a p5.
        let neuron = pool_with(
            "        - {key: eks.amazonaws.com/instance-category, operator: In, values: [inf, trn]}",
            "",
        );
        let p5 = pod("  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}");
        pool_and_pod(&neuron, &p5, |pool, t| {
            assert_eq!(
                label_issues(&PodConstraints::from_template(t), pool).len(),
                1
            );
        });
    }

    const KUEUE: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100-spot}
spec:
  nodeLabels: {gpu-type: a100, karpenter.sh/capacity-type: spot}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {gpu-type: a100, karpenter.sh/capacity-type: on-demand}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: zone-only}
spec:
  nodeLabels: {topology.kubernetes.io/zone: us-east-1a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tainted}
spec:
  nodeLabels: {gpu-type: a100}
  nodeTaints: [{key: reserved, value: "yes", effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors: [{name: default}]
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: a100-spot}, {name: a100}, {name: zone-only}, {name: tainted}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  template:
    spec:
      nodeSelector: {gpu-type: a100, karpenter.sh/capacity-type: on-demand}
      containers:
        - name: c
          resources: {limits: {nvidia.com/gpu: 1, cpu: 1}}
"#;

    #[test]
    fn kueue_flavor_assignment() {
        let files = vec![crate::source::SourceFile::from_text(
            "k.yaml".into(),
            KUEUE.into(),
        )];
        let settings = crate::config::Settings::default();
        let ix = crate::index::Index::build(&files, &settings);
        let reject = |name: &str| flavor_reject(&ix, 0, ix.flavor(name).unwrap());
        // Same key, other value: rejected.
        assert!(
            matches!(reject("a100-spot"), Some(FlavorReject::Labels { ref key, .. }) if key == "karpenter.sh/capacity-type")
        );
        assert!(reject("a100").is_none());
        // The group's flavors set `gpu-type`; this one does not, so the pod's selector rejects it.
        assert!(
            matches!(reject("zone-only"), Some(FlavorReject::Labels { ref key, .. }) if key == "gpu-type")
        );
        assert!(matches!(
            reject("tainted"),
            Some(FlavorReject::Taint { .. })
        ));
        // The CPU group's flavor sets no keys the pod selects: assignable, but not the GPU variant.
        assert!(reject("default").is_none());
        let names: Vec<&str> = assignable_variants(&ix, 0)
            .iter()
            .filter_map(|v| v.flavor)
            .map(|f| ix.flavors[f].name)
            .collect();
        assert_eq!(names, vec!["a100"]);
    }
}
