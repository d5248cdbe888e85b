//! The Kueue kinds gpuops reads: ResourceFlavor, ClusterQueue (its quota per flavor and
//! resource) and LocalQueue.

use super::*;

/// Kueue ResourceFlavor.
#[derive(Debug)]
pub struct Flavor<'a> {
    pub obj: usize,
    pub name: &'a str,
    pub node_labels: Vec<(&'a str, Node<'a>, Node<'a>)>,
    pub tolerations: Vec<Toleration<'a>>,
    pub node_labels_node: Option<Node<'a>>,
}

impl<'a> Flavor<'a> {
    /// Its `nodeTaints` with a hard effect (NoSchedule, NoExecute): they gate admission. `obj`
    /// is the flavor's object.
    pub fn hard_node_taints(obj: &Object<'a>) -> Vec<Taint<'a>> {
        obj.spec()
            .and_then(|s| s.get("nodeTaints"))
            .into_iter()
            .flat_map(|n| n.items())
            .filter_map(Taint::from_node)
            .filter(Taint::is_hard)
            .collect()
    }

    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        if !obj.is("kueue.x-k8s.io", "ResourceFlavor") {
            return None;
        }
        let spec = obj.spec();
        let labels = spec.and_then(|s| s.get("nodeLabels"));
        Some(Flavor {
            obj: idx,
            name: obj.name?,
            node_labels: labels.map(|n| n.entries().collect()).unwrap_or_default(),
            tolerations: spec
                .and_then(|s| s.get("tolerations"))
                .into_iter()
                .flat_map(|n| n.items())
                .map(Toleration::from_node)
                .collect(),
            node_labels_node: labels,
        })
    }
}

/// A quantity as written: its node (for spans) and its value (`None`: not a quantity, e.g. a
/// placeholder).
#[derive(Debug, Clone, Copy)]
pub struct Quantity<'a> {
    pub node: Node<'a>,
    pub value: Option<crate::quantity::Milli>,
}

impl<'a> Quantity<'a> {
    pub fn from_node(node: Node<'a>) -> Self {
        Quantity {
            node,
            value: node.as_str().and_then(crate::quantity::parse),
        }
    }
}

/// The quota a ClusterQueue (or Cohort) gives one flavor of one resource.
#[derive(Debug, Clone)]
pub struct ResourceQuota<'a> {
    pub name: &'a str,
    /// The `name` value node.
    pub name_node: Node<'a>,
    pub nominal: Option<Quantity<'a>>,
    pub borrowing_limit: Option<Quantity<'a>>,
    pub lending_limit: Option<Quantity<'a>>,
}

/// One `resourceGroups[].flavors[]` entry with its quotas.
#[derive(Debug, Clone)]
pub struct FlavorQuotas<'a> {
    pub flavor: &'a str,
    pub name_node: Node<'a>,
    /// Index into `ClusterQueue::groups`.
    pub group: usize,
    pub resources: Vec<ResourceQuota<'a>>,
}

impl<'a> FlavorQuotas<'a> {
    pub fn resource(&self, name: &str) -> Option<&ResourceQuota<'a>> {
        self.resources.iter().find(|r| r.name == name)
    }
}

/// One `resourceGroups[]` entry: the resources it covers (name, entry node).
#[derive(Debug, Clone)]
pub struct ResourceGroup<'a> {
    pub covered: Vec<(&'a str, Node<'a>)>,
}

/// Kueue ClusterQueue: the flavors its resource groups name, with their quotas.
#[derive(Debug)]
pub struct ClusterQueue<'a> {
    pub obj: usize,
    pub name: &'a str,
    /// (flavor name, name node, resources covered by that group)
    pub flavors: Vec<(&'a str, Node<'a>, Vec<&'a str>)>,
    pub groups: Vec<ResourceGroup<'a>>,
    pub quotas: Vec<FlavorQuotas<'a>>,
    /// `spec.cohortName` (v1beta2) or `spec.cohort` (v1beta1), when it names one.
    pub cohort: Option<Node<'a>>,
    pub preemption: Option<Node<'a>>,
    /// The admission checks its workloads wait for: (AdmissionCheck name, the flavors it is
    /// limited to; empty: every flavor). `spec.admissionChecks` (v1beta1) or
    /// `spec.admissionChecksStrategy.admissionChecks`.
    pub admission_checks: Vec<(&'a str, Vec<&'a str>)>,
}

/// A ClusterQueue's admission checks, each with the flavors it is limited to.
fn admission_checks<'a>(spec: Option<Node<'a>>) -> Vec<(&'a str, Vec<&'a str>)> {
    let Some(spec) = spec else {
        return Vec::new();
    };
    let plain = spec
        .get("admissionChecks")
        .into_iter()
        .flat_map(|n| n.items())
        .filter_map(|n| Some((n.as_str()?, Vec::new())));
    let strategy = spec
        .get("admissionChecksStrategy")
        .and_then(|s| s.get("admissionChecks"))
        .into_iter()
        .flat_map(|n| n.items())
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?;
            let on = c
                .get("onFlavors")
                .into_iter()
                .flat_map(|n| n.items())
                .filter_map(|n| n.as_str())
                .collect();
            Some((name, on))
        });
    plain.chain(strategy).collect()
}

/// The resource groups of a ClusterQueue or Cohort spec, and each flavor's quotas.
pub fn resource_groups<'a>(
    spec: Option<Node<'a>>,
) -> (Vec<ResourceGroup<'a>>, Vec<FlavorQuotas<'a>>) {
    let mut groups = Vec::new();
    let mut quotas = Vec::new();
    for g in spec
        .and_then(|s| s.get("resourceGroups"))
        .into_iter()
        .flat_map(|n| n.items())
    {
        let gi = groups.len();
        groups.push(ResourceGroup {
            covered: g
                .get("coveredResources")
                .into_iter()
                .flat_map(|n| n.items())
                .filter_map(|n| Some((n.as_str()?, n)))
                .collect(),
        });
        for f in g.get("flavors").into_iter().flat_map(|n| n.items()) {
            let Some((flavor, name_node)) = f.get("name").and_then(|n| Some((n.as_str()?, n)))
            else {
                continue;
            };
            let resources = f
                .get("resources")
                .into_iter()
                .flat_map(|n| n.items())
                .filter_map(|r| {
                    let name_node = r.get("name")?;
                    let q = |k: &str| r.get(k).filter(|n| !n.is_null()).map(Quantity::from_node);
                    Some(ResourceQuota {
                        name: name_node.as_str()?,
                        name_node,
                        nominal: q("nominalQuota"),
                        borrowing_limit: q("borrowingLimit"),
                        lending_limit: q("lendingLimit"),
                    })
                })
                .collect();
            quotas.push(FlavorQuotas {
                flavor,
                name_node,
                group: gi,
                resources,
            });
        }
    }
    (groups, quotas)
}

impl<'a> ClusterQueue<'a> {
    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        if !obj.is("kueue.x-k8s.io", "ClusterQueue") {
            return None;
        }
        let spec = obj.spec();
        let (groups, quotas) = resource_groups(spec);
        let flavors = quotas
            .iter()
            .map(|f| {
                let covered = groups[f.group].covered.iter().map(|(n, _)| *n).collect();
                (f.flavor, f.name_node, covered)
            })
            .collect();
        let cohort = spec
            .and_then(|s| s.get("cohortName").or_else(|| s.get("cohort")))
            .filter(|n| n.as_str().is_some_and(|s| !s.is_empty()));
        Some(ClusterQueue {
            obj: idx,
            name: obj.name?,
            flavors,
            groups,
            quotas,
            cohort,
            preemption: spec.and_then(|s| s.get("preemption")),
            admission_checks: admission_checks(spec),
        })
    }
    /// The cohort's name, when the queue is in one.
    pub fn cohort_name(&self) -> Option<&'a str> {
        self.cohort.and_then(|n| n.as_str())
    }
    /// The quotas of a flavor, when the queue lists it.
    pub fn flavor_quotas(&self, flavor: &str) -> Option<&FlavorQuotas<'a>> {
        self.quotas.iter().find(|f| f.flavor == flavor)
    }
    /// Whether the queue preempts only for workloads of strictly higher priority than the one
    /// evicted: outside any cohort, with `withinClusterQueue: LowerPriority`.
    pub fn preempts_only_lower(&self) -> bool {
        self.cohort.is_none()
            && self.preemption.is_some_and(|p| {
                p.get("withinClusterQueue")
                    .and_then(|v| v.as_str())
                    .is_some_and(|s| s == "LowerPriority" || s == "Never")
            })
    }
    /// Whether admitted workloads may be preempted (evicted) for others. The cohort policies
    /// act only within a cohort.
    pub fn preempts(&self) -> bool {
        let cohort = self.cohort.is_some();
        self.preemption.is_some_and(|p| {
            p.entries().any(|(k, _, v)| match k {
                "withinClusterQueue" => v.as_str().is_some_and(|s| s != "Never"),
                "reclaimWithinCohort" => cohort && v.as_str().is_some_and(|s| s != "Never"),
                "borrowWithinCohort" => {
                    cohort
                        && v.get("policy")
                            .and_then(|n| n.as_str())
                            .is_some_and(|s| s != "Never")
                }
                _ => false,
            })
        })
    }
}

/// Kueue LocalQueue.
#[derive(Debug)]
pub struct LocalQueue<'a> {
    pub obj: usize,
    pub name: &'a str,
    pub namespace: Option<&'a str>,
    pub cluster_queue: Option<Node<'a>>,
}

impl<'a> LocalQueue<'a> {
    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        if !obj.is("kueue.x-k8s.io", "LocalQueue") {
            return None;
        }
        Some(LocalQueue {
            obj: idx,
            name: obj.name?,
            namespace: obj.namespace,
            cluster_queue: obj.spec().and_then(|s| s.get("clusterQueue")),
        })
    }
}
