//! Manifests that Terraform applies: the YAML heredocs of `kubectl_manifest` (`yaml_body`),
//! `kubernetes_manifest` (`manifest = yamldecode(…)`), `kubectl_file_documents` (`content`) and
//! any other `yamldecode(<<EOT … EOT)`, read from `.tf` files.
//!
//! Each heredoc is parsed where it stands: the file's text with everything outside the heredoc
//! blanked (newlines kept) parses to the same documents at the same byte offsets, lines and
//! columns, so a finding points into the `.tf` file with no mapping back. Interpolations
//! (`${module.eks.cluster_name}`) are values Terraform fills in: placeholders, never judged. A
//! heredoc with template directives (`%{ for … }`) or interpolations that insert structure
//! (`${indent(4, yamlencode(…))}`) is not YAML until Terraform renders it, and is not read.
//! Nothing is evaluated and no provider runs; a file that is not valid HCL is not read.

use super::SourceFile;
use crate::yaml::compat;
use crate::yaml::{Budget, Problem};
use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Body, Structure};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Whether discovery reads this file as Terraform.
pub fn is_terraform(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "tf")
}

/// What a Terraform file holds for the linter; `None` when it applies no manifest (or is not
/// valid HCL), so it is not counted as a linted file.
pub fn read(path: String, text: String) -> Option<SourceFile> {
    // Most `.tf` files apply no manifest: one scan each rules them out before any parse.
    if ![
        "kubectl_manifest",
        "kubernetes_manifest",
        "yamldecode",
        "kubectl_file_documents",
    ]
    .iter()
    .any(|w| text.contains(w))
    {
        return None;
    }
    let body = hcl_edit::parser::parse_body(&text).ok()?;
    let mut bodies = Vec::new();
    collect(&body, None, &mut bodies);
    if bodies.is_empty() {
        return None;
    }
    let text: Arc<str> = Arc::from(text);
    let mut docs = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let mut template = None;
    for range in bodies.into_iter().filter_map(|s| heredoc_body(&text, s)) {
        let blanked: Arc<str> = Arc::from(blank_outside(&text, range));
        if let Some(t) = compat::structural_template_markers(&mask_values(&blanked)) {
            template.get_or_insert(t);
            continue;
        }
        let parsed = compat::parse_shared(&blanked, Budget::default());
        docs.extend(parsed.docs);
        problems.extend(parsed.problems);
    }
    let skipped = (docs.is_empty() && problems.is_empty())
        .then_some(template)
        .flatten()
        .map(|t| super::Skipped {
            reason: t.kind.to_string(),
            marker: t.marker,
            span: t.span,
            hint: None,
        });
    if docs.is_empty() && problems.is_empty() && skipped.is_none() {
        return None;
    }
    Some(SourceFile {
        path,
        text,
        docs,
        problems,
        skipped,
        role: Default::default(),
        lines: Default::default(),
    })
}

/// The spans of the YAML heredocs `body` applies, in file order; `field`: the attribute of the
/// enclosing block that holds a manifest (`yaml_body` of a `kubectl_manifest`).
fn collect(body: &Body, field: Option<&str>, out: &mut Vec<Range<usize>>) {
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
fn heredoc(e: &Expression, out: &mut Vec<Range<usize>>) {
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
fn heredoc_body(text: &str, span: Range<usize>) -> Option<Range<usize>> {
    let whole = text.get(span.clone())?;
    let start = span.start + whole.find('\n')? + 1;
    let end = span.start + whole.trim_end().rfind('\n')? + 1;
    (start <= end).then_some(start..end)
}

/// `text` with every byte outside `keep` a space (newlines kept): same length, lines and
/// columns, so what parses from it stands where it stands in the file.
fn blank_outside(text: &str, keep: Range<usize>) -> String {
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
fn mask_values(text: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<String> {
        read("x.tf".into(), text.into())
            .map(|f| {
                f.docs
                    .iter()
                    .filter_map(|d| Some(d.root().get("kind")?.as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn heredocs_that_terraform_applies_are_read() {
        let text = r#"
locals {
  queue = yamldecode(<<EOT
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: gpu
EOT
  )
}
resource "kubernetes_manifest" "flavor" {
  manifest = yamldecode(<<-EOT
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: ${var.flavor}
  EOT
  )
}
resource "helm_release" "karpenter" {
  values = [<<-EOT
    settings:
      clusterName: x
  EOT
  ]
}
"#;
        assert_eq!(kinds(text), ["ClusterQueue", "ResourceFlavor"]);
    }

    #[test]
    fn a_finding_position_is_the_position_in_the_tf_file() {
        let text = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n  YAML\n}\n";
        let f = read("x.tf".into(), text.into()).unwrap();
        let kind = f.docs[0].root().get("kind").unwrap();
        let p = f.pos(kind.span().start());
        assert_eq!((p.line, p.col), (3, 11));
        assert_eq!(&*f.text, text);
    }

    #[test]
    fn interpolated_values_are_placeholders_inserted_structure_is_a_template() {
        let value = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n    metadata:\n      name: ${var.name}\n      labels:\n        - ${local.x}\n  YAML\n}\n";
        assert_eq!(kinds(value), ["NodePool"]);
        let inserted = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n    spec:\n      ${indent(6, yamlencode(var.spec))}\n  YAML\n}\n";
        let f = read("x.tf".into(), inserted.into()).unwrap();
        assert!(f.docs.is_empty());
        assert_eq!(f.skipped.unwrap().reason, "Terraform template");
    }

    #[test]
    fn not_terraform_that_applies_manifests_is_none() {
        assert!(read("x.tf".into(), "module \"eks\" {}\n".into()).is_none());
        assert!(
            read(
                "x.tf".into(),
                "resource \"kubectl_manifest\" \"x\" {\n".into()
            )
            .is_none()
        );
    }
}
