//! The built-in `schema-violation` checks, one case a file: `testdata/schema/<kind>/fail/*.yaml`
//! must be rejected exactly on the lines marked `# rejected` (every marked line has a finding,
//! every finding is on a marked line), `testdata/schema/<kind>/pass/*.yaml` not at all. Each case
//! is linted as a repository of its own with only `schema-violation` on. A case translated from
//! an upstream validation test names it (`# upstream: …`), and a failing one the layer that
//! rejects it (`# layer: schema`, `cel`, `webhook` or `karpenter`), which every finding must
//! name.

mod common;

use common::human_text;
use gpuops::config::Settings;
use gpuops::source::SourceFile;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const RULE: &str = "schema-violation";
const MARK: &str = "# rejected";

fn cases(outcome: &str) -> Vec<PathBuf> {
    let root = common::root().join("testdata/schema");
    let mut out = Vec::new();
    for kind in std::fs::read_dir(&root).expect("testdata/schema exists") {
        let dir = kind.unwrap().path().join(outcome);
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for f in files {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "yaml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The 1-based lines of the file's `schema-violation` findings, their messages, and the findings
/// as text.
fn lint(path: &Path) -> (BTreeSet<usize>, Vec<String>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let rel = path
        .strip_prefix(common::root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let files = vec![SourceFile::from_text(rel, text.clone())];
    let settings = Settings {
        only: Some(vec![RULE.to_string()]),
        ..Settings::default()
    };
    let out = gpuops::lint(&files, &settings);
    let own: Vec<_> = out
        .diagnostics
        .into_iter()
        .filter(|d| d.rule == RULE)
        .collect();
    let lines = own
        .iter()
        .map(|d| text[..d.loc.span.start()].matches('\n').count() + 1)
        .collect();
    let messages = own.iter().map(|d| d.message.clone()).collect();
    (lines, messages, human_text(&own, &files))
}

/// The layer a failing case says rejects it (`# layer: cel`).
fn layer(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# layer: ").map(str::to_string))
}

/// Whether a message names `layer` as the one that rejects the object.
fn names_layer(message: &str, layer: &str) -> bool {
    match layer {
        "schema" => {
            message.contains("the API server")
                && !message.contains("CEL")
                && !message.contains("webhook")
        }
        "cel" => message.contains("the API server") && message.contains("CEL"),
        "webhook" => message.contains("Kueue's webhook"),
        "karpenter" => message.contains("Karpenter's validation"),
        other => panic!("unknown layer `{other}`"),
    }
}

fn marked(path: &Path) -> BTreeSet<usize> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(MARK))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn failing_cases_are_rejected_at_the_marked_nodes() {
    let all = cases("fail");
    assert!(all.len() > 30, "{} failing cases", all.len());
    let mut wrong = Vec::new();
    for path in &all {
        let want = marked(path);
        assert!(!want.is_empty(), "{} marks no line", path.display());
        let (got, messages, text) = lint(path);
        if got != want {
            wrong.push(format!(
                "{}: marked lines {want:?}, findings on {got:?}\n{text}",
                path.display()
            ));
        } else if let Some(layer) = layer(path)
            && let Some(m) = messages.iter().find(|m| !names_layer(m, &layer))
        {
            wrong.push(format!(
                "{}: the finding does not name the {layer} layer: {m}",
                path.display()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn passing_cases_are_clean() {
    let all = cases("pass");
    assert!(!all.is_empty());
    let mut wrong = Vec::new();
    for path in &all {
        assert!(marked(path).is_empty(), "{} marks a line", path.display());
        let (got, _, text) = lint(path);
        if !got.is_empty() {
            wrong.push(format!("{}:\n{text}", path.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
