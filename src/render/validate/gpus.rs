//! A class's `gpus` list resolved against the GPU instance catalog into a node selector.

use super::V;
use super::hints::did_you_mean;
use crate::catalog;
use crate::render::platform::GpuSelector;
use crate::render::profile::Class;
use crate::render::wrong::Wrong;

#[derive(Clone, Copy, PartialEq, Eq)]
enum GpuKind {
    Name,
    Family,
    Type,
}

pub(super) fn gpu_selector(
    v: &mut V,
    c: &Class,
) -> Option<(GpuSelector, Vec<&'static catalog::Instance>)> {
    let all = catalog::instances();
    let names = catalog::gpu_names();
    let mut families: Vec<&str> = all.iter().map(|i| i.family).collect();
    families.dedup();
    if c.gpus.value.is_empty() {
        v.err(Wrong::OutOfRange, &c.gpus, format!("class `{}` lists no GPUs", c.name.value))
            .help("list GPU names (a100, h100, l4, a10g…), instance families (p5, g6e) or instance types (p5.48xlarge)");
        return None;
    }
    let mut kinds: Vec<(GpuKind, &str)> = Vec::new();
    let mut bad = false;
    for (i, g) in c.gpus.value.iter().enumerate() {
        let s = g.value.as_str();
        if let Some(first) = c.gpus.value[..i].iter().find(|o| o.value == g.value) {
            let fs = v.at(first);
            v.err(Wrong::Duplicate, g, format!("GPU `{s}` is listed twice"))
                .related(fs, "first listed here");
            continue;
        }
        let kind = if s.contains('.') {
            all.iter()
                .any(|i| i.instance_type == s)
                .then_some(GpuKind::Type)
        } else if names.contains(&s) {
            Some(GpuKind::Name)
        } else if families.contains(&s) {
            Some(GpuKind::Family)
        } else {
            None
        };
        match kind {
            Some(k) => kinds.push((k, s)),
            None => {
                bad = true;
                let what = if s.contains('.') {
                    "instance type"
                } else {
                    "GPU name"
                };
                let mut candidates: Vec<&str> = names.to_vec();
                candidates.extend(families.iter().copied());
                if s.contains('.') {
                    candidates = all.iter().map(|i| i.instance_type).collect();
                }
                let hint = did_you_mean(s, &candidates);
                v.err(Wrong::Undefined, g, format!("unknown {what} `{s}`: it is not in the GPU instance catalog"))
                    .help(format!(
                        "{hint}GPU names: {}; instance families: {}; or an instance type such as p5.48xlarge",
                        names.join(", "),
                        families.join(", ")
                    ));
            }
        }
    }
    if bad || kinds.is_empty() {
        return None;
    }
    let instances: Vec<&'static catalog::Instance> = all
        .iter()
        .filter(|i| {
            kinds.iter().any(|(k, s)| match k {
                GpuKind::Name => i.gpu_name == *s,
                GpuKind::Family => i.family == *s,
                GpuKind::Type => i.instance_type == *s,
            })
        })
        .collect();
    let first = kinds[0].0;
    let values = |k: GpuKind| {
        kinds
            .iter()
            .filter(|(kk, _)| *kk == k)
            .map(|(_, s)| s.to_string())
            .collect::<Vec<_>>()
    };
    let selector = if kinds.iter().all(|(k, _)| *k == first) {
        match first {
            GpuKind::Name => GpuSelector::Names(values(GpuKind::Name)),
            GpuKind::Family => GpuSelector::Families(values(GpuKind::Family)),
            GpuKind::Type => GpuSelector::Types(values(GpuKind::Type)),
        }
    } else {
        // Different kinds would be different requirement keys, which Karpenter ANDs: list the
        // instance types instead.
        GpuSelector::Types(
            instances
                .iter()
                .map(|i| i.instance_type.to_string())
                .collect(),
        )
    };
    Some((selector, instances))
}
