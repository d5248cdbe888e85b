//! Runs the binary on temporary repositories: exit codes, stdin, output formats, bad input.

use crate::common::{Run, gpuops, gpuops_in, kustomize_on_path, root, run, write};
use assert_cmd::Command;
use std::fs;
use std::path::Path;

// Checkpoints on a PVC: a GPU Job is training by default, and checkpoint-volume-missing runs on
// every cluster.
const GOOD_JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: ok
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: x
          resources:
            limits:
              nvidia.com/gpu: 1
          volumeMounts:
            - {name: ckpt, mountPath: /ckpt}
      volumes:
        - name: ckpt
          persistentVolumeClaim: {claimName: ckpt}
";

pub(crate) const BAD_JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: bad
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: x
          resources:
            requests:
              nvidia.com/gpu: 1
          volumeMounts:
            - {name: ckpt, mountPath: /ckpt}
      volumes:
        - name: ckpt
          persistentVolumeClaim: {claimName: ckpt}
";

#[test]
fn clean_repo_exits_zero() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "jobs/ok.yaml", GOOD_JOB);
    let Run { code, out, .. } = run(gpuops().arg("lint").arg(d.path()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings in 1 file"));
}

#[test]
fn findings_exit_one_and_point_at_the_node() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "jobs/bad.yaml", BAD_JOB);
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d0 = &v["diagnostics"][0];
    assert_eq!(d0["rule"], "gpu-limit-missing");
    assert_eq!(d0["path"], "jobs/bad.yaml");
    assert_eq!(
        (d0["line"].as_u64(), d0["column"].as_u64()),
        (Some(14), Some(15))
    );
    assert_eq!(d0["object"]["kind"], "Job");
    assert_eq!(d0["object"]["name"], "bad");
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["summary"]["files"], 1);
}

#[test]
fn json_shape_is_complete() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d0 = v["diagnostics"][0].as_object().unwrap();
    for k in [
        "rule",
        "severity",
        "message",
        "help",
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "object",
        "related",
        "suppressed",
    ] {
        assert!(d0.contains_key(k), "missing {k}");
    }
    for k in [
        "files",
        "documents",
        "objects",
        "errors",
        "warnings",
        "suppressed",
    ] {
        assert!(v["summary"].get(k).is_some(), "missing summary.{k}");
    }
}

#[test]
fn stdin_is_linted() {
    let Run { code, out, .. } = run(gpuops()
        .args(["lint", "-", "--format", "json"])
        .write_stdin(BAD_JOB));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["diagnostics"][0]["path"], "<stdin>");
}

#[test]
fn files_a_tools_test_compares_refuses_or_evaluates_offline_are_not_manifests() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "policy/.chainsaw-test/chainsaw-test.yaml",
        "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nspec:\n  steps:\n  - try:\n    - apply:\n        file: job-good.yaml\n    - apply:\n        file: job-refused.yaml\n        expect:\n        - check:\n            ($error != null): true\n    - assert:\n        file: job-patched.yaml\n",
    );
    for f in ["job-refused.yaml", "job-patched.yaml"] {
        write(d.path(), &format!("policy/.chainsaw-test/{f}"), BAD_JOB);
    }
    write(d.path(), "policy/.chainsaw-test/job-good.yaml", BAD_JOB);
    write(
        d.path(),
        "cli/kyverno-test.yaml",
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\npolicies: [policy.yaml]\nresources: [resource.yaml]\n",
    );
    write(d.path(), "cli/resource.yaml", BAD_JOB);
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", ".", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    // Only the file the test applies expecting it to be accepted is a manifest.
    assert_eq!(paths, ["policy/.chainsaw-test/job-good.yaml"], "{out}");
}

#[test]
fn templates_alone_say_nothing_was_linted() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "gpu_job_template.yaml", BAD_JOB);
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "."]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no findings in 0 files"), "{out}");
    assert!(
        err.contains("note: nothing linted: gpu_job_template.yaml is named as a template"),
        "{err}"
    );
    // Beside a linted manifest, a template is not linted by design: no note.
    write(
        d.path(),
        "job.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    let Run { err, .. } = run(gpuops_in(d.path()).args(["lint", "."]));
    assert!(!err.contains("nothing linted"), "{err}");
}

#[test]
fn malformed_file_is_a_finding_and_the_rest_is_linted() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a-broken.yaml", "apiVersion: v1\nkind: [\n");
    write(d.path(), "b-bad.yaml", BAD_JOB);
    write(d.path(), "c-binary.yaml", "\0\0\0binary");
    write(
        d.path(),
        "d-dupes.yml",
        "apiVersion: v1\nkind: ConfigMap\ndata: {a: '1'}\ndata: {a: '2'}\n",
    );
    // The same key with the same value twice reads the same whichever is kept.
    write(
        d.path(),
        "f-same-twice.yml",
        "apiVersion: v1\napiVersion: v1\nkind: ConfigMap\ndata: {}\n",
    );
    // YAML that names no object (a values file) is another tool's to judge.
    write(d.path(), "e-values.yml", "a: 1\na: 2\n");
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rules: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        rules,
        vec![
            ("a-broken.yaml", "invalid-yaml"),
            ("b-bad.yaml", "gpu-limit-missing"),
            ("c-binary.yaml", "invalid-yaml"),
            ("d-dupes.yml", "invalid-yaml"),
        ]
    );
}

/// A Helm chart `x` under `chart/`, as yet without templates.
fn chart(dir: &std::path::Path) {
    write(
        dir,
        "chart/Chart.yaml",
        "apiVersion: v2\nname: x\nversion: 0.1.0\n",
    );
}

#[test]
fn non_kubernetes_yaml_and_helm_charts_are_skipped() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".github/workflows/ci.yaml",
        "on: [push]\njobs: {}\n",
    );
    write(d.path(), "values.yaml", "gpu:\n  count: 0.5\n");
    chart(d.path());
    write(
        d.path(),
        "chart/templates/job.yaml",
        "{{- if .Values.x }}\nkind: Job\n{{- end }}\n",
    );
    write(d.path(), "notes.txt", "not yaml");
    // No helm on PATH: the chart is listed as skipped, not rendered.
    let empty = tempfile::tempdir().unwrap();
    let Run { code, out, .. } = run(gpuops_in(d.path())
        .env("PATH", empty.path())
        .args(["lint", "--format", "json"]));
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["files"], 3);
    assert_eq!(v["summary"]["objects"], 0);
    assert_eq!(v["skipped"][0]["path"], "chart/Chart.yaml");
    assert_eq!(v["skipped"][0]["reason"], "Helm chart (helm not on PATH)");
}

#[test]
fn a_jekyll_build_and_a_workshops_fill_ins_are_not_linted() {
    let d = tempfile::tempdir().unwrap();
    // A site generator's copy of the repository's files.
    write(d.path(), "_site/jobs/job.yaml", BAD_JOB);
    // An exercise to complete by hand before applying.
    write(
        d.path(),
        "exercise/policy.yaml",
        "kind: NetworkPolicy\napiVersion: networking.k8s.io/v1\nmetadata: {name: backend, namespace: stars}\nspec:\n  podSelector: {}\n  ingress:\n    - from:\n        - <EDIT: ADD THE FRONTEND'S POD SELECTOR>\n            <EDIT: ADD THE FRONTEND'S POD SELECTOR>\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["skipped"][0]["path"], "exercise/policy.yaml", "{out}");
    assert!(!out.contains("_site"), "{out}");
}

#[test]
fn the_yaml_a_podman_quadlet_plays_is_not_linted() {
    let d = tempfile::tempdir().unwrap();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: server}\nspec:\n  containers:\n    - name: server\n      image: quay.io/example/server:1.0\n      env:\n        - {name: PORT, value: 8001}\n";
    write(d.path(), "quadlet/server.yaml", pod);
    let lint = |d: &std::path::Path| run(gpuops_in(d).args(["lint", "--format", "json"]));
    let Run { code, out, .. } = lint(d.path());
    assert_eq!(code, 1, "{out}");
    // `podman kube play` reads it on one host, converting the number as it decodes.
    write(
        d.path(),
        "quadlet/server.kube",
        "[Unit]\nDescription=server\n\n[Kube]\nYaml=server.yaml\n\n[Install]\nWantedBy=default.target\n",
    );
    let Run { code, out, .. } = lint(d.path());
    assert_eq!(code, 0, "{out}");
}

#[test]
fn what_a_charts_directory_holds_beside_its_templates_is_linted() {
    let d = tempfile::tempdir().unwrap();
    // The repository's root is an umbrella chart; other charts and plain manifests lie below.
    write(
        d.path(),
        "Chart.yaml",
        "apiVersion: v2\nname: all\nversion: 0.1.0\n",
    );
    write(d.path(), "values.yaml", "gpu:\n  count: 0.5\n");
    write(
        d.path(),
        "templates/job.yaml",
        "{{- if .Values.x }}\nkind: Job\n{{- end }}\n",
    );
    write(d.path(), "charts/sub/templates/job.yaml", BAD_JOB);
    write(
        d.path(),
        "vllm/Chart.yaml",
        "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
    );
    write(d.path(), "vllm/templates/job.yaml", BAD_JOB);
    write(d.path(), "vllm/examples/job.yaml", BAD_JOB);
    // A plain manifest beside `Chart.yaml` is no part of the chart; values files are.
    write(d.path(), "vllm/job.yaml", BAD_JOB);
    write(d.path(), "vllm/values-prod.yaml", BAD_JOB);
    let empty = tempfile::tempdir().unwrap();
    let Run { code, out, .. } = run(gpuops_in(d.path())
        .env("PATH", empty.path())
        .args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: std::collections::BTreeSet<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    // Helm renders neither an example nor a values file; its templates are not YAML.
    assert_eq!(
        paths.into_iter().collect::<Vec<_>>(),
        ["vllm/examples/job.yaml", "vllm/job.yaml"]
    );
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["Chart.yaml", "vllm/Chart.yaml"], "{out}");
}

#[test]
fn output_is_deterministic() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..20 {
        write(d.path(), &format!("dir{}/job{i}.yaml", i % 3), BAD_JOB);
    }
    let lint = || run(gpuops_in(d.path()).args(["lint", "--format", "json"])).out;
    let first = lint();
    for _ in 0..3 {
        assert_eq!(lint(), first);
    }
}

#[test]
fn usage_and_io_errors_exit_two() {
    let Run { code, err, .. } = run(gpuops().args(["lint", "/definitely/not/here"]));
    assert_eq!(code, 2);
    assert!(err.contains("/definitely/not/here"), "{err}");
    let Run { code, .. } = run(gpuops().args(["lint", "--format", "xml"]));
    assert_eq!(code, 2);
    let Run { code, err, .. } = run(gpuops().args(["lint", "--rule", "gpu-limit-mising", "."]));
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `gpu-limit-missing`"), "{err}");
}

#[test]
fn bad_config_lists_every_problem_with_its_place() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "fail-on: sometimes\nrules:\n  no-such-rule: off\ncluster: {eks: maybe}\n",
    );
    write(d.path(), "a.yaml", GOOD_JOB);
    let Run { code, err, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 2);
    assert!(err.contains("3 problems"), "{err}");
    assert!(err.contains(".gpuops.yaml:1:10"), "{err}");
    assert!(err.contains(".gpuops.yaml:3:3"), "{err}");
    assert!(err.contains(".gpuops.yaml:4:16"), "{err}");
}

#[test]
fn config_turns_rules_off_and_sets_fail_on() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    write(
        d.path(),
        ".gpuops.yaml",
        "rules:\n  gpu-limit-missing: warning\n",
    );
    let Run { code, out, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 0, "a warning does not fail by default: {out}");
    assert!(out.contains("0 errors, 1 warning"));
    let Run { code, .. } = run(gpuops_in(d.path()).args(["lint", "--fail-on", "warning"]));
    assert_eq!(code, 1);
    write(
        d.path(),
        ".gpuops.yaml",
        "rules:\n  gpu-limit-missing: off\n",
    );
    let Run { code, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 0);
}

#[test]
fn config_excludes_paths() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "legacy/a.yaml", BAD_JOB);
    write(d.path(), ".gpuops.yaml", "exclude: [\"legacy/**\"]\n");
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn config_is_found_walking_up_from_the_linted_path() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "repo/.gpuops.yaml",
        "rules:\n  gpu-limit-missing: off\n",
    );
    write(d.path(), "repo/apps/x/a.yaml", BAD_JOB);
    let Run { code, .. } = run(gpuops_in(d.path()).args(["lint", "repo/apps/x"]));
    assert_eq!(code, 0);
}

#[cfg(unix)]
#[test]
fn symlink_loops_do_not_stop_the_run() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a/bad.yaml", BAD_JOB);
    std::os::unix::fs::symlink(d.path().join("a"), d.path().join("a/loop")).unwrap();
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["errors"], 1);
}

#[test]
fn alias_bomb_is_reported_not_expanded() {
    let d = tempfile::tempdir().unwrap();
    let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    let mut prev = 'a';
    for c in 'b'..='m' {
        s.push_str(&format!("{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        prev = c;
    }
    write(d.path(), "bomb.yaml", &s);
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    assert!(out.contains("alias expansion exceeds"));
}

#[test]
fn sarif_and_github_formats() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "sarif"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "gpu-limit-missing");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        14
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "github"]));
    assert!(
        out.starts_with("::error file=a.yaml,line=14,col=15"),
        "{out}"
    );
}

#[test]
fn rules_and_rule_explain() {
    let Run { code, out, .. } = run(gpuops().arg("rules"));
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 21);
    assert!(out.contains("gpu-toleration-missing"));
    let Run { code, out, .. } = run(gpuops().args(["rule", "gpu-limit-missing"]));
    assert_eq!(code, 0);
    assert!(out.contains("## Why is this bad?"));
    let Run { code, err, .. } = run(gpuops().args(["rule", "gpu-limit-mising"]));
    assert_eq!(code, 2);
    assert!(err.contains("did you mean"));
    for name in ["suppression-invalid", "unused-suppression"] {
        let Run { code, out, .. } = run(gpuops().args(["rule", name]));
        assert_eq!(code, 0);
        assert!(out.contains("## Fix"), "{out}");
    }
}

#[test]
fn bundled_examples() {
    let Run { code, out, .. } = run(gpuops_in(root()).args(["lint", "examples/clean"]));
    assert_eq!(code, 0, "{out}");
    let Run { code, .. } = run(gpuops_in(root()).args(["lint", "examples/platform"]));
    assert_eq!(code, 1);
}

const TEMPLATE: &str = "apiVersion: apps/v1
kind: Deployment
{{- if .Values.gpu }}
metadata:
  name: {{ include \"x.fullname\" . }}
{{- end }}
";

#[test]
fn templates_are_skipped_with_a_note_and_broken_yaml_is_reported() {
    let d = tempfile::tempdir().unwrap();
    // An operator's `manifests/` directory: templates without a Chart.yaml next to them.
    write(d.path(), "manifests/deployment.yaml", TEMPLATE);
    write(
        d.path(),
        "manifests/config.j2.yaml",
        "{% if gpu %}\nkind: Pod\n{% endif %}\n",
    );
    write(
        d.path(),
        "broken.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: [\n",
    );
    write(d.path(), "good.yaml", GOOD_JOB);
    // Valid YAML that only quotes template expressions: parsed and linted, not skipped.
    write(
        d.path(),
        "quoted.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"{{ .Values.name }}\"\n",
    );

    let Run { code, out, err } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("broken.yaml"), "{out}");
    assert!(!out.contains("manifests/"), "{out}");
    assert!(
        err.contains(
            "note: skipped Go template manifests/deployment.yaml:3:1 ({{- if .Values.gpu }}); \
             render it (helm template …) and lint the output via stdin"
        ),
        "{err}"
    );
    assert!(
        err.contains("note: skipped Jinja template manifests/config.j2.yaml:1:1 ({% if gpu %})"),
        "{err}"
    );
    assert_eq!(err.matches("note: skipped").count(), 2, "{err}");

    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1);
    assert!(!err.contains("note:"), "notes are for human output: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let found: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(found, vec![("broken.yaml", "invalid-yaml")]);
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2);
    let s = skipped
        .iter()
        .find(|s| s["path"] == "manifests/deployment.yaml")
        .unwrap();
    assert_eq!(
        (s["line"].as_u64(), s["column"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(s["reason"], "Go template");
    assert_eq!(s["marker"], "{{- if .Values.gpu }}");
    assert_eq!(v["summary"]["files"], 5);
}

#[test]
fn json_lists_no_skipped_files_as_an_empty_array() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", GOOD_JOB);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["skipped"], serde_json::json!([]));
}

#[test]
fn flow_collection_closed_at_key_indent_lints_clean() {
    let d = tempfile::tempdir().unwrap();
    let job = "apiVersion: batch/v1
kind: Job
metadata:
  name: ok
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: x
          command: [
            \"nvidia-smi\", \"-L\"
          ]
          resources:
            limits: {
              \"nvidia.com/gpu\": 1
            }
";
    write(d.path(), "jobs/ok.yaml", job);
    let Run { code, out, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings in 1 file"), "{out}");

    // Findings after the quirk still point at the original line and column.
    let bad = job.replace("limits: {", "requests: {");
    write(d.path(), "jobs/ok.yaml", &bad);
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d0 = &v["diagnostics"][0];
    assert_eq!(d0["rule"], "gpu-limit-missing");
    assert_eq!(
        (d0["line"].as_u64(), d0["column"].as_u64()),
        (Some(17), Some(15))
    );
}

/// BAD_JOB with a suppression of its `gpu-limit-missing` finding (line 14 of BAD_JOB).
fn suppressed_job(form: &str) -> String {
    match form {
        "annotation" => BAD_JOB.replace(
            "  name: bad\n",
            "  name: bad\n  annotations:\n    ignore.gpuops.dev/gpu-limit-missing: \"the admission webhook adds limits\"\n",
        ),
        "template-annotation" => BAD_JOB.replace(
            "  template:\n",
            "  template:\n    metadata:\n      annotations:\n        ignore.gpuops.dev/gpu-limit-missing: \"the admission webhook adds limits\"\n",
        ),
        "end-of-line" => BAD_JOB.replace(
            "nvidia.com/gpu: 1\n",
            "nvidia.com/gpu: 1 # gpuops:ignore[gpu-limit-missing] the admission webhook adds limits\n",
        ),
        "line-above" => BAD_JOB.replace(
            "              nvidia.com/gpu: 1\n",
            "              # gpuops:ignore[gpu-limit-missing] the admission webhook adds limits\n              nvidia.com/gpu: 1\n",
        ),
        "file" => format!(
            "# gpuops:ignore-file[gpu-limit-missing] the admission webhook adds limits\n{BAD_JOB}"
        ),
        _ => unreachable!("unknown form {form}"),
    }
}

fn json_of(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let Run { code, out, err } = run(gpuops_in(dir)
        .args(["lint", "--no-config", "--format", "json"])
        .args(extra));
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v)
}

fn rules_in(v: &serde_json::Value) -> Vec<(String, Option<String>)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["suppressed"]["kind"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn each_suppression_form_hides_its_finding_and_the_run_passes() {
    for (form, kind) in [
        ("annotation", "annotation"),
        ("template-annotation", "annotation"),
        ("end-of-line", "comment"),
        ("line-above", "comment"),
        ("file", "file"),
    ] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a.yaml", &suppressed_job(form));
        let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--no-config"]));
        assert_eq!(code, 0, "{form}: the only error is suppressed: {out}");
        assert!(
            out.ends_with(
                "no findings in 1 file\n1 finding suppressed (--no-suppressions to show)\n"
            ),
            "{form}: {out}"
        );
        let (_, v) = json_of(d.path(), &[]);
        assert_eq!(
            rules_in(&v),
            vec![("gpu-limit-missing".to_string(), Some(kind.to_string()))],
            "{form}"
        );
        let Run { out, .. } =
            run(gpuops_in(d.path()).args(["lint", "--no-config", "--format", "github"]));
        assert_eq!(out, "", "{form}: suppressed findings are no annotations");
    }
}

#[test]
fn suppression_without_a_reason_is_invalid_and_suppresses_nothing() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "a.yaml",
        &BAD_JOB.replace(
            "nvidia.com/gpu: 1\n",
            "nvidia.com/gpu: 1 # gpuops:ignore[gpu-limit-missing]\n",
        ),
    );
    let (code, v) = json_of(d.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        rules_in(&v),
        vec![
            ("gpu-limit-missing".to_string(), None),
            ("suppression-invalid".to_string(), None),
        ]
    );
    let inv = &v["diagnostics"][1];
    assert_eq!(
        (inv["line"].as_u64(), inv["column"].as_u64()),
        (Some(14), Some(33))
    );
    assert_eq!(inv["severity"], "warning");
    assert!(inv["message"].as_str().unwrap().contains("no reason"));
}

#[test]
fn suppression_of_an_unknown_rule_suggests_the_closest_name() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "a.yaml",
        &BAD_JOB.replace(
            "  name: bad\n",
            "  name: bad\n  annotations:\n    ignore.gpuops.dev/gpu-limit-mising: \"webhook\"\n",
        ),
    );
    let (code, v) = json_of(d.path(), &[]);
    assert_eq!(code, 1);
    let inv = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "suppression-invalid")
        .expect("a suppression-invalid finding");
    assert_eq!(inv["line"], 6);
    assert!(
        inv["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `gpu-limit-missing`"),
        "{inv}"
    );
}

#[test]
fn unused_suppression_only_for_rules_that_ran() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "# gpuops:ignore-file[gpu-nodepool-unbounded] the account quota caps GPU spend\n{GOOD_JOB}"
    );
    write(d.path(), "a.yaml", &text);
    let (code, v) = json_of(d.path(), &[]);
    assert_eq!(code, 0, "a warning does not fail the run");
    assert_eq!(rules_in(&v), vec![("unused-suppression".to_string(), None)]);
    assert_eq!(
        (
            v["diagnostics"][0]["line"].as_u64(),
            v["diagnostics"][0]["column"].as_u64()
        ),
        (Some(1), Some(22))
    );
    // Left out by --rule or turned off in the config: its suppressions are not stale.
    let (_, v) = json_of(d.path(), &["--rule", "gpu-limit-missing"]);
    assert_eq!(rules_in(&v), vec![]);
    write(
        d.path(),
        ".gpuops.yaml",
        "rules:\n  gpu-nodepool-unbounded: off\n",
    );
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rules_in(&v), vec![]);
}

#[test]
fn no_suppressions_shows_everything() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", &suppressed_job("annotation"));
    write(
        d.path(),
        "b.yaml",
        &format!("# gpuops:ignore-file[deprecated-api] old cluster\n{GOOD_JOB}"),
    );
    let (code, v) = json_of(d.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(
        rules_in(&v),
        vec![
            (
                "gpu-limit-missing".to_string(),
                Some("annotation".to_string())
            ),
            ("unused-suppression".to_string(), None),
        ]
    );
    let (code, v) = json_of(d.path(), &["--no-suppressions"]);
    assert_eq!(code, 1);
    assert_eq!(rules_in(&v), vec![("gpu-limit-missing".to_string(), None)]);
    let Run { code, out, .. } =
        run(gpuops_in(d.path()).args(["lint", "--no-config", "--no-suppressions"]));
    assert_eq!(code, 1);
    assert!(out.contains("gpu-limit-missing"), "{out}");
    assert!(!out.contains("suppressed"), "{out}");
}

#[test]
fn json_and_sarif_keep_suppressed_findings_with_their_reason() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", &suppressed_job("end-of-line"));
    let (_, v) = json_of(d.path(), &[]);
    let s = &v["diagnostics"][0]["suppressed"];
    assert_eq!(s["kind"], "comment");
    assert_eq!(s["reason"], "the admission webhook adds limits");
    assert_eq!(s["line"], 14);
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["suppressed"], 1);

    write(d.path(), "b.yaml", BAD_JOB);
    let Run { code, out, .. } =
        run(gpuops_in(d.path()).args(["lint", "--no-config", "--format", "sarif"]));
    assert_eq!(code, 1, "b.yaml is not suppressed");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let sup = &results[0]["suppressions"];
    assert_eq!(sup[0]["kind"], "inSource");
    assert_eq!(sup[0]["justification"], "the admission webhook adds limits");
    assert!(results[1].get("suppressions").is_none());
}

// ---------------------------------------------------------------------------------------------
// Cluster context and clusters

const CONTEXT_POOLS: &str = "# kubectl get nodepools -o yaml
apiVersion: v1
kind: List
items:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: gpu}
    spec:
      template:
        spec:
          requirements:
            - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}
          taints:
            - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}
";

const UNTOLERATING_JOB: &str = "apiVersion: batch/v1
kind: Job
metadata: {name: smoke, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
          resources:
            limits: {nvidia.com/gpu: 1}
";

/// (rule, path) of every finding.
pub(crate) fn findings(v: &serde_json::Value) -> Vec<(String, String)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn context_dump_supplies_pools_and_is_never_reported_on() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "apps/job.yaml", UNTOLERATING_JOB);
    write(d.path(), "context/pools.yaml", CONTEXT_POOLS);
    // Without context: no pool in view, nothing to say about taints.
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "apps", "--format", "json"]));
    assert_eq!(code, 0, "{out}");
    // With the dump: the Job does not tolerate the pool's taint; the pool (no limits) is not
    // reported, and the related location is the context file.
    let Run { code, out, .. } = run(gpuops_in(d.path()).args([
        "lint",
        ".",
        "--context",
        "context/pools.yaml",
        "--rule",
        "gpu-toleration-missing",
        "--rule",
        "gpu-nodepool-unbounded",
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        findings(&v),
        vec![("gpu-toleration-missing".into(), "apps/job.yaml".into())],
        "{out}"
    );
    assert_eq!(
        v["diagnostics"][0]["related"][0]["path"], "context/pools.yaml",
        "{out}"
    );
    assert_eq!(v["summary"]["files"], 1, "{out}");
}

const CONTEXT_NODES: &str = "# kubectl get nodes -o yaml (a managed node group of two A10G nodes)
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-1-1
      labels:
        kubernetes.io/hostname: ip-10-0-1-1
        node.kubernetes.io/instance-type: g5.12xlarge
        eks.amazonaws.com/nodegroup: serving
        accelerator: nvidia-a10g
    spec:
      taints:
        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}
    status:
      capacity: {cpu: \"48\", memory: 195784220Ki, nvidia.com/gpu: \"4\"}
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-1-2
      labels:
        kubernetes.io/hostname: ip-10-0-1-2
        node.kubernetes.io/instance-type: g5.12xlarge
        eks.amazonaws.com/nodegroup: serving
        accelerator: nvidia-a10g
    spec:
      taints:
        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}
    status:
      capacity: {cpu: \"48\", memory: 195784220Ki, nvidia.com/gpu: \"4\"}
";

fn selecting_job(name: &str, accelerator: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{accelerator: {accelerator}}}
      tolerations:
        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
      containers:
        - name: c
          image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
          resources:
            limits: {{nvidia.com/gpu: 1}}
"
    )
}

#[test]
fn nodes_in_the_context_are_capacity_pods_fit() {
    let d = tempfile::tempdir().unwrap();
    // A Karpenter GPU pool in the repository; the A10G nodes exist only in the cluster.
    write(d.path(), "context/pools.yaml", CONTEXT_POOLS);
    write(d.path(), "context/nodes.yaml", CONTEXT_NODES);
    write(
        d.path(),
        "apps/a10g.yaml",
        &selecting_job("a10g", "nvidia-a10g"),
    );
    write(
        d.path(),
        "apps/h100.yaml",
        &selecting_job("h100", "nvidia-h100"),
    );
    let lint = |context: &[&str]| {
        let mut args = vec![
            "lint",
            "apps",
            "--rule",
            "nodeselector-matches-no-nodepool",
            "--format",
            "json",
        ];
        for c in context {
            args.extend(["--context", c]);
        }
        let Run { out, .. } = run(gpuops_in(d.path()).args(&args));
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    // Pools alone: neither selector matches the p5 pool.
    assert_eq!(findings(&lint(&["context/pools.yaml"])).len(), 2);
    // With the nodes: the A10G Job fits nodes that exist; the H100 one still fits nothing.
    let v = lint(&["context/pools.yaml", "context/nodes.yaml"]);
    assert_eq!(
        findings(&v),
        vec![(
            "nodeselector-matches-no-nodepool".into(),
            "apps/h100.yaml".into()
        )],
        "{v}"
    );
    // Nodes alone are some of the cluster's capacity, not all it can launch: no verdict.
    assert!(findings(&lint(&["context/nodes.yaml"])).is_empty());
    // `cost` counts the node group's nodes.
    let Run { out, .. } =
        run(gpuops_in(d.path()).args(["cost", "apps", "--context", "context/nodes.yaml"]));
    assert!(out.contains("2 × g5.12xlarge"), "{out}");
}

#[test]
fn config_context_paths_are_relative_to_the_config_and_must_exist() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "apps/job.yaml", UNTOLERATING_JOB);
    write(d.path(), "context/pools.yaml", CONTEXT_POOLS);
    write(d.path(), ".gpuops.yaml", "context: [context/pools.yaml]\n");
    let Run { code, out, .. } = run(gpuops_in(d.path().join("apps")).args([
        "lint",
        ".",
        "--rule",
        "gpu-toleration-missing",
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{out}");
    write(d.path(), ".gpuops.yaml", "context: [context/nope.yaml]\n");
    let Run { code, err, .. } = run(gpuops_in(d.path()).args(["lint", "apps"]));
    assert_eq!(code, 2);
    assert!(err.contains("context path not found"), "{err}");
    write(d.path(), ".gpuops.yaml", "context: context/pools.yaml\n");
    let Run { code, err, .. } = run(gpuops_in(d.path()).args(["lint", "apps"]));
    assert_eq!(code, 2);
    assert!(err.contains("`context` is a list"), "{err}");
}

const POOL_LABELLED: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: NAME}
spec:
  template:
    metadata: {labels: {workload: LABEL}}
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
  limits: {nvidia.com/gpu: \"8\"}
";

fn two_cluster_repo(d: &Path) {
    let pool = |n: &str, l: &str| POOL_LABELLED.replace("NAME", n).replace("LABEL", l);
    write(d, "clusters/prod/pools.yaml", &pool("train", "training"));
    write(d, "clusters/staging/pools.yaml", &pool("dev", "dev"));
    let job = UNTOLERATING_JOB.replace(
        "      restartPolicy: Never\n",
        "      restartPolicy: Never\n      nodeSelector: {workload: training}\n      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n",
    );
    write(d, "clusters/staging/job.yaml", &job);
    write(d, "base/smoke.yaml", UNTOLERATING_JOB);
    write(
        d,
        ".gpuops.yaml",
        "clusters:\n  prod:\n    paths: [\"clusters/prod/**\", \"base/**\"]\n  staging:\n    paths: [\"clusters/staging/**\", \"base/**\"]\n",
    );
}

#[test]
fn a_pod_that_fits_only_the_other_clusters_pool_is_reported() {
    let d = tempfile::tempdir().unwrap();
    two_cluster_repo(d.path());
    let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = findings(&v);
    assert!(
        f.contains(&(
            "nodeselector-matches-no-nodepool".into(),
            "clusters/staging/job.yaml".into()
        )),
        "{out}"
    );
    // As one cluster, prod's pool would serve the staging Job.
    let Run { out, .. } =
        run(gpuops_in(d.path()).args(["lint", "--no-config", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        !findings(&v)
            .iter()
            .any(|(r, _)| r == "nodeselector-matches-no-nodepool"),
        "{out}"
    );
}

#[test]
fn a_finding_in_a_shared_base_names_its_clusters_once() {
    let d = tempfile::tempdir().unwrap();
    two_cluster_repo(d.path());
    write(
        d.path(),
        "base/no-limits.yaml",
        &UNTOLERATING_JOB.replace(
            "limits: {nvidia.com/gpu: 1}",
            "requests: {nvidia.com/gpu: 1}",
        ),
    );
    let messages = |rule: &str| -> Vec<String> {
        let Run { out, .. } =
            run(gpuops_in(d.path()).args(["lint", "--rule", rule, "--format", "json"]));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{}: {}",
                    d["path"].as_str().unwrap(),
                    d["message"].as_str().unwrap()
                )
            })
            .collect()
    };
    // The same finding in both clusters: one finding that names both.
    let m = messages("gpu-limit-missing");
    assert_eq!(m.len(), 1, "{m:#?}");
    assert!(m[0].starts_with("base/no-limits.yaml: "), "{m:#?}");
    assert!(m[0].ends_with("[clusters `prod`, `staging`]"), "{m:#?}");
    // A different verdict per cluster (another pool each): one finding per cluster.
    let m: Vec<String> = messages("gpu-toleration-missing")
        .into_iter()
        .filter(|m| m.starts_with("base/smoke.yaml"))
        .collect();
    assert_eq!(m.len(), 2, "{m:#?}");
    assert!(
        m.iter()
            .any(|x| x.contains("NodePool `train`") && x.ends_with("[cluster `prod`]")),
        "{m:#?}"
    );
    assert!(
        m.iter()
            .any(|x| x.contains("NodePool `dev`") && x.ends_with("[cluster `staging`]")),
        "{m:#?}"
    );
}

#[test]
fn cluster_config_problems_are_located() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".gpuops.yaml",
        "clusters:\n  prod:\n    eks: maybe\n  staging:\n    paths: [\"a/**\"]\n    region: x\n",
    );
    write(d.path(), "a/job.yaml", GOOD_JOB);
    let Run { code, err, .. } = run(gpuops_in(d.path()).arg("lint"));
    assert_eq!(code, 2);
    assert!(
        err.contains("`clusters.prod.eks` is true or false"),
        "{err}"
    );
    assert!(err.contains("cluster `prod` needs `paths`"), "{err}");
    assert!(
        err.contains("unknown key `region` in cluster `staging`"),
        "{err}"
    );
}

// ---- CI integrations: junit, gitlab, SARIF fingerprints, --output-file, --changed ----

/// `examples/platform` in a format, the same on every machine: its kustomize overlay is built
/// with kubectl (on CI's machines, as the sources tests need) and its Helm chart stays skipped
/// whether or not `helm` is installed. `None` without kubectl or kustomize.
fn platform(format: &str) -> Option<(i32, String)> {
    if !kustomize_on_path() {
        return None;
    }
    let cfg = tempfile::tempdir().unwrap();
    let config = cfg.path().join(".gpuops.yaml");
    fs::write(
        &config,
        "sources: {helm: false}\ncluster: {complete: true}\nrules: {ami-alias-unpinned: warning}\n",
    )
    .unwrap();
    let Run { code, out, .. } = run(gpuops_in(root())
        .args(["lint", "examples/platform", "--format", format, "--config"])
        .arg(&config));
    Some((code, out))
}

#[test]
fn junit_of_the_platform_example() {
    let Some((code, out)) = platform("junit") else {
        return;
    };
    assert_eq!(code, 1);
    insta::assert_snapshot!("junit-platform", out);
}

#[test]
fn gitlab_code_quality_of_the_platform_example() {
    let Some((code, out)) = platform("gitlab") else {
        return;
    };
    assert_eq!(code, 1);
    insta::assert_snapshot!("gitlab-platform", out);
}

/// (element, required attributes, allowed attributes, allowed child elements)
type XsdElement = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// The elements and attributes of the Jenkins xUnit plugin's `junit-10.xsd` (what GitLab and
/// Jenkins read).
const JUNIT_10: &[XsdElement] = &[
    (
        "testsuites",
        &[],
        &["name", "time", "tests", "failures", "errors"],
        &["testsuite"],
    ),
    (
        "testsuite",
        &["name", "tests", "failures", "errors"],
        &[
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        ],
        &[
            "testsuite",
            "properties",
            "testcase",
            "system-out",
            "system-err",
        ],
    ),
    (
        "testcase",
        &["name"],
        &["name", "time", "classname", "group"],
        &[
            "skipped",
            "error",
            "failure",
            "rerunFailure",
            "rerunError",
            "flakyFailure",
            "flakyError",
            "system-out",
            "system-err",
        ],
    ),
    ("failure", &[], &["type", "message"], &[]),
    ("error", &[], &["type", "message"], &[]),
    ("skipped", &[], &["type", "message"], &[]),
    ("system-out", &[], &[], &[]),
];

/// Parses JUnit XML and checks it against `JUNIT_10`; returns the document's text for more checks.
fn check_junit(xml: &str) -> roxmltree::Document<'_> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    for node in root.descendants().filter(|n| n.is_element()) {
        let name = node.tag_name().name();
        let (_, required, allowed, children) = JUNIT_10
            .iter()
            .find(|(e, ..)| *e == name)
            .unwrap_or_else(|| panic!("<{name}> is not in junit-10.xsd"));
        for r in *required {
            assert!(node.has_attribute(*r), "<{name}> lacks {r}");
        }
        for a in node.attributes() {
            assert!(allowed.contains(&a.name()), "<{name}> has {}", a.name());
        }
        for c in node.children().filter(|c| c.is_element()) {
            let c = c.tag_name().name();
            assert!(children.contains(&c), "<{c}> inside <{name}>");
        }
        if name == "testsuite" {
            let cases = node.children().filter(|c| c.has_tag_name("testcase"));
            let with = |tag: &str| {
                cases
                    .clone()
                    .filter(|c| c.children().any(|f| f.has_tag_name(tag)))
                    .count()
                    .to_string()
            };
            assert_eq!(node.attribute("failures"), Some(&*with("failure")));
            assert_eq!(node.attribute("skipped"), Some(&*with("skipped")));
            assert_eq!(node.attribute("tests"), Some(&*cases.count().to_string()));
        }
    }
    doc
}

#[test]
fn junit_parses_back_against_the_junit_10_schema() {
    let (Some((_, xml)), Some((_, json))) = (platform("junit"), platform("json")) else {
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let doc = check_junit(&xml);
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let shown =
        v["summary"]["errors"].as_u64().unwrap() + v["summary"]["warnings"].as_u64().unwrap();
    assert_eq!(cases.len() as u64, shown);
    // Grouped by file: one suite per file with findings, its cases all of that file.
    for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        let file = suite.attribute("file").unwrap();
        for c in suite.children().filter(|c| c.has_tag_name("testcase")) {
            assert_eq!(c.attribute("classname"), Some(file));
            // Errors fail (the default --fail-on); warnings are reported as skipped.
            let body = match c.children().find(|f| f.has_tag_name("failure")) {
                Some(failure) => {
                    assert_eq!(failure.attribute("type"), Some("error"));
                    failure.text().unwrap()
                }
                None => {
                    let skipped = c.children().find(|f| f.has_tag_name("skipped")).unwrap();
                    assert_eq!(skipped.attribute("type"), Some("warning"));
                    let out = c.children().find(|f| f.has_tag_name("system-out"));
                    out.and_then(|o| o.text()).unwrap()
                }
            };
            assert!(body.contains(&format!("at {file}:")));
            // Stable names: rule and object, no line numbers.
            let name = c.attribute("name").unwrap();
            assert!(!name.contains(" at "), "{name}");
        }
    }
}

#[test]
fn junit_escapes_markup_and_control_characters_and_a_clean_run_has_one_passing_case() {
    let d = tempfile::tempdir().unwrap();
    // Names with markup, quotes and control characters (YAML escapes) reach messages and bodies.
    let job = BAD_JOB
        .replace("name: bad", "name: \"bad\\u0007<b>&'\\\"\\u001b\"")
        .replace("- name: c\n", "- name: \"c\\u0001]]>\\r\\n\\t<x>\"\n");
    write(d.path(), "a.yaml", &job);
    let Run { code, out: xml, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "junit"]));
    assert_eq!(code, 1, "{xml}");
    let doc = check_junit(&xml);
    let bodies: String = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .map(|f| format!("{}\n{}", f.attribute("message").unwrap(), f.text().unwrap()))
        .collect();
    assert!(bodies.contains("bad\\u{0007}<b>&'\"\\u{001B}"), "{bodies}");
    assert!(bodies.contains("c\\u{0001}]]>\r\n\t<x>"), "{bodies}");

    let clean = tempfile::tempdir().unwrap();
    write(clean.path(), "ok.yaml", GOOD_JOB);
    let Run { code, out: xml, .. } =
        run(gpuops_in(clean.path()).args(["lint", "--format", "junit"]));
    assert_eq!(code, 0, "{xml}");
    let doc = check_junit(&xml);
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].attribute("name"), Some("no findings in 1 file"));
}

#[test]
fn gitlab_issues_have_what_gitlab_requires() {
    let (Some((_, out)), Some((_, json))) = (platform("gitlab"), platform("json")) else {
        return;
    };
    let issues: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let shown =
        v["summary"]["errors"].as_u64().unwrap() + v["summary"]["warnings"].as_u64().unwrap();
    assert_eq!(issues.len() as u64, shown);
    let mut fingerprints = std::collections::HashSet::new();
    for i in &issues {
        for k in ["description", "check_name", "fingerprint", "severity"] {
            assert!(i[k].is_string(), "{k} in {i}");
        }
        assert!(i["location"]["path"].is_string(), "{i}");
        assert!(i["location"]["lines"]["begin"].is_u64(), "{i}");
        assert!(
            ["info", "minor", "major", "critical", "blocker"]
                .contains(&i["severity"].as_str().unwrap())
        );
        assert!(fingerprints.insert(i["fingerprint"].as_str().unwrap().to_string()));
    }
}

#[test]
fn gitlab_and_junit_leave_suppressed_findings_out() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", &suppressed_job("line-above"));
    for format in ["gitlab", "junit"] {
        let Run { code, out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", format]));
        assert_eq!(code, 0, "{out}");
        assert!(!out.contains("gpu-limit-missing"), "{format}: {out}");
    }
}

#[test]
fn sarif_fingerprints_survive_moved_lines_and_invocations_carry_the_exit_status() {
    let d = tempfile::tempdir().unwrap();
    let sarif = |dir: &Path| -> serde_json::Value {
        let Run { out, .. } = run(gpuops_in(dir).args(["lint", "--format", "sarif"]));
        serde_json::from_str(&out).unwrap()
    };
    let fingerprint = |v: &serde_json::Value| {
        v["runs"][0]["results"][0]["partialFingerprints"]["gpuops/v1"]
            .as_str()
            .unwrap()
            .to_string()
    };
    write(d.path(), "a.yaml", BAD_JOB);
    let before = sarif(d.path());
    let inv = &before["runs"][0]["invocations"][0];
    assert_eq!(inv["exitCode"], 1);
    assert_eq!(inv["executionSuccessful"], true);
    // Two comment lines and another document above the finding: same identity, new line.
    write(
        d.path(),
        "a.yaml",
        &format!("# moved\n\n{GOOD_JOB}---\n{BAD_JOB}"),
    );
    let moved = sarif(d.path());
    let line = |v: &serde_json::Value| {
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"]
            .clone()
    };
    assert_ne!(line(&before), line(&moved));
    assert_eq!(fingerprint(&before), fingerprint(&moved));
    // Another object: another identity.
    write(
        d.path(),
        "a.yaml",
        &BAD_JOB.replace("name: bad", "name: other"),
    );
    assert_ne!(fingerprint(&before), fingerprint(&sarif(d.path())));

    write(d.path(), "a.yaml", GOOD_JOB);
    let clean = sarif(d.path());
    assert_eq!(clean["runs"][0]["invocations"][0]["exitCode"], 0);
    let Run { code, out, .. } =
        run(gpuops_in(d.path()).args(["lint", ".", "missing", "--format", "sarif"]));
    assert_eq!(code, 2);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let inv = &v["runs"][0]["invocations"][0];
    assert_eq!(inv["exitCode"], 2);
    assert_eq!(inv["executionSuccessful"], false);
    assert!(
        inv["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("missing:")
    );
}

#[test]
fn output_files_write_several_formats_from_one_run() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    let Run { code, out, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--output-file",
        "sarif=reports/ci/gpuops.sarif",
        "--output-file",
        "junit=reports/gpuops.xml",
        "--output-file",
        "gitlab=gl.json",
        "--output-file",
        "json=reports/gpuops.json",
    ]));
    assert_eq!(code, 1);
    assert!(out.contains("1 error, 0 warnings in 1 file"), "{out}");
    let read = |p: &str| fs::read_to_string(d.path().join(p)).unwrap();
    let sarif: serde_json::Value = serde_json::from_str(&read("reports/ci/gpuops.sarif")).unwrap();
    assert_eq!(
        sarif["runs"][0]["results"][0]["ruleId"],
        "gpu-limit-missing"
    );
    check_junit(&read("reports/gpuops.xml"));
    let gl: serde_json::Value = serde_json::from_str(&read("gl.json")).unwrap();
    assert_eq!(gl[0]["check_name"], "gpu-limit-missing");
    let json: serde_json::Value = serde_json::from_str(&read("reports/gpuops.json")).unwrap();
    assert_eq!(json["summary"]["errors"], 1);
    // Nothing left behind but the reports.
    let mut names: Vec<String> = fs::read_dir(d.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["ci", "gpuops.json", "gpuops.xml"]);
}

#[test]
fn bad_output_files_are_usage_errors_before_linting() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    for spec in ["xml=out.xml", "gpuops.sarif", "json="] {
        let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--output-file", spec]));
        assert_eq!(code, 2, "{spec}: {err}");
        assert!(out.is_empty(), "{spec}: {out}");
        assert!(err.contains("--output-file"), "{spec}: {err}");
    }
    assert!(!d.path().join("out.xml").exists());
    // A parent that is a file, and a target that is a directory.
    for spec in ["json=a.yaml/out.json", "json=."] {
        let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--output-file", spec]));
        assert_eq!(code, 2, "{spec}: {err}");
        assert!(out.is_empty(), "{spec}: {out}");
        assert!(err.starts_with("error: --output-file"), "{spec}: {err}");
    }
    assert_eq!(
        fs::read_to_string(d.path().join("a.yaml")).unwrap(),
        BAD_JOB
    );
}

/// A pool with a taint, a Job in another file that does not tolerate it (a cross-file finding
/// whose related location is the pool), and an unrelated finding in a third file.
fn changed_repo(d: &Path) {
    let tolerating = |job: &str| {
        job.replace(
            "      restartPolicy: Never\n",
            "      restartPolicy: Never\n      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n",
        )
    };
    write(d, "platform/pools.yaml", CONTEXT_POOLS);
    write(d, "apps/smoke.yaml", UNTOLERATING_JOB);
    write(d, "apps/bad.yaml", &tolerating(BAD_JOB));
    write(d, "apps/ok.yaml", &tolerating(GOOD_JOB));
    write(
        d,
        ".gpuops.yaml",
        // The pool is a trimmed `kubectl get` dump (no nodeClassRef): its schema is not the point.
        "rules:\n  gpu-nodepool-unbounded: off\n  checkpoint-volume-missing: off\n  training-do-not-disrupt-missing: off\n  training-consolidation-underutilized: off\n  schema-violation: off\n",
    );
}

fn changed_findings(dir: &Path, changed: &[&str]) -> (i32, Vec<(String, String)>) {
    let mut c = gpuops();
    c.current_dir(dir)
        .args(["lint", "--format", "json", "--changed"])
        .args(changed);
    let Run { code, out, err } = run(&mut c);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, findings(&v))
}

#[test]
fn changed_reports_only_findings_in_the_changed_files() {
    let d = tempfile::tempdir().unwrap();
    changed_repo(d.path());
    let (code, all) = changed_findings(d.path(), &["apps/bad.yaml", "apps/smoke.yaml"]);
    assert_eq!(code, 1);
    assert_eq!(
        all,
        [
            ("gpu-limit-missing".into(), "apps/bad.yaml".into()),
            ("gpu-toleration-missing".into(), "apps/smoke.yaml".into())
        ]
    );
    // The finding in the unchanged apps/bad.yaml is not shown, and does not fail the run.
    let (code, f) = changed_findings(d.path(), &["./apps/ok.yaml"]);
    assert_eq!((code, f), (0, vec![]));
    let (code, f) = changed_findings(d.path(), &["apps/../apps/smoke.yaml"]);
    assert_eq!(code, 1);
    assert_eq!(
        f,
        [("gpu-toleration-missing".into(), "apps/smoke.yaml".into())]
    );
    // Nothing changed, nothing to report.
    let (code, f) = changed_findings(d.path(), &[]);
    assert_eq!((code, f), (0, vec![]));
}

#[test]
fn changed_shows_a_cross_file_finding_whose_related_place_changed() {
    let d = tempfile::tempdir().unwrap();
    changed_repo(d.path());
    // Tainting the pool breaks a Job nobody touched: the commit that adds the taint hears of it.
    let (code, f) = changed_findings(d.path(), &["platform/pools.yaml"]);
    assert_eq!(code, 1);
    assert_eq!(
        f,
        [("gpu-toleration-missing".into(), "apps/smoke.yaml".into())]
    );
}

#[test]
fn changed_lints_the_whole_repository_from_the_config_root() {
    let d = tempfile::tempdir().unwrap();
    changed_repo(d.path());
    // From a subdirectory, with an absolute path: the pool one level up is still in view.
    let smoke = d.path().join("apps/smoke.yaml");
    let (code, f) = changed_findings(&d.path().join("apps"), &[smoke.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, "gpu-toleration-missing");
    let (code, f) = changed_findings(&d.path().join("apps"), &["../platform/pools.yaml"]);
    assert_eq!((code, f.len()), (1, 1));
    // A directory says what to lint, wherever it stands: without platform/, no pool, no taint.
    for args in [
        &["apps", "--changed", "apps/smoke.yaml", "apps/bad.yaml"][..],
        &["--changed", "apps/smoke.yaml", "apps", "apps/bad.yaml"][..],
    ] {
        let Run { code, out, err } = run(gpuops_in(d.path())
            .args(["lint", "--format", "json"])
            .args(args));
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            findings(&v),
            [("gpu-limit-missing".into(), "apps/bad.yaml".into())],
            "{args:?}"
        );
    }
}

// ---- The files CI systems read: pre-commit hooks, the GitHub Action and workflows ----

fn repo_yaml(rel: &str) -> serde_json::Value {
    let path = root().join(rel);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn hook(id: &str) -> serde_json::Value {
    let hooks = repo_yaml(".pre-commit-hooks.yaml");
    hooks
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == id)
        .unwrap_or_else(|| panic!("no hook {id}"))
        .clone()
}

/// The command line pre-commit runs: the entry, the user's `args`, then (unless
/// `pass_filenames: false`) the matching staged files. A `script` hook's entry is
/// hooks/gpuops-source, which builds and then runs gpuops with the same arguments: the test runs
/// the binary under test with them.
fn hook_command(id: &str, args: &[&str], files: &[&str]) -> Command {
    let h = hook(id);
    let entry: Vec<&str> = h["entry"].as_str().unwrap().split_whitespace().collect();
    match h["language"].as_str() {
        Some("python") => assert_eq!(entry[0], "gpuops", "{id}"),
        Some("script") => assert_eq!(entry[0], "hooks/gpuops-source", "{id}"),
        other => panic!("{id}: language {other:?}"),
    }
    let mut c = gpuops();
    c.args(&entry[1..]).args(args);
    if h["pass_filenames"] != false {
        c.args(files);
    }
    c
}

/// Each hook comes twice, the same command: from the release wheel (`-py`) and from source, the
/// source built with `cargo install --locked`, the wheel pinned to the crate's version.
#[test]
fn pre_commit_hooks_come_from_the_wheel_and_from_locked_source() {
    for id in ["gpuops-lint", "gpuops-render-check"] {
        let (source, wheel) = (hook(id), hook(&format!("{id}-py")));
        assert_eq!(source["language"], "script");
        assert_eq!(wheel["language"], "python");
        let rest = |h: &serde_json::Value| {
            let e = h["entry"].as_str().unwrap();
            e.split_once(' ').unwrap().1.to_string()
        };
        assert_eq!(rest(&source), rest(&wheel), "{id}");
        for k in ["files", "pass_filenames", "require_serial"] {
            assert_eq!(source[k], wheel[k], "{id}: {k}");
        }
    }
    let script = fs::read_to_string(root().join("hooks/gpuops-source")).unwrap();
    assert!(script.contains("cargo install --locked"), "{script}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(root().join("hooks/gpuops-source"))
            .unwrap()
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "hooks/gpuops-source is not executable");
    }
    // `pip install .` of the repository installs the wheel of this very version.
    let shim = fs::read_to_string(root().join("pyproject.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(shim.contains(&format!("version = \"{version}\"")), "{shim}");
    assert!(
        shim.contains(&format!("\"gpuops-k8s=={version}\"")),
        "{shim}"
    );
    let wheel = fs::read_to_string(root().join("python/pyproject.toml")).unwrap();
    assert!(wheel.contains("bindings = \"bin\""), "{wheel}");
    assert!(
        wheel.contains("manifest-path = \"../Cargo.toml\""),
        "{wheel}"
    );
}

#[test]
fn pre_commit_lint_hook_reports_only_the_staged_files() {
    let d = tempfile::tempdir().unwrap();
    changed_repo(d.path());
    let h = hook("gpuops-lint");
    let files = regex_lite_match(h["files"].as_str().unwrap());
    assert!(files("apps/bad.yaml") && files("x.yml") && !files("README.md"));
    let Run { code, out, err } = run(hook_command("gpuops-lint", &[], &["apps/bad.yaml"])
        .current_dir(d.path())
        .env_remove("CI"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("gpu-limit-missing"), "{out}");
    assert!(!out.contains("gpu-toleration-missing"), "{out}");
    assert!(err.is_empty(), "piped output has no progress line: {err:?}");
    let Run { code, out, .. } =
        run(hook_command("gpuops-lint", &[], &["apps/ok.yaml"]).current_dir(d.path()));
    assert_eq!(code, 0, "{out}");
    // A flag in the hook's `args` ends `--changed`'s list: the staged files still count as changed.
    let Run { code, out, .. } = run(hook_command(
        "gpuops-lint",
        &["--no-suppressions", "--format", "json"],
        &["apps/smoke.yaml"],
    )
    .current_dir(d.path()));
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        findings(&v),
        [("gpu-toleration-missing".into(), "apps/smoke.yaml".into())]
    );
}

/// The hooks' `files` patterns are simple suffix alternations; this reads just that form.
fn regex_lite_match(pattern: &str) -> impl Fn(&str) -> bool {
    let p = pattern.to_string();
    move |name: &str| match p.as_str() {
        r"\.ya?ml$" => name.ends_with(".yaml") || name.ends_with(".yml"),
        r"\.(ya?ml|j2)$" => {
            name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".j2")
        }
        other => panic!("update regex_lite_match for the pattern {other}"),
    }
}

#[test]
fn pre_commit_render_check_hook_passes_then_catches_drift_offline() {
    let d = tempfile::tempdir().unwrap();
    let profile = root().join("examples/profiles/minimal.yaml");
    fs::copy(&profile, d.path().join("platform.yaml")).unwrap();
    let h = hook("gpuops-render-check");
    assert_eq!(h["pass_filenames"], false);
    assert!(regex_lite_match(h["files"].as_str().unwrap())(
        "platform.yaml"
    ));
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["render", "platform.yaml", "--output", "deploy"]));
    assert_eq!(code, 0, "{out}{err}");
    let args = ["platform.yaml", "--output", "deploy"];
    let Run { code, out, err } =
        run(hook_command("gpuops-render-check", &args, &["platform.yaml"]).current_dir(d.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("up to date"), "{out}");
    // Edit a generated manifest by hand: drift.
    let some_manifest = walk_yaml(&d.path().join("deploy"))
        .into_iter()
        .next()
        .unwrap();
    let mut text = fs::read_to_string(&some_manifest).unwrap();
    text.push_str("# edited by hand\n");
    fs::write(&some_manifest, text).unwrap();
    let Run { code, out, err } =
        run(hook_command("gpuops-render-check", &args, &[]).current_dir(d.path()));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("drifted"), "{err}");
}

fn walk_yaml(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk_yaml(&p));
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every `${{ <prefix>.NAME… }}` in a text: the NAMEs.
fn expression_refs(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for expr in text.split("${{").skip(1) {
        let expr = expr.split("}}").next().unwrap_or("");
        for (i, _) in expr.match_indices(prefix) {
            let before = expr[..i].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '.' || c == '_') {
                continue;
            }
            let name: String = expr[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

#[test]
fn github_action_is_a_well_formed_composite_action() {
    let root = root();
    let text = fs::read_to_string(root.join("action.yml")).unwrap();
    let a = repo_yaml("action.yml");
    assert!(a["name"].is_string() && a["description"].is_string());
    assert_eq!(a["runs"]["using"], "composite");
    let inputs = a["inputs"].as_object().unwrap();
    for i in ["paths", "config", "fail-on", "format"] {
        assert!(inputs.contains_key(i), "input {i}");
    }
    let steps = a["runs"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    for s in steps {
        // A composite action's `run` step must name its shell.
        assert!(s["uses"].is_string() != s["run"].is_string(), "{s}");
        if s["run"].is_string() {
            assert_eq!(s["shell"], "bash", "{s}");
        }
    }
    for name in expression_refs(&text, "inputs.") {
        assert!(inputs.contains_key(&name), "unknown input {name}");
    }
    for name in expression_refs(&text, "steps.") {
        assert!(ids.contains(&name.as_str()), "unknown step {name}");
    }
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("github/codeql-action/upload-sarif@")),
        "{uses:?}"
    );
    for u in &uses {
        assert_pinned(u);
    }
    // The upload depends on the lint's decision (exit 0 or 1, not a fork); the build is saved
    // to the cache whatever the lint does.
    let step = |uses: &str| {
        steps
            .iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(uses)))
            .unwrap_or_else(|| panic!("no step uses {uses}"))
    };
    assert_eq!(
        step("github/codeql-action/upload-sarif@")["if"],
        "steps.lint.outputs.upload == 'true'"
    );
    let save = step("actions/cache/save@")["if"].as_str().unwrap();
    assert!(save.starts_with("always()"), "{save}");
    // The scripts the steps run exist, and the formats and flags they pass too.
    let mut scripts = String::new();
    for s in steps.iter().filter_map(|s| s["run"].as_str()) {
        if let Some(script) = s.strip_prefix("bash \"$ACTION_PATH/") {
            let rel = script.trim_end().trim_end_matches('"');
            scripts.push_str(&fs::read_to_string(root.join(rel)).unwrap());
        }
    }
    assert!(scripts.contains("--output-file \"sarif=$sarif\""));
    assert!(scripts.contains("cargo install --locked"));
    assert!(scripts.contains("SHA256SUMS"));
    let format = inputs["format"]["default"].as_str().unwrap();
    assert!(gpuops::report::Format::parse(format).is_some(), "{format}");
}

/// An action other than the repository's own is pinned by a full commit SHA.
fn assert_pinned(uses: &str) {
    if uses.starts_with("./") {
        return;
    }
    let sha = uses.split_once('@').map_or("", |(_, r)| r);
    assert!(
        sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
        "not pinned by SHA: {uses}"
    );
}

#[test]
fn github_workflows_are_well_formed_and_the_example_uses_the_action() {
    let root = root();
    let action = repo_yaml("action.yml");
    let inputs = action["inputs"].as_object().unwrap();
    let mut used_locally = false;
    for e in fs::read_dir(root.join(".github/workflows")).unwrap() {
        let path = e.unwrap().path();
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let w = repo_yaml(&rel);
        assert!(w["name"].is_string() && w["on"].is_object(), "{rel}");
        // Every workflow says what its token may do.
        assert!(w["permissions"].is_object(), "{rel}: no permissions");
        for (job, j) in w["jobs"].as_object().unwrap() {
            assert!(j["runs-on"].is_string(), "{rel}: {job}");
            for s in j["steps"].as_array().unwrap() {
                assert!(s["uses"].is_string() != s["run"].is_string(), "{rel}: {s}");
                if let Some(u) = s["uses"].as_str() {
                    assert_pinned(u);
                }
                if s["uses"] != "./" {
                    continue;
                }
                used_locally = true;
                for (k, v) in s["with"].as_object().unwrap() {
                    assert!(inputs.contains_key(k), "{rel}: the action has no input {k}");
                    // One path per line; only a step that expects to fail may name a missing one.
                    if k == "paths" {
                        for p in v.as_str().unwrap().lines().filter(|l| !l.trim().is_empty()) {
                            assert!(
                                root.join(p).exists() || s["continue-on-error"] == true,
                                "{rel}: {p}"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(used_locally, "no workflow runs the action with `uses: ./`");
}

#[test]
fn version_completions_and_man_page() {
    let Run { code, out, .. } = run(gpuops().arg("--version"));
    assert_eq!(code, 0);
    let rules = gpuops::rules::all().len();
    assert_eq!(
        out.trim(),
        format!("gpuops {} ({rules} rules)", env!("CARGO_PKG_VERSION"))
    );
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef gpuops"),
        ("fish", "complete -c gpuops"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let Run { code, out, .. } = run(gpuops().args(["completions", shell]));
        assert_eq!(code, 0, "{shell}");
        assert!(out.contains(marker), "{shell}: {out}");
        assert!(out.contains("--output-file"), "{shell}");
        // `gpuops rule <TAB>` and `--rule <TAB>` offer the rules and the bundled policies
        // (clap_complete writes values into the scripts of these three).
        if ["bash", "zsh", "fish"].contains(&shell) {
            for name in ["gpu-toleration-missing", "policy/gpu-quota-missing"] {
                assert!(out.contains(name), "{shell}: {name}");
            }
        }
    }
    // Offering names does not restrict them: a user policy's name is still taken.
    let Run { code, err, .. } = run(gpuops().args(["rule", "policy/not-a-policy"]));
    assert_eq!(code, 2);
    assert!(err.contains("no rule named `policy/not-a-policy`"), "{err}");
    let Run { code, .. } = run(gpuops().args(["completions", "tcsh"]));
    assert_eq!(code, 2);
    let Run { code, out, .. } = run(gpuops().arg("man"));
    assert_eq!(code, 0);
    assert!(out.contains(".TH gpuops 1"), "{out}");
    assert!(out.contains("completions"), "{out}");
    let d = tempfile::tempdir().unwrap();
    let Run { code, out, err } = run(gpuops().args(["man", "--output"]).arg(d.path().join("man")));
    assert_eq!(code, 0, "{out}{err}");
    for page in ["gpuops.1", "gpuops-lint.1", "gpuops-render.1"] {
        let text = fs::read_to_string(d.path().join("man").join(page)).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let Run { code, out, .. } = run(gpuops().args(["rules", "--markdown"]));
    assert_eq!(code, 0);
    assert_eq!(out, gpuops::report::rules_markdown());
}

// ---------------------------------------------------------------------------------------------
// Policies

#[test]
fn bundled_policy_enabled_in_config_reports_in_every_format_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "job.yaml", GOOD_JOB);
    write(
        dir.path(),
        ".gpuops.yaml",
        "rules:\n  policy/team-label-missing: warning\n  policy/container-gpus-above-max: error\npolicy-data:\n  max_gpus_per_container: 0\n",
    );
    let Run { code, out, .. } = run(gpuops()
        .arg("lint")
        .arg(dir.path())
        .args(["--format", "json"]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"policy/team-label-missing\""), "{out}");
    assert!(out.contains("\"policy/container-gpus-above-max\""), "{out}");
    let Run { out: sarif, .. } = run(gpuops()
        .arg("lint")
        .arg(dir.path())
        .args(["--format", "sarif"]));
    assert!(sarif.contains("policy/container-gpus-above-max"), "{sarif}");
    // Off in the config again: no policy runs; `--fail-on` still applies to the rest.
    write(
        dir.path(),
        ".gpuops.yaml",
        "rules:\n  policy/team-label-missing: off\n",
    );
    let Run { code, out, .. } = run(gpuops().arg("lint").arg(dir.path()));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn user_policy_dir_runs_by_default_and_is_suppressible_by_annotation() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "policies/kind.rego",
        "package org.kinds\nimport rego.v1\nmetadata := {\"id\": \"no-jobs\", \"summary\": \"no Jobs\"}\ndeny contains {\"msg\": \"a Job\", \"object\": o} if {\n\tsome o in input.by_kind.Job\n}\n",
    );
    write(dir.path(), "repo/job.yaml", GOOD_JOB);
    let Run { code, out, .. } = run(gpuops()
        .arg("lint")
        .arg(dir.path().join("repo"))
        .arg("--policy")
        .arg(dir.path().join("policies")));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("policy/no-jobs"), "{out}");
    let suppressed = GOOD_JOB.replace(
        "  name: ok\n",
        "  name: ok\n  annotations:\n    ignore.gpuops.dev/policy.no-jobs: \"batch is allowed here\"\n",
    );
    write(dir.path(), "repo/job.yaml", &suppressed);
    let Run { code, out, .. } = run(gpuops()
        .arg("lint")
        .arg(dir.path().join("repo"))
        .arg("--policy")
        .arg(dir.path().join("policies")));
    assert_eq!(code, 0, "{out}");
}

#[test]
fn policy_runtime_error_is_in_json_and_sarif_and_exits_two() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "p/broken.rego",
        "package org.broken\nimport rego.v1\nmetadata := {\"id\": \"broken\", \"summary\": \"s\"}\ndeny contains {\"msg\": m, \"object\": 0} if {\n\tsome o in input.objects\n\tm := sprintf(\"%v\", [count(o.kind) / 0])\n}\n",
    );
    write(dir.path(), "job.yaml", GOOD_JOB);
    let sarif = dir.path().join("out.sarif");
    let Run { code, out, err } = run(gpuops()
        .arg("lint")
        .arg(dir.path().join("job.yaml"))
        .arg("--policy")
        .arg(dir.path().join("p"))
        .args(["--format", "json", "--output-file"])
        .arg(format!("sarif={}", sarif.display())));
    assert_eq!(code, 2, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0].as_str().unwrap();
    assert!(
        e.contains("broken.rego:6:") && e.contains("policy/broken") && e.contains("divide by zero"),
        "{e}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let inv = &sarif["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert!(
        inv["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("policy/broken"),
        "{inv}"
    );
}

#[test]
fn policy_syntax_error_exits_two_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "p/bad.rego",
        "package org.bad\n\ndeny contains m if {\n  m := 1 +\n}\n",
    );
    write(dir.path(), "job.yaml", GOOD_JOB);
    let Run { code, err, .. } = run(gpuops()
        .arg("lint")
        .arg(dir.path().join("job.yaml"))
        .arg("--policy")
        .arg(dir.path().join("p")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("p/bad.rego:4:5: "), "{err}");
}

#[test]
fn unknown_policy_in_config_is_a_located_config_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "job.yaml", GOOD_JOB);
    write(
        dir.path(),
        ".gpuops.yaml",
        "rules:\n  policy/team-label-mising: error\n",
    );
    let Run { code, err, .. } = run(gpuops().arg("lint").arg(dir.path()));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown policy `policy/team-label-mising`"),
        "{err}"
    );
    assert!(
        err.contains("did you mean `policy/team-label-missing`"),
        "{err}"
    );
    assert!(err.contains(":2:3"), "{err}");
}

#[test]
fn policy_test_reports_like_opa_and_exits_one_on_failure() {
    let Run { code, out, .. } = run(gpuops().args(["policy", "test", "examples/policies"]));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("data.org.training_queue_test.test_inference_is_not_judged: PASS"),
        "{out}"
    );
    assert!(
        out.lines().last().is_some_and(|l| l.starts_with("PASS: ")),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t/x_test.rego",
        "package org.x_test\nimport rego.v1\ntest_fails if { 1 == 2 }\ntest_passes if { 1 == 1 }\n",
    );
    let Run { code, out, .. } = run(gpuops().args(["policy", "test"]).arg(dir.path().join("t")));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("data.org.x_test.test_fails: FAIL"), "{out}");
    assert!(out.contains("FAIL: 1/"), "{out}");
}

#[test]
fn rule_explains_policies() {
    let Run { code, out, .. } = run(gpuops().args(["rule", "policy/gpu-quota-missing"]));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("policy/gpu-quota-missing (policy, error by default; off until enabled"),
        "{out}"
    );
    assert!(
        out.contains("## Why is this bad?")
            && out.contains("Source: policies/gpu-quota-missing.rego"),
        "{out}"
    );
    let Run { code, out, .. } = run(gpuops().args(["rules", "--policy", "examples/policies"]));
    assert_eq!(code, 0);
    assert!(out.contains("policy/training-queue-missing"), "{out}");
}

#[test]
fn cost_json_prices_a_pool_at_its_limits() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(
        dir.path(),
        "pool.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}\n  limits:\n    nvidia.com/gpu: 16\n",
    );
    write(dir.path(), ".gpuops.yaml", "cost: {spot-discount: 0.5}\n");
    let Run { code, out, err } = run(gpuops()
        .arg("cost")
        .arg("--format")
        .arg("json")
        .arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let pool = &v["nodepools"][0];
    assert_eq!(pool["name"], "train");
    assert_eq!(pool["worst"]["nodes"], 2);
    // 2 × $21.957642/h (catalog), spot at half of it.
    let od = pool["worst"]["on_demand"].as_f64().expect("number");
    assert!((od - 43.915284).abs() < 1e-9, "{od}");
    let spot = pool["worst"]["spot"].as_f64().expect("number");
    assert!((spot - 21.957642).abs() < 1e-9, "{spot}");
    // The pool may launch on-demand nodes: the total counts it there, nothing as spot-only.
    assert!((v["total"]["on_demand"].as_f64().unwrap() - od).abs() < 1e-9);
    assert_eq!(v["total"]["spot"].as_f64(), Some(0.0));
}

// ---------------------------------------------------------------------------------------------
// User CRDs

const GPU_QUOTA_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gpuquotas.platform.example.com
spec:
  group: platform.example.com
  names: {kind: GpuQuota, plural: gpuquotas}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [gpus]
              properties:
                gpus: {type: integer, minimum: 0}
                tier: {type: string, enum: [gold, silver]}
";

#[test]
fn objects_of_a_user_crd_are_validated_with_crd() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "crds/gpuquota.yaml", GPU_QUOTA_CRD);
    write(
        d.path(),
        "apps/quota.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  gpus: eight\n  tier: bronze\n",
    );
    let lint = |extra: &[&str]| {
        let Run { code, out, err } = run(gpuops_in(d.path())
            .args([
                "lint",
                "apps",
                "--rule",
                "schema-violation",
                "--format",
                "json",
            ])
            .args(extra));
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
        let found: Vec<(u64, u64)> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["line"].as_u64().unwrap(), x["column"].as_u64().unwrap()))
            .collect();
        (code, found)
    };
    // Without the CRD the kind is unknown: nothing to check.
    assert_eq!(lint(&[]), (0, vec![]));
    // With it, both wrong values are found at their nodes: `gpus` (line 5) and `tier` (line 6).
    let (code, found) = lint(&["--crd", "crds"]);
    assert_eq!(code, 1);
    assert_eq!(found, vec![(5, 9), (6, 9)]);
    // The same through the config.
    write(d.path(), ".gpuops.yaml", "crds: [crds/gpuquota.yaml]\n");
    let (code, found) = lint(&[]);
    assert_eq!(code, 1);
    assert_eq!(found, vec![(5, 9), (6, 9)]);
}

#[test]
fn a_crd_copy_in_test_data_does_not_outvote_the_repository_copy() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "crds/gpuquota.yaml", GPU_QUOTA_CRD);
    // An older, looser copy kept for a test: `gpus` is any string there.
    write(
        d.path(),
        "test/fixtures/gpuquota.yaml",
        &GPU_QUOTA_CRD.replace("gpus: {type: integer, minimum: 0}", "gpus: {type: string}"),
    );
    write(
        d.path(),
        "apps/quota.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  gpus: eight\n",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("quota.yaml:5:9"), "{out}");
    // Two copies nothing tells apart: the one that rejects the least judges.
    fs::rename(
        d.path().join("test/fixtures/gpuquota.yaml"),
        d.path().join("crds/old.yaml"),
    )
    .unwrap();
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation"]));
    assert_eq!(code, 0, "{out}{err}");
    // A stale copy without a field the object uses (`tier`) loses to the copy that knows it,
    // though the stale one rejects no more of the object: the object was written for the newer.
    fs::remove_file(d.path().join("crds/old.yaml")).unwrap();
    write(
        d.path(),
        "config/stale/gpuquota.yaml",
        &GPU_QUOTA_CRD.replace(
            "                tier: {type: string, enum: [gold, silver]}\n",
            "",
        ),
    );
    write(
        d.path(),
        "apps/quota.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  gpus: -1\n  tier: gold\n",
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation"]));
    assert!(
        out.contains("quota.yaml:5:9") && !out.contains("`tier`"),
        "{out}{err}"
    );
}

#[test]
fn a_vendored_crd_copy_judges_only_its_own_tree() {
    let d = tempfile::tempdir().unwrap();
    // Another project's operator as it was copied, at an older release than the one installed.
    write(
        d.path(),
        "upstream/operator/config/crd/gpuquota.yaml",
        GPU_QUOTA_CRD,
    );
    let quota = "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  gpus: eight\n";
    write(d.path(), "apps/quota.yaml", quota);
    write(
        d.path(),
        "upstream/operator/config/samples/quota.yaml",
        quota,
    );
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    let paths: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x["path"].as_str())
        .collect();
    assert_eq!(
        paths,
        ["upstream/operator/config/samples/quota.yaml"],
        "{out}"
    );
}

#[test]
fn a_v1beta1_crd_copy_that_keeps_unknown_fields_is_not_outvoted() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "clusters/a/gpuquota.yaml", GPU_QUOTA_CRD);
    write(
        d.path(),
        "clusters/b/quota.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  gpus: 1\n  owner: ml\n",
    );
    let lint = |d: &Path| run(gpuops_in(d).args(["lint", "--rule", "schema-violation"]));
    let Run { code, out, err } = lint(d.path());
    assert!(code == 1 && out.contains("`owner`"), "{out}{err}");
    // The other cluster's copy: `apiextensions.k8s.io/v1beta1` without a schema keeps every
    // field, and nothing says which copy the cluster serves.
    let legacy = "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: gpuquotas.platform.example.com\nspec:\n  group: platform.example.com\n  names: {kind: GpuQuota, plural: gpuquotas}\n  scope: Namespaced\n  version: v1\n";
    write(d.path(), "clusters/b/gpuquota.yaml", legacy);
    let Run { code, out, err } = lint(d.path());
    assert_eq!(code, 0, "{out}{err}");
    // With a schema per version, v1beta1 still keeps unknown fields unless told not to.
    let with_schema = GPU_QUOTA_CRD.replace(
        "apiextensions.k8s.io/v1\n",
        "apiextensions.k8s.io/v1beta1\n",
    );
    write(d.path(), "clusters/b/gpuquota.yaml", &with_schema);
    let Run { code, out, err } = lint(d.path());
    assert_eq!(code, 0, "{out}{err}");
    write(
        d.path(),
        "clusters/b/gpuquota.yaml",
        &with_schema.replace(
            "  scope: Namespaced\n",
            "  scope: Namespaced\n  preserveUnknownFields: false\n",
        ),
    );
    let Run { code, out, err } = lint(d.path());
    assert!(code == 1 && out.contains("`owner`"), "{out}{err}");
}

#[test]
fn properties_of_a_crds_anyof_branch_constrain_values_and_close_nothing() {
    let d = tempfile::tempdir().unwrap();
    let spec = "              type: object
              properties:
                mode: {type: string}
                account: {type: string}
                secret: {type: string}
              anyOf:
                - properties:
                    mode: {enum: [cluster]}
                  oneOf:
                    - required: [account]
                    - required: [secret]
                - properties:
                    mode: {enum: [namespaced]}
";
    write(
        d.path(),
        "crds/connector.yaml",
        &platform_crd("Connector", "Cluster", spec),
    );
    let object = |spec: &str| {
        format!(
            "apiVersion: platform.example.com/v1\nkind: Connector\nmetadata: {{name: c}}\nspec:\n{spec}"
        )
    };
    write(
        d.path(),
        "apps/connector.yaml",
        &object("  mode: cluster\n  account: sa@example.com\n"),
    );
    let lint = |d: &Path| run(gpuops_in(d).args(["lint", "--rule", "schema-violation"]));
    let Run { code, out, err } = lint(d.path());
    assert_eq!(code, 0, "{out}{err}");
    // What the schema around the branches does not list is still unknown; a value no branch
    // takes is still refused.
    write(
        d.path(),
        "apps/connector.yaml",
        &object("  mode: cluster\n  account: sa@example.com\n  acount: x\n"),
    );
    let Run { code, out, err } = lint(d.path());
    assert!(code == 1 && out.contains("`acount`"), "{out}{err}");
    write(d.path(), "apps/connector.yaml", &object("  mode: global\n"));
    let Run { code, out, err } = lint(d.path());
    assert_eq!(code, 1, "{out}{err}");
}

#[test]
fn a_crds_metadata_schema_constrains_the_name_only() {
    // The schema describes `metadata.name` alone: the namespace and labels are still kept.
    let d = tempfile::tempdir().unwrap();
    let spec = "              type: object
              x-kubernetes-preserve-unknown-fields: true
            metadata:
              type: object
              properties:
                name: {type: string, maxLength: 10}
";
    write(
        d.path(),
        "crds/agent.yaml",
        &platform_crd("Agent", "Namespaced", spec),
    );
    let object = |name: &str| {
        format!(
            "apiVersion: platform.example.com/v1\nkind: Agent\nmetadata:\n  name: {name}\n  namespace: ml\n  labels: {{team: a}}\nspec: {{}}\n"
        )
    };
    write(d.path(), "apps/agent.yaml", &object("agent"));
    let lint = |d: &Path| run(gpuops_in(d).args(["lint", "--rule", "schema-violation"]));
    let Run { code, out, err } = lint(d.path());
    assert_eq!(code, 0, "{out}{err}");
    // What it says of the name still holds.
    write(d.path(), "apps/agent.yaml", &object("a-much-longer-name"));
    let Run { code, out, err } = lint(d.path());
    assert!(code == 1 && out.contains("name"), "{out}{err}");
}

/// A one-version (`v1`) CRD of `platform.example.com` whose schema is an object with a `spec`
/// (`spec` is the YAML of that property's schema, indented for its place).
fn platform_crd(kind: &str, scope: &str, spec: &str) -> String {
    let plural = format!("{}s", kind.to_lowercase());
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.platform.example.com
spec:
  group: platform.example.com
  names: {{kind: {kind}, plural: {plural}}}
  scope: {scope}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
{spec}"
    )
}

const GPU_QUOTA_SPEC: &str = "              type: object
              x-kubernetes-validations:
                - rule: self.minGpus <= self.maxGpus
                  message: minGpus must not exceed maxGpus
                  fieldPath: .minGpus
                - rule: self.maxGpus >= oldSelf.maxGpus
                  message: quotas only grow
              properties:
                minGpus: {type: integer}
                maxGpus: {type: integer}
                docs:
                  type: string
                  x-kubernetes-validations:
                    - rule: isURL(self)
";

#[test]
fn cel_rules_of_a_user_crd_are_checked_and_unsupported_ones_noted() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "crds/gpuquota.yaml",
        &platform_crd("GpuQuota", "Namespaced", GPU_QUOTA_SPEC),
    );
    write(
        d.path(),
        "apps/quota.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuQuota\nmetadata: {name: ml, namespace: ml}\nspec:\n  minGpus: 16\n  maxGpus: 8\n  docs: see the wiki\n",
    );
    let lint = |extra: &[&str]| {
        run(gpuops_in(d.path())
            .args(["lint", "apps", "--rule", "schema-violation"])
            .args(extra))
    };
    // Without the CRD nothing is known about the kind, and no CEL is run.
    let Run { code, out, err } = lint(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("CEL"), "{err}");
    // With it, the failing rule is reported at its fieldPath (`minGpus`, line 5), once; the
    // transition rule is not run and the rule calling an unsupported function is only counted.
    let Run { code, out, err } = lint(&["--crd", "crds"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "`spec.minGpus`: minGpus must not exceed maxGpus (a CEL rule of the GpuQuota v1 CRD)"
        ),
        "{out}"
    );
    assert!(out.contains("quota.yaml:5:12"), "{out}");
    assert!(!out.contains("quotas only grow"), "{out}");
    assert_eq!(out.matches("× ").count(), 1, "{out}");
    assert!(
        err.contains(
            "note: 1 CEL rule (x-kubernetes-validations) of user CRDs not checked: 1 calls a function not supported here (`isURL`)"
        ),
        "{err}"
    );
    // Machine formats carry the finding and no note.
    let Run { code, out, err } = lint(&["--crd", "crds", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}"));
    let found = v["diagnostics"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{out}");
    assert_eq!(
        (found[0]["line"].as_u64(), found[0]["column"].as_u64()),
        (Some(5), Some(12))
    );
    assert!(!err.contains("note:"), "{err}");
}

const GPU_POOL_SPEC: &str = "              type: object
              x-kubernetes-validations:
                - {rule: 'int(self.minGpus) >= 0', message: minGpus is a count}
                - {rule: '!has(self.shared) || self.slices.size() > 0', message: shared pools have slices}
              properties:
                minGpus: {type: string}
                shared: {type: boolean}
                slices: {type: array, items: {type: string}}
                models: {type: array, x-kubernetes-list-type: set, items: {type: string}}
                ports:
                  type: array
                  x-kubernetes-list-type: map
                  x-kubernetes-list-map-keys: [port, protocol]
                  items:
                    type: object
                    required: [port]
                    properties:
                      port: {type: integer}
                      protocol: {type: string, default: TCP}
";

/// A user CRD's CEL rule that fails to evaluate on the object's data (`int()` of a value that is
/// no integer, a field it leaves out) rejects the object, as at the API server; so does an item
/// repeated in a list the CRD declares a set or a map (a defaulted key counts).
#[test]
fn a_user_crd_rejects_rules_that_fail_on_the_data_and_repeated_list_items() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "crds/gpupool.yaml",
        &platform_crd("GpuPool", "Cluster", GPU_POOL_SPEC),
    );
    write(
        d.path(),
        "apps/pool.yaml",
        "apiVersion: platform.example.com/v1\nkind: GpuPool\nmetadata: {name: a100}\nspec:\n  minGpus: eight\n  shared: true\n  models: [llama, llama]\n  ports:\n    - {port: 80}\n    - {port: 80, protocol: TCP}\n    - {port: 80, protocol: UDP}\n",
    );
    let Run { code, out, err } = run(gpuops_in(d.path()).args([
        "lint",
        "apps",
        "--rule",
        "schema-violation",
        "--crd",
        "crds",
    ]));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches("× ").count(), 4, "{out}");
    for want in [
        "cannot be evaluated on this object (int() conversion failed",
        "cannot be evaluated on this object (no such key: slices)",
        "`spec.models[1]`: Duplicate value: \"llama\" is already in this list, which the GpuPool v1 CRD declares a set",
        "`spec.ports[1]`: Duplicate value: 80, \"TCP\" is already in this list, which the GpuPool v1 CRD declares a map keyed by `port`, `protocol`",
    ] {
        assert!(out.replace("\n  │ ", " ").contains(want), "{want}\n{out}");
    }
    // Both rules are reported, so none is counted as skipped.
    assert!(!err.contains("CEL rule"), "{err}");
}

/// The real Karpenter NodePool CRD given with `--crd` replaces the built-in NodePool knowledge:
/// its schema and CEL rules find the same classes of problems in the schema-violation fixture,
/// and nothing is reported twice.
#[test]
fn nodepool_crd_cel_rules_find_what_the_builtin_checks_find() {
    let crd = root().join("../shared/reference/crds/karpenter.sh_nodepools.yaml");
    if !crd.is_file() {
        eprintln!("note: {} is absent; skipped", crd.display());
        return;
    }
    let fixture = root().join("testdata/rules/schema-violation/fail.yaml");
    let nodepool_findings = |extra: &[&std::ffi::OsStr]| -> Vec<(u64, String)> {
        let Run { out, err, .. } = run(gpuops()
            .arg("lint")
            .arg(&fixture)
            .args(["--rule", "schema-violation", "--format", "json"])
            .args(extra));
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["object"]["kind"] == "NodePool")
            .map(|d| {
                (
                    d["line"].as_u64().unwrap(),
                    d["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let builtin = nodepool_findings(&[]);
    let with_crd = nodepool_findings(&["--crd".as_ref(), crd.as_os_str()]);
    // (built-in wording, CRD wording) for each class of problem in the fixture's NodePool.
    let classes = [
        // CEL rules of the CRD
        (
            "uses `Gt` with 2 values",
            "'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
        ),
        (
            "uses `In` without values",
            "requirements with operator 'In' must have a value defined",
        ),
        (
            "template label `karpenter.sh/team` is restricted",
            "label domain \"karpenter.sh\" is restricted",
        ),
        (
            "requirement key `karpenter.k8s.aws/instance-pods` is restricted",
            "label domain \"karpenter.k8s.aws\" is restricted",
        ),
        (
            "sets only one of `schedule` and `duration`",
            "'schedule' must be set with 'duration'",
        ),
        // its OpenAPI schema
        (
            "`spec.consolidationPolicy` is not a NodePool v1 field",
            "`consolidationPolicy` in `spec` is not in the NodePool v1 CRD schema",
        ),
        (
            "`spec.weight` is 0",
            "`spec.weight`: 0 is less than the minimum of 1",
        ),
        (
            "`spec.template.spec.expireAfter` is `30d`",
            "`spec.template.spec.expireAfter`: \"30d\" does not match",
        ),
        (
            "`spec.template.spec.taints[0].effect` is `NoSchedul`",
            "`spec.template.spec.taints[0].effect`: \"NoSchedul\" is not one of",
        ),
        (
            "`spec.disruption.consolidateAfter` is required",
            "`spec.disruption`: `consolidateAfter` is required",
        ),
        (
            "`spec.disruption.consolidationPolicy` is `WhenIdle`",
            "\"WhenIdle\" is not one of",
        ),
        (
            "`spec.template.spec.taints[0].operator` is not a NodePool v1 field",
            "`operator` in `spec.template.spec.taints[0]` is not in the NodePool v1 CRD schema",
        ),
        (
            "`spec.gpuBudget` is not a NodePool v1 field",
            "`gpuBudget` in `spec` is not in the NodePool v1 CRD schema",
        ),
    ];
    let has = |found: &[(u64, String)], text: &str| {
        found.iter().filter(|(_, m)| m.contains(text)).count()
    };
    for (ours, theirs) in classes {
        assert_eq!(has(&builtin, ours), 1, "built-in: {ours}\n{builtin:#?}");
        assert_eq!(has(&with_crd, theirs), 1, "CRD: {theirs}\n{with_crd:#?}");
    }
    // Each problem once: the built-in checks are off for the NodePool the CRD covers.
    assert_eq!(builtin.len(), classes.len(), "{builtin:#?}");
    assert_eq!(with_crd.len(), classes.len(), "{with_crd:#?}");
    assert!(
        with_crd.iter().all(|(_, m)| m.contains("CRD")),
        "{with_crd:#?}"
    );
}

/// A CRD for a workload kind also describes its pod templates: the built-in pod-spec checks
/// step aside, so a mistake both know is reported once, by the CRD.
#[test]
fn a_user_crd_of_a_workload_kind_replaces_the_builtin_pod_spec_checks() {
    let d = tempfile::tempdir().unwrap();
    let pod_spec = "type: object\n                                    x-kubernetes-preserve-unknown-fields: true\n                                    properties:\n                                      tolerations: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}";
    write(
        d.path(),
        "crds/jobset.yaml",
        &format!(
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: jobsets.jobset.x-k8s.io
spec:
  group: jobset.x-k8s.io
  names: {{kind: JobSet, plural: jobsets}}
  scope: Namespaced
  versions:
    - name: v1alpha2
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                replicatedJobs:
                  type: array
                  items:
                    type: object
                    properties:
                      name: {{type: string}}
                      template:
                        type: object
                        properties:
                          spec:
                            type: object
                            x-kubernetes-preserve-unknown-fields: true
                            properties:
                              template:
                                type: object
                                properties:
                                  spec:
                                    {pod_spec}
"
        ),
    );
    write(
        d.path(),
        "apps/train.yaml",
        "apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: train, namespace: ml}
spec:
  replicatedJobs:
    - name: workers
      template:
        spec:
          template:
            spec:
              tolerations: 7
              containers: [{name: t, image: t:1}]
",
    );
    let found = |extra: &[&str]| -> Vec<String> {
        let Run { out, err, .. } = run(gpuops_in(d.path())
            .args([
                "lint",
                "apps",
                "--rule",
                "schema-violation",
                "--format",
                "json",
            ])
            .args(extra));
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{}: {}", d["line"], d["message"].as_str().unwrap()))
            .collect()
    };
    let builtin = found(&[]);
    assert_eq!(builtin.len(), 1, "{builtin:#?}");
    assert!(
        builtin[0].starts_with("11: ") && builtin[0].contains("must be a list"),
        "{builtin:#?}"
    );
    let with_crd = found(&["--crd", "crds"]);
    assert_eq!(with_crd.len(), 1, "{with_crd:#?}");
    assert!(
        with_crd[0].starts_with("11: ") && with_crd[0].contains("JobSet v1alpha2 CRD schema"),
        "{with_crd:#?}"
    );
}

/// All the upstream Karpenter and Kueue CRDs at once: for every kind of the schema-violation
/// fixture they cover, as many findings as the built-in checks give (each problem once).
#[test]
fn upstream_crds_find_as_much_as_the_builtin_checks_per_kind() {
    let crds = root().join("../shared/reference/crds");
    if !crds.is_dir() {
        eprintln!("note: {} is absent; skipped", crds.display());
        return;
    }
    let fixture = root().join("testdata/rules/schema-violation/fail.yaml");
    let per_kind = |extra: &[&std::ffi::OsStr]| -> std::collections::BTreeMap<String, usize> {
        let Run { out, err, .. } = run(gpuops()
            .arg("lint")
            .arg(&fixture)
            .args(["--rule", "schema-violation", "--format", "json"])
            .args(extra));
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
        let mut m = std::collections::BTreeMap::new();
        for d in v["diagnostics"].as_array().unwrap() {
            *m.entry(d["object"]["kind"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        m
    };
    let builtin = per_kind(&[]);
    let with_crds = per_kind(&["--crd".as_ref(), crds.as_os_str()]);
    for kind in ["NodePool", "EC2NodeClass", "ClusterQueue", "ResourceFlavor"] {
        assert!(builtin.get(kind).is_some_and(|n| *n > 0), "{builtin:?}");
        assert_eq!(
            builtin.get(kind),
            with_crds.get(kind),
            "{kind}: {builtin:?} {with_crds:?}"
        );
    }
    // Kinds without an upstream CRD here keep the built-in checks.
    for kind in ["PriorityClass", "Job"] {
        assert_eq!(builtin.get(kind), with_crds.get(kind), "{kind}");
    }
    // The passing fixture keeps every schema and CEL rule of the upstream CRDs, and no rule of
    // theirs is skipped.
    let pass = root().join("testdata/rules/schema-violation/pass.yaml");
    let Run { code, out, err } = run(gpuops()
        .arg("lint")
        .arg(&pass)
        .args(["--rule", "schema-violation", "--crd"])
        .arg(&crds));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("CEL"), "{err}");
}

#[test]
fn an_object_defined_twice_in_two_files_is_reported_only_for_a_complete_cluster() {
    let d = tempfile::tempdir().unwrap();
    let flavor = |family: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: gpu\nspec:\n  nodeLabels:\n    karpenter.k8s.aws/instance-family: {family}\n"
        )
    };
    write(d.path(), "platform/flavor.yaml", &flavor("p5"));
    write(d.path(), "teams/ml/flavor.yaml", &flavor("p4d"));
    let lint = || run(gpuops_in(d.path()).args(["lint", "--rule", "object-defined-twice"]));
    // Two files may go to two clusters: nothing is certain.
    let Run { code, out, err } = lint();
    assert_eq!(code, 0, "{out}{err}");
    write(d.path(), ".gpuops.yaml", "cluster: {complete: true}\n");
    let Run { code, out, err } = lint();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("teams/ml/flavor.yaml:4:9"), "{out}");
    assert!(out.contains("platform/flavor.yaml:4:9"), "{out}");
}

#[test]
fn sibling_overlays_applied_by_hand_to_one_namespace_are_alternatives() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "kafka/base/kustomization.yaml",
        "resources: [ui.yaml]\n",
    );
    write(
        d.path(),
        "kafka/base/ui.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: ui\nspec:\n  ports: [{port: 80}]\n",
    );
    for (overlay, mode) in [("kraft", "kraft"), ("zookeeper", "zk")] {
        write(
            d.path(),
            &format!("kafka/overlays/{overlay}/kustomization.yaml"),
            "namespace: kafka\nresources: [../../base, config.yaml]\n",
        );
        write(
            d.path(),
            &format!("kafka/overlays/{overlay}/config.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kafka-config\ndata:\n  mode: {mode}\n"
            ),
        );
    }
    let app = |overlay: &str, ns: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: kafka-{overlay}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://example.com/gitops.git\n    path: kafka/overlays/{overlay}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {ns}\n"
        )
    };
    write(d.path(), "argocd/kraft.yaml", &app("kraft", "kafka"));
    write(
        d.path(),
        "argocd/zookeeper.yaml",
        &app("zookeeper", "kafka"),
    );
    let lint =
        || run(gpuops_in(d.path()).args(["lint", "--no-config", "--rule", "object-defined-twice"]));
    // Each Application is applied by hand, to the same namespace: one or the other.
    let Run { code, out, err } = lint();
    assert_eq!(code, 0, "{out}{err}");
    // Meant to run side by side (another namespace), the overlays' own namespace makes both
    // define kafka/kafka-config.
    write(
        d.path(),
        "argocd/zookeeper.yaml",
        &app("zookeeper", "kafka-zk"),
    );
    let Run { out, err, .. } = lint();
    assert!(
        out.contains("kafka/kafka-config is defined twice"),
        "{out}{err}"
    );
    // Deployed together by an app of apps: both run.
    write(
        d.path(),
        "argocd/zookeeper.yaml",
        &app("zookeeper", "kafka"),
    );
    write(
        d.path(),
        "root.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\nspec:\n  source:\n    repoURL: https://example.com/gitops.git\n    path: argocd\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n",
    );
    let Run { out, err, .. } = lint();
    assert!(
        out.contains("kafka/kafka-config is defined twice"),
        "{out}{err}"
    );
}

#[test]
fn tracked_files_are_linted_even_when_gitignore_lists_them() {
    let d = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(["-c", "core.hooksPath=/dev/null"])
            .args(args)
            .current_dir(d.path())
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    write(d.path(), ".gitignore", "generated/\nscratch/\n");
    write(d.path(), "generated/bad.yaml", BAD_JOB);
    write(d.path(), "scratch/bad.yaml", BAD_JOB);
    // An export or archive (no `.git`) holds what was committed: every file is read.
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(
        out.contains("generated/bad.yaml") && out.contains("scratch/bad.yaml"),
        "{out}"
    );
    if !git(&["init", "-q"]) {
        return; // no git on this machine
    }
    // Committed although ignored (`git add -f`): git and Argo CD use it; the scratch file is not
    // tracked and stays out.
    assert!(git(&["add", "-f", "generated/bad.yaml"]));
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["generated/bad.yaml"], "{out}");
    // The same from an index written in version 4 (prefix-compressed paths).
    assert!(git(&["update-index", "--index-version", "4"]));
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(
        out.contains("generated/bad.yaml") && !out.contains("scratch/"),
        "{out}"
    );
}

#[test]
fn a_skipped_charts_crds_validate_objects() {
    let d = tempfile::tempdir().unwrap();
    chart(d.path());
    write(
        d.path(),
        "chart/crds/widgets.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              required: [size]\n              properties:\n                size: {type: integer}\n",
    );
    write(
        d.path(),
        "widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec:\n  colour: red\n",
    );
    // No helm on PATH: the chart is skipped, its CRDs are still read.
    let empty = tempfile::tempdir().unwrap();
    let Run { out, .. } = run(gpuops_in(d.path())
        .env("PATH", empty.path())
        .args(["lint", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let messages: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["rule"] == "schema-violation")
        .map(|x| x["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("`size`"))
            && messages.iter().any(|m| m.contains("`colour`")),
        "{out}"
    );
}

/// `gpuops lint /abs/dir` run from inside that directory labelled walk problems with an empty
/// path (`error: : skipped: …`) and exited 2, where `gpuops lint .` warned and went on.
#[cfg(unix)]
#[test]
fn absolute_cwd_walk_problems_are_labelled_like_dot() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    write(
        &root,
        "a/ok.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    std::os::unix::fs::symlink(root.join("a"), root.join("a/loop")).unwrap();
    std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling.yaml")).unwrap();
    let dot = run(gpuops_in(&root).args(["lint", "."]));
    let abs = run(gpuops_in(&root).args(["lint", root.to_str().unwrap()]));
    assert_eq!(dot.code, 0, "{}", dot.err);
    assert_eq!(abs.code, dot.code, "{}", abs.err);
    assert!(!abs.err.contains(": : "), "{}", abs.err);
    assert!(!abs.err.contains("error:"), "{}", abs.err);
    assert!(abs.err.contains("skipped"), "{}", abs.err);
}

/// A committed symbolic link to a path on its author's machine was warned about twice, as "No
/// such file or directory".
#[cfg(unix)]
#[test]
fn a_symbolic_link_to_nothing_is_named_once() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "ok.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    );
    std::os::unix::fs::symlink("/Users/nobody/resources", d.path().join("resources")).unwrap();
    let Run { code, err, .. } = run(gpuops_in(d.path()).args(["lint", "."]));
    assert_eq!(code, 0, "{err}");
    let warned: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert_eq!(
        warned,
        vec![
            "warning: .: skipped: resources: a symbolic link to `/Users/nobody/resources`, which does not exist"
        ],
        "{err}"
    );
}

/// A ResourceFlavor (and a NodePool) named with 65,536 characters panicked `gpuops cost` in its
/// table ("Formatting argument out of range").
#[test]
fn cost_table_with_huge_names_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let name = "f".repeat(65_536);
    write(
        dir.path(),
        "pool.yaml",
        &format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      requirements:\n        - {{key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}}\n  limits:\n    nvidia.com/gpu: 16\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n      flavors:\n        - name: {name}\n          resources:\n            - {{name: nvidia.com/gpu, nominalQuota: 8}}\n"
        ),
    );
    let Run { code, out, err } = run(gpuops().arg("cost").arg(dir.path()));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("fff…"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() < 1000), "{out}");
}

/// A policy id of 70,000 characters panicked `gpuops rules --policy DIR`.
#[test]
fn rules_listing_with_a_huge_policy_id_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    // 70,000 characters, built: regorus refuses source lines over 1,024 columns.
    write(
        dir.path(),
        "p/long.rego",
        "package org.long\nimport rego.v1\nmetadata := {\"id\": concat(\"\", [x | some i in numbers.range(1, 7000); x := \"pppppppppp\"]), \"summary\": \"s\"}\ndeny contains {\"msg\": \"m\", \"object\": o} if {\n\tsome o in input.objects\n\tfalse\n}\n",
    );
    let Run { code, out, err } = run(gpuops()
        .arg("rules")
        .arg("--policy")
        .arg(dir.path().join("p")));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("policy/pppp"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() < 1000), "{out}");
}

#[test]
fn explain_clusters_says_which_files_each_cluster_holds() {
    let dir = root().join("examples/multi-cluster");
    let Run { err, .. } = run(gpuops_in(&dir).args(["lint", "--explain-clusters"]));
    let listing: String = err
        .lines()
        .filter(|l| !l.starts_with("note:"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("explain_clusters_multi_cluster", listing);
    // Without `clusters:` or Applications the repository is one cluster, and it says so.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "jobs/ok.yaml", GOOD_JOB);
    let Run { err, .. } = run(gpuops_in(d.path()).args(["lint", "--explain-clusters"]));
    assert!(err.contains("clusters: one, the whole repository"), "{err}");
}
