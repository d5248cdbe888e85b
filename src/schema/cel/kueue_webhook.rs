//! Kueue's validating webhook (`pkg/webhooks`), checked by hand: what it rejects of
//! ClusterQueues, Cohorts and ResourceFlavors beyond their CRDs. It runs after the API server's
//! schema and CEL checks, and whether or not the CRD is in view.

use super::*;

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
/// qualified names, each resource and each flavor in one group only, flavor resources in the
/// `coveredResources` order, no negative quotas,
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
            resource_order(rg, fl, &fat, &layer, out);
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
                            format!(
                                "`{rat}.{field}` is negative: {layer} (must be greater than or equal to 0)"
                            ),
                            None,
                        );
                    }
                }
                if !has_parent && let Some((lk, _)) = r.entry("lendingLimit") {
                    push(
                        out,
                        lk,
                        format!(
                            "`{rat}.lendingLimit` is set but the {kind} has no `{parent_field}` (nothing to lend to): {layer} (must be nil when {} is empty)",
                            if kind == "Cohort" { "parent" } else { "cohort" }
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
                            "`{rat}.borrowingLimit` is set but the Cohort has no `parentName` (nothing to borrow from): {layer} (must be nil when parent is empty)"
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
                            "`{rat}.lendingLimit` is more than its `nominalQuota` (a queue lends at most its own quota): {layer} (must be less than or equal to the nominalQuota)"
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

/// A flavor that lists as many resources as its group covers, but not in the same order: each
/// misplaced one at its `name` (the CRD's CEL rule compares only the counts).
fn resource_order<'a>(
    rg: Node<'a>,
    fl: Node<'a>,
    fat: &str,
    layer: &str,
    out: &mut Vec<Violation<'a>>,
) {
    let Some(covered) = rg.get("coveredResources").and_then(Node::as_seq) else {
        return;
    };
    let Some(listed) = fl.get("resources").and_then(Node::as_seq) else {
        return;
    };
    if listed.len() != covered.len() {
        return;
    }
    for (i, (r, c)) in listed.iter().zip(covered).enumerate() {
        if let Some(rn) = r.get("name")
            && let (Some(name), Some(want)) = (text(Some(rn)), text(Some(c)))
            && name != want
        {
            push(
                out,
                rn,
                format!(
                    "`{fat}.resources[{i}].name` is `{name}` but `coveredResources[{i}]` is `{want}`: {layer} (must match the name in coveredResources)"
                ),
                Some("list the flavor's resources in the `coveredResources` order"),
            );
        }
    }
}

/// ClusterQueue and Cohort `fairSharing.weight`: not negative, and not so small (at most 1n)
/// that it collapses to zero.
pub fn fair_sharing<'a>(spec: Node<'a>, kind: &str, out: &mut Vec<Violation<'a>>) {
    let Some(w) = spec.at(&["fairSharing", "weight"]) else {
        return;
    };
    let Some(nano) = judged(w).and_then(nanos) else {
        return;
    };
    let problem = if nano < 0 {
        Some(("is negative", "must be greater than or equal to 0"))
    } else if nano > 0 && nano <= 1 {
        Some(("is at most 1n (10⁻⁹)", "When not 0, weight must be > 10e-9"))
    } else {
        None
    };
    if let Some((what, message)) = problem {
        push(
            out,
            w,
            format!(
                "`spec.fairSharing.weight` {what}: {}",
                webhook_layer(kind, message)
            ),
            Some("use 0, or a weight above 1n such as `1m` or `0.5`"),
        );
    }
}

/// A quantity in billionths, rounded up as the API server rounds what is finer than `1n`
/// (`quantity::parse` stops at thousandths).
fn nanos(s: &str) -> Option<i128> {
    let (neg, body) = match s.trim().strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.trim().trim_start_matches('+')),
    };
    let end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, suffix) = body.split_at(end);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.len() + frac.len() == 0 || int.len() + frac.len() > 30 || frac.contains('.') {
        return None;
    }
    // Decimal suffixes by their power of ten, binary ones by their power of two.
    const DECIMAL: [(&str, i32); 10] = [
        ("", 0),
        ("n", -9),
        ("u", -6),
        ("m", -3),
        ("k", 3),
        ("M", 6),
        ("G", 9),
        ("T", 12),
        ("P", 15),
        ("E", 18),
    ];
    const BINARY: [(&str, u32); 6] = [
        ("Ki", 10),
        ("Mi", 20),
        ("Gi", 30),
        ("Ti", 40),
        ("Pi", 50),
        ("Ei", 60),
    ];
    let (exp10, factor) = if let Some((_, e)) = DECIMAL.iter().find(|(u, _)| *u == suffix) {
        (*e, 1i128)
    } else if let Some((_, b)) = BINARY.iter().find(|(u, _)| *u == suffix) {
        (0, 1i128 << b)
    } else {
        (suffix.strip_prefix(['e', 'E'])?.parse::<i32>().ok()?, 1)
    };
    let exp = exp10.checked_add(9 - frac.len() as i32)?;
    let digits: i128 = int.bytes().chain(frac.bytes()).try_fold(0i128, |n, d| {
        n.checked_mul(10)?.checked_add(i128::from(d - b'0'))
    })?;
    let v = digits.checked_mul(factor)?;
    let v = if exp >= 0 {
        v.checked_mul(10i128.checked_pow(exp.unsigned_abs())?)?
    } else {
        let d = 10i128.checked_pow(exp.unsigned_abs())?;
        v / d + i128::from(v % d != 0)
    };
    Some(if neg { -v } else { v })
}

const MAX_FLAVORS: usize = 256;
const MAX_COVERED: usize = 256;
const MAX_COMBINATIONS: usize = 512;

/// ClusterQueue: at most 256 flavors and 256 covered resources over all resource groups, and
/// at most 512 flavor×resource entries in one group.
pub fn totals<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    const LAYER: &str = "ClusterQueue";
    let Some((gk, groups)) = spec.entry("resourceGroups") else {
        return;
    };
    let count = |n: Option<Node<'_>>| n.and_then(Node::as_seq).map_or(0, |s| s.len());
    let (mut flavors, mut covered) = (0, 0);
    for (g, rg) in groups.items().enumerate() {
        flavors += count(rg.get("flavors"));
        covered += count(rg.get("coveredResources"));
        let combos: usize = rg
            .get("flavors")
            .into_iter()
            .flat_map(Node::items)
            .map(|f| count(f.get("resources")))
            .sum();
        if combos > MAX_COMBINATIONS {
            push(
                out,
                rg,
                format!(
                    "`spec.resourceGroups[{g}]` has {combos} flavor×resource entries: {}",
                    webhook_layer(
                        LAYER,
                        &format!(
                            "number of flavor-resource combinations in a resourceGroup must be ≤ {MAX_COMBINATIONS}, got {combos}"
                        )
                    )
                ),
                Some("split the flavors over resource groups, or cover fewer resources"),
            );
        }
    }
    for (n, max, what) in [
        (flavors, MAX_FLAVORS, "flavors"),
        (covered, MAX_COVERED, "covered resources"),
    ] {
        if n > max {
            push(
                out,
                gk,
                format!(
                    "`spec.resourceGroups` has {n} {what} in total: {}",
                    webhook_layer(
                        LAYER,
                        &format!(
                            "total number of {what} across all resourceGroups must be ≤ {max}, got {n}"
                        )
                    )
                ),
                None,
            );
        }
    }
}

/// ClusterQueue: an admission check's `onFlavors` names flavors of the queue's own resource
/// groups.
pub fn admission_check_flavors<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some(checks) = spec.at(&["admissionChecksStrategy", "admissionChecks"]) else {
        return;
    };
    let mut flavors: Vec<&str> = Vec::new();
    for rg in spec.get("resourceGroups").into_iter().flat_map(Node::items) {
        for fl in rg.get("flavors").into_iter().flat_map(Node::items) {
            match fl.get("name").and_then(Node::as_str) {
                // A flavor the linter cannot name could be any of them.
                Some(n) if is_placeholder(n) => return,
                Some(n) => flavors.push(n),
                None => {}
            }
        }
    }
    for (i, c) in checks.items().enumerate() {
        for (j, f) in c
            .get("onFlavors")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            let Some(name) = text(Some(f)) else {
                continue;
            };
            if flavors.contains(&name) {
                continue;
            }
            let supported = if flavors.is_empty() {
                "the queue has no flavors".to_string()
            } else {
                format!(
                    "supported values: {}",
                    crate::diag::backticked(&flavors, ", ")
                )
            };
            push(
                out,
                f,
                format!(
                    "`spec.admissionChecksStrategy.admissionChecks[{i}].onFlavors[{j}]` is `{name}`, a flavor the ClusterQueue does not have ({supported}): {}",
                    webhook_layer("ClusterQueue", &format!("Unsupported value: \"{name}\""))
                ),
                Some("name a flavor of `spec.resourceGroups`, or add it there"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nanos;

    #[test]
    fn quantities_in_billionths() {
        assert_eq!(nanos("1n"), Some(1));
        assert_eq!(nanos("2n"), Some(2));
        assert_eq!(nanos("0.0000000001"), Some(1));
        assert_eq!(nanos("1u"), Some(1_000));
        assert_eq!(nanos("-1"), Some(-1_000_000_000));
        assert_eq!(nanos("0.5"), Some(500_000_000));
        assert_eq!(nanos("1e-9"), Some(1));
        assert_eq!(nanos("1Ki"), Some(1024 * 1_000_000_000));
        assert_eq!(nanos("0"), Some(0));
        assert_eq!(nanos("1e2147483647"), None);
        for bad in ["", ".", "1.2.3", "x", "1q"] {
            assert_eq!(nanos(bad), None, "{bad}");
        }
    }
}
