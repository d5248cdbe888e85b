//! Kustomize overlays and Helm charts: built with the real `kubectl kustomize` (or kustomize) and
//! a stand-in `helm`, linted, and findings pointed back at the files that produced them.

use crate::common::{Run, gpuops_in, kustomize_on_path, root, run, write};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

pub(crate) fn fixture(name: &str) -> PathBuf {
    root().join("testdata/sources").join(name)
}

/// Kustomize tests need kustomize or kubectl; CI has kubectl.
macro_rules! require_kustomize {
    () => {
        if !kustomize_on_path() {
            return;
        }
    };
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Every file under `dir`, relative, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// Whether a run's JSON report lists a skip whose reason starts with `start`.
fn skipped_because(v: &serde_json::Value, start: &str) -> bool {
    v["skipped"].as_array().is_some_and(|skips| {
        skips
            .iter()
            .any(|s| s["reason"].as_str().is_some_and(|r| r.starts_with(start)))
    })
}

pub(crate) fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// (rule, path, line, column) of every finding.
pub(crate) fn findings(v: &serde_json::Value) -> Vec<(String, String, u64, u64)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn f(rule: &str, path: &str, line: u64, column: u64) -> (String, String, u64, u64) {
    (rule.to_string(), path.to_string(), line, column)
}

// ---------------------------------------------------------------------------------------------
// Kustomize

#[test]
fn overlay_findings_point_at_the_patch_and_the_base() {
    require_kustomize!();
    let Run { code, out, err } = run(gpuops_in(fixture("overlays")).arg("lint"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(!out.contains("(kustomize build)"), "{out}");
    assert!(!out.contains("config.kubernetes.io/origin"), "{out}");
    insta::assert_snapshot!("overlays", out);
}

#[test]
fn overlay_json_one_finding_per_place() {
    require_kustomize!();
    let Run { code, out, .. } =
        run(gpuops_in(fixture("overlays")).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![
            // The base's container, reached through both overlays with the same message: once.
            f(
                "checkpoint-volume-missing",
                "apps/train/base/job.yaml",
                17,
                17
            ),
            // Only prod drops the toleration: the patch operation that does it.
            f(
                "gpu-toleration-missing",
                "apps/train/overlays/prod/drop-gpu-toleration.yaml",
                3,
                9
            ),
        ]
    );
    let d = &v["diagnostics"][1];
    assert_eq!(d["object"]["namespace"], "ml-prod");
    assert_eq!(d["related"][0]["path"], "platform/karpenter.yaml");
    let through: Vec<&str> = v["diagnostics"][0]["related"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["message"] == "reached through this kustomization")
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    // Prod's pods tolerate no pool's taint, so no pool's spot capacity is their risk: the
    // finding stands through dev only.
    assert_eq!(through, vec!["apps/train/overlays/dev/kustomization.yaml"]);
    // The files the builds read are the files of the report; the rendered output is not.
    assert_eq!(v["summary"]["files"], 6);
}

#[test]
fn a_base_finding_with_different_messages_is_reported_per_overlay() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    let job = d.path().join("apps/train/base/job.yaml");
    let text = fs::read_to_string(&job).unwrap().replace(
        "      tolerations:\n        - key: dedicated\n          value: ml-training\n          effect: NoSchedule\n",
        "",
    );
    fs::write(&job, text).unwrap();
    write(
        d.path(),
        "apps/train/overlays/prod/kustomization.yaml",
        "namespace: ml-prod\nresources:\n  - ../../base\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--format",
        "json",
        "--rule",
        "gpu-toleration-missing",
    ]));
    let v = json(&out);
    let at = f("gpu-toleration-missing", "apps/train/base/job.yaml", 17, 15);
    assert_eq!(findings(&v), vec![at.clone(), at], "{out}{err}");
    let messages: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages[0].starts_with("Job ml-dev/finetune"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("Job ml-prod/finetune"),
        "{messages:?}"
    );
}

#[test]
fn a_patch_that_removes_the_whole_field_is_named_in_a_note() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    write(
        d.path(),
        "apps/train/overlays/prod/drop-gpu-toleration.yaml",
        "- op: remove\n  path: /spec/template/spec/tolerations\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--format",
        "json",
        "--rule",
        "gpu-toleration-missing",
    ]));
    let v = json(&out);
    // No node is left where the toleration was: the finding stays on the GPU request in the
    // base, and the removing operation is a related place.
    assert_eq!(
        findings(&v),
        vec![f(
            "gpu-toleration-missing",
            "apps/train/base/job.yaml",
            21,
            15
        )]
    );
    let related = v["diagnostics"][0]["related"].as_array().unwrap();
    assert!(
        related.iter().any(
            |r| r["path"] == "apps/train/overlays/prod/drop-gpu-toleration.yaml"
                && r["line"] == 2
                && r["message"]
                    .as_str()
                    .unwrap()
                    .contains("removes `/spec/template/spec/tolerations`")
        ),
        "{related:#?}"
    );
}

#[test]
fn inline_and_strategic_merge_patches_are_located_in_the_kustomization() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    write(
        d.path(),
        "apps/train/overlays/prod/kustomization.yaml",
        "namespace: ml-prod
namePrefix: prod-
resources:
  - ../../base
patchesStrategicMerge:
  - |-
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: finetune
    spec:
      template:
        spec:
          containers:
            - name: trainer
              resources:
                requests:
                  nvidia.com/gpu: 2
",
    );
    let Run { out, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--rule", "gpu-limit-missing"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f(
            "gpu-limit-missing",
            "apps/train/overlays/prod/kustomization.yaml",
            18,
            35
        )]
    );
    // The limit it disagrees with is in the base.
    let r = &v["diagnostics"][0]["related"][0];
    assert_eq!(
        (r["path"].as_str(), r["line"].as_u64()),
        (Some("apps/train/base/job.yaml"), Some(21))
    );
}

#[test]
fn lint_bases_builds_bases_on_their_own_too() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    write(d.path(), ".gpuops.yaml", "sources: {lint-bases: true}\n");
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(
        err.lines().any(|l| l.trim_start().starts_with("build")
            && l.contains(" apps/train/base/kustomization.yaml: `")),
        "{err}"
    );
    let v = json(&out);
    // The base's finding is the same through the base and both overlays: still once.
    let checkpoints = findings(&v)
        .into_iter()
        .filter(|f| f.0 == "checkpoint-volume-missing")
        .count();
    assert_eq!(checkpoints, 1, "{out}");
}

#[test]
fn explain_sources_says_what_was_read_built_and_why() {
    require_kustomize!();
    let Run { err, .. } =
        run(gpuops_in(fixture("overlays")).args(["lint", "--explain-sources", "--format", "json"]));
    assert!(
        err.starts_with("sources: 1 read raw, 2 built, 0 failed, 0 skipped\n"),
        "{err}"
    );
    assert!(
        err.contains("  raw      platform/karpenter.yaml\n"),
        "{err}"
    );
    assert!(
        err.contains("  build    apps/train/overlays/prod/kustomization.yaml: `kubectl kustomize <tmp>/wrapper` in apps/train/overlays/prod")
            || err.contains("  build    apps/train/overlays/prod/kustomization.yaml: `kustomize build <tmp>/wrapper` in apps/train/overlays/prod"),
        "{err}"
    );
    assert!(
        err.contains("apps/train/base/job.yaml, apps/train/base/kustomization.yaml, apps/train/overlays/prod/drop-gpu-toleration.yaml"),
        "{err}"
    );
    assert!(
        err.contains("  through  apps/train/base/kustomization.yaml: linted through apps/train/overlays/dev, apps/train/overlays/prod, not on its own"),
        "{err}"
    );
}

#[test]
fn namespace_from_the_kustomization_resolves_the_local_queue() {
    require_kustomize!();
    let Run { code, out, err } = run(gpuops_in(fixture("namespace")).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no findings"), "{out}");
    // Read file by file, the Job sits in `default`, where there is no such queue.
    let Run { code, out, .. } =
        run(gpuops_in(fixture("namespace")).args(["lint", "--no-render", "--format", "json"]));
    assert_eq!(code, 1);
    assert_eq!(
        findings(&json(&out)),
        vec![f("localqueue-not-found", "app/job.yaml", 7, 32)]
    );
}

#[test]
fn a_broken_kustomization_is_one_finding_and_the_rest_is_linted() {
    require_kustomize!();
    let dir = fixture("source-build-failed/fail");
    let Run { code, out, .. } = run(gpuops_in(&dir).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![
            // At the entry kustomize could not read.
            f("source-build-failed", "broken/kustomization.yaml", 5, 5),
            // At the duplicate key kustomize refused, not at stream-relative line numbers.
            f("source-build-failed", "duplicate/server.yaml", 24, 13),
            // The raw files beside the broken build are still linted.
            f("gpu-limit-missing", "jobs/eval.yaml", 15, 15),
            // At the key kustomize could not decode.
            f("source-build-failed", "patch-list/kustomization.yaml", 7, 1),
            f("gpu-quantity-invalid", "serving/deployment.yaml", 18, 31),
        ]
    );
    let m = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(m.starts_with("`kustomize build` failed: "), "{m}");
    assert!(m.contains("gpu-quota.yaml"), "{m}");
    assert!(!m.contains("wrapper") && !m.contains("/tmp"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    assert_eq!(
        v["diagnostics"][1]["message"],
        "`kustomize build` failed: `duplicate/server.yaml` is not YAML kustomize reads: duplicate key `failureThreshold`"
    );

    // Nor are a Flux `Kustomization` named `kustomization.yaml` and an Argo CD OCI source.
    let Run { code, out, .. } =
        run(gpuops_in(fixture("source-build-failed/pass")).args(["lint", "--format", "json"]));
    assert_eq!((code, findings(&json(&out))), (0, vec![]), "{out}");
}

#[test]
fn a_generated_configmap_of_python_format_strings_is_no_template() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "kustomization.yaml",
        "resources:\n  - job.yaml\nconfigMapGenerator:\n  - name: code\n    files:\n      - do.py\n",
    );
    // The trailing blanks make kustomize write the script as one double-quoted string folded
    // over many lines, one of which ends in `step: {step}`, as a format template's line would.
    write(
        d.path(),
        "do.py",
        &format!(
            "import time\n\nfor step in range(10):\n    print(f\"{}step: {{step}} zz\", flush=True)   \n",
            "yy ".repeat(29)
        ),
    );
    write(
        d.path(),
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: demo\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: main\n          image: python:3.12\n          command: [python, /app/do.py]\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    // The build is linted (its Job's GPU request without a limit is found), and nothing is
    // called a skipped template.
    assert_eq!(
        findings(&json(&out)),
        vec![f("gpu-limit-missing", "job.yaml", 15, 15)],
        "{out}{err}"
    );
    assert_eq!(json(&out)["skipped"], serde_json::json!([]), "{out}");
}

#[test]
fn the_kustomizations_a_failed_aggregate_lists_are_linted_on_their_own() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "bench/base/kustomization.yaml",
        "resources:\n  - job.yaml\n",
    );
    write(
        d.path(),
        "bench/base/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bench\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: main\n          image: python:3.12\n          command: [python, run.py]\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    write(
        d.path(),
        "bench/qwen/kustomization.yaml",
        "resources:\n  - ../base\nlabels:\n  - pairs: {model: qwen}\n",
    );
    // Lists the base and an overlay of it: kustomize refuses the same object twice.
    write(
        d.path(),
        "bench/kustomization.yaml",
        "resources:\n  - base\n  - qwen\n",
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(
        err.contains("build    bench/qwen/kustomization.yaml")
            && !err.contains("through  bench/qwen/kustomization.yaml"),
        "{err}"
    );
    let found: Vec<(String, String)> = findings(&json(&out))
        .into_iter()
        .map(|(rule, path, _, _)| (rule, path))
        .collect();
    // The aggregate's failure, and the overlay that the README applies, linted through itself
    // (its base once, not again on its own).
    assert_eq!(
        found,
        vec![
            (
                "gpu-limit-missing".to_string(),
                "bench/base/job.yaml".to_string()
            ),
            (
                "source-build-failed".to_string(),
                "bench/kustomization.yaml".to_string()
            ),
        ],
        "{out}{err}"
    );
}

#[test]
fn what_a_kustomize_v3_repository_builds_is_not_judged_by_a_current_kustomize() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // kustomize v3 took a `vars` entry without `objref`; a current kustomize refuses it.
    write(
        d.path(),
        "manifests/app/kustomization.yaml",
        "resources:\n  - job.yaml\nvars:\n  - name: X\n",
    );
    write(
        d.path(),
        "manifests/app/job.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&json(&out))
            .into_iter()
            .map(|(rule, _, _, _)| rule)
            .collect::<Vec<_>>(),
        ["source-build-failed"],
        "{out}"
    );
    // The repository builds with kustomize v3's flag: its failures with a current kustomize are
    // listed by --explain-sources, not reported.
    write(
        d.path(),
        "Makefile",
        "build:\n\tkustomize build --load_restrictor none manifests/app\n",
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(findings(&json(&out)), vec![], "{out}");
    assert!(err.contains("builds with kustomize v3"), "{err}");
}

#[test]
fn a_kustomization_with_a_plugin_generator_is_skipped_not_failed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "secrets/kustomization.yaml",
        "generators:\n  - ./secret-generator.yaml\n",
    );
    // KSOPS decrypts SOPS files; kustomize runs it only with plugins enabled (Argo CD does).
    write(
        d.path(),
        "secrets/secret-generator.yaml",
        "apiVersion: viaduct.ai/v1\nkind: ksops\nmetadata:\n  name: secret-generator\nfiles:\n  - ./db.enc.yaml\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    let reason = v["skipped"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("plugin generator") && reason.contains("`ksops`"),
        "{out}"
    );
}

#[test]
fn a_base_entry_that_names_a_plain_directory_is_the_one_finding_of_its_overlays() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "manifests/netpol/deny.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    write(
        d.path(),
        "kustomize/base/kustomization.yaml",
        "resources:\n  - ../../manifests/netpol\n",
    );
    for env in ["dev", "prod"] {
        write(
            d.path(),
            &format!("kustomize/overlays/{env}/kustomization.yaml"),
            "resources:\n  - ../../base\n",
        );
    }
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    // At the base's entry, once, not at the first line of each overlay.
    assert_eq!(
        findings(&json(&out)),
        vec![f(
            "source-build-failed",
            "kustomize/base/kustomization.yaml",
            2,
            5
        )],
        "{out}{err}"
    );
}

#[test]
fn kustomizations_that_inflate_charts_are_skipped_in_either_spelling() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "etcd/build/kustomization.yaml",
        "helmChartInflationGenerator:\n- chartName: etcd\n  chartRepoUrl: https://charts.bitnami.com/bitnami\n  chartVersion: 6.2.9\n",
    );
    write(
        d.path(),
        "minio/build/kustomization.yaml",
        "helmCharts:\n- name: minio\n  repo: https://charts.min.io\n  version: 5.0.0\n",
    );
    // The built-in generator configured in a file of its own, under `generators:`.
    write(
        d.path(),
        "redis/build/kustomization.yaml",
        "generators:\n  - helm/chart.yaml\n",
    );
    write(
        d.path(),
        "redis/build/helm/chart.yaml",
        "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: redis\nname: redis\nchartHome: ./charts\nreleaseName: redis\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    let markers: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["marker"].as_str())
        .collect();
    assert_eq!(
        markers,
        [
            "helmChartInflationGenerator",
            "helmCharts",
            "helm/chart.yaml"
        ],
        "{out}"
    );
}

#[test]
fn a_kustomization_of_a_template_resource_is_skipped_not_failed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // `deploy.sh` fills `{{PVC_SIZE}}` in with sed before it applies the files.
    write(
        d.path(),
        "deploy/pvc.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: cache\nspec:\n  resources:\n    requests:\n      storage: {{PVC_SIZE}}\n",
    );
    write(
        d.path(),
        "deploy/kustomization.yaml",
        "resources:\n  - pvc.yaml\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    let reason = v["skipped"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason
            .starts_with("Kustomization with a template resource (`pvc.yaml` holds `{{PVC_SIZE}}`"),
        "{out}"
    );
}

#[test]
fn the_bases_of_a_skipped_kustomization_are_linted_on_their_own() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // The cluster's kustomization lists a template (filled in by a script) and a base.
    write(
        d.path(),
        "cluster/rules.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rules\ndata:\n  url: {{ $labels.url }}\n",
    );
    write(
        d.path(),
        "cluster/kustomization.yaml",
        "resources:\n  - rules.yaml\n  - ../apps/trainer\n",
    );
    write(
        d.path(),
        "apps/trainer/kustomization.yaml",
        "resources:\n  - job.yaml\n",
    );
    write(
        d.path(),
        "apps/trainer/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: trainer\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: main\n          image: python:3.12\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(
        err.lines().any(|l| l.trim_start().starts_with("build ")
            && l.contains("apps/trainer/kustomization.yaml:")),
        "{err}"
    );
    let found: Vec<(String, String)> = findings(&json(&out))
        .into_iter()
        .map(|(rule, path, _, _)| (rule, path))
        .collect();
    assert_eq!(
        found,
        vec![(
            "gpu-limit-missing".to_string(),
            "apps/trainer/job.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn a_kustomization_of_an_encrypted_file_is_skipped_not_failed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // git-crypt keeps the file encrypted in the repository; the owner builds an unlocked checkout.
    let mut secret = b"\0GITCRYPT\0".to_vec();
    secret.extend([0xc7, 0x0e, 0xd7, 0x23, 0xfd, 0x2a, 0x5a]);
    fs::create_dir_all(d.path().join("monitoring/config")).unwrap();
    fs::write(d.path().join("monitoring/config/ingress.yaml"), secret).unwrap();
    write(
        d.path(),
        "monitoring/kustomization.yaml",
        "resources:\n  - config/ingress.yaml\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    assert!(
        skipped_because(
            &v,
            "Kustomization with a file encrypted by git-crypt (`config/ingress.yaml`"
        ),
        "{out}"
    );
}

#[test]
fn a_kustomization_of_scaffolded_samples_is_skipped() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // kubebuilder's sample, never filled in: its CRD requires `spec` to hold something.
    write(
        d.path(),
        "config/samples/v1alpha1_modelloader.yaml",
        "apiVersion: example.io/v1alpha1\nkind: ModelLoader\nmetadata:\n  name: modelloader-sample\nspec:\n  # TODO(user): Add fields here\n",
    );
    write(
        d.path(),
        "config/samples/kustomization.yaml",
        "## Append samples of your project ##\nresources:\n- v1alpha1_modelloader.yaml\n",
    );
    write(
        d.path(),
        "config/crd/modelloaders.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: modelloaders.example.io\nspec:\n  group: example.io\n  names: {kind: ModelLoader, plural: modelloaders}\n  scope: Namespaced\n  versions:\n    - name: v1alpha1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          required: [spec]\n          properties:\n            spec:\n              type: object\n              required: [model]\n              properties:\n                model: {type: string}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    assert!(
        skipped_because(&v, "Kustomization of an operator's scaffolded samples only"),
        "{out}"
    );
    // With a sample filled in (and wrong), the kustomization is built whole.
    write(
        d.path(),
        "config/samples/v1alpha1_modelloader_llama.yaml",
        "apiVersion: example.io/v1alpha1\nkind: ModelLoader\nmetadata:\n  name: llama\nspec:\n  modelName: llama-3\n",
    );
    write(
        d.path(),
        "config/samples/kustomization.yaml",
        "resources:\n- v1alpha1_modelloader.yaml\n- v1alpha1_modelloader_llama.yaml\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let found: Vec<String> = findings(&json(&out))
        .into_iter()
        .map(|(rule, path, _, _)| format!("{rule} {path}"))
        .collect();
    assert!(
        found.contains(
            &"schema-violation config/samples/v1alpha1_modelloader_llama.yaml".to_string()
        ),
        "{out}{err}"
    );
}

#[test]
fn a_kustomization_that_is_a_template_itself_is_skipped_not_failed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // gomplate renders the kustomization (custom `{{< >}}` delimiters) before kustomize runs.
    write(
        d.path(),
        "templates/argocd/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - apps/\n  {{<- if not (tmpl.Exec \"remote\" .) >}}\n  - namespaces/\n  {{<- end >}}\n",
    );
    write(
        d.path(),
        "templates/argocd/apps/kustomization.yaml",
        "resources: []\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}{err}");
    assert!(
        skipped_because(&v, "Kustomization that is a Go template itself"),
        "{out}"
    );
}

#[test]
fn a_kustomization_outside_the_load_restrictor_is_built_as_flux_builds_it() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // Built by its author with `--load-restrictor LoadRestrictionsNone` (as Flux builds every
    // kustomization): a file beside the directory, inside the repository.
    write(
        d.path(),
        "serving/shared.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    write(
        d.path(),
        "serving/vllm/kustomization.yaml",
        "resources:\n  - ../shared.yaml\n  - job.yaml\n",
    );
    write(
        d.path(),
        "serving/vllm/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: t\n          image: vllm/vllm-openai:v0.9.0\n          resources:\n            requests: {nvidia.com/gpu: 1}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert!(
        err.contains("--load-restrictor LoadRestrictionsNone")
            && err.contains("built as Flux builds it"),
        "{err}"
    );
    // Its objects are linted, and the build is no failure, even in a cluster declared complete.
    write(d.path(), ".gpuops.yaml", "cluster: {complete: true}\n");
    let Run { out: json_out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let rules: Vec<String> = findings(&json(&json_out))
        .into_iter()
        .map(|(rule, path, _, _)| format!("{rule} {path}"))
        .collect();
    assert_eq!(
        rules,
        ["gpu-limit-missing serving/vllm/job.yaml"],
        "{out}{json_out}"
    );
    // A file it names outside the repository is never read: refused as kustomize refuses it.
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
    );
    let rel = pathdiff_up(
        d.path().join("serving/vllm"),
        outside.path().join("secret.yaml"),
    );
    write(
        d.path(),
        "serving/vllm/kustomization.yaml",
        &format!("resources:\n  - ../shared.yaml\n  - job.yaml\n  - {rel}\n"),
    );
    let Run { err, .. } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert!(
        err.contains("failed") && err.contains("is not in or below"),
        "{err}"
    );
}

/// A relative path from directory `from` to `to`, both absolute, through their common ancestor.
fn pathdiff_up(from: std::path::PathBuf, to: std::path::PathBuf) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[test]
fn a_kustomization_whose_vars_need_a_namespace_from_its_builder_is_reported_only_where_deployed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // A var reads the Service's namespace, which the installer's parent build sets.
    write(
        d.path(),
        "hue/base/kustomization.yaml",
        "resources:\n  - svc.yaml\nvars:\n  - name: ns\n    objref: {kind: Service, name: hue, apiVersion: v1}\n    fieldref: {fieldpath: metadata.namespace}\n",
    );
    write(
        d.path(),
        "hue/base/svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: hue}\nspec:\n  ports: [{port: 80}]\n  selector: {app: hue}\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("a var reads the namespace"), "{err}");
    write(d.path(), ".gpuops.yaml", "cluster: {complete: true}\n");
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    assert_eq!(findings(&json(&out))[0].0, "source-build-failed", "{out}");
}

#[test]
fn a_kustomization_in_an_older_kustomize_form_is_reported_only_where_deployed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "deploy/base/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
    );
    write(
        d.path(),
        "deploy/base/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    // kustomize v1 and v2 read a list of file names under `patches:` as strategic-merge patches.
    write(
        d.path(),
        "deploy/overlays/prod/kustomization.yaml",
        "resources:\n  - ../../base\npatches:\n  - cm.yaml\n",
    );
    write(
        d.path(),
        "deploy/overlays/prod/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {b: c}\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("written for an older kustomize"), "{err}");
    // Declared complete, the cluster deploys it as written: a current kustomize refuses it.
    write(d.path(), ".gpuops.yaml", "cluster: {complete: true}\n");
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let found = findings(&json(&out));
    assert_eq!(found[0].0, "source-build-failed", "{out}");
    assert_eq!(
        found[0].1, "deploy/overlays/prod/kustomization.yaml",
        "{out}"
    );
}

#[test]
fn a_kustomization_inside_a_chart_is_reported_only_where_deployed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "helm/fed/Chart.yaml",
        "apiVersion: v2\nname: fed\nversion: 1.9.0\n",
    );
    // The chart's installer fills in `{{caBundle}}` before it builds these CRDs.
    write(
        d.path(),
        "helm/fed/_crds/kustomization.yaml",
        "resources:\n  - crd.yaml\npatches:\n  - path: webhook.yaml\n",
    );
    write(
        d.path(),
        "helm/fed/_crds/crd.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    write(
        d.path(),
        "helm/fed/_crds/webhook.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone}\ndata: {ca: \"{{caBundle}}\"}\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("inside a Helm chart's directory"), "{err}");
}

#[test]
fn a_number_as_a_key_fails_a_build_at_that_key() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "k8s/kustomization.yaml",
        "resources:\n  - ingress/tcp.yaml\n",
    );
    // ingress-nginx's TCP services map, its ports written as numbers.
    write(
        d.path(),
        "k8s/ingress/tcp.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tcp-services\ndata:\n  9092: \"kafka/kafka:9092\"\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    let d = &v["diagnostics"][0];
    assert_eq!(d["rule"], "source-build-failed", "{out}");
    assert_eq!(d["path"], "k8s/ingress/tcp.yaml", "{out}");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(6), Some(3)),
        "{out}"
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the key `9092` is not a string"),
        "{out}"
    );
}

#[test]
fn a_design_proposal_is_listed_not_linted() {
    let d = tempfile::tempdir().unwrap();
    // An excerpt: the fields the design changes, no more.
    write(
        d.path(),
        "docs/proposals/quota/policy.yaml",
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nspec:\n  failover:\n    purgeMode: Immediately\n",
    );
    write(
        d.path(),
        "jobs/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: a\n          image: b\n          resources: {limits: {nvidia.com/gpu: \"1.5\"}}\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    let paths: Vec<String> = findings(&v).into_iter().map(|f| f.1).collect();
    assert!(
        paths.iter().all(|p| p == "jobs/job.yaml") && !paths.is_empty(),
        "{out}"
    );
    assert_eq!(v["skipped"][0]["reason"], "design proposal", "{out}");
}

#[test]
fn an_overlay_of_a_vendored_copy_is_reported_only_where_deployed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "base/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
    );
    write(
        d.path(),
        "base/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    // An overlay kept as its project ships it, and the same in the repository's own tree: what
    // it patches is no longer in its base.
    let copy = |root: &str| {
        let overlay = "resources:\n  - ../../base\npatches:\n  - path: gone.yaml\n";
        let gone = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dex-ldap}\ndata: {a: b}\n";
        let base = "resources:\n  - ../../../base\n";
        write(
            d.path(),
            &format!("{root}/dex/overlays/ldap/kustomization.yaml"),
            overlay,
        );
        write(
            d.path(),
            &format!("{root}/dex/overlays/ldap/gone.yaml"),
            gone,
        );
        write(
            d.path(),
            &format!("{root}/dex/base/kustomization.yaml"),
            base,
        );
    };
    copy("third_party");
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("in a vendored copy"), "{err}");
    copy("apps");
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let found: Vec<String> = findings(&json(&out))
        .into_iter()
        .filter(|f| f.0 == "source-build-failed")
        .map(|f| f.1)
        .collect();
    assert_eq!(
        found,
        ["apps/dex/overlays/ldap/kustomization.yaml"],
        "{out}"
    );
}

#[test]
fn a_kustomization_file_without_extension_is_built() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "app/Kustomization",
        "namespace: ml\nresources:\n  - job.yaml\n",
    );
    write(
        d.path(),
        "app/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: x\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("gpu-limit-missing", "app/job.yaml", 14, 15)]
    );
    assert_eq!(v["diagnostics"][0]["object"]["namespace"], "ml");
}

#[test]
fn without_kustomize_or_kubectl_kustomizations_are_read_file_by_file() {
    let empty = tempfile::tempdir().unwrap();
    let Run { code, out, err } = run(gpuops_in(fixture("namespace"))
        .env("PATH", empty.path())
        .arg("lint"));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("localqueue-not-found"), "{out}");
    assert!(
        err.contains(
            "note: neither kustomize nor kubectl is on PATH: kustomizations are read file by file"
        ),
        "{err}"
    );
}

#[test]
fn the_example_overlay_points_at_its_patch() {
    require_kustomize!();
    let Run { code, out, .. } =
        run(gpuops_in(root()).args(["lint", "examples/platform", "--format", "json"]));
    assert_eq!(code, 1);
    let v = json(&out);
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"] == "examples/platform/training/finetune/overlays/prod/more-gpus.yaml")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(d["rule"], "gpu-limit-missing");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(13), Some(31))
    );
    assert_eq!(
        d["related"][0]["path"],
        "examples/platform/training/finetune/base/job.yaml"
    );
    assert_eq!(v["summary"]["errors"], 12);
    assert_eq!(v["summary"]["warnings"], 15);
}

#[test]
fn remote_resources_are_skipped_not_fetched() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "app/kustomization.yaml",
        "resources:\n  - https://github.com/example/gpu-platform//base?ref=v1.0.0\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("note: skipped Kustomization with a remote resource (not fetched) app/kustomization.yaml:2:5 (https://github.com/example/gpu-platform//base?ref=v1.0.0); lint it with `kustomize build app | gpuops lint -`"),
        "{err}"
    );
}

#[test]
fn no_render_reads_every_file_as_it_is() {
    require_kustomize!();
    let Run { out, err, .. } = run(gpuops_in(fixture("overlays")).args([
        "lint",
        "--no-render",
        "--format",
        "json",
        "--explain-sources",
    ]));
    assert!(err.contains("rendering is off"), "{err}");
    let v = json(&out);
    // The base is linted as written (it tolerates the taint), the patch file is not a manifest.
    let rules: Vec<String> = findings(&v).into_iter().map(|f| f.0).collect();
    assert!(
        !rules.contains(&"gpu-toleration-missing".to_string()),
        "{out}"
    );
    assert_eq!(v["summary"]["files"], 6);
}

#[test]
fn nothing_is_written_to_the_repo_and_temporary_files_are_removed() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    copy_dir(
        &fixture("source-build-failed/fail/broken"),
        &d.path().join("broken"),
    );
    let before = listing(d.path());
    let tmp = tempfile::tempdir().unwrap();
    let Run { code, err, .. } = run(gpuops_in(d.path()).env("TMPDIR", tmp.path()).arg("lint"));
    assert_eq!(code, 1, "{err}");
    assert_eq!(listing(d.path()), before);
    assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
}

// ---------------------------------------------------------------------------------------------
// Helm, with a stand-in `helm` that prints what `helm template` would

pub(crate) const RENDERED: &str = "---
# Source: trainer/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: trainer-finetune
  annotations:
    kueue.x-k8s.io/queue-name: research
spec:
  template:
    metadata:
      annotations:
        karpenter.sh/do-not-disrupt: \"true\"
    spec:
      restartPolicy: OnFailure
      containers:
        - name: trainer
          image: ghcr.io/example/trainer:1.0.0
          resources:
            limits:
              nvidia.com/gpu: 0.5
";

/// A directory holding a `helm` script: it records its working directory and arguments in
/// `args.txt` beside it, then runs `body`.
#[cfg(unix)]
pub(crate) fn stand_in_helm(body: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let args = d.path().join("args.txt");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$PWD\" \"$@\" > '{}'\n{body}\n",
        args.display()
    );
    let p = d.path().join("helm");
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// A stand-in `helm` that prints `output` as `helm template` would.
#[cfg(unix)]
pub(crate) fn printing_helm(output: &str) -> tempfile::TempDir {
    let d = stand_in_helm("cat \"$(dirname \"$0\")/rendered.yaml\"");
    fs::write(d.path().join("rendered.yaml"), output).unwrap();
    d
}

/// PATH with `dir` first, for the child only.
pub(crate) fn path_with(dir: &Path) -> OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap()
}

#[cfg(unix)]
#[test]
fn chart_findings_point_at_the_template_and_the_values_file() {
    let helm = printing_helm(RENDERED);
    let dir = fixture("chart");
    let Run { code, out, err } = run(gpuops_in(&dir)
        .env("PATH", path_with(helm.path()))
        .arg("lint"));
    assert_eq!(code, 1, "{out}{err}");
    insta::assert_snapshot!("chart", out);

    let Run { out, .. } = run(gpuops_in(&dir)
        .env("PATH", path_with(helm.path()))
        .args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![
            f(
                "queue-name-as-annotation",
                "charts/trainer/templates/job.yaml",
                6,
                5
            ),
            f("gpu-quantity-invalid", "values-prod.yaml", 3, 21),
        ]
    );
    assert_eq!(v["skipped"], serde_json::json!([]));

    // Run in the chart directory, with the configured release, namespace and values, and
    // nothing that fetches.
    let args = fs::read_to_string(helm.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    let chart_dir = fs::canonicalize(dir.join("charts/trainer")).unwrap();
    let values = fs::canonicalize(dir.join("values-prod.yaml")).unwrap();
    assert_eq!(
        args,
        vec![
            chart_dir.to_str().unwrap(),
            "template",
            "trainer",
            ".",
            "--namespace",
            "ml",
            "--include-crds",
            "--values",
            values.to_str().unwrap(),
        ]
    );
}

#[test]
fn a_chart_without_helm_is_skipped_with_how_to_lint_it() {
    let empty = tempfile::tempdir().unwrap();
    let dir = fixture("chart");
    let Run { code, out, err } = run(gpuops_in(&dir).env("PATH", empty.path()).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        err.trim_end(),
        "note: skipped Helm chart (helm not on PATH) charts/trainer/Chart.yaml:2:7 (trainer); \
         lint it with `helm template trainer charts/trainer --namespace ml -f values-prod.yaml | gpuops lint -`"
    );
    let Run { out, err, .. } = run(gpuops_in(&dir)
        .env("PATH", empty.path())
        .args(["lint", "--format", "json"]));
    assert!(err.is_empty(), "{err}");
    let v = json(&out);
    assert_eq!(
        v["skipped"],
        serde_json::json!([{
            "path": "charts/trainer/Chart.yaml",
            "line": 2,
            "column": 7,
            "reason": "Helm chart (helm not on PATH)",
            "marker": "trainer",
        }])
    );
}

#[cfg(unix)]
#[test]
fn no_render_and_helm_false_skip_charts() {
    let helm = stand_in_helm("exit 1");
    let dir = fixture("chart");
    let Run { out, .. } = run(gpuops_in(&dir).env("PATH", path_with(helm.path())).args([
        "lint",
        "--no-render",
        "--format",
        "json",
    ]));
    assert_eq!(
        json(&out)["skipped"][0]["reason"],
        "Helm chart (rendering off)"
    );
    assert!(!helm.path().join("args.txt").exists(), "helm was run");
}

#[cfg(unix)]
#[test]
fn missing_chart_dependencies_are_reported_not_fetched() {
    let helm = stand_in_helm("exit 1");
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("chart"), d.path());
    write(
        d.path(),
        "charts/trainer/Chart.yaml",
        "apiVersion: v2\nname: trainer\nversion: 0.1.0\ndependencies:\n  - name: common\n    version: 2.x\n    repository: https://charts.example.com\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path())
        .env("PATH", path_with(helm.path()))
        .arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("note: skipped Helm chart (dependencies not in charts/, not fetched) charts/trainer/Chart.yaml:5:11 (common)"),
        "{err}"
    );
    assert!(!helm.path().join("args.txt").exists(), "helm was run");
}

#[cfg(unix)]
#[test]
fn a_failing_chart_is_one_finding_at_the_template_line() {
    let helm = stand_in_helm(
        "echo 'Error: template: trainer/templates/job.yaml:16:20: executing \"trainer/templates/job.yaml\" at <.Values.image.tag>: nil pointer evaluating interface {}.tag' >&2\nexit 1",
    );
    let Run { code, out, .. } = run(gpuops_in(fixture("chart"))
        .env("PATH", path_with(helm.path()))
        .args(["lint", "--format", "json"]));
    // Nothing in view deploys the chart: a warning (exit 0), not a certain failure.
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f(
            "source-build-failed",
            "charts/trainer/templates/job.yaml",
            16,
            20
        )]
    );
    assert_eq!(v["diagnostics"][0]["severity"], "warning");
    let m = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        m.starts_with(
            "`helm template` failed: template: trainer/templates/job.yaml:16:20: executing"
        ),
        "{m}"
    );
}

#[cfg(unix)]
#[test]
fn a_slow_tool_is_killed_after_the_timeout() {
    let helm = stand_in_helm("exec sleep 30");
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("chart"), d.path());
    let cfg = fs::read_to_string(d.path().join(".gpuops.yaml")).unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        // Declared complete: what does not build certainly fails (an error).
        &format!("sources: {{timeout: 1s}}\ncluster: {{complete: true}}\n{cfg}"),
    );
    let start = std::time::Instant::now();
    let Run { code, out, .. } = run(gpuops_in(d.path())
        .env("PATH", path_with(helm.path()))
        .args(["lint", "--format", "json"]));
    assert!(start.elapsed().as_secs() < 20);
    // A render still running at the limit says nothing against the chart: skipped, with why.
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    assert_eq!(findings(&v), vec![], "{out}");
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| {
            s["path"] == "charts/trainer/Chart.yaml"
                && s["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("not built within the time limit"))
        }),
        "{out}"
    );
}

#[test]
fn sources_config_problems_are_located() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "sources:\n  kustomize: maybe\n  timeout: soon\ncharts:\n  charts/x:\n    release: --post-renderer=x\n",
    );
    let Run { code, err, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 2);
    assert!(err.contains("3 problems"), "{err}");
    assert!(err.contains(".gpuops.yaml:2:14"), "{err}");
    assert!(err.contains(".gpuops.yaml:3:12"), "{err}");
    assert!(err.contains(".gpuops.yaml:6:14"), "{err}");
}

#[test]
fn a_comment_suppression_in_a_base_covers_findings_reached_through_overlays() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("overlays"), d.path());
    let job = d.path().join("apps/train/base/job.yaml");
    let text = fs::read_to_string(&job).unwrap().replace(
        "        - name: trainer\n",
        "        # gpuops:ignore[checkpoint-volume-missing] resumes from the object store\n        - name: trainer\n",
    );
    fs::write(&job, text).unwrap();
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    let ds = v["diagnostics"].as_array().unwrap();
    let ckpt: Vec<&serde_json::Value> = ds
        .iter()
        .filter(|x| x["rule"] == "checkpoint-volume-missing")
        .collect();
    assert_eq!(ckpt.len(), 1, "{out}");
    assert_eq!(
        ckpt[0]["suppressed"]["reason"], "resumes from the object store",
        "{out}"
    );
    assert!(
        !ds.iter().any(|x| x["rule"] == "unused-suppression"),
        "{out}"
    );
}

// ---------------------------------------------------------------------------------------------
// Argo CD: Applications say what is synced where

/// The `--explain-sources` lines of one kind (`app`, `appset`, `unlinted`), trimmed.
pub(crate) fn explained<'a>(err: &'a str, what: &str) -> Vec<&'a str> {
    err.lines()
        .filter_map(|l| l.trim_start().strip_prefix(what))
        .filter(|l| l.starts_with(' '))
        .map(str::trim)
        .collect()
}

#[test]
fn argo_app_of_apps_lints_each_destination_as_its_cluster() {
    require_kustomize!();
    let dir = fixture("argo");
    let Run { code, out, err } = run(gpuops_in(&dir).arg("lint"));
    assert_eq!(code, 1, "{out}{err}");
    // The Job goes to prod and to staging; only prod has a pool it selects.
    insta::assert_snapshot!("argo_app_of_apps", out);
    assert_eq!(
        err.trim_end(),
        "note: not linted: Application `gpu-operator` (apps/gpu-operator.yaml:5:9): a source from another repository (https://github.com/example/shared-platform.git)"
    );

    let Run { out, .. } = run(gpuops_in(&dir).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f(
            "nodeselector-matches-no-nodepool",
            "workloads/train/job.yaml",
            14,
            19
        )]
    );
    let d = &v["diagnostics"][0];
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .ends_with("[cluster `staging`]"),
        "{d}"
    );
    assert_eq!(d["related"][0]["path"], "platform/staging/karpenter.yaml");
}

#[test]
fn argo_explain_sources_lists_each_application_and_its_cluster() {
    require_kustomize!();
    let Run { err, .. } =
        run(gpuops_in(fixture("argo")).args(["lint", "--explain-sources", "--format", "json"]));
    assert!(
        err.contains("\nargo: 6 Applications (2 from ApplicationSets), 5 linted, 1 not linted; clusters: `in-cluster`, `prod`, `staging`; 1 file no Application syncs linted as one more cluster\n"),
        "{err}"
    );
    assert_eq!(
        explained(&err, "app"),
        vec![
            "apps/platform.yaml: Application `platform-prod` (ApplicationSet `platform`, list element 1): directory platform/prod: 1 file → cluster `prod` (destination name `prod`, a cluster of `clusters:`)",
            "apps/platform.yaml: Application `platform-staging` (ApplicationSet `platform`, list element 2): directory platform/staging: 1 file → cluster `staging` (destination name `staging`)",
            "apps/train-prod.yaml: Application `train-prod` (via `root`): kustomization workloads/train, built as it is → cluster `prod` (destination server https://prod.gpu.example.com, the `server` of cluster `prod` in `clusters:`)",
            "apps/train-staging.yaml: Application `train-staging` (via `root`): kustomization workloads/train, built as it is → cluster `staging` (destination name `staging`)",
            "root.yaml: Application `root`: directory apps: 4 files → cluster `in-cluster` (destination server https://kubernetes.default.svc, the cluster Argo CD runs in)",
        ]
    );
    assert_eq!(
        explained(&err, "appset"),
        vec![
            "apps/platform.yaml: ApplicationSet `platform` (via `root`): 2 Applications (`platform-prod`, `platform-staging`)"
        ]
    );
    assert_eq!(
        explained(&err, "unlinted"),
        vec![
            "apps/gpu-operator.yaml: Application `gpu-operator` (via `root`): a source from another repository (https://github.com/example/shared-platform.git)"
        ]
    );
}

#[test]
fn argo_turned_off_lints_the_repository_as_one_cluster() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    write(d.path(), ".gpuops.yaml", "argo: {enabled: false}\n");
    let Run { code, out, err } = run(gpuops_in(d.path()).arg("lint"));
    // Every pool is in the one cluster: prod's pool takes the Job.
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn argo_without_repo_urls_takes_sources_whose_path_exists_as_this_repository() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    fs::remove_file(d.path().join(".gpuops.yaml")).unwrap();
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        findings(&json(&out)),
        vec![f(
            "nodeselector-matches-no-nodepool",
            "workloads/train/job.yaml",
            14,
            19
        )]
    );
    // Without `clusters:`, prod's server is a cluster of its own, named after it.
    let apps = explained(&err, "app");
    assert!(
        apps.iter().any(|l| l.starts_with("apps/train-prod.yaml: Application `train-prod` (via `root`): kustomization workloads/train, built as it is → cluster `https://prod.gpu.example.com` (destination server https://prod.gpu.example.com; taken as this repository because its path exists here")),
        "{apps:#?}"
    );
    assert_eq!(
        explained(&err, "unlinted"),
        vec![
            "apps/gpu-operator.yaml: Application `gpu-operator` (via `root`): a source from another repository (https://github.com/example/shared-platform.git): `gpu-operator` is not a directory of this one (list this repository's URLs under `argo: {repo: […]}` in .gpuops.yaml if it is)"
        ]
    );
}

#[test]
fn argo_a_missing_path_in_this_repository_is_a_finding() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    let app = d.path().join("apps/train-staging.yaml");
    let text = fs::read_to_string(&app)
        .unwrap()
        .replace("path: workloads/train", "path: workloads/trian");
    fs::write(&app, text).unwrap();
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1);
    // The finding says it; no note besides.
    assert!(
        !err.contains("note: not linted: Application `train-staging`"),
        "{err}"
    );
    assert!(
        explained(&err, "unlinted").contains(&"apps/train-staging.yaml: Application `train-staging` (via `root`): path `workloads/trian` does not exist in this repository (reported as source-build-failed)"),
        "{err}"
    );
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("source-build-failed", "apps/train-staging.yaml", 11, 11)]
    );
    assert_eq!(
        v["diagnostics"][0]["message"],
        "Argo CD cannot sync Application `train-staging`: path `workloads/trian` does not exist in this repository"
    );
}

#[test]
fn argo_a_missing_file_is_an_error_unless_a_setup_script_writes_it() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    let k = d.path().join("workloads/train/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap();
    fs::write(&k, format!("{text}  - registry-secret.yaml\n")).unwrap();
    // Two Applications deploy the kustomization as it is: Argo CD certainly fails to build it.
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f(
            "source-build-failed",
            "workloads/train/kustomization.yaml",
            4,
            5
        )],
        "{err}"
    );
    assert_eq!(v["diagnostics"][0]["severity"], "error");
    // The repository's setup script seals the Secret into place before the first sync.
    fs::write(
        d.path().join("setup.sh"),
        "#!/bin/sh\n# kubectl create secret … > old/registry-secret.yaml\nkubectl create secret docker-registry regcred --dry-run=client -o yaml | kubeseal > \"${REPO}/workloads/train/registry-secret.yaml\"\n",
    )
    .unwrap();
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    let rules: Vec<_> = findings(&json(&out)).into_iter().map(|f| f.0).collect();
    assert!(
        !rules.contains(&"source-build-failed".to_string()),
        "{out}{err}"
    );
    assert!(
        err.contains("(`setup.sh` writes the missing file: reported as source-build-failed only where the cluster is declared complete)"),
        "{err}"
    );
}

#[test]
fn argo_without_repo_urls_a_missing_path_of_a_url_other_applications_show_to_be_this_one_is_a_warning()
 {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    fs::remove_file(d.path().join(".gpuops.yaml")).unwrap();
    let app = d.path().join("apps/train-staging.yaml");
    let text = fs::read_to_string(&app).unwrap();
    // The SSH form of the URL the other Applications sync this repository's directories from.
    let typo = text
        .replace("path: workloads/train", "path: workloads/trian")
        .replace(
            "https://github.com/example/gpu-gitops.git",
            "git@github.com:example/gpu-gitops.git",
        );
    fs::write(&app, &typo).unwrap();
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    let failed: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["rule"] == "source-build-failed")
        .collect();
    assert_eq!(failed.len(), 1, "{out}{err}");
    assert_eq!(failed[0]["severity"], "warning", "{out}");
    assert_eq!(failed[0]["path"], "apps/train-staging.yaml", "{out}");
    assert!(
        failed[0]["message"]
            .as_str()
            .unwrap()
            .contains("path `workloads/trian` does not exist in this repository"),
        "{out}"
    );
    // On another revision the directory may exist: not judged.
    fs::write(
        &app,
        typo.replace("targetRevision: HEAD", "targetRevision: v2"),
    )
    .unwrap();
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(!out.contains("source-build-failed"), "{out}{err}");
}

#[test]
fn argo_a_path_that_is_a_file_of_this_repository_cannot_sync() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("apps/ray")).unwrap();
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ray, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: ray}\n  source:\n    repoURL: https://github.com/example/ray-platform.git\n    targetRevision: HEAD\n    path: apps/ray/service.yaml\n";
    fs::write(d.path().join("apps/ray.yaml"), app).unwrap();
    fs::write(
        d.path().join("apps/ray/service.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: ray-head}\nspec:\n  ports: [{port: 8265}]\n",
    )
    .unwrap();
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("source-build-failed", "apps/ray.yaml", 10, 11)],
        "{out}{err}"
    );
    assert_eq!(v["diagnostics"][0]["severity"], "warning", "{out}");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("path `apps/ray/service.yaml` is a file, and Argo CD syncs a directory"),
        "{out}"
    );
    // On another revision the path may be a directory: not judged.
    fs::write(
        d.path().join("apps/ray.yaml"),
        app.replace("targetRevision: HEAD", "targetRevision: v2"),
    )
    .unwrap();
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(!out.contains("source-build-failed"), "{out}{err}");
}

#[test]
fn argo_an_exported_application_is_a_backup_not_a_definition() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "argo:\n  repo: [https://github.com/example/homelab.git]\n",
    );
    // `argocd admin export`: the Application as the cluster held it, status and all; its
    // directory was removed since.
    write(
        d.path(),
        "backup.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: argo, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: argo}\n  source:\n    repoURL: https://github.com/example/homelab.git\n    path: argo\nstatus:\n  reconciledAt: \"2024-03-11T15:14:07Z\"\n  sync: {status: Unknown}\n",
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(findings(&json(&out)).is_empty(), "{out}{err}");
    assert!(!err.contains("note: not linted"), "{err}");
    assert!(
        err.contains("backup.yaml: Application `argo`: an export of a cluster's state"),
        "{err}"
    );
}

#[test]
fn argo_a_helm_block_on_a_folder_without_a_chart_says_how_to_sync_it() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("apps")).unwrap();
    fs::create_dir_all(d.path().join("karpenter")).unwrap();
    fs::write(
        d.path().join("apps/karpenter.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: karpenter, namespace: argocd}\nspec:\n  project: default\n  destination: {server: https://kubernetes.default.svc}\n  source:\n    path: karpenter\n    helm:\n      valueFiles: [values.yaml]\n",
    )
    .unwrap();
    fs::write(d.path().join("karpenter/values.yaml"), "replicas: 1\n").unwrap();
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("source-build-failed", "apps/karpenter.yaml", 8, 11)]
    );
    assert_eq!(
        v["diagnostics"][0]["message"],
        "Argo CD cannot sync Application `karpenter`: `karpenter` has no Chart.yaml, yet the source's `helm:` block makes Argo CD render it as a chart (remove `helm:` to sync the folder as it is, or set `chart:` and `repoURL` to the chart's repository)"
    );

    // `.` is in every repository: a root without a chart is another repository's (a chart
    // copied here with the Application that deploys it from its own repository).
    let app = d.path().join("apps/karpenter.yaml");
    let text = fs::read_to_string(&app).unwrap().replace(
        "path: karpenter",
        "repoURL: https://github.com/acme/karpenter-chart.git\n    path: .",
    );
    fs::write(&app, text).unwrap();
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!((code, findings(&json(&out))), (0, vec![]), "{out}");
    assert!(
        err.contains("a source from another repository (https://github.com/acme/karpenter-chart.git): the root of this one holds no Chart.yaml"),
        "{err}"
    );
}

#[test]
fn argo_kustomize_options_make_a_build_of_their_own() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    let app = d.path().join("apps/train-staging.yaml");
    let text = fs::read_to_string(&app).unwrap().replace(
        "    path: workloads/train\n",
        "    path: workloads/train\n    kustomize:\n      namePrefix: stg-\n      namespace: ml-staging\n      commonLabels: {env: staging}\n",
    );
    fs::write(&app, text).unwrap();
    let before = listing(d.path());
    let tmp = tempfile::tempdir().unwrap();
    let Run { code, out, err } = run(gpuops_in(d.path()).env("TMPDIR", tmp.path()).args([
        "lint",
        "--format",
        "json",
        "--explain-sources",
    ]));
    assert_eq!(code, 1, "{out}{err}");
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f(
            "nodeselector-matches-no-nodepool",
            "workloads/train/job.yaml",
            14,
            19
        )]
    );
    // The staging build is staging's alone: its finding names the object as staging has it.
    let m = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(m.starts_with("Job ml-staging/stg-finetune "), "{m}");
    assert!(!m.contains("[cluster"), "{m}");
    assert!(
        err.contains("`kubectl kustomize <tmp>/wrapper` in workloads/train for Application `train-staging` (namePrefix stg-, namespace ml-staging, 1 common label)")
            || err.contains("`kustomize build <tmp>/wrapper` in workloads/train for Application `train-staging` (namePrefix stg-, namespace ml-staging, 1 common label)"),
        "{err}"
    );
    assert!(
        explained(&err, "app").contains(&"apps/train-staging.yaml: Application `train-staging` (via `root`): kustomization workloads/train, built with namePrefix stg-, namespace ml-staging, 1 common label → cluster `staging` (destination name `staging`)"),
        "{err}"
    );
    assert_eq!(listing(d.path()), before);
    assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
}

#[test]
fn argo_only_synced_leaves_files_no_application_reaches_unlinted() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    write(
        d.path(),
        "scratch/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: x\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let rules = |argo: &str| {
        let cfg = format!(
            "argo: {{repo: [git@github.com:example/gpu-gitops.git]{argo}}}\nclusters:\n  prod: {{server: https://prod.gpu.example.com}}\n"
        );
        write(d.path(), ".gpuops.yaml", &cfg);
        let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
        findings(&json(&out))
            .into_iter()
            .map(|f| format!("{} {}", f.0, f.1))
            .collect::<Vec<_>>()
    };
    // Unreached files are one more cluster by default…
    assert!(
        rules("").contains(&"gpu-limit-missing scratch/job.yaml".to_string()),
        "{:?}",
        rules("")
    );
    // …and not linted at all with `only-synced`.
    let only = rules(", only-synced: true");
    assert_eq!(
        only,
        vec!["nodeselector-matches-no-nodepool workloads/train/job.yaml"]
    );
}

#[test]
fn argo_git_directories_generator_reads_this_tree() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    write(
        d.path(),
        "apps/platform.yaml",
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: platform, namespace: argocd}
spec:
  goTemplate: true
  generators:
    - git:
        repoURL: https://github.com/example/gpu-gitops.git
        revision: HEAD
        directories:
          - path: platform/*
  template:
    metadata: {name: 'platform-{{.path.basename}}'}
    spec:
      project: platform
      source: {repoURL: https://github.com/example/gpu-gitops.git, path: '{{.path.path}}'}
      destination: {name: '{{index .path.segments 1}}'}
",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)).len(), 1, "{out}");
    assert_eq!(
        explained(&err, "appset"),
        vec![
            "apps/platform.yaml: ApplicationSet `platform` (via `root`): 2 Applications (`platform-prod`, `platform-staging`)"
        ]
    );
    assert!(
        explained(&err, "app").contains(&"apps/platform.yaml: Application `platform-staging` (ApplicationSet `platform`, git directory platform/staging): directory platform/staging: 1 file → cluster `staging` (destination name `staging`)"),
        "{err}"
    );
}

#[test]
fn argo_applications_that_reach_each_other_are_read_once() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("argo"), d.path());
    // An Application in apps/ that syncs apps/ again, and the root recursively.
    write(
        d.path(),
        "apps/loop.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: loop, namespace: argocd}\nspec:\n  source: {repoURL: https://github.com/example/gpu-gitops, path: apps}\n  destination: {name: in-cluster}\n",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(findings(&json(&out)).len(), 1, "{out}");
    let apps = explained(&err, "app");
    assert_eq!(
        apps.iter()
            .filter(|l| l.contains("Application `loop`"))
            .count(),
        1,
        "{apps:#?}"
    );
}

#[test]
fn argo_unsupported_generators_are_listed_as_not_linted() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "appset.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: per-pr}\nspec:\n  generators:\n    - pullRequest: {github: {owner: example, repo: gitops}}\n  template:\n    metadata: {name: 'pr-{{number}}'}\n    spec:\n      source: {repoURL: https://github.com/example/gitops, path: deploy}\n      destination: {name: preview}\n",
    );
    let Run { code, err, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err.trim_end(),
        "note: not linted: ApplicationSet `per-pr` (appset.yaml:3:18): the `pullRequest` generator needs a live cluster or service"
    );
}

#[cfg(unix)]
#[test]
fn argo_helm_application_renders_with_its_values_and_parameters() {
    let helm = printing_helm(RENDERED);
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("chart"), d.path());
    fs::remove_file(d.path().join(".gpuops.yaml")).unwrap();
    write(
        d.path(),
        "apps/trainer.yaml",
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: trainer-prod
  namespace: argocd
spec:
  source:
    repoURL: https://github.com/example/gitops
    path: charts/trainer
    helm:
      # Argo CD reads a values file that starts with `/` from the repository's root.
      valueFiles: [/values-prod.yaml, missing.yaml]
      ignoreMissingValueFiles: true
      valuesObject:
        queue: research
      parameters:
        - {name: image.tag, value: '1.0,1'}
        - {name: queue, value: research, forceString: true}
  destination:
    name: prod
    namespace: ml
",
    );
    let tmp = tempfile::tempdir().unwrap();
    let Run { code, out, err } = run(gpuops_in(d.path())
        .env("PATH", path_with(helm.path()))
        .env("TMPDIR", tmp.path())
        .args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 1, "{out}{err}");
    // The same findings as the plain render, now from the Application's render.
    assert_eq!(
        findings(&json(&out)),
        vec![
            f(
                "queue-name-as-annotation",
                "charts/trainer/templates/job.yaml",
                6,
                5
            ),
            f("gpu-quantity-invalid", "values-prod.yaml", 3, 21),
        ]
    );
    let args = fs::read_to_string(helm.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    let values = fs::canonicalize(d.path().join("values-prod.yaml")).unwrap();
    assert_eq!(
        args[1..9],
        [
            "template",
            "trainer-prod",
            ".",
            "--namespace",
            "ml",
            "--include-crds",
            "--values",
            values.to_str().unwrap(),
        ]
    );
    assert_eq!(args[9], "--values");
    assert!(args[10].ends_with("/application-values.yaml"), "{args:?}");
    assert_eq!(
        args[11..],
        ["--set=image.tag=1.0\\,1", "--set-string=queue=research"]
    );
    assert!(
        explained(&err, "app").contains(&"apps/trainer.yaml: Application `trainer-prod`: chart charts/trainer, rendered with release trainer-prod, namespace ml, 1 values file, inline values, 2 parameters → cluster `prod` (destination name `prod`; taken as this repository because its path exists here (`argo.repo` in .gpuops.yaml is not set))"),
        "{err}"
    );
    // The plain render of the chart is not linted besides.
    assert!(
        err.contains(" charts/trainer: Argo CD Applications sync it with options of their own"),
        "{err}"
    );
    assert!(listing(tmp.path()).is_empty(), "{:?}", listing(tmp.path()));
}

#[cfg(unix)]
#[test]
fn argo_a_value_from_the_applications_inline_values_points_at_the_application() {
    let helm = printing_helm(RENDERED);
    let d = tempfile::tempdir().unwrap();
    copy_dir(&fixture("chart"), d.path());
    fs::remove_file(d.path().join(".gpuops.yaml")).unwrap();
    fs::remove_file(d.path().join("values-prod.yaml")).unwrap();
    write(
        d.path(),
        "apps/trainer.yaml",
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: trainer}
spec:
  source:
    repoURL: https://github.com/example/gitops
    path: charts/trainer
    helm:
      valuesObject:
        resources:
          limits:
            nvidia.com/gpu: 0.5
  destination: {name: prod, namespace: ml}
",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path())
        .env("PATH", path_with(helm.path()))
        .args(["lint", "--format", "json", "--rule", "gpu-quantity-invalid"]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("gpu-quantity-invalid", "apps/trainer.yaml", 12, 29)],
        "{err}"
    );
    assert_eq!(
        v["diagnostics"][0]["related"][0]["path"],
        "charts/trainer/templates/job.yaml"
    );
}

#[cfg(unix)]
#[test]
fn argo_an_app_of_apps_chart_is_read_as_its_parent_renders_it() {
    let helm = printing_helm(
        "---
# Source: apps/templates/apps.yaml
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: train, namespace: argocd}
spec:
  source: {repoURL: https://github.com/example/gitops, path: train}
  destination: {name: prod, namespace: ml}
",
    );
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "root.yaml",
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  source:
    repoURL: https://github.com/example/gitops
    path: apps
    helm: {valuesObject: {env: prod}}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
",
    );
    write(
        d.path(),
        "apps/Chart.yaml",
        "apiVersion: v2\nname: apps\nversion: 0.1.0\n",
    );
    write(
        d.path(),
        "apps/templates/apps.yaml",
        "{{- range .Values.apps }}\nkind: Application\n{{- end }}\n",
    );
    write(
        d.path(),
        "train/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: x\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path())
        .env("PATH", path_with(helm.path()))
        .args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(
        explained(&err, "app"),
        vec![
            "root.yaml: Application `root`: chart apps, rendered with release root, namespace argocd, inline values → cluster `in-cluster` (destination server https://kubernetes.default.svc, the cluster Argo CD runs in; taken as this repository because its path exists here (`argo.repo` in .gpuops.yaml is not set))",
            "apps/templates/apps.yaml: Application `train` (via `root`): directory train: 1 file → cluster `prod` (destination name `prod`; taken as this repository because its path exists here (`argo.repo` in .gpuops.yaml is not set))",
        ],
        "{err}"
    );
    assert!(explained(&err, "unlinted").is_empty(), "{err}");
    let v = json(&out);
    let rules: Vec<String> = findings(&v)
        .into_iter()
        .map(|f| format!("{} {}", f.0, f.1))
        .collect();
    assert!(
        rules.contains(&"gpu-limit-missing train/job.yaml".to_string()),
        "{rules:?}"
    );
}

/// A Job with a GPU, for the batch build tests.
const BATCH_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: x\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n";

/// A base of [`BATCH_JOB`] and a generated ConfigMap in `dir`.
fn batch_base(root: &Path, dir: &str) {
    write(root, &format!("{dir}/job.yaml"), BATCH_JOB);
    write(
        root,
        &format!("{dir}/kustomization.yaml"),
        "resources: [job.yaml]\nconfigMapGenerator:\n- name: cfg\n  literals: [x=1]\n",
    );
}

/// The build of each directory alone: (text, origins).
fn built_alone(
    tool: &gpuops::source::kustomize::Tool,
    dirs: &[&Path],
) -> Vec<(String, Vec<gpuops::source::Origin>)> {
    use gpuops::source::kustomize;
    dirs.iter()
        .map(|d| {
            let b = kustomize::build(
                tool,
                d,
                &kustomize::Wrap::default(),
                kustomize::Loading::Restricted,
                std::time::Duration::from_secs(60),
            )
            .unwrap();
            (b.text, b.origins)
        })
        .collect()
}

#[test]
fn overlays_built_in_one_process_are_each_what_it_is_alone() {
    require_kustomize!();
    use gpuops::source::{kustomize, tree::identity};
    let d = tempfile::tempdir().unwrap();
    let root = identity(d.path());
    // Two applications' overlays (a generator, a patch, a prefix) and a plain directory.
    batch_base(&root, "a/base");
    write(
        &root,
        "a/dev/kustomization.yaml",
        "namespace: a-dev\nresources: [../base]\npatches:\n  - path: p.yaml\n",
    );
    write(
        &root,
        "a/dev/p.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec: {backoffLimit: 1}\n",
    );
    write(&root, "b/base/job.yaml", BATCH_JOB);
    write(
        &root,
        "b/base/kustomization.yaml",
        "resources: [job.yaml]\n",
    );
    write(
        &root,
        "b/prod/kustomization.yaml",
        "namePrefix: prod-\nresources: [../base, svc.yaml]\n",
    );
    write(
        &root,
        "b/prod/svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {ports: [{port: 80}]}\n",
    );
    write(
        &root,
        "c/ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n",
    );
    write(&root, "c/kustomization.yaml", "resources: [ns.yaml]\n");
    write(&root, "empty/kustomization.yaml", "resources: []\n");
    let tool = kustomize::Tool::find().unwrap();
    let (a_dev, a_base) = (root.join("a/dev"), root.join("a/base"));
    let (b_prod, b_base) = (root.join("b/prod"), root.join("b/base"));
    let (c, empty) = (root.join("c"), root.join("empty"));
    let tops = [
        (a_dev.as_path(), vec![a_dev.as_path(), a_base.as_path()]),
        (b_prod.as_path(), vec![b_prod.as_path(), b_base.as_path()]),
        (c.as_path(), vec![c.as_path()]),
        (empty.as_path(), vec![empty.as_path()]),
    ];
    let together = kustomize::build_many(&tool, &tops, std::time::Duration::from_secs(60))
        .expect("one process builds the four");
    let alone = built_alone(&tool, &[&a_dev, &b_prod, &c, &empty]);
    let together: Vec<_> = together.into_iter().map(|b| (b.text, b.origins)).collect();
    assert_eq!(together, alone);
    // Each got its own documents: a generated ConfigMap and the Job, the Job and the Service,
    // the Namespace, nothing.
    let counts: Vec<usize> = together.iter().map(|(_, o)| o.len()).collect();
    assert_eq!(counts, [2, 2, 1, 0]);
}

#[test]
fn overlays_whose_objects_collide_are_not_built_in_one_process() {
    require_kustomize!();
    use gpuops::source::{kustomize, tree::identity};
    let d = tempfile::tempdir().unwrap();
    let root = identity(d.path());
    // Both make the same cluster-scoped object: together, kustomize refuses the second.
    for x in ["x", "y"] {
        write(
            &root,
            &format!("{x}/ns.yaml"),
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: shared}\n",
        );
        write(
            &root,
            &format!("{x}/kustomization.yaml"),
            "resources: [ns.yaml]\n",
        );
    }
    let tool = kustomize::Tool::find().unwrap();
    let (x, y) = (root.join("x"), root.join("y"));
    let tops = [
        (x.as_path(), vec![x.as_path()]),
        (y.as_path(), vec![y.as_path()]),
    ];
    assert!(kustomize::build_many(&tool, &tops, std::time::Duration::from_secs(60)).is_none());
    // The CLI then builds each alone: both linted, nothing failed.
    let Run { err, .. } = run(gpuops_in(&root).args(["lint", "--explain-sources"]));
    assert!(
        err.starts_with("sources: 0 read raw, 2 built, 0 failed, 0 skipped\n"),
        "{err}"
    );
}

#[test]
fn overlays_of_one_base_told_apart_by_namespace_are_built_in_one_process() {
    require_kustomize!();
    use gpuops::source::{kustomize, tree::identity};
    let d = tempfile::tempdir().unwrap();
    let root = identity(d.path());
    batch_base(&root, "base");
    for (t, extra) in [
        ("t1", ""),
        ("t2", "patches:\n  - path: p.yaml\n"),
        ("t3", ""),
    ] {
        write(
            &root,
            &format!("{t}/kustomization.yaml"),
            &format!("namespace: team-{t}\nresources: [../base]\n{extra}"),
        );
    }
    write(
        &root,
        "t2/p.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec: {backoffLimit: 2}\n",
    );
    let tool = kustomize::Tool::find().unwrap();
    let base = root.join("base");
    let dirs: Vec<PathBuf> = ["t1", "t2", "t3"].iter().map(|t| root.join(t)).collect();
    let tops: Vec<(&Path, Vec<&Path>)> = dirs
        .iter()
        .map(|t| (t.as_path(), vec![t.as_path(), base.as_path()]))
        .collect();
    let together = kustomize::build_many(&tool, &tops, std::time::Duration::from_secs(60))
        .expect("the namespaces tell the three apart");
    let together: Vec<_> = together.into_iter().map(|b| (b.text, b.origins)).collect();
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    assert_eq!(together, built_alone(&tool, &dirs));
    assert!(together.iter().all(|(_, o)| o.len() == 2));
    assert!(
        together[1].0.contains("backoffLimit: 2"),
        "{}",
        together[1].0
    );
}

#[test]
fn overlays_of_one_base_that_collide_are_each_linted() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    // Three clusters' overlays of the same application, none renaming it: kustomize cannot build
    // them in one process; each is built and linted on its own, with its own finding.
    write(
        d.path(),
        "app/job.yaml",
        &BATCH_JOB.replace("gpu: 1", "gpu: 0.5"),
    );
    write(
        d.path(),
        "app/kustomization.yaml",
        "resources: [job.yaml]\n",
    );
    for c in ["c1", "c2", "c3"] {
        write(
            d.path(),
            &format!("clusters/{c}/kustomization.yaml"),
            "resources: [../../app]\n",
        );
    }
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(
        err.starts_with("sources: 0 read raw, 3 built, 0 failed, 0 skipped\n"),
        "{err}"
    );
    // The base's finding, once, reached through each of the three.
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("gpu-quantity-invalid", "app/job.yaml", 14, 31)],
        "{out}"
    );
    let through = v["diagnostics"][0]["related"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["message"] == "reached through this kustomization")
        .count();
    assert_eq!(through, 3, "{out}");
}

// ---------------------------------------------------------------------------------------------
// Terraform

#[test]
fn terraform_heredocs_are_manifests_located_in_the_tf_file() {
    let Run { code, out, err } =
        run(gpuops_in(fixture("terraform")).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    let v = json(&out);
    // The pool in Terraform judges the Job in YAML; its taint is pointed at in the `.tf` file.
    assert_eq!(
        findings(&v),
        vec![f("gpu-toleration-missing", "workloads/train.yaml", 21, 15)]
    );
    let related = &v["diagnostics"][0]["related"][0];
    assert_eq!(related["path"], "cluster/karpenter.tf", "{out}");
    assert_eq!(related["line"], 47, "{out}");
    // The node class Terraform applies is the one the pool names: no nodeclass-not-found; the
    // templated queue heredoc is not read (no unresolved clusterQueue `gpu`).
    let Run { err, .. } = run(gpuops_in(fixture("terraform")).args(["lint", "--explain-sources"]));
    insta::assert_snapshot!("terraform_explain", err);
}

/// With the chart installed at `serving` (a release that serves the objects' API version), the
/// objects get no finding; at `not_serving`, one `deprecated-api` finding in `objects`.
fn helm_release_decides(
    chart: &str,
    repository: &str,
    objects: (&str, &str),
    serving: &str,
    not_serving: &str,
) {
    release_decides(
        |version| {
            format!(
                "resource \"helm_release\" \"{chart}\" {{\n  name       = \"{chart}\"\n  repository = \"{repository}\"\n  chart      = \"{chart}\"\n  version    = \"{version}\"\n}}\n"
            )
        },
        objects,
        serving,
        not_serving,
    );
}

/// As [`helm_release_decides`], for any Terraform text `release` makes of a version.
fn release_decides(
    release: impl Fn(&str) -> String,
    objects: (&str, &str),
    serving: &str,
    not_serving: &str,
) {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), objects.0, objects.1);
    write(d.path(), "terraform/addons.tf", &release(serving));
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&json(&out)), vec![], "{out}{err}");
    write(d.path(), "terraform/addons.tf", &release(not_serving));
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&json(&out))
            .into_iter()
            .map(|(rule, path, _, _)| (rule, path))
            .collect::<Vec<_>>(),
        vec![("deprecated-api".to_string(), objects.0.to_string())],
        "{out}{err}"
    );
}

#[test]
fn terraform_module_inputs_and_oci_references_name_the_release() {
    let pool = (
        "examples/pool.yaml",
        "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: default\n",
    );
    // The OCI reference names the chart; `chart` is left empty.
    release_decides(
        |version| {
            format!(
                "resource \"helm_release\" \"karpenter\" {{\n  repository = \"oci://public.ecr.aws/karpenter/karpenter\"\n  chart      = \"\"\n  version    = \"{version}\"\n}}\n"
            )
        },
        pool,
        "0.36.0",
        "1.1.0",
    );
    // A Cluster Toolkit module's input.
    release_decides(
        |version| {
            format!(
                "module \"install\" {{\n  source = \"./modules/kubectl-apply\"\n  kueue = {{\n    install = true\n    version = \"{version}\"\n  }}\n}}\n"
            )
        },
        (
            "kueue/queues.yaml",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n",
        ),
        "v0.10.0",
        "v0.16.1",
    );
    // A `local-exec` command that applies the release manifest, in a module nothing else of
    // which is read.
    release_decides(
        |version| {
            format!(
                "resource \"null_resource\" \"kueue\" {{\n  provisioner \"local-exec\" {{\n    command = <<EOT\n      kubectl apply --server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/{version}/manifests.yaml\n    EOT\n  }}\n}}\n"
            )
        },
        (
            "kueue/queues.yaml",
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n",
        ),
        "v0.10.0",
        "v0.16.1",
    );
}

#[test]
fn an_install_speaks_for_the_paths_it_applies() {
    let d = tempfile::tempdir().unwrap();
    let module = |version: &str| {
        format!(
            "variable \"kueue_version\" {{\n  type    = string\n  default = \"{version}\"\n}}\n\nvariable \"manifest_dir\" {{\n  default = \"../../../manifests/kueue\"\n}}\n\nresource \"null_resource\" \"kueue\" {{\n  provisioner \"local-exec\" {{\n    command = \"kubectl apply --server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/${{var.kueue_version}}/manifests.yaml\"\n  }}\n}}\n"
        )
    };
    write(
        d.path(),
        "lab/manifests/kueue/flavors.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n",
    );
    let lint = || {
        let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
        (findings(&json(&out)).len(), err)
    };
    // Far from the queues, but the module applies their directory: v0.8 serves only v1beta1.
    write(
        d.path(),
        "lab/terraform/modules/kueue/main.tf",
        &module("v0.8.1"),
    );
    assert_eq!(lint().0, 0);
    write(
        d.path(),
        "lab/terraform/modules/kueue/main.tf",
        &module("v0.16.1"),
    );
    assert_eq!(lint().0, 1);
    // A module that does not apply them speaks only for what lies near it.
    write(
        d.path(),
        "lab/terraform/modules/kueue/main.tf",
        &module("v0.8.1").replace("../../../manifests/kueue", "./crds"),
    );
    assert_eq!(lint().0, 1);
}

#[test]
fn terraform_helm_releases_say_which_api_versions_are_served() {
    // Kueue v0.13 serves only v1beta1; from v0.16 on, v1beta2 is the storage version.
    helm_release_decides(
        "kueue",
        "oci://registry.k8s.io/kueue/charts",
        (
            "terraform/kueue.tf",
            "resource \"kubectl_manifest\" \"flavor\" {\n  yaml_body = yamlencode({\n    apiVersion = \"kueue.x-k8s.io/v1beta1\"\n    kind       = \"ResourceFlavor\"\n    metadata   = { name = \"gpu\" }\n  })\n}\n",
        ),
        "0.13.0",
        "0.16.1",
    );
    // Karpenter v0.32 serves v1alpha5 and v1beta1 side by side; from v1.1 on, only v1.
    helm_release_decides(
        "karpenter",
        "oci://public.ecr.aws/karpenter",
        (
            "examples/pool.yaml",
            "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        name: default\n",
        ),
        "v0.32.1",
        "1.1.0",
    );
}

#[test]
fn terraform_hcl_manifests_node_groups_and_chart_values_are_read_with_their_variables() {
    let dir = fixture("terraform-hcl");
    let Run { code, out, err } = run(gpuops_in(&dir).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![
            // The ClusterQueue written as an HCL map: located at the attribute.
            f("resourceflavor-not-found", "cluster/kueue.tf", 24, 23),
            // The one a `templatefile()` renders: located in the template file.
            f(
                "resourceflavor-not-found",
                "cluster/templates/clusterqueue.yaml.tftpl",
                10,
                17
            ),
            // Pinned to the managed node group (instance types from terraform.tfvars), whose
            // taint it does not tolerate.
            f("gpu-toleration-missing", "workloads/serve.yaml", 24, 15),
            // Pinned to the h100 pool that for_each over var.gpu_pools makes, tolerating the
            // a100 pool's taint value.
            f("gpu-toleration-missing", "workloads/sweep.yaml", 16, 7),
            // team-a's LocalQueue comes from for_each over the variable's default; team-c has none.
            f("localqueue-not-found", "workloads/train.yaml", 45, 32),
        ]
    );
    let taint = &v["diagnostics"][2]["related"][0];
    assert_eq!(taint["path"], "cluster/eks.tf", "{out}");
    assert_eq!(taint["line"], 18, "{out}");
    // The Job on the chart's g6 pool tolerates its taint: no finding for `finetune`.
    assert!(!out.contains("finetune"), "{out}");
    let h100 = &v["diagnostics"][3];
    assert!(
        h100["message"]
            .as_str()
            .unwrap()
            .contains("`gpu-model=h100:NoSchedule` of NodePool `h100`"),
        "{out}"
    );
    assert_eq!(h100["related"][0]["path"], "cluster/karpenter.tf", "{out}");
    // The node group and chart files define only context: they are not counted as linted.
    assert_eq!(v["summary"]["files"], 7, "{out}");
    // The template with a `%{ for }` directive is not YAML until Terraform renders it.
    let Run { err, .. } = run(gpuops_in(&dir).arg("lint"));
    assert!(
        err.contains("note: skipped Terraform template cluster/templates/localqueues.tftpl:1:1"),
        "{err}"
    );
}

#[test]
fn terraform_quotas_may_be_set_by_a_caller_a_workload_above_them_is_a_warning() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "modules/kueue/main.tf",
        "variable \"gpu_quota\" {\n  default = 0\n}\n\nresource \"kubernetes_manifest\" \"flavor\" {\n  manifest = {\n    apiVersion = \"kueue.x-k8s.io/v1beta2\"\n    kind       = \"ResourceFlavor\"\n    metadata   = { name = \"gpu\" }\n  }\n}\n\nresource \"kubernetes_manifest\" \"queue\" {\n  manifest = {\n    apiVersion = \"kueue.x-k8s.io/v1beta2\"\n    kind       = \"ClusterQueue\"\n    metadata   = { name = \"gpu\" }\n    spec = {\n      namespaceSelector = {}\n      resourceGroups = [{\n        coveredResources = [\"nvidia.com/gpu\"]\n        flavors = [{\n          name      = \"gpu\"\n          resources = [{ name = \"nvidia.com/gpu\", nominalQuota = var.gpu_quota }]\n        }]\n      }]\n    }\n  }\n}\n\nresource \"kubernetes_manifest\" \"local\" {\n  manifest = {\n    apiVersion = \"kueue.x-k8s.io/v1beta2\"\n    kind       = \"LocalQueue\"\n    metadata   = { name = \"gpu\", namespace = \"ml\" }\n    spec       = { clusterQueue = \"gpu\" }\n  }\n}\n",
    );
    write(
        d.path(),
        "jobs/train.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: gpu}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: t\n          image: busybox:1.36\n          resources:\n            limits: {nvidia.com/gpu: 2}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--format",
        "json",
        "--rule",
        "workload-exceeds-queue-quota",
    ]));
    let v = json(&out);
    assert_eq!(
        findings(&v),
        vec![f("workload-exceeds-queue-quota", "jobs/train.yaml", 6, 39)],
        "{out}{err}"
    );
    assert_eq!(v["diagnostics"][0]["severity"], "warning", "{out}");
}

#[test]
fn terraform_that_applies_nothing_is_not_read_invalid_hcl_is_one_located_finding() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.tf",
        "module \"eks\" {\n  source = \"x\"\n}\n",
    );
    let Run { code, out, err } = run(gpuops_in(dir.path()).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no findings in 0 files"), "{out}");
    write(
        dir.path(),
        "broken.tf",
        "resource \"kubectl_manifest\" \"x\" {\n  yaml_body = <<-YAML\n    kind: [\n",
    );
    let Run { code, out, err } = run(gpuops_in(dir.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        findings(&json(&out)),
        vec![f("invalid-hcl", "broken.tf", 3, 5)]
    );
}

#[test]
fn terraform_node_groups_belong_to_the_cluster_whose_paths_hold_them() {
    let d = tempfile::tempdir().unwrap();
    let group = |env: &str| {
        format!(
            "module \"eks\" {{\n  eks_managed_node_groups = {{\n    gpu = {{\n      instance_types = [\"g5.xlarge\"]\n      labels = {{ workload = \"inference\" }}\n      taints = {{\n        d = {{ key = \"dedicated\", value = \"{env}\", effect = \"NO_SCHEDULE\" }}\n      }}\n    }}\n  }}\n}}\n"
        )
    };
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: smoke, namespace: ml}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      nodeSelector: {workload: inference}\n      tolerations:\n        - {key: dedicated, value: prod, effect: NoSchedule}\n      containers:\n        - name: c\n          image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n          resources:\n            limits: {nvidia.com/gpu: 1}\n";
    write(d.path(), "infra/prod/eks.tf", &group("prod"));
    write(d.path(), "infra/staging/eks.tf", &group("staging"));
    // The same Job in both clusters, tolerating prod's taint only.
    write(d.path(), "apps/prod/job.yaml", job);
    write(d.path(), "apps/staging/job.yaml", job);
    write(
        d.path(),
        ".gpuops.yaml",
        "clusters:\n  prod:\n    paths: [\"apps/prod/**\", \"infra/prod/**\"]\n  staging:\n    paths: [\"apps/staging/**\", \"infra/staging/**\"]\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    let v = json(&out);
    let found: Vec<_> = findings(&v)
        .into_iter()
        .map(|(r, p, _, _)| (r, p))
        .collect();
    assert_eq!(
        found,
        vec![(
            "gpu-toleration-missing".to_string(),
            "apps/staging/job.yaml".to_string()
        )],
        "{out}"
    );
    assert_eq!(
        v["diagnostics"][0]["related"][0]["path"], "infra/staging/eks.tf",
        "{out}"
    );
}

/// A device plugin manifest beside Terraform node groups may be another configuration's (a
/// repository of several clusters, a vendored upstream manifest): node groups alone never make
/// `device-plugin-misses-gpu-pool` fire; a NodePool in the manifests does.
#[test]
fn terraform_node_groups_alone_never_judge_a_device_plugin() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "infra/eks.tf",
        "module \"eks\" {\n  eks_managed_node_groups = {\n    gpu = {\n      instance_types = [\"g5.xlarge\"]\n      taints = {\n        g = { key = \"nvidia.com/gpu\", value = \"true\", effect = \"NO_SCHEDULE\" }\n      }\n    }\n  }\n}\n",
    );
    // The plugin tolerates no GPU taint: on these nodes it would never run.
    write(
        d.path(),
        "addons/nvidia-device-plugin.yaml",
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: nvidia-device-plugin-daemonset, namespace: kube-system}\nspec:\n  selector: {matchLabels: {name: ndp}}\n  template:\n    metadata: {labels: {name: ndp}}\n    spec:\n      containers:\n        - name: nvidia-device-plugin-ctr\n          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("device-plugin-misses-gpu-pool"), "{out}");
    // The same pool as a NodePool of the manifests is judged.
    write(
        d.path(),
        "karpenter/gpu.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}\n      taints:\n        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}\n  limits: {nvidia.com/gpu: 8}\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: gpu}\nspec:\n  role: R\n  amiSelectorTerms: [{alias: al2023@v20251120}]\n  subnetSelectorTerms: [{tags: {k: v}}]\n  securityGroupSelectorTerms: [{tags: {k: v}}]\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(out.contains("device-plugin-misses-gpu-pool"), "{out}{err}");
}

#[test]
fn terraform_never_reads_a_file_outside_the_repository() {
    let d = tempfile::tempdir().unwrap();
    // A file of the machine, outside the repository: a broken ClusterQueue whose text a finding
    // would print.
    write(
        d.path(),
        "secret.tftpl",
        "kind: ClusterQueue\nmetadata: {name: [\n",
    );
    write(d.path(), "repo/.git/HEAD", "ref: refs/heads/main\n");
    write(
        d.path(),
        "repo/main.tf",
        "resource \"kubectl_manifest\" \"q\" {\n  yaml_body = templatefile(\"../secret.tftpl\", {})\n}\nlocals {\n  x = yamldecode(file(\"${path.module}/../secret.tftpl\"))\n}\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path().join("repo")).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !out.contains("secret") && !err.contains("secret"),
        "{out}{err}"
    );
}

#[test]
fn invalid_hcl_fixtures() {
    let Run { code, out, err } =
        run(gpuops_in(fixture("invalid-hcl/fail")).args(["lint", "--rule", "invalid-hcl"]));
    assert_eq!(code, 1, "{out}{err}");
    insta::assert_snapshot!("invalid_hcl", out);
    let Run { code, out, err } = run(gpuops_in(fixture("invalid-hcl/pass")).arg("lint"));
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn kustomizations_naming_a_file_over_the_size_limit_are_skipped_not_built() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "base/kustomization.yaml",
        "resources:\n  - job.yaml\n  - generated.yaml\n",
    );
    write(
        d.path(),
        "base/job.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    write(
        d.path(),
        "overlay/kustomization.yaml",
        "namespace: ml\nresources:\n  - ../base\n",
    );
    // Sparse: one byte over the limit without writing 32 MiB.
    fs::File::create(d.path().join("base/generated.yaml"))
        .unwrap()
        .set_len(gpuops::source::MAX_FILE_BYTES + 1)
        .unwrap();
    let started = std::time::Instant::now();
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--explain-sources"]));
    assert!(started.elapsed().as_secs() < 10, "{err}");
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("note: skipped Kustomization naming a file over the 32 MiB size limit (not built) overlay/kustomization.yaml:1:1 (generated.yaml)"),
        "{err}"
    );
}

#[test]
fn an_application_two_overlays_of_one_set_generate_is_not_a_duplicate_to_note() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "apps/web/deployment.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
    );
    write(
        d.path(),
        "argocd/base/appset.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: apps, namespace: argocd}\nspec:\n  generators:\n    - list:\n        elements: [{app: web}]\n  template:\n    metadata: {name: '{{app}}'}\n    spec:\n      project: default\n      source:\n        repoURL: https://github.com/example/gpu-fleet.git\n        path: 'apps/{{app}}'\n      destination: {server: https://kubernetes.default.svc, namespace: '{{app}}'}\n",
    );
    write(
        d.path(),
        "argocd/base/kustomization.yaml",
        "resources: [appset.yaml]\n",
    );
    // One overlay per cluster, each building the same set.
    for c in ["east", "west"] {
        write(
            d.path(),
            &format!("argocd/overlays/{c}/kustomization.yaml"),
            "resources: [../../base]\n",
        );
    }
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert!(findings(&json(&out)).is_empty(), "{out}");
    assert!(!err.contains("note: not linted: Application"), "{err}");
    assert!(
        err.lines().any(|l| l.contains("Application `web`")
            && l.contains("defined again by another build of argocd/base/appset.yaml")),
        "{err}"
    );
}

#[test]
fn argo_a_source_of_another_repository_name_is_not_this_repository_whatever_paths_it_shares() {
    // Each data centre's Argo CD syncs its own overlay; the tenant Applications it holds sync
    // directories of the same path from the tenants' repositories.
    let top = tempfile::tempdir().unwrap();
    let app = |name: &str, repo: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\nspec:\n  project: default\n  source: {{repoURL: '{repo}', path: {path}, targetRevision: release}}\n  destination: {{server: 'https://kubernetes.default.svc', namespace: {name}}}\n"
        )
    };
    let config =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: x}\ndata: {a: b}\n";
    let layout = |root: &Path| {
        write(root, "apps/a/cm.yaml", config);
        write(root, "overlays/osaka0/cm.yaml", config);
        write(
            root,
            "argocd/a.yaml",
            &app("a", "https://github.com/acme/neco-apps.git", "apps/a"),
        );
        write(
            root,
            "argocd/tenant.yaml",
            &app(
                "tenant",
                "https://github.com/acme/tenant-apps.git",
                "overlays/osaka0",
            ),
        );
    };
    let expected = "argocd/tenant.yaml: Application `tenant`: a source from another repository (https://github.com/acme/tenant-apps.git): Applications here sync this one as github.com/acme/neco-apps";
    // Known by the checkout's directory name, which an Application here syncs from.
    let named = top.path().join("neco-apps");
    layout(&named);
    let Run { err, .. } = run(gpuops_in(&named).args(["lint", "--explain-sources"]));
    assert!(explained(&err, "unlinted").contains(&expected), "{err}");
    // Known by the checkout's git remote.
    let cloned = top.path().join("checkout");
    layout(&cloned);
    write(
        &cloned,
        ".git/config",
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/neco-apps.git\n",
    );
    let Run { err, .. } = run(gpuops_in(&cloned).args(["lint", "--explain-sources"]));
    assert!(explained(&err, "unlinted").contains(&expected), "{err}");
    // Known by neither: a path that exists here is taken as this repository's, as before.
    let other = top.path().join("elsewhere");
    layout(&other);
    let Run { err, .. } = run(gpuops_in(&other).args(["lint", "--explain-sources"]));
    assert!(explained(&err, "unlinted").is_empty(), "{err}");
}

#[test]
fn a_file_a_kustomization_lists_only_in_a_comment_is_turned_off() {
    require_kustomize!();
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "apps/kustomization.yaml",
        "resources:\n  - ./web/ks.yaml\n  # - ./kyverno/ks.yaml\n",
    );
    write(
        d.path(),
        "apps/web/ks.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {a: b}\n",
    );
    // Broken, and turned off by its author.
    let broken = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: kyverno\n spec:\n  path: ./apps/kyverno/app\n";
    write(d.path(), "apps/kyverno/ks.yaml", broken);
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(findings(&json(&out)), vec![], "{err}");
    assert!(
        explained(&err, "unused").contains(&"apps/kyverno/ks.yaml: listed only in a comment of apps/kustomization.yaml, turned off: not linted"),
        "{err}"
    );
    // Listed again, it is built and its mistake reported.
    write(
        d.path(),
        "apps/kustomization.yaml",
        "resources:\n  - ./web/ks.yaml\n  - ./kyverno/ks.yaml\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let rules: Vec<String> = findings(&json(&out)).into_iter().map(|f| f.0).collect();
    assert!(!rules.is_empty(), "{out}");
}
