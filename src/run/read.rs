//! Reading a repository: discovery, the sources plan (kustomizations built, charts rendered,
//! Argo CD Applications followed), parsing, and the context files with their roles.

use crate::config::Settings;
use crate::report::progress::Progress;
use crate::source::{self, Discovery, SourceFile};
use std::path::PathBuf;

/// The context files of a run: the config's `context:` (every cluster), each cluster's own, and
/// `--context` paths; with the role each file gets (keyed by its display path).
fn context_files(
    settings: &Settings,
    cli: &[PathBuf],
) -> (
    Vec<PathBuf>,
    std::collections::HashMap<String, source::Role>,
    Vec<source::IoProblem>,
) {
    let root = settings.root.clone().unwrap_or_default();
    let mut specs: Vec<(PathBuf, Option<String>)> = Vec::new();
    specs.extend(settings.context.iter().map(|p| (root.join(p), None)));
    for c in &settings.clusters {
        specs.extend(
            c.context
                .iter()
                .map(|p| (root.join(p), Some(c.name.clone()))),
        );
    }
    specs.extend(cli.iter().map(|p| (p.clone(), None)));
    let discovery = Discovery {
        exclude: None,
        exclude_root: None,
    };
    let mut paths = Vec::new();
    let mut roles = std::collections::HashMap::new();
    let mut problems = Vec::new();
    for (spec, cluster) in specs {
        if !spec.exists() {
            problems.push(source::IoProblem {
                path: source::display_path(&spec),
                message: "context path not found".into(),
            });
            continue;
        }
        let (found, p) = discovery.walk(std::slice::from_ref(&spec));
        problems.extend(p);
        for f in found {
            roles.insert(
                source::display_path(&f),
                source::Role::Context {
                    cluster: cluster.clone(),
                },
            );
            paths.push(f);
        }
    }
    paths.sort();
    paths.dedup();
    (paths, roles, problems)
}

/// What `lint`, `why` and `cost` read: the files under `paths` (kustomizations built, charts
/// rendered), then the context files, with their roles. A context file under a linted directory is
/// context, not a manifest to lint.
pub struct Repo {
    pub files: Vec<SourceFile>,
    /// The rendered sources: what maps findings back to the files that produced them.
    pub sources: crate::source::Sources,
    /// Paths that could not be walked (missing, a symlink loop).
    pub walk_problems: Vec<source::IoProblem>,
    /// Files that could not be read.
    pub load_problems: Vec<source::IoProblem>,
}

pub fn read_repo(
    settings: &Settings,
    paths: &[PathBuf],
    cli_context: &[PathBuf],
    progress: &Progress,
) -> Repo {
    let mut exclude = globset::GlobSetBuilder::new();
    for g in settings
        .exclude
        .iter()
        .filter_map(|g| globset::Glob::new(g).ok())
    {
        exclude.add(g);
    }
    let exclude = exclude.build().ok();
    let discovery = Discovery {
        exclude: exclude.as_ref(),
        exclude_root: settings.root.as_deref(),
    };
    let (context_paths, context_roles, context_problems) = context_files(settings, cli_context);
    let walked = discovery.walk_sources(paths);
    let context_abs: std::collections::HashSet<PathBuf> = context_paths
        .iter()
        .filter_map(|p| std::path::absolute(p).ok())
        .collect();
    let found: Vec<PathBuf> = if context_abs.is_empty() {
        walked.files
    } else {
        walked
            .files
            .into_iter()
            .filter(|p| std::path::absolute(p).is_ok_and(|a| !context_abs.contains(&a)))
            .collect()
    };
    let mut sources = crate::source::Sources::plan(found, walked.charts, settings);
    // Kustomize builds wait on processes: they run while the raw files are read and parsed. The
    // context (a cluster's dump is one large file, parsed by one thread) is read alongside too.
    let ((mut files, mut load_problems), builds, (context, problems)) = std::thread::scope(|s| {
        let builds = s.spawn(|| sources.build_tops());
        let context = s.spawn(|| {
            let (mut context, problems) = source::load(&context_paths);
            for f in &mut context {
                if let Some(role) = context_roles.get(&f.path) {
                    f.role = role.clone();
                }
            }
            source::nodes::derive(&mut context);
            (context, problems)
        });
        let loaded = load(sources.raw(), progress);
        (loaded, joined(builds), joined(context))
    });
    // Exports of live objects found among the manifests describe a cluster; they are not linted.
    for f in files.iter_mut().filter(|f| f.role == source::Role::Linted) {
        if f.is_export() {
            f.role = source::Role::Context { cluster: None };
        }
    }
    // Context is added before rendering: the cluster Secrets in it are clusters Argo CD deploys to.
    load_problems.extend(problems);
    load_problems.extend(context_problems);
    sources.add_context(&context);
    sources.render(&mut files, builds);
    sources.describe_terraform(&files);
    files.extend(context);
    Repo {
        files,
        sources,
        walk_problems: walked.problems,
        load_problems,
    }
}

/// What a scoped thread returned; its panic goes on.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// Reads and parses the files; with a progress line, in slices so it can count them.
fn load(paths: &[PathBuf], progress: &Progress) -> (Vec<SourceFile>, Vec<source::IoProblem>) {
    if !progress.is_enabled() {
        return source::load(paths);
    }
    progress.parsing(paths.len());
    let mut files = Vec::with_capacity(paths.len());
    let mut problems = Vec::new();
    for chunk in paths.chunks(256) {
        let (f, p) = source::load(chunk);
        files.extend(f);
        problems.extend(p);
        progress.parsed(chunk.len());
    }
    (files, problems)
}
