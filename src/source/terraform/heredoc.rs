//! YAML heredocs of a `.tf` file, parsed where they stand.

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Body, Structure};
use std::ops::Range;

/// The spans of the YAML heredocs `body` applies, in file order; `field`: the attribute of the
/// enclosing block that holds a manifest (`yaml_body` of a `kubectl_manifest`).
pub fn collect(body: &Body, field: Option<&str>, out: &mut Vec<Range<usize>>) {
    for s in body.iter() {
        match s {
            Structure::Block(b) => {
                let kind = b.labels.first().map(|l| l.as_str());
                let field = match (b.ident.as_str(), kind) {
                    ("resource", Some("kubectl_manifest")) => Some("yaml_body"),
                    ("resource", Some("kubernetes_manifest")) => Some("manifest"),
                    ("data", Some("kubectl_file_documents")) => Some("content"),
                    _ => None,
                };
                collect(&b.body, field, out);
            }
            Structure::Attribute(a) if field == Some(a.key.as_str()) => heredoc(&a.value, out),
            Structure::Attribute(a) => decoded(&a.value, out),
        }
    }
}

/// A heredoc (its whole span), directly or inside `yamldecode(…)`.
pub fn heredoc(e: &Expression, out: &mut Vec<Range<usize>>) {
    match e {
        Expression::HeredocTemplate(h) => out.extend(h.span()),
        _ => decoded(e, out),
    }
}

/// Heredocs passed to `yamldecode` anywhere in an expression (locals, `for_each` maps).
fn decoded(e: &Expression, out: &mut Vec<Range<usize>>) {
    match e {
        Expression::FuncCall(f) => {
            let yaml = f.name.name.as_str() == "yamldecode" && !f.name.is_namespaced();
            for a in f.args.iter() {
                if yaml {
                    heredoc(a, out);
                } else {
                    decoded(a, out);
                }
            }
        }
        Expression::Object(o) => o.iter().for_each(|(_, v)| decoded(v.expr(), out)),
        Expression::Array(a) => a.iter().for_each(|v| decoded(v, out)),
        Expression::Parenthesis(p) => decoded(p.inner(), out),
        _ => {}
    }
}

/// A heredoc's lines between its opening line (`<<-YAML`) and its closing delimiter's line.
pub fn heredoc_body(text: &str, span: Range<usize>) -> Option<Range<usize>> {
    let whole = text.get(span.clone())?;
    let start = span.start + whole.find('\n')? + 1;
    let end = span.start + whole.trim_end().rfind('\n')? + 1;
    (start <= end).then_some(start..end)
}

/// `text` with every byte outside `keep` a space (newlines kept): same length, lines and
/// columns, so what parses from it stands where it stands in the file.
pub fn blank_outside(text: &str, keep: Range<usize>) -> String {
    let mut out = Vec::with_capacity(text.len());
    for (i, &b) in text.as_bytes().iter().enumerate() {
        out.push(if keep.contains(&i) || b == b'\n' {
            b
        } else {
            b' '
        });
    }
    markers_to_column_zero(text, &keep, &mut out);
    // Only ASCII replaced whole characters, and `keep` starts and ends on line boundaries.
    String::from_utf8(out).unwrap_or_default()
}

/// Terraform strips a `<<-` heredoc's common indentation, so a `---` at that indentation
/// separates documents: it moves to the line's start (its indentation after it), which keeps
/// every offset.
fn markers_to_column_zero(text: &str, keep: &Range<usize>, out: &mut [u8]) {
    let opener = text[..keep.start.min(text.len())]
        .trim_end_matches('\n')
        .rsplit('\n')
        .next()
        .unwrap_or("");
    if !opener.contains("<<-") {
        return;
    }
    let body = text.get(keep.clone()).unwrap_or_default();
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let common = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(indent)
        .min()
        .unwrap_or(0);
    if common == 0 {
        return;
    }
    let mut at = keep.start;
    for line in body.split_inclusive('\n') {
        let content = line.trim();
        if indent(line) == common && (content == "---" || content.starts_with("--- #")) {
            let start = at;
            out[start..start + 3].copy_from_slice(b"---");
            out[start + 3..start + 3 + common].fill(b' ');
        }
        at += line.len();
    }
}

/// A JSON list of plain names as a YAML flow list without quotes (`[g6e.2xlarge,g6e.4xlarge]`),
/// which fits where more of the expression it replaces does.
fn compact(json: &str) -> Option<String> {
    let items: Vec<String> = serde_json::from_str(json).ok()?;
    let plain = |s: &String| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
            && !matches!(
                s.to_ascii_lowercase().as_str(),
                "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
            )
    };
    items
        .iter()
        .all(plain)
        .then(|| format!("[{}]", items.join(",")))
}

/// The heredoc with each `${jsonencode(…)}` whose value is known written as the JSON Terraform
/// puts there (`values: ${jsonencode(var.types)}` reads `values: ["g6e.2xlarge"]`), padded to
/// the expression's length so every other place keeps its offset. One longer than its
/// expression stays, and the heredoc is a template.
pub fn encoded_values(text: &str, ev: &mut super::eval::Eval<'_, '_>) -> String {
    if !text.contains("${jsonencode(") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${jsonencode(") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        // The interpolation ends at the first `)}` closing it on its line.
        let line_end = from.find('\n').unwrap_or(from.len());
        let Some(close) = from[..line_end].find(")}").map(|c| c + 2) else {
            out.push_str(&from[..2]);
            rest = &from[2..];
            continue;
        };
        let expr = &from[..close];
        // Inside quotes it is part of a string.
        let quoted = out.ends_with(['"', '\'']);
        let known = (!quoted)
            .then(|| ev.interpolate(expr))
            .flatten()
            .map(|j| compact(&j).unwrap_or(j));
        match known.filter(|j| j.len() <= expr.len() && !j.contains('\n')) {
            Some(j) => {
                out.push_str(&j);
                out.extend(std::iter::repeat_n(' ', expr.len() - j.len()));
            }
            None => out.push_str(expr),
        }
        rest = &from[close..];
    }
    out.push_str(rest);
    out
}

/// For the template check only: interpolations in a value's place (`name: ${var.name}`,
/// `"${x}"`) are placeholders, so they are masked; ones that stand where structure goes (a line
/// of their own, `${indent(4, yamlencode(x))}`) are left for the check to find.
pub fn mask_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let Some(close) = from.find('}') else {
            out.push_str(from);
            return out;
        };
        let inner = &from[2..close];
        let line_start = out.rfind('\n').map_or(0, |i| i + 1);
        let value_place = !out[line_start..].trim().is_empty();
        let inserts = [
            "indent(",
            "yamlencode(",
            "jsonencode(",
            "file(",
            "templatefile(",
        ]
        .iter()
        .any(|f| inner.trim_start().starts_with(f));
        if value_place && !inserts {
            out.extend(std::iter::repeat_n('x', from[..=close].len()));
        } else {
            out.push_str(&from[..=close]);
        }
        rest = &from[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Where the interpolation that opens at `open` (`${`) closes: the byte after its `}`, nested
/// braces and the quoted strings of its expression (with their `\"` escapes) skipped.
fn interpolation_end(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut quoted = false;
    let mut i = open + 2;
    while let Some(&b) = bytes.get(i) {
        match (quoted, b) {
            (true, b'\\') => i += 1,
            (true, b'"') | (false, b'"') => quoted = !quoted,
            (false, b'{') => depth += 1,
            (false, b'}') if depth == 0 => return Some(i + 1),
            (false, b'}') => depth -= 1,
            (_, b'\n') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `text` with the inside of every interpolation that holds a quoted string (`"${join("\", \"",
/// var.types)}"`) masked, same length: Terraform fills it in before the YAML is read, so its
/// quotes do not end the YAML scalar around it. What remains, `${xxxx}`, reads as a
/// placeholder.
pub fn mask_quoting_interpolations(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("${") {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find("${").map(|i| from + i) {
        let Some(end) = interpolation_end(text, at) else {
            from = at + 2;
            continue;
        };
        let inner = &text[at + 2..end - 1];
        if inner.contains('"') {
            out.push_str(&text[done..at + 2]);
            out.extend(std::iter::repeat_n('x', inner.len()));
            out.push('}');
            done = end;
        }
        from = end;
    }
    out.push_str(&text[done..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_inside_an_interpolation_are_masked_to_the_same_length() {
        let line = r#"values: ["${join("\", \"", var.types)}"]"#;
        let masked = mask_quoting_interpolations(line);
        assert_eq!(masked.len(), line.len());
        let inner = r#"join("\", \"", var.types)"#;
        assert_eq!(
            masked,
            format!(r#"values: ["${{{}}}"]"#, "x".repeat(inner.len()))
        );
        // Nested braces and plain references are left as they are.
        let plain = "name: ${var.name}\nx: ${merge({a = 1}, {})}";
        assert_eq!(mask_quoting_interpolations(plain), plain);
        // An interpolation that never closes is left too.
        assert_eq!(
            mask_quoting_interpolations(r#"a: ${f("x""#),
            r#"a: ${f("x""#
        );
    }

    #[test]
    fn an_indented_heredocs_document_markers_separate_documents() {
        let text = "x = <<-YAML\n    kind: A\n    ---\n    kind: B\n  YAML\n";
        let span = 4..text.len() - 1;
        let body = heredoc_body(text, span).unwrap();
        let blanked = blank_outside(text, body);
        assert_eq!(blanked.len(), text.len());
        assert!(blanked.contains("\n---    \n"), "{blanked:?}");
        let parsed = crate::yaml::parse(&blanked, crate::yaml::Budget::default());
        assert_eq!(parsed.docs.len(), 2);
        // A `<<` heredoc keeps its indentation, and so its marker stays a scalar's text.
        let plain = text.replace("<<-", "<< ");
        let body = heredoc_body(&plain, 4..plain.len() - 1).unwrap();
        assert!(!blank_outside(&plain, body).contains("\n---"));
    }
}
