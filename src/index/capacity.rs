//! Capacity types (`on-demand`, `spot`, `reserved`) a template may run on: the pools it lands on
//! and what its own selector (or its Kueue flavor) asks for.

use super::Index;
use crate::diag::Loc;
use crate::model::constraints::Req;
use crate::sched::is_placeholder;
use std::collections::HashMap;

pub const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
const ALL: [&str; 3] = ["on-demand", "spot", "reserved"];

/// Capacity types ANDed pod requirements allow, with the first requirement on the key
/// (`None`: unconstrained or a placeholder).
fn allowed_by(reqs: &[Req<'_>]) -> Option<(Vec<&'static str>, Loc)> {
    let mut allowed: Option<(Vec<&'static str>, Loc)> = None;
    for r in reqs.iter().filter(|r| r.key == CAPACITY_TYPE) {
        if r.values.iter().any(|v| is_placeholder(v)) {
            return None;
        }
        let these: Vec<&'static str> = match r.op {
            "In" => ALL
                .iter()
                .copied()
                .filter(|c| r.values.contains(c))
                .collect(),
            "NotIn" => ALL
                .iter()
                .copied()
                .filter(|c| !r.values.contains(c))
                .collect(),
            _ => continue,
        };
        allowed = Some(match allowed {
            Some((prev, loc)) => (
                prev.into_iter().filter(|c| these.contains(c)).collect(),
                loc,
            ),
            None => (these, r.loc),
        });
    }
    allowed
}

/// Where a GPU template may land and on which capacity types.
#[derive(Debug, Default)]
pub struct LandingCapacity {
    /// The pools it may land on ([`Index::landing_pools`]).
    pub pools: Vec<usize>,
    /// Capacity types the pod side allows, over every variant Kueue may run it as.
    pub pod_allowed: Vec<&'static str>,
    /// The pod's (or its flavor's) capacity-type selector, when it has one.
    pub pod_loc: Option<Loc>,
}

impl LandingCapacity {
    /// Capacity types pool `p` may give the template (a placeholder in the pool matches any).
    pub fn types_on<'a>(&self, ix: &Index<'a>, p: usize) -> Vec<&'a str> {
        ix.nodepools[p]
            .capacity_types()
            .into_iter()
            .filter(|c| is_placeholder(c) || self.pod_allowed.contains(c))
            .collect()
    }

    /// Whether some pool may give it capacity of a type `pred` accepts.
    pub fn any(&self, ix: &Index<'_>, pred: impl Fn(&str) -> bool) -> bool {
        self.pools.iter().any(|&p| {
            self.types_on(ix, p)
                .iter()
                .any(|c| is_placeholder(c) || pred(c))
        })
    }
}

/// The pools template `ti` may land on and the capacity types its own constraints allow there.
pub fn landing_capacity(ix: &Index<'_>, ti: usize) -> LandingCapacity {
    let pools = ix.landing_pools(ti);
    let mut pod_allowed: Vec<&'static str> = Vec::new();
    let mut pod_loc = None;
    let variants = super::assignable_variants(ix, ti);
    for v in &variants {
        match allowed_by(&v.constraints.base) {
            Some((types, loc)) => {
                pod_loc = pod_loc.or(Some(loc));
                pod_allowed.extend(types);
            }
            None => pod_allowed.extend(ALL),
        }
    }
    if variants.is_empty() {
        pod_allowed.extend(ALL);
    }
    pod_allowed.sort_unstable();
    pod_allowed.dedup();
    LandingCapacity {
        pools,
        pod_allowed,
        pod_loc,
    }
}

impl Index<'_> {
    /// The pools template `ti` may land on under any of its variants (labels and taints), in pool
    /// order; tolerations are checked once per taint class. A GPU template lands only where the
    /// pool may launch an instance with its accelerators (not a CPU pool, nor a Trainium pool for
    /// `nvidia.com/gpu`).
    pub fn landing_pools(&self, ti: usize) -> Vec<usize> {
        let offers = self.offers_for(ti);
        let mut out: Vec<usize> = Vec::new();
        for (v, &pl) in self
            .variant_placements
            .get(ti)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let constraints = &self.variants[ti][v].constraints;
            let mut tolerated: HashMap<u32, bool> = HashMap::new();
            for &p in &self.placements[pl].fits {
                let p = p as usize;
                let ok = *tolerated
                    .entry(self.pools.taint_class[p])
                    .or_insert_with(|| {
                        crate::sched::taints(constraints, &self.nodepools[p], self.settings.eks)
                            .untolerated
                            .is_empty()
                    });
                if ok && offers(p) {
                    out.push(p);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a pool may launch an instance with template `ti`'s accelerators, by pool index:
    /// no CPU pool for a GPU template, no Trainium pool for `nvidia.com/gpu`.
    pub fn offers_for(&self, ti: usize) -> impl Fn(usize) -> bool + '_ {
        let t = &self.templates[ti];
        let wanted: Vec<&str> = t
            .gpu_containers()
            .flat_map(|c| c.accelerators())
            .map(|(r, _)| r)
            .collect();
        let gpu = t.requests_gpu_resource();
        move |p: usize| {
            !(gpu && self.pools.capability[p] == crate::sched::GpuCapability::None)
                && wanted.iter().all(|r| self.pools.offers(p, r))
        }
    }
}
