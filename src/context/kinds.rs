//! What `context pull` reads from a cluster, in the order the context file lists it.

/// How an object of a kind is trimmed before it is written ([`super::strip`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Metadata trimmed, `status` dropped.
    Plain,
    /// A CustomResourceDefinition, kept only when its group is in [`CRD_GROUPS`].
    Crd,
    /// A Node: labels, taints and resources; no status but capacity and a few `nodeInfo` facts.
    Node,
    /// An Argo CD cluster Secret: its Argo CD name, server and project, never its credentials.
    ClusterSecret,
}

/// The ConfigMap of MIG layouts the GPU operator makes when its ClusterPolicy names none.
pub const DEFAULT_MIG_CONFIG: &str = "default-mig-parted-config";

/// The namespace Argo CD's cluster Secrets are read from unless told otherwise.
pub const ARGOCD_NAMESPACE: &str = "argocd";

/// The label of Argo CD's cluster Secrets, and its value.
pub const CLUSTER_SECRET_SELECTOR: &str = "argocd.argoproj.io/secret-type=cluster";

/// The keys of a cluster Secret's `data` kept: what the `clusters` generator gives a template.
/// `config` (the credentials) never leaves the cluster.
pub const CLUSTER_SECRET_KEYS: &[&str] = &["name", "server", "project"];

/// One kind to list. Its resource name and version come from discovery: a cluster serves the
/// version it serves (Kueue's `v1beta1` or `v1beta2`), and an older one still reads.
#[derive(Clone, Copy, Debug)]
pub struct Wanted {
    /// The API group; `""` is the core group.
    pub group: &'static str,
    pub kind: &'static str,
    pub shape: Shape,
}

const fn plain(group: &'static str, kind: &'static str) -> Wanted {
    Wanted {
        group,
        kind,
        shape: Shape::Plain,
    }
}

/// The kinds, in the file's order: definitions first, then what pods are matched against
/// (priorities, pools and their classes, queues), then the GPU operator, then the nodes.
pub static WANTED: &[Wanted] = &[
    Wanted {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        shape: Shape::Crd,
    },
    plain("scheduling.k8s.io", "PriorityClass"),
    plain("karpenter.sh", "NodePool"),
    plain("karpenter.k8s.aws", "EC2NodeClass"),
    // EKS Auto Mode's node classes.
    plain("eks.amazonaws.com", "NodeClass"),
    plain("kueue.x-k8s.io", "ResourceFlavor"),
    plain("kueue.x-k8s.io", "Cohort"),
    plain("kueue.x-k8s.io", "ClusterQueue"),
    plain("kueue.x-k8s.io", "LocalQueue"),
    plain("kueue.x-k8s.io", "WorkloadPriorityClass"),
    plain("kueue.x-k8s.io", "Topology"),
    plain("kueue.x-k8s.io", "AdmissionCheck"),
    // The NVIDIA GPU operator's one cluster-wide configuration.
    plain("nvidia.com", "ClusterPolicy"),
    Wanted {
        group: "",
        kind: "Node",
        shape: Shape::Node,
    },
];

/// The groups whose CustomResourceDefinitions are kept: the objects gpuops reads of them are
/// validated against the schema the cluster serves (node pools and classes, queues, and the
/// training and serving workloads of `model::kinds`).
pub static CRD_GROUPS: &[&str] = &[
    "karpenter.sh",
    "karpenter.k8s.aws",
    "eks.amazonaws.com",
    "kueue.x-k8s.io",
    "jobset.x-k8s.io",
    "leaderworkerset.x-k8s.io",
    "kubeflow.org",
    "trainer.kubeflow.org",
    "ray.io",
];

/// The distinct groups of [`WANTED`], in first-seen order.
pub fn groups() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for w in WANTED {
        if !out.contains(&w.group) {
            out.push(w.group);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_once() {
        for (i, w) in WANTED.iter().enumerate() {
            assert!(
                WANTED[i + 1..]
                    .iter()
                    .all(|o| (o.group, o.kind) != (w.group, w.kind)),
                "{}/{} twice",
                w.group,
                w.kind
            );
        }
    }

    #[test]
    fn the_crds_of_the_pulled_custom_kinds_are_kept() {
        for w in WANTED {
            let builtin = w.group.is_empty() || w.group.ends_with(".k8s.io");
            let opaque = w.group == "nvidia.com";
            if !builtin && !opaque {
                assert!(CRD_GROUPS.contains(&w.group), "{}", w.group);
            }
        }
    }
}
