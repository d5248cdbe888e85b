//! Argo CD ApplicationSets fanned out over the clusters Argo CD knows (`clusters:` in the
//! config, cluster Secrets in the repository or the context): each generated Application is
//! linted in its own cluster. The fixture `testdata/sources/appsets` has a `matrix` of the
//! `clusters` generator and a `list` (the overlay is the cluster's `environment` label), `git`
//! directories and files, and a `merge`; prod is declared in the config, staging by its Secret.

use crate::common::{Run, gpuops_in, run, write};
use crate::sources::{copy_dir, explained, findings, fixture, json};
use std::fs;

/// The one finding of the fixture: staging's Job does not tolerate staging's second taint.
fn staging_finding() -> Vec<(String, String, u64, u64)> {
    vec![(
        "gpu-toleration-missing".to_string(),
        "workloads/gpu-jobs/overlays/staging/job.yaml".to_string(),
        14,
        7,
    )]
}

#[test]
fn a_matrix_of_clusters_and_a_list_lints_each_overlay_in_its_own_cluster() {
    let dir = fixture("appsets");
    let Run { code, out, err } = run(gpuops_in(&dir).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.is_empty(), "{err}");
    let v = json(&out);
    // Prod's Job is judged against prod's pool only, which it tolerates.
    assert_eq!(findings(&v), staging_finding());
    let d = &v["diagnostics"][0];
    assert_eq!(
        d["related"][0]["path"], "platform/staging/karpenter.yaml",
        "{d}"
    );

    // All in one cluster (Applications ignored), prod's pool takes both Jobs: nothing to say.
    let d = tempfile::tempdir().unwrap();
    copy_dir(&dir, d.path());
    let cfg = fs::read_to_string(d.path().join(".gpuops.yaml")).unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        &cfg.replace("argo:\n", "argo:\n  enabled: false\n"),
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn explain_sources_lists_the_clusters_and_each_generated_application() {
    let Run { err, .. } =
        run(gpuops_in(fixture("appsets")).args(["lint", "--explain-sources", "--format", "json"]));
    insta::assert_snapshot!("appsets_explain_sources", err);
}

#[test]
fn cluster_secrets_in_context_files_are_clusters_too() {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("appsets"), d.path());
    fs::remove_file(d.path().join("argocd/clusters/staging.yaml")).unwrap();
    // As `kubectl get secret -o yaml` gives it: `data`, base64.
    let ctx = tempfile::tempdir().unwrap();
    write(
        ctx.path(),
        "staging.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-staging\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    environment: staging\n    gpu: \"true\"\ndata:\n  name: c3RhZ2luZw==\n  server: aHR0cHM6Ly9zdGFnaW5nLmdwdS5leGFtcGxlLmNvbQ==\n",
    );
    let secret = ctx.path().join("staging.yaml");
    let Run { code, out, err } = run(gpuops_in(d.path()).args([
        "lint",
        "--format",
        "json",
        "--explain-sources",
        "--context",
        secret.to_str().unwrap(),
    ]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)), staging_finding());
    let clusters = explained(&err, "cluster");
    assert!(
        clusters.iter().any(|l| l.starts_with("staging: server https://staging.gpu.example.com; labels environment=staging, gpu=true; cluster Secret ") && l.ends_with("staging.yaml:4:9")),
        "{clusters:#?}"
    );
    let apps = explained(&err, "app");
    assert!(
        apps.iter().any(|l| l.starts_with("appsets/gpu-jobs.yaml: Application `gpu-jobs-staging` (ApplicationSet `gpu-jobs`, cluster staging × list element 1): directory workloads/gpu-jobs/overlays/staging: 1 file → cluster `staging` (destination server https://staging.gpu.example.com, cluster `staging`, the cluster Secret at ") && l.ends_with("staging.yaml:4:9)")),
        "{apps:#?}"
    );
}

#[test]
fn a_template_argo_cd_cannot_render_is_a_note_and_the_rest_is_linted() {
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("appsets"), d.path());
    // A third cluster without an `environment` label, and a template that needs one.
    let cfg = fs::read_to_string(d.path().join(".gpuops.yaml")).unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        &format!(
            "{cfg}  dev:\n    server: https://dev.gpu.example.com\n    labels: {{gpu: \"false\"}}\n"
        ),
    );
    let set = d.path().join("appsets/gpu-jobs.yaml");
    let text = fs::read_to_string(&set).unwrap().replace(
        r#"{{ index .metadata.labels "environment" }}"#,
        "{{ .metadata.labels.environment }}",
    );
    fs::write(&set, text).unwrap();
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)), staging_finding());
    let Run { err, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(
        err.trim_end(),
        "note: ApplicationSet `gpu-jobs` (appsets/gpu-jobs.yaml:5:9): Argo CD fails: cluster dev × list element 1: `{{ .path }}/overlays/{{ .metadata.labels.environment }}`: map has no entry for key \"environment\" (it creates or updates none of the set's Applications while this stands)"
    );
}

#[test]
fn clusters_that_share_a_server_each_run_their_own_argo_cd() {
    // Each cluster's Argo CD deploys to itself (`https://kubernetes.default.svc`) from the same
    // ApplicationSet, which gives every Application the same name.
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("appsets"), d.path());
    fs::remove_file(d.path().join("argocd/clusters/staging.yaml")).unwrap();
    fs::remove_file(d.path().join("appsets/inference.yaml")).unwrap();
    fs::remove_file(d.path().join("appsets/teams.yaml")).unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "argo:\n  repo: [https://github.com/example/gpu-fleet.git]\nclusters:\n  prod:\n    server: https://kubernetes.default.svc\n    labels: {environment: prod}\n  staging:\n    server: https://kubernetes.default.svc\n    labels: {environment: staging}\n",
    );
    let set = d.path().join("appsets/gpu-jobs.yaml");
    let text = fs::read_to_string(&set)
        .unwrap()
        .replace(
            "name: '{{ .appName }}-{{ .name }}'",
            "name: '{{ .appName }}'",
        )
        .replace(
            "server: '{{ .server }}'",
            "server: https://kubernetes.default.svc",
        );
    fs::write(&set, text).unwrap();
    // An Application written out, to the server they share: every cluster's Argo CD syncs it.
    write(
        d.path(),
        "apps/inference.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: inference, namespace: argocd}\nspec:\n  source: {repoURL: https://github.com/example/gpu-fleet.git, path: inference/prod}\n  destination: {server: https://kubernetes.default.svc, namespace: inference}\n",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)), staging_finding());
    assert!(
        explained(&err, "app").contains(&"apps/inference.yaml: Application `inference`: directory inference/prod: 1 file → clusters `prod`, `staging` (destination server https://kubernetes.default.svc, which 2 clusters have, each with its Argo CD: each syncs it)"),
        "{err}"
    );
    let apps: Vec<&str> = explained(&err, "app")
        .into_iter()
        .filter(|l| l.contains("Application `gpu-jobs`"))
        .collect();
    assert_eq!(
        apps,
        vec![
            "appsets/gpu-jobs.yaml: Application `gpu-jobs` (ApplicationSet `gpu-jobs`, cluster prod × list element 1): directory workloads/gpu-jobs/overlays/prod: 1 file → cluster `prod` (destination server https://kubernetes.default.svc, the `server` of cluster `prod` in `clusters:`; 2 clusters have this server, each with its Argo CD: the one whose parameters made it)",
            "appsets/gpu-jobs.yaml: Application `gpu-jobs` (ApplicationSet `gpu-jobs`, cluster staging × list element 1): directory workloads/gpu-jobs/overlays/staging: 1 file → cluster `staging` (destination server https://kubernetes.default.svc, the `server` of cluster `staging` in `clusters:`; 2 clusters have this server, each with its Argo CD: the one whose parameters made it)",
        ]
    );
}

#[test]
fn an_applicationset_with_templates_in_plain_values_is_read_not_skipped() {
    // `path: workloads/{{ … }}` is a plain YAML string: Argo CD's, not a template to render first.
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("appsets"), d.path());
    let set = d.path().join("appsets/gpu-jobs.yaml");
    let text = fs::read_to_string(&set).unwrap().replace(
        r#"path: '{{ .path }}/overlays/{{ index .metadata.labels "environment" }}'"#,
        r#"path: workloads/gpu-jobs/overlays/{{ index .metadata.labels "environment" }}"#,
    );
    assert!(text.contains("path: workloads/gpu-jobs/overlays/{{"));
    fs::write(&set, text).unwrap();
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)), staging_finding());
}

#[test]
fn an_application_an_applicationset_also_generates_is_the_generated_one() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "argo:\n  repo: [https://github.com/example/gpu-fleet.git]\n",
    );
    write(
        d.path(),
        "apps/web/deployment.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
    );
    // The hand-written Application the set replaced: its `helm:` on a folder without a chart
    // would fail, but the ApplicationSet takes the name over.
    write(
        d.path(),
        "argocd/old/web.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/example/gpu-fleet.git\n    path: apps/web\n    helm: {valueFiles: [values.yaml]}\n  destination: {server: https://kubernetes.default.svc, namespace: web}\n",
    );
    write(
        d.path(),
        "argocd/appset.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: apps, namespace: argocd}\nspec:\n  generators:\n    - list:\n        elements: [{app: web}]\n  template:\n    metadata: {name: '{{app}}'}\n    spec:\n      project: default\n      source:\n        repoURL: https://github.com/example/gpu-fleet.git\n        path: 'apps/{{app}}'\n      destination: {server: https://kubernetes.default.svc, namespace: '{{app}}'}\n",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(findings(&json(&out)).is_empty(), "{out}");
    assert!(
        err.lines()
            .any(|l| l.contains("argocd/old/web.yaml")
                && l.contains("another Application of this name")),
        "{err}"
    );
}
