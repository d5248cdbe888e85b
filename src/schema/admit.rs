//! What the API server does to a custom object before it validates it against its CRD's
//! structural schema: `null` on a field that is not `nullable` is pruned (dropped), then
//! `default`s fill the fields that are absent, level by level. A required field that carries a
//! default is therefore never missing, and `metadata: null` is no error. The mutating webhooks of
//! the kinds gpuops knows run before validation too ([`webhook_defaults`]).

use serde_json::Value;

/// Applies pruning of nulls and defaulting to `v` as `schema` (an `openAPIV3Schema`, as the CRD
/// writes it) describes it.
pub fn admit(v: &mut Value, schema: &Value) {
    admit_at(v, schema, 0);
}

/// Whether a mutating webhook gpuops knows fills fields of this kind before validation.
pub fn has_webhook_defaults(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("jobset.x-k8s.io", "JobSet")
            | ("serving.kserve.io", "InferenceService")
            | ("grove.io", "PodCliqueSet")
    )
}

/// The defaults the mutating webhooks of the kinds gpuops knows fill in before validation.
pub fn webhook_defaults(group: &str, kind: &str, v: &mut Value) {
    // KServe's webhook names the first container of a custom predictor, transformer or
    // explainer `kserve-container`.
    if (group, kind) == ("serving.kserve.io", "InferenceService") {
        for component in ["predictor", "transformer", "explainer"] {
            if let Some(first) = v
                .pointer_mut(&format!("/spec/{component}/containers/0"))
                .and_then(Value::as_object_mut)
                && first
                    .get("name")
                    .is_none_or(|n| n.as_str().is_none_or(str::is_empty))
            {
                first.insert("name".into(), Value::String("kserve-container".into()));
            }
        }
        return;
    }
    // Grove's defaulting webhook returns the object as its Go type writes it, where a clique's
    // `roleName` is never omitted: an absent one comes back as `""`.
    if (group, kind) == ("grove.io", "PodCliqueSet") {
        let cliques = v
            .pointer_mut("/spec/template/cliques")
            .and_then(Value::as_array_mut);
        for clique in cliques.into_iter().flatten() {
            if let Some(spec) = clique.get_mut("spec").and_then(Value::as_object_mut) {
                spec.entry("roleName")
                    .or_insert_with(|| Value::String(String::new()));
            }
        }
        return;
    }
    // JobSet's webhook names unnamed failure-policy rules `failurePolicyRule<i>`.
    if has_webhook_defaults(group, kind)
        && let Some(rules) = v
            .pointer_mut("/spec/failurePolicy/rules")
            .and_then(Value::as_array_mut)
    {
        for (i, rule) in rules.iter_mut().enumerate() {
            if let Some(r) = rule.as_object_mut()
                && r.get("name")
                    .is_none_or(|n| n.as_str().is_none_or(str::is_empty))
            {
                r.insert(
                    "name".into(),
                    Value::String(format!("failurePolicyRule{i}")),
                );
            }
        }
    }
}

/// Schemas nested deeper are left as they are (the validator still sees the object).
const MAX_DEPTH: usize = 64;

fn admit_at(v: &mut Value, schema: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            let field_schema = |k: &str| props.and_then(|p| p.get(k)).or(additional);
            map.retain(|k, val| !(val.is_null() && field_schema(k).is_some_and(|s| !nullable(s))));
            if let Some(props) = props {
                for (k, s) in props {
                    if !map.contains_key(k)
                        && let Some(d) = s.get("default")
                    {
                        map.insert(k.clone(), d.clone());
                    }
                }
            }
            for (k, val) in map.iter_mut() {
                if let Some(s) = field_schema(k) {
                    admit_at(val, s, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items").filter(|s| s.is_object()) {
                for item in items.iter_mut() {
                    if item.is_null() && !nullable(s) {
                        continue;
                    }
                    admit_at(item, s, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn nullable(schema: &Value) -> bool {
    schema.get("nullable") == Some(&Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_are_pruned_then_defaults_fill_what_is_absent() {
        let schema = json!({
            "type": "object",
            "properties": {
                "metadata": {"type": "object"},
                "note": {"type": "string", "nullable": true},
                "groups": {"type": "array", "items": {
                    "type": "object",
                    "required": ["minReplicas", "maxReplicas"],
                    "properties": {
                        "minReplicas": {"type": "integer", "default": 0},
                        "maxReplicas": {"type": "integer", "default": 2147483647},
                        "replicas": {"type": "integer"}
                    }
                }},
                "mode": {"type": "string", "default": "auto"}
            }
        });
        let mut v = json!({
            "metadata": null,
            "note": null,
            "groups": [{"replicas": 2, "maxReplicas": null}]
        });
        admit(&mut v, &schema);
        assert_eq!(
            v,
            json!({
                "note": null,
                "groups": [{"replicas": 2, "minReplicas": 0, "maxReplicas": 2147483647}],
                "mode": "auto"
            })
        );
    }

    #[test]
    fn a_grove_clique_gets_the_role_name_its_webhook_writes() {
        let mut v = serde_json::json!({"spec": {"template": {"cliques": [
            {"name": "frontend", "spec": {"replicas": 2}},
            {"name": "worker", "spec": {"roleName": "worker"}}
        ]}}});
        webhook_defaults("grove.io", "PodCliqueSet", &mut v);
        assert_eq!(
            v.pointer("/spec/template/cliques/0/spec/roleName"),
            Some(&serde_json::json!(""))
        );
        assert_eq!(
            v.pointer("/spec/template/cliques/1/spec/roleName"),
            Some(&serde_json::json!("worker"))
        );
    }

    #[test]
    fn jobset_failure_policy_rules_are_named_as_its_webhook_names_them() {
        let mut v = json!({"spec": {"failurePolicy": {"rules": [{"action": "FailJobSet"}, {"name": "x"}]}}});
        webhook_defaults("jobset.x-k8s.io", "JobSet", &mut v);
        assert_eq!(
            v["spec"]["failurePolicy"]["rules"][0]["name"],
            "failurePolicyRule0"
        );
        assert_eq!(v["spec"]["failurePolicy"]["rules"][1]["name"], "x");
    }

    #[test]
    fn kserve_names_the_first_container_of_a_component() {
        let mut v =
            json!({"spec": {"predictor": {"containers": [{"image": "a"}, {"image": "b"}]}}});
        webhook_defaults("serving.kserve.io", "InferenceService", &mut v);
        assert_eq!(
            v["spec"]["predictor"]["containers"][0]["name"],
            "kserve-container"
        );
        // Only the first: a second container without a name is still rejected.
        assert!(
            v["spec"]["predictor"]["containers"][1]
                .get("name")
                .is_none()
        );
    }

    #[test]
    fn maps_of_objects_are_defaulted_through_additional_properties() {
        let schema = json!({
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"weight": {"default": 1}}}
        });
        let mut v = json!({"a": {}, "b": {"weight": 3}});
        admit(&mut v, &schema);
        assert_eq!(v, json!({"a": {"weight": 1}, "b": {"weight": 3}}));
    }
}
