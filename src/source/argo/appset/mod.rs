//! Expanding an `ApplicationSet` offline, as Argo CD's ApplicationSet controller would: its
//! generators give parameter sets, and the template is filled in once per set, giving
//! Applications.
//!
//! Generators evaluated ([`generators`]): `list` (`elements`, `elementsYaml`), `clusters` (the
//! clusters of [`Fleet`]: `clusters:` in the config and cluster Secrets, filtered by the
//! `selector`, Argo CD's own cluster added as Argo CD adds it), `git` `directories` and `files`
//! (over this repository's tree, [`git`]), `matrix` (two children, the second filled with the
//! first's parameters) and `merge` (`mergeKeys`), each filtered by its own `selector`. The
//! generators that need a live cluster or a remote service (`scmProvider`, `pullRequest`,
//! `clusterDecisionResource`, `plugin`) are reported as not evaluated, with the reason.
//!
//! Parameters fill every string of the template (keys too) in the ApplicationSet's style:
//! fasttemplate (`{{path.basename}}`, the default; a tag with no value stays as written, as in
//! Argo CD) or, with `goTemplate: true`, Go templates ([`super::gotmpl`], `goTemplateOptions`
//! honoured). A generator's own `template` is laid over the ApplicationSet's, and
//! `templatePatch` is rendered and applied to each Application. Spans of the filled-in nodes
//! stay those of the template, so whatever is reported about a generated Application points
//! into the ApplicationSet.
//!
//! Where Argo CD would fail (a missing key under `missingkey=error`, a matrix of three, list
//! elements that are not strings for fasttemplate) the reason is kept ([`Expansion::failed`]):
//! Argo CD then creates or updates no Application of the set, but gpuops still lints those the
//! other parameter sets give.

mod generators;
mod git;
mod params;
mod shape;

use super::fleet::Fleet;
use super::gotmpl::{self, Missing};
use crate::yaml::{Document, Node, construct};
use params::{Set, Style};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// An Application made from the template.
#[derive(Debug)]
pub struct Generated {
    /// The template with its parameters filled in.
    pub doc: Document,
    /// Which parameter set made it: `list element 2`, `cluster prod × list element 1`, …
    pub label: String,
    /// The cluster whose parameters are in it (from a `clusters` generator).
    pub cluster: Option<String>,
}

impl Generated {
    pub fn root(&self) -> Node<'_> {
        self.doc.root()
    }
}

/// What an ApplicationSet gave.
#[derive(Debug, Default)]
pub struct Expansion {
    pub apps: Vec<Generated>,
    /// Generators not evaluated, each with the reason.
    pub skipped: Vec<String>,
    /// What Argo CD fails on, each with the reason.
    pub failed: Vec<String>,
    /// What was approximated or left as written.
    pub notes: BTreeSet<String>,
}

/// What generators may look at.
pub struct Context<'a> {
    /// The repository root (an identity).
    pub root: &'a Path,
    /// This repository's normalised URLs (`argo.repo`); empty: not configured.
    pub repo: &'a [String],
    /// The clusters Argo CD knows.
    pub fleet: &'a Fleet,
}

/// Why a generator gives nothing.
#[derive(Debug)]
enum GenError {
    /// gpuops cannot evaluate it.
    NotEvaluated(String),
    /// Argo CD fails on it.
    Failed(String),
}

/// Expands an ApplicationSet. `Err`: it gives nothing that can be linted, and why.
pub fn expand(appset: Node<'_>, cx: &Context) -> Result<Expansion, String> {
    let spec = appset
        .get("spec")
        .ok_or_else(|| "an ApplicationSet without `spec`".to_string())?;
    let template = spec
        .get("template")
        .filter(|t| t.as_map().is_some())
        .ok_or_else(|| "an ApplicationSet without `spec.template`".to_string())?;
    let go = spec
        .get("goTemplate")
        .and_then(Node::as_str)
        .is_some_and(|g| g == "true");
    let options: Vec<&str> = spec
        .get("goTemplateOptions")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(Node::as_str)
        .collect();
    let missing = if go {
        Missing::from_options(options).map_err(|e| format!("Argo CD cannot render it: {e}"))?
    } else {
        Missing::Default
    };
    let style = Style { go, missing };
    let generators: Vec<Node<'_>> = spec
        .get("generators")
        .into_iter()
        .flat_map(Node::items)
        .collect();
    if generators.is_empty() {
        return Err("an ApplicationSet without generators".into());
    }
    let patch = spec.get("templatePatch").filter(|p| !p.is_null());
    let mut out = Expansion::default();
    for g in generators {
        let sets = generators::Gen {
            cx,
            style,
            notes: &mut out.notes,
        }
        .sets(g, None, 0);
        // A top-level generator's own `template` is laid over the ApplicationSet's.
        let own = g
            .entries()
            .find(|(k, _, _)| *k != "selector")
            .and_then(|(_, _, body)| body.get("template"))
            .filter(|t| t.as_map().is_some_and(|m| !m.is_empty()));
        match sets {
            Ok(sets) => {
                for set in sets {
                    if let Some(doc) = render_app(template, own, patch, &set, style, &mut out) {
                        out.apps.push(Generated {
                            doc,
                            label: set.label,
                            cluster: set.cluster,
                        });
                    }
                }
            }
            Err(GenError::NotEvaluated(r)) => out.skipped.push(r),
            Err(GenError::Failed(r)) => out.failed.push(r),
        }
    }
    Ok(out)
}

/// One Application: the template (under the generator's own) filled with the set, patched.
/// `None`: Argo CD cannot render it (the reason is in `out.failed`).
fn render_app(
    template: Node<'_>,
    own: Option<Node<'_>>,
    patch: Option<Node<'_>>,
    set: &Set,
    style: Style,
    out: &mut Expansion,
) -> Option<Document> {
    let mut s = match own {
        Some(o) => shape::fill_gaps(shape::copy(o), shape::copy(template)),
        None => shape::copy(template),
    };
    let mut missing = BTreeSet::new();
    let mut unevaluated = BTreeMap::new();
    let notes = &mut out.notes;
    let filled = shape::fill(&mut s, &mut |t| {
        if !t.contains("{{") {
            return Ok(None);
        }
        match set.params.render(t, style, &mut missing) {
            Ok(v) => Ok(Some(v)),
            Err(gotmpl::Error::Unsupported(m)) => {
                notes.insert(format!("`{t}` is not evaluated ({m}): left as written"));
                unevaluated.insert(t.to_string(), m);
                Ok(None)
            }
            Err(gotmpl::Error::Failed(m)) => Err(format!("`{t}`: {m}")),
        }
    });
    if let Err(e) = filled {
        out.failed.push(format!("{}: {e}", set.label));
        return None;
    }
    // A source left as written names nothing Argo CD would sync: the Application is not
    // evaluated rather than judged by a path that is still a template.
    if let Some((t, m)) = source_fields(&s).find_map(|v| unevaluated.get_key_value(v)) {
        // The skip says it; a note that the text was left as written would say it twice.
        let left = format!("`{t}` is not evaluated ({m}): left as written");
        out.notes.remove(&left);
        out.skipped
            .push(format!("{}: `{t}` is not evaluated ({m})", set.label));
        return None;
    }
    for m in missing {
        out.notes.insert(format!(
            "`{m}` has no value ({}): left as written",
            set.label
        ));
    }
    if let Some(p) = patch {
        let text = p.as_str().unwrap_or_default();
        match set.params.render(text, style, &mut BTreeSet::new()) {
            Ok(rendered) => {
                let parsed = crate::yaml::parse(&rendered, crate::yaml::Budget::default());
                match (parsed.problems.first(), parsed.docs.first()) {
                    (Some(problem), _) => {
                        out.failed.push(format!(
                            "{}: `templatePatch` does not parse: {}",
                            set.label, problem.message
                        ));
                        return None;
                    }
                    (None, Some(d)) if d.root().as_map().is_some() => {
                        // Argo CD keeps the template's project whatever the patch says.
                        let project = shape::get(&s, "spec")
                            .and_then(|sp| shape::get(sp, "project"))
                            .cloned();
                        s = shape::patch(s, shape::relocated(d.root(), p.span()));
                        if let (Some(project), Some(spec)) = (project, shape_spec(&mut s)) {
                            let key = crate::yaml::Shape::str(p.span(), "project");
                            shape::set(spec, key, project);
                        }
                    }
                    _ => {}
                }
            }
            Err(gotmpl::Error::Unsupported(m)) => {
                out.notes
                    .insert(format!("`templatePatch` is not applied ({m})"));
            }
            Err(gotmpl::Error::Failed(m)) => {
                out.failed
                    .push(format!("{}: `templatePatch`: {m}", set.label));
                return None;
            }
        }
    }
    Some(construct(template.shared_text(), &s))
}

/// The texts of the fields that say what an Application syncs: its sources' `repoURL`, `path`,
/// `chart` and `targetRevision`.
fn source_fields<'s>(s: &'s crate::yaml::Shape<'_>) -> impl Iterator<Item = &'s str> {
    use crate::yaml::Shape;
    let spec = shape::get(s, "spec");
    let single = spec.and_then(|sp| shape::get(sp, "source")).into_iter();
    let many = spec
        .and_then(|sp| shape::get(sp, "sources"))
        .into_iter()
        .flat_map(|l| match l {
            Shape::Seq { items, .. } => items.iter().collect(),
            _ => Vec::new(),
        });
    single.chain(many).flat_map(|src| {
        ["repoURL", "path", "chart", "targetRevision"]
            .into_iter()
            .filter_map(move |k| match shape::get(src, k) {
                Some(Shape::Scalar { text, .. }) => Some(text.as_str()),
                _ => None,
            })
    })
}

fn shape_spec<'s, 'a>(s: &'s mut crate::yaml::Shape<'a>) -> Option<&'s mut crate::yaml::Shape<'a>> {
    match s {
        crate::yaml::Shape::Map { entries, .. } => entries
            .iter_mut()
            .find(|(k, _)| matches!(k, crate::yaml::Shape::Scalar { text, .. } if text == "spec"))
            .map(|(_, v)| v),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
