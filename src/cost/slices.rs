//! What one slice of a shared GPU costs: an instance's price over its GPUs over what one GPU is
//! advertised as (MIG instances of the pool's layout, time-sliced or MPS replicas), per pool that
//! shares its GPUs, with the compute a MIG layout puts to use.

use super::CostSettings;
use crate::catalog::Instance;
use crate::catalog::mig::MigGpu;
use crate::index::{Index, PoolLayout};
use crate::model::NodePool;
use crate::model::nvidia::MigStrategy;
use crate::sched::bounded_instances;
use serde::Serialize;

/// Compute slices of a MIG GPU.
const SLICES: u32 = 7;

/// One shared resource of one pool, priced per slice.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SliceCost {
    pub pool: String,
    /// What pods ask for: `nvidia.com/mig-1g.10gb`, `nvidia.com/gpu.shared`.
    pub resource: String,
    /// `MIG layout `all-1g.10gb``, `time-sliced, configuration `ts-4``.
    pub how: String,
    /// How many of it one GPU is advertised as.
    pub per_gpu: u32,
    /// The pool's instance type with the cheapest GPU-hour, and that price.
    pub instance_type: String,
    pub gpu_usd_hour: f64,
    pub slice_usd_hour: f64,
    /// For a MIG layout: the compute slices its instances use of the 7 of a GPU.
    pub compute_slices_used: Option<u32>,
}

/// Every pool's shared resources, in pool order.
pub fn slices(ix: &Index<'_>, cs: &CostSettings) -> Vec<SliceCost> {
    let setup = ix.gpu_setup();
    let mut out = Vec::new();
    for pool in &ix.nodepools {
        let Some((instance, gpu_usd)) = cheapest_gpu(pool, cs) else {
            continue;
        };
        let mut shared: Vec<(String, String, Option<u32>)> = Vec::new();
        if let Some((layout, _)) = setup.layout_for(pool)
            && let Some(m) = instance.mig()
            && let Some(made) = made(layout, m)
            && !made.is_empty()
        {
            let how = format!("MIG layout `{}`", layout.name());
            let used = made
                .iter()
                .map(|(p, n)| profile_slices(p) * n)
                .sum::<u32>()
                .min(SLICES);
            match setup.strategy_for(pool).map(|s| s.value) {
                Some(MigStrategy::Single) => {
                    shared.push(("nvidia.com/gpu".into(), how, Some(used)));
                }
                _ => {
                    for (p, _) in &made {
                        shared.push((format!("nvidia.com/mig-{p}"), how.clone(), Some(used)));
                    }
                }
            }
        }
        if let Some(c) = setup.plugin_config_for(pool)
            && let Some(s) = &c.value.sharing
        {
            for r in s.resources.iter().filter(|r| r.replicas > 1) {
                let how = format!("{}, configuration `{}`", s.kind.noun(), c.value.name);
                match shared.iter_mut().find(|(n, _, _)| *n == r.advertised) {
                    // MIG instances shared in turn: both say how.
                    Some(row) => row.1 = format!("{}; {how}", row.1),
                    None => shared.push((r.advertised.clone(), how, None)),
                }
            }
        }
        for (resource, how, used) in shared {
            let Some(per_gpu) = setup.per_gpu(pool, &resource).filter(|n| *n > 0) else {
                continue;
            };
            out.push(SliceCost {
                pool: pool.name.to_string(),
                resource,
                how,
                per_gpu,
                instance_type: instance.instance_type.to_string(),
                gpu_usd_hour: gpu_usd,
                slice_usd_hour: gpu_usd / f64::from(per_gpu),
                compute_slices_used: used,
            });
        }
    }
    out
}

/// The pool's instance type with the cheapest GPU-hour (the pool's instance types must be
/// bounded: an open set says nothing of which GPU a slice is of).
fn cheapest_gpu(pool: &NodePool<'_>, cs: &CostSettings) -> Option<(&'static Instance, f64)> {
    bounded_instances(pool)?
        .into_iter()
        .filter(|i| i.gpu_count > 0)
        .filter_map(|i| Some((i, cs.price(i)? / f64::from(i.gpu_count))))
        .min_by(|a, b| {
            a.1.total_cmp(&b.1)
                .then(a.0.instance_type.cmp(b.0.instance_type))
        })
}

/// The MIG instances a layout makes on one GPU of model `m` (`None`: unknown layout, or one
/// that cannot apply to the model).
fn made(layout: PoolLayout<'_>, m: &MigGpu) -> Option<Vec<(String, u32)>> {
    match layout {
        PoolLayout::Default(_, l) => Some(
            l.devices(m)?
                .into_iter()
                .map(|(p, n)| (p.to_string(), n))
                .collect(),
        ),
        PoolLayout::Custom(def) => Some(def.value.devices.clone()),
        PoolLayout::Unknown(_) => None,
    }
}

/// The compute slices of a profile (`3` of `3g.40gb`).
fn profile_slices(profile: &str) -> u32 {
    profile
        .split_once('g')
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}

/// The human table of the slices, after the others (nothing when no pool shares its GPUs).
pub(super) fn human(rows: &[SliceCost]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut table = vec![
        [
            "POOL",
            "RESOURCE",
            "HOW",
            "PER GPU",
            "INSTANCE",
            "$/GPU-H",
            "$/SLICE-H",
            "COMPUTE USED",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for r in rows {
        table.push(vec![
            r.pool.clone(),
            r.resource.clone(),
            r.how.clone(),
            r.per_gpu.to_string(),
            r.instance_type.clone(),
            super::usd(r.gpu_usd_hour),
            super::usd(r.slice_usd_hour),
            r.compute_slices_used
                .map_or("-".into(), |u| format!("{u}/{SLICES}")),
        ]);
    }
    format!(
        "\nShared GPUs: one slice (on-demand $/h, the pool's cheapest GPU-hour)\n{}",
        super::table(&table)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::source::SourceFile;

    #[test]
    fn a_slice_is_the_gpu_hour_over_what_one_gpu_is_advertised_as() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/rules/shared-gpu-pool-ambiguous/fail.yaml"
        ))
        .unwrap();
        let files = vec![SourceFile::from_text("a.yaml".into(), text)];
        let settings = Settings::default();
        let ix = Index::build(&files, &settings);
        let got = slices(&ix, &settings.cost);
        assert_eq!(got.len(), 1);
        let s = &got[0];
        assert_eq!(
            (s.pool.as_str(), s.resource.as_str(), s.per_gpu),
            ("a100-mig", "nvidia.com/gpu", 7)
        );
        assert_eq!(s.compute_slices_used, Some(7));
        // p4de.24xlarge: $27.45/h for 8 GPUs, each cut into 7.
        assert!(
            (s.slice_usd_hour - 27.447 / 8.0 / 7.0).abs() < 0.01,
            "{s:?}"
        );
    }
}
