//! Running a parsed template over the parameters, as `text/template` executes it: fields of
//! maps with the `missingkey` option, variables scoped to their block, pipelines passing their
//! value as the last argument, `and`/`or` evaluated lazily, and `if`/`with`/`range`.

use super::parse::{Branch, Item, Pipe, Term};
use super::value::{Elem, Value};
use super::{Error, Missing, funcs};

/// Steps (commands and iterations) one template may take, and the text it may print: an
/// ApplicationSet's names and paths are short, so more means a runaway `range`.
const FUEL: usize = 100_000;
const MAX_OUTPUT: usize = 1 << 20;

pub(super) struct State {
    missing: Missing,
    vars: Vec<(String, Value)>,
    fuel: usize,
    pub(super) out: String,
}

enum Flow {
    Normal,
    Break,
    Continue,
}

fn failed(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

impl State {
    pub(super) fn new(root: Value, missing: Missing) -> State {
        State {
            missing,
            vars: vec![("$".into(), root)],
            fuel: FUEL,
            out: String::new(),
        }
    }

    fn tick(&mut self) -> Result<(), Error> {
        self.fuel = self
            .fuel
            .checked_sub(1)
            .ok_or_else(|| Error::Unsupported(format!("a template taking over {FUEL} steps")))?;
        Ok(())
    }

    pub(super) fn run(&mut self, items: &[Item]) -> Result<(), Error> {
        let dot = self.vars[0].1.clone();
        match self.list(items, &dot)? {
            Flow::Normal => Ok(()),
            _ => Err(failed("{{break}} or {{continue}} outside {{range}}")),
        }
    }

    fn list(&mut self, items: &[Item], dot: &Value) -> Result<Flow, Error> {
        for item in items {
            match item {
                Item::Text(t) => self.print(t)?,
                Item::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.vars.is_empty() {
                        self.print(&v.printed())?;
                    }
                }
                Item::If(b) => {
                    let flow = self.branch(b, dot, false)?;
                    if !matches!(flow, Flow::Normal) {
                        return Ok(flow);
                    }
                }
                Item::With(b) => {
                    let flow = self.branch(b, dot, true)?;
                    if !matches!(flow, Flow::Normal) {
                        return Ok(flow);
                    }
                }
                Item::Range(b) => self.range(b, dot)?,
                Item::Break => return Ok(Flow::Break),
                Item::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn print(&mut self, s: &str) -> Result<(), Error> {
        if self.out.len() + s.len() > MAX_OUTPUT {
            return Err(Error::Unsupported("a template printing over 1 MiB".into()));
        }
        self.out.push_str(s);
        Ok(())
    }

    /// `if` and `with` (which moves dot to the value); variables end with the block.
    fn branch(&mut self, b: &Branch, dot: &Value, with: bool) -> Result<Flow, Error> {
        let mark = self.vars.len();
        let v = self.pipe(&b.pipe, dot)?;
        let flow = if v.truth() {
            let dot = if with { v } else { dot.clone() };
            self.list(&b.then, &dot)?
        } else {
            self.list(&b.otherwise, dot)?
        };
        self.vars.truncate(mark);
        Ok(flow)
    }

    fn range(&mut self, b: &Branch, dot: &Value) -> Result<(), Error> {
        let mark = self.vars.len();
        let mut p = b.pipe.clone();
        let names = std::mem::take(&mut p.vars);
        let v = self.pipe(&p, dot)?;
        let items: Vec<(Value, Value)> = match v {
            Value::List(l) => l
                .into_iter()
                .enumerate()
                .map(|(i, e)| (Value::Int(i as i64), e))
                .collect(),
            Value::Map(m, _) => m.into_iter().map(|(k, e)| (Value::Str(k), e)).collect(),
            Value::Int(n) => (0..n.max(0))
                .map(|i| (Value::Int(i), Value::Int(i)))
                .collect(),
            Value::Invalid | Value::Nil => Vec::new(),
            other => {
                return Err(failed(format!(
                    "range can't iterate over {}",
                    other.fmt_v()
                )));
            }
        };
        if items.is_empty() {
            self.list(&b.otherwise, dot)?;
            self.vars.truncate(mark);
            return Ok(());
        }
        for (key, elem) in items {
            self.tick()?;
            let inner = self.vars.len();
            match names.as_slice() {
                [] => {}
                [one] => self.vars.push((one.clone(), elem.clone())),
                [k, e, ..] => {
                    self.vars.push((k.clone(), key));
                    self.vars.push((e.clone(), elem.clone()));
                }
            }
            let flow = self.list(&b.then, &elem)?;
            self.vars.truncate(inner);
            if matches!(flow, Flow::Break) {
                break;
            }
        }
        self.vars.truncate(mark);
        Ok(())
    }

    pub(super) fn pipe(&mut self, p: &Pipe, dot: &Value) -> Result<Value, Error> {
        let mut value: Option<Value> = None;
        for cmd in &p.cmds {
            value = Some(self.command(cmd, dot, value)?);
        }
        let v = value.unwrap_or(Value::Invalid);
        match (p.vars.as_slice(), p.declare) {
            ([], _) => {}
            ([name], true) => self.vars.push((name.clone(), v.clone())),
            ([name], false) => {
                let slot = self
                    .vars
                    .iter_mut()
                    .rev()
                    .find(|(n, _)| n == name)
                    .ok_or_else(|| failed(format!("undefined variable: {name}")))?;
                slot.1 = v.clone();
            }
            _ => return Err(failed("too many declarations in command")),
        }
        Ok(v)
    }

    fn command(&mut self, cmd: &[Term], dot: &Value, piped: Option<Value>) -> Result<Value, Error> {
        self.tick()?;
        let Some(first) = cmd.first() else {
            return Err(failed("empty command"));
        };
        if let Term::Func(name) = first {
            return self.call(name, &cmd[1..], dot, piped);
        }
        if cmd.len() > 1 || piped.is_some() {
            return Err(failed(format!(
                "can't give argument to non-function {}",
                describe(first)
            )));
        }
        if matches!(first, Term::Nil) {
            return Err(failed("nil is not a command"));
        }
        self.term(first, dot)
    }

    fn call(
        &mut self,
        name: &str,
        args: &[Term],
        dot: &Value,
        piped: Option<Value>,
    ) -> Result<Value, Error> {
        // `and` and `or` stop at the first argument that decides.
        if name == "and" || name == "or" {
            if args.is_empty() && piped.is_none() {
                return Err(failed(format!(
                    "wrong number of args for {name}: want at least 1 got 0"
                )));
            }
            let mut last = Value::Invalid;
            for a in args {
                last = self.term(a, dot)?;
                if last.truth() != (name == "and") {
                    return Ok(last);
                }
            }
            if let Some(p) = piped {
                last = p;
            }
            return Ok(last);
        }
        let mut values = Vec::with_capacity(args.len() + 1);
        for a in args {
            values.push(self.term(a, dot)?);
        }
        values.extend(piped);
        funcs::call(name, values).map_err(|e| match e {
            Error::Failed(m) => failed(format!("error calling {name}: {m}")),
            other => other,
        })
    }

    fn term(&mut self, t: &Term, dot: &Value) -> Result<Value, Error> {
        Ok(match t {
            Term::Dot => dot.clone(),
            Term::Field(chain) => self.fields(dot.clone(), chain)?,
            Term::Var(name, chain) => {
                let v = self
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| failed(format!("undefined variable: {name}")))?;
                self.fields(v, chain)?
            }
            Term::Func(name) => self.call(name, &[], dot, None)?,
            Term::Str(s) => Value::Str(s.clone()),
            Term::Int(i) => Value::Int(*i),
            Term::Float(f) => Value::Float(*f),
            Term::Bool(b) => Value::Bool(*b),
            Term::Nil => Value::Nil,
            Term::Sub(p, chain) => {
                let v = self.pipe(p, dot)?;
                self.fields(v, chain)?
            }
        })
    }

    fn fields(&self, mut v: Value, chain: &[String]) -> Result<Value, Error> {
        for name in chain {
            v = self.field(v, name)?;
        }
        Ok(v)
    }

    fn field(&self, recv: Value, name: &str) -> Result<Value, Error> {
        match recv {
            Value::Invalid => match self.missing {
                Missing::Error => Err(failed(format!("nil data; no entry for key {name:?}"))),
                _ => Ok(Value::Invalid),
            },
            Value::Nil => Err(failed(format!(
                "nil pointer evaluating interface {{}}.{name}"
            ))),
            Value::Map(mut m, elem) => match m.remove(name) {
                Some(v) => Ok(v),
                None => match self.missing {
                    Missing::Default => Ok(Value::Invalid),
                    Missing::Zero => Ok(match elem {
                        Elem::Any => Value::Nil,
                        Elem::Str => Value::Str(String::new()),
                    }),
                    Missing::Error => Err(failed(format!("map has no entry for key {name:?}"))),
                },
            },
            other => Err(failed(format!(
                "can't evaluate field {name} in type {}",
                other.type_name()
            ))),
        }
    }
}

fn describe(t: &Term) -> String {
    match t {
        Term::Dot => ".".into(),
        Term::Field(c) => format!(".{}", c.join(".")),
        Term::Var(v, c) if c.is_empty() => v.clone(),
        Term::Var(v, c) => format!("{v}.{}", c.join(".")),
        Term::Str(s) => format!("{s:?}"),
        Term::Int(i) => i.to_string(),
        Term::Float(f) => f.to_string(),
        Term::Bool(b) => b.to_string(),
        Term::Nil => "nil".into(),
        Term::Func(f) => f.clone(),
        Term::Sub(..) => "(…)".into(),
    }
}
