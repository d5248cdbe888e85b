//! Core validation of pod templates beyond types: tolerations, node affinity, label keys and
//! values in selectors.

use super::*;

/// Tolerations (pods and ResourceFlavors): an empty key needs `Exists`, `Exists` takes no value,
/// `tolerationSeconds` only with `NoExecute`. Core validation checks a pod's; a ResourceFlavor's
/// CRD has CEL rules for them (`cel`), whose messages the findings quote.
pub fn tolerations<'a>(
    list: Node<'a>,
    base: &str,
    kind: &str,
    cel: bool,
    out: &mut Vec<Violation<'a>>,
) {
    let layer = |why: &str, rule: &str| {
        if cel {
            cel_layer(kind, rule)
        } else {
            format!("the API server rejects the {kind}{why}")
        }
    };
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
                    "`{}` has no key but operator `{}`: {}",
                    at(),
                    if op.is_empty() { "Equal" } else { op },
                    layer(
                        " (an empty key needs `Exists`)",
                        "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"
                    )
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
                    "`{}` sets a value with `operator: Exists`: {}",
                    at(),
                    layer("", "a value must be empty when 'operator' is 'Exists'")
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
                    "`{}` sets `tolerationSeconds` without `effect: NoExecute`: {}",
                    at(),
                    layer(
                        "",
                        "effect must be 'NoExecute' when 'tolerationSeconds' is set"
                    )
                ),
                None,
            );
        }
    }
}

/// Node affinity expressions: values by operator, as core validation checks them.
pub fn node_affinity<'a>(affinity: Node<'a>, base: &str, kind: &str, out: &mut Vec<Violation<'a>>) {
    for e in affinity_expressions(affinity) {
        let Some(op_node) = e.get("operator") else {
            continue;
        };
        let op = op_node.as_str().unwrap_or("");
        let values: Vec<Node<'_>> = e.get("values").into_iter().flat_map(Node::items).collect();
        let key = e.get("key").and_then(Node::as_str).unwrap_or("?");
        let problem = match op {
            "In" | "NotIn" if values.is_empty() => Some(format!("`{op}` needs at least one value")),
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
    for e in affinity_expressions(aff) {
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

/// Toleration keys are qualified names (an empty key is the wildcard) and, with `Equal`, values
/// are label values (core `ValidateTolerations`, which Kueue's webhook reuses for flavors).
pub(super) fn toleration_names<'a>(
    list: Node<'a>,
    base: &str,
    layer: &str,
    out: &mut Vec<Violation<'a>>,
) {
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

/// The `matchExpressions` of a node affinity's required terms and preferred preferences.
fn affinity_expressions<'a>(affinity: Node<'a>) -> impl Iterator<Item = Node<'a>> {
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
    required.chain(preferred).flat_map(|term| {
        term.get("matchExpressions")
            .into_iter()
            .flat_map(Node::items)
    })
}

/// The selector of a Deployment, ReplicaSet, StatefulSet or DaemonSet against its pod
/// template's labels: apps validation rejects the object when they do not match ("selector does
/// not match template labels"), since the controller would never own the pods it creates.
pub fn selector_matches<'a>(
    spec_key: Node<'a>,
    spec: Node<'a>,
    labels: Option<Node<'a>>,
    kind: &str,
    out: &mut Vec<Violation<'a>>,
) {
    let Some(selector) = spec.get("selector") else {
        // apps/v1 defaults no selector from the template's labels (extensions/v1beta1 did).
        push(
            out,
            spec_key,
            format!("`spec.selector` is required: the API server rejects the {kind}"),
            Some("select the pod template's labels: `spec.selector.matchLabels`"),
        );
        return;
    };
    if selector.as_map().is_none() {
        return;
    }
    let label = |key: &str| labels.and_then(|l| l.get(key));
    // A value still to be filled in, on either side, may be anything.
    let open = |n: Node<'_>| n.as_str().is_none_or(is_placeholder);
    let mismatch = |at: Node<'a>, what: String, out: &mut Vec<Violation<'a>>| {
        push(
            out,
            at,
            format!(
                "`spec.selector` {what}: the API server rejects the {kind} (\"selector does not match template labels\"), since it would never own the pods it creates"
            ),
            Some(
                "give the pod template (`spec.template.metadata.labels`) the labels the selector names, or select the labels it has",
            ),
        );
    };
    // Every label the template lacks or sets otherwise is one finding, at the first of them.
    let mut wrong: Vec<String> = Vec::new();
    let mut first: Option<Node<'a>> = None;
    for (key, _, want) in selector
        .get("matchLabels")
        .into_iter()
        .flat_map(Node::entries)
    {
        if is_placeholder(key) || open(want) {
            continue;
        }
        let want_text = want.as_str().unwrap_or_default();
        let problem = match label(key) {
            None => format!("`{key}: {want_text}` (missing)"),
            Some(have) if !open(have) && have.as_str() != want.as_str() => format!(
                "`{key}: {want_text}` (it has `{}`)",
                have.as_str().unwrap_or_default()
            ),
            Some(_) => continue,
        };
        first.get_or_insert(want);
        wrong.push(problem);
    }
    if let Some(at) = first {
        mismatch(
            at,
            format!(
                "asks for labels the pod template does not carry, {}",
                wrong.join(", ")
            ),
            out,
        );
    }
    for e in selector
        .get("matchExpressions")
        .into_iter()
        .flat_map(Node::items)
    {
        let (Some(key), Some(op)) = (
            e.get("key").and_then(Node::as_str),
            e.get("operator").and_then(Node::as_str),
        ) else {
            continue;
        };
        let values: Vec<&str> = e
            .get("values")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .collect();
        if is_placeholder(key) || values.iter().any(|v| is_placeholder(v)) {
            continue;
        }
        let have = label(key);
        if have.is_some_and(open) {
            continue;
        }
        let value = have.and_then(Node::as_str);
        let fails = match op {
            "In" => !value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_some_and(|v| values.contains(&v)),
            "Exists" => have.is_none(),
            "DoesNotExist" => have.is_some(),
            _ => false,
        };
        if fails {
            mismatch(
                e,
                format!("requires `{key} {op}` and the pod template's labels do not meet it"),
                out,
            );
        }
    }
}

/// A name a script or template fills in (`<model>-vol`, `${NAME}`): left to what fills it.
fn filled_in(s: &str) -> bool {
    s.contains(['<', '>', '$', '{', '}', '%'])
}

/// Volume and container names, which core validation requires to be DNS labels (`model_repo`
/// is rejected), and, for a pod spec the API server validates whole (`mounts`: the volumes its
/// owner adds, a StatefulSet's claim templates), volume mounts and devices that name no volume
/// of the pod.
pub fn pod_volumes<'a>(
    spec: Node<'a>,
    base: &str,
    kind: &str,
    mounts: Option<Vec<&'a str>>,
    out: &mut Vec<Violation<'a>>,
) {
    let layer = format!("the API server rejects the {kind}");
    let (mounts, mut volumes) = match mounts {
        Some(added) => (true, added),
        None => (false, Vec::new()),
    };
    let mut all_known = true;
    for (i, v) in spec
        .get("volumes")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let Some(n) = v.get("name") else { continue };
        match judged(n).filter(|s| !filled_in(s)) {
            Some(name) => {
                volumes.push(name);
                if let Some(why) = names::dns_label(name) {
                    name_finding(
                        out,
                        n,
                        &format!("`{base}.volumes[{i}].name`"),
                        name,
                        &format!("{why} (a DNS label)"),
                        &layer,
                    );
                }
            }
            None => all_known = false,
        }
    }
    for list in ["initContainers", "containers"] {
        for (i, c) in spec.get(list).into_iter().flat_map(Node::items).enumerate() {
            if let Some(n) = c.get("name")
                && let Some(name) = judged(n).filter(|s| !filled_in(s))
                && let Some(why) = names::dns_label(name)
            {
                name_finding(
                    out,
                    n,
                    &format!("`{base}.{list}[{i}].name`"),
                    name,
                    &format!("{why} (a DNS label)"),
                    &layer,
                );
            }
            if !mounts || !all_known {
                continue;
            }
            for field in ["volumeMounts", "volumeDevices"] {
                for (j, m) in c.get(field).into_iter().flat_map(Node::items).enumerate() {
                    let Some(n) = m.get("name") else { continue };
                    let Some(name) = judged(n).filter(|s| !filled_in(s)) else {
                        continue;
                    };
                    if volumes.contains(&name) {
                        continue;
                    }
                    let help = if volumes.is_empty() {
                        format!("add a volume named `{name}` under `{base}.volumes`")
                    } else {
                        format!(
                            "add a volume named `{name}` under `{base}.volumes`, or name one of the pod's: {}",
                            volumes
                                .iter()
                                .map(|v| format!("`{v}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    push(
                        out,
                        n,
                        format!(
                            "`{base}.{list}[{i}].{field}[{j}].name` `{name}` names no volume of the pod: {layer}"
                        ),
                        Some(&help),
                    );
                }
            }
        }
    }
}
