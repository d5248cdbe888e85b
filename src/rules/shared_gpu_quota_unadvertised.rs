use super::Ctx;
use crate::catalog::mig::{MIG_GPUS, is_known_profile, requested_profile};
use crate::catalog::mig_layouts::Layout;
use crate::diag::{Diagnostic, Loc};
use crate::index::{
    GpuSetup, MIG_CONFIG_LABEL, PLUGIN_CONFIG_LABEL, PoolLayout, flavor_pools_for, pool_label,
};
use crate::model::nvidia::MigStrategy;
use crate::model::{ClusterQueue, NodePool};
use crate::sched::bounded_instances;
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a Kueue ClusterQueue's quota, on a flavor, for a shared GPU resource that none of
    /// the NodePools behind the flavor (those its `nodeLabels` select) advertises, when the files
    /// set up GPU sharing (a GPU operator, a device plugin configuration or a MIG strategy):
    /// - a MIG profile (`nvidia.com/mig-2g.20gb`) that no pool's MIG layout makes: the layout its
    ///   `nvidia.com/mig.config` label picks (the GPU operator's defaults: `all-1g.10gb` makes
    ///   only `1g.10gb`, `all-balanced` 1g, 2g and 3g instances of the pool's GPUs; or one a MIG
    ///   manager ConfigMap in the files defines), or none for an unlabelled pool under the GPU
    ///   operator when other pools carry the label, as its MIG manager leaves such GPUs at its
    ///   default (MIG off, unless `migManager.config.default` names another layout);
    /// - any MIG profile, when the device plugin runs the `single` strategy, which advertises MIG
    ///   instances as `nvidia.com/gpu`;
    /// - a shared resource (`nvidia.com/gpu.shared`, what `renameByDefault: true` advertises)
    ///   that the device plugin configuration no pool's nodes get (their
    ///   `nvidia.com/device-plugin.config` label, else the default; an unlabelled pool without a
    ///   default counts only when other pools carry the label) advertises.
    ///
    /// It says nothing when a pool picks a layout or configuration the files do not define, when
    /// no pool in the files is behind the flavor, for a quota of 0, or for a name Kueue's DRA
    /// `deviceClassMappings` give. A profile no GPU has is `queue-resource-unknown`'s finding; a quota above what the
    /// pools can hold is `queue-quota-exceeds-pool-limit`'s.
    ///
    /// ## Why is this bad?
    /// Kueue admits against quota, not against nodes. A quota on a resource no node advertises
    /// admits workloads whose pods then stay `Pending` (`Insufficient nvidia.com/mig-2g.20gb`),
    /// holding the quota, while the resource the GPUs really are advertised as has no quota and
    /// admits nothing.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `a100-mig`: nvidia.com/mig.config: all-1g.10gb (only 1g.10gb instances)
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ClusterQueue
    /// metadata:
    ///   name: inference
    /// spec:
    ///   resourceGroups:
    ///     - coveredResources: [nvidia.com/mig-2g.20gb]
    ///       flavors:
    ///         - name: a100-mig
    ///           resources:
    ///             - {name: nvidia.com/mig-2g.20gb, nominalQuota: 28}
    /// ```
    ///
    /// ## Fix
    /// Set the quota on the resource the layouts and configurations make
    /// (`nvidia.com/mig-1g.10gb` here), or label the pool with a layout that makes the profile
    /// (`nvidia.com/mig.config: all-2g.20gb`).
    name: "shared-gpu-quota-unadvertised",
    category: "kueue",
    kinds: &["ClusterQueue"],
    severity: Warning,
    summary: "a ClusterQueue sets quota for a MIG profile or shared GPU resource nothing in the files advertises",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.cluster_queues.is_empty() {
        return;
    }
    let setup = ix.gpu_setup();
    // Without sharing set up in the files, the names may well come from outside them.
    if !setup.operator && setup.plugin_configs.is_empty() && setup.strategies.is_empty() {
        return;
    }
    let single = single_strategy(setup);
    // Layouts and configurations reach pools by label: an unlabelled pool says what its nodes
    // get only where other pools carry the label (else nodes may be labelled some other way).
    let labelled = |key: &str| ix.nodepools.iter().any(|p| pool_label(p, key).is_some());
    let evidence = Evidence {
        mig: labelled(MIG_CONFIG_LABEL) && setup.unlabelled_mig_off(),
        plugin: labelled(PLUGIN_CONFIG_LABEL),
    };
    for cq in &ix.cluster_queues {
        let mut seen: Vec<&str> = Vec::new();
        for fq in &cq.quotas {
            for r in &fq.resources {
                let name = r.name;
                // A quota of 0 admits nothing on the flavor (Kueue wants every covered resource
                // listed on every flavor of the group).
                let zero = r
                    .nominal
                    .as_ref()
                    .and_then(|q| q.value)
                    .is_some_and(|m| m.0 == 0);
                if zero || seen.contains(&name) || ix.kueue_dra.iter().any(|m| m.name == name) {
                    continue;
                }
                let shared = name.starts_with("nvidia.com/") && name.ends_with(".shared");
                let profile = requested_profile(name).filter(|p| is_known_profile(p));
                if !shared && profile.is_none() {
                    continue;
                }
                seen.push(name);
                let obj = &ix.objects[cq.obj];
                if let (Some(_), Some((at, source)), false) = (profile, &single, shared) {
                    out.push(under_single(cx, obj, cq, name, r.name_node, (*at, source)));
                    continue;
                }
                // The pools behind the flavor, each with what it makes of the name.
                let pools = ix
                    .flavor(fq.flavor)
                    .map(|fi| flavor_pools_for(ix, fi, name))
                    .unwrap_or_default();
                let judged: Option<Vec<Made>> = (!pools.is_empty())
                    .then(|| {
                        pools
                            .iter()
                            .map(|&p| {
                                let pool = &ix.nodepools[p];
                                match (shared, profile) {
                                    (true, _) => advertised(setup, &evidence, pool, name),
                                    (false, Some(prof)) => {
                                        layout_makes(setup, &evidence, pool, prof)
                                    }
                                    (false, None) => None,
                                }
                            })
                            .collect()
                    })
                    .flatten();
                let Some(judged) = judged else { continue };
                if judged.iter().any(|m| m.makes) {
                    continue;
                }
                out.push(unmade(cx, obj, cq, (name, fq.flavor), r.name_node, &judged));
            }
        }
    }
}

/// Whether an unlabelled pool's nodes are known to get no layout (MIG off) or no device plugin
/// configuration.
struct Evidence {
    mig: bool,
    plugin: bool,
}

/// What one pool behind a flavor makes of a name: whether it advertises it, and what it does
/// instead, where that is set.
struct Made {
    makes: bool,
    instead: String,
    at: Loc,
}

/// The `single` strategy every source of it agrees on, with where it is written.
fn single_strategy(setup: &GpuSetup) -> Option<(Loc, String)> {
    let first = setup.strategies.first()?;
    setup
        .strategies
        .iter()
        .all(|s| s.value == MigStrategy::Single)
        .then(|| (first.at, first.source.clone()))
}

/// Whether the pool's MIG layout makes `profile` (`None`: the files cannot tell).
fn layout_makes(
    setup: &GpuSetup,
    evidence: &Evidence,
    pool: &NodePool<'_>,
    profile: &str,
) -> Option<Made> {
    let Some((layout, at)) = setup.layout_for(pool) else {
        // The GPU operator's MIG manager leaves unlabelled GPUs at its default (MIG off).
        return evidence.mig.then(|| Made {
            makes: false,
            instead: format!("NodePool `{}` has no `{MIG_CONFIG_LABEL}` label", pool.name),
            at: pool.loc(pool.anchor),
        });
    };
    let made: Vec<String> = match layout {
        PoolLayout::Unknown(_) => return None,
        PoolLayout::Custom(def) => def.value.devices.iter().map(|(p, _)| p.clone()).collect(),
        PoolLayout::Default(_, l) => default_profiles(l, pool),
    };
    let makes = made.iter().any(|p| p == profile);
    let what = match made.is_empty() {
        true => "no MIG instance".to_string(),
        false => crate::diag::backticked(&made, ", "),
    };
    Some(Made {
        makes,
        instead: format!(
            "NodePool `{}` picks `{MIG_CONFIG_LABEL}: {}`, which makes {what}",
            pool.name,
            layout.name()
        ),
        at,
    })
}

/// The profiles a default layout makes on the pool's GPUs (on every MIG GPU when the pool's
/// instance types are open).
fn default_profiles(l: Layout<'_>, pool: &NodePool<'_>) -> Vec<String> {
    let gpus: Vec<&'static crate::catalog::mig::MigGpu> = match bounded_instances(pool) {
        Some(types) => types.iter().filter_map(|i| i.mig()).collect(),
        None => MIG_GPUS.iter().collect(),
    };
    let mut out: Vec<String> = Vec::new();
    for g in gpus {
        for (p, _) in l.devices(g).unwrap_or_default() {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// Whether the device plugin configuration the pool's nodes get advertises `name` (`None`: that
/// configuration is not in the files).
fn advertised(
    setup: &GpuSetup,
    evidence: &Evidence,
    pool: &NodePool<'_>,
    name: &str,
) -> Option<Made> {
    let label = pool_label(pool, PLUGIN_CONFIG_LABEL);
    let Some(c) = setup.known_plugin_config_for(pool)? else {
        if !evidence.plugin {
            return None;
        }
        return Some(Made {
            makes: false,
            instead: format!(
                "NodePool `{}` has no `{PLUGIN_CONFIG_LABEL}` label and there is no default configuration",
                pool.name
            ),
            at: pool.loc(pool.anchor),
        });
    };
    let sharing = c.value.sharing.as_ref();
    let names: Vec<&str> = sharing
        .into_iter()
        .flat_map(|s| s.resources.iter().map(|r| r.advertised.as_str()))
        .collect();
    let what = match names.is_empty() {
        true => "which shares no GPU".to_string(),
        false => format!("which advertises {}", crate::diag::backticked(&names, ", ")),
    };
    Some(Made {
        makes: names.contains(&name),
        instead: format!(
            "NodePool `{}` gets device plugin configuration `{}`, {what}",
            pool.name, c.value.name
        ),
        at: label.map_or(c.at, |(_, at)| at),
    })
}

fn under_single(
    cx: &Ctx,
    obj: &crate::model::Object<'_>,
    cq: &ClusterQueue,
    name: &str,
    node: Node<'_>,
    (at, source): (Loc, &str),
) -> Diagnostic {
    cx.on(
        obj,
        node,
        format!(
            "ClusterQueue `{}` sets quota for `{name}`, but the device plugin runs the `single` MIG strategy, which advertises MIG instances as `nvidia.com/gpu`: no node has `{name}`, and workloads admitted against it stay Pending",
            cq.name
        ),
    )
    .help("set the quota on `nvidia.com/gpu`, or run the `mixed` strategy to advertise MIG instances by profile")
    .related(at, format!("the `single` strategy is set here ({source})"))
}

/// The finding for a name no pool behind the flavor advertises.
fn unmade(
    cx: &Ctx,
    obj: &crate::model::Object<'_>,
    cq: &ClusterQueue,
    (name, flavor): (&str, &str),
    node: Node<'_>,
    judged: &[Made],
) -> Diagnostic {
    let reasons: Vec<&str> = judged.iter().take(3).map(|m| m.instead.as_str()).collect();
    let help = match requested_profile(name) {
        Some(p) if !name.ends_with(".shared") => format!(
            "set the quota on a profile the pools make, or label the pools with a layout that makes `{p}` (`{MIG_CONFIG_LABEL}: all-{p}`)"
        ),
        _ => "set the quota on the name the pools' configuration advertises, or give the shared pool's nodes a configuration that advertises it (`renameByDefault: true`)".to_string(),
    };
    let mut d = cx
        .on(
            obj,
            node,
            format!(
                "ClusterQueue `{}` sets quota for `{name}` on flavor `{flavor}`, but no NodePool behind the flavor advertises it: {}; workloads admitted against it stay Pending",
                cq.name,
                reasons.join("; ")
            ),
        )
        .help(help);
    for m in judged.iter().take(3) {
        d = d.related(m.at, m.instead.clone());
    }
    d
}
