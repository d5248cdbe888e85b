//! A CRD's `x-kubernetes-list-type`: the API server rejects a list it declares a `set` that holds
//! an item twice, and one it declares a `map` that holds two items with the same
//! `x-kubernetes-list-map-keys` (`Duplicate value`). Checked on the object as admitted (defaults
//! filled in, so a defaulted map key counts).

use crate::quantity::is_placeholder;
use serde_json::Value;

/// Schemas and objects nested deeper are not searched.
const MAX_DEPTH: usize = 64;

/// A repeated item: its instance path (keys and indices), what it repeats, and the keys of a map
/// list (none for a set).
pub struct Repeat {
    pub path: Vec<String>,
    pub what: String,
    pub keys: Vec<String>,
}

/// The repeated items of `v` under `schema` (an `openAPIV3Schema` as the CRD writes it).
pub fn repeats(schema: &Value, v: &Value) -> Vec<Repeat> {
    let mut out = Vec::new();
    walk(schema, v, &mut Vec::new(), &mut out, 0);
    out
}

fn walk(schema: &Value, v: &Value, path: &mut Vec<String>, out: &mut Vec<Repeat>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, val) in m {
                if let Some(s) = props.and_then(|p| p.get(k)).or(additional) {
                    path.push(k.clone());
                    walk(s, val, path, out, depth + 1);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => repeated(items, path, &[], out, |item| {
                    (!placeholder(item)).then(|| vec![item.clone()])
                }),
                Some("map") => {
                    let keys: Vec<&str> = schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect();
                    if !keys.is_empty() {
                        // An item without one of its keys is the schema's finding, not a repeat.
                        repeated(items, path, &keys, out, |item| {
                            let values: Option<Vec<Value>> =
                                keys.iter().map(|k| item.get(*k).cloned()).collect();
                            values.filter(|vs| !vs.iter().any(placeholder))
                        });
                    }
                }
                _ => {}
            }
            if let Some(s) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    walk(s, item, path, out, depth + 1);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// Items whose identity (`id`: the item of a set, the key values of a map) an earlier one has.
fn repeated(
    items: &[Value],
    path: &[String],
    keys: &[&str],
    out: &mut Vec<Repeat>,
    id: impl Fn(&Value) -> Option<Vec<Value>>,
) {
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(key) = id(item) else { continue };
        if seen.contains(&key) {
            let shown: Vec<String> = key.iter().map(Value::to_string).collect();
            let mut at = path.to_vec();
            at.push(i.to_string());
            out.push(Repeat {
                path: at,
                what: shown.join(", "),
                keys: keys.iter().map(|k| k.to_string()).collect(),
            });
        } else {
            seen.push(key);
        }
    }
}

/// A value filled in before apply: two such are not known to be equal.
fn placeholder(v: &Value) -> bool {
    match v {
        Value::String(s) => is_placeholder(s),
        Value::Array(a) => a.iter().any(placeholder),
        Value::Object(m) => m.values().any(placeholder),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_and_maps_repeat() {
        let schema = json!({"type": "object", "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "map": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "port"],
                    "items": {"type": "object"}},
            "atomic": {"type": "array", "items": {"type": "string"}}
        }});
        let v = json!({
            "set": ["a", "b", "a", "${X}", "${X}"],
            "map": [{"name": "x", "port": 1}, {"name": "x", "port": 2}, {"name": "x", "port": 1, "v": 3}, {"name": "y"}],
            "atomic": ["a", "a"]
        });
        let mut found: Vec<(String, String)> = repeats(&schema, &v)
            .into_iter()
            .map(|r| (r.path.join("."), r.what))
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                ("map.2".to_string(), "\"x\", 1".to_string()),
                ("set.2".to_string(), "\"a\"".to_string())
            ]
        );
    }
}
