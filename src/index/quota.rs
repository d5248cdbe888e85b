//! Kueue quota arithmetic: the most a ClusterQueue may ever admit of a resource on one flavor
//! (nominal quota, plus what it may borrow from its cohort), what a workload asks for at once,
//! and how much of a resource the NodePools behind a flavor may launch.
//!
//! Every figure is `None` when the files cannot tell (a placeholder, an unknown pod count, a
//! cohort with a Cohort object above it, a pool without limits): callers stay quiet then.

use super::Index;
use crate::model::constraints::PodConstraints;
use crate::model::kinds::Family;
use crate::model::{ClusterQueue, FlavorQuotas, NodePool, Quantity, ResourceQuota};
use crate::sched::{GpuCapability, bounded_instances};
use crate::sched::{gpu_resources, pod_request, template_pods};
use crate::yaml::Node;
use foldhash::{HashMap, HashMapExt, HashSet};

/// Milli-units of a written quantity, when it is one.
fn milli(q: Option<&Quantity<'_>>) -> Option<i128> {
    q.and_then(|q| q.value).map(|m| m.0)
}

/// What one member of a cohort may lend of a resource: its nominal quota, capped by its
/// `lendingLimit` (`None`: unknown).
fn lendable(r: &ResourceQuota<'_>) -> Option<i128> {
    let nominal = milli(r.nominal.as_ref())?;
    match &r.lending_limit {
        None => Some(nominal),
        Some(l) => Some(nominal.min(l.value?.0)),
    }
}

/// Cohort sums, computed once: every lookup afterwards is a hash probe, whatever the number of
/// workloads asking.
pub struct QuotaIndex<'a> {
    /// (cohort, flavor, resource) → what its ClusterQueues may lend in all (`None`: a member's
    /// quota is not a quantity).
    lendable: HashMap<(&'a str, &'a str, &'a str), Option<i128>>,
    /// Cohorts with a Cohort object: it may hold quota of its own or have a parent, so what a
    /// member may borrow is not judged.
    open_cohorts: HashSet<&'a str>,
}

/// The most a ClusterQueue may admit of one resource on one flavor.
#[derive(Debug, Clone)]
pub struct FlavorCap<'a> {
    pub flavor: &'a str,
    pub resource: &'a str,
    pub quota: &'a ResourceQuota<'a>,
    /// The cohort the queue borrows from (`None`: no cohort, so no borrowing).
    pub cohort: Option<&'a str>,
    /// Without a `borrowingLimit`, what the whole cohort holds of the resource on the flavor
    /// (the queue's nominal quota plus what the others may lend).
    pub cohort_total: Option<i128>,
    /// The most it may ever admit, in milli-units (`None`: unknown or unbounded).
    pub max: Option<i128>,
}

impl<'a> QuotaIndex<'a> {
    pub fn build(ix: &Index<'a>) -> Self {
        let mut lendable: HashMap<(&'a str, &'a str, &'a str), Option<i128>> = HashMap::new();
        for cq in &ix.cluster_queues {
            let Some(cohort) = cq.cohort_name() else {
                continue;
            };
            for f in &cq.quotas {
                for r in &f.resources {
                    let sum = lendable
                        .entry((cohort, f.flavor, r.name))
                        .or_insert(Some(0));
                    *sum = sum.zip(self::lendable(r)).map(|(a, b)| a + b);
                }
            }
        }
        let open_cohorts = ix
            .objects
            .iter()
            .filter(|o| o.is("kueue.x-k8s.io", "Cohort"))
            .filter_map(|o| o.name)
            .collect();
        QuotaIndex {
            lendable,
            open_cohorts,
        }
    }

    /// What ClusterQueue `cq` may admit of `resource` on `flavor` (`None`: the queue gives the
    /// flavor no quota for it).
    pub fn cap<'q>(
        &'q self,
        cq: &'q ClusterQueue<'q>,
        flavor: &str,
        resource: &str,
    ) -> Option<FlavorCap<'q>>
    where
        'a: 'q,
    {
        let lendable_sums: &HashMap<(&'q str, &'q str, &'q str), Option<i128>> = &self.lendable;
        let fq: &'q FlavorQuotas<'q> = cq.flavor_quotas(flavor)?;
        let flavor = fq.flavor;
        let quota = fq.resource(resource)?;
        let nominal = milli(quota.nominal.as_ref());
        let cohort = cq.cohort_name();
        let mut cohort_total = None;
        let max = match cohort {
            // Kueue rejects a borrowingLimit without a cohort: nothing to borrow from.
            None => nominal,
            Some(c) => match &quota.borrowing_limit {
                Some(b) => nominal.zip(b.value).map(|(n, b)| n + b.0),
                None if self.open_cohorts.contains(c) => None,
                None => {
                    cohort_total = lendable_sums
                        .get(&(c, flavor, quota.name))
                        .copied()
                        .flatten()
                        .zip(lendable(quota))
                        .zip(nominal)
                        .map(|((all, own_lent), n)| all - own_lent + n);
                    cohort_total
                }
            },
        };
        Some(FlavorCap {
            flavor,
            resource: quota.name,
            quota,
            cohort,
            cohort_total,
            max,
        })
    }
}

/// One pod set of a workload asking for a resource.
#[derive(Debug, Clone)]
pub struct PodSetRequest {
    /// Index into `Index::templates`.
    pub template: usize,
    pub pods: u64,
    pub per_pod: u64,
}

impl PodSetRequest {
    pub fn total(&self) -> u64 {
        self.pods.saturating_mul(self.per_pod)
    }
}

/// What one Kueue workload asks for of one resource, over all its pod sets.
#[derive(Debug, Clone)]
pub struct WorkloadRequest<'a> {
    pub resource: &'a str,
    pub podsets: Vec<PodSetRequest>,
}

impl WorkloadRequest<'_> {
    pub fn total(&self) -> u64 {
        self.podsets
            .iter()
            .fold(0u64, |a, p| a.saturating_add(p.total()))
    }
    /// `Worker 4 × 8 + Master 1 × 8`, by template role (the last path segment that names one).
    pub fn breakdown(&self, ix: &Index<'_>) -> String {
        self.podsets
            .iter()
            .map(|p| {
                let role = role_of(&ix.templates[p.template].path);
                let pods = if p.pods == 1 { "pod" } else { "pods" };
                format!("{role}{} {pods} × {}", p.pods, p.per_pod)
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// A short name for a template in messages: `Worker `, `[workers] `, or nothing for a lone one.
fn role_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    if let Some(i) = parts.iter().position(|p| p.ends_with("ReplicaSpecs"))
        && let Some(role) = parts.get(i + 1)
    {
        return format!("{role} ");
    }
    match path.find('[').zip(path.find(']')) {
        Some((a, b)) if a < b => format!("{} ", &path[a..=b]),
        _ if path.contains("headGroupSpec") => "head ".to_string(),
        _ => String::new(),
    }
}

/// What the Kueue workload of object `oi` asks for of each GPU resource at once: every pod set
/// (pod template × its pod count). `None` when that cannot be known: a pod count that is a
/// placeholder, partial admission (`kueue.x-k8s.io/job-min-parallelism`), or a kind Kueue does
/// not admit as one workload of fixed size.
pub fn workload_requests<'a>(ix: &Index<'a>, oi: usize) -> Option<Vec<WorkloadRequest<'a>>> {
    let obj = ix.objects.get(oi)?;
    if obj
        .annotation("kueue.x-k8s.io/job-min-parallelism")
        .is_some()
    {
        return None;
    }
    let first = ix.template_range(oi).start;
    let templates = ix.templates_of(oi);
    let mut out: Vec<WorkloadRequest<'a>> = Vec::new();
    for (k, t) in templates.iter().enumerate() {
        let resources = gpu_resources(t);
        let dra = dra_requests(ix, t);
        if resources.is_empty() && dra.is_empty() {
            continue;
        }
        let family = crate::model::kinds::family(obj);
        let pods = match family {
            // Kueue admits each pod of a Deployment as a workload of its own.
            _ if obj.workload.is_some_and(|k| k.kueue_per_pod) => 1,
            // One workload per group of a LeaderWorkerSet.
            Some(Family::LeaderWorkerSet) => {
                let groups = obj
                    .spec()
                    .and_then(|s| s.get("replicas"))
                    .and_then(Node::as_str)
                    .map_or(Some(1), |s| s.parse::<u64>().ok())?;
                template_pods(obj, t)? / groups.max(1)
            }
            Some(Family::DaemonSet) => return None,
            _ => template_pods(obj, t)?,
        };
        let extended = resources.into_iter().map(|r| (r, pod_request(t, r)));
        for (r, per_pod) in extended.chain(dra) {
            if per_pod == 0 || pods == 0 {
                continue;
            }
            let set = PodSetRequest {
                template: first + k,
                pods,
                per_pod,
            };
            match out.iter_mut().find(|w| w.resource == r) {
                Some(w) => w.podsets.push(set),
                None => out.push(WorkloadRequest {
                    resource: r,
                    podsets: vec![set],
                }),
            }
        }
    }
    Some(out)
}

/// What Kueue charges one pod of `t` for its DRA claims: the devices of its ResourceClaimTemplates
/// per resource `deviceClassMappings` names, when a ClusterQueue covers that name (the names are
/// the queues', so they live as long as the index).
fn dra_requests<'a>(ix: &Index<'a>, t: &crate::model::PodTemplate<'_>) -> Vec<(&'a str, u64)> {
    let mut out: Vec<(&'a str, u64)> = Vec::new();
    for g in t.dra_gpus().iter().filter(|g| g.per_pod) {
        let (Some(k), Some(n)) = (g.kueue_resource.as_deref(), g.count) else {
            continue;
        };
        let Some(name) = ix
            .cluster_queues
            .iter()
            .flat_map(|q| q.groups.iter().flat_map(|g| g.covered.iter()))
            .map(|(n, _)| *n)
            .find(|n| *n == k)
        else {
            continue;
        };
        match out.iter_mut().find(|(r, _)| *r == name) {
            Some((_, total)) => *total += n,
            None => out.push((name, n)),
        }
    }
    out
}

/// The NodePools a ResourceFlavor's `nodeLabels` select (every pool for a flavor without labels),
/// in pool order.
pub fn flavor_pools(ix: &Index<'_>, fi: usize) -> Vec<usize> {
    let Some(f) = ix.flavors.get(fi) else {
        return Vec::new();
    };
    let Some(fobj) = ix.objects.get(f.obj) else {
        return Vec::new();
    };
    let pod = PodConstraints::from_flavor(f, fobj);
    ix.pools
        .label_fits(&pod, &ix.nodepools)
        .into_iter()
        .map(|p| p as usize)
        .collect()
}

/// The pools behind a flavor that may launch nodes with `resource` (for a GPU resource, pools
/// that may launch GPU instances).
pub fn flavor_pools_for(ix: &Index<'_>, fi: usize, resource: &str) -> Vec<usize> {
    flavor_pools(ix, fi)
        .into_iter()
        .filter(|&p| {
            !crate::model::is_gpu_resource(resource)
                || ix.pools.capability[p] != GpuCapability::None
        })
        .collect()
}

/// The most of a resource a NodePool may launch, and the node that bounds it.
#[derive(Debug, Clone, Copy)]
pub struct PoolCap<'a> {
    /// Milli-units.
    pub max: i128,
    /// The limit (or `replicas`) that decides it.
    pub node: Node<'a>,
    /// Whether the figure comes from another limit (CPU, memory, nodes) through the catalog.
    pub derived: bool,
    /// How many of the resource one GPU is advertised as, when the pool's GPUs are shared (MIG
    /// instances, time-slicing or MPS replicas): `max` is then GPUs times this.
    pub per_gpu: Option<u32>,
}

/// The most of `resource` pool `pool` may launch: its own limit on the resource, or for
/// `nvidia.com/gpu` what its CPU, memory or node limits allow on the instance types it is limited
/// to (the best GPUs-per-unit ratio among them, so mixing instance types cannot exceed it).
/// `None`: nothing the files say bounds it.
pub fn pool_cap<'a>(pool: &NodePool<'a>, resource: &str) -> Option<PoolCap<'a>> {
    let limits = pool.limits_milli()?;
    let node_of = |key: &str| -> Option<Node<'a>> {
        if key == "nodes"
            && !pool.legacy_provisioner
            && let Some(r) = pool.spec.get("replicas")
        {
            return Some(r);
        }
        pool.limits?.get(key)
    };
    let mut best: Option<PoolCap<'a>> = None;
    let mut consider = |max: i128, node: Option<Node<'a>>, derived: bool| {
        if let Some(node) = node
            && best.is_none_or(|b| max < b.max)
        {
            best = Some(PoolCap {
                max,
                node,
                derived,
                per_gpu: None,
            });
        }
    };
    if let Some((_, v)) = limits.iter().find(|(k, _)| k == resource) {
        consider(*v, node_of(resource), false);
    }
    if resource == "nvidia.com/gpu"
        && let Some(instances) = bounded_instances(pool)
    {
        let gpu: Vec<_> = instances
            .into_iter()
            .filter(|i| i.gpu_manufacturer == "nvidia" && i.gpu_count > 0)
            .collect();
        if !gpu.is_empty() {
            for (key, lim) in limits.iter().filter(|(k, _)| k != resource) {
                // GPUs the limit allows on each instance type; the best ratio bounds any mix.
                let per: Option<Vec<i128>> = gpu
                    .iter()
                    .map(|i| {
                        let n = crate::catalog::pricing::per_node(key, i).filter(|n| *n > 0)?;
                        Some((*lim).max(0) * i128::from(i.gpu_count) / n * 1000)
                    })
                    .collect();
                if let Some(most) = per.and_then(|v| v.into_iter().max()) {
                    consider(most, node_of(key), true);
                }
            }
        }
    }
    best
}

/// Displays milli-units as a quantity: `8`, `1.5`, `500m`.
pub fn show_quantity(m: i128) -> String {
    if m % 1000 == 0 {
        (m / 1000).to_string()
    } else if m.abs() < 1000 {
        format!("{m}m")
    } else {
        let s = format!("{:.3}", m as f64 / 1000.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Whether Kueue may ever admit a workload's request of one resource through its ClusterQueue.
#[derive(Debug, Clone)]
pub struct Admission<'q> {
    pub request: WorkloadRequest<'q>,
    /// The flavors of the resource group covering the resource that some pod set may get.
    pub caps: Vec<FlavorCap<'q>>,
    /// The most the queue may admit over those flavors, in milli-units (`None`: unknown).
    pub max: Option<i128>,
    /// `Some(false)`: never admitted; `None`: the files cannot tell.
    pub fits: Option<bool>,
}

/// The ClusterQueue the workload of object `oi` goes through, and for each GPU resource it asks
/// for whether that queue may ever admit it. Pod sets may get different flavors (Kueue assigns
/// one per pod set), so a request is refused only when some pod set exceeds every flavor it may
/// get, or the whole exceeds those flavors together.
pub fn admission<'q>(
    ix: &'q Index<'_>,
    quotas: &'q QuotaIndex<'_>,
    oi: usize,
) -> Option<(usize, Vec<Admission<'q>>)> {
    let range = ix.template_range(oi);
    if range.is_empty() {
        return None;
    }
    let cqi = ix
        .queues
        .get(range.start)
        .copied()
        .flatten()
        .and_then(|q| q.cluster_queue)?;
    let cq: &'q ClusterQueue<'q> = ix.cluster_queues.get(cqi)?;
    let mut out = Vec::new();
    for request in workload_requests(ix, oi)? {
        let Some(gi) = cq
            .groups
            .iter()
            .position(|g| g.covered.iter().any(|(n, _)| *n == request.resource))
        else {
            continue;
        };
        let mut caps: Vec<FlavorCap<'q>> = Vec::new();
        let mut fits = Some(true);
        for set in &request.podsets {
            let mut best: Option<i128> = Some(-1);
            for fq in cq.quotas.iter().filter(|f| f.group == gi) {
                let assignable = ix
                    .flavor(fq.flavor)
                    .is_some_and(|fi| super::flavor_reject(ix, set.template, fi).is_none());
                if !assignable {
                    continue;
                }
                let cap = quotas.cap(cq, fq.flavor, request.resource);
                let max = cap.as_ref().and_then(|c| c.max);
                best = best.zip(max).map(|(a, b)| a.max(b));
                if let Some(c) = cap
                    && !caps.iter().any(|k| k.flavor == c.flavor)
                {
                    caps.push(c);
                } else if max.is_none() {
                    best = None;
                }
            }
            match best {
                // No flavor fits the pod set at all: other rules say why.
                Some(-1) | None => fits = None,
                Some(b) if i128::from(set.total()) * 1000 > b => {
                    fits = fits.map(|_| false);
                }
                Some(_) => {}
            }
        }
        let max = caps.iter().try_fold(0i128, |a, c| c.max.map(|m| a + m));
        if let (Some(m), Some(true)) = (max, fits)
            && i128::from(request.total()) * 1000 > m
        {
            fits = Some(false);
        }
        if caps.is_empty() {
            fits = None;
        }
        out.push(Admission {
            request,
            caps,
            max,
            fits,
        });
    }
    Some((cqi, out))
}

impl FlavorCap<'_> {
    /// `nominal 16 + borrowing limit 8 (cohort `gpu`)`, for messages.
    pub fn describe(&self) -> String {
        let q = |x: Option<&Quantity<'_>>| {
            x.map_or("?".to_string(), |q| match q.value {
                Some(m) => show_quantity(m.0),
                None => q.node.as_str().unwrap_or("?").to_string(),
            })
        };
        let nominal = format!("nominal {}", q(self.quota.nominal.as_ref()));
        match (self.cohort, &self.quota.borrowing_limit) {
            (None, _) => nominal,
            (Some(c), Some(b)) => {
                format!("{nominal} + borrowing limit {} (cohort `{c}`)", q(Some(b)))
            }
            (Some(c), None) => match self.cohort_total {
                Some(t) => format!(
                    "{nominal}; {} with what cohort `{c}` may lend",
                    show_quantity(t)
                ),
                None => format!("{nominal}, unlimited borrowing in cohort `{c}`"),
            },
        }
    }

    /// The node that sets the figure: the `borrowingLimit` when there is one, else the
    /// `nominalQuota`, else the resource's name.
    pub fn node(&self) -> Node<'_> {
        let bl = self.quota.borrowing_limit.filter(|_| self.cohort.is_some());
        bl.or(self.quota.nominal)
            .map_or(self.quota.name_node, |q| q.node)
    }
}

/// GPU pods the workload of object `oi` runs at once, over all its GPU templates (a template
/// whose count is unknown counts once).
pub fn workload_gpu_pods(ix: &Index<'_>, oi: usize) -> u64 {
    let Some(obj) = ix.objects.get(oi) else {
        return 0;
    };
    ix.templates_of(oi)
        .iter()
        .filter(|t| t.requests_gpu())
        .map(|t| crate::sched::template_pods(obj, t).unwrap_or(1))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::source::SourceFile;

    fn pool_gpus(reqs: &str, limits: &str) -> Option<i128> {
        let y = format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: p}}\nspec:\n  template:\n    spec:\n      requirements:\n        - {reqs}\n  limits: {limits}\n"
        );
        let p = crate::yaml::parse(&y, crate::yaml::Budget::default());
        let o = crate::model::Object::from_node(0, p.docs[0].root()).unwrap();
        let pool = NodePool::from_object(0, &o).unwrap();
        pool_cap(&pool, "nvidia.com/gpu").map(|c| c.max / 1000)
    }

    #[test]
    fn pool_gpus_from_limits() {
        let p5 = "{key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}";
        assert_eq!(pool_gpus(p5, "{cpu: \"384\"}"), Some(16));
        assert_eq!(pool_gpus(p5, "{cpu: \"384\", nvidia.com/gpu: 8}"), Some(8));
        assert_eq!(pool_gpus(p5, "{memory: 4096Gi}"), Some(16));
        assert_eq!(pool_gpus(p5, "{nodes: \"3\"}"), Some(24));
        // p5.4xlarge has the better ratio (1 GPU per 16 vCPUs): it bounds any mix.
        let family = "{key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}";
        assert_eq!(pool_gpus(family, "{cpu: \"384\"}"), Some(24));
        // An open instance set: the CPU limit says nothing about GPUs.
        let open = "{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"0\"]}";
        assert_eq!(pool_gpus(open, "{cpu: \"384\"}"), None);
        assert_eq!(pool_gpus(open, "{nvidia.com/gpu: 4}"), Some(4));
    }

    const QUEUES: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  cohortName: c
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec:
  cohortName: c
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 16, lendingLimit: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: d}
spec:
  cohort: c
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 2, borrowingLimit: 1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: alone}
spec:
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]
"#;

    #[test]
    fn what_a_queue_may_admit() {
        let files = vec![SourceFile::from_text("q.yaml".into(), QUEUES.into())];
        let settings = Settings::default();
        let ix = Index::build(&files, &settings);
        let q = QuotaIndex::build(&ix);
        let max = |name: &str| {
            let cq = &ix.cluster_queues[ix.cluster_queue(name).unwrap()];
            q.cap(cq, "f", "nvidia.com/gpu")
                .unwrap()
                .max
                .map(|m| m / 1000)
        };
        // Its 8, plus 4 from `b` (its lending limit) and 2 from `d`.
        assert_eq!(max("a"), Some(14));
        // Its 16, plus 8 from `a` and 2 from `d`.
        assert_eq!(max("b"), Some(26));
        // A borrowing limit bounds it (v1beta1 `cohort`).
        assert_eq!(max("d"), Some(3));
        assert_eq!(max("alone"), Some(4));
    }
}
