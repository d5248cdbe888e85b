//! Checks of a class's `sharing`: one way of sharing, a MIG profile its GPUs have (the class
//! keeps only the instance types whose GPUs have it), replicas that share something, and no
//! time-slicing or MPS for training; and, over the classes, what the cluster must provide.

use super::V;
use super::hints::did_you_mean;
use crate::catalog::mig::{MigGpu, is_known_profile, requested_profile};
use crate::catalog::mig_layouts::Layout;
use crate::catalog::{Instance, instances};
use crate::render::platform::{AmiFamily, GpuSelector, SharingSpec};
use crate::render::profile::{Class, ClassType, MigStrategyChoice, Profile, Replicas};
use crate::render::wrong::Wrong;

/// The class's sharing, and its selector and instances narrowed to the GPUs that take it.
pub(super) type Shared = (Option<SharingSpec>, GpuSelector, Vec<&'static Instance>);

pub(super) fn sharing(
    v: &mut V,
    c: &Class,
    selector: GpuSelector,
    types: Vec<&'static Instance>,
) -> Option<Shared> {
    let Some(sp) = &c.sharing else {
        return Some((None, selector, types));
    };
    let s = &sp.value;
    let modes = [s.mig.is_some(), s.time_slicing.is_some(), s.mps.is_some()];
    match modes.iter().filter(|m| **m).count() {
        0 => {
            v.err(
                Wrong::MissingKey,
                sp,
                "`sharing` names no way of sharing the GPUs",
            )
            .help("give one of `mig: 1g.10gb`, `timeSlicing: {replicas: 4}`, `mps: {replicas: 4}`");
            return None;
        }
        1 => {}
        _ => {
            v.err(
                Wrong::Conflict,
                sp,
                "`sharing` gives more than one way of sharing: a class's GPUs are shared one way",
            )
            .help("keep one of `mig`, `timeSlicing` and `mps`; make another class for the other");
            return None;
        }
    }
    if s.strategy.is_some() && s.mig.is_none() {
        v.err(
            Wrong::Conflict,
            sp,
            "`strategy` is the MIG strategy: it goes with `mig`",
        )
        .help("drop `strategy`");
        return None;
    }
    if let Some(profile) = &s.mig {
        let strategy = s.strategy.unwrap_or(MigStrategyChoice::Single);
        return mig(v, c, profile, strategy, types);
    }
    let (replicas, spec): (&Replicas, fn(u32) -> SharingSpec) = match (&s.time_slicing, &s.mps) {
        (Some(r), _) => (r, |n| SharingSpec::TimeSlicing { replicas: n }),
        (_, Some(r)) => (r, |n| SharingSpec::Mps { replicas: n }),
        _ => return None,
    };
    if replicas.replicas.value < 2 {
        v.err(
            Wrong::OutOfRange,
            &replicas.replicas,
            format!(
                "{} replica{} per GPU shares nothing",
                replicas.replicas.value,
                if replicas.replicas.value == 1 {
                    ""
                } else {
                    "s"
                }
            ),
        )
        .help("give the pods per GPU, at least 2");
        return None;
    }
    if c.class_type == ClassType::Training {
        v.err(Wrong::Conflict, sp, format!(
            "class `{}` is for training, whose pods get no isolation on time-sliced or MPS-shared GPUs: a neighbour's allocation or crash can kill the run",
            c.name.value
        ))
        .help("share GPUs in inference or development classes, or cut them with `mig`, whose instances are isolated");
        return None;
    }
    Some((Some(spec(replicas.replicas.value)), selector, types))
}

fn mig(
    v: &mut V,
    c: &Class,
    profile: &serde_saphyr::Spanned<String>,
    strategy: MigStrategyChoice,
    types: Vec<&'static Instance>,
) -> Option<Shared> {
    let p = profile.value.as_str();
    let name = format!("nvidia.com/mig-{p}");
    if requested_profile(&name) != Some(p) || !is_known_profile(p) {
        let known = crate::catalog::mig::all_resource_profiles();
        v.err(Wrong::InvalidValue, profile, format!("`{p}` is not a MIG profile of any GPU gpuops knows"))
            .help(format!(
                "{}profiles are `<compute>g.<memory>gb` and follow the GPU's memory: `1g.10gb` … `7g.80gb` on an 80 GB A100 or H100",
                did_you_mean(p, &known)
            ));
        return None;
    }
    let capable: Vec<&'static Instance> = types
        .iter()
        .copied()
        .filter(|i| i.mig().is_some_and(|m| m.offers(p)))
        .collect();
    if capable.is_empty() {
        let mut said: Vec<String> = Vec::new();
        for i in &types {
            let line = match i.mig() {
                Some(m) => format!("{} has {}", m.model, m.resource_profiles().join(", ")),
                None => format!("{} has no MIG", i.gpu_name),
            };
            if !said.contains(&line) {
                said.push(line);
            }
        }
        let mut families: Vec<&str> = Vec::new();
        for i in instances()
            .iter()
            .filter(|i| i.mig().is_some_and(|m| m.offers(p)))
        {
            if !families.contains(&i.family) {
                families.push(i.family);
            }
        }
        v.err(
            Wrong::Unschedulable,
            profile,
            format!(
                "no GPU of class `{}` has MIG profile `{p}`: {}",
                c.name.value,
                said.join("; ")
            ),
        )
        .help(format!(
            "use a profile these GPUs have, or GPUs that have `{p}` ({})",
            families.join(", ")
        ));
        return None;
    }
    let layout = Layout::Uniform {
        profile: p,
        media: false,
    };
    let per_gpu = capable
        .iter()
        .filter_map(|i| i.mig())
        .filter_map(|m: &MigGpu| layout.devices(m))
        .filter_map(|d| d.first().map(|(_, n)| *n))
        .min()?;
    // The NodePool launches only instance types whose GPUs take the profile.
    let selector = GpuSelector::Types(
        capable
            .iter()
            .map(|i| i.instance_type.to_string())
            .collect(),
    );
    Some((
        Some(SharingSpec::Mig {
            profile: p.to_string(),
            strategy,
            per_gpu,
        }),
        selector,
        capable,
    ))
}

/// What sharing asks of the cluster: the GPU operator (so AL2023 nodes, and no device plugin
/// DaemonSet of gpuops' own), and one MIG strategy.
pub(super) fn cluster_needs(v: &mut V, p: &Profile, family: AmiFamily) {
    let mut first_strategy: Option<(MigStrategyChoice, &str)> = None;
    for c in &p.classes.value {
        let Some(sp) = &c.sharing else { continue };
        if family == AmiFamily::Bottlerocket {
            let at = v.at(&p.cluster.ami_alias);
            v.err(Wrong::Conflict, sp, "Bottlerocket runs the NVIDIA device plugin on the host, configured by its own settings: gpuops renders GPU sharing for AL2023 nodes with the NVIDIA GPU operator")
                .related(at, "Bottlerocket chosen here")
                .help("use an `al2023@…` AMI alias, or drop `sharing`");
        } else if let Some(dp) = &p.device_plugin {
            let at = v.at(dp);
            v.err(Wrong::Conflict, sp, "gpuops' device plugin DaemonSet reads no per-node configuration, so it cannot share GPUs: the NVIDIA GPU operator does")
                .related(at, "device plugin DaemonSet asked for here")
                .help("drop `devicePlugin` and point the GPU operator at the rendered ConfigMap");
        }
        if c.sharing.as_ref().is_some_and(|s| s.value.mig.is_some()) {
            let strategy = sp.value.strategy.unwrap_or(MigStrategyChoice::Single);
            match first_strategy {
                None => first_strategy = Some((strategy, c.name.value.as_str())),
                Some((s, other)) if s != strategy => {
                    v.err(Wrong::Conflict, sp, format!(
                        "class `{}` asks for another MIG strategy than class `{other}`: the GPU operator runs one for the cluster",
                        c.name.value
                    ))
                    .help("give every MIG class the same `strategy` (default `single`)");
                }
                Some(_) => {}
            }
        }
    }
}
