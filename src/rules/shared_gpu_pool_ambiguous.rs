use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::index::{GpuSetup, MIG_CONFIG_LABEL, PLUGIN_CONFIG_LABEL, PoolLayout, pool_label};
use crate::model::constraints::PodConstraints;
use crate::model::nvidia::MigStrategy;
use crate::model::nvidia::plugin_config::SharingKind;
use crate::model::{NodePool, PodTemplate};
use crate::sched::instances_for;
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a pod template whose GPU request means different things, or nothing, on the
    /// NodePools its selectors and tolerations reach, because the pools label their nodes with
    /// different GPU sharing setups — or leave out the label their sharing needs:
    /// - it asks for `nvidia.com/gpu`, and on one pool that is a whole GPU while on another it is
    ///   a MIG instance (a `nvidia.com/mig.config` layout under the `single` strategy), a
    ///   time-sliced or MPS replica (the `nvidia.com/device-plugin.config` configuration the
    ///   nodes get shares `nvidia.com/gpu` without renaming it), or not advertised at all (every
    ///   GPU in MIG mode under the `mixed` strategy, or renamed to `nvidia.com/gpu.shared`);
    /// - it asks for a MIG profile (`nvidia.com/mig-1g.10gb`) on pools whose GPUs have it, but no
    ///   pool it can land on carries a `nvidia.com/mig.config` label, while the files declare a
    ///   GPU operator and label other pools' layouts: the MIG manager leaves unlabelled GPUs at
    ///   its default layout (MIG off, unless `migManager.config.default` says otherwise: then
    ///   unlabelled pools are not judged);
    /// - it asks for a renamed shared resource (`nvidia.com/gpu.shared`) that a device plugin
    ///   configuration in the files advertises, but no pool it can land on gets that
    ///   configuration (no `nvidia.com/device-plugin.config` label, and the default
    ///   configuration advertises no such resource), while other pools get theirs by label.
    ///
    /// Pools are compared only where the files tell: a pool whose layout, configuration, MIG
    /// strategy or instance types are unknown is left out. Settings gpuops reads are those of
    /// `mig-strategy-mismatch` and `shared-gpu-for-training`.
    ///
    /// ## Why is this bad?
    /// The scheduler places the pod on any node that advertises the resource. When `nvidia.com/gpu`
    /// is a whole GPU on one pool and a seventh of one (or a quarter of a time-sliced one) on
    /// another, the same pod sometimes gets a GPU and sometimes a slice without memory it was
    /// sized for — out-of-memory errors and slow steps that come and go with placement. A pool
    /// that advertises nothing may still be the one Karpenter launches for the pod, which then
    /// waits on a node it can never use. A MIG or shared pool without its label never makes the
    /// resource, and the pods stay `Pending`.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `a100-mig`: labels {nvidia.com/mig.config: all-1g.10gb}, strategy `single`
    /// # NodePool `a100`: no MIG label (whole GPUs); neither is tainted
    /// apiVersion: apps/v1
    /// kind: Deployment
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: server
    ///           resources:
    ///             limits:
    ///               nvidia.com/gpu: 1   # a whole A100 or a 1g.10gb slice, wherever it lands
    /// ```
    ///
    /// ## Fix
    /// Keep pods meant for whole GPUs off the shared pools (a taint on the shared pool, a
    /// `nodeSelector` on the pods), or give shared GPUs names of their own (`renameByDefault:
    /// true`, the `mixed` MIG strategy). Label every MIG or shared pool with the layout
    /// (`nvidia.com/mig.config`) or configuration (`nvidia.com/device-plugin.config`) it is for.
    name: "shared-gpu-pool-ambiguous",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a GPU request means different things (or nothing) on the NodePools a pod can land on",
    check: check,
    chunked: true,
}

const GPU: &str = "nvidia.com/gpu";

/// What one `nvidia.com/gpu` is on a pool's nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unit {
    Whole,
    /// A MIG instance of this profile.
    Mig(String),
    /// One of `replicas` shares of a whole GPU (`of: None`) or of a MIG instance.
    Replica {
        of: Option<String>,
        replicas: u32,
        kind: SharingKind,
    },
    /// The nodes do not advertise it.
    Absent,
}

impl Unit {
    fn describe(&self) -> String {
        match self {
            Unit::Whole => "a whole GPU".to_string(),
            Unit::Mig(p) => format!("a `{p}` MIG instance"),
            Unit::Replica { of, replicas, kind } => {
                let of = of
                    .as_ref()
                    .map_or("a GPU".to_string(), |p| format!("a `{p}` MIG instance"));
                format!("one of {replicas} {} shares of {of}", kind.noun())
            }
            Unit::Absent => "not advertised".to_string(),
        }
    }
}

/// A pool's unit, why, and where the setting that decides it is written.
struct PoolUnit {
    pool: usize,
    unit: Unit,
    why: String,
    at: Loc,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let setup = ix.gpu_setup();
    // Read once per index (a chunked rule would read every pool again for each chunk).
    let (mig_labels, plugin_labels) = (setup.pools_mig_labelled, setup.pools_plugin_labelled);
    // Without a label or a shared default, every pool is alike: nothing to compare.
    if !mig_labels && !plugin_labels && !setup.shares_gpus() {
        return;
    }
    for (ti, t) in cx.templates() {
        if !t.requests_gpu_resource() {
            continue;
        }
        let requests: Vec<(&str, Node)> = t
            .gpu_containers()
            .flat_map(|c| c.accelerators())
            .filter(|(n, _)| n.starts_with("nvidia.com/"))
            .collect();
        if requests.is_empty() {
            continue;
        }
        let pools = ix.landing_pools(ti);
        if pools.is_empty() {
            continue;
        }
        let pod = t.constraints();
        if let Some(&(_, at)) = requests.iter().find(|(n, _)| *n == GPU) {
            let units: Vec<PoolUnit> = pools
                .iter()
                .filter_map(|&p| unit_of(setup, pod, &ix.nodepools[p], p))
                .collect();
            if let Some(d) = ambiguous(cx, t, at, &units) {
                out.push(d);
            }
        }
        if mig_labels && setup.unlabelled_mig_off() {
            for (resource, profile, at) in super::mig_requests(t) {
                if let Some(d) = mig_unlabelled(cx, t, (resource, profile, at), &pools) {
                    out.push(d);
                }
            }
        }
        // Configurations reach pools by label: without one on any pool, nodes may be labelled
        // some other way (by hand, by a node group outside the files).
        for &(resource, at) in requests.iter().filter(|_| plugin_labels) {
            if let Some(d) = shared_unlabelled(cx, t, resource, at, &pools) {
                out.push(d);
            }
        }
    }
}

/// What `nvidia.com/gpu` is on the pool's nodes (`None`: the files cannot tell).
fn unit_of(
    setup: &GpuSetup,
    pod: &PodConstraints<'_>,
    pool: &NodePool<'_>,
    p: usize,
) -> Option<PoolUnit> {
    let types = instances_for(pod, pool).filter(|t| !t.is_empty())?;
    if types.iter().any(|i| i.gpu_manufacturer != "nvidia") {
        return None;
    }
    let capable = types.iter().all(|i| i.mig().is_some());
    let unlabelled = pool.loc(pool.anchor);
    // What decides the unit, for the message: the MIG layout (on GPUs that have MIG), then the
    // device plugin configuration.
    let mut why: Vec<String> = Vec::new();
    let mut at = unlabelled;
    // The profiles the layout makes on these GPUs (empty: MIG off).
    let made: Vec<String> = match setup.layout_for(pool) {
        None if capable && !setup.unlabelled_mig_off() => return None,
        None => {
            if capable {
                why.push(format!("no `{MIG_CONFIG_LABEL}` label"));
            }
            Vec::new()
        }
        Some((layout, label_at)) => {
            why.push(format!("`{MIG_CONFIG_LABEL}: {}`", layout.name()));
            at = label_at;
            match layout {
                PoolLayout::Unknown(_) => return None,
                PoolLayout::Default(_, l) if !l.enables_mig() => Vec::new(),
                PoolLayout::Custom(d) if !d.value.mig_enabled => Vec::new(),
                // MIG on GPUs without it, or a custom layout that may leave some GPUs whole.
                _ if !capable => return None,
                PoolLayout::Custom(_) => return None,
                PoolLayout::Default(_, l) => {
                    let mut made: Vec<String> = Vec::new();
                    for i in &types {
                        for (prof, _) in l.devices(i.mig()?)? {
                            if !made.iter().any(|m| m == prof) {
                                made.push(prof.to_string());
                            }
                        }
                    }
                    made
                }
            }
        }
    };
    let base = if made.is_empty() {
        Unit::Whole
    } else {
        let s = setup.strategy_for(pool)?;
        if let Some(w) = why.last_mut() {
            w.push_str(&format!(" under the `{}` MIG strategy", s.value.as_str()));
        }
        match s.value {
            MigStrategy::Single if made.len() == 1 => Unit::Mig(made[0].clone()),
            MigStrategy::Mixed => Unit::Absent,
            _ => return None,
        }
    };
    // The device plugin configuration: the label's, else the default, else none at all.
    let label = pool_label(pool, PLUGIN_CONFIG_LABEL);
    let config = setup.known_plugin_config_for(pool)?;
    match (config, label) {
        (Some(c), _) => why.push(format!("device plugin configuration `{}`", c.value.name)),
        (None, _) if !setup.plugin_configs.is_empty() => {
            why.push(format!("no `{PLUGIN_CONFIG_LABEL}` label"));
        }
        _ => {}
    }
    let shared = config.and_then(|c| {
        let s = c.value.sharing.as_ref()?;
        let r = s
            .resources
            .iter()
            .find(|r| r.name == GPU && r.replicas > 1)?;
        Some((c, s.kind, r))
    });
    let unit = match (shared, base) {
        (None, base) => base,
        (Some(_), Unit::Absent) => Unit::Absent,
        (Some((c, kind, r)), base) => {
            match label {
                Some((_, label_at)) => at = label_at,
                None if at == unlabelled => at = c.at,
                None => {}
            }
            if r.advertised != GPU {
                Unit::Absent
            } else {
                Unit::Replica {
                    of: match base {
                        Unit::Mig(p) => Some(p),
                        _ => None,
                    },
                    replicas: r.replicas,
                    kind,
                }
            }
        }
    };
    let why = if why.is_empty() {
        "no GPU sharing set up".to_string()
    } else {
        why.join(", ")
    };
    Some(PoolUnit {
        pool: p,
        unit,
        why,
        at,
    })
}

/// The finding when the pools disagree on what `nvidia.com/gpu` is.
fn ambiguous(cx: &Ctx, t: &PodTemplate, at: Node<'_>, units: &[PoolUnit]) -> Option<Diagnostic> {
    let first = units.first()?;
    let other = units.iter().find(|u| u.unit != first.unit)?;
    // A whole GPU first, when one of the two is: the surprise is the other.
    let (a, b) = if other.unit == Unit::Whole {
        (other, first)
    } else {
        (first, other)
    };
    let ix = cx.ix;
    let owner = ix.owner(t);
    let name = |u: &PoolUnit| ix.nodepools[u.pool].name;
    let side = |u: &PoolUnit| {
        format!(
            "{} on NodePool `{}` ({})",
            u.unit.describe(),
            name(u),
            u.why
        )
    };
    let d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for `{GPU}`, which is {} but {}: its selectors reach both pools, so what each pod gets depends on where it lands",
                super::describe_template(owner, t),
                side(a),
                side(b),
            ),
        )
        .help(format!(
            "keep these pods on the pools meant for them (a `nodeSelector`, or a taint on NodePool `{}`){}",
            name(b),
            match b.unit {
                Unit::Replica { .. } => ", or advertise the shared GPUs under a name of their own (`renameByDefault: true`)",
                Unit::Mig(_) => ", or run the `mixed` MIG strategy, which advertises MIG instances by profile",
                _ => "",
            }
        ));
    Some(
        d.related(
            a.at,
            format!("NodePool `{}`: {}", name(a), a.unit.describe()),
        )
        .related(
            b.at,
            format!("NodePool `{}`: {}", name(b), b.unit.describe()),
        ),
    )
}

/// A MIG profile asked of pools that all lack a layout label, where the files label layouts on
/// other pools and declare the GPU operator.
fn mig_unlabelled(
    cx: &Ctx,
    t: &PodTemplate,
    (resource, profile, at): (&str, &str, Node<'_>),
    pools: &[usize],
) -> Option<Diagnostic> {
    let ix = cx.ix;
    let pod = t.constraints();
    for &p in pools {
        let pool = &ix.nodepools[p];
        if pool_label(pool, MIG_CONFIG_LABEL).is_some() {
            return None;
        }
        // GPUs without the profile are `mig-profile-unavailable`'s finding.
        let types = instances_for(pod, pool).filter(|t| !t.is_empty())?;
        if !types
            .iter()
            .all(|i| i.mig().is_some_and(|m| m.offers(profile)))
        {
            return None;
        }
    }
    let owner = ix.owner(t);
    let names = pool_names(cx, pools);
    let mut d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for `{resource}`, but no NodePool it can land on ({names}) carries a `{MIG_CONFIG_LABEL}` label: the GPU operator's MIG manager leaves their GPUs at its default layout, no node advertises the profile, and its pods stay Pending",
                super::describe_template(owner, t),
            ),
        )
        .help(format!(
            "label the pool's nodes with a layout that makes `{profile}` (`{MIG_CONFIG_LABEL}: all-{profile}` in `spec.template.metadata.labels`)"
        ));
    for &p in pools.iter().take(3) {
        let pool = &ix.nodepools[p];
        d = d.related(
            pool.loc(pool.anchor),
            format!("NodePool `{}` has no `{MIG_CONFIG_LABEL}` label", pool.name),
        );
    }
    Some(d)
}

/// A renamed shared resource (`nvidia.com/gpu.shared`) that a configuration in the files
/// advertises, asked of pools none of which gets that configuration.
fn shared_unlabelled(
    cx: &Ctx,
    t: &PodTemplate,
    resource: &str,
    at: Node<'_>,
    pools: &[usize],
) -> Option<Diagnostic> {
    let ix = cx.ix;
    let setup = ix.gpu_setup();
    let advertising = setup.plugin_configs.iter().find(|c| {
        c.value
            .sharing
            .as_ref()
            .and_then(|s| s.advertising(resource))
            .is_some_and(|r| r.advertised != r.name)
    })?;
    for &p in pools {
        let pool = &ix.nodepools[p];
        if pool_label(pool, PLUGIN_CONFIG_LABEL).is_some() {
            return None;
        }
        // The default configuration, when there is one, must be in the files and not advertise it.
        if setup.plugin_default.is_some() {
            let c = setup.plugin_config_for(pool)?;
            if c.value
                .sharing
                .as_ref()
                .is_some_and(|s| s.advertising(resource).is_some())
            {
                return None;
            }
        }
    }
    let owner = ix.owner(t);
    let names = pool_names(cx, pools);
    let config = &advertising.value.name;
    let d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for `{resource}`, which only device plugin configuration `{config}` advertises, but no NodePool it can land on ({names}) labels its nodes `{PLUGIN_CONFIG_LABEL}: {config}`: no node advertises `{resource}` and its pods stay Pending",
                super::describe_template(owner, t),
            ),
        )
        .help(format!(
            "label the shared pool's nodes `{PLUGIN_CONFIG_LABEL}: {config}` (in `spec.template.metadata.labels`), or make `{config}` the default configuration"
        ));
    Some(d.related(
        advertising.at,
        format!(
            "configuration `{config}` advertises `{resource}` ({})",
            advertising.source
        ),
    ))
}

/// `NodePool `a`, `b`` for messages (three at most).
fn pool_names(cx: &Ctx, pools: &[usize]) -> String {
    let mut names: Vec<String> = pools
        .iter()
        .take(3)
        .map(|&p| format!("`{}`", cx.ix.nodepools[p].name))
        .collect();
    if pools.len() > 3 {
        names.push(format!("{} more", pools.len() - 3));
    }
    format!("NodePool {}", names.join(", "))
}
