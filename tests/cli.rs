//! Runs the binary on temporary repositories: exit codes, stdin, output formats, bad input.

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn gpuops() -> Command {
    let mut c = Command::cargo_bin("gpuops").unwrap();
    c.env("NO_COLOR", "1");
    c
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

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
";

const BAD_JOB: &str = "apiVersion: batch/v1
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
";

fn stdout_of(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn clean_repo_exits_zero() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "jobs/ok.yaml", GOOD_JOB);
    let (code, out, _) = stdout_of(gpuops().arg("lint").arg(d.path()));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings in 1 file"));
}

#[test]
fn findings_exit_one_and_point_at_the_node() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "jobs/bad.yaml", BAD_JOB);
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
    let (_, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
    ] {
        assert!(d0.contains_key(k), "missing {k}");
    }
    for k in ["files", "documents", "objects", "errors", "warnings"] {
        assert!(v["summary"].get(k).is_some(), "missing summary.{k}");
    }
}

#[test]
fn stdin_is_linted() {
    let (code, out, _) = stdout_of(
        gpuops()
            .args(["lint", "-", "--format", "json"])
            .write_stdin(BAD_JOB),
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["diagnostics"][0]["path"], "<stdin>");
}

#[test]
fn malformed_file_is_a_finding_and_the_rest_is_linted() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a-broken.yaml", "apiVersion: v1\nkind: [\n");
    write(d.path(), "b-bad.yaml", BAD_JOB);
    write(d.path(), "c-binary.yaml", "\0\0\0binary");
    write(d.path(), "d-dupes.yml", "a: 1\na: 2\n");
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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

#[test]
fn non_kubernetes_yaml_and_helm_charts_are_skipped() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        ".github/workflows/ci.yaml",
        "on: [push]\njobs: {}\n",
    );
    write(d.path(), "values.yaml", "gpu:\n  count: 0.5\n");
    write(
        d.path(),
        "chart/Chart.yaml",
        "apiVersion: v2\nname: x\nversion: 0.1.0\n",
    );
    write(
        d.path(),
        "chart/templates/job.yaml",
        "{{- if .Values.x }}\nkind: Job\n{{- end }}\n",
    );
    write(d.path(), "ignored/bad.yaml", BAD_JOB);
    write(d.path(), ".gitignore", "ignored/\n");
    write(d.path(), "notes.txt", "not yaml");
    // No helm on PATH: the chart is listed as skipped, not rendered.
    let empty = tempfile::tempdir().unwrap();
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .env("PATH", empty.path())
            .args(["lint", "--format", "json"]),
    );
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["summary"]["files"], 3);
    assert_eq!(v["summary"]["objects"], 0);
    assert_eq!(v["skipped"][0]["path"], "chart/Chart.yaml");
    assert_eq!(v["skipped"][0]["reason"], "Helm chart (helm not on PATH)");
}

#[test]
fn output_is_deterministic() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..20 {
        write(d.path(), &format!("dir{}/job{i}.yaml", i % 3), BAD_JOB);
    }
    let run = || {
        stdout_of(
            gpuops()
                .current_dir(d.path())
                .args(["lint", "--format", "json"]),
        )
        .1
    };
    let first = run();
    for _ in 0..3 {
        assert_eq!(run(), first);
    }
}

#[test]
fn usage_and_io_errors_exit_two() {
    let (code, _, err) = stdout_of(gpuops().args(["lint", "/definitely/not/here"]));
    assert_eq!(code, 2);
    assert!(err.contains("/definitely/not/here"), "{err}");
    let (code, _, _) = stdout_of(gpuops().args(["lint", "--format", "xml"]));
    assert_eq!(code, 2);
    let (code, _, err) = stdout_of(gpuops().args(["lint", "--rule", "gpu-limit-mising", "."]));
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
    let (code, _, err) = stdout_of(gpuops().current_dir(d.path()).arg("lint"));
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
    let (code, out, _) = stdout_of(gpuops().current_dir(d.path()).arg("lint"));
    assert_eq!(code, 0, "a warning does not fail by default: {out}");
    assert!(out.contains("0 errors, 1 warning"));
    let (code, _, _) =
        stdout_of(
            gpuops()
                .current_dir(d.path())
                .args(["lint", "--fail-on", "warning"]),
        );
    assert_eq!(code, 1);
    write(
        d.path(),
        ".gpuops.yaml",
        "rules:\n  gpu-limit-missing: off\n",
    );
    let (code, _, _) = stdout_of(gpuops().current_dir(d.path()).arg("lint"));
    assert_eq!(code, 0);
}

#[test]
fn config_excludes_paths() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "legacy/a.yaml", BAD_JOB);
    write(d.path(), ".gpuops.yaml", "exclude: [\"legacy/**\"]\n");
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
    let (code, _, _) = stdout_of(gpuops().current_dir(d.path()).args(["lint", "repo/apps/x"]));
    assert_eq!(code, 0);
}

#[cfg(unix)]
#[test]
fn symlink_loops_do_not_stop_the_run() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a/bad.yaml", BAD_JOB);
    std::os::unix::fs::symlink(d.path().join("a"), d.path().join("a/loop")).unwrap();
    let (code, out, err) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
    assert_eq!(code, 1);
    assert!(out.contains("alias expansion exceeds"));
}

#[test]
fn sarif_and_github_formats() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.yaml", BAD_JOB);
    let (_, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "sarif"]),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "gpu-limit-missing");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        14
    );
    let (_, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "github"]),
    );
    assert!(
        out.starts_with("::error file=a.yaml,line=14,col=15"),
        "{out}"
    );
}

#[test]
fn rules_and_rule_explain() {
    let (code, out, _) = stdout_of(gpuops().arg("rules"));
    assert_eq!(code, 0);
    assert!(out.lines().count() >= 21);
    assert!(out.contains("gpu-toleration-missing"));
    let (code, out, _) = stdout_of(gpuops().args(["rule", "gpu-limit-missing"]));
    assert_eq!(code, 0);
    assert!(out.contains("## Why is this bad?"));
    let (code, _, err) = stdout_of(gpuops().args(["rule", "gpu-limit-mising"]));
    assert_eq!(code, 2);
    assert!(err.contains("did you mean"));
}

#[test]
fn bundled_examples() {
    let root = env!("CARGO_MANIFEST_DIR");
    let (code, out, _) = stdout_of(gpuops().current_dir(root).args(["lint", "examples/clean"]));
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = stdout_of(
        gpuops()
            .current_dir(root)
            .args(["lint", "examples/platform"]),
    );
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

    let (code, out, err) = stdout_of(gpuops().current_dir(d.path()).arg("lint"));
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

    let (code, out, err) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
    let (_, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
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
            \"python\", \"train.py\"
          ]
          resources:
            limits: {
              \"nvidia.com/gpu\": 1
            }
";
    write(d.path(), "jobs/ok.yaml", job);
    let (code, out, _) = stdout_of(gpuops().current_dir(d.path()).arg("lint"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no findings in 1 file"), "{out}");

    // Findings after the quirk still point at the original line and column.
    let bad = job.replace("limits: {", "requests: {");
    write(d.path(), "jobs/ok.yaml", &bad);
    let (code, out, _) = stdout_of(
        gpuops()
            .current_dir(d.path())
            .args(["lint", "--format", "json"]),
    );
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d0 = &v["diagnostics"][0];
    assert_eq!(d0["rule"], "gpu-limit-missing");
    assert_eq!(
        (d0["line"].as_u64(), d0["column"].as_u64()),
        (Some(17), Some(15))
    );
}
