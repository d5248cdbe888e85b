//! Parameter sets, as Argo CD holds them in each template style: flat `string` values under
//! dotted keys for fasttemplate (`{{path.basename}}`), nested values for Go templates
//! (`{{ .path.basename }}`), and how two sets combine (matrix, merge).

use super::super::gotmpl::{self, Missing, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The template style of an ApplicationSet.
#[derive(Clone, Copy, Debug)]
pub(super) struct Style {
    pub(super) go: bool,
    pub(super) missing: Missing,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Params {
    Flat(BTreeMap<String, String>),
    Go(BTreeMap<String, Value>),
}

/// A parameter set, what made it, and the cluster whose parameters are in it.
#[derive(Clone, Debug)]
pub(super) struct Set {
    pub(super) params: Params,
    pub(super) label: String,
    pub(super) cluster: Option<String>,
}

/// `jeremywohl/flatten` in dot style, leaves printed with `%v`: what selectors and fasttemplate
/// see of nested values.
pub(super) fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Map(m, _) => {
            for (k, v) in m {
                flatten(&key(k), v, out);
            }
        }
        Value::List(l) => {
            for (i, v) in l.iter().enumerate() {
                flatten(&key(&i.to_string()), v, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.fmt_v());
        }
    }
}

impl Params {
    /// Renders one string of a template. Fasttemplate leaves a tag it has no value for as
    /// written (added to `missing`); a Go template fails or is not evaluated as [`gotmpl`] says.
    pub(super) fn render(
        &self,
        text: &str,
        style: Style,
        missing: &mut BTreeSet<String>,
    ) -> Result<String, gotmpl::Error> {
        match self {
            Params::Go(m) => gotmpl::render(text, &Value::map(m.clone()), style.missing),
            Params::Flat(m) => {
                // Argo CD leaves a string with no whole `{{…}}` as it is.
                let whole = text
                    .find("{{")
                    .is_some_and(|open| text[open + 2..].contains("}}"));
                if !whole {
                    return Ok(text.to_string());
                }
                let mut out = String::with_capacity(text.len());
                let mut rest = text;
                while let Some(open) = rest.find("{{") {
                    let Some(close) = rest[open + 2..].find("}}") else {
                        return Err(gotmpl::Error::Failed(
                            "invalid template: cannot find end tag \"}}\"".into(),
                        ));
                    };
                    let tag = &rest[open + 2..open + 2 + close];
                    out.push_str(&rest[..open]);
                    match m.get(tag.trim()).filter(|_| !tag.trim().is_empty()) {
                        Some(v) => out.push_str(v),
                        None => {
                            missing.insert(format!("{{{{{tag}}}}}"));
                            out.push_str(&rest[open..open + 4 + close]);
                        }
                    }
                    rest = &rest[open + 4 + close..];
                }
                out.push_str(rest);
                Ok(out)
            }
        }
    }

    /// The set as flat strings (Argo CD's `flattenParameters`), for selectors.
    pub(super) fn flat(&self) -> BTreeMap<String, String> {
        match self {
            Params::Flat(m) => m.clone(),
            Params::Go(m) => {
                let mut out = BTreeMap::new();
                flatten("", &Value::map(m.clone()), &mut out);
                out
            }
        }
    }

    /// A top-level parameter as JSON (`null` when absent): what a merge key compares.
    pub(super) fn key_json(&self, key: &str) -> serde_json::Value {
        match self {
            Params::Flat(m) => m
                .get(key)
                .map_or(serde_json::Value::Null, |v| v.clone().into()),
            Params::Go(m) => m.get(key).map_or(serde_json::Value::Null, Value::to_json),
        }
    }

    /// Adds a generator's `values:` (rendered with this set first) as `values.*`.
    pub(super) fn add_values(
        &mut self,
        values: &[(String, String)],
        style: Style,
        missing: &mut BTreeSet<String>,
    ) -> Result<(), gotmpl::Error> {
        if values.is_empty() {
            return Ok(());
        }
        let mut rendered = Vec::with_capacity(values.len());
        for (k, v) in values {
            rendered.push((k.clone(), self.render(v, style, missing)?));
        }
        match self {
            Params::Flat(m) => {
                for (k, v) in rendered {
                    m.insert(format!("values.{k}"), v);
                }
            }
            Params::Go(m) => {
                let pairs: BTreeMap<String, String> = rendered.into_iter().collect();
                m.insert("values".into(), Value::str_map(&pairs));
            }
        }
        Ok(())
    }

    /// The matrix of two sets: Go templates merge `a` over `b`, nested maps key by key
    /// (`mergo.WithOverride`); fasttemplate sets may not disagree on a key.
    pub(super) fn matrix(a: &Params, b: &Params) -> Result<Params, String> {
        match (a, b) {
            (Params::Go(a), Params::Go(b)) => {
                let mut out = b.clone();
                deep_override(&mut out, a);
                Ok(Params::Go(out))
            }
            (Params::Flat(a), Params::Flat(b)) => {
                let mut out = a.clone();
                for (k, v) in b {
                    match out.get(k) {
                        Some(cur) if cur != v => {
                            return Err(format!(
                                "found duplicate key {k} with different value, a: {cur} ,b: {v}"
                            ));
                        }
                        _ => {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                }
                Ok(Params::Flat(out))
            }
            _ => Err("parameter sets of two template styles".into()),
        }
    }

    /// A merge generator's override of a base set: key by key (Go templates: nested maps
    /// merged, as `mergo.WithOverride`).
    pub(super) fn merge_over(&mut self, over: &Params) {
        match (self, over) {
            (Params::Go(base), Params::Go(o)) => deep_override(base, o),
            (Params::Flat(base), Params::Flat(o)) => {
                base.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {}
        }
    }
}

/// `mergo.Merge(dst, src, mergo.WithOverride)` on `map[string]any`: `src` wins, maps in both
/// merge, and a non-empty list already in `dst` stays.
fn deep_override(dst: &mut BTreeMap<String, Value>, src: &BTreeMap<String, Value>) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(Value::Map(d, _)), Value::Map(s, _)) => deep_override(d, s),
            (Some(Value::List(d)), Value::List(_)) if !d.is_empty() => {}
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(j: serde_json::Value) -> Params {
        match Value::from_json(&j) {
            Value::Map(m, _) => Params::Go(m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn matrix_sets_combine_as_argo_cd_combines_them() {
        let a = go(serde_json::json!({"name": "prod", "values": {"x": "1"}, "n": ""}));
        let b =
            go(serde_json::json!({"name": "other", "path": "p", "values": {"y": "2"}, "n": "b"}));
        let Params::Go(m) = Params::matrix(&a, &b).unwrap() else {
            unreachable!()
        };
        assert_eq!(m["name"], Value::Str("prod".into()));
        assert_eq!(m["n"], Value::Str(String::new()));
        assert_eq!(m["path"], Value::Str("p".into()));
        let mut flat = BTreeMap::new();
        flatten("", &m["values"], &mut flat);
        assert_eq!(flat.len(), 2);
        let fa = Params::Flat(BTreeMap::from([("name".into(), "a".into())]));
        let fb = Params::Flat(BTreeMap::from([("name".into(), "b".into())]));
        assert!(
            Params::matrix(&fa, &fb)
                .unwrap_err()
                .contains("duplicate key name")
        );
    }

    #[test]
    fn fasttemplate_leaves_unknown_tags_and_go_templates_fail_or_render() {
        let style = Style {
            go: false,
            missing: Missing::Default,
        };
        let p = Params::Flat(BTreeMap::from([("path.basename".into(), "train".into())]));
        let mut missing = BTreeSet::new();
        assert_eq!(
            p.render("a/{{ path.basename }}/{{nope}}", style, &mut missing)
                .unwrap(),
            "a/train/{{nope}}"
        );
        assert!(missing.contains("{{nope}}"));
        assert_eq!(p.render("{{open", style, &mut missing).unwrap(), "{{open");
        assert!(p.render("{{a}} {{open", style, &mut missing).is_err());
        let g = go(serde_json::json!({"replicas": 3, "tags": ["a", "b"]}));
        let style = Style {
            go: true,
            missing: Missing::Error,
        };
        assert_eq!(
            g.render("{{ .replicas }}", style, &mut missing).unwrap(),
            "3"
        );
        assert!(g.render("{{ .nope }}", style, &mut missing).is_err());
        assert_eq!(
            g.flat(),
            BTreeMap::from([
                ("replicas".into(), "3".into()),
                ("tags.0".into(), "a".into()),
                ("tags.1".into(), "b".into())
            ])
        );
    }
}
