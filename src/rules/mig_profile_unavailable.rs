use super::Ctx;
use crate::catalog::mig::MigGpu;
use crate::catalog::mig_layouts::Layout;
use crate::catalog::{Instance, instances};
use crate::diag::{Diagnostic, Loc, Severity};
use crate::index::{GpuSetup, PoolLayout};
use crate::model::constraints::PodConstraints;
use crate::model::{NodePool, PodTemplate};
use crate::sched::{bounding_requirement, instances_for};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a pod template that asks for a MIG profile (`nvidia.com/mig-1g.10gb`, also its
    /// time-sliced `.shared` form) that none of the NodePools it can land on provides:
    /// - the pools launch only GPUs without MIG (T4, A10G, L4, L40S, V100);
    /// - their GPUs have no such profile: profiles are named after the model's memory, so an
    ///   80 GB A100 or H100 has `1g.10gb`, `1g.20gb`, `2g.20gb`, `3g.40gb`, `4g.40gb`, `7g.80gb`,
    ///   a 40 GB A100 (p4d) `1g.5gb`, `1g.10gb`, `2g.10gb`, `3g.20gb`, `4g.20gb`, `7g.40gb`, an
    ///   H200 (p5e, p5en) `1g.18gb` to `7g.141gb` and a B200 (p6-b200) `1g.23gb` to `7g.180gb`;
    /// - the pool's `nvidia.com/mig.config` label picks a layout of the GPU operator's MIG
    ///   manager that makes other profiles (`all-1g.10gb` makes only `1g.10gb` instances,
    ///   `all-balanced` two 1g, one 2g and one 3g per GPU, `all-disabled` none), read from the
    ///   operator's default layouts or from a MIG manager ConfigMap in the files.
    ///
    /// The GPUs are those of the instance types each pool may launch for the pod (its own
    /// selector narrows them). It says nothing when a pool leaves its instance types open, or
    /// labels its nodes with a layout neither the defaults nor the files define. A missing
    /// layout label is no finding here: the layout may be set on the nodes some other way
    /// (`shared-gpu-pool-ambiguous` judges it where the files label other pools). Whether
    /// the device plugin advertises MIG profiles at all (its MIG strategy) is
    /// `mig-strategy-mismatch`'s concern.
    ///
    /// ## Why is this bad?
    /// The device plugin advertises `nvidia.com/mig-<profile>` only for MIG instances that exist
    /// on the node. No node of these pools ever has the resource, so the scheduler finds no
    /// node, Karpenter launches none that would help, and the pods stay `Pending` with
    /// `Insufficient nvidia.com/mig-1g.20gb`.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `a100`: instance-family In [p4d]  (A100 40GB)
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: server
    ///           resources:
    ///             limits:
    ///               nvidia.com/mig-1g.20gb: 1   # an 80 GB profile; p4d's GPUs have 40 GB
    /// ```
    ///
    /// ## Fix
    /// Ask for a profile the pools' GPUs have (`nvidia.com/mig-2g.10gb` on a 40 GB A100), or let
    /// the pod land on GPUs that have the profile (p4de or p5 for `1g.20gb`), and label the pool
    /// with a layout that makes it (`nvidia.com/mig.config: all-1g.20gb`).
    name: "mig-profile-unavailable",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Error,
    summary: "a pod asks for a MIG profile no NodePool it can land on provides",
    check: check,
    chunked: true,
}

/// Why a pool does not provide the profile.
enum Why<'s> {
    /// Its instance types have no MIG (their GPU names).
    NoMig(Vec<&'static str>),
    /// Its GPUs have MIG but not this profile.
    NotOnModel(Vec<&'static MigGpu>),
    /// Its layout label makes other profiles (or none) on the GPUs that have it.
    Layout {
        layout: PoolLayout<'s>,
        at: Loc,
        gives: Vec<String>,
    },
}

enum Offer<'s> {
    /// Some node of the pool may have it, or the files cannot tell.
    Maybe,
    No(Why<'s>),
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let asked = super::mig_requests(t);
        if asked.is_empty() {
            continue;
        }
        // Landing nowhere is `nodeselector-matches-no-nodepool`'s finding.
        let pools = ix.landing_pools(ti);
        if pools.is_empty() {
            continue;
        }
        let setup = ix.gpu_setup();
        let pod = t.constraints();
        for (resource, profile, at) in asked {
            let mut misses: Vec<(usize, Why)> = Vec::new();
            for &p in &pools {
                match offer(setup, pod, &ix.nodepools[p], profile) {
                    Offer::Maybe => {
                        misses.clear();
                        break;
                    }
                    Offer::No(why) => misses.push((p, why)),
                }
            }
            if !misses.is_empty() {
                out.push(finding(cx, t, (resource, profile, at), &misses));
            }
        }
    }
}

fn offer<'s>(
    setup: &'s GpuSetup,
    pod: &PodConstraints<'_>,
    pool: &'s NodePool<'_>,
    profile: &str,
) -> Offer<'s> {
    let Some(types) = instances_for(pod, pool).filter(|is| !is.is_empty()) else {
        return Offer::Maybe;
    };
    let mut models: Vec<&'static MigGpu> = Vec::new();
    let mut plain: Vec<&'static str> = Vec::new();
    for i in &types {
        match i.mig() {
            Some(m) if !models.contains(&m) => models.push(m),
            Some(_) => {}
            None if !plain.contains(&i.gpu_name) => plain.push(i.gpu_name),
            None => {}
        }
    }
    let capable: Vec<&'static MigGpu> = models
        .iter()
        .copied()
        .filter(|m| m.offers(profile))
        .collect();
    if capable.is_empty() {
        return Offer::No(if models.is_empty() {
            Why::NoMig(plain)
        } else {
            Why::NotOnModel(models)
        });
    }
    let Some((layout, at)) = setup.layout_for(pool) else {
        return Offer::Maybe;
    };
    let gives: Vec<String> = match layout {
        PoolLayout::Unknown(_) => return Offer::Maybe,
        PoolLayout::Custom(def) => def.value.devices.iter().map(|(p, _)| p.clone()).collect(),
        PoolLayout::Default(_, l) => {
            let mut g: Vec<String> = Vec::new();
            for m in &capable {
                for (p, _) in l.devices(m).unwrap_or_default() {
                    if !g.iter().any(|x| x == p) {
                        g.push(p.to_string());
                    }
                }
            }
            g
        }
    };
    if gives.iter().any(|p| p == profile) {
        return Offer::Maybe;
    }
    Offer::No(Why::Layout { layout, at, gives })
}

fn finding(
    cx: &Ctx,
    t: &PodTemplate,
    (resource, profile, at): (&str, &str, Node<'_>),
    misses: &[(usize, Why)],
) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let reasons: Vec<String> = misses
        .iter()
        .map(|(p, why)| reason(&ix.nodepools[*p], why))
        .collect();
    let mut d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for `{resource}`, but no NodePool it can land on provides that MIG profile: {}; no node advertises it and its pods stay Pending",
                super::describe_template(owner, t),
                reasons.join("; "),
            ),
        )
        .help(help(profile, misses));
    if misses.iter().any(|(_, w)| matches!(w, Why::Layout { .. })) {
        // The layouts may be redefined by a MIG manager configuration outside the files.
        d.severity = Severity::Warning;
    }
    for (p, why) in misses.iter().take(3) {
        let pool = &ix.nodepools[*p];
        d = match why {
            Why::Layout { at, .. } => d.related(
                *at,
                format!("NodePool `{}` picks its MIG layout here", pool.name),
            ),
            _ => d.related(
                pool.loc(bounding_requirement(pool)),
                format!("NodePool `{}` limits its instance types here", pool.name),
            ),
        };
    }
    d
}

fn reason(pool: &NodePool, why: &Why) -> String {
    match why {
        Why::NoMig(gpus) => format!(
            "NodePool `{}` launches only GPUs without MIG ({})",
            pool.name,
            gpus.join(", ")
        ),
        Why::NotOnModel(models) => {
            let each: Vec<String> = models
                .iter()
                .map(|m| {
                    format!(
                        "{} GPUs ({}), whose MIG profiles are {}",
                        m.model,
                        types_of(m).join(", "),
                        m.resource_profiles().join(", ")
                    )
                })
                .collect();
            format!("NodePool `{}` launches {}", pool.name, each.join(", and "))
        }
        Why::Layout { layout, gives, .. } => {
            let makes = match layout {
                PoolLayout::Default(_, Layout::Disabled) => "which turns MIG off".to_string(),
                _ if gives.is_empty() => "which makes no MIG instance on its GPUs".to_string(),
                _ => format!("which makes only {}", crate::diag::backticked(gives, ", ")),
            };
            format!(
                "NodePool `{}` labels its nodes `nvidia.com/mig.config: {}`, {makes}",
                pool.name,
                layout.name()
            )
        }
    }
}

/// The catalog's instance types with GPUs of this model.
fn types_of(m: &MigGpu) -> Vec<&'static str> {
    instances()
        .iter()
        .filter(|i| i.mig().is_some_and(|g| std::ptr::eq(g, m)))
        .map(|i| i.instance_type)
        .collect()
}

fn help(profile: &str, misses: &[(usize, Why)]) -> String {
    // Instance families whose GPUs have the profile, for "or let it land on …".
    let mut families: Vec<&str> = Vec::new();
    for i in instances().iter().filter(|i| offers(i, profile)) {
        if !families.contains(&i.family) {
            families.push(i.family);
        }
    }
    let elsewhere = if families.is_empty() {
        format!("no GPU of the catalog has `{profile}`")
    } else {
        format!(
            "or let it land on GPUs that have `{profile}` ({})",
            families.join(", ")
        )
    };
    match &misses[0].1 {
        Why::Layout { gives, .. } if !gives.is_empty() => format!(
            "ask for what the layout makes ({}), or give the pool a layout that makes `{profile}` (`nvidia.com/mig.config: all-{profile}`)",
            crate::diag::backticked(
                &gives
                    .iter()
                    .map(|g| format!("nvidia.com/mig-{g}"))
                    .collect::<Vec<_>>(),
                ", "
            )
        ),
        Why::Layout { .. } => format!(
            "give the pool a layout that makes `{profile}` (`nvidia.com/mig.config: all-{profile}`)"
        ),
        Why::NotOnModel(models) => {
            let near = nearest(models, profile);
            format!("ask for a profile these GPUs have (`nvidia.com/mig-{near}`), {elsewhere}")
        }
        Why::NoMig(_) => format!("ask for `nvidia.com/gpu` on these pools, {elsewhere}"),
    }
}

fn offers(i: &Instance, profile: &str) -> bool {
    i.mig().is_some_and(|m| m.offers(profile))
}

/// The profile of the models nearest the one asked: the same compute slices and the nearest
/// memory, else the smallest.
fn nearest(models: &[&MigGpu], profile: &str) -> &'static str {
    // `1g.20gb` → (1, 20).
    let parts = |p: &str| -> Option<(u32, u32)> {
        let (g, m) = p.split_once("g.")?;
        Some((g.parse().ok()?, m.strip_suffix("gb")?.parse().ok()?))
    };
    let all: Vec<&'static str> = models.iter().flat_map(|m| m.resource_profiles()).collect();
    let want = parts(profile);
    all.iter()
        .copied()
        .filter_map(|p| Some((p, parts(p)?)))
        .filter(|(_, (g, _))| want.is_some_and(|(wg, _)| wg == *g))
        .min_by_key(|(_, (_, m))| want.map_or(0, |(_, wm)| m.abs_diff(wm)))
        .map(|(p, _)| p)
        .or(all.first().copied())
        .unwrap_or("1g.10gb")
}
