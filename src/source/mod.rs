//! What is linted: the repository's files ([`files`]: discovery, reading, parsing, roles), and
//! what ArgoCD would sync from them.
//!
//! Kustomizations are built and charts rendered by their own tools,
//! the output is linted like any file, and findings are pointed back at the files and lines that
//! produced them.
//!
//! [`Sources::plan`] decides, from what discovery found, which files are read raw, which
//! kustomizations are built (overlays; bases only through them unless `lint-bases`) and which
//! charts are rendered. [`Sources::render`] runs the tools and adds one rendered file per build
//! (or one located failure, or one skipped entry) to the run's files. After linting,
//! [`Sources::remap`] moves every finding on rendered output to its source (see [`remap`]),
//! collapses identical findings that several overlays share, and adds the files the builds read.
//!
//! With Argo CD Applications in the repository, [`Sources::render`] also works out what each one
//! syncs and to which cluster (see [`argo`]).

pub mod argo;
mod builder;
pub mod exec;
pub mod files;
pub mod helm;
pub mod kustomize;
pub mod remap;
pub mod tree;

mod explain;
mod plan;
mod remapped;

pub use crate::config::sources::{ChartConfig, SourcesConfig, parse_key as parse_config_key};
pub use files::*;
pub use kustomize::{Builds, Origin};

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

fn parsed_file(path: &Path) -> Option<SourceFile> {
    let bytes = std::fs::read(path).ok()?;
    Some(crate::source::from_bytes(display_canonical(path), bytes))
}

/// The first key of a file's first document: where a note about the whole file points.
fn first_key(f: &SourceFile) -> Span {
    f.docs
        .first()
        .and_then(|d| d.root().as_map()?.first().map(|(k, _)| k.span()))
        .unwrap_or_default()
}

impl Sources {
    /// Adds the run's own builds to `files`, kind by kind (`builds`: the kustomizations built
    /// ahead, see [`Sources::build_tops`]), then what Argo CD Applications sync.
    pub fn render(&mut self, files: &mut Vec<SourceFile>, builds: Builds) {
        // The kinds of built source, in the order their files join the run's.
        self.render_kind(&kustomize::Kustomize, files, builds.0);
        self.render_kind(&helm::Helm::default(), files, Vec::new());
        if self.config.argo.enabled {
            self.sync_applications(files);
        }
    }
}
