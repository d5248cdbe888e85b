//! What is linted: the repository's files ([`files`]: discovery, reading, parsing, roles), and
//! what ArgoCD would sync from them.
//!
//! Kustomizations are built and charts rendered by their own tools,
//! the output is linted like any file, and findings are pointed back at the files and lines that
//! produced them.
//!
//! [`Sources::plan`] decides, from what discovery found, which files are read raw, which
//! kustomizations are built (overlays; bases only through them unless `lint-bases`) and which
//! charts are rendered. [`Sources::render`] runs each kind's builder over its units and adds one
//! file per build (its output, a located failure, or the source marked skipped) to the run's
//! files. After linting, [`Sources::remap`] moves every finding on rendered output to its source
//! through the mapping its build kept (see [`remap`] for what the kinds share), collapses
//! identical findings that several overlays share, and adds the files the builds read.
//!
//! With Argo CD Applications in the repository, [`Sources::render`] also works out what each one
//! syncs and to which cluster (see [`argo`]).
//!
//! Manifests embedded in files of another language are read where they stand, with no tool and
//! no mapping back: [`terraform`] (YAML heredocs of `.tf` files). A new language of that kind is
//! one file (its reader) plus its lines in [`files`] (the names discovery wants, the reader `load`
//! calls) and in `plan.rs` (read even in a kustomization's directory, and its `--explain-sources`
//! line). [`git`] lists the files a checkout tracks, which discovery takes even when
//! `.gitignore` lists them.
//!
//! # Kinds of built source
//!
//! A kind is an implementation of `builder::Builder`: what one build is of (its unit), the run's
//! own units, running the tool, what each outcome (built, failed, skipped: one type for every
//! kind) becomes in the run's files and in `--explain-sources`, and, for its output, a
//! `builder::Mapping` that points a location back at the files it was made from. [`kustomize`]
//! and [`helm`] are the two, each with its builder in `builder.rs` and its mapping in `remap`.
//! A new kind touches:
//!
//! - one new file implementing `Builder` and `Mapping` (e.g. `source/jsonnet.rs`);
//! - one registration in this file: its `mod` line and its line in [`Sources::render`].
//! - its `cached::Cached`: what a build depends on and its output as a cache entry (`KIND`
//!   alone leaves it uncached).
//!
//! Nothing else tells the kinds apart: adding outcomes to the files, remapping, the notes on
//! skipped files and what Argo CD explanations say of a build go through the trait. What a new
//! kind still needs beyond that, as the code stands:
//!
//! - Finding its units. `Builder::planned` reads what [`Sources::plan`] kept: the top
//!   kustomizations and the chart directories discovery did not enter. Sources of another shape
//!   need discovery ([`files`], which walks YAML files and stops at `Chart.yaml`) and `plan.rs`
//!   (which keeps them out of the files read raw) to hand them over.
//! - Argo CD. Applications sync directories, kustomizations and charts: syncing a new kind needs
//!   a `Unit` variant and its step in `argo/units.rs`, and its branch where `argo/sync.rs`
//!   decides what a source path is.

pub mod argo;
mod builder;
mod cached;
pub mod exec;
pub mod files;
pub mod git;
pub mod helm;
pub mod kustomize;
mod load;
pub mod nodes;
pub mod pages;
pub mod paths;
pub mod remap;
pub mod terraform;
mod testsuites;
pub mod tree;

mod explain;
mod plan;
mod remapped;

pub use crate::config::sources::{ChartConfig, SourcesConfig, parse_key as parse_config_key};
pub use files::*;
pub use kustomize::{Builds, Origin};
pub use load::load;
pub use paths::*;

use crate::diag::FileId;
use crate::yaml::Span;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tree::{Forest, identity};

/// An Argo CD Application whose source in this repository cannot be synced.
pub const ARGO_FAILED: &str = "Argo CD cannot sync ";

/// A path as shown to the user: relative to the working directory when under it.
pub fn display_canonical(p: &Path) -> String {
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

/// A build's output in the run's files.
#[derive(Debug)]
struct Build {
    /// The rendered file in the run's file list.
    fid: FileId,
    /// What was built (identity): a kustomization file, a chart directory.
    source: PathBuf,
    /// `source` as `--explain-sources` names it.
    shown: String,
    map: Box<dyn builder::Mapping>,
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
    builds: Vec<Build>,
    /// Files the builds read (origins, patches, templates, values), parsed, by identity.
    cache: BTreeMap<PathBuf, SourceFile>,
    lines: Vec<Line>,
    notes: Vec<String>,
    /// `clusters:` of the config: Argo CD destinations are matched against them.
    clusters: Vec<crate::config::ClusterDef>,
    /// Argo CD cluster Secrets in the context files ([`Sources::add_context`]).
    context_secrets: Vec<argo::fleet::Secret>,
    /// The config's `exclude:` globs (relative to `root`): files Argo CD directories hold that
    /// match are not read.
    exclude: Option<globset::GlobSet>,
    /// The `argo:` line of `--explain-sources`, when the repository has Applications.
    argo_summary: Option<String>,
    /// Scripts and Makefiles that build with kustomize v3's flag spelling (`--load_restrictor`),
    /// as shown and by directory: what a current kustomize refuses below that directory may be
    /// what that release builds.
    old_kustomize: Vec<(String, PathBuf)>,
    /// The files scripts and Makefiles write (`… | kubeseal > secrets/token.yaml`), as each
    /// script names them, with the script as shown.
    script_outputs: Vec<(String, String)>,
    /// The build cache, unless the run has none (`--no-cache`, a library caller).
    store: Option<cached::Store>,
}

fn is_yaml_name(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "YAML" | "YML")
    )
}

fn parsed_file(path: &Path) -> Option<SourceFile> {
    let bytes = std::fs::read(path).ok()?;
    let mut f = crate::source::from_bytes(display_canonical(path), bytes);
    // A generator's input (`configMapGenerator` files: a script, a config) is data the build
    // quotes, not a template left unrendered.
    if !is_yaml_name(path) {
        f.skipped = None;
    }
    Some(f)
}

/// The first key of a file's first document: where a note about the whole file points.
fn first_key(f: &SourceFile) -> Span {
    f.docs
        .first()
        .and_then(|d| d.root().as_map()?.first().map(|(k, _)| k.span()))
        .unwrap_or_default()
}

impl Sources {
    /// Reads what the context files tell the sources: the Argo CD cluster Secrets among them,
    /// which the ApplicationSet `clusters` generator and destinations use.
    pub fn add_context(&mut self, context: &[SourceFile]) {
        self.context_secrets
            .extend(context.iter().flat_map(argo::fleet::secrets_in));
    }

    /// Adds the run's own builds to `files`, kind by kind (`builds`: the kustomizations built
    /// ahead, see [`Sources::build_tops`]), then what Argo CD Applications sync.
    pub fn render(&mut self, files: &mut Vec<SourceFile>, builds: Builds) {
        // The kinds of built source, in the order their files join the run's.
        self.render_kustomize(files, builds.0);
        self.render_kind(&helm::Helm::default(), files, Vec::new());
        if self.config.argo.enabled {
            self.sync_applications(files);
        }
        if let Some(store) = &self.store {
            store.finish();
        }
    }
}
