//! The cluster's GPU sharing setup, read once from every object that speaks of it: the MIG
//! strategy, the device plugin's named configurations and which one a pool's nodes get, and the
//! MIG layout a pool's `nvidia.com/mig.config` label picks.
//!
//! Everything is `None` or unknown when the files do not say, or say two things: callers stay
//! quiet then.

use super::{Index, PoolCap, pool_cap};
use crate::catalog::mig::requested_profile;
use crate::catalog::mig_layouts::{Layout, default_layout};
use crate::diag::Loc;
use crate::model::NodePool;
use crate::model::nvidia::mig_parted::{self, LayoutDef};
use crate::model::nvidia::operator::declared;
use crate::model::nvidia::plugin_config::{self, PluginConfig, Replicated, Sharing};
use crate::model::nvidia::{MigStrategy, Setting};

/// The node label that picks a MIG layout of the MIG manager.
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";
/// The node label that picks a device plugin configuration.
pub const PLUGIN_CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";

#[derive(Debug, Default)]
pub struct GpuSetup {
    /// Strategies the GPU operator or the device plugin is started with (not its files').
    pub strategies: Vec<Setting<MigStrategy>>,
    /// A GPU operator is declared (a ClusterPolicy or `gpu-operator` chart values): it starts
    /// the plugin with a strategy of its own, so without one written the strategy is unknown.
    pub operator: bool,
    pub plugin_configs: Vec<Setting<PluginConfig>>,
    /// The configuration of nodes without a `nvidia.com/device-plugin.config` label.
    pub plugin_default: Option<String>,
    pub layouts: Vec<Setting<LayoutDef>>,
    /// A MIG manager default layout other than `all-disabled` is declared: nodes without a
    /// `nvidia.com/mig.config` label may have MIG on.
    pub mig_default_on: bool,
    /// Some pool labels its nodes with a MIG layout (`nvidia.com/mig.config`).
    pub pools_mig_labelled: bool,
    /// Some pool labels its nodes with a device plugin configuration.
    pub pools_plugin_labelled: bool,
}

/// The MIG layout a pool's nodes get.
#[derive(Debug, Clone, Copy)]
pub enum PoolLayout<'s> {
    /// One of the GPU operator's default layouts.
    Default(&'s str, Layout<'s>),
    /// One the files define.
    Custom(&'s Setting<LayoutDef>),
    /// A name neither the defaults nor the files define.
    Unknown(&'s str),
}

impl<'s> PoolLayout<'s> {
    pub fn name(&self) -> &'s str {
        match self {
            PoolLayout::Default(n, _) | PoolLayout::Unknown(n) => n,
            PoolLayout::Custom(s) => &s.value.name,
        }
    }
}

impl GpuSetup {
    pub fn build(ix: &Index<'_>) -> Self {
        let mut s = GpuSetup::default();
        let mut defaults: Vec<String> = Vec::new();
        for o in &ix.objects {
            s.layouts.extend(mig_parted::layouts(o));
            s.plugin_configs.extend(plugin_config::configs(o));
            let d = declared(o);
            s.operator |= d.operator;
            s.mig_default_on |= d.mig_default.is_some_and(|m| m != "all-disabled");
            s.strategies.extend(d.mig_strategy);
            s.plugin_configs.extend(d.plugin_configs);
            defaults.extend(d.plugin_default);
        }
        for &fid in &ix.file_ids {
            let f = &ix.files[fid];
            for d in &f.docs {
                s.plugin_configs
                    .extend(plugin_config::values_file(fid, &f.path, d.root()));
            }
        }
        defaults.sort();
        defaults.dedup();
        // Two defaults: the files disagree, nothing is known.
        if defaults.len() == 1 {
            s.plugin_default = defaults.pop();
        }
        let labelled = |key: &str| ix.nodepools.iter().any(|p| pool_label(p, key).is_some());
        s.pools_mig_labelled = labelled(MIG_CONFIG_LABEL);
        s.pools_plugin_labelled = labelled(PLUGIN_CONFIG_LABEL);
        s
    }

    /// Whether the GPUs of a pool without a `nvidia.com/mig.config` label are known to stay
    /// whole: the GPU operator's MIG manager is declared and leaves them at `all-disabled`.
    pub fn unlabelled_mig_off(&self) -> bool {
        self.operator && !self.mig_default_on
    }

    /// Whether the files say a MIG strategy anywhere (else no pool's is known).
    pub fn knows_a_strategy(&self) -> bool {
        !self.strategies.is_empty()
            || (!self.operator
                && self
                    .plugin_configs
                    .iter()
                    .any(|c| c.value.mig_strategy.is_some()))
    }

    /// Whether some device plugin configuration in the files shares whole GPUs under their own
    /// name: `nvidia.com/gpu` then counts replicas, not GPUs.
    pub fn shares_whole_gpus(&self) -> bool {
        self.plugin_configs.iter().any(|c| {
            c.value.sharing.as_ref().is_some_and(|s| {
                s.resources
                    .iter()
                    .any(|r| r.advertised == "nvidia.com/gpu" && r.replicas > 1)
            })
        })
    }

    /// Whether some device plugin configuration in the files shares GPUs.
    pub fn shares_gpus(&self) -> bool {
        self.plugin_configs
            .iter()
            .any(|c| c.value.sharing.is_some())
    }

    /// The MIG strategy the device plugin runs with on the pool's nodes, with where it is
    /// written: the one it is started with when every source agrees, else (no operator
    /// declared) its configuration's `flags.migStrategy`.
    pub fn strategy_for(&self, pool: &NodePool<'_>) -> Option<Setting<MigStrategy>> {
        if let Some(first) = self.strategies.first() {
            return self
                .strategies
                .iter()
                .all(|s| s.value == first.value)
                .then(|| first.clone());
        }
        if self.operator {
            return None;
        }
        let c = self.plugin_config_for(pool)?;
        Some(Setting {
            value: c.value.mig_strategy?,
            at: c.at,
            source: c.source.clone(),
        })
    }

    /// The device plugin configuration the pool's nodes get: the one their
    /// `nvidia.com/device-plugin.config` label names, else the default; `None` when it is not
    /// in the files or two of that name differ.
    pub fn plugin_config_for(&self, pool: &NodePool<'_>) -> Option<&Setting<PluginConfig>> {
        let name = match pool_label(pool, PLUGIN_CONFIG_LABEL) {
            Some((v, _)) => v,
            None => self.plugin_default.as_deref()?,
        };
        let mut named = self.plugin_configs.iter().filter(|c| c.value.name == name);
        let first = named.next()?;
        named.all(|c| c.value == first.value).then_some(first)
    }

    /// [`GpuSetup::plugin_config_for`], telling apart nodes that get no configuration at all (no
    /// label and no default: `Some(None)`) from a configuration not in the files (`None`).
    pub fn known_plugin_config_for(
        &self,
        pool: &NodePool<'_>,
    ) -> Option<Option<&Setting<PluginConfig>>> {
        if pool_label(pool, PLUGIN_CONFIG_LABEL).is_none() && self.plugin_default.is_none() {
            return Some(None);
        }
        Some(Some(self.plugin_config_for(pool)?))
    }

    /// How the pool's nodes share the GPUs advertised as `resource`: the sharing section of their
    /// device plugin configuration and its entry for that name (`None`: not shared, or unknown).
    pub fn sharing_of(
        &self,
        pool: &NodePool<'_>,
        resource: &str,
    ) -> Option<(&Setting<PluginConfig>, &Sharing, &Replicated)> {
        let c = self.plugin_config_for(pool)?;
        let sharing = c.value.sharing.as_ref()?;
        Some((c, sharing, sharing.advertising(resource)?))
    }

    /// How many of `resource` one GPU of the pool's nodes is advertised as, when they share
    /// their GPUs: the MIG instances per GPU of the pool's layout (`nvidia.com/mig-<profile>`,
    /// or `nvidia.com/gpu` under the `single` strategy), times the replicas of a time-sliced or
    /// MPS-shared resource. `None`: whole GPUs, or the files cannot tell (the fewest over the
    /// pool's GPU models otherwise).
    pub fn per_gpu(&self, pool: &NodePool<'_>, resource: &str) -> Option<u32> {
        let (base, replicas) = match self.sharing_of(pool, resource) {
            Some((_, _, r)) => (r.name.as_str(), r.replicas),
            None => (resource, 1),
        };
        match self.layout_for(pool) {
            Some((layout, _)) => Some(self.mig_per_gpu(pool, layout, base)? * replicas),
            None => (replicas > 1 && base == "nvidia.com/gpu").then_some(replicas),
        }
    }

    /// MIG instances advertised as `resource` per GPU under `layout` (the fewest over the
    /// pool's GPU models; `None` when a model may be without MIG or the layout is unknown).
    fn mig_per_gpu(
        &self,
        pool: &NodePool<'_>,
        layout: PoolLayout<'_>,
        resource: &str,
    ) -> Option<u32> {
        let profile: Option<&str> = match requested_profile(resource) {
            Some(p) => Some(p),
            // Whole GPUs under `single` are the instances of a one-profile layout.
            None if resource == "nvidia.com/gpu" => {
                let single = self.strategy_for(pool)?.value == MigStrategy::Single;
                if !single {
                    return None;
                }
                None
            }
            None => return None,
        };
        let mut fewest: Option<u32> = None;
        for i in crate::sched::bounded_instances(pool)? {
            let model = i.mig()?;
            let made: Vec<(String, u32)> = match layout {
                PoolLayout::Default(_, l) => l
                    .devices(model)?
                    .into_iter()
                    .map(|(p, n)| (p.to_string(), n))
                    .collect(),
                PoolLayout::Custom(def) => def.value.devices.clone(),
                PoolLayout::Unknown(_) => return None,
            };
            let n = match profile {
                Some(p) => made.iter().filter(|(m, _)| m == p).map(|(_, n)| *n).sum(),
                // `single` needs one profile on the node; several fail the plugin.
                None if made.len() == 1 => made[0].1,
                None => return None,
            };
            fewest = Some(fewest.map_or(n, |f| f.min(n)));
        }
        fewest
    }

    /// The MIG layout the pool's `nvidia.com/mig.config` label picks (`None`: no label).
    pub fn layout_for<'s>(&'s self, pool: &'s NodePool<'_>) -> Option<(PoolLayout<'s>, Loc)> {
        let (name, at) = pool_label(pool, MIG_CONFIG_LABEL)?;
        let layout = match self.layouts.iter().find(|l| l.value.name == name) {
            Some(def) => PoolLayout::Custom(def),
            None => match default_layout(name) {
                Some(l) => PoolLayout::Default(name, l),
                None => PoolLayout::Unknown(name),
            },
        };
        Some((layout, at))
    }
}

/// A label the pool's nodes carry: a template label, else a requirement `In` one value (which
/// Karpenter also sets on the node); with where it is written.
pub fn pool_label<'p>(pool: &'p NodePool<'_>, key: &str) -> Option<(&'p str, Loc)> {
    if let Some((_, _, v)) = pool.labels.iter().find(|(k, _, _)| *k == key) {
        return Some((v.as_str()?, pool.loc(*v)));
    }
    let r = pool
        .requirements
        .iter()
        .find(|r| r.key == key && r.op == "In" && r.values.len() == 1)?;
    Some((r.values[0], pool.loc(r.node)))
}

/// [`pool_cap`], for a resource the pool's GPUs are shared as: its GPUs times what one GPU is
/// advertised as (see [`GpuSetup::per_gpu`]).
pub fn shared_pool_cap<'a>(
    ix: &Index<'a>,
    pool: &NodePool<'a>,
    resource: &str,
) -> Option<PoolCap<'a>> {
    match ix.gpu_setup().per_gpu(pool, resource) {
        Some(n) => {
            let gpus = pool_cap(pool, "nvidia.com/gpu")?;
            Some(PoolCap {
                max: gpus.max * i128::from(n),
                per_gpu: Some(n),
                ..gpus
            })
        }
        None => pool_cap(pool, resource),
    }
}

impl<'a> Index<'a> {
    /// The GPU sharing setup (built once, on first use).
    pub fn gpu_setup(&self) -> &GpuSetup {
        self.gpu_setup.get_or_init(|| GpuSetup::build(self))
    }
}
