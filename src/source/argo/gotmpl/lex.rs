//! Splitting a Go template into text and the tokens of its actions, trim markers (`{{-`,
//! `-}}`) applied and comments dropped.

use super::Error;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Text(String),
    /// The start of an action; `{{/* … */}}` never becomes one.
    Open,
    Close,
    Ident(String),
    /// `.a.b` (written together).
    Field(Vec<String>),
    /// `$x.a.b`
    Var(String, Vec<String>),
    /// `.a.b` right after `)`.
    Chain(Vec<String>),
    Dot,
    Str(String),
    Num(String),
    Char(i64),
    Pipe,
    LParen,
    RParen,
    Declare,
    Assign,
    Comma,
}

/// Splits the template into text and action tokens, trim markers applied.
pub(super) fn lex(src: &str) -> Result<Vec<Tok>, Error> {
    let mut out = Vec::new();
    let mut rest = src;
    let mut trim_next = false;
    while !rest.is_empty() {
        let Some(open) = rest.find("{{") else {
            push_text(&mut out, rest, trim_next, false);
            break;
        };
        let after = &rest[open + 2..];
        let trim_left = after.starts_with("- ")
            || after.starts_with("-\t")
            || after.starts_with("-\n")
            || after.starts_with("-\r");
        push_text(&mut out, &rest[..open], trim_next, trim_left);
        let body_start = if trim_left { 2 } else { 0 };
        let body = &after[body_start..];
        let (inner, consumed, trim_right) = action_body(body)?;
        trim_next = trim_right;
        let trimmed = inner.trim();
        if trimmed.starts_with("/*") {
            if !trimmed.ends_with("*/") {
                return Err(failed("unclosed comment"));
            }
        } else {
            out.push(Tok::Open);
            lex_action(inner, &mut out)?;
            out.push(Tok::Close);
        }
        rest = &body[consumed..];
    }
    Ok(out)
}

fn push_text(out: &mut Vec<Tok>, text: &str, trim_start: bool, trim_end: bool) {
    let mut t = text;
    if trim_start {
        t = t.trim_start_matches([' ', '\t', '\r', '\n']);
    }
    if trim_end {
        t = t.trim_end_matches([' ', '\t', '\r', '\n']);
    }
    if !t.is_empty() {
        out.push(Tok::Text(t.to_string()));
    }
}

/// The inside of an action up to its `}}` (quotes respected), how much was consumed, and
/// whether it ends with the ` -}}` trim marker.
fn action_body(body: &str) -> Result<(&str, usize, bool), Error> {
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'`' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q != b'`' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= b.len() {
                    return Err(failed("unterminated quoted string"));
                }
                i += 1;
            }
            b'}' if b.get(i + 1) == Some(&b'}') => {
                let inner = &body[..i];
                let trim = inner.ends_with(" -")
                    || inner.ends_with("\t-")
                    || inner.ends_with("\n-")
                    || inner.ends_with("\r-");
                let inner = if trim {
                    &inner[..inner.len() - 2]
                } else {
                    inner
                };
                return Ok((inner, i + 2, trim));
            }
            b'/' if b.get(i + 1) == Some(&b'*') => match body[i + 2..].find("*/") {
                Some(end) => i += end + 4,
                None => return Err(failed("unclosed comment")),
            },
            _ => i += 1,
        }
    }
    Err(failed("unclosed action"))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn lex_action(s: &str, out: &mut Vec<Tok>) -> Result<(), Error> {
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let word = |i: &mut usize| {
        let start = *i;
        while *i < chars.len() && is_ident(chars[*i]) {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' | '\n' => i += 1,
            '|' => {
                out.push(Tok::Pipe);
                i += 1;
            }
            '(' => {
                out.push(Tok::LParen);
                i += 1;
            }
            ')' => {
                out.push(Tok::RParen);
                i += 1;
                if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(|&c| is_ident(c)) {
                    out.push(Tok::Chain(chain(&chars, &mut i)));
                }
            }
            ',' => {
                out.push(Tok::Comma);
                i += 1;
            }
            '=' => {
                out.push(Tok::Assign);
                i += 1;
            }
            ':' if chars.get(i + 1) == Some(&'=') => {
                out.push(Tok::Declare);
                i += 2;
            }
            '.' if chars.get(i + 1).is_some_and(|c| c.is_ascii_digit()) => {
                out.push(Tok::Num(number(&chars, &mut i)));
            }
            '.' if chars.get(i + 1).is_some_and(|&c| is_ident(c)) => {
                out.push(Tok::Field(chain(&chars, &mut i)));
            }
            '.' => {
                out.push(Tok::Dot);
                i += 1;
            }
            '$' => {
                i += 1;
                let name = format!("${}", word(&mut i));
                out.push(Tok::Var(name, chain(&chars, &mut i)));
            }
            '"' => {
                let (s, n) = quoted(&chars[i..])?;
                out.push(Tok::Str(s));
                i += n;
            }
            '`' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '`')
                    .ok_or_else(|| failed("unterminated raw quoted string"))?;
                out.push(Tok::Str(chars[i + 1..i + 1 + end].iter().collect()));
                i += end + 2;
            }
            '\'' => {
                let (s, n) = quoted(&chars[i..])?;
                let mut it = s.chars();
                match (it.next(), it.next()) {
                    (Some(ch), None) => out.push(Tok::Char(ch as i64)),
                    _ => return Err(failed("malformed character constant")),
                }
                i += n;
            }
            c if c.is_ascii_digit() => out.push(Tok::Num(number(&chars, &mut i))),
            '-' | '+'
                if chars
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.') =>
            {
                out.push(Tok::Num(number(&chars, &mut i)));
            }
            c if is_ident(c) => out.push(Tok::Ident(word(&mut i))),
            other => return Err(failed(format!("bad character {other:?}"))),
        }
    }
    Ok(())
}

/// `.a.b.c` written together, from a `.`.
fn chain(chars: &[char], i: &mut usize) -> Vec<String> {
    let mut out = Vec::new();
    while chars.get(*i) == Some(&'.') && chars.get(*i + 1).is_some_and(|&c| is_ident(c)) {
        *i += 1;
        let start = *i;
        while *i < chars.len() && is_ident(chars[*i]) {
            *i += 1;
        }
        out.push(chars[start..*i].iter().collect());
    }
    out
}

fn number(chars: &[char], i: &mut usize) -> String {
    let start = *i;
    if matches!(chars[*i], '-' | '+') {
        *i += 1;
    }
    while *i < chars.len() {
        let c = chars[*i];
        let exp_sign = matches!(c, '+' | '-') && matches!(chars[*i - 1], 'e' | 'E' | 'p' | 'P');
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' || exp_sign {
            *i += 1;
        } else {
            break;
        }
    }
    chars[start..*i].iter().collect()
}

/// A Go interpreted string (or character) literal at `chars[0]`: its value and length.
fn quoted(chars: &[char]) -> Result<(String, usize), Error> {
    let q = chars[0];
    let mut out = String::new();
    let mut i = 1;
    while i < chars.len() {
        let c = chars[i];
        if c == q {
            return Ok((out, i + 1));
        }
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let e = *chars
            .get(i + 1)
            .ok_or_else(|| failed("unterminated string"))?;
        i += 2;
        let hex = |i: &mut usize, n: usize| -> Result<char, Error> {
            let s: String = chars.get(*i..*i + n).unwrap_or_default().iter().collect();
            *i += n;
            u32::from_str_radix(&s, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| failed("invalid escape in string"))
        };
        out.push(match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'a' => '\x07',
            'b' => '\x08',
            'f' => '\x0c',
            'v' => '\x0b',
            '\\' => '\\',
            '"' => '"',
            '\'' => '\'',
            'x' => hex(&mut i, 2)?,
            'u' => hex(&mut i, 4)?,
            'U' => hex(&mut i, 8)?,
            _ => return Err(failed(format!("invalid escape \\{e} in string"))),
        });
    }
    Err(failed("unterminated string"))
}

fn failed(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}
