use super::*;
use crate::yaml::{Budget, parse};

thread_local! {
    /// What this test's runs skipped (tests run on threads of their own).
    static SKIPPED: std::cell::RefCell<SkipSet> = std::cell::RefCell::default();
}

/// Messages of the violations of `object` against the rules of `schema`.
fn run(schema: &str, object: &str) -> Vec<String> {
    let mut messages = Vec::new();
    violations(schema, object, |v| messages.push(v.message.clone()));
    messages
}

/// Each violation of `object` under `schema`'s rules, with the object's tree alive.
fn violations(schema: &str, object: &str, mut each: impl FnMut(&super::Violation<'_>)) {
    let s = parse(schema, Budget::default());
    let o = parse(object, Budget::default());
    let skips = Skips::default();
    let mut out = Vec::new();
    if let Some(rules) = Rules::compile(s.docs[0].root(), "Thing", "v1", &skips) {
        rules.validate(o.docs[0].root(), "Thing", true, &skips, &mut out);
    }
    SKIPPED.with(|m| m.borrow_mut().merge(skips.take()));
    out.iter().for_each(&mut each);
}

fn skip_of_rule(rule: &str) -> Option<Skip> {
    SKIPPED.with(|m| {
        m.borrow()
            .0
            .get(&("Thing v1".to_string(), rule.to_string()))
            .cloned()
    })
}

#[test]
fn self_is_typed_as_the_api_server_types_it() {
    let schema = r#"
type: object
properties:
  spec:
    type: object
    x-kubernetes-validations:
      - rule: self.max__dash__gpus == 2
      - rule: self.__namespace__ == 'ml'
      - rule: "!has(self.extra)"
      - rule: self.mode == 'shared'
      - rule: type(self.share) == double && self.share == 1.0
      - rule: self.labels['a.b/c'] == 'on'
      - rule: self.free.x.y == 1
    properties:
      max-gpus: {type: integer}
      namespace: {type: string}
      mode: {type: string, default: shared}
      share: {type: number}
      labels: {type: object, additionalProperties: {type: string}}
      free: {type: object, x-kubernetes-preserve-unknown-fields: true}
x-kubernetes-validations:
  - rule: "!has(self.metadata.labels) && self.metadata.name == 'x' && self.kind == 'Thing'"
"#;
    let object = "apiVersion: a/v1\nkind: Thing\nmetadata: {name: x, labels: {a: b}}\nspec:\n  max-gpus: 2\n  namespace: ml\n  extra: 1\n  share: 1\n  labels: {a.b/c: 'on'}\n  free: {x: {y: 1}}\n";
    assert_eq!(run(schema, object), Vec::<String>::new());
    for rule in schema
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- rule: "))
    {
        let rule = rule.trim_matches('"');
        assert_eq!(skip_of_rule(rule), None, "{rule}");
    }
}

#[test]
fn rules_at_every_level_report_their_message() {
    let schema = r#"
type: object
properties:
  spec:
    type: object
    properties:
      list:
        type: array
        x-kubernetes-validations:
          - {rule: self.size() < 3, message: short list}
        items:
          type: object
          properties: {n: {type: integer, x-kubernetes-validations: [{rule: self > 0}]}}
          x-kubernetes-validations:
            - {rule: has(self.n), message: n is set, reason: FieldValueRequired}
      map:
        type: object
        additionalProperties:
          type: string
          x-kubernetes-validations:
            - {rule: self != '', messageExpression: "'empty ' + 'value'"}
    x-kubernetes-validations:
      - {rule: self.list.size() == 0, message: no list, fieldPath: ".map['k']"}
"#;
    let object = "spec:\n  list: [{n: 1}, {n: 0}, {}]\n  map: {k: ''}\n";
    let found = run(schema, object);
    let shown: Vec<&str> = found
        .iter()
        .map(|m| m.split(" (a CEL rule").next().unwrap())
        .collect();
    assert_eq!(
        shown,
        [
            "`spec.map.k`: no list",
            "`spec.list`: short list",
            "`spec.list[1].n`: failed rule: self > 0",
            "`spec.list[2]`: Required value: n is set",
            "`spec.map.k`: empty value",
        ]
    );
}

#[test]
fn kubernetes_library_functions() {
    let schema = r#"
type: object
x-kubernetes-validations:
  - rule: self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3 && self.l.isSorted()
  - rule: self.l.indexOf(2) == 1 && self.l.lastIndexOf(9) == -1 && !['b', 'a'].isSorted()
  - rule: self.s.find('[0-9]+') == '12' && self.s.findAll('[a-z]') == ['a', 'b']
  - rule: self.s.findAll('[a-z]', 1) == ['a'] && self.s.split('-') == ['a', '12', 'b']
  - rule: sets.contains(self.l, [1, 2]) && sets.intersects(self.l, [3, 4]) && sets.equivalent([1, 2], [2, 1])
  - rule: isQuantity('10Gi') && !isQuantity('ten') && 'A'.lowerAscii() == 'a' && ['a', 'b'].join('/') == 'a/b'
  - rule: duration('1h30m') > duration('90s')
properties:
  l: {type: array, items: {type: integer}}
  s: {type: string}
"#;
    let object = "l: [1, 2, 3]\ns: a-12-b\n";
    assert_eq!(run(schema, object), Vec::<String>::new());
    let object = "l: [3, 2]\ns: x\n";
    assert_eq!(run(schema, object).len(), 4);
    for rule in schema.lines().filter_map(|l| l.strip_prefix("  - rule: ")) {
        assert_eq!(skip_of_rule(rule), None, "{rule}");
    }
}

#[test]
fn weird_rules_are_skipped_never_reported() {
    let deep = format!("{}true{}", "(".repeat(500), ")".repeat(500));
    let chain = vec!["!self.a"; 1000].join(" || ");
    let huge = format!("'{}' == ''", "x".repeat(MAX_RULE_LEN));
    let nested = "self.l.all(a, self.l.all(b, self.l.all(c, self.l.all(d, a == d))))";
    let schema = format!(
        "type: object\nx-kubernetes-validations:\n  - rule: [not, a, string]\n  - rule: {{a: b}}\n  - rule: 5\n  - rule: 'self.a ==='\n  - rule: \"{deep}\"\n  - rule: \"{chain}\"\n  - rule: \"{huge}\"\n  - rule: \"{nested}\"\n  - rule: self.missing.field\n  - rule: isURL(self.a)\n  - rule: self.a.startsWith('x')\n  - rule: self.a == oldSelf.a\n  - message: no rule at all\n  - 7\nproperties:\n  a: {{type: boolean}}\n  l: {{type: array, items: {{type: integer}}}}\n"
    );
    let list: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    let object = format!("a: false\nl: [{}]\n", list.join(", "));
    assert_eq!(run(&schema, &object), Vec::<String>::new());
    assert_eq!(skip_of_rule("self.a ==="), Some(Skip::Compile));
    assert_eq!(skip_of_rule(&deep), Some(Skip::Compile));
    // Long chains of one operator are balanced by the parser: evaluated, and they hold.
    assert_eq!(skip_of_rule(&chain), None);
    assert_eq!(skip_of_rule(&huge), Some(Skip::Compile));
    assert_eq!(skip_of_rule(nested), Some(Skip::Cost));
    assert_eq!(skip_of_rule("5"), Some(Skip::Runtime));
    assert_eq!(
        skip_of_rule("isURL(self.a)"),
        Some(Skip::Unsupported("isURL".into()))
    );
    assert_eq!(skip_of_rule("self.a == oldSelf.a"), None);
    assert_eq!(skip_of_rule("self.a.startsWith('x')"), Some(Skip::Runtime));
}

#[test]
fn schemas_without_rules_compile_nothing() {
    let s = parse(
        "type: object\nproperties: {a: {type: string}}\n",
        Budget::default(),
    );
    assert!(Rules::compile(s.docs[0].root(), "T", "v1", &Skips::default()).is_none());
}

#[test]
fn only_comprehensions_over_the_same_data_multiply() {
    let n = |rule: &str| loops(env().compile(rule).unwrap().expression(), 0);
    assert_eq!(n("self.size() > 0"), Some(0));
    assert_eq!(n("self.all(x, x > 0)"), Some(1));
    assert_eq!(n("self.all(x, self.exists(y, y == x))"), Some(2));
    assert_eq!(
        n("self.groups.all(g, g.flavors.all(f, f.resources.all(r, !has(r.limit))))"),
        Some(1)
    );
}

#[test]
fn field_paths() {
    assert_eq!(
        field_path(".a.b['c.d'][2]"),
        Some(vec![
            PathSeg::Key("a".into()),
            PathSeg::Key("b".into()),
            PathSeg::Key("c.d".into()),
            PathSeg::Idx(2),
        ])
    );
    assert_eq!(field_path("a"), None);
    assert_eq!(field_path(".a[x"), None);
    assert_eq!(field_path(".."), None);
}

#[test]
fn rules_the_object_makes_fail_are_rejections() {
    let schema = r#"
type: object
x-kubernetes-validations:
  - {rule: "!has(self.topologyName) || self.nodeLabels.size() >= 1", message: needs labels}
  - rule: self.values.all(v, int(v) >= 0)
  - rule: self.values.size() == 0 || double(self.values[0]) >= 0.0
  - rule: self.l.size() == 0 || self.l[2] > 0
  - rule: "!has(self.n) || 10 / self.n > 1"
  - rule: "!has(self.d) || duration(self.d) > duration('1s')"
  - rule: "!has(self.s) || duration(self.s) > duration('1s')"
  - rule: isURL('x') || self.nodeLabels.size() >= 1
  - rule: self.mode.size() > 0
properties:
  mode: {type: string, default: all}
  topologyName: {type: string}
  nodeLabels: {type: object, additionalProperties: {type: string}}
  values: {type: array, items: {type: string}}
  l: {type: array, items: {type: integer}}
  n: {type: integer}
  d: {type: string, format: duration}
  s: {type: string}
"#;
    let found = run(
        schema,
        "topologyName: t\nvalues: [a]\nl: [1]\nn: 0\nd: x\ns: 5µs\n",
    );
    let why: Vec<&str> = found
        .iter()
        .map(|m| {
            assert!(m.contains("cannot be evaluated on this object"), "{m}");
            assert!(m.contains("the API server rejects the Thing"), "{m}");
            let why = m.split(" evaluated on this object (").nth(1).unwrap();
            why.split("): ").next().unwrap()
        })
        .collect();
    assert_eq!(
        why,
        [
            "no such key: nodeLabels",
            "int() conversion failed: string parse error: invalid digit found in string",
            "double() conversion failed: string parse error: invalid float literal",
            "index out of bounds: Int(2)",
            "division by zero",
        ]
    );
    // In doubt, skipped: a `format`ted string (a duration to the API server), a unit Go reads
    // and gpuops does not, an unsupported call beside the error, an explicit null, a
    // placeholder, a hexadecimal float.
    assert_eq!(
        skip_of_rule("!has(self.d) || duration(self.d) > duration('1s')"),
        Some(Skip::Runtime)
    );
    assert_eq!(
        skip_of_rule("!has(self.s) || duration(self.s) > duration('1s')"),
        Some(Skip::Runtime)
    );
    assert_eq!(
        skip_of_rule("isURL('x') || self.nodeLabels.size() >= 1"),
        Some(Skip::Runtime)
    );
    let found = run(
        schema,
        "topologyName: t\nnodeLabels: null\nvalues: ['${X}']\n",
    );
    assert_eq!(found, Vec::<String>::new());
    // `has()` guards hold and defaults are filled in before the rules run: neither fails here.
    let found = run(schema, "values: ['0x1p3']\nl: []\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("int() conversion failed"), "{found:?}");
}

#[test]
fn a_rule_without_field_path_points_at_the_field_its_message_names() {
    let schema = r#"
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer}
      scale: {type: object, properties: {enabled: {type: boolean}}}
    x-kubernetes-validations:
      - rule: "!(has(self.scale) && self.scale.enabled && has(self.replicas))"
        message: spec.replicas cannot be set when spec.scale.enabled is true
"#;
    let object = "spec:\n  scale: {enabled: true}\n  replicas: 1\n";
    let mut found = Vec::new();
    violations(schema, object, |v| {
        found.push((v.message.clone(), v.node.span().start_pos(object).line))
    });
    assert_eq!(found.len(), 1);
    assert!(
        found[0]
            .0
            .starts_with("`spec.replicas`: spec.replicas cannot"),
        "{}",
        found[0].0
    );
    // At the value of `replicas` (line 3), not at `spec`.
    assert_eq!(found[0].1, 3);
}
