//! Expanding ApplicationSets: each generator, their combinations, and the template.

use super::*;
use crate::config::ClusterDef;
use crate::source::argo::fleet::Secret;
use crate::yaml::{Budget, parse};
use std::collections::BTreeMap;

fn expand_text(text: &str, cx: &Context) -> Expansion {
    let p = parse(text, Budget::default());
    expand(p.docs[0].root(), cx).unwrap()
}

fn cx<'a>(root: &'a Path, fleet: &'a Fleet) -> Context<'a> {
    Context {
        root,
        repo: &[],
        fleet,
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

fn fleet() -> Fleet {
    let mut prod = ClusterDef {
        name: "prod".into(),
        server: Some("https://prod.example.com".into()),
        ..ClusterDef::default()
    };
    prod.labels
        .insert("environment".into(), "production".into());
    let staging = Secret {
        name: "staging".into(),
        server: "https://staging.example.com".into(),
        project: None,
        labels: BTreeMap::from([
            ("argocd.argoproj.io/secret-type".into(), "cluster".into()),
            ("environment".into(), "staging".into()),
        ]),
        annotations: BTreeMap::new(),
        at: "argocd/staging.yaml:4:9".into(),
    };
    Fleet::new(&[prod], &[staging])
}

const NOWHERE: &str = "/nonexistent";

#[test]
fn list_elements_fill_fasttemplate_and_go_templates() {
    let f = Fleet::default();
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
        &cx(Path::new(NOWHERE), &f),
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
    - list: {elements: [{cluster: prod, gpus: [a100, h100], n: 8}]}
  template:
    metadata:
      name: '{{ .cluster }}-{{index .gpus 1}}-{{ .n }}'
      annotations: {hash: '{{ sha256sum .cluster }}'}
    spec:
      source: {path: '{{ .cluster | upper }}/{{ dig \"tier\" \"std\" . }}/{{ dig \"n\" 0 . }}'}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(names(&e), vec![("prod-h100-8".into(), "PROD/std/8".into())]);
    assert!(
        e.notes.iter().any(|n| n.contains("sha256sum")),
        "{:?}",
        e.notes
    );
    // A source still a template after filling names no path: the Application is not evaluated
    // (never "path does not exist").
    let e = expand_text(
        "kind: ApplicationSet
spec:
  goTemplate: true
  generators:
    - list: {elements: [{cluster: prod}]}
  template:
    metadata: {name: '{{ .cluster }}'}
    spec:
      source: {path: 'apps/{{ sha256sum .cluster }}'}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert!(e.apps.is_empty());
    assert_eq!(
        e.skipped,
        vec![
            "list element 1: `apps/{{ sha256sum .cluster }}` is not evaluated (the template function `sha256sum`)"
                .to_string()
        ]
    );
    assert!(e.notes.is_empty(), "{:?}", e.notes);
}

#[test]
fn fasttemplate_list_elements_are_strings() {
    let f = Fleet::default();
    let e = expand_text(
        "kind: ApplicationSet
spec:
  generators: [{list: {elements: [{name: a, replicas: 3}]}}]
  template: {metadata: {name: '{{name}}'}}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert!(e.apps.is_empty());
    assert_eq!(
        e.failed,
        vec!["list element 1: `replicas` is 3, not a string (quote it, or use goTemplate)"]
    );
}

#[test]
fn git_directories_and_files_read_this_tree() {
    let d = tempfile::tempdir().unwrap();
    for p in [
        "apps/train",
        "apps/serve",
        "apps/legacy",
        "apps/train/sub",
        "apps/.hidden",
        "other",
    ] {
        std::fs::create_dir_all(d.path().join(p)).unwrap();
    }
    std::fs::write(
        d.path().join("apps/train/config.yaml"),
        "team: vision\nquota: {gpus: 16}\n",
    )
    .unwrap();
    let f = Fleet::default();
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
        &cx(d.path(), &f),
    );
    assert_eq!(
        names(&e),
        vec![
            ("serve-apps".into(), "apps/serve".into()),
            ("train-apps".into(), "apps/train".into()),
        ]
    );
    let e = expand_text(
        "kind: ApplicationSet
spec:
  generators:
    - git:
        repoURL: https://github.com/example/gitops
        files: [{path: 'apps/**/config.yaml'}]
  template:
    metadata: {name: '{{team}}-{{quota.gpus}}'}
    spec:
      source: {path: '{{path}}'}
",
        &cx(d.path(), &f),
    );
    assert_eq!(names(&e), vec![("vision-16".into(), "apps/train".into())]);
}

#[test]
fn a_matrix_of_clusters_and_a_list_gives_one_application_per_cluster() {
    let f = fleet();
    let e = expand_text(
        r#"kind: ApplicationSet
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
    - matrix:
        generators:
          - clusters:
              selector:
                matchLabels:
                  argocd.argoproj.io/secret-type: cluster
          - list:
              elements:
                - {appName: gpu-jobs, path: workloads/gpu-jobs}
  template:
    metadata: {name: '{{ .appName }}-{{ .name }}'}
    spec:
      source: {path: '{{ .path }}/overlays/{{ index .metadata.labels "environment" }}'}
      destination: {server: '{{ .server }}'}
"#,
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(
        names(&e),
        vec![
            (
                "gpu-jobs-prod".into(),
                "workloads/gpu-jobs/overlays/production".into()
            ),
            (
                "gpu-jobs-staging".into(),
                "workloads/gpu-jobs/overlays/staging".into()
            ),
        ]
    );
    assert_eq!(e.apps[0].cluster.as_deref(), Some("prod"));
    assert_eq!(e.apps[0].label, "cluster prod × list element 1");
    assert_eq!(
        e.apps[1].root().str_at(&["spec", "destination", "server"]),
        Some("https://staging.example.com")
    );
    assert!(e.failed.is_empty(), "{:?}", e.failed);
}

#[test]
fn without_a_selector_argo_cds_own_cluster_joins_and_has_no_labels() {
    let f = fleet();
    let e = expand_text(
        r#"kind: ApplicationSet
spec:
  goTemplate: true
  generators:
    - clusters: {}
  template:
    metadata: {name: 'x-{{ .name }}'}
    spec:
      source: {path: 'envs/{{ index .metadata.labels "environment" }}'}
"#,
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(e.apps.len(), 2);
    assert_eq!(e.failed.len(), 1, "{:?}", e.failed);
    assert!(
        e.failed[0].starts_with("cluster in-cluster: "),
        "{:?}",
        e.failed
    );
}

#[test]
fn merge_overrides_base_sets_by_their_keys() {
    let f = fleet();
    let e = expand_text(
        "kind: ApplicationSet
spec:
  generators:
    - merge:
        mergeKeys: [name]
        generators:
          - clusters: {selector: {matchExpressions: [{key: environment, operator: Exists}]}, values: {replicas: '1'}}
          - list: {elements: [{name: prod, values.replicas: '4'}, {name: elsewhere, values.replicas: '9'}]}
  template:
    metadata: {name: 'serve-{{name}}'}
    spec:
      source: {path: 'serve/{{values.replicas}}'}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(
        names(&e),
        vec![
            ("serve-prod".into(), "serve/4".into()),
            ("serve-staging".into(), "serve/1".into()),
        ]
    );
    assert_eq!(e.apps[0].label, "cluster prod + list element 1");
}

#[test]
fn generator_templates_selectors_and_patches_apply() {
    let f = fleet();
    let e = expand_text(
        "kind: ApplicationSet
spec:
  goTemplate: true
  generators:
    - list:
        elements: [{env: prod, gpu: 'true'}, {env: dev, gpu: 'false'}]
        template: {spec: {project: gpu}}
      selector: {matchLabels: {gpu: 'true'}}
  template:
    metadata: {name: 'a-{{ .env }}'}
    spec: {project: default, source: {path: 'p/{{ .env }}'}}
  templatePatch: |
    spec:
      project: stolen
      source:
        helm: {releaseName: 'r-{{ .env }}'}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(names(&e), vec![("a-prod".into(), "p/prod".into())]);
    let root = e.apps[0].root();
    assert_eq!(root.str_at(&["spec", "project"]), Some("gpu"));
    assert_eq!(
        root.str_at(&["spec", "source", "helm", "releaseName"]),
        Some("r-prod")
    );
}

#[test]
fn unsupported_and_failing_generators_are_reported() {
    let f = fleet();
    let e = expand_text(
        "kind: ApplicationSet
spec:
  generators:
    - pullRequest: {github: {owner: o, repo: r}}
    - matrix: {generators: [{list: {elements: []}}]}
  template: {metadata: {name: x}}
",
        &cx(Path::new(NOWHERE), &f),
    );
    assert_eq!(
        e.skipped,
        vec!["the `pullRequest` generator needs a live cluster or service".to_string()]
    );
    assert_eq!(
        e.failed,
        vec!["a `matrix` generator with fewer than two generators".to_string()]
    );
}

#[test]
fn filled_nodes_keep_the_template_spans() {
    let text = "kind: ApplicationSet\nspec:\n  generators: [{list: {elements: [{c: a}]}}]\n  template:\n    metadata: {name: 'x-{{c}}'}\n";
    let f = Fleet::default();
    let e = expand_text(text, &cx(Path::new(NOWHERE), &f));
    let n = e.apps[0].root().at(&["metadata", "name"]).unwrap();
    assert_eq!(&text[n.span().range()], "'x-{{c}}'");
}
