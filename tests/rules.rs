//! Every rule: a failing fixture (snapshot of its human output, run with only that rule) and a
//! passing fixture (no finding from that rule). A registered rule without both fails the suite.
//!
//! The suppression rules judge other rules' findings, so their fixtures run with every rule; their
//! snapshots still show only their own findings.
//!
//! Beside `fail.yaml` and `pass.yaml`, `fail.<case>.yaml` and `pass.<case>.yaml` are linted each
//! as a repository of its own (e.g. one without the NodePools of `fail.yaml`); a rule's snapshot
//! holds the output of all its failing fixtures, `fail.yaml` first.
//! Rules of the `sources` category judge builds, not YAML files: their fixtures are directories
//! (`testdata/sources/<rule>/fail/`, `pass/`) that tests/cli/sources.rs builds and snapshots.

mod common;

use common::{findings_of, fixture_settings};
use gpuops::config::Settings;
use gpuops::source::SourceFile;
use std::path::Path;

fn settings_for(dir: &Path, rule: &str) -> Settings {
    let mut s = fixture_settings(dir);
    if !judges_other_rules(rule) {
        s.only = Some(vec![rule.to_string()]);
    }
    s
}

fn judges_other_rules(rule: &str) -> bool {
    gpuops::suppress::RULES.iter().any(|r| r.name == rule)
}

/// Rules whose findings come from building sources, not from one YAML file.
fn from_sources(r: &gpuops::rules::Rule) -> bool {
    r.category == "sources"
}

/// `RULE=name cargo test --test rules` checks one rule only (handy while writing it).
fn selected() -> Vec<&'static gpuops::rules::Rule> {
    let only = std::env::var("RULE").ok();
    gpuops::rules::all()
        .iter()
        .copied()
        .filter(|r| only.as_deref().is_none_or(|o| o == r.name))
        .filter(|r| !from_sources(r))
        .collect()
}

fn run(dir: &Path, file: &str, rule: &str) -> (String, usize) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let rel = format!("testdata/rules/{rule}/{file}");
    let files = vec![SourceFile::from_text(rel, text)];
    let settings = settings_for(dir, rule);
    let out = gpuops::lint(&files, &settings);
    findings_of(rule, out.diagnostics, &files)
}

#[test]
fn every_rule_has_both_fixtures() {
    let mut missing = Vec::new();
    for r in gpuops::rules::all() {
        let (dir, names) = if from_sources(r) {
            ("testdata/sources", ["fail", "pass"])
        } else {
            ("testdata/rules", ["fail.yaml", "pass.yaml"])
        };
        for f in names {
            let p = Path::new(dir).join(r.name).join(f);
            if !p.exists() {
                missing.push(p.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "rules without fixtures: {missing:#?}");
}

#[test]
fn every_rule_is_documented() {
    for r in gpuops::rules::all() {
        let doc = r.explanation();
        for section in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Fix",
        ] {
            assert!(doc.contains(section), "{} lacks `{section}`", r.name);
        }
        assert!(!r.summary.is_empty());
        assert!(
            !r.kinds.is_empty(),
            "{} says nothing of what it judges",
            r.name
        );
    }
}

/// `<sort>.yaml` (when present) then `<sort>.<case>.yaml` in name order.
fn fixtures(dir: &Path, sort: &str) -> Vec<String> {
    let main = format!("{sort}.yaml");
    let prefix = format!("{sort}.");
    let mut cases: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix) && n.ends_with(".yaml") && *n != main)
                .collect()
        })
        .unwrap_or_default();
    cases.sort();
    if dir.join(&main).exists() {
        cases.insert(0, main);
    }
    cases
}

#[test]
fn failing_fixtures_fire_and_match_snapshots() {
    for r in selected() {
        let dir = Path::new("testdata/rules").join(r.name);
        let mut texts = Vec::new();
        for file in fixtures(&dir, "fail") {
            let (text, own) = run(&dir, &file, r.name);
            assert!(own > 0, "{}: {file} produced no finding", r.name);
            texts.push(text);
        }
        if texts.is_empty() {
            continue;
        }
        let text = texts.join("\n");
        insta::assert_snapshot!(r.name, text);
    }
}

#[test]
fn passing_fixtures_are_clean() {
    for r in selected() {
        let dir = Path::new("testdata/rules").join(r.name);
        for file in fixtures(&dir, "pass") {
            let (text, own) = run(&dir, &file, r.name);
            assert_eq!(own, 0, "{}: {file} has findings:\n{text}", r.name);
        }
    }
}

/// `docs/rules.md` is generated from the rule explanations; this fails when it is stale.
/// `GPUOPS_BLESS=1 cargo test --test rules` (or `gpuops rules --markdown > docs/rules.md`)
/// regenerates it.
#[test]
fn docs_rules_md_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let want = gpuops::report::rules_markdown();
    if std::env::var_os("GPUOPS_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/rules.md is stale: run `GPUOPS_BLESS=1 cargo test --test rules docs_rules_md` \
         (or `gpuops rules --markdown > docs/rules.md`) and commit it"
    );
}

#[test]
fn a_file_that_cannot_be_read_may_hold_what_is_missing() {
    // The NodePool that sets `NodeGroupType: spark-gpu` and the LocalQueue `team-a` are in a file
    // with a syntax error (an unclosed flow mapping): nothing in it can be read.
    let broken = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: spark-gpu}\nspec:\n  template:\n    metadata:\n      labels: {NodeGroupType: spark-gpu\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: team-a, namespace: ml}\nspec: {clusterQueue: cq}\n";
    let workloads = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: research, namespace: ml}\nspec: {clusterQueue: shared}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: etl\n  namespace: ml\n  labels: {kueue.x-k8s.io/queue-name: team-a}\nspec:\n  template:\n    spec:\n      nodeSelector: {NodeGroupType: spark-gpu}\n      containers:\n        - name: c\n          image: nvidia/cuda:12.4.0-base-ubuntu22.04\n          command: [nvidia-smi]\n          resources: {limits: {nvidia.com/gpu: 1}}\n";
    let rules_of = |files: Vec<SourceFile>| {
        let mut rules: Vec<String> = gpuops::lint(&files, &Settings::default())
            .diagnostics
            .into_iter()
            .map(|d| d.rule.to_string())
            .filter(|r| {
                matches!(
                    r.as_str(),
                    "invalid-yaml" | "nodeselector-matches-no-nodepool" | "localqueue-not-found"
                )
            })
            .collect();
        rules.sort();
        rules.dedup();
        rules
    };
    let job = || SourceFile::from_text("workloads.yaml".into(), workloads.into());
    let unread = || SourceFile::from_text("pools.yaml".into(), broken.into());
    // Without the broken file both are missing; with it, only its own problem is reported.
    assert_eq!(
        rules_of(vec![job()]),
        ["localqueue-not-found", "nodeselector-matches-no-nodepool"]
    );
    assert_eq!(rules_of(vec![unread(), job()]), ["invalid-yaml"]);
    // A broken file that names neither does not silence them.
    let other = SourceFile::from_text(
        "other.yaml".into(),
        "apiVersion: v1\nkind: ConfigMap\ndata: {b: c\n".into(),
    );
    assert_eq!(
        rules_of(vec![other, job()]),
        [
            "invalid-yaml",
            "localqueue-not-found",
            "nodeselector-matches-no-nodepool"
        ]
    );
}

/// A reference the linted files cannot resolve is a warning (the object may come from Terraform,
/// an add-on or another repository), an error once the cluster is declared complete, and an
/// error whenever a near name makes it a likely typo.
#[test]
fn unresolved_references_are_errors_only_when_certain() {
    let job = |queue: &str| {
        format!(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: team-a, namespace: ml}}\nspec: {{clusterQueue: shared}}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ml\n  labels: {{kueue.x-k8s.io/queue-name: {queue}}}\nspec:\n  template:\n    spec:\n      containers: [{{name: c, image: x}}]\n"
        )
    };
    let severity = |queue: &str, complete: bool| {
        let files = vec![SourceFile::from_text("q.yaml".into(), job(queue))];
        let settings = Settings {
            complete,
            only: Some(vec!["localqueue-not-found".into()]),
            ..Settings::default()
        };
        let out = gpuops::lint(&files, &settings);
        assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
        out.diagnostics[0].severity
    };
    use gpuops::diag::Severity::{Error, Warning};
    assert_eq!(severity("platform-queue", false), Warning);
    assert_eq!(severity("platform-queue", true), Error);
    assert_eq!(severity("team-b", false), Error);
}
