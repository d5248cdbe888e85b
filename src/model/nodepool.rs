//! Karpenter NodePools (and v1alpha5 Provisioners) in one shape.

use super::{Expr, Object, Taint};
use crate::diag::{FileId, Loc};
use crate::yaml::Node;

/// Karpenter NodePool (v1/v1beta1) or the older Provisioner (v1alpha5), in one shape.
#[derive(Debug)]
pub struct NodePool<'a> {
    pub obj: usize,
    pub file: FileId,
    pub name: &'a str,
    /// The node that names the pool (`metadata.name`).
    pub anchor: Node<'a>,
    pub spec: Node<'a>,
    /// `spec.template.metadata.labels` (Provisioner: `spec.labels`).
    pub labels: Vec<(&'a str, Node<'a>, Node<'a>)>,
    pub requirements: Vec<Expr<'a>>,
    pub taints: Vec<Taint<'a>>,
    pub startup_taints: Vec<Taint<'a>>,
    pub disruption: Option<Node<'a>>,
    pub consolidation_policy: Option<Node<'a>>,
    pub consolidate_after: Option<Node<'a>>,
    /// `spec.limits` (Provisioner: `spec.limits.resources`).
    pub limits: Option<Node<'a>>,
    pub node_class_ref: Option<Node<'a>>,
    pub legacy_provisioner: bool,
    /// What the pool was made from when it is not a NodePool ([`DEFINED_BY`]): a Terraform node
    /// group or chart values, a Node of the cluster's context.
    pub defined_by: Option<&'a str>,
    /// An EKS managed node group (from Terraform, or a Node it runs): its nodes are on EKS for
    /// certain, where ExtendedResourceToleration tolerates the taints of requested resources.
    pub eks_node_group: bool,
    /// The group of the node class a name-only `nodeClassRef` (v1beta1 lets the provider fill
    /// the rest in) resolves to among the files' node classes.
    pub resolved_class_group: Option<&'static str>,
    /// The scheduling model's view of the pool, computed once on first use.
    pub(crate) sched: std::sync::OnceLock<super::requirements::PoolReqs<'a>>,
    pub(crate) bounded: std::sync::OnceLock<Option<Vec<&'static crate::catalog::Instance>>>,
}

/// The annotation on NodePools made from something other than a NodePool (a Terraform node
/// group, a chart's values, an existing Node), saying what: [`EKS_NODE_GROUP`], [`CHART_VALUES`],
/// [`NODE`].
pub const DEFINED_BY: &str = "gpuops.dev/defined-by";
pub const EKS_NODE_GROUP: &str = "EKS managed node group";
pub const CHART_VALUES: &str = "karpenter-resources chart values";
pub const NODE: &str = "Node";

/// The API group of EKS Auto Mode's node classes.
pub const AUTO_MODE_GROUP: &str = "eks.amazonaws.com";

impl<'a> NodePool<'a> {
    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        if obj.group != "karpenter.sh" {
            return None;
        }
        let spec = obj.spec()?;
        let taints_at = |n: Option<Node<'a>>| -> Vec<Taint<'a>> {
            n.into_iter()
                .flat_map(|n| n.items())
                .filter_map(Taint::from_node)
                .collect()
        };
        let reqs_at = |n: Option<Node<'a>>| -> Vec<Expr<'a>> {
            n.into_iter()
                .flat_map(|n| n.items())
                .filter_map(Expr::from_node)
                .collect()
        };
        let name = obj.name.unwrap_or("<unnamed>");
        let mut pool = match obj.kind {
            "NodePool" => {
                let tspec = spec.at(&["template", "spec"]);
                let disruption = spec.get("disruption");
                Some(NodePool {
                    obj: idx,
                    file: obj.file,
                    name,
                    anchor: obj.anchor(),
                    spec,
                    labels: spec
                        .at(&["template", "metadata", "labels"])
                        .map(|n| n.entries().collect())
                        .unwrap_or_default(),
                    requirements: reqs_at(tspec.and_then(|s| s.get("requirements"))),
                    taints: taints_at(tspec.and_then(|s| s.get("taints"))),
                    startup_taints: taints_at(tspec.and_then(|s| s.get("startupTaints"))),
                    disruption,
                    consolidation_policy: disruption.and_then(|d| d.get("consolidationPolicy")),
                    consolidate_after: disruption.and_then(|d| d.get("consolidateAfter")),
                    limits: spec.get("limits"),
                    node_class_ref: tspec.and_then(|s| s.get("nodeClassRef")),
                    legacy_provisioner: false,
                    defined_by: obj.annotation(DEFINED_BY).and_then(|(_, v)| v.as_str()),
                    eks_node_group: obj
                        .annotation(DEFINED_BY)
                        .is_some_and(|(_, v)| v.as_str() == Some(EKS_NODE_GROUP)),
                    resolved_class_group: None,
                    sched: Default::default(),
                    bounded: Default::default(),
                })
            }
            "Provisioner" => Some(NodePool {
                obj: idx,
                file: obj.file,
                name,
                anchor: obj.anchor(),
                spec,
                labels: spec
                    .get("labels")
                    .map(|n| n.entries().collect())
                    .unwrap_or_default(),
                requirements: reqs_at(spec.get("requirements")),
                taints: taints_at(spec.get("taints")),
                startup_taints: taints_at(spec.get("startupTaints")),
                disruption: spec.get("consolidation"),
                consolidation_policy: None,
                consolidate_after: None,
                limits: spec.at(&["limits", "resources"]),
                node_class_ref: spec.get("providerRef"),
                legacy_provisioner: true,
                defined_by: None,
                eks_node_group: false,
                resolved_class_group: None,
                sched: Default::default(),
                bounded: Default::default(),
            }),
            _ => None,
        }?;
        // Kept for the whole run, thousands of them in a platform monorepo: at their size.
        pool.labels.shrink_to_fit();
        pool.requirements.shrink_to_fit();
        pool.taints.shrink_to_fit();
        pool.startup_taints.shrink_to_fit();
        Some(pool)
    }
    /// Whether the pool was made from something other than a NodePool (a Terraform node group, a
    /// chart's values, an existing Node). Such pools are a lower bound of the cluster's:
    /// Terraform modules are parametrised and often only some of their pools are readable, and
    /// the Nodes of the moment are not all a cluster can have; so they confirm that a pod fits but
    /// never alone show that nothing does.
    pub fn is_derived(&self) -> bool {
        self.defined_by.is_some()
    }
    /// Whether Karpenter launches this pool's nodes (a NodePool, or the one a chart makes).
    pub fn is_karpenter(&self) -> bool {
        self.defined_by.is_none_or(|d| d == CHART_VALUES)
    }
    pub fn loc(&self, node: Node<'_>) -> Loc {
        Loc {
            file: self.file,
            span: node.span(),
        }
    }
    /// When the pool's nodes expire, as Karpenter writes durations (`720h`; a v1alpha5
    /// Provisioner's `ttlSecondsUntilExpired` as `<n>s`), with the node that says so (`None`:
    /// Karpenter's default of 720h). `None` when they never expire (`Never`, a Provisioner
    /// without the field) or the value is filled in later (`${TTL}`).
    pub fn expire_after(&self) -> Option<(std::borrow::Cow<'a, str>, Option<Node<'a>>)> {
        let readable = |n: Node<'a>| {
            n.as_str()
                .map(str::trim)
                .filter(|v| !v.contains('$') && !crate::quantity::is_placeholder(v))
        };
        if self.legacy_provisioner {
            let n = self.spec.get("ttlSecondsUntilExpired")?;
            return Some((format!("{}s", readable(n)?).into(), Some(n)));
        }
        let written = self
            .spec
            .at(&["template", "spec", "expireAfter"])
            .or_else(|| self.disruption.and_then(|d| d.get("expireAfter")));
        match written {
            Some(n) => {
                let v = readable(n).filter(|v| *v != "Never")?;
                Some((v.into(), Some(n)))
            }
            None => Some(("720h".into(), None)),
        }
    }
    /// The consolidation policy in force, with Karpenter v1's default when none is written.
    pub fn effective_policy(&self) -> &'a str {
        if self.legacy_provisioner {
            let enabled = self
                .disruption
                .and_then(|d| d.get("enabled"))
                .and_then(|n| n.as_str());
            return if enabled == Some("true") {
                "WhenUnderutilized"
            } else {
                "WhenEmpty"
            };
        }
        self.consolidation_policy
            .and_then(|n| n.as_str())
            .unwrap_or("WhenEmptyOrUnderutilized")
    }
    /// Whether EKS Auto Mode launches its nodes: its `nodeClassRef` names a class of the
    /// `eks.amazonaws.com` group (v1 writes `group`; older refs may carry an `apiVersion`).
    pub fn is_auto_mode(&self) -> bool {
        self.class_group() == Some(AUTO_MODE_GROUP)
    }
    /// Whether self-managed Karpenter's AWS provider launches its nodes: its `nodeClassRef`
    /// names an `EC2NodeClass` (`karpenter.k8s.aws`).
    pub fn is_ec2_node_class(&self) -> bool {
        self.class_group() == Some("karpenter.k8s.aws")
    }
    /// The API group of the node class it names (v1 writes `group`; older refs an `apiVersion`).
    fn class_group(&self) -> Option<&'a str> {
        let r = self.node_class_ref?;
        r.get("group")
            .and_then(|n| n.as_str())
            .or_else(|| {
                r.get("apiVersion")
                    .and_then(|n| n.as_str())
                    .map(|a| a.split_once('/').map_or(a, |(g, _)| g))
            })
            .or(self.resolved_class_group)
    }
    /// The name of the node class a `nodeClassRef` that names no group or kind refers to.
    pub fn name_only_class_ref(&self) -> Option<&'a str> {
        let r = self.node_class_ref?;
        let named_only = ["group", "kind", "apiVersion"]
            .iter()
            .all(|k| r.get(k).is_none());
        named_only.then(|| r.get("name").and_then(|n| n.as_str()))?
    }
    /// Whether its nodes are EKS nodes whatever the config says: a managed node group, or a
    /// Karpenter pool whose node class is AWS's (`EC2NodeClass`, SageMaker HyperPod's, EKS Auto
    /// Mode's): Karpenter's AWS provider runs on EKS.
    pub fn on_eks(&self) -> bool {
        self.eks_node_group
            || matches!(
                self.class_group(),
                Some("karpenter.k8s.aws" | "karpenter.sagemaker.amazonaws.com" | AUTO_MODE_GROUP)
            )
    }
    /// Whether the API server of its cluster runs the ExtendedResourceToleration admission
    /// plugin, which tolerates a `NoSchedule` taint keyed by an extended resource the pod
    /// requests: EKS always does, and so does AKS (a pool of `karpenter.azure.com` node classes).
    pub fn admission_tolerates_resources(&self) -> bool {
        self.on_eks() || self.class_group() == Some("karpenter.azure.com")
    }
    /// Whether its instance types are AWS's, so the AWS catalog judges them: its node class is
    /// AWS's, or it names none (a v1alpha5 Provisioner, a pool without `nodeClassRef`). Azure's
    /// and other providers' pools launch instances the catalog does not hold.
    pub fn uses_aws_catalog(&self) -> bool {
        matches!(
            self.class_group(),
            None | Some(
                "karpenter.k8s.aws" | "karpenter.sagemaker.amazonaws.com" | AUTO_MODE_GROUP
            )
        )
    }
    /// Capacity types the pool may launch (Karpenter defaults to on-demand when unconstrained).
    pub fn capacity_types(&self) -> Vec<&'a str> {
        const ALL: [&str; 3] = ["on-demand", "spot", "reserved"];
        let mut allowed: Vec<&'a str> = vec!["on-demand"];
        let mut constrained = false;
        for (k, _, v) in &self.labels {
            if *k == "karpenter.sh/capacity-type"
                && let Some(v) = v.as_str()
            {
                return vec![v];
            }
        }
        for r in &self.requirements {
            if r.key != "karpenter.sh/capacity-type" {
                continue;
            }
            constrained = true;
            match r.op {
                "In" => allowed = r.values.clone(),
                "NotIn" => {
                    allowed = ALL
                        .iter()
                        .copied()
                        .filter(|c| !r.values.contains(c))
                        .collect()
                }
                "Exists" => allowed = ALL.to_vec(),
                _ => {}
            }
        }
        if !constrained {
            return vec!["on-demand"];
        }
        allowed
    }

    /// The pool's limits in milli-units; a static pool (`spec.replicas`) is limited to that many
    /// nodes. Values that are not quantities (placeholders, typos) are left out: other rules
    /// report them.
    pub fn limits_milli(&self) -> Option<Vec<(String, i128)>> {
        if !self.legacy_provisioner
            && let Some(r) = self
                .spec
                .get("replicas")
                .and_then(|r| r.as_str())
                .and_then(crate::quantity::whole)
        {
            return Some(vec![("nodes".into(), r * 1000)]);
        }
        let limits = self.limits?;
        Some(
            limits
                .entries()
                .filter_map(|(k, _, v)| {
                    Some((k.to_string(), crate::quantity::parse(v.as_str()?)?.0))
                })
                .collect(),
        )
    }
}
