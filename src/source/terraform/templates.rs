//! Template files that Terraform renders into manifests: `yaml_body = templatefile(P, {…})`,
//! `manifest = yamldecode(templatefile(P, {…}))`, and the same with `file(P)`. A file named
//! `.yaml`/`.yml` is linted as YAML already; one named otherwise (`nodepool.yaml.tftpl`,
//! `deployment.tpl`) is read here, as its own file: interpolations in a value's place are
//! placeholders, and a template with directives or interpolations that insert structure is listed
//! as skipped, as in a heredoc.

use super::eval::Eval;
use super::heredoc;
use super::manifest::{attr, for_each_instance, manifest_field};
use crate::source::{Role, Skipped, SourceFile};
use crate::yaml::{Budget, compat};
use hcl_edit::expr::{Expression, FuncCall};
use hcl_edit::structure::{Body, Structure};
use std::path::PathBuf;
use std::sync::Arc;

/// The template files the manifests of `body` are rendered from, when their path is static.
pub fn referenced(body: &Body, ev: &mut Eval<'_, '_>, out: &mut Vec<PathBuf>) {
    for b in body.iter().filter_map(Structure::as_block) {
        let Some(field) = manifest_field(b) else {
            continue;
        };
        let Some(call) = attr(b, field).and_then(rendering) else {
            continue;
        };
        let Some(path) = call.args.iter().next() else {
            continue;
        };
        for_each_instance(b, ev, |ev| {
            let p = ev.eval(path);
            if let Some(p) = p.str().filter(|p| !p.is_empty()) {
                let p = PathBuf::from(p);
                let dir = ev.scope.origins.get(ev.file).map(|o| o.dir);
                let allowed = dir.is_some_and(|d| super::may_read(d, &p));
                if allowed && !is_yaml(&p) && !out.contains(&p) {
                    out.push(p);
                }
            }
        });
    }
}

/// `templatefile(…)`/`file(…)`, directly or inside `yamldecode(…)`.
fn rendering(e: &Expression) -> Option<&FuncCall> {
    let Expression::FuncCall(f) = e else {
        return None;
    };
    if f.name.is_namespaced() {
        return None;
    }
    match f.name.name.as_str() {
        "templatefile" | "file" => Some(f),
        "yamldecode" => f.args.iter().next().and_then(rendering),
        _ => None,
    }
}

fn is_yaml(p: &std::path::Path) -> bool {
    p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// One template file read as the manifests it renders; `None` when it cannot be read.
pub fn read(path: &std::path::Path) -> Option<SourceFile> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > crate::source::MAX_FILE_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let display = crate::source::display_path(path);
    let text: Arc<str> = Arc::from(text);
    if let Some(t) = compat::structural_template_markers(&heredoc::mask_values(&text)) {
        return Some(SourceFile {
            path: display,
            text,
            docs: Vec::new(),
            problems: Vec::new(),
            skipped: Some(Skipped {
                reason: t.kind.to_string(),
                marker: t.marker,
                span: t.span,
                hint: None,
            }),
            role: Role::Linted,
            lines: Default::default(),
        });
    }
    // Quotes inside an interpolation are Terraform's, gone once it renders the file.
    let parsed = match heredoc::mask_quoting_interpolations(&text) {
        std::borrow::Cow::Owned(masked) => {
            compat::parse_shared(&Arc::from(masked), Budget::default())
        }
        std::borrow::Cow::Borrowed(_) => compat::parse_shared(&text, Budget::default()),
    };
    // One that does not read as YAML until Terraform fills it in (`values:` over a line that is
    // only `${instance_arch}`, a `yamlencode` list) is a template, not broken YAML.
    if let Some(first) = parsed.problems.first() {
        let hint = compat::template_markers(&text);
        return Some(SourceFile {
            path: display,
            skipped: Some(Skipped {
                reason: hint.as_ref().map_or("template", |h| h.kind).to_string(),
                marker: hint.as_ref().map(|h| h.marker.clone()).unwrap_or_default(),
                span: hint.map_or(first.span, |h| h.span),
                hint: None,
            }),
            text,
            docs: Vec::new(),
            problems: Vec::new(),
            role: Role::Linted,
            lines: Default::default(),
        });
    }
    Some(SourceFile {
        path: display,
        text,
        docs: parsed.docs,
        problems: parsed.problems,
        skipped: None,
        role: Role::Linted,
        lines: Default::default(),
    })
}
