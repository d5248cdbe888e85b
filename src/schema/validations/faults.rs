//! Which run-time errors of a rule are the object's fault. The API server rejects an object on
//! which a rule fails to evaluate (`no such key`, `int()` of a string that is no integer, an
//! index out of bounds, …), so such an error is a finding; an error that may come from gpuops'
//! own evaluator (a function it lacks, `self` typed differently, a conversion it parses more
//! strictly than the API server) is not, and the rule is skipped.

use super::{Rule, Shape};
use crate::quantity::is_placeholder;
use crate::yaml::{Node, Value as YValue};
use ::cel::ExecutionError;

/// What went wrong, said as the API server says it, when `e` (the evaluation of `rule` on `n`,
/// declared at schema node `s`) is surely caused by the object's data; `None` when in doubt.
pub(super) fn object_fault(
    e: &ExecutionError,
    rule: &Rule,
    s: &Shape,
    n: Node<'_>,
) -> Option<String> {
    // An unsupported call can fail beside the data error (`f(x) || self.a.b`) and could have
    // decided the result; a `format`ted string is typed otherwise by the API server.
    if !rule.calls_known || typed(s, &rule.text, None, 0) {
        return None;
    }
    match e {
        // A field the schema declares and the object leaves out (an explicit `null` may be kept
        // by the API server where gpuops drops it).
        ExecutionError::NoSuchKey(key) => {
            (declares(s, key, 0) && !has_null(n, 0)).then(|| format!("no such key: {key}"))
        }
        // A placeholder (`${PORT}`) is replaced before the object reaches the API server.
        ExecutionError::FunctionError { .. } if any_string(n, 0, &is_placeholder) => None,
        ExecutionError::FunctionError { function, message } => match function.as_str() {
            // Go's `strconv.ParseInt`/`ParseUint` in base 10 accept no more than Rust's parser.
            "int" | "uint" => Some(format!("{function}() conversion failed: {message}")),
            // Go's `ParseFloat` also reads hexadecimal floats (`0x1p3`), and `time.ParseDuration`
            // the units `µs`/`μs`: not the object's fault when it holds such a string.
            "double" if !any_string(n, 0, &|t| t.to_ascii_lowercase().contains("0x")) => {
                Some(format!("double() conversion failed: {message}"))
            }
            "duration" if !any_string(n, 0, &|t| t.contains(['µ', 'μ'])) => {
                Some(format!("duration() conversion failed: {message}"))
            }
            _ => None,
        },
        ExecutionError::DivisionByZero(_) => Some("division by zero".to_string()),
        ExecutionError::RemainderByZero(_) => Some("modulus by zero".to_string()),
        ExecutionError::Overflow(..) => Some("integer overflow".to_string()),
        ExecutionError::IndexOutOfBounds(i) => Some(format!("index out of bounds: {i:?}")),
        _ => None,
    }
}

/// Schemas nested deeper are not searched (the error is then not reported).
const MAX_DEPTH: usize = 64;

/// Whether the rule may read a string the API server types by its `format`: one whose nearest
/// property name above it (`nearest`) the rule's text names, or one it reaches through lists and
/// maps alone.
fn typed(s: &Shape, text: &str, nearest: Option<&str>, depth: usize) -> bool {
    if !s.typed {
        return false;
    }
    if depth > MAX_DEPTH || s.formatted {
        return nearest.is_none_or(|name| {
            text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == name)
        });
    }
    s.props
        .iter()
        .any(|(_, cel, sub)| typed(sub, text, Some(cel), depth + 1))
        || [&s.items, &s.additional]
            .into_iter()
            .flatten()
            .any(|sub| typed(sub, text, nearest, depth + 1))
}

/// Whether `key` (as CEL names it) is a property declared at `s` or below.
fn declares(s: &Shape, key: &str, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    s.props
        .iter()
        .any(|(_, cel, sub)| cel == key || declares(sub, key, depth + 1))
        || s.items
            .as_deref()
            .is_some_and(|i| declares(i, key, depth + 1))
        || s.additional
            .as_deref()
            .is_some_and(|a| declares(a, key, depth + 1))
}

fn has_null(n: Node<'_>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    match n.value() {
        YValue::Map(m) => m.iter().any(|(_, v)| v.is_null() || has_null(v, depth + 1)),
        YValue::Seq(items) => items.iter().any(|v| v.is_null() || has_null(v, depth + 1)),
        YValue::Scalar { .. } => false,
    }
}

/// Whether a string at `n` or below passes `test` (too deep: assumed so).
fn any_string(n: Node<'_>, depth: usize, test: &dyn Fn(&str) -> bool) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    match n.value() {
        YValue::Map(m) => m.iter().any(|(_, v)| any_string(v, depth + 1, test)),
        YValue::Seq(items) => items.iter().any(|v| any_string(v, depth + 1, test)),
        YValue::Scalar { .. } => n.as_str().is_some_and(test),
    }
}
