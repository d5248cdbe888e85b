//! The pod side of placement: its node requirements, tolerations and GPU needs.

use crate::diag::Loc;
use crate::model::{Expr, Flavor, Object, PodTemplate, Toleration};
use crate::yaml::Node;

#[derive(Debug, Clone)]
pub struct Sel<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub loc: Loc,
}

/// One requirement of the pod, in node-affinity form.
#[derive(Debug, Clone)]
pub struct Req<'a> {
    pub key: &'a str,
    pub op: &'a str,
    pub values: Values<'a>,
    pub loc: Loc,
}

/// A requirement's values. Most requirements are a node selector's or a flavor label's, one value
/// each: held without an allocation of their own (tens of thousands in a large repository).
pub type Values<'a> = crate::one_or_many::OneOrMany<&'a str>;

impl<'a> Req<'a> {
    pub fn from_sel(s: &Sel<'a>) -> Self {
        Req {
            key: s.key,
            op: "In",
            values: Values::One(s.value),
            loc: s.loc,
        }
    }
    pub fn from_expr(e: &Expr<'a>, file: crate::diag::FileId) -> Self {
        Req {
            key: e.key,
            op: e.op,
            values: Values::of(&e.values),
            loc: Loc {
                file,
                span: e.node.span(),
            },
        }
    }
    pub fn describe(&self) -> String {
        match self.op {
            "In" if self.values.len() == 1 => format!("{}={}", self.key, self.values[0]),
            "Exists" | "DoesNotExist" => format!("{} {}", self.key, self.op),
            _ => format!("{} {} [{}]", self.key, self.op, self.values.join(", ")),
        }
    }
}

/// The pod's node constraints: ANDed requirements plus ORed affinity terms.
#[derive(Debug, Clone, Default)]
pub struct PodConstraints<'a> {
    pub base: Vec<Req<'a>>,
    /// Required node-affinity terms; empty means no affinity.
    pub terms: Vec<Vec<Req<'a>>>,
    pub tolerations: Vec<Toleration<'a>>,
    /// Extended resources the pod requests (for EKS's ExtendedResourceToleration).
    pub extended: Vec<&'a str>,
    /// nvidia.com/gpu one pod needs, with the whole GPUs of its DRA claims (for the
    /// instance-size check).
    pub nvidia_gpus: u64,
}

impl<'a> PodConstraints<'a> {
    /// What a ResourceFlavor's `nodeLabels` ask of a node (`obj`: the flavor's object), as a
    /// pod whose only constraint is that node selector.
    pub fn from_flavor(f: &Flavor<'a>, obj: &Object<'a>) -> Self {
        let base = f
            .node_labels
            .iter()
            .filter_map(|(k, _, v)| {
                Some(Req {
                    key: k,
                    op: "In",
                    values: Values::One(v.as_str()?),
                    loc: obj.loc(*v),
                })
            })
            .collect();
        PodConstraints {
            base,
            ..PodConstraints::default()
        }
    }

    pub fn from_template(t: &PodTemplate<'a>) -> Self {
        let base = t
            .node_selector()
            .into_iter()
            .filter_map(|(k, _, v)| {
                Some(Req {
                    key: k,
                    op: "In",
                    values: Values::One(v.as_str()?),
                    loc: t.loc(v),
                })
            })
            .collect();
        let terms = t
            .affinity_terms()
            .iter()
            .map(|term| term.iter().map(|e| Req::from_expr(e, t.file)).collect())
            .collect();
        let mut extended: Vec<&str> = Vec::new();
        let mut nvidia: u64 = 0;
        let mut nvidia_init: u64 = 0;
        for c in &t.containers {
            for (name, _) in c.accelerators() {
                if !extended.contains(&name) {
                    extended.push(name);
                }
            }
            let n = c
                .limits
                .and_then(|l| l.get("nvidia.com/gpu"))
                .or_else(|| c.requests.and_then(|r| r.get("nvidia.com/gpu")))
                .and_then(Node::as_str)
                .and_then(crate::quantity::whole)
                .unwrap_or(0)
                .max(0) as u64;
            if c.init {
                nvidia_init = nvidia_init.max(n);
            } else {
                nvidia += n;
            }
        }
        let mut c = PodConstraints {
            base,
            terms,
            tolerations: t.tolerations(),
            extended,
            // Whole GPUs of DRA claims come from the same node as the containers' own.
            nvidia_gpus: nvidia.saturating_add(t.dra_whole_gpus()).max(nvidia_init),
        };
        // Kept with the template for the whole run (one per template of the repository): at
        // their size, not the four slots a first push makes.
        c.base.shrink_to_fit();
        c.tolerations.shrink_to_fit();
        c.extended.shrink_to_fit();
        c
    }
}

/// Whether a template is placed outside Karpenter: a fixed `nodeName`, or a selector on a managed
/// node group / Fargate label (EKS, GKE and AKS node pools), on a label only GKE puts on its nodes
/// (`cloud.google.com/gke-accelerator`, `cloud.google.com/compute-class`: Karpenter runs on no
/// GKE cluster), or on a label whose value names the cluster autoscaler (`provisioner:
/// cluster-autoscaler`): those nodes are not NodePool nodes, so NodePools say nothing.
pub fn targets_other_capacity(t: &PodTemplate<'_>) -> bool {
    if t.spec
        .get("nodeName")
        .and_then(Node::as_str)
        .is_some_and(|n| !n.is_empty())
    {
        return true;
    }
    let other = |key: &str, values: &[&str]| {
        matches!(
            key,
            "eks.amazonaws.com/nodegroup"
                | "alpha.eksctl.io/nodegroup-name"
                | "cloud.google.com/gke-nodepool"
                | "kubernetes.azure.com/agentpool"
                // AKS's legacy name for the same label, still put on every node pool's nodes.
                | "agentpool"
        ) || key.starts_with("cloud.google.com/gke-")
            || key == "cloud.google.com/compute-class"
            || (key == "eks.amazonaws.com/compute-type" && values.contains(&"fargate"))
            || values.contains(&"cluster-autoscaler")
    };
    let selector = t
        .node_selector()
        .into_iter()
        .any(|(k, _, v)| other(k, &[v.as_str().unwrap_or("")]));
    let terms = t.affinity_terms();
    let affinity = !terms.is_empty()
        && terms.iter().all(|term| {
            term.iter()
                .any(|e| matches!(e.op, "In" | "Exists") && other(e.key, &e.values))
        });
    selector || affinity
}
