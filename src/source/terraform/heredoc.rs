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
    // Only ASCII replaced whole characters, and `keep` starts and ends on line boundaries.
    String::from_utf8(out).unwrap_or_default()
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
