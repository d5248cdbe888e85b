//! The values a template sees, as Go holds them: parameters are `map[string]any` decoded from
//! JSON (numbers are `float64`), cluster labels are `map[string]string`, literals and some
//! functions give `int`. How Go prints each (`%v`) decides what lands in a name or a path.

use std::collections::BTreeMap;

/// What a missing map key reads as: `any` (nil) or `string` ("").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Any,
    Str,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// No value at all (a missing key under the default `missingkey`): prints `<no value>`.
    Invalid,
    /// A nil interface (`null` in the parameters).
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>, Elem),
}

impl Value {
    /// A `map[string]string`.
    pub fn str_map<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> Value {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (k.clone(), Value::Str(v.clone())))
                .collect(),
            Elem::Str,
        )
    }

    /// A `map[string]any`.
    pub fn map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(m, Elem::Any)
    }

    /// JSON as Go's `encoding/json` decodes it into `any`.
    pub fn from_json(j: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match j {
            J::Null => Value::Nil,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            J::String(s) => Value::Str(s.clone()),
            J::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            J::Object(o) => Value::map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Go's name of the type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Invalid | Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_, Elem::Any) => "map[string]interface {}",
            Value::Map(_, Elem::Str) => "map[string]string",
        }
    }

    /// Go's `truth`: zero values, nil and empty collections are false.
    pub fn truth(&self) -> bool {
        match self {
            Value::Invalid | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m, _) => !m.is_empty(),
        }
    }

    /// How a template prints it (`{{ . }}`): `fmt.Print`, with `<no value>` for nothing.
    pub fn printed(&self) -> String {
        match self {
            Value::Invalid | Value::Nil => "<no value>".into(),
            other => other.fmt_v(),
        }
    }

    /// `fmt.Sprintf("%v", v)`.
    pub fn fmt_v(&self) -> String {
        match self {
            Value::Invalid => "<invalid reflect.Value>".into(),
            Value::Nil => "<nil>".into(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => go_float(*f),
            Value::Str(s) => s.clone(),
            Value::List(l) => {
                let items: Vec<String> = l.iter().map(Value::fmt_v).collect();
                format!("[{}]", items.join(" "))
            }
            Value::Map(m, _) => {
                let items: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{k}:{}", v.fmt_v()))
                    .collect();
                format!("map[{}]", items.join(" "))
            }
        }
    }

    /// As JSON (`toJson`), numbers as Go encodes `float64`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Invalid | Value::Nil => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 1e15 {
                    J::from(*f as i64)
                } else {
                    serde_json::Number::from_f64(*f).map_or(J::Null, J::Number)
                }
            }
            Value::Str(s) => J::String(s.clone()),
            Value::List(l) => J::Array(l.iter().map(Value::to_json).collect()),
            Value::Map(m, _) => {
                J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

/// Go's `%v` of a `float64` (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits that
/// read back, with an exponent below 1e-4 and from 1e+06 up (`1e+06`, `1.5`, `100000`).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    let dp = exp + 1;
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(dp as usize - digits.len()))
    } else {
        let (a, b) = digits.split_at(dp as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them() {
        for (f, s) in [
            (1.0, "1"),
            (42.0, "42"),
            (1.5, "1.5"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.25, "-2.25"),
            (1e21, "1e+21"),
        ] {
            assert_eq!(go_float(f), s, "{f}");
        }
    }

    #[test]
    fn collections_print_with_go_syntax() {
        let v = Value::from_json(&serde_json::json!({"b": [1, "x", null], "a": true}));
        assert_eq!(v.fmt_v(), "map[a:true b:[1 x <nil>]]");
        assert_eq!(Value::Invalid.printed(), "<no value>");
    }
}
