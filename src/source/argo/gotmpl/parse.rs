//! Parsing a Go `text/template` into a tree: text, actions (pipelines of commands with
//! variables, `|`, parentheses, literals, fields), comments, `if`/`with`/`range` with `else`,
//! and the `{{-`/`-}}` trim markers. `define`, `template` and `block` are refused as not
//! evaluated (ApplicationSet templates have no named templates to call).

use super::Error;
use super::lex::{Tok, lex};

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    Text(String),
    /// An action whose value is printed (or a bare declaration, which prints nothing).
    Action(Pipe),
    If(Branch),
    With(Branch),
    Range(Branch),
    Break,
    Continue,
}

/// `if`/`with`/`range`: the pipeline, what runs when it holds, and `else`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Branch {
    pub(super) pipe: Pipe,
    pub(super) then: Vec<Item>,
    pub(super) otherwise: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pipe {
    /// `$x :=` (declare) or `$x =` (assign); `range $i, $v :=` has two.
    pub(super) vars: Vec<String>,
    pub(super) declare: bool,
    pub(super) cmds: Vec<Vec<Term>>,
}

/// One operand: a term followed by field names (`(index .a 0).b.c`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Term {
    Dot,
    /// `.a.b` on dot.
    Field(Vec<String>),
    /// `$x.a.b` (`$` is the root).
    Var(String, Vec<String>),
    /// A function name.
    Func(String),
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Nil,
    /// `(pipeline).a.b`
    Sub(Box<Pipe>, Vec<String>),
}

fn failed(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

/// A Go number literal: ints (decimal, `0x`, `0o`, `0b`, leading-zero octal, `_`) and floats.
fn parse_number(s: &str) -> Result<Term, Error> {
    let t = s.replace('_', "");
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let int = if let Some(h) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        i64::from_str_radix(b, 2).ok()
    } else if body.len() > 1 && body.starts_with('0') && body.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(&body[1..], 8).ok()
    } else {
        body.parse::<i64>().ok()
    };
    if let Some(i) = int {
        return Ok(Term::Int(if neg { -i } else { i }));
    }
    match body.parse::<f64>() {
        Ok(f) if !body.contains(['x', 'X']) => Ok(Term::Float(if neg { -f } else { f })),
        _ => Err(failed(format!("bad number syntax: {s:?}"))),
    }
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

/// Where a list of items stopped: the end of input, or `{{else …` / `{{end}}` (consumed up to
/// the keyword).
enum Stop {
    Eof,
    Else,
    End,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, t: Tok, what: &str) -> Result<(), Error> {
        match self.next() {
            Some(got) if got == t => Ok(()),
            _ => Err(failed(format!("expected {what}"))),
        }
    }

    fn list(&mut self, depth: usize) -> Result<(Vec<Item>, Stop), Error> {
        if depth > 50 {
            return Err(Error::Unsupported("templates nested over 50 deep".into()));
        }
        let mut items = Vec::new();
        loop {
            match self.next() {
                None => return Ok((items, Stop::Eof)),
                Some(Tok::Text(t)) => items.push(Item::Text(t)),
                Some(Tok::Open) => {
                    let keyword = match self.peek() {
                        Some(Tok::Ident(k)) => Some(k.clone()),
                        _ => None,
                    };
                    match keyword.as_deref() {
                        Some("end") => {
                            self.at += 1;
                            self.expect(Tok::Close, "`}}` after end")?;
                            return Ok((items, Stop::End));
                        }
                        Some("else") => {
                            self.at += 1;
                            return Ok((items, Stop::Else));
                        }
                        Some(k @ ("if" | "with" | "range")) => {
                            let k = k.to_string();
                            self.at += 1;
                            let b = self.branch(&k, depth)?;
                            items.push(match k.as_str() {
                                "if" => Item::If(b),
                                "with" => Item::With(b),
                                _ => Item::Range(b),
                            });
                        }
                        Some(k @ ("break" | "continue")) => {
                            let item = if k == "break" {
                                Item::Break
                            } else {
                                Item::Continue
                            };
                            self.at += 1;
                            self.expect(Tok::Close, "`}}`")?;
                            items.push(item);
                        }
                        Some(k @ ("define" | "template" | "block")) => {
                            return Err(Error::Unsupported(format!("`{k}` (named templates)")));
                        }
                        _ => {
                            let p = self.pipe(true)?;
                            self.expect(Tok::Close, "`}}`")?;
                            items.push(Item::Action(p));
                        }
                    }
                }
                Some(other) => return Err(failed(format!("unexpected {other:?}"))),
            }
        }
    }

    /// After `{{if`/`{{with`/`{{range`: the pipeline, the body, and `else` (`else if` and
    /// `else with` chain).
    fn branch(&mut self, kind: &str, depth: usize) -> Result<Branch, Error> {
        let pipe = self.pipe(true)?;
        self.expect(Tok::Close, "`}}`")?;
        let (then, stop) = self.list(depth + 1)?;
        let otherwise = match stop {
            Stop::Eof => return Err(failed(format!("unexpected EOF in {kind}"))),
            Stop::End => Vec::new(),
            Stop::Else => match self.peek() {
                Some(Tok::Ident(k)) if (k == "if" || k == "with") && kind != "range" => {
                    let k = k.clone();
                    self.at += 1;
                    let b = self.branch(&k, depth + 1)?;
                    vec![if k == "if" {
                        Item::If(b)
                    } else {
                        Item::With(b)
                    }]
                }
                _ => {
                    self.expect(Tok::Close, "`}}` after else")?;
                    let (items, stop) = self.list(depth + 1)?;
                    if !matches!(stop, Stop::End) {
                        return Err(failed(format!("expected end of {kind}")));
                    }
                    items
                }
            },
        };
        Ok(Branch {
            pipe,
            then,
            otherwise,
        })
    }

    fn pipe(&mut self, decl_ok: bool) -> Result<Pipe, Error> {
        let mut vars = Vec::new();
        let mut declare = false;
        // `$x :=`, `$x =`, `range $i, $v :=`
        let save = self.at;
        while decl_ok && vars.len() < 2 {
            let (Some(Tok::Var(v, chain)), Some(sep)) = (self.peek(), self.toks.get(self.at + 1))
            else {
                break;
            };
            if !chain.is_empty() {
                break;
            }
            let v = v.clone();
            match sep {
                Tok::Declare | Tok::Assign => {
                    declare = *sep == Tok::Declare;
                    vars.push(v);
                    self.at += 2;
                    break;
                }
                Tok::Comma if vars.is_empty() => {
                    vars.push(v);
                    self.at += 2;
                }
                _ => break,
            }
        }
        if !vars.is_empty()
            && !matches!(self.toks.get(self.at - 1), Some(Tok::Declare | Tok::Assign))
        {
            vars.clear();
            self.at = save;
        }
        let mut cmds = Vec::new();
        loop {
            let mut cmd = Vec::new();
            while let Some(t) = self.peek() {
                if matches!(t, Tok::Close | Tok::Pipe | Tok::RParen) {
                    break;
                }
                cmd.push(self.operand()?);
            }
            if cmd.is_empty() {
                return Err(failed("missing value for command"));
            }
            cmds.push(cmd);
            if self.peek() == Some(&Tok::Pipe) {
                self.at += 1;
            } else {
                break;
            }
        }
        Ok(Pipe {
            vars,
            declare,
            cmds,
        })
    }

    fn chain(&mut self) -> Vec<String> {
        match self.peek() {
            Some(Tok::Chain(c)) => {
                let c = c.clone();
                self.at += 1;
                c
            }
            _ => Vec::new(),
        }
    }

    fn operand(&mut self) -> Result<Term, Error> {
        let t = self
            .next()
            .ok_or_else(|| failed("unexpected end of action"))?;
        Ok(match t {
            Tok::Dot => Term::Dot,
            Tok::Field(chain) => Term::Field(chain),
            Tok::Var(v, chain) => Term::Var(v, chain),
            Tok::Str(s) => Term::Str(s),
            Tok::Char(c) => Term::Int(c),
            Tok::Num(n) => parse_number(&n)?,
            Tok::Ident(i) => match i.as_str() {
                "true" => Term::Bool(true),
                "false" => Term::Bool(false),
                "nil" => Term::Nil,
                "if" | "else" | "end" | "range" | "with" | "define" | "template" | "block"
                | "break" | "continue" => return Err(failed(format!("unexpected `{i}`"))),
                _ => Term::Func(i),
            },
            Tok::LParen => {
                let p = self.pipe(false)?;
                self.expect(Tok::RParen, "`)`")?;
                let chain = self.chain();
                Term::Sub(Box::new(p), chain)
            }
            other => return Err(failed(format!("unexpected {other:?} in operand"))),
        })
    }
}

/// Parses a template.
pub(super) fn parse(src: &str) -> Result<Vec<Item>, Error> {
    let toks = lex(src)?;
    let mut p = Parser { toks, at: 0 };
    let (items, stop) = p.list(0)?;
    match stop {
        Stop::Eof => Ok(items),
        Stop::End => Err(failed("unexpected {{end}}")),
        Stop::Else => Err(failed("unexpected {{else}}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_text_and_trim_markers() {
        let items = parse("a {{- .x -}} b{{/* c */}}").unwrap();
        assert_eq!(
            items,
            vec![
                Item::Text("a".into()),
                Item::Action(Pipe {
                    vars: vec![],
                    declare: false,
                    cmds: vec![vec![Term::Field(vec!["x".into()])]],
                }),
                Item::Text("b".into()),
            ]
        );
        // `{{-3}}` is the number -3, not a trim marker.
        assert_eq!(
            parse("{{-3}}").unwrap(),
            vec![Item::Action(Pipe {
                vars: vec![],
                declare: false,
                cmds: vec![vec![Term::Int(-3)]],
            })]
        );
    }

    #[test]
    fn pipelines_parentheses_and_variables() {
        let items =
            parse(r#"{{ $e := index .metadata.labels "env" | lower }}{{ (index .a 0).b }}"#)
                .unwrap();
        let Item::Action(p) = &items[0] else { panic!() };
        assert_eq!(p.vars, vec!["$e".to_string()]);
        assert!(p.declare);
        assert_eq!(p.cmds.len(), 2);
        let Item::Action(p) = &items[1] else { panic!() };
        assert!(matches!(&p.cmds[0][0], Term::Sub(_, f) if f == &vec!["b".to_string()]));
    }

    #[test]
    fn control_structures_nest_and_chain_else() {
        let items = parse("{{if .a}}A{{else if .b}}B{{else}}C{{end}}").unwrap();
        let Item::If(b) = &items[0] else { panic!() };
        assert!(matches!(&b.otherwise[0], Item::If(_)));
        assert!(parse("{{if .a}}A").is_err());
        assert!(parse("{{end}}").is_err());
        assert!(matches!(
            parse("{{template \"x\"}}"),
            Err(Error::Unsupported(_))
        ));
        assert!(parse("{{ .a }").is_err());
        assert!(parse("{{ .my-label }}").is_err());
    }
}
