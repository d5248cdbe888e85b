use super::Ctx;
use crate::catalog::mig_layouts::Layout;
use crate::diag::Diagnostic;
use crate::index::{GpuSetup, PoolLayout};
use crate::model::constraints::PodConstraints;
use crate::model::nvidia::{MigStrategy, Setting};
use crate::model::{NodePool, PodTemplate};
use crate::sched::{bounded_instances, instances_for};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags MIG requests and layouts the device plugin's MIG strategy does not serve, where the
    /// files say the strategy: a GPU operator ClusterPolicy (`spec.mig.strategy`), the Helm values
    /// of the `gpu-operator` (`mig.strategy`) or `nvidia-device-plugin` (`migStrategy`) chart in a
    /// Flux HelmRelease or an Argo CD Application, the plugin DaemonSet's `MIG_STRATEGY` or
    /// `--mig-strategy`, or (without a GPU operator) the `flags.migStrategy` of the device plugin
    /// configuration a pool's nodes get:
    /// - a pod asks for `nvidia.com/mig-<profile>`, but every pool it can land on runs the
    ///   `single` strategy (MIG instances are advertised as `nvidia.com/gpu`) or `none` (none are
    ///   advertised);
    /// - a pod asks for whole GPUs (`nvidia.com/gpu`), but every pool it can land on runs the
    ///   `mixed` strategy and puts all its GPUs in MIG mode (`nvidia.com/mig.config:
    ///   all-1g.10gb`, `all-balanced`…): `mixed` advertises MIG-mode GPUs only as
    ///   `nvidia.com/mig-<profile>`;
    /// - a pool's layout makes more than one profile on a GPU (`all-balanced`) under the
    ///   `single` strategy, which needs one profile per node.
    ///
    /// It says nothing when the strategy is unknown or the files give two different ones, nor
    /// for a pool whose GPUs may be without MIG.
    ///
    /// ## Why is this bad?
    /// The device plugin decides which resource names a node has. Under `single` no node has
    /// `nvidia.com/mig-1g.10gb`; under `mixed` a node whose GPUs are all partitioned has no
    /// `nvidia.com/gpu`. Either way the pods stay `Pending` with `Insufficient …`, and Karpenter
    /// cannot help. Under `single` a node with several profiles fails the plugin's check ("more
    /// than one MIG device type present on node") and advertises no GPU at all.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: nvidia.com/v1
    /// kind: ClusterPolicy
    /// metadata:
    ///   name: cluster-policy
    /// spec:
    ///   mig:
    ///     strategy: single        # MIG instances are advertised as nvidia.com/gpu
    /// ---
    /// # a Deployment on the MIG pool
    ///           resources:
    ///             limits:
    ///               nvidia.com/mig-1g.10gb: 1
    /// ```
    ///
    /// ## Fix
    /// Run the `mixed` strategy to request profiles by name (and to give pools layouts with
    /// several profiles), or keep `single` and ask for `nvidia.com/gpu`, which is then one MIG
    /// instance of the node's layout. Send whole-GPU pods to pools without a MIG layout.
    name: "mig-strategy-mismatch",
    category: "scheduling",
    kinds: &["pod templates", "NodePool"],
    severity: Error,
    summary: "MIG requests or layouts the device plugin's MIG strategy does not advertise",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let setup = ix.gpu_setup();
    // Most repositories say no strategy: nothing to judge, and no pool placement to compute.
    if !setup.knows_a_strategy() {
        return;
    }
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let pools = ix.landing_pools(ti);
        if pools.is_empty() {
            continue;
        }
        // Every pool's strategy, or no judgement at all.
        let strategies: Option<Vec<(usize, Setting<MigStrategy>)>> = pools
            .iter()
            .map(|&p| Some((p, setup.strategy_for(&ix.nodepools[p])?)))
            .collect();
        let Some(strategies) = strategies else {
            continue;
        };
        for (resource, _, at) in super::mig_requests(t) {
            if strategies
                .iter()
                .all(|(_, s)| s.value != MigStrategy::Mixed)
            {
                out.push(unadvertised_profile(cx, t, resource, at, &strategies[0].1));
            }
        }
        if strategies
            .iter()
            .all(|(_, s)| s.value == MigStrategy::Mixed)
            && let Some(at) = whole_gpu_request(t)
        {
            let pod = t.constraints();
            let layouts: Option<Vec<(usize, Vec<&'static str>)>> = pools
                .iter()
                .map(|&p| Some((p, all_mig(setup, pod, &ix.nodepools[p])?)))
                .collect();
            if let Some(layouts) = layouts {
                out.push(no_whole_gpus(cx, t, at, &layouts, &strategies[0].1));
            }
        }
    }
    for (_, pool) in cx.nodepools() {
        if let Some(d) = several_profiles_under_single(cx, setup, pool) {
            out.push(d);
        }
    }
}

/// The key of a container's `nvidia.com/gpu` request.
fn whole_gpu_request<'a>(t: &PodTemplate<'a>) -> Option<Node<'a>> {
    t.gpu_containers()
        .flat_map(|c| c.accelerators())
        .find(|(n, _)| *n == "nvidia.com/gpu")
        .map(|(_, k)| k)
}

/// The profiles a pool's layout makes when it puts every GPU the pod may get in MIG mode (one
/// of the operator's default layouts, on instance types whose GPUs all have MIG and take it);
/// `None` when some GPU may stay whole or the files cannot tell.
fn all_mig(
    setup: &GpuSetup,
    pod: &PodConstraints<'_>,
    pool: &NodePool<'_>,
) -> Option<Vec<&'static str>> {
    let (PoolLayout::Default(_, layout), _) = setup.layout_for(pool)? else {
        return None;
    };
    if !layout.enables_mig() {
        return None;
    }
    let types = instances_for(pod, pool).filter(|t| !t.is_empty())?;
    let mut made: Vec<&'static str> = Vec::new();
    for i in types {
        for (p, _) in layout.devices(i.mig()?)? {
            if !made.contains(&p) {
                made.push(p);
            }
        }
    }
    Some(made)
}

/// The finding with where the strategy is written (its key, inside a configuration file a
/// ConfigMap holds).
fn strategy_note(cx: &Ctx, d: Diagnostic, s: &Setting<MigStrategy>) -> Diagnostic {
    d.related(
        cx.within_loc(s.at, "migStrategy", None),
        format!(
            "the MIG strategy `{}` is set here ({})",
            s.value.as_str(),
            s.source
        ),
    )
}

fn unadvertised_profile(
    cx: &Ctx,
    t: &PodTemplate,
    resource: &str,
    at: Node<'_>,
    s: &Setting<MigStrategy>,
) -> Diagnostic {
    let owner = cx.ix.owner(t);
    let (what, help) = match s.value {
        MigStrategy::Single => (
            "which advertises MIG instances as `nvidia.com/gpu`",
            "ask for `nvidia.com/gpu` (one MIG instance of the node's layout each), or run the device plugin with the `mixed` strategy",
        ),
        _ => (
            "which advertises no MIG instance",
            "run the device plugin with the `mixed` strategy to ask for MIG profiles by name",
        ),
    };
    let d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for `{resource}`, but the device plugin on the nodes it can land on runs with MIG strategy `{}`, {what}: no node has `{resource}` and its pods stay Pending",
                super::describe_template(owner, t),
                s.value.as_str(),
            ),
        )
        .help(help);
    strategy_note(cx, d, s)
}

fn no_whole_gpus(
    cx: &Ctx,
    t: &PodTemplate,
    at: Node<'_>,
    layouts: &[(usize, Vec<&'static str>)],
    s: &Setting<MigStrategy>,
) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let (p, made) = &layouts[0];
    let pool = &ix.nodepools[*p];
    let layout = ix
        .gpu_setup()
        .layout_for(pool)
        .map(|(l, _)| l.name())
        .unwrap_or_default();
    let names: Vec<String> = made.iter().map(|m| format!("nvidia.com/mig-{m}")).collect();
    let advertised = if names.is_empty() {
        "advertises none of their GPUs".to_string()
    } else {
        format!(
            "advertises them only as {}",
            crate::diag::backticked(&names, ", ")
        )
    };
    let mut d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for whole GPUs (`nvidia.com/gpu`), but NodePool `{}` puts every GPU in MIG mode (`nvidia.com/mig.config: {layout}`) and the device plugin's MIG strategy `mixed` {advertised}: no node it can land on has `nvidia.com/gpu` and its pods stay Pending",
                super::describe_template(owner, t),
                pool.name,
            ),
        )
        .help(if names.is_empty() {
            "send whole-GPU pods to a pool without a MIG layout".to_string()
        } else {
            format!(
                "ask for a profile the layout makes (`{}`), or send whole-GPU pods to a pool without a MIG layout",
                names[0]
            )
        });
    for (p, _) in layouts.iter().take(3) {
        let pool = &ix.nodepools[*p];
        if let Some((_, at)) = ix.gpu_setup().layout_for(pool) {
            d = d.related(
                at,
                format!("NodePool `{}` picks its MIG layout here", pool.name),
            );
        }
    }
    strategy_note(cx, d, s)
}

/// A pool whose default layout makes several profiles on one GPU while the plugin runs `single`.
fn several_profiles_under_single(
    cx: &Ctx,
    setup: &GpuSetup,
    pool: &NodePool<'_>,
) -> Option<Diagnostic> {
    let s = setup.strategy_for(pool)?;
    if s.value != MigStrategy::Single {
        return None;
    }
    let (PoolLayout::Default(name, layout), at) = setup.layout_for(pool)? else {
        return None;
    };
    if matches!(layout, Layout::Disabled) {
        return None;
    }
    let (model, made) = bounded_instances(pool)?
        .into_iter()
        .filter_map(|i| {
            let m = i.mig()?;
            Some((m, layout.devices(m)?))
        })
        .find(|(_, made)| made.len() > 1)?;
    let profiles: Vec<&str> = made.iter().map(|(p, _)| *p).collect();
    let obj = &cx.ix.objects[pool.obj];
    let d = cx
        .at(
            at,
            format!(
                "NodePool `{}` picks MIG layout `{name}`, which makes {} on each {} GPU, but the device plugin runs with MIG strategy `single`, which needs one profile per node: it fails its check (\"more than one MIG device type present on node\") and the nodes advertise no GPU",
                pool.name,
                crate::diag::backticked(&profiles, ", "),
                model.model,
            ),
        )
        .object(Some(obj.obj_ref()))
        .help("run the device plugin with the `mixed` strategy, or give the pool a layout of one profile (`all-1g.10gb`)");
    Some(strategy_note(cx, d, &s))
}
