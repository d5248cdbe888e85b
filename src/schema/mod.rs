//! What the API server accepts: built-in field knowledge for the kinds gpuops models (tables in
//! [`builtin`], walked by [`check`]) and how Kubernetes' YAML 1.1 reader types plain scalars.

mod admit;
pub mod builtin;
pub mod cel;
pub mod check;
pub mod crd;
mod listtype;
pub mod names;
pub mod validations;

use crate::yaml::{Node, Yaml11};

/// What Kubernetes' YAML 1.1 reader makes of a plain scalar that is not a string: `the boolean
/// true`, `the integer 493 (octal)`, `the number 1000`. `None` for strings, nulls and collections.
pub fn non_string_reading(node: Node<'_>) -> Option<String> {
    let text = node.as_str()?;
    match node.yaml11()? {
        Yaml11::Bool => {
            let truthy = matches!(
                text,
                "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON"
            );
            Some(format!("the boolean {truthy}"))
        }
        Yaml11::Int => {
            let (neg, body) = match text.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, text.strip_prefix('+').unwrap_or(text)),
            };
            let clean = body.replace('_', "");
            let (radix, digits, how) = if let Some(h) = clean.strip_prefix("0x") {
                (16, h, " (hexadecimal)")
            } else if clean.len() > 1 && clean.starts_with('0') {
                (8, &clean[1..], " (octal)")
            } else if clean.len() != body.len() {
                (10, clean.as_str(), " (underscores dropped)")
            } else {
                (10, clean.as_str(), "")
            };
            match i128::from_str_radix(digits, radix) {
                Ok(v) => Some(format!(
                    "the integer {}{v}{how}",
                    if neg { "-" } else { "" }
                )),
                Err(_) => Some("a number".to_string()),
            }
        }
        Yaml11::Float => {
            let v = text.replace('_', "").parse::<f64>().ok();
            Some(match v {
                Some(v) if v.is_finite() => format!("the number {v}"),
                _ => "a number".to_string(),
            })
        }
        Yaml11::Null | Yaml11::Str => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    #[test]
    fn readings_of_plain_scalars() {
        let p = parse(
            "a: on\nb: 0755\nc: 1_000\nd: 1e3\ne: 1.10\nf: '0755'\ng: x\nh: 0x1F\ni: -7\n",
            Budget::default(),
        );
        let r = &p.docs[0].root();
        let read = |k: &str| r.get(k).and_then(non_string_reading);
        assert_eq!(read("a").as_deref(), Some("the boolean true"));
        assert_eq!(read("b").as_deref(), Some("the integer 493 (octal)"));
        assert_eq!(
            read("c").as_deref(),
            Some("the integer 1000 (underscores dropped)")
        );
        assert_eq!(read("d").as_deref(), Some("the number 1000"));
        assert_eq!(read("e").as_deref(), Some("the number 1.1"));
        assert_eq!(read("f"), None);
        assert_eq!(read("g"), None);
        assert_eq!(read("h").as_deref(), Some("the integer 31 (hexadecimal)"));
        assert_eq!(read("i").as_deref(), Some("the integer -7"));
    }
}
