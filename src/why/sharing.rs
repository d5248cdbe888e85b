//! What a shared or MIG GPU request is on each pool a pod lands on: the profile, the GPU model,
//! the layout or sharing configuration that makes it and how many one GPU gives; and the GPUs a
//! pod gets from DRA claims.

use super::{SharingRow, at};
use crate::catalog::mig::requested_profile;
use crate::index::{GpuSetup, Index, PoolLayout};
use crate::model::constraints::PodConstraints;
use crate::model::nvidia::MigStrategy;
use crate::model::{NodePool, PodTemplate};
use crate::sched::instances_for;

/// Rows for the template's shared and MIG requests on `pools`, then its DRA GPUs. Empty for a
/// template that asks for whole GPUs on pools that do not share them.
pub(super) fn rows(ix: &Index, t: &PodTemplate, pools: &[usize]) -> Vec<SharingRow> {
    let setup = ix.gpu_setup();
    let pod = t.constraints();
    let mut resources: Vec<&str> = Vec::new();
    for (name, _) in t.gpu_containers().flat_map(|c| c.accelerators()) {
        if name.starts_with("nvidia.com/") && !resources.contains(&name) {
            resources.push(name);
        }
    }
    let mut out = Vec::new();
    for r in resources {
        for &p in pools {
            let pool = &ix.nodepools[p];
            if let Some((what, loc)) = explain(setup, pod, pool, r) {
                out.push(SharingRow {
                    request: r.to_string(),
                    pool: Some(pool.name.to_string()),
                    what,
                    location: loc.map(|l| at(ix, l)),
                });
            }
        }
    }
    for g in t.dra_gpus() {
        let claim = &ix.objects[g.source];
        let count = match g.count {
            Some(1) => "1 device".to_string(),
            Some(n) => format!("{n} devices"),
            None => "every matching device".to_string(),
        };
        let kueue = g
            .kueue_resource
            .as_ref()
            .map_or(String::new(), |k| format!("; Kueue charges it to `{k}`"));
        out.push(SharingRow {
            request: format!("{} {}", claim.kind, claim.name_or_unnamed()),
            pool: None,
            what: format!("DRA device class `{}`, {count}{kueue}", g.class),
            location: Some(at(ix, claim.loc(g.class_node))),
        });
    }
    out
}

/// What one `resource` is on the pool's nodes, when it is shared or a MIG instance; `None` for
/// a whole GPU, or when the files cannot tell.
fn explain(
    setup: &GpuSetup,
    pod: &PodConstraints<'_>,
    pool: &NodePool<'_>,
    resource: &str,
) -> Option<(String, Option<crate::diag::Loc>)> {
    let shared = setup.sharing_of(pool, resource);
    let per_gpu = setup.per_gpu(pool, resource);
    let layout = setup.layout_for(pool);
    let strategy = setup.strategy_for(pool).map(|s| s.value);
    // The MIG profile a `nvidia.com/gpu` is under `single`, else the one asked by name.
    let base = shared.map_or(resource, |(_, _, r)| r.name.as_str());
    let profile: Option<String> = match requested_profile(base) {
        Some(p) => Some(p.to_string()),
        None if strategy == Some(MigStrategy::Single) => match layout {
            Some((PoolLayout::Default(_, l), _)) if l.enables_mig() => {
                let types = instances_for(pod, pool)?;
                let m = types.first()?.mig()?;
                let made = l.devices(m)?;
                (made.len() == 1).then(|| made[0].0.to_string())
            }
            _ => None,
        },
        None => None,
    };
    if profile.is_none() && shared.is_none() {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut loc = None;
    if let Some(p) = &profile {
        let models: Vec<&str> = instances_for(pod, pool)
            .unwrap_or_default()
            .iter()
            .filter_map(|i| i.mig())
            .filter(|m| m.offers(p))
            .map(|m| m.model)
            .fold(Vec::new(), |mut v, m| {
                if !v.contains(&m) {
                    v.push(m);
                }
                v
            });
        let of = match models.is_empty() {
            true => String::new(),
            false => format!(" on {}", models.join(" or ")),
        };
        parts.push(format!("a `{p}` MIG instance{of}"));
        match layout {
            Some((l, l_at)) => {
                parts.push(format!("layout `{}`", l.name()));
                loc = Some(l_at);
            }
            None => parts.push("no `nvidia.com/mig.config` label on the pool".to_string()),
        }
        if let Some(s) = strategy {
            parts.push(format!("MIG strategy `{}`", s.as_str()));
        }
    }
    if let Some((c, sharing, r)) = shared {
        let of = if profile.is_some() { "it" } else { "a GPU" };
        parts.push(format!(
            "one of {} {} shares of {of} (device plugin configuration `{}`)",
            r.replicas,
            sharing.kind.noun(),
            c.value.name
        ));
        loc = loc.or(Some(c.at));
    }
    if let Some(n) = per_gpu {
        parts.push(format!("{n} per GPU"));
    }
    Some((parts.join("; "), loc))
}
