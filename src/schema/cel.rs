//! Cross-field rules the API enforces beyond types: the CRDs' CEL `x-kubernetes-validations`,
//! Kueue's webhook and core validation, written out for the rules that matter in practice.

use super::check::Violation;
use super::names;
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

/// A label key, label value or name that fails one of [`names`]'s rules: `what` names it
/// (`requirement key`), `layer` says who rejects it.
fn name_finding<'a>(
    out: &mut Vec<Violation<'a>>,
    node: Node<'a>,
    what: &str,
    value: &str,
    reason: &str,
    layer: &str,
) {
    push(
        out,
        node,
        format!("{what} `{value}` is invalid: {reason}; {layer}"),
        None,
    );
}

/// The text of a scalar a rule can judge: not a placeholder, not a collection.
fn judged(n: Node<'_>) -> Option<&str> {
    n.as_str().filter(|s| !is_placeholder(s))
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

/// A pod spec's label keys and values as core validation checks them: `nodeSelector` keys and
/// values, toleration keys (and values with `Equal`), node-affinity expression keys.
pub fn pod_names<'a>(spec: Node<'a>, base: &str, kind: &str, out: &mut Vec<Violation<'a>>) {
    let layer = format!("the API server rejects the {kind}");
    for (key, kn, v) in spec.get("nodeSelector").into_iter().flat_map(Node::entries) {
        if !is_placeholder(key)
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(
                out,
                kn,
                &format!("`{base}.nodeSelector` key"),
                key,
                &why,
                &layer,
            );
        }
        if let Some(val) = judged(v)
            && let Some(why) = names::label_value(val)
        {
            name_finding(
                out,
                v,
                &format!("`{base}.nodeSelector.{key}` value"),
                val,
                &why,
                &layer,
            );
        }
    }
    if let Some(t) = spec.get("tolerations") {
        toleration_names(t, &format!("{base}.tolerations"), &layer, out);
    }
    let Some(aff) = spec.at(&["affinity", "nodeAffinity"]) else {
        return;
    };
    let required = aff
        .at(&[
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ])
        .into_iter()
        .flat_map(Node::items);
    let preferred = aff
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
            if let Some(kn) = e.get("key")
                && let Some(key) = judged(kn)
                && let Some(why) = names::qualified_name(key)
            {
                name_finding(
                    out,
                    kn,
                    &format!("`{base}.affinity.nodeAffinity` key"),
                    key,
                    &why,
                    &layer,
                );
            }
        }
    }
}

/// Toleration keys are qualified names (an empty key is the wildcard) and, with `Equal`, values
/// are label values (core `ValidateTolerations`, which Kueue's webhook reuses for flavors).
fn toleration_names<'a>(list: Node<'a>, base: &str, layer: &str, out: &mut Vec<Violation<'a>>) {
    for (i, t) in list.items().enumerate() {
        if let Some(kn) = t.get("key")
            && let Some(key) = judged(kn)
            && !key.is_empty()
            && let Some(why) = names::qualified_name(key)
        {
            name_finding(out, kn, &format!("`{base}[{i}].key`"), key, &why, layer);
        }
        let op = t.get("operator").and_then(Node::as_str).unwrap_or("");
        if matches!(op, "" | "Equal")
            && let Some(vn) = t.get("value")
            && let Some(v) = judged(vn)
            && let Some(why) = names::label_value(v)
        {
            name_finding(out, vn, &format!("`{base}[{i}].value`"), v, &why, layer);
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

/// `metadata.name` of a kind whose names the API server checks as DNS subdomains (every custom
/// resource, and PriorityClass).
pub fn object_name<'a>(root: Node<'a>, kind: &str, out: &mut Vec<Violation<'a>>) {
    if let Some(n) = root.at(&["metadata", "name"])
        && let Some(name) = judged(n).filter(|s| !s.is_empty())
        && let Some(why) = names::dns_subdomain(name)
    {
        name_finding(
            out,
            n,
            "`metadata.name`",
            name,
            &format!("{why} (a DNS subdomain)"),
            &format!("the API server rejects the {kind}"),
        );
    }
}
