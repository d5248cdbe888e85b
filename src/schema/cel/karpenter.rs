//! Karpenter's rules beyond types: the NodePool and EC2NodeClass CRDs' CEL rules, and what
//! Karpenter's own validation rejects after apply.

use super::*;

/// Why Karpenter refuses a requirement key or template label key, if it does.
pub fn restricted_label(key: &str) -> Option<&'static str> {
    const AWS_ALLOWED: &[&str] = &[
        "instance-tenancy",
        "capacity-reservation-type",
        "capacity-reservation-id",
        "capacity-reservation-interruptible",
        "ec2nodeclass",
        "instance-encryption-in-transit-supported",
        "instance-category",
        "instance-hypervisor",
        "instance-family",
        "instance-generation",
        "instance-local-nvme",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
        "instance-capability-flex",
        "placement-group-id",
        "placement-group-partition",
    ];
    let (domain, name) = key.split_once('/')?;
    match domain {
        "karpenter.sh" if name == "capacity-type" => None,
        "karpenter.sh" if name == "nodepool" => {
            Some("Karpenter sets `karpenter.sh/nodepool` itself")
        }
        d if d == "karpenter.sh" || d.ends_with(".karpenter.sh") => Some(
            "the `karpenter.sh` domain is reserved (only `karpenter.sh/capacity-type` is allowed)",
        ),
        "kubernetes.io" if name == "hostname" => Some("`kubernetes.io/hostname` is not allowed"),
        "karpenter.k8s.aws" if !AWS_ALLOWED.contains(&name) => Some(
            "the `karpenter.k8s.aws` domain is reserved except for its well-known instance labels",
        ),
        _ => None,
    }
}

const COMPARISON_RULE: &str =
    "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value";

/// The message of the CRD's rule that restricts `key` (one of [`restricted_label`]'s).
fn restricted_message(key: &str) -> String {
    match key {
        "karpenter.sh/nodepool" | "kubernetes.io/hostname" => {
            format!("label \"{key}\" is restricted")
        }
        k if k.starts_with("karpenter.k8s.aws/") => {
            "label domain \"karpenter.k8s.aws\" is restricted".into()
        }
        _ => "label domain \"karpenter.sh\" is restricted".into(),
    }
}

/// NodePool v1: requirement operators and value counts, minValues, restricted label domains,
/// budget schedule/duration pairs, empty `nodeClassRef` parts, and what a static NodePool
/// (`replicas`) may not set.
pub fn nodepool<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let tspec = spec.at(&["template", "spec"]);
    requirements(tspec, "spec.template.spec", "NodePool", out);
    for (key, kn, _) in spec
        .at(&["template", "metadata", "labels"])
        .into_iter()
        .flat_map(Node::entries)
    {
        if let Some(why) = restricted_label(key) {
            push(
                out,
                kn,
                format!(
                    "template label `{key}` is restricted: {why}; {}",
                    cel_layer("NodePool", &restricted_message(key))
                ),
                None,
            );
        }
    }
    budgets(spec, out);
    node_class_ref(tspec, "spec.template.spec", "NodePool", out);
    static_pool(spec, out);
}

/// NodeClaim v1: the rules of a NodePool's template spec, at `spec` (its requirement keys may
/// name `karpenter.sh/nodepool`, which Karpenter sets on the NodeClaims it creates).
pub fn nodeclaim<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    requirements(Some(spec), "spec", "NodeClaim", out);
    node_class_ref(Some(spec), "spec", "NodeClaim", out);
}

/// The CEL rules of a node spec's `requirements` (`base` is its path, `kind` the object's).
fn requirements<'a>(spec: Option<Node<'a>>, base: &str, kind: &str, out: &mut Vec<Violation<'a>>) {
    for (i, r) in spec
        .and_then(|s| s.get("requirements"))
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let at = || format!("{base}.requirements[{i}]");
        // `values` that is not a list (`${jsonencode(var.zones)}`, filled in before the apply;
        // or a type error the schema reports) has no count to judge.
        let unlisted = r
            .get("values")
            .is_some_and(|v| !v.is_null() && v.as_seq().is_none());
        let values: Vec<Node<'_>> = r.get("values").into_iter().flat_map(Node::items).collect();
        let op_node = r.get("operator");
        let op = if unlisted {
            ""
        } else {
            text(op_node).unwrap_or("")
        };
        let anchor = op_node.unwrap_or(r);
        match op {
            "In" if values.is_empty() => push(
                out,
                anchor,
                format!(
                    "`{}` uses `In` without values: {}",
                    at(),
                    cel_layer(
                        kind,
                        "requirements with operator 'In' must have a value defined"
                    )
                ),
                Some("list at least one value, or use `Exists`"),
            ),
            "Gt" | "Lt" | "Gte" | "Lte" if values.len() != 1 => push(
                out,
                anchor,
                format!(
                    "`{}` uses `{op}` with {} values: {}",
                    at(),
                    values.len(),
                    cel_layer(kind, COMPARISON_RULE)
                ),
                Some("give exactly one integer value, e.g. `values: [\"3\"]`"),
            ),
            "Gt" | "Lt" | "Gte" | "Lte" => {
                if let Some(v) = values.first().and_then(|v| v.as_str())
                    && !is_placeholder(v)
                    && !v.parse::<i64>().is_ok_and(|n| n >= 0)
                {
                    push(
                        out,
                        values[0],
                        format!(
                            "`{}` uses `{op}` with `{v}`, which is not an integer ≥ 0: {}",
                            at(),
                            cel_layer(kind, COMPARISON_RULE)
                        ),
                        Some("use a whole number as a string, e.g. `\"3\"`"),
                    );
                }
            }
            _ => {}
        }
        if op == "In"
            && let Some(mv) = r.get("minValues")
            && let Some(n) = mv.as_str().and_then(|s| s.parse::<usize>().ok())
            && !values.is_empty()
            && n > values.len()
        {
            push(
                out,
                mv,
                format!(
                    "`{}` asks for `minValues: {n}` but lists {} values: {}",
                    at(),
                    values.len(),
                    cel_layer(
                        kind,
                        "requirements with 'minValues' must have at least that many values specified in the 'values' field"
                    )
                ),
                None,
            );
        }
        if let Some(key_node) = r.get("key")
            && let Some(key) = text(Some(key_node))
            && let Some(why) = restricted_label(key)
            && !(kind == "NodeClaim" && key == "karpenter.sh/nodepool")
        {
            push(
                out,
                key_node,
                format!(
                    "requirement key `{key}` is restricted: {why}; {}",
                    cel_layer(kind, &restricted_message(key))
                ),
                None,
            );
        }
    }
}

/// Budgets: `schedule` and `duration` come together.
fn budgets<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    for (i, b) in spec
        .at(&["disruption", "budgets"])
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let sched = b.entry("schedule");
        let dur = b.entry("duration");
        if let Some((kn, _)) = match (sched, dur) {
            (Some(s), None) => Some(s),
            (None, Some(d)) => Some(d),
            _ => None,
        } {
            push(
                out,
                kn,
                format!(
                    "`spec.disruption.budgets[{i}]` sets only one of `schedule` and `duration`: {}",
                    cel_layer("NodePool", "'schedule' must be set with 'duration'")
                ),
                Some("add the other, or drop this one for an always-active budget"),
            );
        }
    }
}

/// Empty `nodeClassRef` parts of a node spec (`base` is its path).
fn node_class_ref<'a>(
    spec: Option<Node<'a>>,
    base: &str,
    kind: &str,
    out: &mut Vec<Violation<'a>>,
) {
    // One pass over the reference's few keys: this runs for every NodePool.
    for (part, _, n) in spec
        .and_then(|s| s.get("nodeClassRef"))
        .into_iter()
        .flat_map(Node::entries)
    {
        if matches!(part, "group" | "kind" | "name")
            && n.as_str() == Some("")
            && n.yaml11().is_some()
        {
            push(
                out,
                n,
                format!(
                    "`{base}.nodeClassRef.{part}` is empty: {}",
                    cel_layer(kind, &format!("{part} may not be empty"))
                ),
                None,
            );
        }
    }
}

/// A static NodePool (`replicas` set) may limit only `nodes` and has no `weight` (CEL).
fn static_pool<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let set = |field: &str| spec.entry(field).filter(|(_, v)| !v.is_null());
    if set("replicas").is_none() {
        return;
    }
    if let Some((lk, limits)) = set("limits")
        && limits.entries().any(|(k, _, _)| k != "nodes")
    {
        push(
            out,
            lk,
            format!(
                "`spec.limits` limits more than `nodes` on a static NodePool (`replicas` is set): {}",
                cel_layer(
                    "NodePool",
                    "only 'limits.nodes' is supported on static NodePools"
                )
            ),
            Some("keep only `limits.nodes`, or drop `replicas`"),
        );
    }
    if let Some((wk, _)) = set("weight") {
        push(
            out,
            wk,
            format!(
                "`spec.weight` is set on a static NodePool (`replicas` is set): {}",
                cel_layer("NodePool", "'weight' is not supported on static NodePools")
            ),
            Some("drop `weight`, or drop `replicas`"),
        );
    }
}

const KARPENTER_RUNTIME: &str = "Karpenter's validation rejects the NodePool after apply (condition `ValidationSucceeded=False`): it launches no nodes";

/// NodePool v1: what Karpenter's own validation adds to the CRD's patterns on label and taint
/// keys and values: the length limits of qualified names, label keys (the CRD has no pattern for
/// them), and taints unique by key and effect.
pub fn nodepool_names<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let tspec = spec.at(&["template", "spec"]);
    for (i, r) in tspec
        .and_then(|s| s.get("requirements"))
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        // A key the CRD pattern (or its `maxLength`) rejects is the schema's finding.
        if let Some(kn) = r.get("key")
            && let Some(key) = judged(kn)
            && key.len() <= 316
            && names::qualified_name_shape(key)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(
                out,
                kn,
                &format!("`spec.template.spec.requirements[{i}].key`"),
                key,
                &why,
                KARPENTER_RUNTIME,
            );
        }
        well_known_values(r, i, out);
    }
    for (key, kn, _) in spec
        .at(&["template", "metadata", "labels"])
        .into_iter()
        .flat_map(Node::entries)
    {
        if is_placeholder(key) {
            continue;
        }
        if let Some(why) = names::qualified_name(key) {
            name_finding(
                out,
                kn,
                "`spec.template.metadata.labels` key",
                key,
                &why,
                KARPENTER_RUNTIME,
            );
        }
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for list in ["taints", "startupTaints"] {
        for (i, t) in tspec
            .and_then(|s| s.get(list))
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            for part in ["key", "value"] {
                if let Some(n) = t.get(part)
                    && let Some(v) = judged(n)
                    && !v.is_empty()
                    && names::qualified_name_shape(v)
                    && let Some(why) = names::qualified_name(v)
                {
                    name_finding(
                        out,
                        n,
                        &format!("`spec.template.spec.{list}[{i}].{part}`"),
                        v,
                        &why,
                        KARPENTER_RUNTIME,
                    );
                }
            }
            let (Some(key), Some(effect)) = (text(t.get("key")), text(t.get("effect"))) else {
                continue;
            };
            if seen.contains(&(key, effect)) {
                push(
                    out,
                    t.get("effect").unwrap_or(t),
                    format!(
                        "`spec.template.spec.{list}[{i}]` repeats taint `{key}:{effect}` (taints and startup taints must be unique by key and effect): {KARPENTER_RUNTIME}"
                    ),
                    Some("keep one taint per key and effect"),
                );
            } else {
                seen.push((key, effect));
            }
        }
    }
}

/// The values Karpenter knows for a requirement key (core's capacity types, the AWS provider's
/// tenancies).
fn known_values(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "karpenter.sh/capacity-type" => Some(&["on-demand", "spot", "reserved"]),
        "karpenter.k8s.aws/instance-tenancy" => Some(&["default", "dedicated"]),
        _ => None,
    }
}

/// An `In` requirement on a key with known values: Karpenter proceeds with the known ones and
/// fails the NodePool when none is known (or fewer than `minValues`).
fn well_known_values<'a>(r: Node<'a>, i: usize, out: &mut Vec<Violation<'a>>) {
    // The key first: it rules out nearly every requirement at the cost of one lookup.
    let Some(key) = r.get("key").and_then(Node::as_str) else {
        return;
    };
    let Some(known) = known_values(key) else {
        return;
    };
    if text(r.get("operator")) != Some("In") {
        return;
    }
    let Some((vk, vals)) = r.entry("values") else {
        return;
    };
    let mut values = Vec::new();
    for v in vals.items() {
        match v.as_str() {
            Some(s) if !is_placeholder(s) => values.push(s),
            // A value the linter cannot read may be a known one.
            _ => return,
        }
    }
    let valid = values.iter().filter(|v| known.contains(v)).count();
    let min = r
        .get("minValues")
        .and_then(Node::as_str)
        .and_then(|m| m.parse::<usize>().ok());
    let problem = if values.is_empty() {
        None
    } else if valid == 0 {
        Some(format!(
            "none of its values is one of {}",
            crate::diag::backticked(known, ", ")
        ))
    } else {
        min.filter(|m| valid < *m).map(|m| {
            format!(
                "only {valid} of its values are among {}, fewer than `minValues: {m}`",
                crate::diag::backticked(known, ", ")
            )
        })
    };
    if let Some(p) = problem {
        push(
            out,
            vk,
            format!("`spec.template.spec.requirements[{i}]` on `{key}`: {p}; {KARPENTER_RUNTIME}"),
            None,
        );
    }
}
