//! The cluster's GPU sharing setup, read once from every object that speaks of it: the MIG
//! strategy, the device plugin's named configurations and which one a pool's nodes get, and the
//! MIG layout a pool's `nvidia.com/mig.config` label picks.
//!
//! Everything is `None` or unknown when the files do not say, or say two things: callers stay
//! quiet then.

use super::Index;
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
            s.strategies.extend(d.mig_strategy);
            s.plugin_configs.extend(d.plugin_configs);
            defaults.extend(d.plugin_default);
        }
        defaults.sort();
        defaults.dedup();
        // Two defaults: the files disagree, nothing is known.
        if defaults.len() == 1 {
            s.plugin_default = defaults.pop();
        }
        s
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

impl<'a> Index<'a> {
    /// The GPU sharing setup (built once, on first use).
    pub fn gpu_setup(&self) -> &GpuSetup {
        self.gpu_setup.get_or_init(|| GpuSetup::build(self))
    }
}
