use super::*;
use hcl_edit::structure::{Body, Structure};

fn scope_of<'a>(bodies: &'a [Body], texts: &'a [&'a str]) -> Scope<'a> {
    let mut s = Scope::default();
    for (i, b) in bodies.iter().enumerate() {
        s.origins.push(Origin {
            text: texts[i],
            dir: std::path::Path::new("mod"),
        });
        for st in b.iter() {
            if let Structure::Block(blk) = st {
                for a in blk.body.iter().filter_map(|x| x.as_attribute()) {
                    s.locals.insert(a.key.as_str().to_string(), (i, &a.value));
                }
            }
        }
    }
    s
}

fn eval_local(texts: &[&str], name: &str) -> V {
    let bodies: Vec<Body> = texts
        .iter()
        .map(|t| hcl_edit::parser::parse_body(t).unwrap())
        .collect();
    let s = scope_of(&bodies, texts);
    let (o, e) = s.locals[name];
    Eval::new(&s, o).eval(e)
}

#[test]
fn locals_templates_conditionals_and_functions_are_evaluated() {
    let v = eval_local(
        &[r#"locals {
  name = "gpu"
  on   = true
  pool = "${local.name}-pool"
  pick = local.on ? local.pool : "off"
  m    = merge({ a = 1 }, { b = "x" }, { a = 2 })
  l    = concat(["a"], ["b"])
  k    = lookup(local.m, "b", "none")
  f    = { for k, v in local.m : k => v if k != "b" }
  u    = module.eks.cluster_name
  t    = try(module.x.y, "fallback")
}"#],
        "pick",
    );
    assert_eq!(v.str(), Some("gpu-pool"));
    let text = r#"locals {
  m    = merge({ a = 1 }, { b = "x" }, { a = 2 })
  k    = lookup(local.m, "b", "none")
  f    = { for k, v in local.m : k => v if k != "b" }
  u    = module.eks.cluster_name
  t    = try(module.x.y, "fallback")
  e    = try(local.m.missing, "fallback")
}"#;
    let m = eval_local(&[text], "m");
    assert_eq!(
        m.entries()
            .iter()
            .map(|(k, _, v)| (k.as_str(), v.str().unwrap()))
            .collect::<Vec<_>>(),
        [("b", "x"), ("a", "2")]
    );
    assert_eq!(eval_local(&[text], "k").str(), Some("x"));
    assert_eq!(eval_local(&[text], "f").entries().len(), 1);
    assert!(
        matches!(eval_local(&[text], "u").val, Val::Unknown(ref s) if s == "module.eks.cluster_name")
    );
    // `try` catches an error (a key the known map lacks), not a value still unknown (a module's
    // output before apply), which it passes on.
    assert_eq!(eval_local(&[text], "e").str(), Some("fallback"));
    assert!(eval_local(&[text], "t").is_unknown());
}

#[test]
fn conversions_keep_the_type_they_name() {
    let text = r#"locals {
  s = tostring(8 / 2)
  b = tostring(true)
  n = tonumber("4")
  t = tobool("true")
}"#;
    assert!(matches!(eval_local(&[text], "s").val, Val::Str(ref x) if x == "4"));
    assert!(matches!(eval_local(&[text], "b").val, Val::Str(ref x) if x == "true"));
    assert!(matches!(eval_local(&[text], "n").val, Val::Num(ref x) if x == "4"));
    assert!(matches!(eval_local(&[text], "t").val, Val::Bool(true)));
}

#[test]
fn a_value_from_another_file_is_placed_at_the_reference() {
    let a = "locals {\n  x = local.y\n}\n";
    let b = "locals {\n  y = \"v\"\n}\n";
    let v = eval_local(&[a, b], "x");
    assert_eq!(v.str(), Some("v"));
    assert_eq!(&a[v.span.clone()], "local.y");
    let same = "locals {\n  x = local.y\n  y = \"v\"\n}\n";
    let v = eval_local(&[same], "x");
    assert_eq!(&same[v.span.clone()], "\"v\"");
}

#[test]
fn a_local_that_refers_to_itself_is_unknown() {
    let v = eval_local(&["locals {\n  x = local.x\n}\n"], "x");
    assert!(v.is_unknown());
}

#[test]
fn a_field_merged_in_on_a_value_still_unknown_is_not_left_out() {
    // A module's pool spec, its `requirements` merged in unless the variable's list is empty:
    // with the variable unknown, so is whether the field is there.
    let text = r#"locals {
  spec = merge({ a = 1 }, try(length(var.pool.requirements), 0) == 0 ? {} : { requirements = var.pool.requirements })
}"#;
    assert!(eval_local(&[text], "spec").is_unknown());
}

#[test]
fn a_group_merged_in_when_a_variable_is_set_is_left_out_by_its_default() {
    // An optional node group added only with a reservation id, here empty.
    let text = r#"locals {
  reservation = ""
  groups = merge({ gpu = { a = 1 } }, length(local.reservation) > 0 ? { cbr = { b = 2 } } : {})
  n      = length(["a", "b"])
  m      = length({ a = 1 })
}"#;
    let groups = eval_local(&[text], "groups");
    let names: Vec<&str> = groups
        .entries()
        .iter()
        .map(|(k, _, _)| k.as_str())
        .collect();
    assert_eq!(names, ["gpu"]);
    assert_eq!(eval_local(&[text], "n").str(), Some("2"));
    assert_eq!(eval_local(&[text], "m").str(), Some("1"));
}
