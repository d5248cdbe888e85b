//! Kueue's rules beyond types: the CRDs' CEL rules and the validating webhook's checks of
//! ClusterQueues, Cohorts and ResourceFlavors.

use super::*;

/// ClusterQueue: flavors list their resources as the group covers them, in the same order
/// (webhook); `borrowingLimit` only with a cohort (CEL). With `webhook_only` (the CRD's own CEL
/// rules run instead), only what the CRD cannot say: the same resources in another order.
pub fn cluster_queue<'a>(
    spec: Node<'a>,
    cohort_field: &str,
    webhook_only: bool,
    out: &mut Vec<Violation<'a>>,
) {
    let cohort = webhook_only || text(spec.get(cohort_field)).is_some();
    for (g, rg) in spec
        .get("resourceGroups")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let covered: Vec<&str> = rg
            .get("coveredResources")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .collect();
        for (fi, fl) in rg
            .get("flavors")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            let Some((rk, res)) = fl.entry("resources") else {
                continue;
            };
            let names: Vec<&str> = res
                .items()
                .filter_map(|r| r.get("name").and_then(Node::as_str))
                .collect();
            // The CRD's CEL rule compares the counts; the webhook also the order.
            let counted = webhook_only && names.len() != covered.len();
            if !covered.is_empty() && !names.is_empty() && names != covered && !counted {
                let fname = fl.get("name").and_then(Node::as_str).unwrap_or("?");
                push(
                    out,
                    rk,
                    format!(
                        "flavor `{fname}` in `spec.resourceGroups[{g}]` lists {} but the group covers {}: Kueue's webhook rejects the ClusterQueue (same resources, same order)",
                        crate::diag::backticked(&names, ", "),
                        crate::diag::backticked(&covered, ", ")
                    ),
                    Some("list one entry per covered resource, in the `coveredResources` order"),
                );
            }
            if !cohort {
                for (ri, r) in res.items().enumerate() {
                    if let Some((bk, _)) = r.entry("borrowingLimit") {
                        push(
                            out,
                            bk,
                            format!(
                                "`spec.resourceGroups[{g}].flavors[{fi}].resources[{ri}].borrowingLimit` is set but the ClusterQueue has no `{cohort_field}`: the API server rejects it (nothing to borrow from)"
                            ),
                            Some("drop `borrowingLimit`, or put the queue in a cohort"),
                        );
                    }
                }
            }
        }
    }
}

/// ResourceFlavor: Kueue's webhook checks `nodeLabels` as labels, `nodeTaints` as node taints
/// (qualified-name keys, label-value values, unique by key and effect) and `tolerations` as a
/// pod's.
pub fn resource_flavor<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    const LAYER: &str = "Kueue's webhook rejects the ResourceFlavor";
    for (key, kn, v) in spec.get("nodeLabels").into_iter().flat_map(Node::entries) {
        if !is_placeholder(key)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(out, kn, "`spec.nodeLabels` key", key, &why, LAYER);
        }
        if let Some(val) = judged(v)
            && let Some(why) = names::label_value(val)
        {
            name_finding(
                out,
                v,
                &format!("`spec.nodeLabels.{key}` value"),
                val,
                &why,
                LAYER,
            );
        }
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, t) in spec
        .get("nodeTaints")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        if let Some(kn) = t.get("key")
            && let Some(key) = judged(kn)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(
                out,
                kn,
                &format!("`spec.nodeTaints[{i}].key`"),
                key,
                &why,
                LAYER,
            );
        }
        if let Some(vn) = t.get("value")
            && let Some(v) = judged(vn)
            && let Some(why) = names::label_value(v)
        {
            name_finding(
                out,
                vn,
                &format!("`spec.nodeTaints[{i}].value`"),
                v,
                &why,
                LAYER,
            );
        }
        if let (Some(key), Some(effect)) = (text(t.get("key")), text(t.get("effect"))) {
            if seen.contains(&(key, effect)) {
                push(
                    out,
                    t.get("effect").unwrap_or(t),
                    format!(
                        "`spec.nodeTaints[{i}]` repeats taint `{key}:{effect}` (taints must be unique by key and effect): {LAYER}"
                    ),
                    Some("keep one taint per key and effect"),
                );
            } else {
                seen.push((key, effect));
            }
        }
    }
    if let Some(t) = spec.get("tolerations") {
        toleration_names(t, "spec.tolerations", LAYER, out);
    }
}

/// Kueue's webhook on the resource groups of a ClusterQueue or Cohort: covered resources are
/// qualified names, each resource and each flavor in one group only, no negative quotas,
/// `borrowingLimit` and `lendingLimit` only with a parent (`parent`: the field naming it, when
/// set), and for a ClusterQueue `lendingLimit` at most `nominalQuota`.
pub fn resource_groups<'a>(
    spec: Node<'a>,
    kind: &str,
    parent_field: &str,
    out: &mut Vec<Violation<'a>>,
) {
    let layer = format!("Kueue's webhook rejects the {kind}");
    let has_parent = spec
        .get(parent_field)
        .and_then(Node::as_str)
        .is_some_and(|s| !s.is_empty());
    let mut resources: Vec<&str> = Vec::new();
    let mut flavors: Vec<&str> = Vec::new();
    for (g, rg) in spec
        .get("resourceGroups")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        for (j, rn) in rg
            .get("coveredResources")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            let Some(name) = text(Some(rn)) else {
                continue;
            };
            let at = format!("`spec.resourceGroups[{g}].coveredResources[{j}]`");
            if let Some(why) = names::qualified_name(name) {
                name_finding(out, rn, &at, name, &why, &layer);
            }
            if resources.contains(&name) {
                push(
                    out,
                    rn,
                    format!(
                        "{at} repeats resource `{name}` (a resource may be covered by one resource group only): {layer}"
                    ),
                    Some("list each resource once, in one resource group"),
                );
            } else {
                resources.push(name);
            }
        }
        for (fi, fl) in rg
            .get("flavors")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            let fat = format!("spec.resourceGroups[{g}].flavors[{fi}]");
            if let Some(nn) = fl.get("name")
                && let Some(name) = text(Some(nn))
            {
                if flavors.contains(&name) {
                    push(
                        out,
                        nn,
                        format!(
                            "`{fat}.name` repeats flavor `{name}` (a flavor may appear once per {kind}, in one resource group): {layer}"
                        ),
                        Some("list each flavor once"),
                    );
                } else {
                    flavors.push(name);
                }
            }
            for (ri, r) in fl
                .get("resources")
                .into_iter()
                .flat_map(Node::items)
                .enumerate()
            {
                let rat = format!("{fat}.resources[{ri}]");
                let amount = |field: &str| {
                    r.get(field)
                        .and_then(|n| judged(n).and_then(crate::quantity::parse).map(|q| (n, q)))
                };
                for field in ["nominalQuota", "borrowingLimit", "lendingLimit"] {
                    if let Some((n, q)) = amount(field)
                        && q.0 < 0
                    {
                        push(
                            out,
                            n,
                            format!("`{rat}.{field}` is negative: {layer}"),
                            None,
                        );
                    }
                }
                if !has_parent && let Some((lk, _)) = r.entry("lendingLimit") {
                    push(
                        out,
                        lk,
                        format!(
                            "`{rat}.lendingLimit` is set but the {kind} has no `{parent_field}`: {layer} (nothing to lend to)"
                        ),
                        Some("drop `lendingLimit`, or give the queue a cohort"),
                    );
                }
                // The CRD's CEL rule covers `borrowingLimit` for a ClusterQueue; a Cohort has
                // only the webhook.
                if !has_parent
                    && kind == "Cohort"
                    && let Some((bk, _)) = r.entry("borrowingLimit")
                {
                    push(
                        out,
                        bk,
                        format!(
                            "`{rat}.borrowingLimit` is set but the Cohort has no `parentName`: {layer} (nothing to borrow from)"
                        ),
                        Some("drop `borrowingLimit`, or give the cohort a parent"),
                    );
                }
                if kind == "ClusterQueue"
                    && let (Some((ln, lend)), Some((_, nominal))) =
                        (amount("lendingLimit"), amount("nominalQuota"))
                    && lend.0 > nominal.0
                {
                    push(
                        out,
                        ln,
                        format!(
                            "`{rat}.lendingLimit` is more than its `nominalQuota`: {layer} (a queue lends at most its own quota)"
                        ),
                        Some("lower `lendingLimit` to at most `nominalQuota`"),
                    );
                }
            }
        }
    }
}

/// A ClusterQueue's `namespaceSelector`, as Kueue's webhook checks label selectors: operators
/// and their values, keys and `matchLabels`.
pub fn namespace_selector<'a>(sel: Node<'a>, out: &mut Vec<Violation<'a>>) {
    const LAYER: &str = "Kueue's webhook rejects the ClusterQueue";
    for (key, kn, v) in sel.get("matchLabels").into_iter().flat_map(Node::entries) {
        if !is_placeholder(key)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(
                out,
                kn,
                "`spec.namespaceSelector.matchLabels` key",
                key,
                &why,
                LAYER,
            );
        }
        if let Some(val) = judged(v)
            && let Some(why) = names::label_value(val)
        {
            name_finding(
                out,
                v,
                &format!("`spec.namespaceSelector.matchLabels.{key}` value"),
                val,
                &why,
                LAYER,
            );
        }
    }
    for (i, e) in sel
        .get("matchExpressions")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let at = format!("spec.namespaceSelector.matchExpressions[{i}]");
        if let Some(kn) = e.get("key")
            && let Some(key) = judged(kn)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(out, kn, &format!("`{at}.key`"), key, &why, LAYER);
        }
        let Some(op_node) = e.get("operator") else {
            continue;
        };
        let Some(op) = text(Some(op_node)) else {
            continue;
        };
        let values = e.get("values").map_or(0, |v| v.items().count());
        let problem = match op {
            "In" | "NotIn" if values == 0 => Some(format!("`{op}` needs at least one value")),
            "Exists" | "DoesNotExist" if values > 0 => Some(format!("`{op}` takes no values")),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => None,
            _ => Some(format!(
                "`{op}` is not one of `In`, `NotIn`, `Exists`, `DoesNotExist`"
            )),
        };
        if let Some(p) = problem {
            push(out, op_node, format!("`{at}`: {p}; {LAYER}"), None);
        }
    }
}

/// ClusterQueue preemption (CEL): `borrowWithinCohort` needs `reclaimWithinCohort` other than
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
                "`spec.preemption.borrowWithinCohort.policy` is `{pol}` while `reclaimWithinCohort` is `Never`{}: the API server rejects the ClusterQueue (CEL: borrowing within the cohort needs reclaiming within it)",
                if reclaim.is_none() {
                    " (its default)"
                } else {
                    ""
                }
            ),
            Some("set `reclaimWithinCohort` to `LowerPriority` or `Any`"),
        );
    }
}
