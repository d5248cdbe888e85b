//! Kueue's CRD CEL rules (`x-kubernetes-validations`), checked by hand for the built-in kinds:
//! ClusterQueue and Cohort resource groups, ClusterQueue preemption and flavor fungibility,
//! ResourceFlavor topology, Topology levels. The API server runs them, before any webhook.

use super::*;

const COUNT_RULE: &str = "flavors must have the same number of resources as the coveredResources";

/// ClusterQueue and Cohort: every flavor of a resource group lists as many resources as the
/// group covers. An empty list is the schema's finding (`minItems`), not this one.
pub fn flavor_resource_counts<'a>(spec: Node<'a>, kind: &str, out: &mut Vec<Violation<'a>>) {
    for (g, rg) in spec
        .get("resourceGroups")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let Some(covered) = rg.get("coveredResources").and_then(Node::as_seq) else {
            continue;
        };
        for fl in rg.get("flavors").into_iter().flat_map(Node::items) {
            let Some((rk, res)) = fl.entry("resources") else {
                continue;
            };
            let Some(listed) = res.as_seq() else {
                continue;
            };
            if listed.is_empty() || listed.len() == covered.len() {
                continue;
            }
            let fname = fl.get("name").and_then(Node::as_str).unwrap_or("?");
            push(
                out,
                rk,
                format!(
                    "flavor `{fname}` in `spec.resourceGroups[{g}]` lists {} resources but the group covers {}: {}",
                    listed.len(),
                    covered.len(),
                    cel_layer(kind, COUNT_RULE)
                ),
                Some("list one entry per covered resource, in the `coveredResources` order"),
            );
        }
    }
}

/// ClusterQueue: `borrowingLimit` only with a cohort.
pub fn borrowing_limits<'a>(spec: Node<'a>, cohort_field: &str, out: &mut Vec<Violation<'a>>) {
    if spec
        .get(cohort_field)
        .is_some_and(|c| !c.is_null() && c.as_str() != Some(""))
    {
        return;
    }
    for (g, rg) in spec
        .get("resourceGroups")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        for (fi, fl) in rg
            .get("flavors")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            for (ri, r) in fl
                .get("resources")
                .into_iter()
                .flat_map(Node::items)
                .enumerate()
            {
                if let Some((bk, bv)) = r.entry("borrowingLimit")
                    && !bv.is_null()
                {
                    push(
                        out,
                        bk,
                        format!(
                            "`spec.resourceGroups[{g}].flavors[{fi}].resources[{ri}].borrowingLimit` is set but the ClusterQueue has no `{cohort_field}` (nothing to borrow from): {}",
                            cel_layer(
                                "ClusterQueue",
                                "borrowingLimit must be nil when cohort is empty"
                            )
                        ),
                        Some("drop `borrowingLimit`, or put the queue in a cohort"),
                    );
                }
            }
        }
    }
}

/// ClusterQueue preemption: `borrowWithinCohort` needs `reclaimWithinCohort` other than
/// `Never` (its default).
pub fn preemption<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some(p) = spec.get("preemption") else {
        return;
    };
    let reclaim = p.get("reclaimWithinCohort").and_then(Node::as_str);
    let Some(policy) = p.at(&["borrowWithinCohort", "policy"]) else {
        return;
    };
    if let Some(pol) = text(Some(policy))
        && pol != "Never"
        && reclaim.is_none_or(|r| r == "Never")
        && !reclaim.is_some_and(is_placeholder)
    {
        push(
            out,
            policy,
            format!(
                "`spec.preemption.borrowWithinCohort.policy` is `{pol}` while `reclaimWithinCohort` is `Never`{} (borrowing within the cohort needs reclaiming within it): {}",
                if reclaim.is_none() {
                    " (its default)"
                } else {
                    ""
                },
                cel_layer(
                    "ClusterQueue",
                    "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"
                )
            ),
            Some("set `reclaimWithinCohort` to `LowerPriority` or `Any`"),
        );
    }
}

/// ClusterQueue flavor fungibility: a `preference` only when `whenCanBorrow` and
/// `whenCanPreempt` are both `TryNextFlavor`, after their defaults (`MayStopSearch`,
/// `TryNextFlavor`).
pub fn flavor_fungibility<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some(f) = spec.get("flavorFungibility") else {
        return;
    };
    let Some(pref) = f.get("preference").filter(|p| !p.is_null()) else {
        return;
    };
    let mut wrong = Vec::new();
    for (field, default) in [
        ("whenCanBorrow", "MayStopSearch"),
        ("whenCanPreempt", "TryNextFlavor"),
    ] {
        let (value, defaulted) = match f.get(field).filter(|n| !n.is_null()) {
            None => (default, true),
            Some(n) => match judged(n).filter(|_| n.yaml11() == Some(crate::yaml::Yaml11::Str)) {
                Some(v) => (v, false),
                // A placeholder or a wrong type: not this rule's to judge.
                None => return,
            },
        };
        if value != "TryNextFlavor" {
            wrong.push(format!(
                "`{field}` is `{value}`{}",
                if defaulted { " (its default)" } else { "" }
            ));
        }
    }
    if wrong.is_empty() {
        return;
    }
    push(
        out,
        pref,
        format!(
            "`spec.flavorFungibility.preference` is set while {}: {}",
            wrong.join(" and "),
            cel_layer(
                "ClusterQueue",
                "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"
            )
        ),
        Some("set `whenCanBorrow` and `whenCanPreempt` to `TryNextFlavor`, or drop `preference`"),
    );
}

/// ResourceFlavor: a `topologyName` needs at least one node label.
pub fn resource_flavor_topology<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some((tk, tv)) = spec.entry("topologyName") else {
        return;
    };
    if tv.is_null() {
        return;
    }
    let labels = spec.get("nodeLabels").filter(|n| !n.is_null());
    let empty = match labels {
        None => true,
        Some(n) => n.as_map().is_some() && n.entries().next().is_none(),
    };
    if empty {
        push(
            out,
            tk,
            format!(
                "`spec.topologyName` is set but `spec.nodeLabels` is empty: {}",
                cel_layer(
                    "ResourceFlavor",
                    "at least one nodeLabel is required when topology is set"
                )
            ),
            Some("add the node labels that select this flavor's nodes"),
        );
    }
}

const HOSTNAME: &str = "kubernetes.io/hostname";

/// Topology: levels are unique, and `kubernetes.io/hostname` only as the lowest one.
pub fn topology<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some(items) = spec.get("levels").and_then(Node::as_seq) else {
        return;
    };
    let mut labels = Vec::with_capacity(items.len());
    for item in items {
        match item.get("nodeLabel").and_then(|n| Some((n, n.as_str()?))) {
            Some((_, s)) if is_placeholder(s) => return,
            Some(l) => labels.push(l),
            // A level without a label is the schema's finding; the rules below cannot run.
            None => return,
        }
    }
    let host_last = labels.last().is_some_and(|(_, s)| *s == HOSTNAME);
    for (i, (n, s)) in labels.iter().enumerate() {
        if labels[..i].iter().any(|(_, t)| t == s) {
            push(
                out,
                *n,
                format!(
                    "`spec.levels[{i}].nodeLabel` repeats `{s}`: {}",
                    cel_layer("Topology", "must be unique")
                ),
                Some("list each level once"),
            );
        } else if *s == HOSTNAME && !host_last {
            push(
                out,
                *n,
                format!(
                    "`spec.levels[{i}].nodeLabel` is `{HOSTNAME}` but it is not the last level: {}",
                    cel_layer(
                        "Topology",
                        "the kubernetes.io/hostname label can only be used at the lowest level of topology"
                    )
                ),
                Some("make `kubernetes.io/hostname` the last level"),
            );
        }
    }
}

const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const EFFECT_RULE: &str =
    "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'";

/// ResourceFlavor: taint and toleration effects and toleration operators, which the CRD
/// leaves to CEL rather than enums.
pub fn resource_flavor_values<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let mut check = |n: Option<Node<'a>>, at: String, allowed: &[&str], rule: &str| {
        if let Some(n) = n
            && let Some(v) = judged(n)
            && !allowed.contains(&v)
        {
            push(
                out,
                n,
                format!("`{at}` is `{v}`: {}", cel_layer("ResourceFlavor", rule)),
                None,
            );
        }
    };
    for (i, t) in spec
        .get("nodeTaints")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        check(
            t.get("effect"),
            format!("spec.nodeTaints[{i}].effect"),
            &EFFECTS,
            EFFECT_RULE,
        );
    }
    for (i, t) in spec
        .get("tolerations")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        check(
            t.get("operator"),
            format!("spec.tolerations[{i}].operator"),
            &["Equal", "Exists"],
            "supported toleration values: 'Equal'(default), 'Exists'",
        );
        check(
            t.get("effect"),
            format!("spec.tolerations[{i}].effect"),
            &EFFECTS,
            EFFECT_RULE,
        );
    }
}

/// WorkloadPriorityClass: `value` is a top-level field. Written under `spec`, the API server
/// prunes `spec` and rejects the object for the missing `value`: one finding, at `spec.value`.
pub fn workload_priority_class<'a>(root: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let top = root.get("value").filter(|v| !v.is_null());
    let spec = root.entry("spec");
    let nested = spec.and_then(|(_, s)| s.entry("value"));
    match (top, nested) {
        (None, Some((vk, _))) => push(
            out,
            vk,
            "`spec.value` belongs at the top level of a WorkloadPriorityClass, beside `metadata` (it has no `spec`): the API server prunes `spec` and rejects the object, as `value` is required".into(),
            Some("move `value` to the top level and drop `spec`"),
        ),
        (None, None) => {
            let at = root
                .as_map()
                .and_then(|m| m.first())
                .map_or(root, |(k, _)| k);
            push(
                out,
                at,
                "`value` is required: the API server rejects the WorkloadPriorityClass".into(),
                None,
            );
        }
        (Some(_), _) => {}
    }
    if let Some((sk, _)) = spec
        && !(top.is_none() && nested.is_some())
    {
        push(
            out,
            sk,
            "`spec` is not a WorkloadPriorityClass field: the API server prunes (drops) it, and strict `kubectl apply` validation rejects it".into(),
            None,
        );
    }
}

/// ProvisioningRequestConfig: `managedResources` is a set (`x-kubernetes-list-type: set`) and,
/// in v1beta2, `podSetUpdates.nodeSelector` a map keyed by `key`: the API server rejects a
/// repeated entry (`Duplicate value`).
pub fn provisioning_request_config<'a>(
    spec: Node<'a>,
    version: &str,
    out: &mut Vec<Violation<'a>>,
) {
    let resources = spec.get("managedResources");
    let resources = resources.into_iter().flat_map(Node::items).enumerate();
    repeated(resources, "spec.managedResources", "", out);
    if version == "v1beta2" {
        let selectors = spec.at(&["podSetUpdates", "nodeSelector"]);
        let keys = selectors
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
            .filter_map(|(i, s)| Some((i, s.get("key")?)));
        repeated(keys, "spec.podSetUpdates.nodeSelector", ".key", out);
    }
}

/// Entries of a set (or keys of a map list) given again: each at its node.
fn repeated<'a>(
    items: impl Iterator<Item = (usize, Node<'a>)>,
    list: &str,
    part: &str,
    out: &mut Vec<Violation<'a>>,
) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, n) in items {
        let Some(v) = judged(n) else { continue };
        if seen.contains(&v) {
            push(
                out,
                n,
                format!(
                    "`{list}[{i}]{part}` repeats `{v}` (Duplicate value): the API server rejects the ProvisioningRequestConfig"
                ),
                Some("list each entry once"),
            );
        } else {
            seen.push(v);
        }
    }
}
