//! Structural check of a profile against its own JSON schema (the one `gpuops schema profile`
//! prints), walked over the spanned YAML tree so that every problem — unknown keys, wrong types,
//! values outside an enum, missing keys — is reported at once, each at its place. Typed parsing
//! with serde stops at the first problem; it runs only once this pass is clean.

use super::ProfileProblem;
use super::wrong::Wrong;
use crate::yaml::{Node, Style, Value as YValue};
use serde_json::{Map, Value};

pub(super) struct Walker<'a> {
    defs: Option<&'a Map<String, Value>>,
    text: &'a str,
}

impl<'a> Walker<'a> {
    pub(super) fn new(schema: &'a Value, text: &'a str) -> Self {
        Walker {
            defs: schema.get("$defs").and_then(Value::as_object),
            text,
        }
    }

    fn resolve(&self, mut s: &'a Value) -> &'a Value {
        // `$ref: "#/$defs/Name"`; a few hops at most (schemars does not chain them).
        for _ in 0..8 {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                break;
            };
            match r
                .strip_prefix("#/$defs/")
                .and_then(|name| self.defs.and_then(|d| d.get(name)))
            {
                Some(target) => s = target,
                None => break,
            }
        }
        s
    }

    fn problem(
        &self,
        wrong: Wrong,
        node: Node<'_>,
        message: String,
        help: Option<String>,
        out: &mut Vec<ProfileProblem>,
    ) {
        out.push(ProfileProblem {
            wrong,
            span: super::first_line(self.text, node.span()),
            message,
            help,
            related: Vec::new(),
        });
    }

    /// Checks `node` against `schema`; `what` names the value in messages (a key, or `the profile`).
    pub(super) fn check(
        &self,
        schema: &'a Value,
        node: Node<'_>,
        what: &str,
        out: &mut Vec<ProfileProblem>,
    ) {
        let s = self.resolve(schema);
        if let Some(alts) = s
            .get("anyOf")
            .or_else(|| s.get("oneOf"))
            .and_then(Value::as_array)
        {
            self.alternatives(alts, node, what, out);
            return;
        }
        let types = types_of(s);
        if !types.is_empty() && !types.iter().any(|t| matches_type(t, node)) {
            let expected = types
                .iter()
                .find(|t| **t != "null")
                .copied()
                .unwrap_or("null");
            let message = format!(
                "`{what}` must be {}, found {}",
                describe_type(expected),
                found(node)
            );
            let help = match (expected, node.style()) {
                ("integer", Some(Style::SingleQuoted | Style::DoubleQuoted)) => {
                    Some("write the number without quotes".to_string())
                }
                ("integer", _) if node.as_str().is_some_and(|t| t.parse::<f64>().is_ok()) => Some(
                    "GPU and worker counts are whole numbers: devices are handed out whole"
                        .to_string(),
                ),
                _ => None,
            };
            self.problem(Wrong::WrongType, node, message, help, out);
            return;
        }
        if node.is_null() && types.contains(&"null") {
            return;
        }
        if let Some(allowed) = allowed_values(s) {
            let text = node.as_str().unwrap_or_default();
            if !allowed.iter().any(|a| a == text) {
                self.bad_choice(node, what, &allowed, out);
            }
            return;
        }
        match node.value() {
            YValue::Scalar { text, .. } => self.bounds(s, node, text, what, out),
            YValue::Seq(items) => {
                if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    self.problem(
                        Wrong::OutOfRange,
                        node,
                        format!(
                            "`{what}` needs at least {min} entr{}",
                            if min == 1 { "y" } else { "ies" }
                        ),
                        None,
                        out,
                    );
                }
                if let Some(item) = s.get("items") {
                    let label = format!("{what} entry");
                    for i in items {
                        self.check(item, i, &label, out);
                    }
                }
            }
            YValue::Map(_) => self.object(s, node, what, out),
        }
    }

    fn bounds(
        &self,
        s: &Value,
        node: Node<'_>,
        text: &str,
        what: &str,
        out: &mut Vec<ProfileProblem>,
    ) {
        if !types_of(s).contains(&"integer") {
            return;
        }
        let Ok(v) = text.trim_start_matches('+').parse::<i128>() else {
            return;
        };
        let max = match s.get("format").and_then(Value::as_str) {
            Some("uint32") => Some(i128::from(u32::MAX)),
            Some("uint8") => Some(i128::from(u8::MAX)),
            Some("uint16") => Some(i128::from(u16::MAX)),
            Some("int32") => Some(i128::from(i32::MAX)),
            _ => None,
        };
        let max = s
            .get("maximum")
            .and_then(Value::as_i64)
            .map(i128::from)
            .or(max);
        if let Some(min) = s.get("minimum").and_then(Value::as_i64)
            && v < i128::from(min)
        {
            self.problem(
                Wrong::OutOfRange,
                node,
                format!("`{what}` must be at least {min}, found {v}"),
                None,
                out,
            );
            return;
        }
        if let Some(max) = max
            && v > max
        {
            self.problem(
                Wrong::OutOfRange,
                node,
                format!("`{what}` must be at most {max}, found {v}"),
                None,
                out,
            );
        }
    }

    fn object(&self, s: &'a Value, node: Node<'_>, what: &str, out: &mut Vec<ProfileProblem>) {
        let props = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties");
        for (key, key_node, value) in node.entries() {
            if let Some(p) = props.and_then(|p| p.get(key)) {
                self.check(p, value, key, out);
                continue;
            }
            match additional {
                Some(Value::Bool(false)) => {
                    let known: Vec<&str> = props
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    let hint = known
                        .iter()
                        .map(|k| (crate::text::edit_distance(key, k), *k))
                        .filter(|(d, _)| *d <= 3)
                        .min()
                        .map(|(_, k)| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    self.problem(
                        Wrong::UnknownKey,
                        key_node,
                        format!("unknown key `{key}` in `{what}`"),
                        Some(format!("{hint}known keys: {}", known.join(", "))),
                        out,
                    );
                }
                Some(extra @ Value::Object(_)) => self.check(extra, value, key, out),
                _ => {}
            }
        }
        let missing: Vec<String> = s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|req| node.entry(req).is_none())
            .map(|req| format!("`{req}`"))
            .collect();
        if !missing.is_empty() {
            let list = match missing.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => missing.join(""),
            };
            self.problem(
                Wrong::MissingKey,
                node,
                format!("`{what}` is missing {list}"),
                None,
                out,
            );
        }
    }

    fn alternatives(
        &self,
        alts: &'a [Value],
        node: Node<'_>,
        what: &str,
        out: &mut Vec<ProfileProblem>,
    ) {
        let mut best: Option<Vec<ProfileProblem>> = None;
        let mut choices: Option<Vec<String>> = Some(Vec::new());
        for a in alts {
            let a = self.resolve(a);
            let mut sub = Vec::new();
            self.check(a, node, what, &mut sub);
            if sub.is_empty() {
                return;
            }
            match (&mut choices, allowed_values(a)) {
                (Some(c), Some(vals)) => c.extend(vals),
                (Some(_), None) if types_of(a) == ["null"] => {}
                _ => choices = None,
            }
            // A `null` alternative (an optional value) only explains a null.
            if types_of(a) == ["null"] && !node.is_null() {
                continue;
            }
            if best.as_ref().is_none_or(|b| sub.len() < b.len()) {
                best = Some(sub);
            }
        }
        match choices {
            Some(c) if !c.is_empty() && node.as_str().is_some() && !node.is_null() => {
                self.bad_choice(node, what, &c, out)
            }
            _ => out.extend(best.unwrap_or_default()),
        }
    }

    fn bad_choice(
        &self,
        node: Node<'_>,
        what: &str,
        allowed: &[String],
        out: &mut Vec<ProfileProblem>,
    ) {
        let text = node.as_str().unwrap_or_default();
        let hint = allowed
            .iter()
            .map(|a| (crate::text::edit_distance(&text.to_lowercase(), a), a))
            .filter(|(d, _)| *d <= 3)
            .min()
            .map(|(_, a)| format!("did you mean `{a}`? "))
            .unwrap_or_default();
        self.problem(
            Wrong::NotAllowed,
            node,
            format!(
                "`{what}` must be one of: {}; found {}",
                allowed.join(", "),
                found(node)
            ),
            (!hint.is_empty()).then(|| hint.trim_end().to_string()),
            out,
        );
    }
}

fn types_of(s: &Value) -> Vec<&str> {
    match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The values of an `enum`/`const` schema.
fn allowed_values(s: &Value) -> Option<Vec<String>> {
    if let Some(c) = s.get("const") {
        return c.as_str().map(|c| vec![c.to_string()]);
    }
    s.get("enum")?
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn is_plain(n: Node<'_>) -> bool {
    n.style() == Some(Style::Plain)
}

fn matches_type(t: &str, n: Node<'_>) -> bool {
    match t {
        "object" => n.as_map().is_some(),
        "array" => n.as_seq().is_some(),
        "null" => n.is_null(),
        "string" => n.as_str().is_some() && !n.is_null(),
        "boolean" => is_plain(n) && matches!(n.as_str(), Some("true" | "false")),
        "integer" => {
            is_plain(n)
                && n.as_str().is_some_and(|t| {
                    let d = t.strip_prefix(['+', '-']).unwrap_or(t);
                    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
                })
        }
        "number" => {
            is_plain(n)
                && n.as_str()
                    .is_some_and(|t| t.parse::<f64>().is_ok_and(f64::is_finite))
        }
        _ => true,
    }
}

fn describe_type(t: &str) -> &'static str {
    match t {
        "object" => "a mapping",
        "array" => "a list",
        "string" => "a string",
        "integer" => "a whole number",
        "number" => "a number",
        "boolean" => "true or false",
        _ => "empty",
    }
}

fn found(n: Node<'_>) -> String {
    match n.value() {
        YValue::Map(_) => "a mapping".into(),
        YValue::Seq(_) => "a list".into(),
        YValue::Scalar { .. } if n.is_null() => "nothing".into(),
        YValue::Scalar { text, .. } => {
            let short: String = text.chars().take(40).collect();
            let ell = if text.chars().count() > 40 { "…" } else { "" };
            format!("`{short}{ell}`")
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::render::parse_profile;

    #[test]
    fn every_structural_problem_is_reported_at_once() {
        let text = "apiVersion: gpuops.dev/v1\nkind: Platform\ncluster: {name: c}\nclasses:\n  - name: t\n    type: training\n    gpus: a100\n    capacity: spot\n    maxGpus: -1\n    bogus: 1\n";
        let e = parse_profile("p.yaml", text).unwrap_err();
        let m: Vec<&str> = e.problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(m.len(), 5, "{m:#?}");
        assert!(m[0].contains("`apiVersion` must be one of: gpuops.dev/v1alpha1"));
        assert!(
            m[1].contains("`cluster` is missing `region`, `zones`, `nodeRole` and `amiAlias`"),
            "{}",
            m[1]
        );
        assert!(
            m.iter()
                .any(|x| x.contains("`gpus` must be a list, found `a100`"))
        );
        assert!(
            m.iter()
                .any(|x| x.contains("`maxGpus` must be at least 0, found -1"))
        );
        assert!(
            m.iter()
                .any(|x| x.contains("unknown key `bogus` in `classes entry`"))
        );
    }

    #[test]
    fn empty_and_multi_document_profiles() {
        let e = parse_profile("p.yaml", "").unwrap_err();
        assert!(e.problems[0].message.contains("empty"));
        let e = parse_profile("p.yaml", "a: 1\n---\nb: 2\n").unwrap_err();
        assert!(e.problems.iter().any(|p| p.message.contains("second one")));
        let e = parse_profile("p.yaml", "a: [1\n").unwrap_err();
        assert_eq!(e.problems.len(), 1, "{:#?}", e.problems);
    }
}
