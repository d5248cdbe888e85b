//! Names prepared for "did you mean" searches, built once per index on first use: the rules that
//! look for a likely typo run chunk by chunk and in parallel, and a search structure built per
//! chunk costs the whole repository once per chunk.

use super::Index;
use crate::text::NearNames;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Objects of one kind (and group), by name.
type ByKind<'a> = HashMap<(String, Option<String>), Arc<NearNames<'a, usize>>>;

#[derive(Default)]
pub struct Names<'a> {
    flavors: OnceLock<NearNames<'a, usize>>,
    cluster_queues: OnceLock<NearNames<'a, usize>>,
    local_queues: OnceLock<NearNames<'a, usize>>,
    local_queues_by_ns: OnceLock<HashMap<Option<&'a str>, Vec<usize>>>,
    gpu_pools: OnceLock<(Vec<&'a str>, NearNames<'a, ()>)>,
    pools: OnceLock<(Vec<&'a str>, NearNames<'a, ()>)>,
    objects: Mutex<ByKind<'a>>,
}

impl<'a> Index<'a> {
    /// ResourceFlavors by name (items: indices into `flavors`).
    pub fn near_flavors(&self) -> &NearNames<'a, usize> {
        self.names.flavors.get_or_init(|| {
            NearNames::new(self.flavors.iter().enumerate().map(|(i, f)| (f.name, i)))
        })
    }

    /// ClusterQueues by name (items: indices into `cluster_queues`).
    pub fn near_cluster_queues(&self) -> &NearNames<'a, usize> {
        self.names.cluster_queues.get_or_init(|| {
            NearNames::new(
                self.cluster_queues
                    .iter()
                    .enumerate()
                    .map(|(i, q)| (q.name, i)),
            )
        })
    }

    /// LocalQueues of every namespace by name (items: indices into `local_queues`).
    pub fn near_local_queues(&self) -> &NearNames<'a, usize> {
        self.names.local_queues.get_or_init(|| {
            NearNames::new(
                self.local_queues
                    .iter()
                    .enumerate()
                    .map(|(i, q)| (q.name, i)),
            )
        })
    }

    /// Indices into `local_queues` by namespace, ascending.
    pub fn local_queues_by_namespace(&self) -> &HashMap<Option<&'a str>, Vec<usize>> {
        self.names.local_queues_by_ns.get_or_init(|| {
            let mut m: HashMap<Option<&'a str>, Vec<usize>> = HashMap::new();
            for (i, q) in self.local_queues.iter().enumerate() {
                m.entry(q.namespace).or_default().push(i);
            }
            m
        })
    }

    /// The names of the NodePools that may launch GPU instances, in pool order, and prepared.
    pub fn near_gpu_pools(&self) -> &(Vec<&'a str>, NearNames<'a, ()>) {
        self.names.gpu_pools.get_or_init(|| {
            // A name twice (one pool per cluster flavour, side by side) is listed once.
            let mut seen = std::collections::HashSet::new();
            let names: Vec<&'a str> = self
                .nodepools
                .iter()
                .filter(|np| crate::sched::gpu_capability(np) != crate::sched::GpuCapability::None)
                .map(|np| np.name)
                .filter(|n| seen.insert(*n))
                .collect();
            let near = NearNames::new(names.iter().map(|n| (*n, ())));
            (names, near)
        })
    }

    /// The names of every NodePool, in pool order, and prepared.
    pub fn near_pools(&self) -> &(Vec<&'a str>, NearNames<'a, ()>) {
        self.names.pools.get_or_init(|| {
            let names: Vec<&'a str> = self.nodepools.iter().map(|np| np.name).collect();
            let near = NearNames::new(names.iter().map(|n| (*n, ())));
            (names, near)
        })
    }

    /// Objects of `kind` (and `group`, when given) by name (items: indices into `objects`).
    pub fn near_objects(&self, kind: &str, group: Option<&str>) -> Arc<NearNames<'a, usize>> {
        let key = (kind.to_string(), group.map(str::to_string));
        // A poisoned lock only means another rule panicked; the map is still whole.
        let mut m = self.names.objects.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(key)
            .or_insert_with(|| {
                let of_kind = self.by_kind.get(kind).into_iter().flatten();
                Arc::new(NearNames::new(of_kind.filter_map(|&i| {
                    let o = &self.objects[i];
                    group.is_none_or(|g| o.group == g).then_some((o.name?, i))
                })))
            })
            .clone()
    }
}
