//! Go's `fmt` as templates reach it: `printf`, `print`, `println`, and `%q` quoting.

use super::Error;
use super::value::Value;

/// `strconv.Quote`: a double-quoted Go string literal.
pub(super) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `fmt.Sprint`: a space between operands when neither is a string.
pub(super) fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let is_str = |v: &Value| matches!(v, Value::Str(_));
        if i > 0 && !is_str(a) && !is_str(&args[i - 1]) {
            out.push(' ');
        }
        out.push_str(&a.fmt_v());
    }
    out
}

/// `fmt.Sprintln`: spaces between all operands, and a newline.
pub(super) fn sprintln(args: &[Value]) -> String {
    let items: Vec<String> = args.iter().map(Value::fmt_v).collect();
    format!("{}\n", items.join(" "))
}

/// `fmt.Sprintf` for the verbs names and paths use: `%s %v %d %q %t %x %f` (`%.2f`), `%%`.
/// Wrong types and missing arguments print as Go prints them (`%!d(string=a)`,
/// `%!s(MISSING)`); flags and widths are not evaluated.
pub(super) fn sprintf(format: &str, args: &[Value]) -> Result<String, Error> {
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = Some(digits.parse().unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !matches!(verb, 's' | 'v' | 'd' | 'q' | 't' | 'x' | 'f') {
            return Err(Error::Unsupported(format!("printf verb `%{verb}`")));
        }
        let Some(arg) = args.get(next) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next += 1;
        let bad = |a: &Value| format!("%!{verb}({}={})", a.type_name(), a.fmt_v());
        let text = match (verb, arg) {
            (_, Value::Invalid | Value::Nil) if verb != 'v' && verb != 's' => {
                format!("%!{verb}(<nil>)")
            }
            ('v' | 's', Value::Invalid | Value::Nil) => "<nil>".into(),
            ('v', a) => a.fmt_v(),
            ('s', Value::Str(s)) => s.clone(),
            ('s', a @ (Value::List(_) | Value::Map(..))) => a.fmt_v(),
            ('d', Value::Int(i)) => i.to_string(),
            ('q', Value::Str(s)) => quote(s),
            ('t', Value::Bool(b)) => b.to_string(),
            ('x', Value::Int(i)) => format!("{i:x}"),
            ('x', Value::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
            ('f', Value::Float(f)) => format!("{f:.*}", precision.unwrap_or(6)),
            (_, a) => bad(a),
        };
        out.push_str(&text);
    }
    if next < args.len() {
        let extra: Vec<String> = args[next..]
            .iter()
            .map(|a| format!("{}={}", a.type_name(), a.fmt_v()))
            .collect();
        out.push_str(&format!("%!(EXTRA {})", extra.join(", ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_prints_as_go_does() {
        let s = |v: &str| Value::Str(v.into());
        assert_eq!(
            sprintf("%s-%s", &[s("a"), s("b")]).unwrap(),
            "a-b".to_string()
        );
        assert_eq!(sprintf("%d", &[s("a")]).unwrap(), "%!d(string=a)");
        assert_eq!(sprintf("%s/%s", &[s("a")]).unwrap(), "a/%!s(MISSING)");
        assert_eq!(
            sprintf("%v %q", &[Value::Float(3.0), s("x")]).unwrap(),
            "3 \"x\""
        );
        assert_eq!(sprintf("%.1f%%", &[Value::Float(2.26)]).unwrap(), "2.3%");
        assert_eq!(sprint(&[Value::Int(1), Value::Int(2), s("x")]), "1 2x");
    }
}
