//! Lint what ArgoCD would sync: kustomizations are built and charts rendered by their own tools,
//! the output is linted like any file, and findings are pointed back at the files and lines that
//! produced them.
//!
//! [`Sources::plan`] decides, from what discovery found, which files are read raw, which
//! kustomizations are built (overlays; bases only through them unless `lint-bases`) and which
//! charts are rendered. [`Sources::render`] runs the tools and adds one rendered file per build
//! (or one located failure, or one skipped entry) to the run's files. After linting,
//! [`Sources::finish`] moves every finding on rendered output to its source (see [`remap`]),
//! collapses identical findings that several overlays share, and adds the files the builds read.
//!
//! With Argo CD Applications in the repository, [`Sources::render`] also works out what each one
//! syncs and to which cluster (see [`argo`]).

pub mod argo;
pub mod exec;
pub mod helm;
pub mod kustomize;
pub mod remap;
pub mod settings;
pub mod tree;

pub use settings::{ChartConfig, SourcesConfig, parse_key as parse_config_key};

use crate::config::Settings;
use crate::diag::{Diagnostic, FileId, Loc, Related};
use crate::source::{SourceFile, display_path};
use crate::yaml::{Problem, Span};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use tree::{Forest, Target, identity};

/// Where a document of a kustomize build came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read from this file (identity).
    File(PathBuf),
    /// Made by a generator configured in this kustomization file (identity).
    Generated {
        kustomization: PathBuf,
    },
    /// From a remote base.
    Remote,
    Unknown,
}

/// How build failures start their message; the `source-build-failed` rule owns such problems.
pub const KUSTOMIZE_FAILED: &str = "`kustomize build` failed: ";
pub const HELM_FAILED: &str = "`helm template` failed: ";
/// An Argo CD Application whose source in this repository cannot be synced.
pub const ARGO_FAILED: &str = "Argo CD cannot sync ";

/// Whether a file problem is a failed build rather than a YAML problem.
pub fn is_build_failure(p: &Problem) -> bool {
    p.message.starts_with(KUSTOMIZE_FAILED)
        || p.message.starts_with(HELM_FAILED)
        || p.message.starts_with(ARGO_FAILED)
}

/// A path as shown to the user: relative to the working directory when under it.
pub fn shown(p: &Path) -> String {
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let cwd = CWD.get_or_init(|| std::env::current_dir().ok().map(|c| identity(&c)));
    if let Some(cwd) = cwd
        && let Ok(rel) = p.strip_prefix(cwd)
    {
        let s = display_path(rel);
        return if s.is_empty() { ".".into() } else { s };
    }
    display_path(p)
}

/// What became of one build, for the rendered file list.
#[derive(Debug)]
enum Kind {
    Kustomize {
        /// Identity of the kustomization file.
        top: PathBuf,
        origins: Vec<Origin>,
    },
    Helm {
        /// Identity of the chart directory.
        chart: PathBuf,
        sources: Vec<(usize, Option<PathBuf>)>,
        values: Vec<PathBuf>,
    },
}

#[derive(Debug)]
struct Build {
    /// The rendered file in the run's file list.
    fid: FileId,
    kind: Kind,
}

/// A line of `--explain-sources`.
#[derive(Debug)]
struct Line {
    what: &'static str,
    path: String,
    detail: String,
}

/// The plan for a run and, once rendered, what is needed to map findings back.
#[derive(Debug)]
pub struct Sources {
    config: SourcesConfig,
    /// Directory chart paths and values files in the config are relative to.
    root: PathBuf,
    forest: Forest,
    raw: Vec<PathBuf>,
    /// Kustomization files (identities) to build.
    tops: Vec<PathBuf>,
    charts: Vec<PathBuf>,
    tool: Option<kustomize::Tool>,
    helm: Option<PathBuf>,
    builds: Vec<Build>,
    /// Files the builds read (origins, patches, templates, values), parsed, by identity.
    cache: BTreeMap<PathBuf, SourceFile>,
    lines: Vec<Line>,
    notes: Vec<String>,
    /// `clusters:` of the config: Argo CD destinations are matched against them.
    clusters: Vec<crate::config::ClusterDef>,
    /// The config's `exclude:` globs (relative to `root`): files Argo CD directories hold that
    /// match are not read.
    exclude: Option<globset::GlobSet>,
    /// The `argo:` line of `--explain-sources`, when the repository has Applications.
    argo_summary: Option<String>,
}

fn is_yaml_name(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "YAML" | "YML")
    )
}

/// A `Kustomization` file (no extension): discovery lists it for building only; it is never
/// read raw.
fn is_bare_kustomization(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "Kustomization")
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

fn failed_file(path: String, text: String, span: Span, message: String) -> SourceFile {
    SourceFile {
        path,
        text: text.into(),
        docs: Vec::new(),
        problems: vec![Problem {
            span,
            message,
            first: None,
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
        path: shown(path),
        text: text.into(),
        docs: Vec::new(),
        problems: Vec::new(),
        skipped: None,
        role: Default::default(),
        lines: Default::default(),
    })
}

fn parsed_file(path: &Path) -> Option<SourceFile> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::source::from_bytes(shown(path), bytes))
}

/// The first key of a file's first document: where a note about the whole file points.
fn first_key(f: &SourceFile) -> Span {
    f.docs
        .first()
        .and_then(|d| d.root().as_map()?.first().map(|(k, _)| k.span()))
        .unwrap_or_default()
}

/// The builds of the top kustomizations, in `tops` order, made while the raw files are read.
#[derive(Default)]
pub struct Builds(Vec<KResult>);

/// The outcome of building one kustomization.
enum KResult {
    Built(kustomize::Built),
    Failed(kustomize::Failed),
    Skipped {
        reason: String,
        marker: String,
        span: Span,
    },
}

/// The outcome of rendering one chart.
enum HResult {
    Built {
        text: String,
        command: String,
        render: helm::Render,
    },
    Failed {
        message: String,
        command: String,
        /// A template line helm's message names.
        at: Option<(PathBuf, u32, u32)>,
    },
    Skipped {
        reason: String,
        marker: String,
        span: Span,
        hint: String,
    },
}

impl Sources {
    /// Decides what is read raw and what is built. `found` is every file discovery found
    /// (YAML and `Kustomization`), `charts` the chart directories it did not enter.
    pub fn plan(found: Vec<PathBuf>, charts: Vec<PathBuf>, settings: &Settings) -> Sources {
        let config = settings.sources.clone();
        let root = settings
            .root
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let mut s = Sources {
            config,
            root,
            forest: Forest::default(),
            raw: Vec::new(),
            tops: Vec::new(),
            charts,
            tool: None,
            helm: None,
            builds: Vec::new(),
            cache: BTreeMap::new(),
            lines: Vec::new(),
            notes: Vec::new(),
            clusters: settings.clusters.clone(),
            exclude: {
                let mut b = globset::GlobSetBuilder::new();
                for g in &settings.exclude {
                    if let Ok(g) = globset::Glob::new(g) {
                        b.add(g);
                    }
                }
                b.build().ok().filter(|set| !set.is_empty())
            },
            argo_summary: None,
        };
        // Values files named in `charts:` are read by helm, not linted as manifests.
        let values: BTreeSet<PathBuf> = s
            .config
            .charts
            .iter()
            .flat_map(|c| c.values.iter())
            .map(|v| identity(&tree::normalize(&s.root.join(v))))
            .collect();
        let (values_found, found): (Vec<PathBuf>, Vec<PathBuf>) = found
            .into_iter()
            .partition(|f| !values.is_empty() && values.contains(&identity(f)));
        for v in values_found {
            s.lines.push(Line {
                what: "values",
                path: display_path(&v),
                detail: "a values file named in `charts:`: read by helm, not linted itself".into(),
            });
        }
        let kfiles: Vec<PathBuf> = found
            .iter()
            .filter(|f| tree::is_kustomization_file(f))
            .cloned()
            .collect();
        if !kfiles.is_empty() {
            if !s.config.kustomize {
                s.lines.push(Line {
                    what: "off",
                    path: "kustomize".into(),
                    detail: "rendering is off (`--no-render` or `sources: {kustomize: false}`): kustomizations are read file by file".into(),
                });
            } else {
                s.tool = kustomize::Tool::find();
                if s.tool.is_none() {
                    let msg = "neither kustomize nor kubectl is on PATH: kustomizations are read file by file, not built";
                    s.notes.push(format!("note: {msg}"));
                    s.lines.push(Line {
                        what: "off",
                        path: "kustomize".into(),
                        detail: msg.into(),
                    });
                }
            }
        }
        if s.tool.is_none() {
            s.raw = found
                .into_iter()
                .filter(|f| !is_bare_kustomization(f))
                .collect();
            s.log_raw();
            return s;
        }
        s.forest = Forest::load(&kfiles);
        let discovered: BTreeSet<PathBuf> = kfiles.iter().map(|f| identity(f)).collect();
        let referrers = s.forest.referrers();
        let tops = s.forest.tops(&discovered, s.config.lint_bases);
        // What the builds read is not read raw, and neither is anything else in a
        // kustomization's own directory (ArgoCD syncs what the build makes of it).
        let (claimed, dirs) = s.forest.claims(&discovered);
        let ids = tree::identities(&found);
        for (f, id) in found.into_iter().zip(ids) {
            if claimed.contains(&id) {
                continue;
            }
            if id.parent().is_some_and(|d| dirs.contains(d)) {
                if is_yaml_name(&f) {
                    s.lines.push(Line {
                        what: "unused",
                        path: display_path(&f),
                        detail: "in a kustomization's directory but not used by it: not linted"
                            .into(),
                    });
                }
                continue;
            }
            if !is_bare_kustomization(&f) {
                s.raw.push(f);
            }
        }
        s.log_raw();
        for k in &discovered {
            if tops.contains(k) {
                continue;
            }
            let via: Vec<String> = referrers
                .get(k)
                .into_iter()
                .flatten()
                .map(|r| shown(r.parent().unwrap_or(r)))
                .collect();
            let (path, component) = s
                .forest
                .get(k)
                .map_or((shown(k), false), |k| (k.file.path.clone(), k.component));
            s.lines.push(Line {
                what: "through",
                path,
                detail: if via.is_empty() {
                    "a component no kustomization in the linted paths uses: not linted".into()
                } else if component {
                    format!("a component: linted through {}", via.join(", "))
                } else {
                    format!(
                        "linted through {}, not on its own (`sources: {{lint-bases: true}}` builds it too)",
                        via.join(", ")
                    )
                },
            });
        }
        s.tops = tops;
        s
    }

    fn log_raw(&mut self) {
        for f in &self.raw {
            self.lines.push(Line {
                what: "raw",
                path: display_path(f),
                detail: String::new(),
            });
        }
    }

    /// Files to read and parse as they are.
    pub fn raw(&self) -> &[PathBuf] {
        &self.raw
    }

    /// Builds the kustomizations and renders the charts; adds their output (or a located
    /// failure, or a skipped entry) to `files`.
    /// Builds the top kustomizations. Each build waits on a `kustomize` process, so they run on
    /// threads of their own (as many at once as there are cores), not on the pool that parses:
    /// the caller reads and parses the raw files meanwhile.
    pub fn build_tops(&self) -> Builds {
        if self.tops.is_empty() {
            return Builds::default();
        }
        let plain = kustomize::Wrap::default();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = rayon::current_num_threads().clamp(1, self.tops.len());
        let mut done: Vec<(usize, KResult)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(top) = self.tops.get(i) else { break };
                            mine.push((i, self.build(top, &plain)));
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        done.sort_by_key(|(i, _)| *i);
        Builds(done.into_iter().map(|(_, r)| r).collect())
    }

    /// Adds the builds of [`Sources::build_tops`] to `files`, then renders charts and Argo CD
    /// Applications.
    pub fn render(&mut self, files: &mut Vec<SourceFile>, builds: Builds) {
        // Builds made for other tops (or none) are made again here.
        let results = if builds.0.len() == self.tops.len() {
            builds.0
        } else {
            self.build_tops().0
        };
        let tops = std::mem::take(&mut self.tops);
        for (top, r) in tops.iter().zip(results) {
            self.add_kustomize(top, r, files, None);
        }
        self.tops = tops;

        if !self.charts.is_empty() && self.config.helm {
            self.helm = exec::which("helm");
        }
        let mut charts: Vec<helm::Chart> = Vec::new();
        for d in &self.charts {
            match helm::Chart::load(d) {
                Some(c) => charts.push(c),
                None => self.lines.push(Line {
                    what: "skipped",
                    path: display_path(d),
                    detail: "Chart.yaml cannot be read: not linted".into(),
                }),
            }
        }
        let results: Vec<HResult> = charts.par_iter().map(|c| self.render_chart(c)).collect();
        for (chart, r) in charts.iter().zip(results) {
            self.add_chart(chart, r, files, None);
        }
        for c in &self.config.charts {
            let dir = tree::normalize(&self.root.join(&c.path));
            let id = identity(&dir);
            if !charts.iter().any(|ch| ch.dir == id) {
                self.lines.push(Line {
                    what: "unknown",
                    path: shown(&dir),
                    detail: format!(
                        "`charts: {{{}: …}}` in .gpuops.yaml names no chart that was linted",
                        c.path
                    ),
                });
            }
        }
        if self.config.argo.enabled {
            self.sync_applications(files);
        }
    }

    fn build(&self, top: &Path, wrap: &kustomize::Wrap) -> KResult {
        let Some(k) = self.forest.get(top) else {
            return KResult::Failed(kustomize::Failed {
                message: "cannot read the kustomization".into(),
                at: None,
                command: String::new(),
            });
        };
        let chain = self.forest.chain(top);
        for c in &chain {
            let in_top = c.path == k.path;
            if let Some(r) = c.refs.iter().find(|r| r.target == Target::Remote) {
                return KResult::Skipped {
                    reason: "Kustomization with a remote resource (not fetched)".into(),
                    marker: r.raw.clone(),
                    span: if in_top { r.span } else { first_key(&k.file) },
                };
            }
            if let Some(span) = c.helm_charts {
                return KResult::Skipped {
                    reason:
                        "Kustomization with helmCharts (needs --enable-helm, which fetches charts)"
                            .into(),
                    marker: "helmCharts".into(),
                    span: if in_top { span } else { first_key(&k.file) },
                };
            }
        }
        let Some(tool) = &self.tool else {
            return KResult::Failed(kustomize::Failed {
                message: "no kustomize".into(),
                at: None,
                command: String::new(),
            });
        };
        match kustomize::build(tool, &k.dir, wrap, self.config.timeout) {
            Ok(b) => KResult::Built(b),
            Err(f) => KResult::Failed(f),
        }
    }

    /// Adds a build's output (or failure, or skip) to `files`: always one file. `app`: the Argo
    /// CD Application (and options) the build is for.
    fn add_kustomize(
        &mut self,
        top: &Path,
        r: KResult,
        files: &mut Vec<SourceFile>,
        app: Option<&str>,
    ) {
        let Some(k) = self.forest.get(top) else {
            files.push(failed_file(
                shown(top),
                String::new(),
                Span::default(),
                format!("{KUSTOMIZE_FAILED}cannot read the kustomization"),
            ));
            return;
        };
        let dir = shown(&k.dir);
        let for_app = app.map(|a| format!(" for {a}")).unwrap_or_default();
        match r {
            KResult::Built(b) => {
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
                            .map_or_else(|| shown(p), |k| k.file.path.clone())
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
                    kind: Kind::Kustomize {
                        top: top.to_path_buf(),
                        origins,
                    },
                });
                files.push(file);
            }
            KResult::Failed(f) => {
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
                self.lines.push(Line {
                    what: "failed",
                    path: k.file.path.clone(),
                    detail: format!(
                        "`{}` in {dir}{for_app}: {} (reported as source-build-failed)",
                        f.command, f.message
                    ),
                });
                files.push(failed_file(
                    at.file.path.clone(),
                    at.file.text.to_string(),
                    span,
                    format!("{KUSTOMIZE_FAILED}{}", f.message),
                ));
            }
            KResult::Skipped {
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

    fn chart_settings(&self, chart: &helm::Chart) -> Result<helm::Render, String> {
        let rel = tree::relative(&identity(&self.root), &chart.dir);
        let rel = rel.to_string_lossy().replace('\\', "/");
        helm::settings_for(chart, self.config.chart(&rel), &self.root)
    }

    fn render_chart(&self, chart: &helm::Chart) -> HResult {
        match self.chart_settings(chart) {
            Ok(r) => self.render_chart_with(chart, r),
            Err(message) => HResult::Failed {
                message,
                command: String::new(),
                at: None,
            },
        }
    }

    fn render_chart_with(&self, chart: &helm::Chart, render: helm::Render) -> HResult {
        let name_span = chart
            .file
            .docs
            .first()
            .and_then(|d| d.root().get("name"))
            .map(|n| n.span())
            .unwrap_or_else(|| first_key(&chart.file));
        let marker = chart.name.clone().unwrap_or_else(|| "Chart.yaml".into());
        let hint = helm::hint(&chart.shown, &render);
        let skipped = |reason: &str, marker: String, span: Span| HResult::Skipped {
            reason: reason.into(),
            marker,
            span,
            hint: hint.clone(),
        };
        if !self.config.helm {
            return skipped("Helm chart (rendering off)", marker, name_span);
        }
        let Some(helm) = &self.helm else {
            return skipped("Helm chart (helm not on PATH)", marker, name_span);
        };
        let missing = chart.missing_dependencies();
        if let Some((_, span)) = missing.first() {
            let names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
            return skipped(
                "Helm chart (dependencies not in charts/, not fetched)",
                names.join(", "),
                *span,
            );
        }
        let (out, command) = helm::render(helm, chart, &render, self.config.timeout);
        match out {
            Ok(text) => HResult::Built {
                text,
                command,
                render,
            },
            Err(message) => HResult::Failed {
                at: helm::error_location(chart, &message),
                message,
                command,
            },
        }
    }

    /// Adds a chart's output (or failure, or skip) to `files`: always one file. `app`: the Argo
    /// CD Application the render is for; `extra_values`: files its values also come from (the
    /// Application's manifest, for inline values).
    fn add_chart(
        &mut self,
        chart: &helm::Chart,
        r: HResult,
        files: &mut Vec<SourceFile>,
        app: Option<(&str, Vec<PathBuf>)>,
    ) {
        let (for_app, extra_values) = match app {
            Some((a, v)) => (format!(" for {a}"), v),
            None => (String::new(), Vec::new()),
        };
        match r {
            HResult::Built {
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
                    kind: Kind::Helm {
                        chart: chart.dir.clone(),
                        sources,
                        values,
                    },
                });
                files.push(file);
            }
            HResult::Failed {
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
                    ))
                });
                files.push(in_template.unwrap_or_else(|| {
                    failed_file(
                        chart.file.path.clone(),
                        chart.file.text.to_string(),
                        first_key(&chart.file),
                        message,
                    )
                }));
            }
            HResult::Skipped {
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

    /// `--explain-sources`: what was read raw, built (with what command), skipped, and why.
    pub fn explain(&self) -> String {
        let count = |w: &str| self.lines.iter().filter(|l| l.what == w).count();
        let mut out = format!(
            "sources: {} read raw, {} built, {} failed, {} skipped\n",
            count("raw"),
            count("build"),
            count("failed"),
            count("skipped")
        );
        if let Some(a) = &self.argo_summary {
            out.push_str(a);
            out.push('\n');
        }
        let width = self.lines.iter().map(|l| l.what.len()).max().unwrap_or(0);
        const ORDER: [&str; 12] = [
            "off", "raw", "values", "build", "through", "unused", "failed", "skipped", "unknown",
            "appset", "app", "unlinted",
        ];
        let mut lines: Vec<&Line> = self.lines.iter().collect();
        lines.sort_by_key(|l| ORDER.iter().position(|o| *o == l.what));
        for l in lines {
            if l.detail.is_empty() {
                out.push_str(&format!("  {:width$}  {}\n", l.what, l.path));
            } else {
                out.push_str(&format!("  {:width$}  {}: {}\n", l.what, l.path, l.detail));
            }
        }
        out
    }

    /// Where a location of a finding goes.
    fn resolve(&self, files: &[SourceFile], loc: Loc) -> Option<(remap::Resolved, &Build)> {
        let b = self.builds.iter().find(|b| b.fid == loc.file)?;
        let f = files.get(loc.file)?;
        let cx = remap::Ctx {
            forest: &self.forest,
            cache: &self.cache,
        };
        let r = match &b.kind {
            Kind::Kustomize { top, origins } => remap::kustomize(&cx, top, origins, f, loc.span),
            Kind::Helm {
                sources, values, ..
            } => remap::helm(&cx, sources, values, f, loc.span),
        }?;
        Some((r, b))
    }

    /// The entry of an overlay that leads to `file` (a resource, or a base that reads it), else
    /// its `resources:` key: where "reached through this kustomization" points.
    fn entry_towards(&self, k: &tree::Kustomization, file: &Path) -> Span {
        k.refs
            .iter()
            .find(|r| match &r.target {
                Target::File(f) => f == file,
                Target::Kustomization(c) => self.forest.files_read(c).contains(file),
                _ => false,
            })
            .map(|r| r.span)
            .or_else(|| k.root()?.entry("resources").map(|(kn, _)| kn.span()))
            .unwrap_or_else(|| first_key(&k.file))
    }

    /// Every location of a finding, moved: the finding's own, then its related places, then
    /// notes the remapping adds (a removing patch, the overlay it came through).
    fn move_one(&self, files: &[SourceFile], d: &Diagnostic) -> Moved {
        let mut notes = Vec::new();
        let at = match self.resolve(files, d.loc) {
            Some((r, b)) => {
                for (p, m) in r.notes {
                    notes.push(Note::at(Dest::Path(p.file), p.span, m));
                }
                if let Kind::Kustomize { top, .. } = &b.kind
                    && let Some(k) = self.forest.get(top)
                    && !r.place.file.starts_with(&k.dir)
                {
                    notes.push(Note::at(
                        Dest::Path(k.path.clone()),
                        self.entry_towards(k, &r.place.file),
                        "reached through this kustomization".into(),
                    ));
                }
                Note::at(Dest::Path(r.place.file), r.place.span, String::new())
            }
            None => Note::at(Dest::Fid(d.loc.file), d.loc.span, String::new()),
        };
        let mut related: Vec<Note> = d
            .related
            .iter()
            .map(|r| match self.resolve(files, r.loc) {
                Some((res, _)) => Note::at(
                    Dest::Path(res.place.file),
                    res.place.span,
                    r.message.clone(),
                ),
                None => Note::at(Dest::Fid(r.loc.file), r.loc.span, r.message.clone()),
            })
            .collect();
        related.extend(notes);
        Moved { at, related }
    }

    /// Moves findings on rendered output to the files that produced them, collapses identical
    /// findings, and returns the files to report with (rendered files no finding is left on are
    /// dropped, the files builds read are added) and notes for the human report.
    pub fn finish(
        self,
        diags: &mut Vec<Diagnostic>,
        files: Vec<SourceFile>,
    ) -> (Vec<SourceFile>, Vec<String>) {
        if self.builds.is_empty() && self.cache.is_empty() && self.forest.by_path.is_empty() {
            return (files, self.notes);
        }
        let moved: Vec<Moved> = diags.iter().map(|d| self.move_one(&files, d)).collect();
        let rendered: BTreeSet<FileId> = self.builds.iter().map(|b| b.fid).collect();
        let used: BTreeSet<FileId> = moved
            .iter()
            .flat_map(|m| std::iter::once(&m.at).chain(&m.related))
            .filter_map(|n| match n.dest {
                Dest::Fid(i) => Some(i),
                Dest::Path(_) => None,
            })
            .collect();
        let read: Vec<(PathBuf, SourceFile)> = self
            .forest
            .by_path
            .into_iter()
            .map(|(p, k)| (p, k.file))
            .chain(self.cache)
            .collect();
        let list = FileList::build(files, &rendered, &used, read);
        for (d, m) in diags.iter_mut().zip(moved) {
            let old = d.loc;
            d.loc = list.loc(&m.at).unwrap_or(Loc {
                file: list.new_index.get(old.file).copied().flatten().unwrap_or(0),
                span: old.span,
            });
            d.related = m
                .related
                .into_iter()
                .filter_map(|n| {
                    let loc = list.loc(&n)?;
                    (loc != d.loc).then_some(Related {
                        loc,
                        message: n.message,
                    })
                })
                .collect();
            d.related.dedup();
        }
        let out = list.files;
        diags.sort_by(|a, b| {
            (
                &out[a.loc.file].path,
                a.loc.span.start(),
                a.rule,
                &a.message,
            )
                .cmp(&(
                    &out[b.loc.file].path,
                    b.loc.span.start(),
                    b.rule,
                    &b.message,
                ))
        });
        // The same finding reached through several overlays, at the same place: once, with the
        // notes of each (which overlays it came through).
        let mut kept: Vec<Diagnostic> = Vec::with_capacity(diags.len());
        for d in diags.drain(..) {
            match kept.last_mut() {
                Some(k) if k.loc == d.loc && k.rule == d.rule && k.message == d.message => {
                    for r in d.related {
                        if !k.related.contains(&r) {
                            k.related.push(r);
                        }
                    }
                }
                _ => kept.push(d),
            }
        }
        *diags = kept;
        (out, self.notes)
    }
}

/// Where a moved location lives: a file of the run, or a file a build read (identity).
#[derive(Clone, Debug)]
enum Dest {
    Fid(FileId),
    Path(PathBuf),
}

#[derive(Clone, Debug)]
struct Note {
    dest: Dest,
    span: Span,
    message: String,
}

impl Note {
    fn at(dest: Dest, span: Span, message: String) -> Note {
        Note {
            dest,
            span,
            message,
        }
    }
}

/// A finding's locations after remapping.
struct Moved {
    at: Note,
    related: Vec<Note>,
}

/// The files reported with: the run's files (rendered ones only while a finding is on them, one
/// entry per path), then every file a build read.
struct FileList {
    files: Vec<SourceFile>,
    new_index: Vec<Option<FileId>>,
    by_identity: HashMap<PathBuf, FileId>,
}

impl FileList {
    fn build(
        files: Vec<SourceFile>,
        rendered: &BTreeSet<FileId>,
        used: &BTreeSet<FileId>,
        mut read: Vec<(PathBuf, SourceFile)>,
    ) -> FileList {
        let mut new_index: Vec<Option<FileId>> = vec![None; files.len()];
        let mut by_identity: HashMap<PathBuf, FileId> = HashMap::new();
        let mut by_path: HashMap<String, FileId> = HashMap::new();
        let mut out: Vec<SourceFile> = Vec::with_capacity(files.len() + read.len());
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let mut canonical = tree::canonicalize_all(&paths).into_iter();
        for (i, f) in files.into_iter().enumerate() {
            let canonical = canonical.next().flatten();
            let is_rendered = rendered.contains(&i);
            if is_rendered && !used.contains(&i) {
                continue;
            }
            if !is_rendered && let Some(&j) = by_path.get(&f.path) {
                new_index[i] = Some(j);
                continue;
            }
            let j = out.len();
            if !is_rendered {
                by_path.insert(f.path.clone(), j);
                if let Some(id) = canonical {
                    by_identity.insert(id, j);
                }
            }
            new_index[i] = Some(j);
            out.push(f);
        }
        read.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        for (p, f) in read {
            if by_identity.contains_key(&p) {
                continue;
            }
            if let Some(&j) = by_path.get(&f.path) {
                by_identity.insert(p, j);
                continue;
            }
            by_identity.insert(p, out.len());
            by_path.insert(f.path.clone(), out.len());
            out.push(f);
        }
        FileList {
            files: out,
            new_index,
            by_identity,
        }
    }

    fn loc(&self, n: &Note) -> Option<Loc> {
        let file = match &n.dest {
            Dest::Fid(i) => self.new_index.get(*i).copied().flatten(),
            Dest::Path(p) => self.by_identity.get(p).copied(),
        }?;
        Some(Loc { file, span: n.span })
    }
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

/// How to lint by hand what was skipped: for a chart, the `helm template` command with its
/// configured values; for a kustomization, `kustomize build`.
pub fn skip_hint(f: &SourceFile, settings: &Settings) -> Option<String> {
    let s = f.skipped.as_ref()?;
    let path = Path::new(&f.path);
    let dir = path.parent().map(shown).unwrap_or_else(|| ".".into());
    if s.reason.starts_with("Helm chart") {
        let chart = helm::Chart::load(path.parent()?)?;
        let root = settings
            .root
            .clone()
            .or_else(|| std::env::current_dir().ok())?;
        let rel = tree::relative(&identity(&root), &chart.dir);
        let cfg = settings.sources.chart(&rel.to_string_lossy());
        let render = helm::settings_for(&chart, cfg, &root).ok()?;
        return Some(format!("lint it with `{}`", helm::hint(&dir, &render)));
    }
    if s.reason.starts_with("Kustomization") {
        return Some(format!(
            "lint it with `kustomize build {dir} | gpuops lint -`"
        ));
    }
    None
}
