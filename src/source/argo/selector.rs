//! Kubernetes label selectors (`matchLabels`, `matchExpressions`), as the ApplicationSet
//! `clusters` generator filters cluster Secrets with them and a generator's own `selector`
//! filters its parameter sets.

use crate::yaml::Node;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    labels: Vec<(String, String)>,
    exprs: Vec<(String, Op, Vec<String>)>,
}

/// A scalar as Kubernetes would hold it in a string field.
fn text(n: Node<'_>) -> Option<String> {
    n.as_str().filter(|_| !n.is_null()).map(str::to_string)
}

impl Selector {
    /// Reads a selector; `Err`: one Kubernetes rejects (Argo CD fails on it).
    pub fn parse(n: Node<'_>) -> Result<Selector, String> {
        let mut s = Selector::default();
        if n.is_null() {
            return Ok(s);
        }
        for (k, _, v) in n.get("matchLabels").into_iter().flat_map(Node::entries) {
            s.labels.push((k.to_string(), text(v).unwrap_or_default()));
        }
        for e in n.get("matchExpressions").into_iter().flat_map(Node::items) {
            let key = e.get("key").and_then(text).unwrap_or_default();
            let values: Vec<String> = e
                .get("values")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(text)
                .collect();
            let op = match e.get("operator").and_then(Node::as_str).unwrap_or_default() {
                "In" => Op::In,
                "NotIn" => Op::NotIn,
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                other => return Err(format!("`{other}` is not a label selector operator")),
            };
            let needs_values = matches!(op, Op::In | Op::NotIn);
            if needs_values == values.is_empty() {
                return Err(format!(
                    "a selector expression on `{key}` with operator {op:?} {}",
                    if needs_values {
                        "needs values"
                    } else {
                        "takes no values"
                    }
                ));
            }
            s.exprs.push((key, op, values));
        }
        Ok(s)
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.exprs.is_empty()
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.exprs.iter().all(|(k, op, values)| {
                let got = labels.get(k);
                match op {
                    Op::In => got.is_some_and(|g| values.contains(g)),
                    Op::NotIn => got.is_none_or(|g| !values.contains(g)),
                    Op::Exists => got.is_some(),
                    Op::DoesNotExist => got.is_none(),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn sel(text: &str) -> Result<Selector, String> {
        let p = parse(text, Budget::default());
        Selector::parse(p.docs[0].root())
    }

    #[test]
    fn labels_and_expressions_all_hold() {
        let s = sel("matchLabels: {gpu: 'true'}\nmatchExpressions:\n  - {key: environment, operator: In, values: [prod, staging]}\n  - {key: retired, operator: DoesNotExist}\n").unwrap();
        let labels = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        assert!(s.matches(&labels(&[("gpu", "true"), ("environment", "prod")])));
        assert!(!s.matches(&labels(&[("gpu", "true"), ("environment", "dev")])));
        assert!(!s.matches(&labels(&[
            ("gpu", "true"),
            ("environment", "prod"),
            ("retired", "")
        ])));
        assert!(!s.matches(&labels(&[("environment", "prod")])));
        let not_in = sel("matchExpressions: [{key: env, operator: NotIn, values: [dev]}]").unwrap();
        assert!(not_in.matches(&labels(&[])));
        assert!(sel("matchExpressions: [{key: env, operator: Near}]").is_err());
        assert!(sel("matchExpressions: [{key: env, operator: In}]").is_err());
        assert!(sel("{}").unwrap().is_empty());
    }
}
