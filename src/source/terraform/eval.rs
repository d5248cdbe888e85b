//! What a Terraform expression is before any provider runs: literals, `local.*`, `var.*` (their
//! defaults, or `terraform.tfvars`/`*.auto.tfvars`), `each`/`count` of a static `for_each`/`count`,
//! `path.module`, string templates, conditionals, `for` expressions and a few pure functions
//! (`merge`, `concat`, `lookup`, `try`, `coalesce`, `tostring`…). Anything else (a resource's
//! attribute, a module's output, a data source) is [`Val::Unknown`]: a placeholder that rules
//! never judge.
//!
//! Every value carries the span it is written at in the file being read. A value that comes from
//! another file (a local in `locals.tf`, a `.tfvars` value) takes the span of the reference to it,
//! so a finding on it points at the line that uses it.

use hcl_edit::Span as _;
use hcl_edit::expr::{BinaryOperator, Expression, ObjectKey, TraversalOperator, UnaryOperator};
use hcl_edit::template::{Element, Template};
use std::collections::HashMap;
use std::ops::Range;

/// A value, where it is written.
#[derive(Clone, Debug)]
pub struct V {
    pub val: Val,
    pub span: Range<usize>,
}

#[derive(Clone, Debug)]
pub enum Val {
    Null,
    Bool(bool),
    /// As written (`10`, `1.5`).
    Num(String),
    Str(String),
    List(Vec<V>),
    /// Keys with their own spans, in the order written.
    Map(Vec<(String, Range<usize>, V)>),
    /// Known only when Terraform runs; the text as written (`module.eks.cluster_name`).
    Unknown(String),
}

impl V {
    pub fn str(&self) -> Option<&str> {
        match &self.val {
            Val::Str(s) | Val::Num(s) => Some(s),
            _ => None,
        }
    }
    pub fn get(&self, key: &str) -> Option<&V> {
        match &self.val {
            Val::Map(m) => m.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| v),
            _ => None,
        }
    }
    pub fn items(&self) -> &[V] {
        match &self.val {
            Val::List(l) => l,
            _ => &[],
        }
    }
    pub fn entries(&self) -> &[(String, Range<usize>, V)] {
        match &self.val {
            Val::Map(m) => m,
            _ => &[],
        }
    }
    /// A collection's elements as key and value: a map's keys, a list's indexes (with
    /// `set_keys`, the elements themselves, as `for_each` over a set gives). `None`: not a
    /// known collection.
    pub fn pairs(&self, set_keys: bool) -> Option<Vec<(V, V)>> {
        let key = |val: Val, span: &Range<usize>| V {
            val,
            span: span.clone(),
        };
        Some(match &self.val {
            Val::List(l) if set_keys => l.iter().map(|v| (v.clone(), v.clone())).collect(),
            Val::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, v)| (key(Val::Num(i.to_string()), &v.span), v.clone()))
                .collect(),
            Val::Map(m) => m
                .iter()
                .map(|(k, ks, v)| (key(Val::Str(k.clone()), ks), v.clone()))
                .collect(),
            _ => return None,
        })
    }
    pub fn is_unknown(&self) -> bool {
        matches!(self.val, Val::Unknown(_))
    }
    /// The same value, every node at `span` (it came from another file).
    fn at(mut self, span: &Range<usize>) -> V {
        self.span = span.clone();
        match &mut self.val {
            Val::List(l) => {
                for v in l.iter_mut() {
                    *v = std::mem::replace(v, unknown("", 0..0)).at(span);
                }
            }
            Val::Map(m) => {
                for (_, ks, v) in m.iter_mut() {
                    *ks = span.clone();
                    *v = std::mem::replace(v, unknown("", 0..0)).at(span);
                }
            }
            _ => {}
        }
        self
    }
}

fn unknown(text: &str, span: Range<usize>) -> V {
    V {
        val: Val::Unknown(text.trim().to_string()),
        span,
    }
}

/// One source of expressions: a `.tf` file of the module or a `.tfvars` file.
pub struct Origin<'a> {
    pub text: &'a str,
    /// Where files named in `file()`/`templatefile()` are found (`path.module`).
    pub dir: &'a std::path::Path,
}

/// What a module defines, by name: `(origin, expression)`.
#[derive(Default)]
pub struct Scope<'a> {
    pub origins: Vec<Origin<'a>>,
    pub locals: HashMap<String, (usize, &'a Expression)>,
    /// Defaults, replaced by `.tfvars` values.
    pub vars: HashMap<String, (usize, &'a Expression)>,
}

/// Nested scopes past this are unknown (a local that refers to itself).
const MAX_DEPTH: u32 = 48;
/// Files `file()`/`templatefile()` read past this size are unknown.
const MAX_READ: u64 = 1 << 20;

/// Evaluates expressions of one file (`file`, an index into the scope's origins).
pub struct Eval<'s, 'a> {
    pub scope: &'s Scope<'a>,
    pub file: usize,
    /// `each.key`/`each.value`, `count.index` and `for` variables, innermost last.
    pub bound: Vec<(String, V)>,
    depth: u32,
    /// Locals and variables already evaluated (spans of their definitions); `None` while one is
    /// being evaluated, so a cycle is unknown and shared references are evaluated once.
    done: HashMap<(bool, String), Option<V>>,
    /// A traversal into a known value found nothing since this was last cleared: an error,
    /// which `try` catches, not a value still unknown, which `try` passes on.
    failed: bool,
}

impl<'s, 'a> Eval<'s, 'a> {
    pub fn new(scope: &'s Scope<'a>, file: usize) -> Self {
        Eval {
            scope,
            file,
            bound: Vec::new(),
            depth: 0,
            done: HashMap::new(),
            failed: false,
        }
    }

    /// `e` as written in the file being read.
    pub fn eval(&mut self, e: &Expression) -> V {
        let file = self.file;
        self.eval_in(e, file)
    }

    fn text(&self, origin: usize, span: &Range<usize>) -> &'a str {
        self.scope
            .origins
            .get(origin)
            .and_then(|o| o.text.get(span.clone()))
            .unwrap_or_default()
    }

    /// `e`, written in `origin`; spans are the origin's.
    fn eval_in(&mut self, e: &Expression, origin: usize) -> V {
        let span = e.span().unwrap_or(0..0);
        if self.depth > MAX_DEPTH {
            return unknown(self.text(origin, &span), span);
        }
        self.depth += 1;
        let v = self.eval_inner(e, origin, span);
        self.depth -= 1;
        v
    }

    fn eval_inner(&mut self, e: &Expression, origin: usize, span: Range<usize>) -> V {
        let val = match e {
            Expression::Null(_) => Val::Null,
            Expression::Bool(b) => Val::Bool(*b.value()),
            Expression::Number(n) => Val::Num(n.value().to_string()),
            Expression::String(s) => Val::Str(s.value().to_string()),
            Expression::Array(a) => Val::List(a.iter().map(|x| self.eval_in(x, origin)).collect()),
            Expression::Object(o) => {
                let mut out = Vec::new();
                for (k, v) in o.iter() {
                    let (key, kspan) = match k {
                        ObjectKey::Ident(i) => (i.as_str().to_string(), i.span().unwrap_or(0..0)),
                        ObjectKey::Expression(x) => {
                            let kv = self.eval_in(x, origin);
                            match kv.str() {
                                Some(s) => (s.to_string(), kv.span.clone()),
                                None => return unknown(self.text(origin, &span), span),
                            }
                        }
                    };
                    let value = self.eval_in(v.expr(), origin);
                    out.push((key, kspan, value));
                }
                Val::Map(out)
            }
            Expression::StringTemplate(t) => return self.template(t, origin, span),
            Expression::HeredocTemplate(_) => Val::Unknown(self.text(origin, &span).into()),
            Expression::Parenthesis(p) => return self.eval_in(p.inner(), origin),
            Expression::Variable(v) => return self.variable(v.as_str(), &[], origin, span),
            Expression::Traversal(t) => match &t.expr {
                Expression::Variable(v) => {
                    let ops: Vec<&TraversalOperator> =
                        t.operators.iter().map(|o| o.value()).collect();
                    return self.variable(v.as_str(), &ops, origin, span);
                }
                base => {
                    let b = self.eval_in(base, origin);
                    let ops: Vec<&TraversalOperator> =
                        t.operators.iter().map(|o| o.value()).collect();
                    return self.traverse(b, &ops, origin, span);
                }
            },
            Expression::Conditional(c) => {
                let cond = self.eval_in(&c.cond_expr, origin);
                return match cond.val {
                    Val::Bool(true) => self.eval_in(&c.true_expr, origin),
                    Val::Bool(false) => self.eval_in(&c.false_expr, origin),
                    _ => unknown(self.text(origin, &span), span),
                };
            }
            Expression::UnaryOp(u) => {
                let x = self.eval_in(&u.expr, origin);
                match (u.operator.value(), &x.val) {
                    (UnaryOperator::Not, Val::Bool(b)) => Val::Bool(!b),
                    (UnaryOperator::Neg, Val::Num(n)) => Val::Num(format!("-{n}")),
                    _ => Val::Unknown(self.text(origin, &span).into()),
                }
            }
            Expression::BinaryOp(b) => {
                let l = self.eval_in(&b.lhs_expr, origin);
                let r = self.eval_in(&b.rhs_expr, origin);
                binary(b.operator.value(), &l.val, &r.val)
                    .unwrap_or_else(|| Val::Unknown(self.text(origin, &span).into()))
            }
            Expression::ForExpr(f) => return self.for_expr(f, origin, span),
            Expression::FuncCall(f) => return self.call(f, origin, span),
        };
        V { val, span }
    }

    /// The value of a template string written in a heredoc (`${local.region}-gpu`), when every
    /// part of it is known.
    pub fn interpolate(&mut self, text: &str) -> Option<String> {
        let t = hcl_edit::parser::parse_template(text).ok()?;
        let file = self.file;
        match self.template(&t, file, 0..0).val {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    fn template(&mut self, t: &Template, origin: usize, span: Range<usize>) -> V {
        let mut out = String::new();
        for el in t.iter() {
            match el {
                Element::Literal(l) => out.push_str(l.value()),
                Element::Interpolation(i) => match self.eval_in(&i.expr, origin).val {
                    Val::Str(s) | Val::Num(s) => out.push_str(&s),
                    Val::Bool(b) => out.push_str(if b { "true" } else { "false" }),
                    _ => return unknown(self.text(origin, &span), span),
                },
                Element::Directive(_) => return unknown(self.text(origin, &span), span),
            }
        }
        V {
            val: Val::Str(out),
            span,
        }
    }

    /// `name` followed by `ops`: a bound name, `local.x`, `var.x`, `path.module`.
    fn variable(
        &mut self,
        name: &str,
        ops: &[&TraversalOperator],
        origin: usize,
        span: Range<usize>,
    ) -> V {
        if let Some((_, v)) = self.bound.iter().rev().find(|(n, _)| n == name) {
            let v = v.clone().at(&span);
            return self.traverse(v, ops, origin, span);
        }
        let attr = |i: usize| match ops.get(i) {
            Some(TraversalOperator::GetAttr(a)) => Some(a.as_str()),
            _ => None,
        };
        let defined = match (name, attr(0)) {
            ("local", Some(n)) => self.scope.locals.get(n).map(|d| (d, (true, n.to_string()))),
            ("var", Some(n)) => self.scope.vars.get(n).map(|d| (d, (false, n.to_string()))),
            ("path", Some("module" | "root" | "cwd")) => {
                let dir = self
                    .scope
                    .origins
                    .get(origin)
                    .map(|o| o.dir.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let v = V {
                    val: Val::Str(dir),
                    span: span.clone(),
                };
                return self.traverse(v, &ops[1..], origin, span);
            }
            _ => None,
        };
        let Some((&(def_origin, expr), key)) = defined else {
            return unknown(self.text(origin, &span), span);
        };
        let mut v = match self.done.get(&key) {
            Some(Some(v)) => v.clone(),
            Some(None) => return unknown(self.text(origin, &span), span),
            None => {
                self.done.insert(key.clone(), None);
                // Names bound here do not reach into the definition (it has its own scope).
                let bound = std::mem::take(&mut self.bound);
                let v = self.eval_in(expr, def_origin);
                self.bound = bound;
                self.done.insert(key, Some(v.clone()));
                v
            }
        };
        if def_origin != origin {
            v = v.at(&span);
        }
        self.traverse(v, &ops[1..], origin, span)
    }

    fn traverse(
        &mut self,
        mut v: V,
        ops: &[&TraversalOperator],
        origin: usize,
        span: Range<usize>,
    ) -> V {
        for op in ops {
            let next = match op {
                TraversalOperator::GetAttr(a) => v.get(a.as_str()).cloned(),
                TraversalOperator::Index(i) => {
                    let k = self.eval_in(i, origin);
                    match (&v.val, &k.val) {
                        (Val::List(l), Val::Num(n)) => {
                            n.parse::<usize>().ok().and_then(|n| l.get(n).cloned())
                        }
                        (Val::Map(_), Val::Str(s)) => v.get(s).cloned(),
                        _ => None,
                    }
                }
                TraversalOperator::LegacyIndex(n) => v.items().get(*n.value() as usize).cloned(),
                _ => None,
            };
            match next {
                Some(n) => v = n,
                None => {
                    self.failed |= !v.is_unknown();
                    return unknown(self.text(origin, &span), span);
                }
            }
        }
        v
    }

    fn for_expr(&mut self, f: &hcl_edit::expr::ForExpr, origin: usize, span: Range<usize>) -> V {
        let coll = self.eval_in(&f.intro.collection_expr, origin);
        let Some(pairs) = coll.pairs(false) else {
            return unknown(self.text(origin, &span), span);
        };
        let key_var = f.intro.key_var.as_ref().map(|k| k.as_str().to_string());
        let value_var = f.intro.value_var.as_str().to_string();
        let mut list = Vec::new();
        let mut map = Vec::new();
        for (k, v) in pairs {
            let mark = self.bound.len();
            if let Some(kv) = &key_var {
                self.bound.push((kv.clone(), k));
            }
            self.bound.push((value_var.clone(), v));
            let keep = match &f.cond {
                Some(c) => match self.eval_in(&c.expr, origin).val {
                    Val::Bool(b) => Some(b),
                    _ => None,
                },
                None => Some(true),
            };
            let item = match keep {
                None => None,
                Some(false) => Some(None),
                Some(true) => {
                    let value = self.eval_in(&f.value_expr, origin);
                    match &f.key_expr {
                        Some(ke) => {
                            let key = self.eval_in(ke, origin);
                            key.str()
                                .map(|s| Some((Some((s.to_string(), key.span.clone())), value)))
                        }
                        None => Some(Some((None, value))),
                    }
                }
            };
            self.bound.truncate(mark);
            match item {
                None => return unknown(self.text(origin, &span), span),
                Some(None) => {}
                Some(Some((Some((k, ks)), v))) if !f.grouping => map.push((k, ks, v)),
                Some(Some((None, v))) => list.push(v),
                Some(Some(_)) => return unknown(self.text(origin, &span), span),
            }
        }
        let val = if f.key_expr.is_some() {
            Val::Map(map)
        } else {
            Val::List(list)
        };
        V { val, span }
    }

    fn call(&mut self, f: &hcl_edit::expr::FuncCall, origin: usize, span: Range<usize>) -> V {
        let name = f.name.name.as_str();
        let unknown_here = |me: &Self| unknown(me.text(origin, &span), span.clone());
        if f.name.is_namespaced() || f.args.expand_final() {
            return unknown_here(self);
        }
        let args: Vec<&Expression> = f.args.iter().collect();
        match name {
            // Conversions keep the type they name: `yamlencode` quotes a number made a string
            // (`tostring(8 / 2)` is "4", not 4).
            "tostring" if args.len() == 1 => {
                let v = self.eval_in(args[0], origin);
                let val = match v.val {
                    Val::Num(n) => Val::Str(n),
                    Val::Bool(b) => Val::Str(b.to_string()),
                    other => other,
                };
                V { val, span: v.span }
            }
            "tonumber" if args.len() == 1 => {
                let v = self.eval_in(args[0], origin);
                let val = match v.val {
                    Val::Str(s) if s.trim().parse::<f64>().is_ok() => {
                        Val::Num(s.trim().to_string())
                    }
                    other => other,
                };
                V { val, span: v.span }
            }
            "tobool" if args.len() == 1 => {
                let v = self.eval_in(args[0], origin);
                let val = match v.val {
                    Val::Str(s) if s == "true" || s == "false" => Val::Bool(s == "true"),
                    other => other,
                };
                V { val, span: v.span }
            }
            "tolist" | "toset" | "tomap" | "sensitive" | "nonsensitive" if args.len() == 1 => {
                self.eval_in(args[0], origin)
            }
            "try" | "coalesce" => {
                for a in &args {
                    self.failed = false;
                    let v = self.eval_in(a, origin);
                    let empty = name == "coalesce"
                        && matches!(&v.val, Val::Null | Val::Str(_) if v.str().is_none_or(str::is_empty));
                    if !v.is_unknown() && !empty {
                        return v;
                    }
                    // `try(each.value.x, 0)` over a value still unknown is unknown: only an
                    // error (a key the known value lacks) falls through to the next argument.
                    if name == "try" && v.is_unknown() && !self.failed {
                        return v;
                    }
                }
                unknown_here(self)
            }
            "length" if args.len() == 1 => {
                let n = match self.eval_in(args[0], origin).val {
                    Val::List(l) => l.len(),
                    Val::Map(m) => m.len(),
                    Val::Str(s) => s.chars().count(),
                    _ => return unknown_here(self),
                };
                V {
                    val: Val::Num(n.to_string()),
                    span,
                }
            }
            "merge" => {
                let mut out: Vec<(String, Range<usize>, V)> = Vec::new();
                for a in &args {
                    let v = self.eval_in(a, origin);
                    match v.val {
                        Val::Map(m) => {
                            for (k, ks, x) in m {
                                out.retain(|(o, _, _)| *o != k);
                                out.push((k, ks, x));
                            }
                        }
                        Val::Null => {}
                        _ => return unknown_here(self),
                    }
                }
                V {
                    val: Val::Map(out),
                    span,
                }
            }
            "concat" => {
                let mut out = Vec::new();
                for a in &args {
                    match self.eval_in(a, origin).val {
                        Val::List(l) => out.extend(l),
                        _ => return unknown_here(self),
                    }
                }
                V {
                    val: Val::List(out),
                    span,
                }
            }
            "lookup" if args.len() >= 2 => {
                let m = self.eval_in(args[0], origin);
                let k = self.eval_in(args[1], origin);
                match (m.val, k.str()) {
                    (Val::Map(entries), Some(k)) => {
                        match entries.into_iter().find(|(n, _, _)| n == k) {
                            Some((_, _, v)) => v,
                            None if args.len() > 2 => self.eval_in(args[2], origin),
                            None => unknown_here(self),
                        }
                    }
                    _ => unknown_here(self),
                }
            }
            "upper" | "lower" | "trimspace" if args.len() == 1 => {
                let v = self.eval_in(args[0], origin);
                match v.str() {
                    Some(s) => V {
                        val: Val::Str(match name {
                            "upper" => s.to_uppercase(),
                            "lower" => s.to_lowercase(),
                            _ => s.trim().to_string(),
                        }),
                        span,
                    },
                    None => unknown_here(self),
                }
            }
            // A known value encoded: what a heredoc's `values: ${jsonencode(var.types)}` reads.
            "jsonencode" if args.len() == 1 => match json(&self.eval_in(args[0], origin)) {
                Some(text) => V {
                    val: Val::Str(text),
                    span,
                },
                None => unknown_here(self),
            },
            "file" if args.len() == 1 => match self.read(args[0], origin) {
                Some(text) => V {
                    val: Val::Str(text),
                    span,
                },
                None => unknown_here(self),
            },
            _ => unknown_here(self),
        }
    }

    /// The text of the file `path` names (relative paths from the module's directory).
    pub fn read(&mut self, path: &Expression, origin: usize) -> Option<String> {
        let p = self.eval_in(path, origin);
        let p = std::path::PathBuf::from(p.str()?);
        let dir = self.scope.origins.get(origin)?.dir;
        if !super::may_read(dir, &p) {
            return None;
        }
        let meta = std::fs::metadata(&p).ok()?;
        if !meta.is_file() || meta.len() > MAX_READ {
            return None;
        }
        std::fs::read_to_string(&p).ok()
    }
}

/// A known value as `jsonencode` writes it (on one line); `None` if any part is unknown.
fn json(v: &V) -> Option<String> {
    Some(match &v.val {
        Val::Null => "null".into(),
        Val::Bool(b) => b.to_string(),
        Val::Num(n) => n.clone(),
        Val::Str(s) => serde_json::to_string(s).ok()?,
        Val::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(json)
                .collect::<Option<Vec<_>>>()?
                .join(",")
        ),
        Val::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, _, x)| Some(format!("{}:{}", serde_json::to_string(k).ok()?, json(x)?)))
                .collect::<Option<Vec<_>>>()?
                .join(",")
        ),
        Val::Unknown(_) => return None,
    })
}

fn binary(op: &BinaryOperator, l: &Val, r: &Val) -> Option<Val> {
    use BinaryOperator as B;
    let num = |v: &Val| match v {
        Val::Num(n) => n.parse::<f64>().ok(),
        _ => None,
    };
    let same = |a: &Val, b: &Val| -> Option<bool> {
        Some(match (a, b) {
            (Val::Null, Val::Null) => true,
            (Val::Bool(x), Val::Bool(y)) => x == y,
            (Val::Str(x), Val::Str(y)) => x == y,
            (Val::Num(_), Val::Num(_)) => num(a)? == num(b)?,
            (Val::Unknown(_), _) | (_, Val::Unknown(_)) => return None,
            (Val::List(_) | Val::Map(_), _) | (_, Val::List(_) | Val::Map(_)) => return None,
            _ => false,
        })
    };
    let fmt = |f: f64| {
        if f.fract() == 0.0 && f.abs() < 1e15 {
            format!("{}", f as i64)
        } else {
            f.to_string()
        }
    };
    Some(match op {
        B::Eq => Val::Bool(same(l, r)?),
        B::NotEq => Val::Bool(!same(l, r)?),
        B::And => match (l, r) {
            (Val::Bool(a), Val::Bool(b)) => Val::Bool(*a && *b),
            _ => return None,
        },
        B::Or => match (l, r) {
            (Val::Bool(a), Val::Bool(b)) => Val::Bool(*a || *b),
            _ => return None,
        },
        B::Less => Val::Bool(num(l)? < num(r)?),
        B::LessEq => Val::Bool(num(l)? <= num(r)?),
        B::Greater => Val::Bool(num(l)? > num(r)?),
        B::GreaterEq => Val::Bool(num(l)? >= num(r)?),
        B::Plus => Val::Num(fmt(num(l)? + num(r)?)),
        B::Minus => Val::Num(fmt(num(l)? - num(r)?)),
        B::Mul => Val::Num(fmt(num(l)? * num(r)?)),
        B::Div if num(r)? != 0.0 => Val::Num(fmt(num(l)? / num(r)?)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
