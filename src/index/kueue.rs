//! Kueue's flavor assigner: which ResourceFlavors a template may really be admitted to.

use super::{Index, Variant};
use crate::diag::Loc;
use crate::model::Flavor;
use crate::model::constraints::Req;
use crate::sched::is_placeholder;
use crate::sched::numeric;

/// Why Kueue would never assign a ResourceFlavor to a pod template.
#[derive(Debug, Clone)]
pub enum FlavorReject {
    /// The template's own nodeSelector / required affinity disagrees with the flavor's nodeLabels.
    Labels {
        key: String,
        /// The template's selector entry or affinity expression.
        pod: Loc,
        /// The flavor's nodeLabels entry on that key (absent when the flavor lacks the key).
        flavor: Option<Loc>,
    },
    /// A NoSchedule/NoExecute `nodeTaints` entry neither the template nor the flavor tolerates.
    Taint { taint: String, flavor: Loc },
}

/// Whether a node carrying exactly `labels` satisfies one pod requirement.
fn holds_on(labels: &[(&str, &str)], r: &Req<'_>) -> bool {
    if r.values.iter().any(|v| is_placeholder(v)) {
        return true;
    }
    let v = labels.iter().find(|(k, _)| *k == r.key).map(|(_, v)| *v);
    if v.is_some_and(is_placeholder) {
        return true;
    }
    match r.op {
        "In" => v.is_some_and(|v| r.values.contains(&v)),
        "NotIn" => !v.is_some_and(|v| r.values.contains(&v)),
        "Exists" => v.is_some(),
        "DoesNotExist" => v.is_none(),
        "Gt" | "Lt" => v.is_some_and(|v| numeric(r.op, v, &r.values)),
        _ => true,
    }
}

/// Kueue's flavor check for template `ti` and flavor `fi` (`None`: Kueue may assign it).
pub fn flavor_reject(ix: &Index<'_>, ti: usize, fi: usize) -> Option<FlavorReject> {
    let t = ix.templates.get(ti)?;
    let f = ix.flavors.get(fi)?;
    let fobj = ix.objects.get(f.obj)?;
    let pod = t.constraints();
    // Hard nodeTaints gate admission; the flavor's own tolerations count.
    for taint in Flavor::hard_node_taints(fobj) {
        let mut tolerations = pod.tolerations.iter().chain(&f.tolerations);
        if !tolerations.any(|x| x.tolerates(&taint)) {
            return Some(FlavorReject::Taint {
                taint: taint.display(),
                flavor: fobj.loc(taint.node),
            });
        }
    }
    // Only keys some flavor of the same resource group sets are compared.
    let cq = ix
        .queues
        .get(ti)
        .copied()
        .flatten()
        .and_then(|q| q.cluster_queue);
    let mut allowed: Vec<&str> = f.node_labels.iter().map(|(k, _, _)| *k).collect();
    if let Some(cq) = cq.and_then(|c| ix.cluster_queues.get(c))
        && let Some((_, _, covered)) = cq.flavors.iter().find(|(n, _, _)| *n == f.name)
    {
        for (name, _, cov) in &cq.flavors {
            if cov != covered {
                continue;
            }
            if let Some(other) = ix.flavor(name).and_then(|i| ix.flavors.get(i)) {
                allowed.extend(other.node_labels.iter().map(|(k, _, _)| *k));
            }
        }
    }
    let labels: Vec<(&str, &str)> = f
        .node_labels
        .iter()
        .filter_map(|(k, _, v)| Some((*k, v.as_str()?)))
        .collect();
    let label_loc = |key: &str| {
        f.node_labels
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| fobj.loc(*v))
    };
    let reject = |r: &Req<'_>| FlavorReject::Labels {
        key: r.key.to_string(),
        pod: r.loc,
        flavor: label_loc(r.key),
    };
    let relevant = |r: &&Req<'_>| allowed.contains(&r.key);
    if let Some(r) = pod
        .base
        .iter()
        .filter(relevant)
        .find(|r| !holds_on(&labels, r))
    {
        return Some(reject(r));
    }
    if pod.terms.is_empty() {
        return None;
    }
    let mut first_failure = None;
    for term in &pod.terms {
        match term.iter().filter(relevant).find(|r| !holds_on(&labels, r)) {
            None => return None,
            Some(r) => {
                first_failure.get_or_insert(r);
            }
        }
    }
    first_failure.map(reject)
}

/// The ways template `ti` may really run: `Index::variants` minus flavors Kueue would never assign
/// to it ([`flavor_reject`]), keeping only the flavors of the resource group that covers one of its
/// GPU resources when there is such a group (a CPU-only group's flavor is assigned alongside the GPU
/// flavor, never instead of it). Empty when the template goes through Kueue but no flavor fits.
/// Computed once per template when the index is built.
pub fn assignable_variants<'i, 'a>(ix: &'i Index<'a>, ti: usize) -> Vec<&'i Variant<'a>> {
    let (Some(vs), Some(ok)) = (ix.variants.get(ti), ix.assignable.get(ti)) else {
        return Vec::new();
    };
    ok.iter().filter_map(|&v| vs.get(v)).collect()
}

/// Indices into `ix.variants[ti]` of the variants [`assignable_variants`] returns.
pub(crate) fn compute_assignable(ix: &Index<'_>, ti: usize) -> Vec<usize> {
    let Some(vs) = ix.variants.get(ti) else {
        return Vec::new();
    };
    if vs.iter().all(|v| v.flavor.is_none()) {
        return (0..vs.len()).collect();
    }
    let ok: Vec<usize> = (0..vs.len())
        .filter(|&v| {
            vs[v]
                .flavor
                .is_none_or(|fi| flavor_reject(ix, ti, fi).is_none())
        })
        .collect();
    let gpu_resources: Vec<&str> = ix.templates[ti]
        .gpu_containers()
        .flat_map(|c| c.accelerators())
        .map(|(n, _)| n)
        .filter(|n| crate::model::is_gpu_resource(n))
        // What Kueue charges a DRA claim's GPUs to.
        .chain(
            ix.templates[ti]
                .dra_gpus()
                .iter()
                .filter_map(|g| g.kueue_resource.as_deref()),
        )
        .collect();
    let cq = ix.queues[ti]
        .and_then(|q| q.cluster_queue)
        .and_then(|c| ix.cluster_queues.get(c));
    let in_gpu_group = |fi: usize| {
        let name = ix.flavors[fi].name;
        cq.is_some_and(|cq| {
            cq.flavors
                .iter()
                .any(|(n, _, cov)| *n == name && cov.iter().any(|r| gpu_resources.contains(r)))
        })
    };
    let preferred: Vec<usize> = ok
        .iter()
        .copied()
        .filter(|&v| vs[v].flavor.is_some_and(in_gpu_group))
        .collect();
    let mut kept = if preferred.is_empty() { ok } else { preferred };
    // Kept for the run, one per template.
    kept.shrink_to_fit();
    kept
}

/// Capacity a ClusterQueue's admission check puts outside this cluster's NodePools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// MultiKueue: the workload runs in a worker cluster, whose Kueue and nodes admit it.
    MultiKueue,
    /// A ProvisioningRequest: the cluster autoscaler (or GKE's queued provisioning) creates the
    /// nodes from its node groups, which Karpenter does not serve.
    Provisioning,
}

impl Gate {
    /// Where the capacity comes from, for messages.
    pub fn what(self) -> &'static str {
        match self {
            Gate::MultiKueue => "a MultiKueue worker cluster",
            Gate::Provisioning => {
                "nodes the cluster autoscaler provisions for a ProvisioningRequest"
            }
        }
    }
}

/// Per ClusterQueue: its admission checks whose AdmissionCheck (in the files) names a controller
/// that places the capacity elsewhere, each with the flavors it is limited to (empty: all).
pub(super) fn cluster_queue_gates<'a>(ix: &Index<'a>) -> Vec<Vec<(Vec<&'a str>, Gate)>> {
    let controllers: std::collections::HashMap<&str, Gate> = ix
        .of_kind("AdmissionCheck")
        .filter(|o| o.group == "kueue.x-k8s.io")
        .filter_map(|o| {
            let gate = match o.spec()?.get("controllerName")?.as_str()? {
                "kueue.x-k8s.io/multikueue" => Gate::MultiKueue,
                "kueue.x-k8s.io/provisioning-request" => Gate::Provisioning,
                _ => return None,
            };
            Some((o.name?, gate))
        })
        .collect();
    ix.cluster_queues
        .iter()
        .map(|cq| {
            cq.admission_checks
                .iter()
                .filter_map(|(name, on)| Some((on.clone(), *controllers.get(name)?)))
                .collect()
        })
        .collect()
}

impl Index<'_> {
    /// The gate of ClusterQueue `cq` on flavor `flavor` (`None`: any flavor's), if any.
    pub fn gate(&self, cq: usize, flavor: Option<&str>) -> Option<Gate> {
        self.cq_gates.get(cq)?.iter().find_map(|(on, g)| {
            (on.is_empty() || flavor.is_none_or(|f| on.contains(&f))).then_some(*g)
        })
    }

    /// Whether template `ti`'s pods may run on capacity an admission check places outside this
    /// cluster's NodePools (its queue's checks on every flavor, or on a flavor it may get).
    pub(super) fn compute_elsewhere(&self, ti: usize) -> Option<Gate> {
        let cq = self.queues[ti]?.cluster_queue?;
        let gates = self.cq_gates.get(cq)?;
        if gates.is_empty() {
            return None;
        }
        if let Some((_, g)) = gates.iter().find(|(on, _)| on.is_empty()) {
            return Some(*g);
        }
        self.variants[ti]
            .iter()
            .filter_map(|v| v.flavor)
            .find_map(|fi| self.gate(cq, Some(self.flavors[fi].name)))
    }

    /// Whether every ClusterQueue that lists flavor `fi` (and one does) gates it.
    pub fn flavor_elsewhere(&self, fi: usize) -> Option<Gate> {
        self.flavor_gates.get(self.flavors.get(fi)?.name).copied()
    }
}

/// The flavors every ClusterQueue listing them gates, with the gate. One pass over the queues'
/// flavor lists; empty without gates.
pub(super) fn flavor_gates<'a>(ix: &Index<'a>) -> std::collections::HashMap<&'a str, Gate> {
    let mut out: std::collections::HashMap<&'a str, Option<Gate>> = Default::default();
    if ix.cq_gates.iter().all(Vec::is_empty) {
        return Default::default();
    }
    for (c, cq) in ix.cluster_queues.iter().enumerate() {
        for (name, _, _) in &cq.flavors {
            let gate = ix.gate(c, Some(name));
            let e = out.entry(*name).or_insert(gate);
            if gate.is_none() {
                *e = None;
            }
        }
    }
    out.into_iter()
        .filter_map(|(name, g)| Some((name, g?)))
        .collect()
}
