//! Functions of Kubernetes' CEL libraries (lists, regex, sets) that CEL's standard library and
//! the strings extension lack.

use super::*;

fn values<'b, 'v>(args: &[CowVal<'b, 'v>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter()
        .map(|a| Value::try_from(a.as_ref()))
        .collect::<Result<_, _>>()
}

fn ret<'b, 'v>(v: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let b: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::Owned(b))
}

fn list(v: &Value, f: &str) -> Result<Arc<Vec<Value>>, ExecutionError> {
    match v {
        Value::List(l) => Ok(Arc::clone(l)),
        _ => Err(ExecutionError::function_error(f, "expected a list")),
    }
}

fn text(v: &Value, f: &str) -> Result<Arc<String>, ExecutionError> {
    match v {
        Value::String(s) => Ok(Arc::clone(s)),
        _ => Err(ExecutionError::function_error(f, "expected a string")),
    }
}

/// Orders two list elements of the same kind, as Kubernetes' `isSorted`, `min`, `max` do.
fn order(a: &Value, b: &Value, f: &str) -> Result<std::cmp::Ordering, ExecutionError> {
    use Value::*;
    let o = match (a, b) {
        (Int(x), Int(y)) => x.partial_cmp(y),
        (UInt(x), UInt(y)) => x.partial_cmp(y),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (String(x), String(y)) => x.partial_cmp(y),
        (Bool(x), Bool(y)) => x.partial_cmp(y),
        (Duration(x), Duration(y)) => x.partial_cmp(y),
        (Timestamp(x), Timestamp(y)) => x.partial_cmp(y),
        _ => None,
    };
    o.ok_or_else(|| ExecutionError::function_error(f, "elements are not comparable"))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let l = list(&a[0], "isSorted")?;
    for w in l.windows(2) {
        if order(&w[0], &w[1], "isSorted")? == std::cmp::Ordering::Greater {
            return ret(Value::Bool(false));
        }
    }
    ret(Value::Bool(true))
}

fn extreme(
    args: Vec<CowVal<'_, '_>>,
    f: &str,
    want: std::cmp::Ordering,
) -> Result<Value, ExecutionError> {
    let a = values(&args)?;
    let l = list(&a[0], f)?;
    let mut best = l
        .first()
        .cloned()
        .ok_or_else(|| ExecutionError::function_error(f, "empty list"))?;
    for v in l.iter().skip(1) {
        if order(v, &best, f)? == want {
            best = v.clone();
        }
    }
    Ok(best)
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    ret(extreme(args, "min", std::cmp::Ordering::Less)?)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    ret(extreme(args, "max", std::cmp::Ordering::Greater)?)
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let l = list(&a[0], "sum")?;
    let overflow = || ExecutionError::function_error("sum", "overflow");
    let total = match l.first() {
        None => Value::Int(0),
        Some(Value::Int(_)) => {
            let mut t: i64 = 0;
            for v in l.iter() {
                let Value::Int(i) = v else {
                    return Err(ExecutionError::function_error("sum", "mixed types"));
                };
                t = t.checked_add(*i).ok_or_else(overflow)?;
            }
            Value::Int(t)
        }
        Some(Value::UInt(_)) => {
            let mut t: u64 = 0;
            for v in l.iter() {
                let Value::UInt(i) = v else {
                    return Err(ExecutionError::function_error("sum", "mixed types"));
                };
                t = t.checked_add(*i).ok_or_else(overflow)?;
            }
            Value::UInt(t)
        }
        Some(Value::Float(_)) => {
            let mut t = 0.0;
            for v in l.iter() {
                let Value::Float(f) = v else {
                    return Err(ExecutionError::function_error("sum", "mixed types"));
                };
                t += f;
            }
            Value::Float(t)
        }
        Some(_) => return Err(ExecutionError::function_error("sum", "not numbers")),
    };
    ret(total)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let l = list(&a[0], "indexOf")?;
    ret(Value::Int(
        l.iter().position(|v| *v == a[1]).map_or(-1, |i| i as i64),
    ))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let l = list(&a[0], "lastIndexOf")?;
    ret(Value::Int(
        l.iter().rposition(|v| *v == a[1]).map_or(-1, |i| i as i64),
    ))
}

fn regex(pattern: &str, f: &str) -> Result<regex::Regex, ExecutionError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| ExecutionError::function_error(f, e))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let (s, p) = (text(&a[0], "find")?, text(&a[1], "find")?);
    let found = regex(&p, "find")?
        .find(&s)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    ret(Value::String(Arc::new(found)))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let (s, p) = (text(&a[0], "findAll")?, text(&a[1], "findAll")?);
    let limit = match a.get(2) {
        Some(Value::Int(n)) if *n >= 0 => *n as usize,
        Some(Value::Int(_)) | None => usize::MAX,
        Some(_) => return Err(ExecutionError::function_error("findAll", "bad limit")),
    };
    let all = regex(&p, "findAll")?
        .find_iter(&s)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_string())))
        .collect();
    ret(Value::List(Arc::new(all)))
}

type List = Arc<Vec<Value>>;

fn two_lists(args: Vec<CowVal<'_, '_>>, f: &str) -> Result<(List, List), ExecutionError> {
    let a = values(&args)?;
    Ok((list(&a[0], f)?, list(&a[1], f)?))
}

fn sets_contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.contains")?;
    ret(Value::Bool(b.iter().all(|x| a.contains(x))))
}

fn sets_equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.equivalent")?;
    ret(Value::Bool(
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)),
    ))
}

fn sets_intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = two_lists(args, "sets.intersects")?;
    ret(Value::Bool(b.iter().any(|x| a.contains(x))))
}

fn is_quantity<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let a = values(&args)?;
    let s = text(&a[0], "isQuantity")?;
    ret(Value::Bool(crate::quantity::parse(&s).is_some()))
}

pub(super) fn register(env: &mut Env) -> Result<(), ::cel::DeclarationError> {
    use ::cel::common::types::DYN_TYPE;
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload(
        "findAll",
        "string_find_all",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_n",
        STRING_TYPE,
        vec![STRING_TYPE, ::cel::common::types::INT_TYPE],
        find_all,
    )?;
    env.add_overload(
        "sets.contains",
        "sets_contains",
        vec![LIST_TYPE, LIST_TYPE],
        sets_contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "sets_equivalent",
        vec![LIST_TYPE, LIST_TYPE],
        sets_equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "sets_intersects",
        vec![LIST_TYPE, LIST_TYPE],
        sets_intersects,
    )?;
    env.add_overload("isQuantity", "is_quantity", vec![STRING_TYPE], is_quantity)?;
    Ok(())
}
