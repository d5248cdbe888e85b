//! Pools Kueue caps together: the GPU pools one ResourceFlavor alone selects (a spot-first
//! class's spot pool and its on-demand fallback) never hold more GPUs than the ClusterQueues'
//! nominal quotas on that flavor add up to, however high each pool's own limit. Each such group
//! is counted once: its quota filled at the dearest $/GPU among its pools' worst cases, each
//! pool taking at most its own worst-case nodes.

use super::{PoolCost, QueueCost, QuotaCap};
use std::collections::BTreeMap;

/// A flavor's pools (indices into the pool list) and the GPUs its quotas admit at most.
struct Group {
    flavor: String,
    pools: Vec<usize>,
    gpus: f64,
}

/// Sets `counted` (and `capped_by`) of the pools a flavor alone selects. `selected[i]`: the
/// flavors (with a GPU quota) whose `nodeLabels` select pool `i`.
pub(super) fn apply(pools: &mut [PoolCost], selected: &[Vec<String>], queues: &[QueueCost]) {
    let mut quota: BTreeMap<&str, f64> = BTreeMap::new();
    for f in queues.iter().flat_map(|q| &q.flavors) {
        *quota.entry(f.flavor.as_str()).or_default() += f.gpus;
    }
    for g in groups(selected, &quota) {
        // A pool without a figure keeps the group out: it is reported unbounded as it is.
        if g.pools.iter().any(|&p| pools[p].worst.is_none()) {
            continue;
        }
        fill(pools, &g);
    }
}

/// The flavors whose pools no other quota-bearing flavor selects, with their quota.
fn groups(selected: &[Vec<String>], quota: &BTreeMap<&str, f64>) -> Vec<Group> {
    let mut by_flavor: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, fs) in selected.iter().enumerate() {
        if let [only] = fs.as_slice() {
            by_flavor.entry(only.as_str()).or_default().push(i);
        }
    }
    by_flavor
        .into_iter()
        .filter(|(f, pools)| {
            // Every pool the flavor selects must be in the group: a shared one is not capped.
            let all = selected
                .iter()
                .filter(|fs| fs.iter().any(|x| x == f))
                .count();
            all == pools.len()
        })
        .filter_map(|(f, pools)| {
            Some(Group {
                flavor: f.to_string(),
                pools,
                gpus: *quota.get(f)?,
            })
        })
        .collect()
}

/// Spends the group's GPUs on its dearest pools first (a partial node is a whole node paid).
fn fill(pools: &mut [PoolCost], g: &Group) {
    let per_gpu = |p: &PoolCost| -> f64 {
        match (&p.worst, p.worst_usd()) {
            (Some(w), Some(usd)) if w.gpus > 0 => usd / w.gpus as f64,
            _ => 0.0,
        }
    };
    let mut order = g.pools.clone();
    order.sort_by(|&a, &b| {
        per_gpu(&pools[b])
            .total_cmp(&per_gpu(&pools[a]))
            .then(pools[a].name.cmp(&pools[b].name))
    });
    let names: Vec<String> = pools.iter().map(|p| p.name.clone()).collect();
    let mut left = g.gpus;
    for p in order {
        let pool = &mut pools[p];
        let (Some(w), Some(usd)) = (pool.worst.clone(), pool.worst_usd()) else {
            continue;
        };
        let per_node = if w.nodes == 0 {
            0.0
        } else {
            w.gpus as f64 / w.nodes as f64
        };
        let nodes = if per_node > 0.0 {
            ((left / per_node).ceil() as u64).min(w.nodes)
        } else {
            0
        };
        left = (left - nodes as f64 * per_node).max(0.0);
        let node_usd = if w.nodes == 0 {
            0.0
        } else {
            usd / w.nodes as f64
        };
        pool.counted = Some(nodes as f64 * node_usd);
        // A lone pool whose quota is above its limit is not capped by it.
        if g.pools.len() > 1 || nodes < w.nodes {
            let with = g
                .pools
                .iter()
                .filter(|&&o| o != p)
                .map(|&o| names[o].clone())
                .collect();
            pools[p].capped_by = Some(QuotaCap {
                flavor: g.flavor.clone(),
                gpus: g.gpus,
                with,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::InstanceCost;

    fn pool(name: &str, spot_only: bool, nodes: u64, gpus: u64, node_price: f64) -> PoolCost {
        let on_demand = nodes as f64 * node_price;
        PoolCost {
            name: name.into(),
            open_instance_set: false,
            spot_only,
            worst: Some(InstanceCost {
                instance_type: "x".into(),
                nodes,
                gpus,
                on_demand,
                spot: on_demand * 0.35,
            }),
            best: None,
            unbounded: None,
            counted: Some(if spot_only {
                on_demand * 0.35
            } else {
                on_demand
            }),
            capped_by: None,
        }
    }

    /// A spot pool and its on-demand fallback, 64 GPUs each, behind one flavor with 48 + 16:
    /// the 64 GPUs go to the dearer on-demand pool, the spot pool adds nothing.
    #[test]
    fn a_spot_first_class_counts_its_quota_once() {
        let mut pools = vec![
            pool("spot", true, 8, 64, 10.0),
            pool("od", false, 8, 64, 10.0),
        ];
        let selected = vec![vec!["f".to_string()], vec!["f".to_string()]];
        let queues = ["a", "b"].map(|q| QueueCost {
            name: q.into(),
            flavors: vec![crate::cost::FlavorCost {
                flavor: "f".into(),
                gpus: if q == "a" { 48.0 } else { 16.0 },
                pools: Vec::new(),
                best: None,
                worst: None,
            }],
            best: 0.0,
            worst: 0.0,
            worst_spot: 0.0,
        });
        apply(&mut pools, &selected, &queues);
        assert_eq!(pools[1].counted, Some(80.0));
        assert_eq!(pools[0].counted, Some(0.0));
        let cap = pools[0].capped_by.as_ref().unwrap();
        assert_eq!((cap.flavor.as_str(), cap.gpus), ("f", 64.0));
        assert_eq!(cap.with, ["od"]);
    }

    /// A pool another flavor also selects is shared: no cap applies to either flavor's pools.
    #[test]
    fn a_shared_pool_is_not_capped() {
        let selected = vec![
            vec!["f".to_string()],
            vec!["f".to_string(), "g".to_string()],
        ];
        let quota = BTreeMap::from([("f", 8.0), ("g", 8.0)]);
        assert!(groups(&selected, &quota).is_empty());
    }
}
