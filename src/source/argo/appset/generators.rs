//! Generators, evaluated as Argo CD's `Transform` does: a generator (its fields first rendered
//! with the parameters of the matrix child before it) gives parameter sets, which its
//! `selector` filters; `matrix` combines two children, `merge` overrides a base child's sets
//! with the sets of the others that share its `mergeKeys`.

use super::params::{Params, Set, Style};
use super::{Context, GenError, git, shape};
use crate::source::argo::fleet::Known;
use crate::source::argo::gotmpl::{self, Missing, Value, sanitize_name};
use crate::source::argo::selector::Selector;
use crate::yaml::{Document, Node, construct};
use std::collections::{BTreeMap, BTreeSet};

/// Generators inside generators, this deep at most (Argo CD allows two levels).
const MAX_NESTING: usize = 3;

/// Generators that need something not in the repository.
const LIVE: &[&str] = &[
    "scmProvider",
    "pullRequest",
    "clusterDecisionResource",
    "plugin",
];

pub(super) struct Gen<'c, 'n> {
    pub(super) cx: &'c Context<'c>,
    pub(super) style: Style,
    pub(super) notes: &'n mut BTreeSet<String>,
}

fn text(n: Node<'_>) -> Option<String> {
    n.as_str().filter(|_| !n.is_null()).map(str::to_string)
}

/// A generator's `values:` as written.
fn values_of(g: Node<'_>) -> Vec<(String, String)> {
    g.get("values")
        .into_iter()
        .flat_map(Node::entries)
        .map(|(k, _, v)| (k.to_string(), text(v).unwrap_or_default()))
        .collect()
}

fn failed(e: gotmpl::Error, what: &str) -> GenError {
    match e {
        gotmpl::Error::Failed(m) => GenError::Failed(format!("{what}: {m}")),
        gotmpl::Error::Unsupported(m) => GenError::NotEvaluated(format!("{what}: {m}")),
    }
}

impl Gen<'_, '_> {
    fn missing_tags(&mut self, missing: BTreeSet<String>, whose: &str) {
        for m in missing {
            self.notes
                .insert(format!("`{m}` in {whose} has no value: left as written"));
        }
    }

    /// The kind of generator a list entry is (`list`, `matrix`…), and its body.
    fn kind<'a>(g: Node<'a>) -> Result<(&'a str, Node<'a>), GenError> {
        let mut kinds = g.entries().filter(|(k, _, _)| *k != "selector");
        match (kinds.next(), kinds.next()) {
            (Some((k, _, body)), None) => Ok((k, body)),
            (None, _) => Err(GenError::Failed("an empty generator".into())),
            (Some(_), Some(_)) => Err(GenError::Failed(
                "a generator entry with more than one generator".into(),
            )),
        }
    }

    /// The parameter sets of one generator; `outer`: the sets of the matrix child before it,
    /// whose parameters fill its fields first.
    pub(super) fn sets(
        &mut self,
        g: Node<'_>,
        outer: Option<&Params>,
        depth: usize,
    ) -> Result<Vec<Set>, GenError> {
        if depth > MAX_NESTING {
            return Err(GenError::NotEvaluated(format!(
                "generators nested over {MAX_NESTING} deep"
            )));
        }
        let interpolated;
        let g = match outer {
            Some(p) => {
                interpolated = self.interpolate(g, p)?;
                interpolated.root()
            }
            None => g,
        };
        let (kind, body) = Self::kind(g)?;
        let sets = match kind {
            "list" => self.list(body)?,
            "clusters" => self.clusters(body)?,
            "git" => self.git(body)?,
            "matrix" => self.matrix(body, depth)?,
            "merge" => self.merge(body, depth)?,
            k if LIVE.contains(&k) => {
                return Err(GenError::NotEvaluated(format!(
                    "the `{k}` generator needs a live cluster or service"
                )));
            }
            k => {
                return Err(GenError::NotEvaluated(format!(
                    "the `{k}` generator is not evaluated offline"
                )));
            }
        };
        let Some(sel) = g.get("selector") else {
            return Ok(sets);
        };
        let sel = Selector::parse(sel).map_err(GenError::Failed)?;
        Ok(sets
            .into_iter()
            .filter(|s| sel.matches(&s.params.flat()))
            .collect())
    }

    /// The generator with the outer parameters filled into its strings. A generator's
    /// `values` keep what the outer set has no key for, to be filled with its own parameters.
    fn interpolate(&mut self, g: Node<'_>, outer: &Params) -> Result<Document, GenError> {
        let mut s = shape::copy(g);
        let style = self.style;
        let mut strict = style;
        strict.missing = Missing::Error;
        let mut missing = BTreeSet::new();
        fill_generator(
            &mut s,
            &mut |t| outer.render(t, style, &mut missing),
            &mut |t| match outer.render(t, strict, &mut BTreeSet::new()) {
                Ok(r) => Ok(Some(r)),
                Err(gotmpl::Error::Failed(m)) if is_missing_key(&m) => Ok(None),
                Err(e) => Err(e),
            },
        )
        .map_err(|e| failed(e, "the matrix's second generator"))?;
        self.missing_tags(missing, "the matrix's second generator");
        Ok(construct(g.shared_text(), &s))
    }

    fn list(&mut self, l: Node<'_>) -> Result<Vec<Set>, GenError> {
        let mut out = Vec::new();
        for (i, e) in l
            .get("elements")
            .into_iter()
            .flat_map(Node::items)
            .enumerate()
        {
            let label = format!("list element {}", i + 1);
            out.push(self.element(crate::yaml::to_json(e), &label, true)?);
        }
        if let Some(y) = l.get("elementsYaml").and_then(text) {
            let parsed = crate::yaml::parse(&y, crate::yaml::Budget::default());
            if let Some(p) = parsed.problems.first() {
                return Err(GenError::Failed(format!(
                    "the `list` generator's elementsYaml: {}",
                    p.message
                )));
            }
            let items = parsed.docs.first().map(|d| crate::yaml::to_json(d.root()));
            let Some(serde_json::Value::Array(items)) = items else {
                return Err(GenError::Failed(
                    "the `list` generator's elementsYaml is not a list".into(),
                ));
            };
            let base = out.len();
            for (i, e) in items.into_iter().enumerate() {
                let label = format!("list element {}", base + i + 1);
                out.push(self.element(e, &label, false)?);
            }
        }
        Ok(out)
    }

    /// One list element. Fasttemplate elements hold strings (and `values`, a map of strings):
    /// Argo CD refuses others; elements of `elementsYaml` are taken as they are.
    fn element(
        &mut self,
        e: serde_json::Value,
        label: &str,
        strict: bool,
    ) -> Result<Set, GenError> {
        let serde_json::Value::Object(obj) = e else {
            return Err(GenError::Failed(format!("{label} is not an object")));
        };
        let params = if self.style.go {
            let Value::Map(m, _) = Value::from_json(&serde_json::Value::Object(obj)) else {
                unreachable!("an object is a map")
            };
            Params::Go(m)
        } else {
            let mut m = BTreeMap::new();
            for (k, v) in obj {
                match (k.as_str(), v) {
                    (_, serde_json::Value::String(s)) => {
                        m.insert(k, s);
                    }
                    ("values", serde_json::Value::Object(vals)) if strict => {
                        for (vk, vv) in vals {
                            let serde_json::Value::String(s) = vv else {
                                return Err(GenError::Failed(format!(
                                    "{label}: `values.{vk}` is not a string (quote it, or use goTemplate)"
                                )));
                            };
                            m.insert(format!("values.{vk}"), s);
                        }
                    }
                    (_, other) if strict => {
                        return Err(GenError::Failed(format!(
                            "{label}: `{k}` is {other}, not a string (quote it, or use goTemplate)"
                        )));
                    }
                    _ => {}
                }
            }
            Params::Flat(m)
        };
        Ok(Set {
            params,
            label: label.to_string(),
            cluster: None,
        })
    }

    fn clusters(&mut self, c: Node<'_>) -> Result<Vec<Set>, GenError> {
        let selector = match c.get("selector") {
            Some(s) => Selector::parse(s).map_err(GenError::Failed)?,
            None => Selector::default(),
        };
        if self.cx.fleet.known.is_empty() {
            self.notes.insert(
                "no cluster is known but Argo CD's own: declare them under `clusters:` in .gpuops.yaml (`server`, `labels`) or give their cluster Secrets as context".into(),
            );
        }
        let values = values_of(c);
        let mut out = Vec::new();
        for k in self.cx.fleet.select(&selector) {
            if self.cx.fleet.unknown_server.contains(&k.cluster) {
                self.notes.insert(format!(
                    "cluster `{}` has no `server` in .gpuops.yaml: its name stands in for it",
                    k.cluster
                ));
            }
            let mut params = cluster_params(&k, self.style);
            let mut missing = BTreeSet::new();
            params
                .add_values(&values, self.style, &mut missing)
                .map_err(|e| failed(e, "the `clusters` generator's values"))?;
            self.missing_tags(missing, "the `clusters` generator's values");
            out.push(Set {
                params,
                label: format!("cluster {}", k.cluster),
                cluster: Some(k.cluster.clone()),
            });
        }
        let flat = c
            .get("flatList")
            .and_then(Node::as_str)
            .is_some_and(|f| f == "true");
        if flat {
            return Ok(vec![flat_list(out, self.style)]);
        }
        Ok(out)
    }

    fn git(&mut self, g: Node<'_>) -> Result<Vec<Set>, GenError> {
        let repo = g.get("repoURL").and_then(Node::as_str).unwrap_or_default();
        let cx = self.cx;
        if !cx.repo.is_empty() && !cx.repo.contains(&super::super::normalize_repo(repo)) {
            return Err(GenError::NotEvaluated(format!(
                "the `git` generator reads another repository ({repo})"
            )));
        }
        let prefix = g
            .get("pathParamPrefix")
            .and_then(Node::as_str)
            .filter(|p| !p.is_empty());
        let mut sets = match (g.get("directories"), g.get("files")) {
            (Some(d), _) if d.items().next().is_some() => {
                git::directory_sets(d, cx.root, self.style, prefix)
            }
            (_, Some(f)) if f.items().next().is_some() => {
                git::file_sets_of(f, cx.root, self.style, prefix)?
            }
            _ => {
                return Err(GenError::Failed(
                    "a `git` generator without `directories` or `files`".into(),
                ));
            }
        };
        if sets.is_empty() && cx.repo.is_empty() {
            self.notes.insert(format!(
                "nothing in this repository matches the `git` generator ({repo} may be another repository: list this one's URLs under `argo: {{repo: […]}}`)"
            ));
        }
        let values = values_of(g);
        for s in &mut sets {
            let mut missing = BTreeSet::new();
            s.params
                .add_values(&values, self.style, &mut missing)
                .map_err(|e| failed(e, "the `git` generator's values"))?;
            self.missing_tags(missing, "the `git` generator's values");
        }
        Ok(sets)
    }

    /// The children of a matrix or merge.
    fn children<'a>(body: Node<'a>, what: &str) -> Result<Vec<Node<'a>>, GenError> {
        let children: Vec<Node<'a>> = body
            .get("generators")
            .into_iter()
            .flat_map(Node::items)
            .collect();
        if children.len() < 2 {
            return Err(GenError::Failed(format!(
                "a `{what}` generator with fewer than two generators"
            )));
        }
        Ok(children)
    }

    fn matrix(&mut self, m: Node<'_>, depth: usize) -> Result<Vec<Set>, GenError> {
        let children = Self::children(m, "matrix")?;
        if children.len() > 2 {
            return Err(GenError::Failed(
                "a `matrix` generator with more than two generators".into(),
            ));
        }
        let mut out = Vec::new();
        for a in self.sets(children[0], None, depth + 1)? {
            for b in self.sets(children[1], Some(&a.params), depth + 1)? {
                let params = Params::matrix(&a.params, &b.params)
                    .map_err(|e| GenError::Failed(format!("{} × {}: {e}", a.label, b.label)))?;
                out.push(Set {
                    params,
                    label: format!("{} × {}", a.label, b.label),
                    cluster: a.cluster.clone().or(b.cluster),
                });
            }
        }
        Ok(out)
    }

    fn merge(&mut self, m: Node<'_>, depth: usize) -> Result<Vec<Set>, GenError> {
        let children = Self::children(m, "merge")?;
        let keys: Vec<String> = m
            .get("mergeKeys")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(text)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if keys.is_empty() {
            return Err(GenError::Failed(
                "a `merge` generator without `mergeKeys`".into(),
            ));
        }
        let key_of = |s: &Set| -> String {
            let m: serde_json::Map<String, serde_json::Value> = keys
                .iter()
                .map(|k| (k.clone(), s.params.key_json(k)))
                .collect();
            serde_json::Value::Object(m).to_string()
        };
        let mut by_child = Vec::new();
        for c in &children {
            let sets = self.sets(*c, None, depth + 1)?;
            let mut seen = BTreeSet::new();
            for s in &sets {
                if !seen.insert(key_of(s)) {
                    return Err(GenError::Failed(format!(
                        "the `merge` generator's parameter sets are not unique by their merge keys. Duplicate key was {}",
                        key_of(s)
                    )));
                }
            }
            by_child.push(sets);
        }
        let mut bases = by_child.remove(0);
        for base in &mut bases {
            let key = key_of(base);
            for sets in &by_child {
                if let Some(o) = sets.iter().find(|o| key_of(o) == key) {
                    base.params.merge_over(&o.params);
                    base.label = format!("{} + {}", base.label, o.label);
                    base.cluster = base.cluster.take().or(o.cluster.clone());
                }
            }
        }
        Ok(bases)
    }
}

/// Whether a Go template error is a missing key (such `values` stay as written for later).
fn is_missing_key(m: &str) -> bool {
    m.contains("map has no entry for key")
        || m.contains("can't evaluate field")
        || m.contains("nil data; no entry")
}

/// Fills a generator's strings (keys too) with `normal`, and those of its `values:` maps with
/// `values`, which may leave a string as written.
fn fill_generator(
    s: &mut crate::yaml::Shape<'_>,
    normal: &mut dyn FnMut(&str) -> Result<String, gotmpl::Error>,
    values: &mut dyn FnMut(&str) -> Result<Option<String>, gotmpl::Error>,
) -> Result<(), gotmpl::Error> {
    use crate::yaml::Shape;
    match s {
        Shape::Map { entries, .. } => {
            for (k, v) in entries {
                let is_values = matches!(k, Shape::Scalar { text, .. } if text == "values")
                    && matches!(v, Shape::Map { .. });
                if is_values {
                    shape::fill(v, &mut |t: &str| {
                        if t.contains("{{") {
                            values(t)
                        } else {
                            Ok(None)
                        }
                    })?;
                } else {
                    fill_generator(k, normal, values)?;
                    fill_generator(v, normal, values)?;
                }
            }
        }
        Shape::Seq { items, .. } => {
            for i in items {
                fill_generator(i, normal, values)?;
            }
        }
        other => shape::fill(other, &mut |t: &str| {
            if t.contains("{{") {
                normal(t).map(Some)
            } else {
                Ok(None)
            }
        })?,
    }
    Ok(())
}

/// The parameters of one cluster, as the `clusters` generator gives them. Argo CD's own
/// cluster without a Secret has no `metadata` at all.
fn cluster_params(k: &Known, style: Style) -> Params {
    if style.go {
        let mut m = BTreeMap::from([
            ("name".to_string(), Value::Str(k.name.clone())),
            ("nameNormalized".into(), Value::Str(sanitize_name(&k.name))),
            ("server".into(), Value::Str(k.server.clone())),
            ("project".into(), Value::Str(k.project.clone())),
        ]);
        if !k.local {
            let mut meta = BTreeMap::new();
            if !k.annotations.is_empty() {
                meta.insert("annotations".to_string(), Value::str_map(&k.annotations));
            }
            if !k.labels.is_empty() {
                meta.insert("labels".to_string(), Value::str_map(&k.labels));
            }
            m.insert("metadata".into(), Value::map(meta));
        }
        return Params::Go(m);
    }
    let mut m = BTreeMap::from([
        ("name".to_string(), k.name.clone()),
        ("nameNormalized".into(), sanitize_name(&k.name)),
        ("server".into(), k.server.clone()),
        ("project".into(), k.project.clone()),
    ]);
    for (l, v) in &k.labels {
        m.insert(format!("metadata.labels.{l}"), v.clone());
    }
    for (a, v) in &k.annotations {
        m.insert(format!("metadata.annotations.{a}"), v.clone());
    }
    Params::Flat(m)
}

/// `flatList: true`: one set whose `clusters` lists every cluster's parameters.
fn flat_list(sets: Vec<Set>, style: Style) -> Set {
    let names: Vec<String> = sets.iter().filter_map(|s| s.cluster.clone()).collect();
    let items: Vec<Value> = sets
        .into_iter()
        .map(|s| match s.params {
            Params::Go(m) => Value::map(m),
            Params::Flat(m) => Value::map(m.into_iter().map(|(k, v)| (k, Value::Str(v))).collect()),
        })
        .collect();
    let params = if style.go {
        Params::Go(BTreeMap::from([(
            "clusters".to_string(),
            Value::List(items),
        )]))
    } else {
        let mut flat = BTreeMap::new();
        super::params::flatten("clusters", &Value::List(items), &mut flat);
        Params::Flat(flat)
    };
    Set {
        params,
        label: format!("clusters {}", names.join(", ")),
        cluster: None,
    }
}
