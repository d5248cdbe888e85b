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
    lint_with(path, &[])
}

/// [`lint`] with CRD files given as context (as `--crd` gives them): (path, text).
fn lint_with(path: &Path, crds: &[(String, String)]) -> (BTreeSet<usize>, Vec<String>, String) {
    let text = std::fs::read_to_string(path).unwrap();
    let rel = path
        .strip_prefix(common::root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut files = vec![SourceFile::from_text(rel, text.clone())];
    for (p, t) in crds {
        let mut f = SourceFile::from_text(p.clone(), t.clone());
        f.role = gpuops::source::Role::Context { cluster: None };
        files.push(f);
    }
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

/// Where CI keeps the upstream CRDs: `../shared/reference/crds` beside the project (Kueue
/// v0.19.2's and Karpenter v1.14.1's, the versions the `# upstream:` cases come from).
fn reference_crds() -> Option<Vec<(String, String)>> {
    let dir = common::root().join("../shared/reference/crds");
    let mut out = Vec::new();
    for f in std::fs::read_dir(&dir).ok()? {
        let p = f.ok()?.path();
        if p.extension().is_some_and(|e| e == "yaml") {
            let name = p.file_name()?.to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&p).ok()?));
        }
    }
    out.sort();
    Some(out)
}

/// Whether a case is translated from an upstream test (`# upstream: …`).
fn upstream(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with('#'))
        .any(|l| l.starts_with("# upstream: "))
}

/// The project whose validation a case's kind belongs to.
fn project(case: &Path) -> String {
    let kind = case
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name);
    match kind.and_then(|k| k.to_str()) {
        Some("nodepool" | "ec2nodeclass" | "nodeclaim") => "Karpenter",
        Some("job") => "core",
        _ => "Kueue",
    }
    .to_string()
}

/// The CRDs of a case's kind (its directory, `nodepool`): `karpenter.sh_nodepools.yaml`.
fn crds_of(crds: &[(String, String)], case: &Path) -> Vec<(String, String)> {
    let kind = case
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|k| k.to_string_lossy().into_owned())
        .unwrap_or_default();
    crds.iter()
        .filter(|(name, _)| {
            name.split_once('_')
                .is_some_and(|(_, rest)| rest.starts_with(&kind))
        })
        .cloned()
        .collect()
}

/// With the upstream CRDs given, as with `--crd`: every failing case still gets a finding (the
/// CRD's rules are reported at the node that declares them, the list or object, so not always on
/// the marked line), no passing case one. Kinds without a CRD there (Topology, AdmissionCheck,
/// ProvisioningRequestConfig) keep the built-in checks.
#[test]
fn cases_with_the_reference_crds() {
    let Some(crds) = reference_crds() else {
        println!("note: ../shared/reference/crds not found beside the project: not run");
        return;
    };
    // The cases come from Kueue v0.19 and Karpenter v1.14: other releases' CRDs may differ.
    let sources = common::root().join("../shared/reference/crds/SOURCES.md");
    let sources = std::fs::read_to_string(sources).unwrap_or_default();
    if !(sources.contains("v0.19.2") && sources.contains("v1.14.1")) {
        println!("note: the reference CRDs are not Kueue v0.19.2's and Karpenter v1.14.1's");
    }
    let mut wrong = Vec::new();
    // (project, layer) of the cases translated from upstream tests → (cases, caught, on exactly
    // the marked lines): the figures docs/schema.md gives.
    let mut tally: std::collections::BTreeMap<(String, String), (usize, usize, usize)> =
        Default::default();
    let mut spare = (0, 0, 0);
    for path in &cases("fail") {
        let (got, _, _) = lint_with(path, &crds_of(&crds, path));
        let t = if upstream(path) {
            tally
                .entry((project(path), layer(path).unwrap_or_default()))
                .or_default()
        } else {
            &mut spare
        };
        t.0 += 1;
        if got.is_empty() {
            wrong.push(format!("{}: no finding with the CRDs", path.display()));
        } else {
            t.1 += 1;
            t.2 += usize::from(got == marked(path));
        }
    }
    for path in &cases("pass") {
        let (got, _, text) = lint_with(path, &crds_of(&crds, path));
        if !got.is_empty() {
            wrong.push(format!(
                "{}: flagged with the CRDs:\n{text}",
                path.display()
            ));
        }
    }
    for ((project, layer), (n, caught, exact)) in &tally {
        println!("with the CRDs: {project} {layer}: {caught} of {n} caught, {exact} exactly");
    }
    println!(
        "with the CRDs, cases of gpuops' own: {} of {} caught, {} exactly",
        spare.1, spare.0, spare.2
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
