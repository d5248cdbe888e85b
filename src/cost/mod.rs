//! Worst-case hourly cost of GPU capacity: NodePools at their `spec.limits`, ClusterQueues at
//! their nominal GPU quota, teams (namespaces) and the total. Pure functions over the index and
//! the settings, shared by `gpuops cost` and the `nodepool-cost-exceeds-budget` rule.
//!
//! Prices are the catalog's on-demand us-east-1 prices unless `cost.prices` overrides them (per
//! instance type, then per family); spot is on-demand × (1 − `cost.spot-discount`).

use crate::catalog::{self, Instance};
use crate::index::Index;
use crate::model::NodePool;
use crate::sched::{self, GpuCapability};
use serde::Serialize;
use std::collections::BTreeMap;

pub use crate::catalog::pricing::{CostSettings, DEFAULT_SPOT_DISCOUNT, max_nodes, per_node};

mod caps;
mod slices;

pub use slices::SliceCost;

/// One instance type at a pool's limits.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct InstanceCost {
    pub instance_type: String,
    pub nodes: u64,
    /// GPUs of those nodes together.
    pub gpus: u64,
    pub on_demand: f64,
    pub spot: f64,
}

/// A NodePool at its limits.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PoolCost {
    pub name: String,
    /// The pool names no bounded instance set: every catalog instance its requirements allow.
    pub open_instance_set: bool,
    /// Only spot capacity: the worst case is priced at spot.
    pub spot_only: bool,
    /// The most expensive allowed instance type at the limit.
    pub worst: Option<InstanceCost>,
    /// The cheapest allowed instance type at the limit.
    pub best: Option<InstanceCost>,
    /// Why the pool has no figure (no `spec.limits`, no limit that bounds nodes, no price).
    pub unbounded: Option<String>,
    /// What the pool adds to the total in $/h, at what it pays (spot for a spot-only pool): its
    /// worst case, or its share of the quota of the flavor that caps it.
    pub counted: Option<f64>,
    /// The quota that caps this pool (with the others its flavor alone selects), when it shares
    /// it or the quota is below the pool's own limit.
    pub capped_by: Option<QuotaCap>,
}

/// A flavor's ClusterQueue quotas: Kueue admits no more GPUs on its pools together.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QuotaCap {
    pub flavor: String,
    /// The `nominalQuota`s of `nvidia.com/gpu` on the flavor, added up.
    pub gpus: f64,
    /// The other pools under the same cap.
    pub with: Vec<String>,
}

impl PoolCost {
    /// The pool's worst case in $/h at the price it pays (spot for a spot-only pool).
    pub fn worst_usd(&self) -> Option<f64> {
        self.worst
            .as_ref()
            .map(|w| if self.spot_only { w.spot } else { w.on_demand })
    }
}

/// Instances a GPU pool may launch, and whether its set is open; `None` for a pool that rules
/// GPU instances out (the catalog holds only GPU instances, so it has no figure).
fn pool_instances(pool: &NodePool<'_>) -> Option<(Vec<&'static Instance>, bool)> {
    if sched::gpu_capability(pool) == GpuCapability::None {
        return None;
    }
    Some(match sched::bounded_instances(pool) {
        Some(b) => (b, false),
        None => (sched::allowed_instances(pool), true),
    })
}

/// The worst and best case of a GPU pool at its limits; `None` for a pool without GPUs.
pub fn pool_cost(pool: &NodePool<'_>, cs: &CostSettings) -> Option<PoolCost> {
    let (instances, open) = pool_instances(pool)?;
    let spot_only = pool.capacity_types() == ["spot"];
    let mut out = PoolCost {
        name: pool.name.to_string(),
        open_instance_set: open,
        spot_only,
        worst: None,
        best: None,
        unbounded: None,
        counted: None,
        capped_by: None,
    };
    let Some(limits) = pool.limits_milli() else {
        out.unbounded = Some("no `spec.limits`".into());
        return Some(out);
    };
    let no_instances = instances.is_empty();
    let mut figures = Vec::new();
    for i in instances {
        let Some(price) = cs.price(i) else { continue };
        let Some(nodes) = max_nodes(&limits, i) else {
            out.unbounded = Some(format!(
                "`spec.limits` caps nothing {} has (nvidia.com/gpu, cpu, memory, nodes)",
                i.instance_type
            ));
            return Some(out);
        };
        let on_demand = nodes as f64 * price;
        figures.push(InstanceCost {
            instance_type: i.instance_type.to_string(),
            nodes,
            gpus: nodes * u64::from(i.gpu_count),
            on_demand,
            spot: cs.spot(on_demand),
        });
    }
    // Ties go to the instance name so the report is stable.
    let key = |c: &InstanceCost| (c.on_demand, c.instance_type.clone());
    let cmp = |a: &&InstanceCost, b: &&InstanceCost| {
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(ka.1.cmp(&kb.1))
    };
    out.worst = figures.iter().max_by(cmp).cloned();
    out.best = figures.iter().min_by(cmp).cloned();
    out.counted = out.worst_usd();
    if out.worst.is_none() {
        out.unbounded = Some(if no_instances {
            // Such a pool launches nothing (nodepool-requirements-unsatisfiable says why).
            "no catalog instance type meets its requirements".into()
        } else {
            "no allowed instance type has a price".into()
        });
    }
    Some(out)
}

/// Every GPU pool of the index, in index order.
pub fn pools(ix: &Index<'_>, cs: &CostSettings) -> Vec<PoolCost> {
    pool_costs(ix, cs).into_iter().map(|(_, c)| c).collect()
}

/// Every GPU pool with its index in `ix.nodepools`; pools a flavor's quota caps together are
/// counted once ([`caps`]).
pub fn pool_costs(ix: &Index<'_>, cs: &CostSettings) -> Vec<(usize, PoolCost)> {
    let (index, mut costs): (Vec<usize>, Vec<PoolCost>) = ix
        .nodepools
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, pool_cost(p, cs)?)))
        .unzip();
    let queues = queues(ix, cs);
    let mut selected: Vec<Vec<String>> = vec![Vec::new(); costs.len()];
    let mut flavors: Vec<&str> = queues
        .iter()
        .flat_map(|q| &q.flavors)
        .map(|f| f.flavor.as_str())
        .collect();
    flavors.sort_unstable();
    flavors.dedup();
    for f in flavors {
        for p in flavor_pools(ix, f) {
            if let Some(at) = index.iter().position(|&i| i == p) {
                selected[at].push(f.to_string());
            }
        }
    }
    caps::apply(&mut costs, &selected, &queues);
    index.into_iter().zip(costs).collect()
}

/// The cheapest and dearest on-demand $/GPU-hour among a pool's allowed instances.
fn per_gpu(pool: &NodePool<'_>, cs: &CostSettings) -> Option<(f64, f64)> {
    let (instances, _) = pool_instances(pool)?;
    instances
        .iter()
        .filter(|i| i.gpu_count > 0)
        .filter_map(|i| Some(cs.price(i)? / f64::from(i.gpu_count)))
        .fold(None, |acc, p| match acc {
            None => Some((p, p)),
            Some((lo, hi)) => Some((p.min(lo), p.max(hi))),
        })
}

/// One flavor of a ClusterQueue at its nominal GPU quota.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlavorCost {
    pub flavor: String,
    pub gpus: f64,
    /// The GPU pools the flavor's `nodeLabels` select.
    pub pools: Vec<String>,
    /// On-demand $/h of the quota on the cheapest and the dearest $/GPU-hour instance.
    pub best: Option<f64>,
    pub worst: Option<f64>,
}

/// A ClusterQueue at its nominal `nvidia.com/gpu` quota.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueCost {
    pub name: String,
    pub flavors: Vec<FlavorCost>,
    pub best: f64,
    pub worst: f64,
    pub worst_spot: f64,
}

/// The GPU pools a flavor's `nodeLabels` select (every GPU pool for a flavor without labels).
fn flavor_pools(ix: &Index<'_>, flavor: &str) -> Vec<usize> {
    let Some(fi) = ix.flavor(flavor) else {
        return Vec::new();
    };
    crate::index::flavor_pools(ix, fi)
        .into_iter()
        .filter(|&p| sched::gpu_capability(&ix.nodepools[p]) != GpuCapability::None)
        .collect()
}

/// Every ClusterQueue with a nominal `nvidia.com/gpu` quota.
pub fn queues(ix: &Index<'_>, cs: &CostSettings) -> Vec<QueueCost> {
    let mut out = Vec::new();
    for cq in &ix.cluster_queues {
        let Some(spec) = ix.objects.get(cq.obj).and_then(|o| o.spec()) else {
            continue;
        };
        let mut flavors = Vec::new();
        let groups = spec
            .get("resourceGroups")
            .into_iter()
            .flat_map(|n| n.items());
        for f in groups.flat_map(|g| g.get("flavors").into_iter().flat_map(|n| n.items())) {
            let Some(name) = f.get("name").and_then(|n| n.as_str()) else {
                continue;
            };
            let quota = f
                .get("resources")
                .into_iter()
                .flat_map(|n| n.items())
                .filter(|r| r.get("name").and_then(|n| n.as_str()) == Some("nvidia.com/gpu"))
                .filter_map(|r| crate::quantity::parse(r.get("nominalQuota")?.as_str()?))
                .map(|m| m.0 as f64 / 1000.0)
                .next();
            let Some(gpus) = quota else { continue };
            let pools = flavor_pools(ix, name);
            let range = pools
                .iter()
                .filter_map(|&p| per_gpu(&ix.nodepools[p], cs))
                .fold(None, |acc: Option<(f64, f64)>, (lo, hi)| match acc {
                    None => Some((lo, hi)),
                    Some((a, b)) => Some((a.min(lo), b.max(hi))),
                });
            flavors.push(FlavorCost {
                flavor: name.to_string(),
                gpus,
                pools: pools
                    .iter()
                    .map(|&p| ix.nodepools[p].name.to_string())
                    .collect(),
                best: range.map(|(lo, _)| lo * gpus),
                worst: range.map(|(_, hi)| hi * gpus),
            });
        }
        if flavors.is_empty() {
            continue;
        }
        // A fold from 0.0: an empty f64 sum is -0.0.
        let best = flavors
            .iter()
            .filter_map(|f| f.best)
            .fold(0.0, |a, b| a + b);
        let worst: f64 = flavors
            .iter()
            .filter_map(|f| f.worst)
            .fold(0.0, |a, b| a + b);
        out.push(QueueCost {
            name: cq.name.to_string(),
            flavors,
            best,
            worst,
            worst_spot: cs.spot(worst),
        });
    }
    out
}

/// A team's queue in the team table.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TeamQueue {
    pub name: String,
    /// Other namespaces submit to it too: its cost is listed under each.
    pub shared: bool,
    /// The ClusterQueue exists with a GPU quota (a missing one costs nothing here).
    pub priced: bool,
}

/// A namespace and the ClusterQueues its LocalQueues point at.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TeamCost {
    pub namespace: String,
    pub queues: Vec<TeamQueue>,
    pub best: f64,
    pub worst: f64,
}

/// Teams by namespace, from their LocalQueues; a shared ClusterQueue is listed under each.
pub fn teams(ix: &Index<'_>, queues: &[QueueCost]) -> Vec<TeamCost> {
    let mut by_ns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for lq in &ix.local_queues {
        let Some(cq) = lq.cluster_queue.and_then(|n| n.as_str()) else {
            continue;
        };
        let ns = lq.namespace.unwrap_or("default").to_string();
        let list = by_ns.entry(ns).or_default();
        if !list.iter().any(|q| q == cq) {
            list.push(cq.to_string());
        }
    }
    let users = |cq: &str| by_ns.values().filter(|l| l.iter().any(|q| q == cq)).count();
    by_ns
        .iter()
        .map(|(ns, list)| {
            let costs: Vec<&QueueCost> = list
                .iter()
                .filter_map(|q| queues.iter().find(|c| &c.name == q))
                .collect();
            TeamCost {
                namespace: ns.clone(),
                queues: list
                    .iter()
                    .map(|q| TeamQueue {
                        name: q.clone(),
                        shared: users(q) > 1,
                        priced: queues.iter().any(|c| &c.name == q),
                    })
                    .collect(),
                best: costs.iter().fold(0.0, |a, c| a + c.best),
                worst: costs.iter().fold(0.0, |a, c| a + c.worst),
            }
        })
        .collect()
}

/// The sum of what the pools count: capacity that may run on demand at on-demand prices, and
/// spot-only capacity at spot prices, apart.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Total {
    /// Pools that may launch on-demand nodes (a spot-and-on-demand pool falls back to them).
    pub on_demand: f64,
    /// Spot-only pools, at spot prices.
    pub spot: f64,
    /// Both together: the worst case.
    pub worst: f64,
    /// Pools left out of the sum: they have no figure.
    pub unbounded_pools: Vec<String>,
}

pub fn total(pools: &[PoolCost]) -> Total {
    let mut t = Total {
        on_demand: 0.0,
        spot: 0.0,
        worst: 0.0,
        unbounded_pools: Vec::new(),
    };
    for p in pools {
        match p.counted {
            Some(usd) if p.spot_only => t.spot += usd,
            Some(usd) => t.on_demand += usd,
            None => t.unbounded_pools.push(p.name.clone()),
        }
    }
    t.worst = t.on_demand + t.spot;
    t
}

/// Everything `gpuops cost` reports.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    pub spot_discount: f64,
    pub nodepools: Vec<PoolCost>,
    pub cluster_queues: Vec<QueueCost>,
    pub teams: Vec<TeamCost>,
    pub total: Total,
    /// Pools that share their GPUs: what one slice costs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<SliceCost>,
}

pub fn report(ix: &Index<'_>, cs: &CostSettings) -> Report {
    let nodepools = pools(ix, cs);
    let cluster_queues = queues(ix, cs);
    Report {
        spot_discount: cs.spot_discount,
        teams: teams(ix, &cluster_queues),
        total: total(&nodepools),
        shared: slices::slices(ix, cs),
        nodepools,
        cluster_queues,
    }
}

fn usd(v: f64) -> String {
    format!("{v:.2}")
}

fn opt_usd(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), usd)
}

/// Left-aligned columns two spaces apart; cells past [`crate::text::MAX_SHOWN`] characters are
/// cut (names come from the input, and padding to a huge width panics).
fn table(rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<std::borrow::Cow<str>>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| crate::text::shorten(c, crate::text::MAX_SHOWN))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = Vec::new();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            if widths.len() <= i {
                widths.push(0);
            }
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:w$}", w = widths[i]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn instance_cell(c: &Option<InstanceCost>) -> String {
    c.as_ref().map_or_else(
        || "-".into(),
        |c| format!("{} × {}", c.nodes, c.instance_type),
    )
}

impl Report {
    /// Aligned tables for a terminal.
    pub fn human(&self) -> String {
        let mut out = String::from("NodePools at their limits ($/h)\n");
        let mut rows = vec![
            [
                "POOL",
                "WORST CASE",
                "ON-DEMAND",
                "SPOT",
                "BEST CASE",
                "ON-DEMAND",
                "COUNTED",
                "NOTE",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for p in &self.nodepools {
            let mut note = Vec::new();
            if let Some(u) = &p.unbounded {
                note.push(format!("unbounded: {u}"));
            }
            if p.open_instance_set {
                note.push("open instance set".to_string());
            }
            if p.spot_only {
                note.push("spot only".to_string());
            }
            if let Some(c) = &p.capped_by {
                let with = if c.with.is_empty() {
                    String::new()
                } else {
                    format!(" with {}", c.with.join(", "))
                };
                note.push(format!(
                    "capped{with} at flavor `{}`'s quota of {} GPUs",
                    c.flavor, c.gpus
                ));
            }
            rows.push(vec![
                p.name.clone(),
                instance_cell(&p.worst),
                opt_usd(p.worst.as_ref().map(|w| w.on_demand)),
                opt_usd(p.worst.as_ref().map(|w| w.spot)),
                instance_cell(&p.best),
                opt_usd(p.best.as_ref().map(|b| b.on_demand)),
                opt_usd(p.counted),
                note.join("; "),
            ]);
        }
        out.push_str(&table(&rows));
        if !self.cluster_queues.is_empty() {
            out.push_str("\nClusterQueues at their nominal GPU quota (on-demand $/h)\n");
            let mut rows = vec![
                ["QUEUE", "FLAVOR", "GPUS", "POOLS", "BEST", "WORST"]
                    .map(String::from)
                    .to_vec(),
            ];
            for q in &self.cluster_queues {
                for f in &q.flavors {
                    rows.push(vec![
                        q.name.clone(),
                        f.flavor.clone(),
                        format!("{}", f.gpus),
                        if f.pools.is_empty() {
                            "(no GPU NodePool)".into()
                        } else {
                            f.pools.join(",")
                        },
                        opt_usd(f.best),
                        opt_usd(f.worst),
                    ]);
                }
            }
            out.push_str(&table(&rows));
        }
        if !self.teams.is_empty() {
            out.push_str(
                "\nTeams (namespaces) by their LocalQueues' ClusterQueues (on-demand $/h)\n",
            );
            let mut rows = vec![
                ["NAMESPACE", "QUEUES", "BEST", "WORST"]
                    .map(String::from)
                    .to_vec(),
            ];
            for t in &self.teams {
                let queues: Vec<String> = t
                    .queues
                    .iter()
                    .map(|q| match (q.shared, q.priced) {
                        (_, false) => format!("{} (no GPU quota found)", q.name),
                        (true, true) => format!("{} (shared)", q.name),
                        (false, true) => q.name.clone(),
                    })
                    .collect();
                rows.push(vec![
                    t.namespace.clone(),
                    queues.join(", "),
                    usd(t.best),
                    usd(t.worst),
                ]);
            }
            out.push_str(&table(&rows));
        }
        out.push_str(&slices::human(&self.shared));
        out.push_str(&format!(
            "\nTotal worst case over the NodePools: {} $/h: {} $/h of capacity that may run on demand, {} $/h of spot-only capacity (spot discount {:.0}%)\n",
            usd(self.total.worst),
            usd(self.total.on_demand),
            usd(self.total.spot),
            self.spot_discount * 100.0
        ));
        if !self.total.unbounded_pools.is_empty() {
            out.push_str(&format!(
                "Not in the total (unbounded): {}\n",
                self.total.unbounded_pools.join(", ")
            ));
        }
        out
    }

    /// One row per figure: `kind,name,detail,best_on_demand,worst_on_demand,worst_spot,note`.
    pub fn csv(&self) -> String {
        fn field(s: &str) -> String {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        }
        let mut out =
            String::from("kind,name,detail,best_on_demand,worst_on_demand,worst_spot,note\n");
        let mut row = |cells: [String; 7]| {
            let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        };
        let num = |v: Option<f64>| v.map(usd).unwrap_or_default();
        for p in &self.nodepools {
            row([
                "nodepool".into(),
                p.name.clone(),
                p.worst
                    .as_ref()
                    .map(|w| format!("{} x {}", w.nodes, w.instance_type))
                    .unwrap_or_default(),
                num(p.best.as_ref().map(|b| b.on_demand)),
                num(p.worst.as_ref().map(|w| w.on_demand)),
                num(p.worst.as_ref().map(|w| w.spot)),
                match (&p.unbounded, &p.capped_by, p.counted) {
                    (Some(u), ..) => format!("unbounded: {u}"),
                    (None, Some(cap), Some(c)) => format!(
                        "counted {} under flavor {}'s quota of {} GPUs",
                        usd(c),
                        cap.flavor,
                        cap.gpus
                    ),
                    _ => String::new(),
                },
            ]);
        }
        for q in &self.cluster_queues {
            let gpus: f64 = q.flavors.iter().map(|f| f.gpus).sum();
            row([
                "clusterqueue".into(),
                q.name.clone(),
                format!("{gpus} GPUs"),
                usd(q.best),
                usd(q.worst),
                usd(q.worst_spot),
                {
                    let orphans: Vec<&str> = q
                        .flavors
                        .iter()
                        .filter(|f| f.pools.is_empty())
                        .map(|f| f.flavor.as_str())
                        .collect();
                    if orphans.is_empty() {
                        String::new()
                    } else {
                        format!("no GPU NodePool for flavor {}", orphans.join(" "))
                    }
                },
            ]);
        }
        for t in &self.teams {
            let shared: Vec<&str> = t
                .queues
                .iter()
                .filter(|q| q.shared)
                .map(|q| q.name.as_str())
                .collect();
            row([
                "team".into(),
                t.namespace.clone(),
                t.queues
                    .iter()
                    .map(|q| q.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                usd(t.best),
                usd(t.worst),
                String::new(),
                if shared.is_empty() {
                    String::new()
                } else {
                    format!("shared: {}", shared.join(" "))
                },
            ]);
        }
        row([
            "total".into(),
            "nodepools".into(),
            format!("worst {}", usd(self.total.worst)),
            String::new(),
            usd(self.total.on_demand),
            usd(self.total.spot),
            if self.total.unbounded_pools.is_empty() {
                String::new()
            } else {
                format!("unbounded: {}", self.total.unbounded_pools.join(" "))
            },
        ]);
        out
    }
}

/// The catalog price of an instance type (tests, docs).
pub fn catalog_price(instance_type: &str) -> Option<f64> {
    catalog::instances()
        .iter()
        .find(|i| i.instance_type == instance_type)
        .and_then(|i| i.price_usd_hour)
}

#[cfg(test)]
mod tests;
