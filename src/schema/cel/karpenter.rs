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

/// NodePool v1: requirement operators and value counts, minValues, restricted label domains,
/// budget schedule/duration pairs.
pub fn nodepool<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let tspec = spec.at(&["template", "spec"]);
    for (i, r) in tspec
        .and_then(|s| s.get("requirements"))
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let at = || format!("spec.template.spec.requirements[{i}]");
        let values: Vec<Node<'_>> = r.get("values").into_iter().flat_map(Node::items).collect();
        let op_node = r.get("operator");
        let op = text(op_node).unwrap_or("");
        let anchor = op_node.unwrap_or(r);
        match op {
            "In" if values.is_empty() => push(
                out,
                anchor,
                format!(
                    "`{}` uses `In` without values: the API server rejects the NodePool (CEL: `In` needs at least one value)",
                    at()
                ),
                Some("list at least one value, or use `Exists`"),
            ),
            "Gt" | "Lt" | "Gte" | "Lte" if values.len() != 1 => push(
                out,
                anchor,
                format!(
                    "`{}` uses `{op}` with {} values: the API server rejects the NodePool (CEL: `{op}` takes exactly one value)",
                    at(),
                    values.len()
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
                            "`{}` uses `{op}` with `{v}`, which is not an integer ≥ 0: the API server rejects the NodePool",
                            at()
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
                    "`{}` asks for `minValues: {n}` but lists {} values: the API server rejects the NodePool",
                    at(),
                    values.len()
                ),
                None,
            );
        }
        if let Some(key_node) = r.get("key")
            && let Some(key) = text(Some(key_node))
            && let Some(why) = restricted_label(key)
        {
            push(
                out,
                key_node,
                format!(
                    "requirement key `{key}` is restricted: {why}; the API server rejects the NodePool"
                ),
                None,
            );
        }
    }
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
                    "template label `{key}` is restricted: {why}; the API server rejects the NodePool"
                ),
                None,
            );
        }
    }
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
                    "`spec.disruption.budgets[{i}]` sets only one of `schedule` and `duration`: the API server rejects the NodePool (CEL: both or neither)"
                ),
                Some("add the other, or drop this one for an always-active budget"),
            );
        }
    }
}

/// EC2NodeClass v1: role xor instanceProfile, alias terms, amiFamily without alias.
pub fn ec2nodeclass<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    match (spec.entry("role"), spec.entry("instanceProfile")) {
        (Some((_, r)), Some((ipk, _))) if !r.is_null() => push(
            out,
            ipk,
            "`spec.role` and `spec.instanceProfile` are both set: the API server rejects the EC2NodeClass (exactly one is allowed)".into(),
            Some("keep one of them"),
        ),
        (None, None) => {
            if let Some((k, _)) = spec.as_map().and_then(|m| m.first()) {
                push(
                    out,
                    k,
                    "`spec` has neither `role` nor `instanceProfile`: the API server rejects the EC2NodeClass (exactly one is required)".into(),
                    Some("set `role` to the node IAM role name"),
                );
            }
        }
        _ => {}
    }
    let terms: Vec<Node<'_>> = spec
        .get("amiSelectorTerms")
        .into_iter()
        .flat_map(Node::items)
        .collect();
    let mut has_alias = false;
    for (i, t) in terms.iter().enumerate() {
        let Some((ak, av)) = t.entry("alias") else {
            continue;
        };
        has_alias = true;
        if terms.len() > 1 {
            push(
                out,
                ak,
                format!(
                    "`spec.amiSelectorTerms[{i}].alias` is not the only term: the API server rejects the EC2NodeClass (an alias term must stand alone)"
                ),
                None,
            );
        }
        let Some(alias) = text(Some(av)) else {
            continue;
        };
        const FAMILIES: &[&str] = &[
            "al2",
            "al2023",
            "bottlerocket",
            "windows2019",
            "windows2022",
            "windows2025",
        ];
        match alias.split_once('@') {
            Some((fam, ver)) if FAMILIES.contains(&fam) && !ver.is_empty() => {
                if fam.starts_with("windows") && ver != "latest" {
                    push(
                        out,
                        av,
                        format!(
                            "alias `{alias}`: Windows families accept only `@latest`; the API server rejects the EC2NodeClass"
                        ),
                        None,
                    );
                }
            }
            _ => push(
                out,
                av,
                format!(
                    "alias `{alias}` is not `family@version` with a family among {}: the API server rejects the EC2NodeClass",
                    crate::diag::backticked(FAMILIES, ", ")
                ),
                Some("e.g. `al2023@v20250117` or `bottlerocket@v1.30.0`"),
            ),
        }
    }
    if !has_alias
        && !terms.is_empty()
        && spec.get("amiFamily").is_none()
        && let Some((k, _)) = spec.entry("amiSelectorTerms")
    {
        push(
            out,
            k,
            "`spec.amiFamily` is required when no `amiSelectorTerms` entry is an `alias`: the API server rejects the EC2NodeClass".into(),
            Some("set `amiFamily` (e.g. `AL2023`), or select the AMI with an alias"),
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
