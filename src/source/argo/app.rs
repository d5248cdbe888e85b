//! An `Application` read from its manifest: what it syncs (sources with their Helm, Kustomize
//! and directory options) and where (destination). Owned data with spans into the manifest the
//! Application came from, so nothing borrows the run's files while builds add to them.

use super::Destination;
use crate::yaml::{Node, Span};

/// Whether a document is an Argo CD object of this kind.
pub fn is_kind(root: Node<'_>, kind: &str) -> bool {
    root.str_at(&["apiVersion"])
        .is_some_and(|a| a.starts_with("argoproj.io/"))
        && root.str_at(&["kind"]) == Some(kind)
}

/// A parsed Application.
#[derive(Clone, Debug)]
pub struct App {
    pub name: String,
    /// `metadata.namespace` (Argo CD's own namespace when unset).
    pub namespace: Option<String>,
    /// Where the name is written: what a note about the whole Application points at.
    pub name_span: Span,
    pub sources: Vec<Source>,
    pub destination: Destination,
}

/// One source of an Application.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub repo_url: String,
    /// With the span of its value, where a missing path is reported.
    pub path: Option<(String, Span)>,
    /// A chart from a Helm repository (`chart:` with a Helm `repoURL`).
    pub chart: Option<String>,
    pub target_revision: Option<String>,
    /// `ref:` of a multi-source Application: other sources read values files through `$ref/…`.
    pub ref_name: Option<String>,
    pub helm: Option<HelmOpts>,
    pub kustomize: Option<KustomizeOpts>,
    pub directory: Option<DirOpts>,
    /// A config management plugin, by name when given.
    pub plugin: Option<String>,
    /// Where the source is written (its `repoURL`), for notes.
    pub span: Span,
}

/// `source.helm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HelmOpts {
    pub release_name: Option<String>,
    pub value_files: Vec<String>,
    /// `valuesObject` (as JSON) or else `values` (as written).
    pub values: Option<String>,
    pub parameters: Vec<Param>,
    pub ignore_missing_value_files: bool,
    pub skip_crds: bool,
    /// Options that are read but not applied (`fileParameters`…), by name.
    pub ignored: Vec<String>,
}

/// A Helm parameter (`--set name=value`, or `--set-string` with `forceString`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Param {
    pub name: String,
    pub value: String,
    pub force_string: bool,
}

/// `source.kustomize`: applied through the temporary wrapper kustomization the build uses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KustomizeOpts {
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub namespace: Option<String>,
    pub common_labels: Vec<(String, String)>,
    pub common_annotations: Vec<(String, String)>,
    /// As Argo CD writes them: `name:tag`, `name=new:tag`, `name@digest`.
    pub images: Vec<String>,
    /// (name, count as written)
    pub replicas: Vec<(String, String)>,
    /// Relative to the source path.
    pub components: Vec<String>,
    /// Inline patches, each as JSON.
    pub patches: Vec<String>,
    pub ignored: Vec<String>,
}

impl KustomizeOpts {
    pub fn is_empty(&self) -> bool {
        *self == KustomizeOpts::default()
    }

    /// The options as `kustomization.yaml` fields (values as JSON, which YAML reads as written),
    /// components aside: their paths are relative to the wrapper, which the build knows.
    pub fn wrapper_fields(&self) -> String {
        let q = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let map = |kv: &[(String, String)]| {
            let m: serde_json::Map<String, serde_json::Value> = kv
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            serde_json::Value::Object(m).to_string()
        };
        let mut out = String::new();
        if let Some(p) = &self.name_prefix {
            out.push_str(&format!("namePrefix: {}\n", q(p)));
        }
        if let Some(s) = &self.name_suffix {
            out.push_str(&format!("nameSuffix: {}\n", q(s)));
        }
        if let Some(ns) = &self.namespace {
            out.push_str(&format!("namespace: {}\n", q(ns)));
        }
        if !self.common_labels.is_empty() {
            out.push_str(&format!("commonLabels: {}\n", map(&self.common_labels)));
        }
        if !self.common_annotations.is_empty() {
            out.push_str(&format!(
                "commonAnnotations: {}\n",
                map(&self.common_annotations)
            ));
        }
        if !self.images.is_empty() {
            let images: Vec<serde_json::Value> = self.images.iter().map(|i| image(i)).collect();
            out.push_str(&format!("images: {}\n", serde_json::Value::Array(images)));
        }
        if !self.replicas.is_empty() {
            let r: Vec<serde_json::Value> = self
                .replicas
                .iter()
                .map(|(name, count)| {
                    let count = count
                        .parse::<i64>()
                        .map_or_else(|_| serde_json::Value::String(count.clone()), Into::into);
                    serde_json::json!({"name": name, "count": count})
                })
                .collect();
            out.push_str(&format!("replicas: {}\n", serde_json::Value::Array(r)));
        }
        if !self.patches.is_empty() {
            out.push_str(&format!("patches: [{}]\n", self.patches.join(", ")));
        }
        out
    }

    /// The options in one line, for `--explain-sources`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.name_prefix {
            parts.push(format!("namePrefix {p}"));
        }
        if let Some(s) = &self.name_suffix {
            parts.push(format!("nameSuffix {s}"));
        }
        if let Some(ns) = &self.namespace {
            parts.push(format!("namespace {ns}"));
        }
        let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        for (n, what) in [
            (self.common_labels.len(), "common label"),
            (self.common_annotations.len(), "common annotation"),
            (self.images.len(), "image"),
            (self.replicas.len(), "replica count"),
            (self.components.len(), "component"),
            (self.patches.len(), "patch"),
        ] {
            if n > 0 {
                parts.push(count(n, what));
            }
        }
        parts.join(", ")
    }
}

/// An Argo CD image override as a kustomize `images:` entry.
fn image(spec: &str) -> serde_json::Value {
    let (name, new) = match spec.split_once('=') {
        Some((n, rest)) => (n.to_string(), rest),
        None => (strip_tag(spec).to_string(), spec),
    };
    let mut m = serde_json::Map::new();
    m.insert("name".into(), name.clone().into());
    let (base, digest) = match new.split_once('@') {
        Some((b, d)) => (b, Some(d)),
        None => (new, None),
    };
    // A tag is after the last `:` that follows the last `/` (a registry port is not a tag).
    let slash = base.rfind('/').map_or(0, |i| i + 1);
    let (image_name, tag) = match base[slash..].rfind(':') {
        Some(i) => (&base[..slash + i], Some(&base[slash + i + 1..])),
        None => (base, None),
    };
    if image_name != name && !image_name.is_empty() {
        m.insert("newName".into(), image_name.into());
    }
    if let Some(t) = tag {
        m.insert("newTag".into(), t.into());
    }
    if let Some(d) = digest {
        m.insert("digest".into(), d.into());
    }
    serde_json::Value::Object(m)
}

fn strip_tag(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => &image[..slash + i],
        None => image,
    }
}

/// `source.directory`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DirOpts {
    pub recurse: bool,
    pub include: Option<String>,
    pub exclude: Option<String>,
}

/// A scalar as text (booleans and numbers as written; quoting does not matter to Argo CD's
/// string fields).
fn text(n: Node<'_>) -> Option<String> {
    n.as_str().filter(|_| !n.is_null()).map(str::to_string)
}

fn flag(n: Option<Node<'_>>) -> bool {
    n.and_then(Node::as_str)
        .is_some_and(|s| s.eq_ignore_ascii_case("true"))
}

/// A YAML node as JSON, scalars typed the way Kubernetes' YAML 1.1 reader types them.
pub fn to_json(n: Node<'_>) -> serde_json::Value {
    crate::yaml::to_json(n)
}

fn pairs(n: Option<Node<'_>>) -> Vec<(String, String)> {
    n.into_iter()
        .flat_map(Node::entries)
        .filter_map(|(k, _, v)| Some((k.to_string(), text(v)?)))
        .collect()
}

fn strings(n: Option<Node<'_>>) -> Vec<String> {
    n.into_iter()
        .flat_map(Node::items)
        .filter_map(text)
        .collect()
}

fn helm_opts(h: Node<'_>) -> HelmOpts {
    let mut o = HelmOpts {
        release_name: h.get("releaseName").and_then(text),
        value_files: strings(h.get("valueFiles")),
        ignore_missing_value_files: flag(h.get("ignoreMissingValueFiles")),
        skip_crds: flag(h.get("skipCrds")),
        ..HelmOpts::default()
    };
    o.values = match (h.get("valuesObject"), h.get("values")) {
        (Some(obj), _) if obj.as_map().is_some() => Some(to_json(obj).to_string()),
        (_, Some(v)) => text(v).filter(|t| !t.trim().is_empty()),
        _ => None,
    };
    for p in h.get("parameters").into_iter().flat_map(Node::items) {
        if let Some(name) = p.get("name").and_then(text) {
            o.parameters.push(Param {
                name,
                value: p.get("value").and_then(text).unwrap_or_default(),
                force_string: flag(p.get("forceString")),
            });
        }
    }
    for key in [
        "fileParameters",
        "version",
        "passCredentials",
        "apiVersions",
    ] {
        if h.get(key).is_some() {
            o.ignored.push(key.to_string());
        }
    }
    o
}

fn kustomize_opts(k: Node<'_>) -> KustomizeOpts {
    let mut o = KustomizeOpts {
        name_prefix: k.get("namePrefix").and_then(text),
        name_suffix: k.get("nameSuffix").and_then(text),
        namespace: k.get("namespace").and_then(text),
        common_labels: pairs(k.get("commonLabels")),
        common_annotations: pairs(k.get("commonAnnotations")),
        images: strings(k.get("images")),
        components: strings(k.get("components")),
        ..KustomizeOpts::default()
    };
    for r in k.get("replicas").into_iter().flat_map(Node::items) {
        if let (Some(name), Some(count)) =
            (r.get("name").and_then(text), r.get("count").and_then(text))
        {
            o.replicas.push((name, count));
        }
    }
    for p in k.get("patches").into_iter().flat_map(Node::items) {
        // A patch file is read relative to the kustomization, which the wrapper is not:
        // inline patches only.
        if p.get("path").is_some() {
            o.ignored.push("patches[].path".into());
        } else {
            o.patches.push(to_json(p).to_string());
        }
    }
    for key in [
        "forceCommonLabels",
        "forceCommonAnnotations",
        "commonAnnotationsEnvsubst",
        "labelWithoutSelector",
        "version",
        "kubeVersion",
        "apiVersions",
    ] {
        if k.get(key).is_some() {
            o.ignored.push(key.to_string());
        }
    }
    o
}

fn source(s: Node<'_>) -> Source {
    Source {
        repo_url: s.get("repoURL").and_then(text).unwrap_or_default(),
        path: s
            .get("path")
            .and_then(|p| Some((text(p)?, p.span())))
            .filter(|(p, _)| !p.trim().is_empty()),
        chart: s.get("chart").and_then(text),
        target_revision: s.get("targetRevision").and_then(text),
        ref_name: s.get("ref").and_then(text),
        helm: s.get("helm").map(helm_opts),
        kustomize: s.get("kustomize").map(kustomize_opts),
        directory: s.get("directory").map(|d| DirOpts {
            recurse: flag(d.get("recurse")),
            include: d.get("include").and_then(text).filter(|t| !t.is_empty()),
            exclude: d.get("exclude").and_then(text).filter(|t| !t.is_empty()),
        }),
        plugin: s
            .get("plugin")
            .map(|p| p.get("name").and_then(text).unwrap_or_default()),
        span: s
            .entry("repoURL")
            .map(|(k, _)| k.span())
            .unwrap_or(s.span()),
    }
}

/// Reads an Application from its manifest (or from an ApplicationSet's template with the
/// parameters filled in). `Err`: why it cannot be read.
pub fn parse(root: Node<'_>) -> Result<App, String> {
    let name_node = root.at(&["metadata", "name"]);
    let name = name_node
        .and_then(text)
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| "an Application without `metadata.name`".to_string())?;
    // A stub to copy (`name: grafana-{{TEAM_SLUG}}`): whoever fills it in applies the result.
    if crate::quantity::is_placeholder(&name) {
        return Err(format!(
            "Application `{name}` is a template: its name is filled in before it is applied"
        ));
    }
    let spec = root
        .get("spec")
        .ok_or_else(|| format!("Application `{name}` has no `spec`"))?;
    let sources: Vec<Source> = match spec.get("sources").filter(|s| s.as_seq().is_some()) {
        Some(list) => list.items().map(source).collect(),
        None => spec.get("source").map(source).into_iter().collect(),
    };
    let dest = spec.get("destination");
    let field = |k: &str| {
        dest.and_then(|d| d.get(k))
            .and_then(text)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Ok(App {
        namespace: root.at(&["metadata", "namespace"]).and_then(text),
        name_span: name_node.map_or(root.span(), |n| n.span()),
        name,
        sources,
        destination: Destination {
            name: field("name"),
            server: field("server"),
            namespace: field("namespace"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse as parse_yaml};

    fn app(text: &str) -> App {
        let p = parse_yaml(text, Budget::default());
        parse(p.docs[0].root()).unwrap()
    }

    #[test]
    fn reads_sources_options_and_destination() {
        let a = app("apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: trainer, namespace: argocd}
spec:
  source:
    repoURL: https://github.com/example/gitops
    path: charts/trainer
    targetRevision: HEAD
    helm:
      releaseName: trainer-prod
      valueFiles: [values-prod.yaml]
      valuesObject: {gpu: {count: 2, spot: yes}}
      parameters:
        - {name: image.tag, value: '1.2'}
        - {name: name, value: x, forceString: true}
  destination: {name: prod, namespace: ml}
");
        assert_eq!(a.name, "trainer");
        assert_eq!(a.destination.name.as_deref(), Some("prod"));
        assert_eq!(a.destination.namespace.as_deref(), Some("ml"));
        let s = &a.sources[0];
        assert_eq!(
            s.path.as_ref().map(|p| p.0.as_str()),
            Some("charts/trainer")
        );
        let h = s.helm.as_ref().unwrap();
        assert_eq!(
            h.values.as_deref(),
            Some(r#"{"gpu":{"count":2,"spot":true}}"#)
        );
        assert_eq!(h.parameters[0].value, "1.2");
        assert!(h.parameters[1].force_string);
    }

    #[test]
    fn multiple_sources_and_kustomize_options() {
        let a = app("kind: Application
metadata: {name: x}
spec:
  sources:
    - repoURL: git@github.com:example/gitops.git
      path: apps/train
      kustomize:
        namePrefix: stg-
        images: [ghcr.io/example/trainer=ghcr.io/example/trainer:2.0, busybox:1.36]
        replicas: [{name: web, count: 2}]
    - repoURL: https://github.com/example/values
      ref: values
  destination: {server: 'https://kubernetes.default.svc'}
");
        assert_eq!(a.sources.len(), 2);
        assert_eq!(a.sources[1].ref_name.as_deref(), Some("values"));
        let k = a.sources[0].kustomize.as_ref().unwrap();
        assert_eq!(
            k.wrapper_fields(),
            "namePrefix: \"stg-\"\nimages: [{\"name\":\"ghcr.io/example/trainer\",\"newTag\":\"2.0\"},{\"name\":\"busybox\",\"newTag\":\"1.36\"}]\nreplicas: [{\"count\":2,\"name\":\"web\"}]\n"
        );
        assert_eq!(k.describe(), "namePrefix stg-, 2 images, 1 replica count");
    }

    #[test]
    fn image_overrides() {
        assert_eq!(
            image("nginx=registry.local:5000/nginx:1.27"),
            serde_json::json!({"name": "nginx", "newName": "registry.local:5000/nginx", "newTag": "1.27"})
        );
        assert_eq!(
            image("nginx@sha256:abc"),
            serde_json::json!({"name": "nginx", "digest": "sha256:abc"})
        );
    }

    #[test]
    fn an_application_without_a_name_is_an_error() {
        let p = parse_yaml("kind: Application\nspec: {}\n", Budget::default());
        assert!(parse(p.docs[0].root()).is_err());
    }

    #[test]
    fn an_application_named_by_a_placeholder_is_a_template() {
        let p = parse_yaml(
            "kind: Application\nmetadata: {name: 'grafana-{{TEAM_SLUG}}'}\nspec: {}\n",
            Budget::default(),
        );
        let e = parse(p.docs[0].root()).unwrap_err();
        assert!(e.contains("is a template"), "{e}");
    }
}
