//! Adding each build's outcome to the run's files: its output, a located failure, or a skip.

use super::{
    Build, HELM_FAILED, HelmResult, KUSTOMIZE_FAILED, KustomizeResult, Line, Origin, Sources,
    display_canonical, first_key, helm, kustomize, parsed_file, remap, tree,
};
use crate::source::SourceFile;
use crate::yaml::{Problem, Span};
use std::path::{Path, PathBuf};
use tree::identity;

impl Sources {
    /// Adds a build's output (or failure, or skip) to `files`: always one file. `app`: the Argo
    /// CD Application (and options) the build is for.
    pub(super) fn add_kustomize(
        &mut self,
        top: &Path,
        r: KustomizeResult,
        files: &mut Vec<SourceFile>,
        app: Option<&str>,
    ) {
        let kind = failure_kind(app.is_some());
        let Some(k) = self.forest.get(top) else {
            files.push(failed_file(
                display_canonical(top),
                String::new(),
                Span::default(),
                format!("{KUSTOMIZE_FAILED}cannot read the kustomization"),
                kind,
            ));
            return;
        };
        let dir = display_canonical(&k.dir);
        let for_app = app.map(|a| format!(" for {a}")).unwrap_or_default();
        match r {
            KustomizeResult::Built(b) => {
                let file = SourceFile::from_text(
                    format!("{} (kustomize build{for_app})", k.file.path),
                    b.text,
                );
                let mut origins = b.origins;
                if origins.len() != file.docs.len() {
                    origins = vec![Origin::Unknown; file.docs.len()];
                }
                let read = self.forest.files_read(top);
                let mut shown_read: Vec<String> = read
                    .iter()
                    .map(|p| {
                        self.forest
                            .get(p)
                            .map_or_else(|| display_canonical(p), |k| k.file.path.clone())
                    })
                    .collect();
                shown_read.sort();
                self.lines.push(Line {
                    what: "build",
                    path: k.file.path.clone(),
                    detail: format!(
                        "`{}` in {dir}{for_app} (through a temporary wrapper kustomization: `resources: [<relative path to {dir}>]`, `buildMetadata: [originAnnotations]`): {} from {}",
                        b.command,
                        documents(file.docs.len()),
                        shown_read.join(", ")
                    ),
                });
                for p in read {
                    if self.forest.get(&p).is_none()
                        && !self.cache.contains_key(&p)
                        && let Some(f) = parsed_file(&p)
                    {
                        self.cache.insert(p, f);
                    }
                }
                self.builds.push(Build {
                    fid: files.len(),
                    source: top.to_path_buf(),
                    shown: k.file.path.clone(),
                    map: Box::new(kustomize::remap::Map {
                        top: top.to_path_buf(),
                        origins,
                    }),
                });
                files.push(file);
            }
            KustomizeResult::Failed(f) => {
                // The kustomization the error chain ends in, else the one built.
                let at =
                    f.at.as_deref()
                        .map(identity)
                        .and_then(|d| self.forest.by_path.values().find(|k| k.dir == d))
                        .unwrap_or(k);
                let span = at
                    .refs
                    .iter()
                    .find(|r| {
                        f.message.contains(&format!("'{}'", r.raw))
                            || f.message.contains(&format!("({})", r.raw))
                    })
                    .map(|r| r.span)
                    .or_else(|| at.file.problems.first().map(|p| p.span))
                    .unwrap_or_else(|| first_key(&at.file));
                // Only a missing input, and nothing in view deploys it: likely generated.
                let kind = match kind {
                    crate::yaml::ProblemKind::Build if f.missing_input => {
                        crate::yaml::ProblemKind::MissingInput
                    }
                    k => k,
                };
                let reported = if kind == crate::yaml::ProblemKind::MissingInput {
                    "a file it reads is missing, usually one a build step generates: reported as source-build-failed only where something deploys it"
                } else {
                    "reported as source-build-failed"
                };
                self.lines.push(Line {
                    what: "failed",
                    path: k.file.path.clone(),
                    detail: format!(
                        "`{}` in {dir}{for_app}: {} ({reported})",
                        f.command, f.message
                    ),
                });
                files.push(failed_file(
                    at.file.path.clone(),
                    at.file.text.to_string(),
                    span,
                    format!("{KUSTOMIZE_FAILED}{}", f.message),
                    kind,
                ));
            }
            KustomizeResult::Skipped {
                reason,
                marker,
                span,
            } => {
                self.lines.push(Line {
                    what: "skipped",
                    path: k.file.path.clone(),
                    detail: format!("{reason}{for_app}: {marker}; build it yourself and lint the output with `kustomize build {dir} | gpuops lint -`"),
                });
                files.push(skipped_file(
                    k.file.path.clone(),
                    k.file.text.to_string(),
                    reason,
                    marker,
                    span,
                ));
            }
        }
    }

    /// Adds a chart's output (or failure, or skip) to `files`: always one file. `app`: the Argo
    /// CD Application the render is for; `extra_values`: files its values also come from (the
    /// Application's manifest, for inline values).
    pub(super) fn add_chart(
        &mut self,
        chart: &helm::Chart,
        r: HelmResult,
        files: &mut Vec<SourceFile>,
        app: Option<(&str, Vec<PathBuf>)>,
    ) {
        let kind = failure_kind(app.is_some());
        let (for_app, extra_values) = match app {
            Some((a, v)) => (format!(" for {a}"), v),
            None => (String::new(), Vec::new()),
        };
        match r {
            HelmResult::Built {
                text,
                command,
                render,
            } => {
                let sources = helm::sources(&text, chart);
                let file = SourceFile::from_text(
                    format!("{} (helm template{for_app})", chart.file.path),
                    text,
                );
                let mut values: Vec<PathBuf> = Vec::new();
                let default_values = chart.dir.join("values.yaml");
                if default_values.is_file() {
                    values.push(identity(&default_values));
                }
                values.extend(render.values.iter().cloned());
                values.extend(extra_values);
                self.lines.push(Line {
                    what: "build",
                    path: chart.shown.clone(),
                    detail: format!(
                        "`{command}` in {}{for_app}: {}",
                        chart.shown,
                        documents(file.docs.len())
                    ),
                });
                for p in &values {
                    if !self.cache.contains_key(p)
                        && let Some(f) = parsed_file(p)
                    {
                        self.cache.insert(p.clone(), f);
                    }
                }
                for p in sources.iter().filter_map(|(_, p)| p.as_ref()) {
                    if !self.cache.contains_key(p)
                        && let Some(f) = text_file(p)
                    {
                        self.cache.insert(p.clone(), f);
                    }
                }
                self.builds.push(Build {
                    fid: files.len(),
                    source: chart.dir.clone(),
                    shown: display_canonical(&chart.dir),
                    map: Box::new(helm::remap::Map { sources, values }),
                });
                files.push(file);
            }
            HelmResult::Failed {
                message,
                command,
                at,
            } => {
                self.lines.push(Line {
                    what: "failed",
                    path: chart.shown.clone(),
                    detail: if command.is_empty() {
                        format!("{message}{for_app} (reported as source-build-failed)")
                    } else {
                        format!("`{command}`{for_app}: {message} (reported as source-build-failed)")
                    },
                });
                let message = format!("{HELM_FAILED}{message}");
                let in_template = at.and_then(|(p, line, col)| {
                    let f = text_file(&p)?;
                    let start = remap_line_col(&f.text, line, col)?;
                    let end = f.text[start..]
                        .find('\n')
                        .map_or(f.text.len(), |i| start + i);
                    let span = remap::span_at(&f.text, start, end - start);
                    Some(failed_file(
                        f.path,
                        f.text.to_string(),
                        span,
                        message.clone(),
                        kind,
                    ))
                });
                files.push(in_template.unwrap_or_else(|| {
                    failed_file(
                        chart.file.path.clone(),
                        chart.file.text.to_string(),
                        first_key(&chart.file),
                        message,
                        kind,
                    )
                }));
            }
            HelmResult::Skipped {
                reason,
                marker,
                span,
                hint,
            } => {
                self.lines.push(Line {
                    what: "skipped",
                    path: chart.shown.clone(),
                    detail: format!("{reason}{for_app}; lint it with `{hint}`"),
                });
                files.push(skipped_file(
                    chart.file.path.clone(),
                    chart.file.text.to_string(),
                    reason,
                    marker,
                    span,
                ));
            }
        }
    }
}

fn skipped_file(
    path: String,
    text: String,
    reason: String,
    marker: String,
    span: Span,
) -> SourceFile {
    SourceFile {
        path,
        text: text.into(),
        docs: Vec::new(),
        problems: Vec::new(),
        skipped: Some(crate::source::Skipped {
            reason,
            marker,
            span,
        }),
        role: Default::default(),
        lines: Default::default(),
    }
}

/// A build that failed, as a file with one problem: `Sync` when an Argo CD Application deploys
/// the source (it certainly tries to build it), else `Build`.
fn failed_file(
    path: String,
    text: String,
    span: Span,
    message: String,
    kind: crate::yaml::ProblemKind,
) -> SourceFile {
    SourceFile {
        path,
        text: text.into(),
        docs: Vec::new(),
        problems: vec![Problem {
            span,
            message,
            first: None,
            kind,
        }],
        skipped: None,
        role: Default::default(),
        lines: Default::default(),
    }
}

/// Text only: templates are not YAML, and must not be listed as skipped templates.
fn text_file(path: &Path) -> Option<SourceFile> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(SourceFile {
        path: display_canonical(path),
        text: text.into(),
        docs: Vec::new(),
        problems: Vec::new(),
        skipped: None,
        role: Default::default(),
        lines: Default::default(),
    })
}

fn documents(n: usize) -> String {
    format!("{n} document{}", if n == 1 { "" } else { "s" })
}

/// Byte offset of a 1-based line and column.
fn remap_line_col(text: &str, line: u32, col: u32) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line as usize - 2)?.0 + 1
    };
    let rest = &text[start..];
    let end = rest.find('\n').unwrap_or(rest.len());
    let in_line = rest[..end]
        .char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(end, |(i, _)| i);
    Some(start + in_line)
}

fn failure_kind(for_app: bool) -> crate::yaml::ProblemKind {
    if for_app {
        crate::yaml::ProblemKind::Sync
    } else {
        crate::yaml::ProblemKind::Build
    }
}
