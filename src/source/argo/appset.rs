//! Expanding an `ApplicationSet` offline: its generators give parameter sets, and the template is
//! filled in once per set, giving Applications.
//!
//! Generators evaluated: `list` (its elements), `git` with `directories` (over this repository's
//! tree), and `clusters` (the clusters of `clusters:` in .gpuops.yaml stand in for the cluster
//! secrets Argo CD would read). Others need a live cluster or a remote service (`scmProvider`,
//! `pullRequest`, `clusterDecisionResource`, `plugin`) or are not implemented (`matrix`, `merge`,
//! git `files`): each is reported as not evaluated, with the reason.
//!
//! Parameters are filled into every scalar of the template (keys too): `{{name}}` (fasttemplate,
//! the default, with dotted keys such as `{{path.basename}}` and `{{path[0]}}`) or, with
//! `goTemplate: true`, `{{.name}}`, `{{ .path.basename }}` and `{{index .path.segments 0}}`.
//! A tag with no value, or a Go template expression beyond a field reference, is left as written
//! and named in a note. Spans of the filled-in nodes stay those of the template, so whatever is
//! reported about a generated Application points into the ApplicationSet.

use crate::config::ClusterDef;
use crate::yaml::{Document, Node};
use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// An Application made from the template.
#[derive(Debug)]
pub struct Generated {
    /// The template with its parameters filled in.
    pub doc: Document,
    /// Which parameter set made it: `list element 2`, `git directory platform/prod`, …
    pub label: String,
}

impl Generated {
    pub fn root(&self) -> Node<'_> {
        self.doc.root()
    }
}

/// What an ApplicationSet gave.
#[derive(Debug, Default)]
pub struct Expansion {
    pub apps: Vec<Generated>,
    /// Generators not evaluated, each with the reason.
    pub skipped: Vec<String>,
    /// What was approximated or left as written.
    pub notes: BTreeSet<String>,
}

/// What generators may look at.
pub struct Context<'a> {
    /// The repository root (an identity).
    pub root: &'a Path,
    /// This repository's normalised URLs (`argo.repo`); empty: not configured.
    pub repo: &'a [String],
    pub clusters: &'a [ClusterDef],
}

/// One parameter set: flat keys for fasttemplate, a nested object for Go templates.
#[derive(Clone, Debug)]
enum Params {
    Flat(BTreeMap<String, String>),
    Go(J),
}

fn scalar(v: &J) -> String {
    match v {
        J::String(s) => s.clone(),
        J::Null => String::new(),
        other => other.to_string(),
    }
}

/// `{"a": {"b": 1}}` → `a.b = 1` (fasttemplate keys).
fn flatten(prefix: &str, v: &J, out: &mut BTreeMap<String, String>) {
    match v {
        J::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

impl Params {
    fn new(go: bool, values: J) -> Params {
        if go {
            Params::Go(values)
        } else {
            let mut flat = BTreeMap::new();
            flatten("", &values, &mut flat);
            Params::Flat(flat)
        }
    }

    /// The value of one `{{…}}` tag (its inner text), when known.
    fn lookup(&self, tag: &str) -> Option<String> {
        match self {
            Params::Flat(m) => m.get(tag.trim()).cloned(),
            Params::Go(v) => {
                let t = tag
                    .trim()
                    .trim_start_matches('-')
                    .trim_end_matches('-')
                    .trim();
                let (path, index) = match t.strip_prefix("index ") {
                    Some(rest) => {
                        let mut parts = rest.split_whitespace();
                        let p = parts.next()?;
                        let i: usize = parts.next()?.parse().ok()?;
                        if parts.next().is_some() {
                            return None;
                        }
                        (p, Some(i))
                    }
                    None => (t, None),
                };
                let path = path.strip_prefix('.')?;
                let mut cur = v;
                for seg in path.split('.').filter(|s| !s.is_empty()) {
                    if !seg
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    {
                        return None;
                    }
                    cur = cur.get(seg)?;
                }
                if let Some(i) = index {
                    cur = cur.get(i)?;
                }
                Some(scalar(cur))
            }
        }
    }

    /// Fills the tags of `s`; tags without a value stay as written and are added to `missing`.
    fn fill(&self, s: &str, missing: &mut BTreeSet<String>) -> String {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open + 2..].find("}}") else {
                break;
            };
            let inner = &rest[open + 2..open + 2 + close];
            out.push_str(&rest[..open]);
            match self.lookup(inner) {
                Some(v) => out.push_str(&v),
                None => {
                    missing.insert(format!("{{{{{inner}}}}}"));
                    out.push_str(&rest[open..open + 4 + close]);
                }
            }
            rest = &rest[open + 4 + close..];
        }
        out.push_str(rest);
        out
    }
}

/// The template with the parameters filled into every scalar (keys too), spans kept.
fn render(n: Node<'_>, p: &Params, missing: &mut BTreeSet<String>) -> Document {
    n.rewritten(&mut |text| text.contains("{{").then(|| p.fill(text, missing)))
}

/// Argo CD's `basenameNormalized` and `nameNormalized`: lowercase, and anything but letters,
/// digits, `-` and `.` made `-`.
fn normalized(s: &str) -> String {
    s.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn list(g: Node<'_>, go: bool) -> Result<Vec<(Params, String)>, String> {
    if g.get("elementsYaml").is_some() {
        return Err("the `list` generator's `elementsYaml` is not evaluated".into());
    }
    Ok(g.get("elements")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
        .map(|(i, e)| {
            (
                Params::new(go, super::app::to_json(e)),
                format!("list element {}", i + 1),
            )
        })
        .collect())
}

/// Directories of the repository (relative, `/`-separated, sorted): what the git generator
/// matches its patterns against.
fn directories(root: &Path) -> Vec<String> {
    const MAX: usize = 100_000;
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut out: Vec<String> = walker
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?;
            let s = rel.to_string_lossy().replace('\\', "/");
            (!s.is_empty()).then_some(s)
        })
        .take(MAX)
        .collect();
    out.sort();
    out
}

fn git_directories(
    g: Node<'_>,
    go: bool,
    cx: &Context,
    notes: &mut BTreeSet<String>,
) -> Result<Vec<(Params, String)>, String> {
    let repo = g.get("repoURL").and_then(Node::as_str).unwrap_or_default();
    if !cx.repo.is_empty() && !cx.repo.contains(&super::normalize_repo(repo)) {
        return Err(format!(
            "the `git` generator reads another repository ({repo})"
        ));
    }
    let Some(dirs) = g.get("directories") else {
        return Err(if g.get("files").is_some() {
            "the `git` generator's `files` are not evaluated".into()
        } else {
            "a `git` generator without `directories`".into()
        });
    };
    let mut include = globset::GlobSetBuilder::new();
    let mut exclude = globset::GlobSetBuilder::new();
    for d in dirs.items() {
        let Some(p) = d.get("path").and_then(Node::as_str) else {
            continue;
        };
        let p = p.trim_start_matches("./").trim_start_matches('/');
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("the `git` generator's path `{p}`: {}", e.kind()))?;
        let excluded = d
            .get("exclude")
            .and_then(Node::as_str)
            .is_some_and(|e| e == "true");
        if excluded {
            exclude.add(glob);
        } else {
            include.add(glob);
        }
    }
    let (Ok(include), Ok(exclude)) = (include.build(), exclude.build()) else {
        return Err("the `git` generator's paths do not compile".into());
    };
    let prefix = g
        .get("pathParamPrefix")
        .and_then(Node::as_str)
        .filter(|p| !p.is_empty());
    let found: Vec<String> = directories(cx.root)
        .into_iter()
        .filter(|d| include.is_match(d) && !exclude.is_match(d))
        .collect();
    if found.is_empty() {
        return Err(if cx.repo.is_empty() {
            format!(
                "no directory of this repository matches the `git` generator ({repo} may be another repository)"
            )
        } else {
            "no directory of this repository matches the `git` generator".into()
        });
    }
    let values = g.get("values");
    let mut out = Vec::new();
    for d in found {
        let segments: Vec<&str> = d.split('/').collect();
        let base = segments.last().copied().unwrap_or_default();
        let path = serde_json::json!({
            "path": d,
            "basename": base,
            "basenameNormalized": normalized(base),
            "segments": segments,
        });
        let mut params = if go {
            let mut m = serde_json::Map::new();
            match prefix {
                Some(p) => m.insert(p.to_string(), serde_json::json!({ "path": path })),
                None => m.insert("path".into(), path),
            };
            Params::Go(J::Object(m))
        } else {
            let key = |k: &str| match prefix {
                Some(p) => format!("{p}.{k}"),
                None => k.to_string(),
            };
            let mut flat = BTreeMap::new();
            flat.insert(key("path"), d.clone());
            flat.insert(key("path.basename"), base.to_string());
            flat.insert(key("path.basenameNormalized"), normalized(base));
            for (i, s) in segments.iter().enumerate() {
                flat.insert(key(&format!("path[{i}]")), (*s).to_string());
            }
            Params::Flat(flat)
        };
        add_values(&mut params, values, notes);
        out.push((params, format!("git directory {d}")));
    }
    Ok(out)
}

/// A generator's `values:` (themselves filled with the generator's parameters) as `values.*`.
fn add_values(params: &mut Params, values: Option<Node<'_>>, notes: &mut BTreeSet<String>) {
    let Some(values) = values else { return };
    let mut missing = BTreeSet::new();
    let filled: Vec<(String, String)> = values
        .entries()
        .map(|(k, _, v)| {
            let t = v.as_str().unwrap_or_default();
            (k.to_string(), params.fill(t, &mut missing))
        })
        .collect();
    for m in missing {
        notes.insert(format!(
            "`{m}` in the generator's `values` has no value: left as written"
        ));
    }
    match params {
        Params::Flat(m) => {
            for (k, v) in filled {
                m.insert(format!("values.{k}"), v);
            }
        }
        Params::Go(J::Object(m)) => {
            let obj: serde_json::Map<String, J> =
                filled.into_iter().map(|(k, v)| (k, J::String(v))).collect();
            m.insert("values".into(), J::Object(obj));
        }
        Params::Go(_) => {}
    }
}

fn clusters(
    g: Node<'_>,
    go: bool,
    cx: &Context,
    notes: &mut BTreeSet<String>,
) -> Result<Vec<(Params, String)>, String> {
    if cx.clusters.is_empty() {
        return Err(
            "the `clusters` generator needs the clusters Argo CD knows: list them under `clusters:` in .gpuops.yaml"
                .into(),
        );
    }
    if g.get("selector").is_some() {
        notes.insert(
            "the `clusters` generator's selector is not evaluated: every cluster of `clusters:` is taken"
                .into(),
        );
    }
    let mut out = Vec::new();
    for c in cx.clusters {
        if c.server.is_none() {
            notes.insert(format!(
                "cluster `{}` has no `server` in .gpuops.yaml: `server` is its name",
                c.name
            ));
        }
        let server = c.server.clone().unwrap_or_else(|| c.name.clone());
        let values = serde_json::json!({
            "name": c.name,
            "nameNormalized": normalized(&c.name),
            "server": server,
            "metadata": {"labels": {}, "annotations": {}},
        });
        let mut params = Params::new(go, values);
        add_values(&mut params, g.get("values"), notes);
        out.push((params, format!("cluster {}", c.name)));
    }
    Ok(out)
}

/// Expands an ApplicationSet. `Err`: it gives nothing that can be linted, and why.
pub fn expand(appset: Node<'_>, cx: &Context) -> Result<Expansion, String> {
    let spec = appset
        .get("spec")
        .ok_or_else(|| "an ApplicationSet without `spec`".to_string())?;
    let template = spec
        .get("template")
        .filter(|t| t.as_map().is_some())
        .ok_or_else(|| "an ApplicationSet without `spec.template`".to_string())?;
    let go = spec
        .get("goTemplate")
        .and_then(Node::as_str)
        .is_some_and(|g| g == "true");
    let mut out = Expansion::default();
    if spec.get("templatePatch").is_some() {
        out.notes
            .insert("`templatePatch` is not applied to the generated Applications".into());
    }
    let generators: Vec<Node<'_>> = spec
        .get("generators")
        .into_iter()
        .flat_map(Node::items)
        .collect();
    if generators.is_empty() {
        return Err("an ApplicationSet without generators".into());
    }
    for g in generators {
        let mut notes = BTreeSet::new();
        let sets = if let Some(l) = g.get("list") {
            list(l, go)
        } else if let Some(git) = g.get("git") {
            git_directories(git, go, cx, &mut notes)
        } else if let Some(c) = g.get("clusters") {
            clusters(c, go, cx, &mut notes)
        } else {
            let name = g.entries().map(|(k, _, _)| k).find(|k| *k != "selector");
            Err(match name {
                Some(n @ ("matrix" | "merge")) => {
                    format!("the `{n}` generator is not evaluated offline")
                }
                Some(n) => format!("the `{n}` generator needs a live cluster or service"),
                None => "an empty generator".into(),
            })
        };
        if g.get("selector").is_some() {
            notes.insert("a generator's `selector` is not evaluated".into());
        }
        if g.as_map()
            .is_some_and(|m| m.iter().any(|(k, _)| k.as_str() == Some("template")))
        {
            notes.insert("a generator's own `template` is not applied".into());
        }
        out.notes.extend(notes);
        match sets {
            Ok(sets) => {
                for (params, label) in sets {
                    let mut missing = BTreeSet::new();
                    let root = render(template, &params, &mut missing);
                    for m in missing {
                        out.notes
                            .insert(format!("`{m}` has no value ({label}): left as written"));
                    }
                    out.apps.push(Generated { doc: root, label });
                }
            }
            Err(reason) => out.skipped.push(reason),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn expand_text(text: &str, cx: &Context) -> Expansion {
        let p = parse(text, Budget::default());
        expand(p.docs[0].root(), cx).unwrap()
    }

    fn cx<'a>(root: &'a Path, clusters: &'a [ClusterDef]) -> Context<'a> {
        Context {
            root,
            repo: &[],
            clusters,
        }
    }

    fn names(e: &Expansion) -> Vec<(String, String)> {
        e.apps
            .iter()
            .map(|g| {
                (
                    g.root().str_at(&["metadata", "name"]).unwrap().to_string(),
                    g.root()
                        .str_at(&["spec", "source", "path"])
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn list_elements_fill_fasttemplate_and_go_templates() {
        let e = expand_text(
            "kind: ApplicationSet
spec:
  generators:
    - list:
        elements:
          - {cluster: prod, values: {tier: gold}}
          - {cluster: staging, values: {tier: tin}}
  template:
    metadata: {name: 'platform-{{cluster}}-{{ values.tier }}'}
    spec:
      source: {path: 'platform/{{cluster}}/{{nope}}'}
",
            &cx(Path::new("/nonexistent"), &[]),
        );
        assert_eq!(
            names(&e),
            vec![
                ("platform-prod-gold".into(), "platform/prod/{{nope}}".into()),
                (
                    "platform-staging-tin".into(),
                    "platform/staging/{{nope}}".into()
                ),
            ]
        );
        assert!(
            e.notes
                .iter()
                .any(|n| n.contains("`{{nope}}` has no value"))
        );
        let e = expand_text(
            "kind: ApplicationSet
spec:
  goTemplate: true
  generators:
    - list: {elements: [{cluster: prod, gpus: [a100, h100]}]}
  template:
    metadata: {name: '{{ .cluster }}-{{index .gpus 1}}'}
    spec:
      source: {path: '{{ .cluster | upper }}'}
",
            &cx(Path::new("/nonexistent"), &[]),
        );
        assert_eq!(
            names(&e),
            vec![("prod-h100".into(), "{{ .cluster | upper }}".into())]
        );
    }

    #[test]
    fn git_directories_match_this_tree() {
        let d = tempfile::tempdir().unwrap();
        for p in [
            "apps/train",
            "apps/serve",
            "apps/legacy",
            "apps/train/sub",
            "other",
        ] {
            std::fs::create_dir_all(d.path().join(p)).unwrap();
        }
        let e = expand_text(
            "kind: ApplicationSet
spec:
  generators:
    - git:
        repoURL: https://github.com/example/gitops
        directories:
          - path: apps/*
          - {path: apps/legacy, exclude: true}
  template:
    metadata: {name: '{{path.basename}}-{{path[0]}}'}
    spec:
      source: {path: '{{path}}'}
",
            &cx(d.path(), &[]),
        );
        assert_eq!(
            names(&e),
            vec![
                ("serve-apps".into(), "apps/serve".into()),
                ("train-apps".into(), "apps/train".into()),
            ]
        );
    }

    #[test]
    fn clusters_come_from_the_config_and_other_generators_are_reported() {
        let clusters = [ClusterDef {
            name: "prod".into(),
            paths: Vec::new(),
            eks: None,
            karpenter: None,
            complete: None,
            context: Vec::new(),
            server: Some("https://prod.example.com".into()),
        }];
        let e = expand_text(
            "kind: ApplicationSet
spec:
  generators:
    - clusters: {values: {env: '{{name}}-env'}}
    - matrix: {generators: []}
  template:
    metadata: {name: 'gpu-{{name}}'}
    spec:
      source: {path: 'envs/{{values.env}}'}
      destination: {server: '{{server}}'}
",
            &cx(Path::new("/nonexistent"), &clusters),
        );
        assert_eq!(names(&e), vec![("gpu-prod".into(), "envs/prod-env".into())]);
        assert_eq!(
            e.apps[0].root().str_at(&["spec", "destination", "server"]),
            Some("https://prod.example.com")
        );
        assert_eq!(
            e.skipped,
            vec!["the `matrix` generator is not evaluated offline".to_string()]
        );
    }

    #[test]
    fn filled_nodes_keep_the_template_spans() {
        let text = "kind: ApplicationSet\nspec:\n  generators: [{list: {elements: [{c: a}]}}]\n  template:\n    metadata: {name: 'x-{{c}}'}\n";
        let e = expand_text(text, &cx(Path::new("/nonexistent"), &[]));
        let n = e.apps[0].root().at(&["metadata", "name"]).unwrap();
        assert_eq!(&text[n.span().range()], "'x-{{c}}'");
    }
}
