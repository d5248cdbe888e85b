use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::index::Index;
use crate::model::{NodePool, PodTemplate, Taint};
use crate::sched::{
    GpuCapability, LabelIssue, PodConstraints, PoolReqs, allowed_instances, is_well_known,
    label_issues, taints,
};
use crate::yaml::Node;

/// Taints the DaemonSet controller tolerates on every DaemonSet pod by itself.
const DAEMONSET_TOLERATED: [&str; 7] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/network-unavailable",
];

/// Which devices a device-plugin DaemonSet registers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plugin {
    Nvidia,
    Neuron,
    Efa,
}

impl Plugin {
    const ALL: [Plugin; 3] = [Plugin::Nvidia, Plugin::Neuron, Plugin::Efa];

    fn noun(self) -> &'static str {
        match self {
            Plugin::Nvidia => "the NVIDIA device plugin",
            Plugin::Neuron => "the Neuron device plugin",
            Plugin::Efa => "the EFA device plugin",
        }
    }

    fn resource(self) -> &'static str {
        match self {
            Plugin::Nvidia => "`nvidia.com/gpu`",
            Plugin::Neuron => "`aws.amazon.com/neuron` / `aws.amazon.com/neuroncore`",
            Plugin::Efa => "`vpc.amazonaws.com/efa`",
        }
    }

    fn pools(self) -> &'static str {
        match self {
            Plugin::Nvidia => "GPU NodePool",
            Plugin::Neuron => "Neuron NodePool",
            Plugin::Efa => "EFA NodePool",
        }
    }

    /// The plugin a DaemonSet runs, told by its container images or its name.
    fn of(name: &str, t: &PodTemplate) -> Option<Plugin> {
        let images: Vec<&str> = t
            .containers
            .iter()
            .filter(|c| !c.init)
            .filter_map(|c| c.get("image").and_then(Node::as_str))
            .collect();
        let any = |needles: &[&str]| {
            images
                .iter()
                .chain(std::iter::once(&name))
                .any(|s| needles.iter().any(|n| s.contains(n)))
        };
        if any(&[
            "k8s-device-plugin:",
            "/k8s-device-plugin",
            "nvidia-device-plugin",
        ]) && !any(&["efa", "neuron"])
        {
            Some(Plugin::Nvidia)
        } else if any(&["neuron-device-plugin"]) {
            Some(Plugin::Neuron)
        } else if any(&[
            "aws-efa-k8s-device-plugin",
            "efa-k8s-device-plugin",
            "efa-device-plugin",
        ]) {
            Some(Plugin::Efa)
        } else {
            None
        }
    }
}

declare_rule! {
    /// ## What it does
    /// Flags a device-plugin DaemonSet in the repository (the NVIDIA device plugin, e.g. image
    /// `nvcr.io/nvidia/k8s-device-plugin` or `nvidia-device-plugin-daemonset`; the Neuron
    /// device plugin; the AWS EFA device plugin) when its pods cannot run on the nodes of a
    /// NodePool that needs it, and no other DaemonSet of the same plugin covers that pool: it
    /// does not tolerate one of the pool's NoSchedule/NoExecute taints, or its `nodeSelector` /
    /// required node affinity excludes the pool's labels or instance types. The pools that need
    /// it: for the NVIDIA plugin, NodePools that explicitly launch NVIDIA GPU instances; for
    /// Neuron, pools of Inf/Trn families or tainted or budgeted for Neuron devices; for EFA, pools
    /// where a pod asking for `vpc.amazonaws.com/efa` lands and that may launch an instance with
    /// EFA interfaces. Capacity read from Terraform node groups or chart values is not judged: it
    /// may be another cluster's, configured with a plugin of its own. Nor are EKS Auto Mode
    /// pools (node class group `eks.amazonaws.com`): their nodes run the device plugins
    /// themselves.
    ///
    /// Selector keys no NodePool in the repository sets and that are not well-known (labels node
    /// feature discovery or the GPU operator add at run time, such as
    /// `feature.node.kubernetes.io/pci-10de.present` or `nvidia.com/gpu.present`) are taken to
    /// match. DaemonSets inside a Helm chart are only seen when the chart is rendered, and a
    /// repository without any device-plugin DaemonSet (installed by an add-on or elsewhere) is
    /// never flagged.
    ///
    /// ## Why is this bad?
    /// A GPU only becomes schedulable once the device plugin on its node registers it: until
    /// then the node has no `nvidia.com/gpu` (or Neuron, EFA) capacity. Karpenter launches the
    /// node for a pending GPU pod, the plugin never starts there, the node never offers the GPUs,
    /// and the pod stays `Pending` on an expensive idle instance; Karpenter does not consider
    /// such a node initialized and may keep launching more.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu-training` taints its nodes with `dedicated=training:NoSchedule`
    /// apiVersion: apps/v1
    /// kind: DaemonSet
    /// metadata:
    ///   name: nvidia-device-plugin-daemonset
    ///   namespace: kube-system
    /// spec:
    ///   template:
    ///     spec:
    ///       tolerations:
    ///         - key: nvidia.com/gpu        # tolerates only the GPU taint
    ///           operator: Exists
    ///           effect: NoSchedule
    ///       containers:
    ///         - name: nvidia-device-plugin-ctr
    ///           image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
    /// ```
    ///
    /// ## Fix
    /// Tolerate every taint of the GPU pools (`- operator: Exists` tolerates all of them, the
    /// usual choice for node agents) and select the pools' nodes by a label they all carry, or
    /// none at all.
    name: "device-plugin-misses-gpu-pool",
    category: "scheduling",
    kinds: &["DaemonSet"],
    severity: Error,
    summary: "a device-plugin DaemonSet that cannot run on some GPU NodePool's nodes",
    check: check,
}

/// Why a DaemonSet's pods cannot run on a pool's nodes.
enum Miss<'a> {
    Taint(Taint<'a>),
    Labels(LabelIssue),
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    // Device-plugin DaemonSets by plugin, with their (label-filtered) constraints.
    let mut plugins: Vec<(Plugin, usize, PodConstraints)> = Vec::new();
    for (ti, t) in ix.templates.iter().enumerate() {
        let owner = ix.owner(t);
        if !owner.is("apps", "DaemonSet") {
            continue;
        }
        if let Some(kind) = Plugin::of(owner.name_or_unnamed(), t) {
            plugins.push((kind, ti, judged_constraints(ix, t)));
        }
    }
    if plugins.is_empty() {
        return;
    }
    for kind in Plugin::ALL {
        let ds: Vec<&(Plugin, usize, PodConstraints)> =
            plugins.iter().filter(|(k, _, _)| *k == kind).collect();
        let Some(first) = ds.first() else {
            continue;
        };
        let mut missed: Vec<(usize, Miss)> = Vec::new();
        for p in needing(ix, kind) {
            let pool = &ix.nodepools[p];
            // Capacity read from Terraform or chart values may be another cluster's (a repository
            // of several configurations), and a plugin it installs may be configured there too.
            // EKS Auto Mode nodes run the NVIDIA, Neuron and EFA device plugins themselves: a
            // DaemonSet the repository adds is not what registers their devices.
            if pool.is_derived() || pool.is_auto_mode() {
                continue;
            }
            if ds.iter().any(|(_, _, pod)| miss(ix, pod, pool).is_none()) {
                continue;
            }
            if let Some(m) = miss(ix, &first.2, pool) {
                missed.push((p, m));
            }
        }
        if !missed.is_empty() {
            out.push(finding(cx, kind, first.1, ds.len(), &missed));
        }
    }
}

/// The DaemonSet's constraints without requirements on labels nothing in the repository sets
/// (run-time labels from node feature discovery or the GPU operator): those are taken to match.
fn judged_constraints<'a>(ix: &Index<'a>, t: &PodTemplate<'a>) -> PodConstraints<'a> {
    let mut pod = t.constraints().clone();
    let known =
        |key: &str| is_well_known(key) || ix.nodepools.iter().any(|p| PoolReqs::of(p).defines(key));
    pod.base.retain(|r| known(r.key));
    for term in &mut pod.terms {
        term.retain(|r| known(r.key));
    }
    pod
}

/// Why the DaemonSet's pods cannot run on the pool's nodes (`None`: they can).
fn miss<'a>(ix: &Index, pod: &PodConstraints, pool: &NodePool<'a>) -> Option<Miss<'a>> {
    let v = taints(pod, pool, ix.settings.eks);
    if let Some(t) = v
        .untolerated
        .into_iter()
        .find(|t| !DAEMONSET_TOLERATED.contains(&t.key))
    {
        return Some(Miss::Taint(t));
    }
    label_issues(pod, pool).into_iter().next().map(Miss::Labels)
}

/// The pools a plugin must run on, in pool order.
fn needing(ix: &Index, kind: Plugin) -> Vec<usize> {
    match kind {
        Plugin::Nvidia => (0..ix.nodepools.len())
            .filter(|&p| {
                ix.pools.capability[p] == GpuCapability::Explicit
                    && !allowed_instances(&ix.nodepools[p]).is_empty()
            })
            .collect(),
        Plugin::Neuron => (0..ix.nodepools.len())
            .filter(|&p| is_neuron_pool(&ix.nodepools[p]))
            .collect(),
        Plugin::Efa => {
            let mut pools: Vec<usize> = (0..ix.templates.len())
                .filter(|&ti| {
                    ix.templates[ti].containers.iter().any(|c| {
                        c.accelerators()
                            .iter()
                            .any(|(n, _)| *n == "vpc.amazonaws.com/efa")
                    })
                })
                .flat_map(|ti| ix.landing_pools(ti))
                .collect();
            pools.sort_unstable();
            pools.dedup();
            // A pod lands by labels; only a pool that may launch an instance with EFA
            // interfaces (known from the catalog) gets devices for the plugin to register.
            pools.retain(|&p| {
                allowed_instances(&ix.nodepools[p])
                    .iter()
                    .any(|i| i.efa > 0)
            });
            pools
        }
    }
}

fn is_neuron_family(v: &str) -> bool {
    let family = v.split_once('.').map_or(v, |(f, _)| f);
    family.starts_with("inf") || family.starts_with("trn")
}

fn is_neuron_pool(pool: &NodePool) -> bool {
    let reqs = pool.requirements.iter().any(|r| {
        r.op == "In"
            && match crate::catalog::karpenter_key(r.key) {
                "karpenter.k8s.aws/instance-family" | "node.kubernetes.io/instance-type" => {
                    r.values.iter().any(|v| is_neuron_family(v))
                }
                "karpenter.k8s.aws/instance-category" => {
                    r.values.iter().any(|v| matches!(*v, "inf" | "trn"))
                }
                _ => false,
            }
    });
    let neuron = |k: &str| k.starts_with("aws.amazon.com/neuron");
    reqs || pool.taints.iter().any(|t| neuron(t.key))
        || pool
            .limits
            .is_some_and(|l| l.entries().any(|(k, _, _)| neuron(k)))
}

fn finding(
    cx: &Ctx,
    kind: Plugin,
    ti: usize,
    count: usize,
    missed: &[(usize, Miss)],
) -> Diagnostic {
    let ix = cx.ix;
    let t = &ix.templates[ti];
    let owner = ix.owner(t);
    let why = |m: &Miss| match m {
        Miss::Taint(taint) => format!("its taint `{}` is not tolerated", taint.display()),
        Miss::Labels(issue) => issue
            .reason
            .replacen("the pool's", "its", 1)
            .replacen("the pool", "it", 1),
    };
    let pools = match missed {
        [(p, m)] => format!("{} `{}`: {}", kind.pools(), ix.nodepools[*p].name, why(m)),
        _ => {
            let mut listed: Vec<String> = missed
                .iter()
                .take(3)
                .map(|(p, m)| format!("`{}` ({})", ix.nodepools[*p].name, why(m)))
                .collect();
            if missed.len() > 3 {
                listed.push(format!("{} more", missed.len() - 3));
            }
            format!("{} {}s: {}", missed.len(), kind.pools(), listed.join(", "))
        }
    };
    let m0 = &missed[0].1;
    // Point at what decides on the DaemonSet's side for the first pool.
    let at: Loc = match m0 {
        Miss::Taint(_) => t
            .spec
            .entry("tolerations")
            .map(|(k, _)| t.loc(k))
            .or_else(|| super::key_of(owner.root, t.spec).map(|k| t.loc(k)))
            .unwrap_or_else(|| owner.loc(owner.anchor())),
        Miss::Labels(issue) if issue.pod.file == t.file => issue.pod,
        Miss::Labels(_) => owner.loc(owner.anchor()),
    };
    let who = if count > 1 {
        format!(
            "{} ({}, and none of the other {} DaemonSets of it)",
            owner.describe(),
            kind.noun(),
            count - 1
        )
    } else {
        format!("{} ({})", owner.describe(), kind.noun())
    };
    let mut d = cx
        .at(
            at,
            format!(
                "{who} cannot run on the nodes of {pools}; the devices on those nodes never register as {}, so Karpenter's new nodes stay uninitialized and the pods that need them stay Pending",
                kind.resource()
            ),
        )
        .object(Some(owner.obj_ref()));
    d = match m0 {
        Miss::Taint(taint) => d.help(format!(
            "add a toleration for `{}` to `{}.spec.tolerations` (or `- operator: Exists`, which node agents usually carry)",
            taint.display(),
            t.path
        )),
        Miss::Labels(_) => d.help(format!(
            "select the GPU nodes by a label every such NodePool sets (`{}.spec.nodeSelector`), or drop the selector",
            t.path
        )),
    };
    for (p, m) in missed.iter().take(3) {
        let pool = &ix.nodepools[*p];
        let (loc, msg) = match m {
            Miss::Taint(taint) => (
                pool.loc(taint.node),
                format!("NodePool `{}` taint `{}`", pool.name, taint.display()),
            ),
            Miss::Labels(issue) => (
                issue.pool.unwrap_or_else(|| pool.loc(pool.anchor)),
                format!("NodePool `{}` labels its nodes here", pool.name),
            ),
        };
        d = d.related(loc, msg);
    }
    d
}
