//! Every bundled policy: a failing fixture (snapshot of its human output, run with only that
//! policy) and a passing fixture (no finding from it), as for built-in rules in `tests/rules.rs`.
//! `testdata/policies/<id>/config.yaml`, when present, is the fixture's config (`policy-data`).
//! Beside them: policies that fail at run time, run out of time or try to reach outside.

mod common;

use common::{findings_of, fixture_settings, human_text};
use gpuops::config::{Level, Settings};
use gpuops::policy::{Module, Policies, bundled};
use gpuops::source::SourceFile;
use std::path::Path;

/// The fixture's settings, and its policies when it gives them `policy-data`.
fn settings_for(dir: &Path, rule: &str) -> (Settings, Option<Policies>) {
    let mut s = fixture_settings(dir);
    let policies = s
        .policy_data
        .is_some()
        .then(|| Policies::load(&[], s.policy_data.as_ref()).expect("policies load"));
    s.only = Some(vec![rule.to_string()]);
    (s, policies)
}

fn run(dir: &Path, file: &str, rule: &str) -> (String, usize) {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    let id = rule.trim_start_matches("policy/");
    let files = vec![SourceFile::from_text(
        format!("testdata/policies/{id}/{file}"),
        text,
    )];
    let (settings, policies) = settings_for(dir, rule);
    let out = gpuops::lint_with(&files, &settings, policies.as_ref());
    assert!(out.policy_errors.is_empty(), "{:?}", out.policy_errors);
    findings_of(rule, out.diagnostics, &files)
}

fn dir_of(b: &bundled::Bundled) -> std::path::PathBuf {
    Path::new("testdata/policies").join(b.name.trim_start_matches("policy/"))
}

#[test]
fn every_bundled_policy_has_both_fixtures_and_a_documented_metadata() {
    let policies = Policies::bundled().expect("bundled policies compile");
    for b in bundled::PACK {
        for f in ["fail.yaml", "pass.yaml"] {
            assert!(dir_of(b).join(f).exists(), "{} lacks {f}", b.name);
        }
        let m = policies.find(b.name).expect("loaded");
        for section in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Fix",
        ] {
            assert!(
                m.description.contains(section),
                "{} lacks `{section}`",
                b.name
            );
        }
    }
    // Every file of policies/ is in the pack.
    for e in std::fs::read_dir("policies").unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let Some(id) = name.strip_suffix(".rego") else {
            continue;
        };
        let id = id.trim_end_matches("_test");
        assert!(
            bundled::find(&format!("policy/{id}")).is_some(),
            "policies/{name} is not in bundled::PACK"
        );
    }
}

#[test]
fn failing_fixtures_fire_and_match_snapshots() {
    for b in bundled::PACK {
        if std::env::var("RULE").is_ok_and(|r| r != b.name) {
            continue;
        }
        let (text, own) = run(&dir_of(b), "fail.yaml", b.name);
        assert!(own > 0, "{}: fail.yaml produced no finding", b.name);
        insta::assert_snapshot!(b.name.trim_start_matches("policy/"), text);
    }
}

#[test]
fn passing_fixtures_are_clean() {
    for b in bundled::PACK {
        let (text, own) = run(&dir_of(b), "pass.yaml", b.name);
        assert_eq!(own, 0, "{}: pass.yaml has findings:\n{text}", b.name);
    }
}

/// The bundled pack's input holds only the fact fields its modules name; the same modules
/// loaded as user policies see every field. Both must find the same on every fixture.
#[test]
fn the_pack_finds_the_same_with_only_the_fields_it_names() {
    let as_user: Vec<Module> = gpuops::policy::bundled_modules(false)
        .into_iter()
        .map(|m| Module {
            path: format!("org/{}", m.path),
            text: m.text,
        })
        .collect();
    for b in bundled::PACK {
        let dir = dir_of(b);
        let (settings, narrow) = settings_for(&dir, b.name);
        let data = settings.policy_data.as_ref();
        let user = Policies::compile(as_user.clone(), data).expect("compiles as user modules");
        assert!(!user.find(b.name).expect("loaded").bundled);
        let full = Some(&user);
        for file in ["fail.yaml", "pass.yaml"] {
            let text = std::fs::read_to_string(dir.join(file)).unwrap();
            let files = vec![SourceFile::from_text(file.into(), text)];
            let found = |p: Option<&Policies>| {
                let out = gpuops::lint_with(&files, &settings, p);
                assert!(out.policy_errors.is_empty(), "{:?}", out.policy_errors);
                human_text(&out.diagnostics, &files)
            };
            assert_eq!(found(narrow.as_ref()), found(full), "{} {file}", b.name);
        }
    }
}

#[test]
fn bundled_policies_are_off_until_enabled() {
    let text = std::fs::read_to_string("testdata/policies/team-label-missing/fail.yaml").unwrap();
    let files = vec![SourceFile::from_text("fail.yaml".into(), text)];
    let out = gpuops::lint(&files, &Settings::default());
    assert!(
        !out.diagnostics
            .iter()
            .any(|d| d.rule.starts_with("policy/"))
    );
    let mut s = Settings::default();
    s.rules
        .insert("policy/team-label-missing".into(), Level::Warning);
    let out = gpuops::lint(&files, &s);
    let found: Vec<_> = out
        .diagnostics
        .iter()
        .filter(|d| d.rule == "policy/team-label-missing")
        .collect();
    assert_eq!(found.len(), 2);
    assert!(
        found
            .iter()
            .all(|d| d.severity == gpuops::diag::Severity::Warning)
    );
}

/// Lints with default settings and these policies.
fn lint_policies(files: &[SourceFile], p: &Policies) -> gpuops::Outcome {
    gpuops::lint_with(files, &Settings::default(), Some(p))
}

const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: ml\nspec:\n  template:\n    spec:\n      containers:\n        - name: t\n          image: x:1\n";

fn user(text: &str) -> Policies {
    let mut modules = gpuops::policy::bundled_modules(false);
    modules.push(Module {
        path: "org/user.rego".into(),
        text: text.into(),
    });
    Policies::compile(modules, None).expect("compiles")
}

fn lint_with(p: Policies) -> gpuops::Outcome {
    let files = vec![SourceFile::from_text("job.yaml".into(), JOB.into())];
    lint_policies(&files, &p)
}

/// The sorted messages of policy `id` when `policy` (a user module) lints `files`.
fn messages_of(files: &[SourceFile], policy: &str, id: &str) -> Vec<String> {
    let out = lint_policies(files, &user(policy));
    assert!(out.policy_errors.is_empty(), "{:?}", out.policy_errors);
    let rule = format!("policy/{id}");
    let mut msgs: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.rule == rule)
        .map(|d| d.message.clone())
        .collect();
    msgs.sort_unstable();
    msgs
}

#[test]
fn findings_point_at_their_path_and_suppressions_apply() {
    let p = user(
        r#"package org.image
import rego.v1
metadata := {"id": "image-check", "severity": "warning", "summary": "s"}
deny contains {"msg": "image", "object": o, "path": ["spec", "template", "spec", "containers", 0, "image"]} if {
	some o in input.by_kind.Job
}
deny contains {"msg": "nowhere", "object": {"kind": "Job", "name": "train"}, "path": ["spec", "nope"]} if true
"#,
    );
    let out = lint_with(p);
    let d: Vec<_> = out
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.message.as_str(),
                d.loc.span.start_pos(JOB).line,
                d.loc.span.start_pos(JOB).col,
                d.severity,
            )
        })
        .collect();
    assert_eq!(
        d,
        vec![
            ("nowhere", 4, 9, gpuops::diag::Severity::Warning),
            ("image", 11, 18, gpuops::diag::Severity::Warning),
        ]
    );
    // A comment suppression names the policy like any rule.
    let text = JOB.replace(
        "image: x:1",
        "image: x:1  # gpuops:ignore[policy/image-check] pinned upstream",
    );
    let files = vec![SourceFile::from_text("job.yaml".into(), text)];
    let p = user(
        r#"package org.image
import rego.v1
metadata := {"id": "image-check", "summary": "s"}
deny contains {"msg": "image", "object": 0, "path": ["spec", "template", "spec", "containers", 0, "image"]} if true
"#,
    );
    let out = lint_policies(&files, &p);
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    assert!(out.diagnostics[0].suppressed.is_some());
}

#[test]
fn gpu_images_and_templates_by_namespace_are_views_of_gpu_templates() {
    // Two GPU pods share an image, one runs a placeholder, and a CPU pod's image is not a GPU one.
    let pod = |name: &str, image: &str, gpu: bool| {
        let limits = if gpu {
            "\n          resources: {limits: {nvidia.com/gpu: 1}}"
        } else {
            ""
        };
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  containers:\n        - name: c\n          image: {image}{limits}\n"
        )
    };
    let text = [
        pod("a", "pytorch/pytorch:2.3", true),
        pod("b", "pytorch/pytorch:2.3", true),
        pod("c", "${IMAGE}", true),
        pod("d", "busybox:1", false),
        // No namespace: in `gpu_templates`, not in `gpu_templates_by_namespace`.
        pod("e", "pytorch/pytorch:2.3", true).replace(", namespace: ml", ""),
    ]
    .join("---\n");
    let images = r#"package org.images
import rego.v1
metadata := {"id": "images", "severity": "warning", "summary": "s"}
deny contains {"msg": sprintf("%s -> %s", [img, ref.full]), "object": 0, "path": []} if {
	some img, ref in input.gpu_images
	is_object(ref)
}
deny contains {"msg": sprintf("%s -> null", [img]), "object": 0, "path": []} if {
	some img, ref in input.gpu_images
	ref == null
}
"#;
    let by_namespace = r#"
deny contains {"msg": sprintf("%s: %s", [ns, concat(" ", sort([t.name | some t in ts]))]), "object": 0, "path": []} if {
	some ns, ts in input.gpu_templates_by_namespace
}
"#;
    let files = vec![SourceFile::from_text("pods.yaml".into(), text)];
    let found = |policy: String| messages_of(&files, &policy, "images");
    // Read with the template facts built, and without them.
    assert_eq!(
        found(format!("{images}{by_namespace}")),
        [
            "${IMAGE} -> null",
            "ml: a b c",
            "pytorch/pytorch:2.3 -> docker.io/pytorch/pytorch:2.3"
        ]
    );
    assert_eq!(
        found(images.to_string()),
        [
            "${IMAGE} -> null",
            "pytorch/pytorch:2.3 -> docker.io/pytorch/pytorch:2.3"
        ]
    );
}

#[test]
fn gpu_images_by_repository_and_by_tag_group_the_distinct_images() {
    let pod = |name: &str, image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  containers:\n    - name: c\n      image: {image}\n      resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
        )
    };
    let text = [
        pod("a", "pytorch/pytorch:2.3"),
        pod("b", "pytorch/pytorch:2.3"),
        pod("c", "pytorch/pytorch"),
        pod("d", "docker.io/pytorch/pytorch:latest@sha256:ab"),
        pod("e", "nvcr.io/nvidia/pytorch:latest"),
        pod("f", "ubuntu"),
        // Filled in later: no repository, no tag.
        pod("g", "${IMAGE}"),
    ]
    .join("---\n");
    let policy = r#"package org.images
import rego.v1
metadata := {"id": "images", "severity": "warning", "summary": "s"}
deny contains {"msg": sprintf("repository %s: %s", [name, concat(" ", sort([i | some i, _ in imgs]))]), "object": 0, "path": []} if {
	some name, imgs in input.gpu_images_by_repository
}
deny contains {"msg": sprintf("tag '%s': %s", [tag, concat(" ", sort([sprintf("%s=%s", [i, r.full]) | some i, r in imgs]))]), "object": 0, "path": []} if {
	some tag, imgs in input.gpu_images_by_tag
}
"#;
    let files = vec![SourceFile::from_text("pods.yaml".into(), text)];
    assert_eq!(
        messages_of(&files, policy, "images"),
        [
            "repository docker.io/library/ubuntu: ubuntu",
            "repository docker.io/pytorch/pytorch: docker.io/pytorch/pytorch:latest@sha256:ab pytorch/pytorch pytorch/pytorch:2.3",
            "repository nvcr.io/nvidia/pytorch: nvcr.io/nvidia/pytorch:latest",
            "tag '': pytorch/pytorch=docker.io/pytorch/pytorch ubuntu=docker.io/library/ubuntu",
            "tag '2.3': pytorch/pytorch:2.3=docker.io/pytorch/pytorch:2.3",
            "tag 'latest': docker.io/pytorch/pytorch:latest@sha256:ab=docker.io/pytorch/pytorch:latest@sha256:ab nvcr.io/nvidia/pytorch:latest=nvcr.io/nvidia/pytorch:latest",
        ]
    );
}

#[test]
fn user_policies_see_every_field_of_namespaces_and_nodepools() {
    // The bundled pack reads neither `objects` nor `gpu_resources` nor `instance_types`, so
    // its input leaves them out; a user module may read any field and gets them all.
    let gpu_job = JOB.replace(
        "image: x:1",
        "image: x:1\n          resources: {limits: {nvidia.com/gpu: 2}}",
    );
    let text = format!(
        "{gpu_job}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: ml}}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: gpu}}\nspec:\n  template:\n    spec:\n      requirements:\n        - {{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge]}}\n"
    );
    let files = vec![SourceFile::from_text("all.yaml".into(), text)];
    let policy = r#"package org.fields
import rego.v1
metadata := {"id": "fields", "severity": "warning", "summary": "s"}
deny contains {"msg": sprintf("%v %v %v", [ns.objects, ns.gpu_resources, pool.instance_types]), "object": 0, "path": []} if {
	ns := input.namespaces.ml
	pool := input.nodepools.gpu
}
"#;
    assert_eq!(
        messages_of(&files, policy, "fields"),
        [r#"[0, 1] ["nvidia.com/gpu"] ["g5.xlarge"]"#]
    );
}

#[test]
fn objects_list_their_templates_whether_read_by_kind_or_whole() {
    // A ConfigMap first, so the Job is object 1 and its template 0.
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c, namespace: ml}}\n---\n{JOB}"
    );
    let files = vec![SourceFile::from_text("all.yaml".into(), text)];
    let found = |read: &str| {
        let policy = format!(
            r#"package org.owned
import rego.v1
metadata := {{"id": "owned", "severity": "warning", "summary": "s"}}
deny contains {{"msg": sprintf("%v %v", [o.gpuops.index, o.gpuops.templates]), "object": 0, "path": []}} if {{
	some o in {read}
}}
"#
        );
        messages_of(&files, &policy, "owned")
    };
    assert_eq!(found("input.by_kind.Job"), ["1 [0]"]);
    assert_eq!(found("input.objects"), ["0 []", "1 [0]"]);
}

#[test]
fn a_failing_policy_is_a_located_error_and_the_rest_still_run() {
    let p = user(
        r#"package org.broken
import rego.v1
metadata := {"id": "broken", "summary": "s"}
deny contains {"msg": m, "object": 0} if {
	some o in input.objects
	m := sprintf("%v", [count(o.kind) / 0])
}
"#,
    );
    let files = vec![SourceFile::from_text(
        "job.yaml".into(),
        JOB.replace(
            "image: x:1",
            "image: x:1\n          resources: {requests: {nvidia.com/gpu: 1}}",
        ),
    )];
    let out = lint_policies(&files, &p);
    assert_eq!(out.policy_errors.len(), 1, "{:?}", out.policy_errors);
    let e = out.policy_errors[0].to_string();
    assert!(e.starts_with("org/user.rego:6:"), "{e}");
    assert!(
        e.contains("policy/broken") && e.contains("divide by zero"),
        "{e}"
    );
    // Built-in rules still ran.
    assert!(
        out.diagnostics
            .iter()
            .any(|d| d.rule == "gpu-limit-missing")
    );
}

#[test]
fn a_policy_past_its_time_budget_is_stopped() {
    let mut p = user(
        r#"package org.slow
import rego.v1
metadata := {"id": "slow", "summary": "s"}
deny contains {"msg": "never", "object": 0} if {
	n := count([1 | some a in numbers.range(1, 3000); some b in numbers.range(1, 3000); a * b > 0])
	n < 0
}
"#,
    );
    p.budget = std::time::Duration::from_millis(100);
    let start = std::time::Instant::now();
    let out = lint_with(p);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.policy_errors.len(), 1);
    let e = out.policy_errors[0].to_string();
    assert!(
        e.contains("policy/slow") && e.contains("time budget"),
        "{e}"
    );
}

#[test]
fn policies_cannot_read_files_environment_or_network() {
    for call in [
        r#"opa.runtime().env.HOME"#,
        r#"http.send({"method": "GET", "url": "http://127.0.0.1:1/"}).body"#,
        r#"net.lookup_ip_addr("localhost")"#,
        r#"time.now_ns()"#,
        r#"uuid.rfc4122("x")"#,
        r#"yaml.unmarshal(opa.runtime().config)"#,
    ] {
        let p = user(&format!(
            "package org.escape\nimport rego.v1\nmetadata := {{\"id\": \"escape\", \"summary\": \"s\"}}\ndeny contains {{\"msg\": sprintf(\"%v\", [x]), \"object\": 0}} if {{\n\tx := {call}\n}}\n"
        ));
        let out = lint_with(p);
        assert!(out.diagnostics.is_empty(), "{call}: {:?}", out.diagnostics);
        assert_eq!(out.policy_errors.len(), 1, "{call}");
        let e = out.policy_errors[0].to_string();
        assert!(e.contains("could not find function"), "{call}: {e}");
    }
}

#[test]
fn malformed_findings_are_errors_of_the_policy() {
    let p = user(
        r#"package org.shape
import rego.v1
metadata := {"id": "shape", "summary": "s"}
deny contains "just a string" if true
deny contains {"msg": "no object"} if true
"#,
    );
    let out = lint_with(p);
    let errors: Vec<String> = out.policy_errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("org/user.rego:4:1: policy/shape: ")),
        "{errors:?}"
    );
}

#[test]
fn templates_list_the_gpus_of_their_dra_claims() {
    // Kueue maps both NVIDIA classes; a shared ResourceClaim is charged to nothing, a claim of
    // every device has no count.
    let files: Vec<SourceFile> = [
        "testdata/rules/dra-class-unmapped/pass.yaml",
        "testdata/rules/nodeselector-matches-no-nodepool/pass.dra.yaml",
    ]
    .iter()
    .map(|p| SourceFile::from_text(p.to_string(), std::fs::read_to_string(p).unwrap()))
    .collect();
    let policy = r#"package org.dra
import rego.v1
metadata := {"id": "dra", "severity": "warning", "summary": "s"}
deny contains {"msg": sprintf("%v: %v %v %v/%v %v %v", [t.name, g.class, g.count, g.claim_kind, g.claim_name, g.per_pod, g.kueue_resource]), "object": t.object, "path": t.path} if {
	some t in input.gpu_templates
	some g in t.dra_gpus
}
"#;
    assert_eq!(
        messages_of(&files, policy, "dra"),
        [
            "burn-in: gpu.nvidia.com null ResourceClaimTemplate/every-gpu true example.com/gpu",
            "finetune: gpu.nvidia.com 4 ResourceClaimTemplate/four-gpus true example.com/gpu",
            "rocm-smoke: amd.example.com 1 ResourceClaimTemplate/amd true null",
            "sweep: amd.example.com 1 ResourceClaim/shared-amd false null",
            "sweep: mig.nvidia.com 1 ResourceClaimTemplate/mig-slice true example.com/gpu",
            "sweep: mig.nvidia.com 8 ResourceClaimTemplate/mig-slices true example.com/gpu",
        ]
    );
}
