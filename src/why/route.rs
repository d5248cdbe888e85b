//! The Kueue route of a pod template for `gpuops why`: its LocalQueue, ClusterQueue, the flavors
//! it may be admitted to and the quota each has left.

use super::{FlavorRow, QuotaRow, Route, at};
use crate::index::Index;
use crate::model::Object;

pub(super) fn route(ix: &Index, ti: usize) -> Option<Route> {
    let q = ix.queues.get(ti).copied().flatten()?;
    let t = &ix.templates[ti];
    let owner = ix.owner(t);
    let queue = q
        .label
        .and_then(|n| n.as_str())
        .unwrap_or("default")
        .to_string();
    let lq = q.local_queue.and_then(|i| ix.local_queues.get(i));
    let cq_name = lq
        .and_then(|l| l.cluster_queue)
        .and_then(|n| n.as_str())
        .map(str::to_string);
    let cq = q.cluster_queue.and_then(|i| ix.cluster_queues.get(i));
    let ns = owner.namespace.unwrap_or("default");
    let mut blocked = None;
    let mut flavors = Vec::new();
    match (lq, cq) {
        (None, _) => {
            // A misspelt queue name is the usual cause: suggest the closest LocalQueue.
            let hint = ix
                .local_queues
                .iter()
                .map(|l| (crate::text::edit_distance(&queue, l.name), l))
                .filter(|(d, _)| *d <= 2)
                .min_by_key(|(d, _)| *d)
                .map(|(_, l)| {
                    format!(
                        " (did you mean `{}/{}`?)",
                        l.namespace.unwrap_or("default"),
                        l.name
                    )
                })
                .unwrap_or_default();
            blocked = Some(format!("LocalQueue `{ns}/{queue}` does not exist{hint}"))
        }
        (Some(_), None) => {
            blocked = Some(match &cq_name {
                Some(n) => {
                    format!("ClusterQueue `{n}` (of LocalQueue `{ns}/{queue}`) does not exist")
                }
                None => format!("LocalQueue `{ns}/{queue}` names no ClusterQueue"),
            })
        }
        (Some(_), Some(cq)) => {
            let quotas = crate::index::QuotaIndex::build(ix);
            let admissions = crate::index::admission(ix, &quotas, t.owner)
                .map(|(_, a)| a)
                .unwrap_or_default();
            let assigned: Vec<Option<usize>> = crate::index::assignable_variants(ix, ti)
                .into_iter()
                .map(|v| v.flavor)
                .collect();
            let cq_obj = &ix.objects[cq.obj];
            for (name, node, _) in &cq.flavors {
                if flavors.iter().any(|f: &FlavorRow| f.name == *name) {
                    continue;
                }
                let Some(fi) = ix.flavor(name) else {
                    flavors.push(FlavorRow {
                        name: name.to_string(),
                        location: Some(at(ix, cq_obj.loc(*node))),
                        assignable: false,
                        reason: Some("the ResourceFlavor does not exist".into()),
                        pod: None,
                        flavor: None,
                        quota: Vec::new(),
                    });
                    continue;
                };
                let fobj = &ix.objects[ix.flavors[fi].obj];
                let location = Some(at(ix, fobj.loc(fobj.anchor())));
                let row = match crate::index::flavor_reject(ix, ti, fi) {
                    None if assigned.contains(&Some(fi)) => FlavorRow {
                        name: name.to_string(),
                        location,
                        assignable: true,
                        reason: None,
                        pod: None,
                        flavor: None,
                        quota: Vec::new(),
                    },
                    None => FlavorRow {
                        name: name.to_string(),
                        location,
                        assignable: false,
                        reason: Some("covers no GPU resource the pod requests".into()),
                        pod: None,
                        flavor: None,
                        quota: Vec::new(),
                    },
                    Some(crate::index::FlavorReject::Labels { key, pod, flavor }) => FlavorRow {
                        name: name.to_string(),
                        location,
                        assignable: false,
                        reason: Some(match flavor {
                            Some(_) => format!("its nodeLabels disagree with the pod on `{key}`"),
                            None => format!("it sets no `{key}` the pod selects"),
                        }),
                        pod: Some(at(ix, pod)),
                        flavor: flavor.map(|l| at(ix, l)),
                        quota: Vec::new(),
                    },
                    Some(crate::index::FlavorReject::Taint { taint, flavor }) => FlavorRow {
                        name: name.to_string(),
                        location,
                        assignable: false,
                        reason: Some(format!("the pod does not tolerate its nodeTaint `{taint}`")),
                        pod: None,
                        flavor: Some(at(ix, flavor)),
                        quota: Vec::new(),
                    },
                };
                flavors.push(FlavorRow {
                    quota: quota_rows(ix, &quotas, cq, name, &admissions, cq_obj),
                    ..row
                });
            }
            if !flavors.is_empty() && flavors.iter().all(|f| !f.assignable) {
                blocked = Some(format!(
                    "no flavor of ClusterQueue `{}` can be assigned",
                    cq.name
                ));
            } else if let Some(a) = admissions.iter().find(|a| a.fits == Some(false)) {
                blocked = Some(format!(
                    "the workload needs {} {} at once, more than ClusterQueue `{}` may ever admit on the flavors it may get (at most {})",
                    a.request.total(),
                    a.request.resource,
                    cq.name,
                    a.max.map_or("?".into(), crate::index::show_quantity)
                ));
            }
        }
    }
    Some(Route {
        local_queue_name: format!("{ns}/{queue}"),
        queue,
        queue_label: q.label.map(|n| at(ix, owner.loc(n))),
        local_queue: lq.map(|l| {
            let o = &ix.objects[l.obj];
            at(ix, o.loc(o.anchor()))
        }),
        cluster_queue_name: cq_name,
        cluster_queue: cq.map(|c| {
            let o = &ix.objects[c.obj];
            at(ix, o.loc(o.anchor()))
        }),
        flavors,
        blocked,
    })
}

/// The quota a ClusterQueue gives one of its flavors for each GPU resource, against what the
/// workload asks for.
fn quota_rows(
    ix: &Index,
    quotas: &crate::index::QuotaIndex,
    cq: &crate::model::ClusterQueue,
    flavor: &str,
    admissions: &[crate::index::Admission],
    cq_obj: &Object,
) -> Vec<QuotaRow> {
    let Some(fq) = cq.flavor_quotas(flavor) else {
        return Vec::new();
    };
    let written =
        |q: Option<crate::model::Quantity>| q.and_then(|q| q.node.as_str().map(str::to_string));
    fq.resources
        .iter()
        .filter(|r| crate::model::is_gpu_resource(r.name))
        .filter_map(|r| {
            let cap = quotas.cap(cq, flavor, r.name)?;
            Some(QuotaRow {
                resource: r.name.to_string(),
                nominal: written(r.nominal),
                borrowing_limit: written(r.borrowing_limit),
                cohort: cap.cohort.map(str::to_string),
                max: cap.max.map(crate::index::show_quantity),
                request: admissions
                    .iter()
                    .find(|a| a.request.resource == r.name)
                    .map(|a| a.request.total()),
                summary: cap.describe(),
                location: at(ix, cq_obj.loc(cap.node())),
            })
        })
        .collect()
}
