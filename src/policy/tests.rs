use super::*;
use regorus::Value;

fn module(path: &str, text: &str) -> Module {
    Module {
        path: path.into(),
        text: text.into(),
    }
}

const OK: &str = r#"package org.ok
import rego.v1
metadata := {"id": "ok", "summary": "s"}
deny contains {"msg": "m", "object": 0} if { input.objects[0] }
"#;

#[test]
fn bundled_pack_compiles_and_matches_its_files() {
    let p = Policies::bundled().expect("bundled policies compile");
    assert_eq!(p.policies.len(), bundled::PACK.len());
    for b in bundled::PACK {
        let m = p.find(b.name).expect("declared");
        assert!(m.bundled && !m.default_on());
        assert_eq!(m.file, b.file);
    }
}

#[test]
fn syntax_errors_are_located() {
    let err = Policies::compile(
        vec![module(
            "org/bad.rego",
            "package x\n\ndeny contains m if {\n  m := 1 +\n}\n",
        )],
        None,
    )
    .unwrap_err();
    assert_eq!(
        (err.path.as_str(), err.line, err.col),
        ("org/bad.rego", 4, 5)
    );
    assert!(err.to_string().starts_with("org/bad.rego:4:5: "), "{err}");
}

#[test]
fn metadata_problems_are_located() {
    let cases = [
        (
            "package a\nmetadata := {\"summary\": \"s\"}\ndeny contains 1 if true\n",
            "`metadata.id` is missing",
        ),
        (
            "package a\nmetadata := {\"id\": \"Bad_Id\", \"summary\": \"s\"}\ndeny contains 1 if true\n",
            "not kebab-case",
        ),
        (
            "package a\nmetadata := {\"id\": \"a\", \"summary\": \"s\", \"severity\": \"loud\"}\ndeny contains 1 if true\n",
            "not one of",
        ),
        (
            "package a\nmetadata := {\"id\": \"a\", \"summary\": \"s\"}\n",
            "neither `deny` nor `warn`",
        ),
        ("package a\n\ndeny contains 1 if true\n", "no `metadata"),
    ];
    for (text, want) in cases {
        let err = Policies::compile(vec![module("a.rego", text)], None).unwrap_err();
        assert!(err.message.contains(want), "{want}: {err}");
        assert!(err.line >= 2, "{err}");
    }
}

#[test]
fn duplicate_ids_are_an_error() {
    let err = Policies::compile(
        vec![
            module("one.rego", OK),
            module("two.rego", &OK.replace("org.ok", "org.other")),
        ],
        None,
    )
    .unwrap_err();
    assert!(
        err.message.contains("declared twice (first in one.rego)"),
        "{err}"
    );
}

#[test]
fn user_policies_are_on_by_default_and_named_once() {
    let a = Policies::compile(vec![module("ok.rego", OK)], None).expect("compiles");
    let b = Policies::compile(vec![module("ok.rego", OK)], None).expect("compiles");
    let (ma, mb) = (
        a.find("policy/ok").expect("a"),
        b.find("policy/ok").expect("b"),
    );
    assert!(ma.default_on());
    assert!(std::ptr::eq(ma.name, mb.name), "the name is interned");
}

#[test]
fn engine_errors_keep_their_place() {
    let e =
        String::from("\n--> p/x.rego:6:27\n  |\n6 |   m := 1 / 0\n  |    ^\nerror: divide by zero");
    let err = PolicyError::from_engine(&e, ("fallback.rego", 3));
    assert_eq!(err.to_string(), "p/x.rego:6:27: divide by zero");
    let e = String::from("execution exceeded time limit (elapsed=1ns, limit=1ns)");
    let err = PolicyError::from_engine(&e, ("f.rego", 3));
    assert!(
        err.to_string()
            .starts_with("f.rego:3:1: stopped: it ran past its time budget"),
        "{err}"
    );
}

#[test]
fn policy_data_is_the_data_document() {
    let text = r#"package org.data
import rego.v1
metadata := {"id": "data-read", "summary": "s"}
deny contains {"msg": data.greeting, "object": 0} if true
"#;
    let data = serde_json::json!({"greeting": "hello"});
    let p = Policies::compile(vec![module("d.rego", text)], Some(&data)).expect("compiles");
    let mut e = p.engine.clone();
    e.set_input(Value::new_object());
    let v = e.eval_rule("data.org.data.deny".into()).expect("evaluates");
    assert!(v.to_json_str().expect("json").contains("hello"));
}

#[test]
fn bundled_rego_tests_pass() {
    let report = testing::run(&[]).expect("bundled tests load");
    assert!(report.results.len() >= 20, "{}", report.render());
    assert!(report.passed(), "{}", report.render());
}
