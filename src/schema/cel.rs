//! Cross-field rules the API enforces beyond types: the CRDs' CEL `x-kubernetes-validations`,
//! Kueue's webhook and core validation, written out for the rules that matter in practice.

use super::check::Violation;
use crate::quantity::is_placeholder;
use crate::yaml::Node;

fn text(n: Option<Node<'_>>) -> Option<&str> {
    n.and_then(Node::as_str)
        .filter(|s| !s.is_empty() && !is_placeholder(s))
}

fn push<'a>(out: &mut Vec<Violation<'a>>, node: Node<'a>, message: String, help: Option<&str>) {
    out.push(Violation {
        node,
        message,
        help: help.map(str::to_string),
    });
}

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

/// Tolerations (pods and ResourceFlavors): an empty key needs `Exists`, `Exists` takes no value,
/// `tolerationSeconds` only with `NoExecute`.
pub fn tolerations<'a>(list: Node<'a>, base: &str, kind: &str, out: &mut Vec<Violation<'a>>) {
    for (i, t) in list.items().enumerate() {
        let key = t.get("key").and_then(Node::as_str).unwrap_or("");
        let op_node = t.get("operator");
        let op = op_node.and_then(Node::as_str).unwrap_or("");
        let effect = t.get("effect").and_then(Node::as_str).unwrap_or("");
        let at = || format!("{base}[{i}]");
        if key.is_empty() && op != "Exists" && t.as_map().is_some() {
            push(
                out,
                op_node.unwrap_or(t),
                format!(
                    "`{}` has no key but operator `{}`: the API server rejects the {kind} (an empty key needs `Exists`)",
                    at(),
                    if op.is_empty() { "Equal" } else { op }
                ),
                Some("set `key`, or `operator: Exists` to tolerate every taint"),
            );
        }
        if op == "Exists"
            && let Some(v) = t.get("value")
            && v.as_str().is_some_and(|s| !s.is_empty())
        {
            push(
                out,
                v,
                format!(
                    "`{}` sets a value with `operator: Exists`: the API server rejects the {kind}",
                    at()
                ),
                Some("drop `value`, or use `operator: Equal`"),
            );
        }
        if let Some((sk, _)) = t.entry("tolerationSeconds")
            && effect != "NoExecute"
        {
            push(
                out,
                sk,
                format!(
                    "`{}` sets `tolerationSeconds` without `effect: NoExecute`: the API server rejects the {kind}",
                    at()
                ),
                None,
            );
        }
    }
}

/// Node affinity expressions: values by operator, as core validation checks them.
pub fn node_affinity<'a>(affinity: Node<'a>, base: &str, kind: &str, out: &mut Vec<Violation<'a>>) {
    let required = affinity
        .at(&[
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ])
        .into_iter()
        .flat_map(Node::items);
    let preferred = affinity
        .get("preferredDuringSchedulingIgnoredDuringExecution")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|p| p.get("preference"));
    for term in required.chain(preferred) {
        for e in term
            .get("matchExpressions")
            .into_iter()
            .flat_map(Node::items)
        {
            let Some(op_node) = e.get("operator") else {
                continue;
            };
            let op = op_node.as_str().unwrap_or("");
            let values: Vec<Node<'_>> = e.get("values").into_iter().flat_map(Node::items).collect();
            let key = e.get("key").and_then(Node::as_str).unwrap_or("?");
            let problem = match op {
                "In" | "NotIn" if values.is_empty() => {
                    Some(format!("`{op}` needs at least one value"))
                }
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    Some(format!("`{op}` takes no values"))
                }
                "Gt" | "Lt" if values.len() != 1 => Some(format!("`{op}` takes exactly one value")),
                "Gt" | "Lt" => values[0]
                    .as_str()
                    .filter(|v| !is_placeholder(v) && v.parse::<i64>().is_err())
                    .map(|v| format!("`{op}` needs an integer, not `{v}`")),
                _ => None,
            };
            if let Some(p) = problem {
                push(
                    out,
                    op_node,
                    format!(
                        "node affinity on `{key}` in `{base}`: {p}; the API server rejects the {kind}"
                    ),
                    None,
                );
            }
        }
    }
}
