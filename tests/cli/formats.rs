//! The reports CI systems read, held to what those systems check: SARIF against the 2.1.0
//! schema (`testdata/sarif/`, formats included), JUnit failures only at the failing severity,
//! test names that survive moved lines.

use crate::common::{Run, gpuops_in, root, run, write};
use crate::lint::BAD_JOB;
use std::path::Path;

/// A GPU Job without a GPU limit: `gpu-limit-missing` (an error by default) at line 15.
fn job() -> String {
    BAD_JOB.replace("  name: bad\n", "  name: train\n  namespace: ml\n")
}

/// The SARIF 2.1.0 schema (the draft-07 form code scanning and schemastore use), with `format`
/// checked: `uri-reference` is what a path with `#` or `%` breaks.
fn sarif_validator() -> jsonschema::Validator {
    let path = root().join("testdata/sarif/sarif-schema-2.1.0.json");
    // The schema's own `run.language` pattern has a stray `]`, which a validator that checks
    // formats refuses to compile; the pattern it means stands in for it.
    let text = std::fs::read_to_string(path).unwrap().replace(
        r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#,
        r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#,
    );
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

fn assert_valid_sarif(v: &serde_json::Value) {
    let errors: Vec<String> = sarif_validator()
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_schema_rejects_a_raw_path_as_a_uri() {
    let bad = serde_json::json!({"uri": "a,b:c%d.yaml"});
    let schema =
        serde_json::json!({"properties": {"uri": {"type": "string", "format": "uri-reference"}}});
    let v = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    assert!(!v.is_valid(&bad));
}

#[test]
fn sarif_of_files_named_with_hash_comma_colon_percent_and_spaces_validates() {
    let d = tempfile::tempdir().unwrap();
    let names = [
        "my job #1.yaml",
        "a,b:c%d.yaml",
        "dir with space/x y.yaml",
        "é.yaml",
    ];
    for n in names {
        write(d.path(), n, &job());
    }
    let Run { code, out, err } = run(gpuops_in(d.path()).args(["lint", "--format", "sarif"]));
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&v);
    let run0 = &v["runs"][0];
    let mut uris: Vec<&str> = run0["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let a = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            assert_eq!(a["uriBaseId"], "%SRCROOT%");
            a["uri"].as_str().unwrap()
        })
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "%C3%A9.yaml",
            "a%2Cb%3Ac%25d.yaml",
            "dir%20with%20space/x%20y.yaml",
            "my%20job%20%231.yaml",
        ]
    );
    // The base is the directory gpuops ran in, as an absolute file URI ending in `/`.
    let base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
}

#[test]
fn sarif_of_stdin_validates_and_names_no_file() {
    let d = tempfile::tempdir().unwrap();
    let Run { code, out, .. } = run(gpuops_in(d.path())
        .args(["lint", "-", "--format", "sarif"])
        .write_stdin(job()));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&v);
    let p = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(
        p["artifactLocation"],
        serde_json::json!({"description": {"text": "standard input"}})
    );
    assert_eq!(p["region"]["startLine"], 15);
}

#[test]
fn sarif_of_the_platform_example_validates() {
    let Run { out, .. } = run(gpuops_in(root()).args([
        "lint",
        "examples/platform",
        "--format",
        "sarif",
        "--no-cache",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!v["runs"][0]["results"].as_array().unwrap().is_empty());
    assert_valid_sarif(&v);
}

fn junit(dir: &Path, extra: &[&str]) -> (i32, roxmltree::Document<'static>) {
    let Run { code, out, err } = run(gpuops_in(dir)
        .args(["lint", "--format", "junit"])
        .args(extra));
    assert!(code == 0 || code == 1, "{err}");
    let xml: &'static str = Box::leak(out.into_boxed_str());
    (code, roxmltree::Document::parse(xml).unwrap())
}

fn count(doc: &roxmltree::Document, tag: &str) -> usize {
    doc.descendants().filter(|n| n.has_tag_name(tag)).count()
}

#[test]
fn junit_of_a_warnings_only_run_has_no_failures() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "job.yaml", &job());
    write(
        d.path(),
        ".gpuops.yaml",
        "rules:\n  gpu-limit-missing: warning\n",
    );
    let (code, doc) = junit(d.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(count(&doc, "failure"), 0);
    assert!(count(&doc, "skipped") >= 1);
    let root_el = doc.root_element();
    assert_eq!(root_el.attribute("failures"), Some("0"));
    for s in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        assert_eq!(s.attribute("failures"), Some("0"));
        assert_eq!(s.attribute("skipped"), s.attribute("tests"));
    }
    // The same warnings fail when the run fails on them.
    let (code, doc) = junit(d.path(), &["--fail-on", "warning"]);
    assert_eq!(code, 1);
    assert_eq!(count(&doc, "skipped"), 0);
    assert!(count(&doc, "failure") >= 1);
}

#[test]
fn junit_test_names_are_rule_and_object_and_survive_moved_lines() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "job.yaml", &job());
    let names = |dir: &Path| -> Vec<String> {
        let (_, doc) = junit(dir, &[]);
        doc.descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|n| n.attribute("name").unwrap().to_string())
            .collect()
    };
    let before = names(d.path());
    assert!(
        before.contains(&"gpu-limit-missing: Job ml/train".to_string()),
        "{before:?}"
    );
    write(
        d.path(),
        "job.yaml",
        &format!("# a comment\n# and another\n{}", job()),
    );
    assert_eq!(names(d.path()), before);
}
