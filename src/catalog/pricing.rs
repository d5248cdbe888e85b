//! Prices and per-node amounts: what the catalog says an instance costs and brings, with the
//! user's overrides (`cost:` in the config).

use super::{Instance, is_gpu_resource};
use std::collections::BTreeMap;

/// Typical AWS GPU spot savings; an assumption, configurable with `cost.spot-discount`.
pub const DEFAULT_SPOT_DISCOUNT: f64 = 0.65;

/// The `cost:` config key.
#[derive(Clone, Debug, PartialEq)]
pub struct CostSettings {
    /// Fraction of the on-demand price spot saves (0 to 1).
    pub spot_discount: f64,
    /// $/h per instance type or per family, over the catalog's.
    pub prices: BTreeMap<String, f64>,
    /// Budget for the sum of the pools' worst cases, $/h.
    pub budget_total: Option<f64>,
    /// Budget per NodePool name, $/h.
    pub budget_pools: BTreeMap<String, f64>,
}

impl Default for CostSettings {
    fn default() -> Self {
        CostSettings {
            spot_discount: DEFAULT_SPOT_DISCOUNT,
            prices: BTreeMap::new(),
            budget_total: None,
            budget_pools: BTreeMap::new(),
        }
    }
}

impl CostSettings {
    /// On-demand $/h of an instance: an override by type, then by family, then the catalog.
    pub fn price(&self, i: &Instance) -> Option<f64> {
        self.prices
            .get(i.instance_type)
            .or_else(|| self.prices.get(i.family))
            .copied()
            .or(i.price_usd_hour)
    }
    pub fn spot(&self, on_demand: f64) -> f64 {
        on_demand * (1.0 - self.spot_discount)
    }
}

/// How much of a limited resource one node of the instance brings, in milli-units; `None` when
/// the catalog cannot tell (`pods`, `ephemeral-storage`), so that limit is left out.
pub fn per_node(resource: &str, i: &Instance) -> Option<i128> {
    match resource {
        "nvidia.com/gpu" if i.gpu_manufacturer == "nvidia" => Some(i128::from(i.gpu_count) * 1000),
        "cpu" => Some(i128::from(i.vcpu) * 1000),
        "memory" => Some(i128::from(i.memory_mib) * (1 << 20) * 1000),
        "nodes" => Some(1000),
        // Accelerators the instance does not carry (MIG slices, AMD, Neuron): a node adds none,
        // so that limit never stops Karpenter.
        r if is_gpu_resource(r) => Some(0),
        _ => None,
    }
}

/// The most nodes of `i` the limits (resource, milli-units) allow: the minimum over limited
/// resources the instance has of floor(limit / per-node amount). `None`: nothing bounds them.
pub fn max_nodes(limits: &[(String, i128)], i: &Instance) -> Option<u64> {
    limits
        .iter()
        .filter_map(|(r, lim)| {
            let n = per_node(r, i).filter(|n| *n > 0)?;
            Some(u64::try_from(lim.max(&0) / n).unwrap_or(u64::MAX))
        })
        .min()
}
