//! `x-kubernetes-validations` (CEL rules) of user CRDs, evaluated with the `cel` crate at the
//! schema node that declares them, with `self` typed as the API server types it: declared
//! properties only (unknown fields are pruned first), schema defaults filled in, `number` fields
//! as doubles, property names escaped (`__dash__`, `__dot__`, …).
//!
//! A rule whose evaluation fails on the object's own data (a missing field, `int()` of a value
//! that is no integer) is a rejection, as at the API server (`faults`). A rule that does not
//! compile, calls a function not registered here, fails at run time for another reason or is
//! over the cost guard is skipped: it never produces a finding, and [`Skips`] counts it.
//! Transition rules (`oldSelf`) only apply on update and are not run.

use super::check::Violation;
use crate::quantity::is_placeholder;
use crate::yaml::{Node, Value as YValue};
use ::cel::common::types::{LIST_TYPE, STRING_TYPE};
use ::cel::common::value::{CowVal, Val};
use ::cel::objects::{Key, Map};
use ::cel::{Context, Env, ExecutionError, Program, Value};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Longer rules are not compiled (Kubernetes bounds rules by cost; this bounds the parser).
const MAX_RULE_LEN: usize = 16 * 1024;
/// Deeper expression trees are not evaluated: the interpreter recurses once per level.
const MAX_AST_DEPTH: usize = 64;
/// Rules with brackets nested deeper are not compiled: the parser takes a lot of stack per level.
const MAX_NESTING: usize = 32;
/// The stack rules are compiled on (enough for [`MAX_NESTING`] even in unoptimised builds).
const PARSER_STACK: usize = 64 << 20;
/// The evaluation budget: (nodes under `self`) ^ (comprehension nesting) must stay below it.
const MAX_COST: f64 = 1e7;
/// Schemas nested deeper than this are not searched for rules.
const MAX_SCHEMA_DEPTH: usize = 64;

/// The environment every rule runs in: CEL's standard library, the strings extension, and the
/// Kubernetes list, regex and set functions that are cheap to provide.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Registration only fails on a duplicate overload, which these are not; a failure
        // leaves the function unknown (the rules calling it are skipped), never a panic.
        let _ = env.add_extension(::cel::extensions::strings);
        let _ = k8s::register(&mut env);
        Arc::new(env)
    })
}

struct Rule {
    text: String,
    program: Program,
    /// How many comprehensions (`all`, `exists`, `map`, …) nest at most.
    loops: u32,
    /// Every function the rule calls is one gpuops evaluates: no error of an unsupported call
    /// can hide behind an error the object causes.
    calls_known: bool,
    message: Option<String>,
    message_expression: Option<Program>,
    field_path: Option<(String, Vec<PathSeg>)>,
    reason: Option<&'static str>,
}

#[derive(Debug, PartialEq)]
enum PathSeg {
    Key(String),
    Idx(usize),
}

/// The part of a CRD version's schema that rules and `self` need.
#[derive(Default)]
struct Shape {
    /// `type: number`: integers are doubles to CEL.
    number: bool,
    /// `x-kubernetes-preserve-unknown-fields` (or no schema for the children): keep everything.
    preserve: bool,
    /// Declared properties: (name in YAML, name in CEL, shape).
    props: Vec<(String, String, Shape)>,
    items: Option<Box<Shape>>,
    additional: Option<Box<Shape>>,
    default: Option<Value>,
    rules: Vec<Rule>,
    /// Rules here or below.
    has_rules: bool,
    /// A string with a `format` the API server hands CEL as another type (`duration`,
    /// `date-time`, `byte`), which gpuops leaves a string.
    formatted: bool,
    /// Such a string here or below.
    typed: bool,
}

/// The CEL rules of one CRD version, compiled once.
pub struct Rules {
    root: Shape,
    /// `Kind version`, for messages and the skip note.
    what: String,
}

/// Whether a schema declares any `x-kubernetes-validations` (so that nothing is compiled, nor
/// the CEL environment built, for CRDs without them).
fn declares_rules(schema: Node<'_>, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH {
        return false;
    }
    match schema.value() {
        YValue::Map(m) => m.iter().any(|(k, v)| {
            k.as_str() == Some("x-kubernetes-validations") || declares_rules(v, depth + 1)
        }),
        YValue::Seq(s) => s.iter().any(|v| declares_rules(v, depth + 1)),
        YValue::Scalar { .. } => false,
    }
}

impl Rules {
    /// The rules of `schema` (a version's `openAPIV3Schema`), if it declares any.
    /// Rules that cannot be compiled are counted in `skips`.
    pub fn compile(schema: Node<'_>, kind: &str, version: &str, skips: &Skips) -> Option<Rules> {
        if !declares_rules(schema, 0) {
            return None;
        }
        let what = format!("{kind} {version}");
        // On a thread of its own: the parser recurses deeply, and a panic in it costs only
        // this CRD's rules.
        let root = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .stack_size(PARSER_STACK)
                .spawn_scoped(scope, || shape(schema, &what, skips, 0))
                .ok()?
                .join()
                .ok()
        })?;
        root.has_rules.then_some(Rules { root, what })
    }
}

fn shape(schema: Node<'_>, what: &str, skips: &Skips, depth: usize) -> Shape {
    let mut s = Shape::default();
    if depth > MAX_SCHEMA_DEPTH || schema.as_map().is_none() {
        s.preserve = true;
        return s;
    }
    s.number = schema.get("type").and_then(Node::as_str) == Some("number");
    s.formatted = matches!(
        schema.get("format").and_then(Node::as_str),
        Some("byte" | "duration" | "date" | "date-time")
    );
    s.typed = s.formatted;
    s.preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Node::as_str)
        == Some("true");
    for (name, _, sub) in schema.get("properties").into_iter().flat_map(Node::entries) {
        let child = shape(sub, what, skips, depth + 1);
        s.has_rules |= child.has_rules;
        s.typed |= child.typed;
        s.props.push((name.to_string(), escape(name), child));
    }
    if let Some(items) = schema.get("items").filter(|i| i.as_map().is_some()) {
        let child = shape(items, what, skips, depth + 1);
        s.has_rules |= child.has_rules;
        s.typed |= child.typed;
        s.items = Some(Box::new(child));
    }
    match schema.get("additionalProperties") {
        Some(a) if a.as_map().is_some() => {
            let child = shape(a, what, skips, depth + 1);
            s.has_rules |= child.has_rules;
            s.typed |= child.typed;
            s.additional = Some(Box::new(child));
        }
        Some(a) if a.as_str() == Some("true") => s.preserve = true,
        _ => {}
    }
    // No type and no structure: the schema describes nothing, so nothing is pruned. (An
    // object schema with no properties is an empty object to the API server.)
    if schema.get("type").is_none()
        && s.props.is_empty()
        && s.items.is_none()
        && s.additional.is_none()
    {
        s.preserve = true;
    }
    if let Some(d) = schema.get("default") {
        s.default = Some(to_cel(d, Some(&s), false));
    }
    for r in schema
        .get("x-kubernetes-validations")
        .into_iter()
        .flat_map(Node::items)
    {
        if let Some(rule) = compile_rule(r, what, skips) {
            s.rules.push(rule);
        }
    }
    s.has_rules |= !s.rules.is_empty();
    s
}

/// One rule entry; `None` for transition rules and for what cannot be run (counted).
fn compile_rule(r: Node<'_>, what: &str, skips: &Skips) -> Option<Rule> {
    let text = r.get("rule").filter(|n| n.yaml11().is_some())?.as_str()?;
    if r.get("optionalOldSelf").and_then(Node::as_str) == Some("true") {
        return None;
    }
    if text.len() > MAX_RULE_LEN || nesting(text) > MAX_NESTING {
        skips.note(what, text, Skip::Compile);
        return None;
    }
    let program = match env().compile(text) {
        Ok(p) => p,
        Err(_) => {
            skips.note(what, text, Skip::Compile);
            return None;
        }
    };
    if program.references().has_variable("oldSelf") {
        return None;
    }
    let Some(comprehensions) = loops(program.expression(), 0) else {
        skips.note(what, text, Skip::Cost);
        return None;
    };
    let scalar = |key: &str| {
        r.get(key)
            .filter(|n| n.yaml11().is_some())
            .and_then(Node::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let message_expression = scalar("messageExpression")
        .filter(|m| m.len() <= MAX_RULE_LEN && nesting(m) <= MAX_NESTING)
        .and_then(|m| env().compile(m).ok())
        .filter(|p| loops(p.expression(), 0).is_some());
    let field_path = scalar("fieldPath").and_then(|p| Some((p.to_string(), field_path(p)?)));
    let reason = scalar("reason").map(|r| match r {
        "FieldValueForbidden" => "Forbidden",
        "FieldValueRequired" => "Required value",
        "FieldValueDuplicate" => "Duplicate value",
        _ => "Invalid value",
    });
    // Operators (`_+_`, `@in`) are the interpreter's own; named functions may be missing.
    let calls_known = program
        .references()
        .functions()
        .iter()
        .all(|f| !f.starts_with(|c: char| c.is_ascii_alphabetic()) || known_function(f));
    Some(Rule {
        text: text.to_string(),
        program,
        loops: comprehensions,
        calls_known,
        message: scalar("message").map(str::to_string),
        message_expression,
        field_path,
        reason,
    })
}

/// How deep brackets nest in a rule's text, string literals left out.
fn nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// How many comprehensions (`all`, `exists`, `map`, …) nest in `e`, counting only those that
/// multiply the work: one that walks a part of an enclosing comprehension's element
/// (`self.groups.all(g, g.flavors.all(f, …))`) visits each node once overall. `None` when the
/// tree is deeper than the interpreter should recurse.
fn loops(e: &::cel::IdedExpr, depth: usize) -> Option<u32> {
    Loops::default().of(e, depth)
}

#[derive(Default)]
struct Loops {
    /// Iteration variables in scope.
    vars: Vec<String>,
}

impl Loops {
    fn of(&mut self, e: &::cel::IdedExpr, depth: usize) -> Option<u32> {
        use ::cel::common::ast::{EntryExpr, Expr};
        if depth > MAX_AST_DEPTH {
            return None;
        }
        let mut m = 0;
        match &e.expr {
            Expr::Call(c) => {
                for a in c.target.iter().map(|t| &**t).chain(c.args.iter()) {
                    m = m.max(self.of(a, depth + 1)?);
                }
            }
            Expr::Comprehension(c) => {
                let range = self.of(&c.iter_range, depth + 1)?;
                let nested =
                    root_ident(&c.iter_range).is_some_and(|r| self.vars.iter().any(|v| v == r));
                let before = self.vars.len();
                self.vars.push(c.iter_var.clone());
                self.vars.extend(c.iter_var2.iter().cloned());
                let mut body = 0;
                for part in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    body = body.max(self.of(part, depth + 1)?);
                }
                self.vars.truncate(before);
                m = range.max(body + u32::from(!nested));
            }
            Expr::List(l) => {
                for x in &l.elements {
                    m = m.max(self.of(x, depth + 1)?);
                }
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(en) = &entry.expr {
                        m = m
                            .max(self.of(&en.key, depth + 1)?)
                            .max(self.of(&en.value, depth + 1)?);
                    }
                }
            }
            Expr::Struct(st) => {
                for entry in &st.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        m = m.max(self.of(&f.value, depth + 1)?);
                    }
                }
            }
            Expr::Select(sel) => m = self.of(&sel.operand, depth + 1)?,
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
        Some(m)
    }
}

/// `x` of `x.a.b`.
fn root_ident(e: &::cel::IdedExpr) -> Option<&str> {
    use ::cel::common::ast::Expr;
    match &e.expr {
        Expr::Ident(name) => Some(name),
        Expr::Select(s) => root_ident(&s.operand),
        _ => None,
    }
}

/// Kubernetes' `fieldPath`: `.a.b`, `.a['b.c']`, `.list[0]`, relative to the rule's node.
fn field_path(p: &str) -> Option<Vec<PathSeg>> {
    let mut segs = Vec::new();
    let mut rest = p;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            segs.push(PathSeg::Key(r[..end].to_string()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let inner = r[..end].trim();
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            segs.push(match quoted {
                Some(k) => PathSeg::Key(k.to_string()),
                None => PathSeg::Idx(inner.parse().ok()?),
            });
            rest = &r[end + 1..];
        } else {
            return None;
        }
    }
    Some(segs)
}

/// A property name as CEL sees it (Kubernetes' escaping of names that are not identifiers).
fn escape(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    name.replace("__", "__underscores__")
        .replace('.', "__dot__")
        .replace('-', "__dash__")
        .replace('/', "__slash__")
}

/// `n` as the API server hands it to CEL under schema `s` (`None`: no schema, keep all).
fn to_cel(n: Node<'_>, s: Option<&Shape>, root: bool) -> Value {
    match n.value() {
        YValue::Map(entries) => {
            let mut m: HashMap<Key, Value> = HashMap::with_capacity(entries.len());
            for (k, v) in entries {
                let Some(name) = k.as_str() else { continue };
                if v.is_null() {
                    continue;
                }
                let Some(s) = s else {
                    m.insert(Key::from(name), to_cel(v, None, false));
                    continue;
                };
                // Every object has these, whether or not its schema lists them.
                if root && matches!(name, "apiVersion" | "kind" | "metadata") {
                    let value = if name == "metadata" {
                        metadata(v)
                    } else {
                        to_cel(v, None, false)
                    };
                    m.insert(Key::from(name), value);
                } else if let Some((_, cel_name, sub)) = s.props.iter().find(|(p, _, _)| p == name)
                {
                    m.insert(Key::from(cel_name.as_str()), to_cel(v, Some(sub), false));
                } else if let Some(sub) = &s.additional {
                    m.insert(Key::from(name), to_cel(v, Some(sub), false));
                } else if s.preserve {
                    m.insert(Key::from(name), to_cel(v, None, false));
                }
                // Anything else is pruned by the API server before rules run.
            }
            for (name, cel_name, sub) in s.iter().flat_map(|s| s.props.iter()) {
                if let Some(d) = &sub.default
                    && n.get(name).is_none_or(Node::is_null)
                {
                    m.insert(Key::from(cel_name.as_str()), d.clone());
                }
            }
            Value::Map(Map::from(m))
        }
        YValue::Seq(items) => {
            let item = s.and_then(|s| s.items.as_deref());
            Value::List(Arc::new(
                items.iter().map(|i| to_cel(i, item, false)).collect(),
            ))
        }
        YValue::Scalar { .. } => match super::crd::to_json(n) {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(num) => match num.as_i64() {
                Some(i) if !s.is_some_and(|s| s.number) => Value::Int(i),
                _ => Value::Float(num.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(t) => Value::String(Arc::new(t)),
            _ => Value::Null,
        },
    }
}

/// Rules see only `name` and `generateName` of an object's metadata.
fn metadata(n: Node<'_>) -> Value {
    let mut m: HashMap<Key, Value> = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(v) = n.get(key).and_then(Node::as_str) {
            m.insert(Key::from(key), Value::String(Arc::new(v.to_string())));
        }
    }
    Value::Map(Map::from(m))
}

/// Whether the environment declares a function of that name (a context refuses to add one).
fn known_function(name: &str) -> bool {
    Context::with_env(Arc::clone(env()))
        .add_function(name, || false)
        .is_err()
}

mod faults;
mod k8s;
mod skips;
mod walk;

use skips::skip_of;
pub use skips::{Skip, SkipSet, Skips};

#[cfg(test)]
mod tests;
