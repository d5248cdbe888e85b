//! Whether a template's GPUs are time-sliced or MPS-shared, and how.

use crate::diag::Loc;
use crate::index::Index;
use crate::model::nvidia::plugin_config::SharingKind;

/// A shared GPU resource a template asks for.
#[derive(Debug, Clone)]
pub struct Shared {
    /// How, when the device plugin configuration is in the files (`None`: only the `.shared`
    /// name tells).
    pub kind: Option<SharingKind>,
    /// Pods per GPU, when known (the fewest among the pools).
    pub replicas: Option<u32>,
    /// Whether every pool's plugin refuses a container more than one replica.
    pub fails_above_one: bool,
    /// Where the sharing is configured, and by what (the first pool's configuration).
    pub config: Option<(Loc, String)>,
}

impl Shared {
    /// `time-sliced (4 pods per GPU)`, `shared (time-sliced or MPS)`.
    pub fn describe(&self) -> String {
        let how = self
            .kind
            .map_or("shared (time-sliced or MPS)", SharingKind::noun);
        match self.replicas {
            Some(n) => format!("{how} ({n} pods per GPU)"),
            None => how.to_string(),
        }
    }
}

/// Whether template `ti`'s `resource` is a shared GPU: the device plugin advertises a
/// replicated resource under that name on the nodes of every pool the template can land on, or
/// the name itself says so (`nvidia.com/gpu.shared`, what `renameByDefault` advertises).
pub fn shared(ix: &Index<'_>, ti: usize, resource: &str) -> Option<Shared> {
    let setup = ix.gpu_setup();
    let by_name = resource.starts_with("nvidia.com/") && resource.ends_with(".shared");
    // Without a sharing configuration in the files only the name can tell.
    if !setup.shares_gpus() && !by_name {
        return None;
    }
    let pools = ix.landing_pools(ti);
    let per_pool: Option<Vec<_>> = (!pools.is_empty())
        .then(|| {
            pools
                .iter()
                .map(|&p| setup.sharing_of(&ix.nodepools[p], resource))
                .collect()
        })
        .flatten();
    if let Some(per_pool) = per_pool {
        let (c, sharing, _) = per_pool[0];
        return Some(Shared {
            kind: Some(sharing.kind),
            replicas: per_pool.iter().map(|(_, _, r)| r.replicas).min(),
            fails_above_one: per_pool.iter().all(|(_, s, _)| s.fails_above_one()),
            config: Some((c.at, c.source.clone())),
        });
    }
    by_name.then_some(Shared {
        kind: None,
        replicas: None,
        fails_above_one: false,
        config: None,
    })
}
