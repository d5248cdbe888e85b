//! The functions a template may call: Go's builtins here, the Sprig and Argo CD functions
//! names and paths use in [`super::sprig`].

use super::value::{Elem, Value};
use super::{Error, fmt, sprig};

pub(super) fn failed(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

pub(super) fn arity(name: &str, args: &[Value], n: usize) -> Result<(), Error> {
    if args.len() == n {
        Ok(())
    } else {
        Err(failed(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        )))
    }
}

/// A `string` parameter.
pub(super) fn string(v: &Value) -> Result<&str, Error> {
    match v {
        Value::Str(s) => Ok(s),
        Value::Invalid | Value::Nil => Err(failed("invalid value; expected string")),
        other => Err(failed(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        ))),
    }
}

/// An `int` parameter.
pub(super) fn int(v: &Value) -> Result<i64, Error> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Invalid | Value::Nil => Err(failed("invalid value; expected int")),
        other => Err(failed(format!(
            "wrong type for value; expected int; got {}",
            other.type_name()
        ))),
    }
}
/// Go's comparison of basic kinds: `None` when the kinds differ.
fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn eq(args: &[Value]) -> Result<Value, Error> {
    let Some((first, rest)) = args.split_first() else {
        return Err(failed("missing argument for comparison"));
    };
    if rest.is_empty() {
        return Err(failed("missing argument for comparison"));
    }
    for other in rest {
        let absent = |v: &Value| matches!(v, Value::Invalid | Value::Nil);
        let same = match (first, other) {
            (a, b) if absent(a) || absent(b) => absent(a) && absent(b),
            (Value::List(_) | Value::Map(..), _) | (_, Value::List(_) | Value::Map(..)) => {
                return Err(failed("non-comparable type"));
            }
            (a, b) => match compare(a, b) {
                Some(o) => o.is_eq(),
                None => return Err(failed("incompatible types for comparison")),
            },
        };
        if same {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn order(name: &str, args: &[Value]) -> Result<Value, Error> {
    arity(name, args, 2)?;
    let o = compare(&args[0], &args[1]).ok_or_else(|| {
        if args.iter().any(|a| {
            !matches!(
                a,
                Value::Int(_) | Value::Float(_) | Value::Str(_) | Value::Bool(_)
            )
        }) {
            failed("invalid type for comparison")
        } else {
            failed("incompatible types for comparison")
        }
    })?;
    Ok(Value::Bool(match name {
        "lt" => o.is_lt(),
        "le" => o.is_le(),
        "gt" => o.is_gt(),
        _ => o.is_ge(),
    }))
}

fn index(args: &[Value]) -> Result<Value, Error> {
    let Some((item, keys)) = args.split_first() else {
        return Err(failed(
            "wrong number of args for index: want at least 1 got 0",
        ));
    };
    let mut cur = item.clone();
    for k in keys {
        cur = match (cur, k) {
            (Value::Invalid, _) => return Err(failed("index of untyped nil")),
            (Value::Nil, _) => return Err(failed("index of nil pointer")),
            (Value::Map(mut m, elem), Value::Str(key)) => m.remove(key).unwrap_or(match elem {
                Elem::Any => Value::Nil,
                Elem::Str => Value::Str(String::new()),
            }),
            (Value::Map(..), other) => {
                return Err(failed(format!(
                    "value has type {}; should be string",
                    other.type_name()
                )));
            }
            (Value::List(l), Value::Int(i)) => {
                let len = l.len();
                usize::try_from(*i)
                    .ok()
                    .and_then(|i| l.into_iter().nth(i))
                    .ok_or_else(|| failed(format!("index out of range: {i} (length {len})")))?
            }
            (Value::Str(s), Value::Int(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.as_bytes().get(i).copied())
                .map(|b| Value::Int(i64::from(b)))
                .ok_or_else(|| failed(format!("index out of range: {i}")))?,
            (Value::List(_) | Value::Str(_), other) => {
                return Err(failed(format!(
                    "cannot index slice/array with type {}",
                    other.type_name()
                )));
            }
            (other, _) => {
                return Err(failed(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(cur)
}

fn length(v: &Value) -> Result<Value, Error> {
    Ok(Value::Int(match v {
        Value::Str(s) => s.len(),
        Value::List(l) => l.len(),
        Value::Map(m, _) => m.len(),
        other => return Err(failed(format!("len of type {}", other.type_name()))),
    } as i64))
}
/// Calls a function by name.
pub(super) fn call(name: &str, a: Vec<Value>) -> Result<Value, Error> {
    let s = |v: String| Ok(Value::Str(v));
    let b = |v: bool| Ok(Value::Bool(v));
    match name {
        // Go's builtins (`and`/`or` are lazy: the evaluator runs them).
        "not" => {
            arity(name, &a, 1)?;
            b(!a[0].truth())
        }
        "len" => {
            arity(name, &a, 1)?;
            length(&a[0])
        }
        "index" => index(&a),
        "eq" => eq(&a),
        "ne" => {
            arity(name, &a, 2)?;
            match eq(&a)? {
                Value::Bool(x) => b(!x),
                other => Ok(other),
            }
        }
        "lt" | "le" | "gt" | "ge" => order(name, &a),
        "print" => s(fmt::sprint(&a)),
        "println" => s(fmt::sprintln(&a)),
        "printf" => {
            let (f, rest) = a
                .split_first()
                .ok_or_else(|| failed("wrong number of args for printf: want at least 1 got 0"))?;
            s(fmt::sprintf(string(f)?, rest)?)
        }
        _ => sprig::call(name, a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn sprig_argument_order_and_go_typing() {
        assert_eq!(
            call("trimPrefix", vec![s("gpu-"), s("gpu-a")]).unwrap(),
            s("a")
        );
        assert_eq!(
            call("replace", vec![s("."), s("-"), s("a.b.c")]).unwrap(),
            s("a-b-c")
        );
        assert_eq!(
            call(
                "join",
                vec![s("/"), Value::List(vec![s("a"), Value::Float(2.0)])]
            )
            .unwrap(),
            s("a/2")
        );
        assert_eq!(
            call("default", vec![s("x"), Value::Invalid]).unwrap(),
            s("x")
        );
        assert_eq!(call("default", vec![s("x"), s("y")]).unwrap(), s("y"));
        assert!(matches!(
            call("lower", vec![Value::Float(1.0)]),
            Err(Error::Failed(_))
        ));
        assert!(matches!(
            call("lower", vec![Value::Invalid]),
            Err(Error::Failed(_))
        ));
        assert!(matches!(
            call("sha256sum", vec![s("a")]),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(call("nope", vec![]), Err(Error::Failed(_))));
        assert_eq!(
            call("trunc", vec![Value::Int(3), s("abcdef")]).unwrap(),
            s("abc")
        );
        assert_eq!(
            call("trunc", vec![Value::Int(-2), s("abcdef")]).unwrap(),
            s("ef")
        );
        assert_eq!(
            call("normalize", vec![s("GPU_Pool.A/")]).unwrap(),
            s("gpu-pool.a")
        );
    }

    #[test]
    fn comparisons_follow_go() {
        assert_eq!(
            call("eq", vec![s("a"), s("b"), s("a")]).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            call("eq", vec![Value::Invalid, s("a")]).unwrap(),
            Value::Bool(false)
        );
        assert!(call("eq", vec![Value::Int(1), Value::Float(1.0)]).is_err());
        assert_eq!(
            call("lt", vec![Value::Int(1), Value::Int(2)]).unwrap(),
            Value::Bool(true)
        );
    }

    #[test]
    fn index_reads_maps_lists_and_missing_keys() {
        let labels = Value::str_map([(&"env".to_string(), &"prod".to_string())]);
        assert_eq!(
            call("index", vec![labels.clone(), s("env")]).unwrap(),
            s("prod")
        );
        assert_eq!(call("index", vec![labels, s("tier")]).unwrap(), s(""));
        assert!(call("index", vec![Value::Invalid, s("env")]).is_err());
        let l = Value::List(vec![s("a"), s("b")]);
        assert_eq!(
            call("index", vec![l.clone(), Value::Int(1)]).unwrap(),
            s("b")
        );
        assert!(call("index", vec![l, Value::Float(1.0)]).is_err());
    }
}
