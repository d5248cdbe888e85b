//! The Sprig functions Argo CD provides that names and paths use, with Sprig's argument order
//! (`trimPrefix PREFIX STRING`) and Go's typing (`lower` of a number fails), and Argo CD's own
//! `normalize`. A Sprig function not here is reported as not evaluated; a name neither Go nor
//! Sprig nor Argo CD defines fails the template, as it does in Argo CD.

use super::funcs::{arity, failed, int, string};
use super::value::{Elem, Value};
use super::{Error, fmt};
use std::collections::BTreeMap;

/// Sprig's `strval`: any value as text.
fn strval(v: &Value) -> String {
    match v {
        Value::Invalid | Value::Nil => "<nil>".into(),
        other => other.fmt_v(),
    }
}

/// Sprig's `strslice`: a list as strings (nils dropped), anything else as a one-item list.
fn strslice(v: &Value) -> Vec<String> {
    match v {
        Value::List(l) => l
            .iter()
            .filter(|x| !matches!(x, Value::Nil | Value::Invalid))
            .map(strval)
            .collect(),
        Value::Invalid | Value::Nil => Vec::new(),
        other => vec![strval(other)],
    }
}

fn list<'a>(name: &str, v: &'a Value) -> Result<&'a [Value], Error> {
    match v {
        Value::List(l) => Ok(l),
        other => Err(failed(format!(
            "Cannot {name} on type {}",
            other.type_name()
        ))),
    }
}

/// Sprig's `toInt64` (spf13/cast): numbers truncated, numeric strings parsed, anything else 0.
fn to_int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => i64::from(*b),
        Value::Str(s) => {
            let t = s.trim();
            let t = t.strip_suffix(".0").unwrap_or(t);
            t.parse().unwrap_or(0)
        }
        _ => 0,
    }
}

fn to_float(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Str(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn regex(pattern: &str) -> Result<regex::Regex, Error> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| failed(format!("error parsing regexp: {e}")))
}

/// `strings.Title`: the first letter of each word upper-cased.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = !(c.is_alphanumeric() || c == '_' || c == '\'');
    }
    out
}

/// Argo CD's `normalize`: lowercase, anything but `a-z 0-9 - .` made `-`, at most 253
/// characters, no `-` or `.` at either end.
pub fn sanitize_name(s: &str) -> String {
    let mapped: String = s
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cut = match mapped.char_indices().nth(253) {
        Some((i, _)) => &mapped[..i],
        None => &mapped[..],
    };
    cut.trim_matches(['-', '.']).to_string()
}

/// Go's `path` package (`/`-separated, no OS rules).
mod path {
    pub fn clean(p: &str) -> String {
        if p.is_empty() {
            return ".".into();
        }
        let rooted = p.starts_with('/');
        let mut parts: Vec<&str> = Vec::new();
        for seg in p.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    if parts.last().is_some_and(|l| *l != "..") {
                        parts.pop();
                    } else if !rooted {
                        parts.push("..");
                    }
                }
                s => parts.push(s),
            }
        }
        let body = parts.join("/");
        match (rooted, body.is_empty()) {
            (true, _) => format!("/{body}"),
            (false, true) => ".".into(),
            (false, false) => body,
        }
    }

    pub fn base(p: &str) -> String {
        if p.is_empty() {
            return ".".into();
        }
        let t = p.trim_end_matches('/');
        if t.is_empty() {
            return "/".into();
        }
        t.rsplit('/').next().unwrap_or(t).to_string()
    }

    pub fn dir(p: &str) -> String {
        let cut = p.rfind('/').map_or(0, |i| i + 1);
        clean(&p[..cut])
    }

    pub fn ext(p: &str) -> String {
        let last = p.rsplit('/').next().unwrap_or(p);
        last.rfind('.')
            .map_or(String::new(), |i| last[i..].to_string())
    }
}
/// Sprig's `substr`.
fn substr(start: i64, end: i64, s: &str) -> Result<String, Error> {
    let len = s.len() as i64;
    let (a, b) = if start < 0 {
        (0, end)
    } else if end < 0 || end > len {
        (start, len)
    } else {
        (start, end)
    };
    s.get(a.max(0) as usize..b.max(0) as usize)
        .map(str::to_string)
        .ok_or_else(|| failed(format!("slice bounds out of range [{a}:{b}]")))
}

/// Sprig's `trunc`.
fn trunc(c: i64, s: &str) -> String {
    let len = s.len() as i64;
    let at = if c < 0 && len + c > 0 {
        Some((len + c) as usize..s.len())
    } else if c >= 0 && len > c {
        Some(0..c as usize)
    } else {
        None
    };
    match at {
        Some(r) => s.get(r).unwrap_or(s).to_string(),
        None => s.to_string(),
    }
}

fn to_yaml(v: &Value) -> Result<String, Error> {
    let out = serde_saphyr::to_string(&v.to_json()).map_err(|e| failed(format!("toYaml: {e}")))?;
    Ok(out.trim_end_matches('\n').to_string())
}

fn indent(n: i64, s: &str) -> String {
    let pad = " ".repeat(n.max(0) as usize);
    format!("{pad}{}", s.replace('\n', &format!("\n{pad}")))
}
/// Functions of Go, Sprig and Argo CD that are not evaluated here: they fail nothing, they
/// are reported.
const KNOWN_ELSEWHERE: &str = "call html js urlquery abbrev abbrevboth adler32sum ago all any append b32dec b32enc bcrypt \
    biggest buildCustomCert camelcase ceil chunk concat date dateInZone dateModify \
    date_in_zone date_modify decryptAES deepCopy deepEqual derivePassword divf duration \
    durationRound encryptAES floor fromJson fromYaml fromYamlArray genCA genCAWithKey \
    genPrivateKey genSelfSignedCert genSelfSignedCertWithKey genSignedCert \
    genSignedCertWithKey hello htmlDate htmlDateInZone htpasswd initials isAbs kebabcase \
    kindIs kindOf maxf merge mergeOverwrite minf mulf addf add1f subf mustAppend mustChunk \
    mustCompact mustDateModify mustDeepCopy mustFirst mustFromJson mustHas mustInitial \
    mustLast mustMerge mustMergeOverwrite mustPrepend mustPush mustRegexFind mustRegexFindAll \
    mustRegexMatch mustRegexReplaceAll mustRegexReplaceAllLiteral mustRegexSplit mustRest \
    mustReverse mustSlice mustToDate mustToJson mustToPrettyJson mustToRawJson mustUniq \
    mustWithout must_date_modify now omit osBase osClean osDir osExt osIsAbs pick plural pluck \
    prepend push randAlpha randAlphaNum randAscii randBytes randInt randNumeric regexFindAll \
    regexQuoteMeta regexSplit round semver semverCompare seq set sha1sum sha256sum shuffle \
    slugify snakecase splitn swapcase toDate toDecimal toPrettyJson tuple typeIs typeIsLike \
    typeOf unixEpoch unset until untilStep untitle uuidv4 values wrap wrapWith";

/// Calls a Sprig (or Argo CD) function by name.
pub(super) fn call(name: &str, a: Vec<Value>) -> Result<Value, Error> {
    let s = |v: String| Ok(Value::Str(v));
    let b = |v: bool| Ok(Value::Bool(v));
    match name {
        // Sprig: strings.
        "lower" | "upper" | "title" | "trim" | "nospace" | "b64enc" | "b64dec" | "normalize"
        | "base" | "dir" | "ext" | "clean" | "atoi" => {
            arity(name, &a, 1)?;
            let x = string(&a[0])?;
            match name {
                "lower" => s(x.to_lowercase()),
                "upper" => s(x.to_uppercase()),
                "title" => s(title(x)),
                "trim" => s(x.trim().to_string()),
                "nospace" => s(x.chars().filter(|c| !c.is_whitespace()).collect()),
                "b64enc" => s(super::super::base64::encode(x.as_bytes())),
                "b64dec" => s(match super::super::base64::decode(x) {
                    Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    None => "illegal base64 data".into(),
                }),
                "normalize" => s(sanitize_name(x)),
                "base" => s(path::base(x)),
                "dir" => s(path::dir(x)),
                "ext" => s(path::ext(x)),
                "clean" => s(path::clean(x)),
                _ => Ok(Value::Int(x.trim().parse().unwrap_or(0))),
            }
        }
        "trimAll" | "trimPrefix" | "trimSuffix" | "contains" | "hasPrefix" | "hasSuffix"
        | "splitList" | "split" | "regexMatch" | "regexFind" => {
            arity(name, &a, 2)?;
            let (x, y) = (string(&a[0])?, string(&a[1])?);
            match name {
                "trimAll" => s(y.trim_matches(|c| x.contains(c)).to_string()),
                "trimPrefix" => s(y.strip_prefix(x).unwrap_or(y).to_string()),
                "trimSuffix" => s(y.strip_suffix(x).unwrap_or(y).to_string()),
                "contains" => b(y.contains(x)),
                "hasPrefix" => b(y.starts_with(x)),
                "hasSuffix" => b(y.ends_with(x)),
                "splitList" => Ok(Value::List(
                    y.split(x).map(|p| Value::Str(p.to_string())).collect(),
                )),
                "split" => Ok(Value::Map(
                    y.split(x)
                        .enumerate()
                        .map(|(i, p)| (format!("_{i}"), Value::Str(p.to_string())))
                        .collect(),
                    Elem::Str,
                )),
                "regexMatch" => b(regex(x)?.is_match(y)),
                _ => s(regex(x)?.find(y).map_or("", |m| m.as_str()).to_string()),
            }
        }
        "replace" | "regexReplaceAll" | "regexReplaceAllLiteral" => {
            arity(name, &a, 3)?;
            let (x, y, z) = (string(&a[0])?, string(&a[1])?, string(&a[2])?);
            match name {
                "replace" => s(z.replace(x, y)),
                "regexReplaceAll" => s(regex(x)?.replace_all(y, z).into_owned()),
                _ => s(regex(x)?.replace_all(y, regex::NoExpand(z)).into_owned()),
            }
        }
        "repeat" => {
            arity(name, &a, 2)?;
            let n = int(&a[0])?;
            let x = string(&a[1])?;
            if n < 0 || (n as usize).saturating_mul(x.len()) > 1 << 20 {
                return Err(Error::Unsupported("`repeat` over 1 MiB".into()));
            }
            s(x.repeat(n as usize))
        }
        "substr" => {
            arity(name, &a, 3)?;
            s(substr(int(&a[0])?, int(&a[1])?, string(&a[2])?)?)
        }
        "trunc" => {
            arity(name, &a, 2)?;
            s(trunc(int(&a[0])?, string(&a[1])?))
        }
        "indent" | "nindent" => {
            arity(name, &a, 2)?;
            let out = indent(int(&a[0])?, string(&a[1])?);
            s(if name == "nindent" {
                format!("\n{out}")
            } else {
                out
            })
        }
        "quote" | "squote" | "cat" => {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !matches!(v, Value::Nil | Value::Invalid))
                .map(|v| match name {
                    "quote" => fmt::quote(&strval(v)),
                    "squote" => format!("'{}'", strval(v)),
                    _ => strval(v),
                })
                .collect();
            s(parts.join(" "))
        }
        "join" => {
            arity(name, &a, 2)?;
            s(strslice(&a[1]).join(string(&a[0])?))
        }
        "toString" => {
            arity(name, &a, 1)?;
            s(strval(&a[0]))
        }
        "toStrings" => {
            arity(name, &a, 1)?;
            Ok(Value::List(
                strslice(&a[0]).into_iter().map(Value::Str).collect(),
            ))
        }
        "toJson" | "toRawJson" => {
            arity(name, &a, 1)?;
            let text = a[0].to_json().to_string();
            s(if name == "toJson" {
                text.replace('<', "\\u003c")
                    .replace('>', "\\u003e")
                    .replace('&', "\\u0026")
            } else {
                text
            })
        }
        "toYaml" => {
            arity(name, &a, 1)?;
            s(to_yaml(&a[0])?)
        }
        "fail" => {
            arity(name, &a, 1)?;
            Err(failed(string(&a[0])?.to_string()))
        }
        // Sprig: defaults and logic.
        "default" => {
            let (d, given) = a
                .split_first()
                .ok_or_else(|| failed("wrong number of args for default: want at least 1 got 0"))?;
            Ok(match given.first() {
                Some(g) if g.truth() => g.clone(),
                _ => d.clone(),
            })
        }
        "empty" => {
            arity(name, &a, 1)?;
            b(!a[0].truth())
        }
        "coalesce" => Ok(a.into_iter().find(Value::truth).unwrap_or(Value::Nil)),
        "ternary" => {
            arity(name, &a, 3)?;
            match &a[2] {
                Value::Bool(c) => Ok(if *c { a[0].clone() } else { a[1].clone() }),
                other => Err(failed(format!(
                    "wrong type for value; expected bool; got {}",
                    other.type_name()
                ))),
            }
        }
        // Sprig: lists and dictionaries.
        "list" => Ok(Value::List(a)),
        "first" | "last" | "rest" | "initial" | "uniq" | "compact" | "sortAlpha" | "reverse" => {
            arity(name, &a, 1)?;
            if name == "sortAlpha" {
                let mut v = strslice(&a[0]);
                v.sort();
                return Ok(Value::List(v.into_iter().map(Value::Str).collect()));
            }
            let l = list(name, &a[0])?;
            Ok(match name {
                "first" => l.first().cloned().unwrap_or(Value::Nil),
                "last" => l.last().cloned().unwrap_or(Value::Nil),
                "rest" => Value::List(l.iter().skip(1).cloned().collect()),
                "initial" => Value::List(l[..l.len().saturating_sub(1)].to_vec()),
                "reverse" => Value::List(l.iter().rev().cloned().collect()),
                "compact" => Value::List(l.iter().filter(|v| v.truth()).cloned().collect()),
                _ => {
                    let mut out: Vec<Value> = Vec::new();
                    for v in l {
                        if !out.contains(v) {
                            out.push(v.clone());
                        }
                    }
                    Value::List(out)
                }
            })
        }
        "has" => {
            arity(name, &a, 2)?;
            b(list(name, &a[1])?.contains(&a[0]))
        }
        "without" => {
            let (l, omit) = a
                .split_first()
                .ok_or_else(|| failed("wrong number of args for without"))?;
            let l = list(name, l)?;
            Ok(Value::List(
                l.iter().filter(|v| !omit.contains(v)).cloned().collect(),
            ))
        }
        "slice" => {
            let (l, idx) = a
                .split_first()
                .ok_or_else(|| failed("wrong number of args for slice"))?;
            let idx: Vec<i64> = idx.iter().map(int).collect::<Result<_, _>>()?;
            let len = match l {
                Value::List(v) => v.len(),
                Value::Str(s) => s.len(),
                other => {
                    return Err(failed(format!(
                        "can't slice item of type {}",
                        other.type_name()
                    )));
                }
            } as i64;
            let lo = idx.first().copied().unwrap_or(0);
            let hi = idx.get(1).copied().unwrap_or(len);
            if lo < 0 || hi < lo || hi > len || idx.len() > 2 {
                return Err(failed(format!("index out of range: {lo}:{hi}")));
            }
            let r = lo as usize..hi as usize;
            Ok(match l {
                Value::List(v) => Value::List(v[r].to_vec()),
                Value::Str(x) => Value::Str(x.get(r).unwrap_or_default().to_string()),
                _ => Value::Nil,
            })
        }
        "dict" => {
            let mut m = BTreeMap::new();
            for pair in a.chunks(2) {
                let v = pair.get(1).cloned().unwrap_or(Value::Str(String::new()));
                m.insert(strval(&pair[0]), v);
            }
            Ok(Value::map(m))
        }
        "get" | "hasKey" => {
            arity(name, &a, 2)?;
            let key = string(&a[1])?;
            let Value::Map(m, _) = &a[0] else {
                return Err(failed(format!(
                    "wrong type for value; expected map[string]interface {{}}; got {}",
                    a[0].type_name()
                )));
            };
            if name == "hasKey" {
                b(m.contains_key(key))
            } else {
                Ok(m.get(key).cloned().unwrap_or(Value::Str(String::new())))
            }
        }
        "dig" => {
            // `dig "a" "b" default dict`: the value under the keys, or the default when a key is
            // absent (a present key wins, whatever its value).
            if a.len() < 3 {
                return Err(failed("dig needs at least three arguments"));
            }
            let (keys, rest) = a.split_at(a.len() - 2);
            let mut cur = &rest[1];
            for k in keys {
                let key = string(k)?;
                let Value::Map(m, _) = cur else {
                    return Err(failed(format!(
                        "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                        cur.type_name()
                    )));
                };
                match m.get(key) {
                    Some(v) => cur = v,
                    None => return Ok(rest[0].clone()),
                }
            }
            Ok(cur.clone())
        }
        "keys" => {
            let mut out = Vec::new();
            for d in &a {
                if let Value::Map(m, _) = d {
                    out.extend(m.keys().cloned().map(Value::Str));
                }
            }
            Ok(Value::List(out))
        }
        // Sprig: numbers (int64 arithmetic, as Sprig converts).
        "int" | "int64" => {
            arity(name, &a, 1)?;
            Ok(Value::Int(to_int(&a[0])))
        }
        "float64" => {
            arity(name, &a, 1)?;
            Ok(Value::Float(to_float(&a[0])))
        }
        "add1" => {
            arity(name, &a, 1)?;
            Ok(Value::Int(to_int(&a[0]).wrapping_add(1)))
        }
        "add" | "mul" | "max" | "min" => {
            let mut it = a.iter().map(to_int);
            let first = it.next().unwrap_or(if name == "mul" { 1 } else { 0 });
            Ok(Value::Int(it.fold(first, |acc, x| match name {
                "add" => acc.wrapping_add(x),
                "mul" => acc.wrapping_mul(x),
                "max" => acc.max(x),
                _ => acc.min(x),
            })))
        }
        "sub" | "div" | "mod" => {
            arity(name, &a, 2)?;
            let (x, y) = (to_int(&a[0]), to_int(&a[1]));
            if name != "sub" && y == 0 {
                return Err(failed("integer divide by zero"));
            }
            Ok(Value::Int(match name {
                "sub" => x.wrapping_sub(y),
                "div" => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            }))
        }
        n if KNOWN_ELSEWHERE.split_whitespace().any(|k| k == n) => {
            Err(Error::Unsupported(format!("the template function `{n}`")))
        }
        n => Err(failed(format!("function {n:?} not defined"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dig_walks_nested_maps_to_a_default() {
        let inner = Value::map(BTreeMap::from([("b".to_string(), Value::Int(0))]));
        let d = Value::map(BTreeMap::from([("a".to_string(), inner)]));
        let s = |x: &str| Value::Str(x.into());
        let dig = |keys: &[&str]| {
            let mut a: Vec<Value> = keys.iter().map(|k| s(k)).collect();
            a.extend([s("dflt"), d.clone()]);
            call("dig", a)
        };
        // A present key wins even when its value is a zero value.
        assert_eq!(dig(&["a", "b"]).unwrap(), Value::Int(0));
        assert_eq!(dig(&["a", "x"]).unwrap(), s("dflt"));
        assert_eq!(dig(&["x", "y"]).unwrap(), s("dflt"));
        assert!(matches!(dig(&["a", "b", "c"]), Err(Error::Failed(_))));
        assert!(matches!(
            call("dig", vec![s("a"), d]),
            Err(Error::Failed(_))
        ));
    }

    #[test]
    fn paths_are_go_paths() {
        assert_eq!(path::base("a/b/"), "b");
        assert_eq!(path::dir("a/b/c"), "a/b");
        assert_eq!(path::dir("c"), ".");
        assert_eq!(path::clean("a/../../b/./c"), "../b/c");
        assert_eq!(path::ext("a/b.tar.gz"), ".gz");
    }
}
