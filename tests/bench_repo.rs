//! The benchmark's generated monorepo: every planted mistake is found exactly as planted, and the
//! clean objects around them stay clean.

// The benchmark uses the rest of the generator (the marker and the summary it keeps).
#[allow(dead_code)]
#[path = "../benches/repo_gen/mod.rs"]
mod repo_gen;

use gpuops::config::Settings;
use gpuops::source::{self, Discovery};
use std::collections::BTreeMap;

#[test]
fn findings_match_the_planted_mistakes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let summary = repo_gen::generate(dir.path(), 40);
    assert_eq!(summary.files, 40);
    let d = Discovery {
        exclude: None,
        exclude_root: None,
    };
    let (paths, problems) = d.walk(&[dir.path().to_path_buf()]);
    assert!(problems.is_empty(), "{problems:?}");
    let (files, problems) = source::load(&paths);
    assert!(problems.is_empty(), "{problems:?}");
    // Opt-in rules on: every rule has its planted mistake.
    let out = gpuops::lint(&files, &gpuops::rules::with_opt_in(Settings::default()));
    assert_eq!((out.files, out.objects), (summary.files, summary.objects));
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for d in &out.diagnostics {
        *found.entry(d.rule.to_string()).or_default() += 1;
    }
    assert_eq!(found, summary.expected);
    // Every rule has a planted mistake even at this size, but those about broken input or
    // suppressions, which a generated platform repo does not hold.
    for rule in gpuops::rules::all() {
        let not_planted = matches!(rule.category, "yaml" | "suppression" | "sources")
            // needs a configured budget: the bench lints with default Settings.
            || rule.name == "nodepool-cost-exceeds-budget";
        assert!(
            not_planted || summary.expected.contains_key(rule.name),
            "nothing planted for {}",
            rule.name
        );
    }
}

#[test]
fn generation_is_deterministic() {
    let a = tempfile::tempdir().expect("temp dir");
    let b = tempfile::tempdir().expect("temp dir");
    let sa = repo_gen::generate(a.path(), 25);
    let sb = repo_gen::generate(b.path(), 25);
    assert_eq!(sa, sb);
    let read = |root: &std::path::Path, rel: &str| {
        std::fs::read_to_string(root.join(rel)).expect("generated file")
    };
    for rel in [
        "teams/team-0001/platform/nodepools.yaml",
        "teams/team-0001/workloads/finetune.yaml",
        ".complete",
    ] {
        assert_eq!(read(a.path(), rel), read(b.path(), rel));
    }
}

/// A chunked rule judges each object (with its templates) on its own, and a file's objects
/// together: run one file at a time (the smallest chunks), it finds exactly what one run over the
/// whole index finds (in another order: the report is
/// sorted afterwards).
#[test]
fn chunked_rules_find_the_same_one_file_at_a_time() {
    use gpuops::index::Index;
    use gpuops::rules::Ctx;
    let dir = tempfile::tempdir().expect("temp dir");
    repo_gen::generate(dir.path(), 40);
    let roots = [
        dir.path().to_path_buf(),
        std::path::PathBuf::from("examples"),
        std::path::PathBuf::from("testdata/rules"),
    ];
    let d = Discovery {
        exclude: None,
        exclude_root: None,
    };
    let (paths, _) = d.walk(&roots);
    let (files, _) = source::load(&paths);
    let settings = Settings::default();
    let ix = Index::build(&files, &settings);
    let mut checked = 0;
    for rule in gpuops::rules::all().iter().filter(|r| r.chunked) {
        let mut whole = Vec::new();
        (rule.check)(&Ctx::new(&ix, rule), &mut whole);
        let mut pieces = Vec::new();
        for range in ix.chunks(1) {
            (rule.check)(&Ctx::chunk(&ix, rule, range), &mut pieces);
        }
        let sorted = |v: &[gpuops::diag::Diagnostic]| {
            let mut v: Vec<String> = v.iter().map(|d| format!("{d:?}")).collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&whole), sorted(&pieces), "{}", rule.name);
        checked += usize::from(!whole.is_empty());
    }
    // The inputs hold findings of most chunked rules, so the comparison is not vacuous.
    assert!(checked >= 15, "only {checked} chunked rules found anything");
}
