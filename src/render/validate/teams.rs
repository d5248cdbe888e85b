//! Checks of the `teams` section: names, namespaces, and GPU quotas against class ceilings.

use super::hints::{did_you_mean, unique};
use super::{V, class_names};
use crate::render::platform::{ClassSpec, TeamSpec};
use crate::render::profile::{Profile, Team};
use crate::render::wrong::Wrong;
use crate::yaml::Span;
use serde_saphyr::Spanned;

pub(super) fn teams(
    v: &mut V,
    p: &Profile,
    classes: &[Option<ClassSpec>],
) -> Vec<Option<TeamSpec>> {
    let class_names = class_names(p);
    let listed = unique(&class_names);
    let mut out: Vec<Option<TeamSpec>> = Vec::new();
    let mut namespaces: Vec<(String, Span)> = Vec::new();
    for (i, t) in p.teams.iter().enumerate() {
        if let Some(first) = p.teams[..i].iter().find(|o| o.name.value == t.name.value) {
            let fs = v.at(&first.name);
            v.err(
                Wrong::Duplicate,
                &t.name,
                format!("team `{}` is defined twice", t.name.value),
            )
            .related(fs, "first defined here")
            .help("team names must be unique");
            out.push(None);
            continue;
        }
        let mut ok = v.dns_label(&t.name, "team", 63);
        let (namespace, ns_span) = match &t.namespace {
            Some(ns) => {
                ok &= v.dns_label(ns, "namespace", 63);
                (ns.value.clone(), v.at(ns))
            }
            None => (t.name.value.clone(), v.at(&t.name)),
        };
        if namespace.starts_with("kube-") {
            let at = t.namespace.as_ref().unwrap_or(&t.name);
            v.err(
                Wrong::NotAllowed,
                at,
                format!("namespace `{namespace}` is reserved for Kubernetes"),
            );
            ok = false;
        }
        if let Some((_, first)) = namespaces.iter().find(|(n, _)| *n == namespace) {
            let first = *first;
            let at = t.namespace.as_ref().unwrap_or(&t.name);
            v.err(
                Wrong::Duplicate,
                at,
                format!("namespace `{namespace}` belongs to two teams"),
            )
            .related(first, "first used here")
            .help("each team needs its own namespace: queues and quotas are per namespace");
            ok = false;
        } else {
            namespaces.push((namespace.clone(), ns_span));
        }
        if t.gpu_quota.0.is_empty() {
            v.err(
                Wrong::MissingKey,
                &t.name,
                format!("team `{}` has no `gpuQuota`", t.name.value),
            )
            .help(format!(
                "list the classes it may use with their GPUs, e.g. `gpuQuota: {{{}: 8}}`",
                listed.first().unwrap_or(&"training")
            ));
            ok = false;
        }
        let mut quotas = Vec::new();
        for (k, q) in &t.gpu_quota.0 {
            let Some(ci) = class_names.iter().position(|c| *c == k.value) else {
                v.err(
                    Wrong::Undefined,
                    k,
                    format!(
                        "team `{}` uses class `{}`, which is not defined",
                        t.name.value, k.value
                    ),
                )
                .help(format!(
                    "{}defined classes: {}",
                    did_you_mean(&k.value, &listed),
                    listed.join(", ")
                ));
                ok = false;
                continue;
            };
            let cq_name = format!("{}-{}", t.name.value, k.value);
            if cq_name.len() > 63 {
                v.err(Wrong::OutOfRange, &t.name, format!("team and class names together are too long: ClusterQueue `{cq_name}` would exceed 63 characters"));
                ok = false;
            }
            let class = &p.classes.value[ci];
            if q.value > class.max_gpus.value {
                let cs = v.at(&class.max_gpus);
                v.err(Wrong::OverCeiling, q, format!(
                    "quota of {} GPUs for class `{}` is above the class ceiling of {}: Kueue would admit work the node pools can never launch",
                    q.value, k.value, class.max_gpus.value
                ))
                .related(cs, "ceiling (maxGpus) set here")
                .help(format!("lower the quota to at most {} or raise the class's maxGpus", class.max_gpus.value));
                ok = false;
            }
            quotas.push((k.value.clone(), q.value));
        }
        out.push(ok.then(|| TeamSpec {
            name: t.name.value.clone(),
            namespace,
            create_namespace: t.create_namespace,
            quotas,
        }));
    }
    // The teams' guaranteed GPUs in a class must fit under its ceiling together.
    for (ci, c) in p.classes.value.iter().enumerate() {
        if classes.get(ci).is_none_or(Option::is_none) {
            continue;
        }
        let entries: Vec<(&Team, &Spanned<u32>)> = p
            .teams
            .iter()
            .flat_map(|t| {
                t.gpu_quota
                    .0
                    .iter()
                    .filter(|(k, _)| k.value == c.name.value)
                    .map(move |(_, q)| (t, q))
            })
            .collect();
        let sum: u64 = entries.iter().map(|(_, q)| u64::from(q.value)).sum();
        if entries.len() > 1
            && sum > u64::from(c.max_gpus.value)
            && entries.iter().all(|(_, q)| q.value <= c.max_gpus.value)
        {
            let related: Vec<(Span, String)> = entries
                .iter()
                .map(|(t, q)| (v.at(*q), format!("team `{}`: {}", t.name.value, q.value)))
                .collect();
            let e = v.err(Wrong::OverCeiling, &c.max_gpus, format!(
                "the teams' quotas for class `{}` add up to {sum} GPUs, above its ceiling of {}: Kueue would admit work the node pools can never launch",
                c.name.value, c.max_gpus.value
            ));
            e.help("raise maxGpus or lower the quotas; teams can still borrow each other's unused quota");
            e.related = related;
        }
    }
    out
}
