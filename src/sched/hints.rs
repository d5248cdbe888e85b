//! How to make a pod's label requirement meet a pool: allowed values and similar labels.

use super::requirements::{is_well_known, normalize_key};
use crate::model::NodePool;

/// A label value as YAML must spell it to stay a string (`"true"`, `"8"`).
pub fn yaml_value(v: &str) -> String {
    let lower = v.to_ascii_lowercase();
    let special = matches!(
        lower.as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    ) || v.parse::<f64>().is_ok();
    if special {
        format!("\"{v}\"")
    } else {
        v.to_string()
    }
}

/// For a pod value the pool's own constraint on the same key rejects: the values it allows.
/// How to make a label requirement (`shown`, e.g. `` `role=gpu` ``) meet a pool: the values the
/// pool allows for that key, or a similar label it sets. `None` when the pool offers neither.
pub fn label_hint(
    pool: &NodePool<'_>,
    key: &str,
    value: Option<&str>,
    shown: &str,
) -> Option<String> {
    let allowed = allowed_values(pool, key);
    if !allowed.is_empty() && value.is_some() {
        return Some(format!(
            "use a `{key}` value NodePool `{}` allows ({}), or allow {shown} in its requirement on that key",
            pool.name,
            crate::diag::backticked(&allowed, ", ")
        ));
    }
    let labels = "its `spec.template.metadata.labels`";
    Some(match similar_pool_label(pool, key, value)? {
        (k, v) if !v.is_empty() => format!(
            "did you mean `{k}: {}`? NodePool `{}` sets that label on its nodes; otherwise add {shown} to {labels}",
            yaml_value(&v),
            pool.name
        ),
        (k, _) => format!(
            "did you mean `{k}`? NodePool `{}` defines that label; otherwise add {shown} to {labels}",
            pool.name
        ),
    })
}

pub fn allowed_values<'a>(pool: &NodePool<'a>, key: &str) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for (k, _, v) in &pool.labels {
        if *k == key {
            out.extend(v.as_str());
        }
    }
    for r in &pool.requirements {
        if normalize_key(r.key) == normalize_key(key) && r.op == "In" {
            out.extend(r.values.iter().copied());
        }
    }
    out
}

/// A label the pool does set that looks like what the pod meant by `key=value`: same value under
/// another key, or a key a few edits away. Returns (key, value) as the pool writes it.
pub fn similar_pool_label<'a>(
    pool: &NodePool<'a>,
    key: &str,
    value: Option<&str>,
) -> Option<(&'a str, String)> {
    let mut candidates: Vec<(&'a str, String)> = pool
        .labels
        .iter()
        .filter_map(|(k, _, v)| Some((*k, v.as_str()?.to_string())))
        .collect();
    for r in &pool.requirements {
        if matches!(r.op, "In" | "Exists") && !is_well_known(r.key) {
            candidates.push((r.key, r.values.first().copied().unwrap_or("").to_string()));
        }
    }
    let near = |k: &str| {
        let d = crate::text::edit_distance(k, key);
        d > 0 && d <= (key.len().max(k.len()) / 4).max(2)
    };
    let short = |k: &str| k.rsplit('/').next().unwrap_or(k).to_string();
    candidates
        .iter()
        .find(|(k, v)| {
            *k != key
                && value.is_some_and(|x| x == v)
                && (near(k) || short(k).contains(&short(key)) || short(key).contains(&short(k)))
        })
        .or_else(|| {
            candidates
                .iter()
                .find(|(k, v)| *k != key && value.is_some_and(|x| x == v))
        })
        .or_else(|| candidates.iter().find(|(k, _)| near(k)))
        .cloned()
}
