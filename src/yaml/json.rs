//! YAML as JSON, typed the way Kubernetes' YAML 1.1 reader types it (schemas, policy data).

use super::{Node, Value as YValue, Yaml11};
use serde_json::{Map, Value, json};

/// A YAML node as Kubernetes' YAML 1.1 reader types it.
pub fn to_json(n: Node<'_>) -> Value {
    match n.value() {
        YValue::Map(m) => {
            let mut o = Map::new();
            for (k, v) in m {
                o.insert(k.as_str().unwrap_or_default().to_string(), to_json(v));
            }
            Value::Object(o)
        }
        YValue::Seq(s) => Value::Array(s.iter().map(to_json).collect()),
        YValue::Scalar { text, .. } => match n.yaml11() {
            Some(Yaml11::Null) => Value::Null,
            Some(Yaml11::Bool) => Value::Bool(matches!(
                text,
                "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON"
            )),
            Some(Yaml11::Int) => {
                let t = text.replace('_', "");
                let (neg, body) = match t.strip_prefix('-') {
                    Some(b) => (true, b.to_string()),
                    None => (false, t.trim_start_matches('+').to_string()),
                };
                let v = match body.strip_prefix("0x") {
                    Some(h) => i64::from_str_radix(h, 16).ok(),
                    None if body.len() > 1 && body.starts_with('0') => {
                        i64::from_str_radix(&body[1..], 8).ok()
                    }
                    None => body.parse::<i64>().ok(),
                };
                v.map_or_else(
                    || Value::String(text.to_string()),
                    |i| json!(if neg { -i } else { i }),
                )
            }
            Some(Yaml11::Float) => text
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                .unwrap_or_else(|| Value::String(text.to_string())),
            _ => Value::String(text.to_string()),
        },
    }
}
