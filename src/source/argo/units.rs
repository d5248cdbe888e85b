//! Units: what Argo CD makes of one source (a directory of manifests, a kustomization built
//! with options, a chart rendered with values), made once however many Applications share it.

use super::app::{DirOpts, KustomizeOpts};
use super::sync::{Run, plural};
use crate::diag::FileId;
use crate::source::SourceFile;
use crate::source::builder::Outcome;
use crate::source::{
    Sources, display_canonical, helm, is_yaml_name, kustomize, parsed_file,
    tree::{self, identity, normalize},
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What Argo CD makes of one source: the key Applications share builds by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Unit {
    Directory { dir: PathBuf, opts: DirOpts },
    Kustomize { top: PathBuf, opts: KustomizeOpts },
    Helm { chart: PathBuf, render: HelmKey },
}

impl Unit {
    /// What a build of the unit is of (a kustomization file, a chart directory: never one for
    /// the other), as the run's builds record it.
    pub(super) fn source(&self) -> Option<&PathBuf> {
        match self {
            Unit::Directory { .. } => None,
            Unit::Kustomize { top, .. } => Some(top),
            Unit::Helm { chart, .. } => Some(chart),
        }
    }
}

/// A chart render as an Application asks for it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct HelmKey {
    pub(super) release: String,
    pub(super) namespace: Option<String>,
    pub(super) values: Vec<PathBuf>,
    pub(super) inline: Option<String>,
    pub(super) set: Vec<String>,
    pub(super) set_string: Vec<String>,
    pub(super) skip_crds: bool,
    /// The Application's manifest (identity) when it holds inline values: findings on a value
    /// from there point at it.
    pub(super) manifest: Option<PathBuf>,
    pub(super) ignored: Vec<String>,
}

/// What a unit produced: files of the run, and a description.
#[derive(Clone, Debug, Default)]
pub(super) struct Made {
    pub(super) fids: Vec<FileId>,
    pub(super) what: String,
    /// False when the build failed or was skipped (its own entry says why).
    pub(super) ok: bool,
}

impl Made {
    fn linted(fids: Vec<FileId>, what: String) -> Made {
        Made {
            fids,
            what,
            ok: true,
        }
    }

    fn not(what: String) -> Made {
        Made {
            fids: Vec::new(),
            what,
            ok: false,
        }
    }
}

impl Sources {
    /// Builds the new units: directories are read, kustomizations built and charts rendered
    /// (in parallel), and their output added to `files`.
    pub(super) fn make_units(
        &mut self,
        files: &mut Vec<SourceFile>,
        new: Vec<Unit>,
        run: &mut Run,
    ) {
        let label = |run: &Run, u: &Unit| {
            let names = run.users.get(u).cloned().unwrap_or_default();
            let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "{} {}",
                if names.len() == 1 {
                    "Application"
                } else {
                    "Applications"
                },
                quoted.join(", ")
            )
        };
        let mut builds: Vec<(Unit, kustomize::Unit)> = Vec::new();
        // The kustomizations whose own build failed (not skipped, not timed out), as shown.
        let failed: BTreeSet<String> = self
            .lines
            .iter()
            .filter(|l| l.what == "failed")
            .map(|l| l.path.clone())
            .collect();
        let mut renders: Vec<(Unit, helm::Unit)> = Vec::new();
        for u in new {
            match &u {
                Unit::Directory { dir, opts } => {
                    let made = self.read_directory(files, dir, opts, run);
                    run.units.insert(u, made);
                }
                Unit::Kustomize { top, opts } => {
                    let dir_shown = display_canonical(top.parent().unwrap_or(top));
                    let standard = self.builds[..run.standard]
                        .iter()
                        .find(|b| b.source == *top)
                        .map(|b| b.fid);
                    if self.tool.is_none() {
                        // Read one by one, as the run reads kustomizations without kustomize:
                        // the resources they list are the manifests.
                        run.offline.add(std::slice::from_ref(top));
                        let read: Vec<PathBuf> = run
                            .offline
                            .chain(top)
                            .into_iter()
                            .flat_map(|k| k.refs.iter())
                            .filter(|r| matches!(r.field, "resources" | "bases"))
                            .filter_map(|r| match &r.target {
                                tree::Target::File(f) if is_yaml_name(f) => Some(f.clone()),
                                _ => None,
                            })
                            .collect();
                        let fids = self.take_files(files, &read, run);
                        let what = format!(
                            "kustomization {dir_shown} not built (kustomize is off or missing): {} it lists, read one by one",
                            plural(fids.len(), "file")
                        );
                        run.units.insert(u, Made::linted(fids, what));
                    } else if let Some(fid) =
                        standard.filter(|_| opts.is_empty() && self.tops.contains(top))
                    {
                        // The run built it already.
                        let what = format!("kustomization {dir_shown}, built as it is");
                        run.units.insert(u, Made::linted(vec![fid], what));
                    } else if opts.is_empty()
                        && self.tops.contains(top)
                        && !failed.contains(&display_canonical(top))
                    {
                        // Skipped (a plugin, a remote base, the time limit): so it stays.
                        run.units.insert(
                            u,
                            Made::not(format!(
                                "kustomization {dir_shown}: not built (see its skipped entry)"
                            )),
                        );
                    } else {
                        // Built for the Application (with its options, or again where the run's
                        // own build failed): Argo CD certainly builds it, so a failure is its.
                        self.forest.add(std::slice::from_ref(top));
                        let components = opts
                            .components
                            .iter()
                            .map(|c| identity(&normalize(&top.parent().unwrap_or(top).join(c))))
                            .collect();
                        let wrap = kustomize::Wrap {
                            fields: opts.wrapper_fields(),
                            components,
                        };
                        let unit = kustomize::Unit {
                            top: top.clone(),
                            wrap,
                        };
                        builds.push((u.clone(), unit));
                    }
                }
                Unit::Helm { chart, render } => match helm::Chart::load(chart) {
                    Some(c) => {
                        let values_shown =
                            render.values.iter().map(|v| display_canonical(v)).collect();
                        let r = helm::Render {
                            release: render.release.clone(),
                            namespace: render.namespace.clone(),
                            values: render.values.clone(),
                            values_shown,
                            inline: render.inline.clone(),
                            set: render.set.clone(),
                            set_string: render.set_string.clone(),
                            skip_crds: render.skip_crds,
                        };
                        let unit = helm::Unit {
                            chart: c,
                            render: Ok(r),
                            extra_values: render.manifest.iter().cloned().collect(),
                        };
                        renders.push((u.clone(), unit));
                    }
                    None => {
                        let what = format!(
                            "chart {}: Chart.yaml cannot be read",
                            display_canonical(chart)
                        );
                        run.units.insert(u.clone(), Made::not(what));
                    }
                },
            }
        }

        let kustomize = kustomize::Kustomize;
        let (keys, units): (Vec<Unit>, Vec<kustomize::Unit>) = builds.into_iter().unzip();
        let results = self.build_cached(&kustomize, &units);
        for ((u, unit), r) in keys.into_iter().zip(&units).zip(results) {
            let Unit::Kustomize { opts, .. } = &u else {
                continue;
            };
            let top = &unit.top;
            let dir_shown = display_canonical(top.parent().unwrap_or(top));
            let options = opts.describe();
            let app = if options.is_empty() {
                label(run, &u)
            } else {
                format!("{} ({options})", label(run, &u))
            };
            let fid = files.len();
            let built = r.is_built();
            self.add(&kustomize, unit, r, files, Some(&app));
            let what = if options.is_empty() {
                format!("kustomization {dir_shown}, built")
            } else {
                format!("kustomization {dir_shown}, built with {options}")
            };
            run.units.insert(
                u,
                if built {
                    Made::linted(vec![fid], what)
                } else {
                    Made::not(format!(
                        "kustomization {dir_shown}: not built (see its failed or skipped entry)"
                    ))
                },
            );
        }

        let helm = helm::Helm::default();
        let standard_charts: BTreeSet<PathBuf> = self.charts.iter().map(|c| identity(c)).collect();
        let (keys, units): (Vec<Unit>, Vec<helm::Unit>) = renders.into_iter().unzip();
        let results = self.build_cached(&helm, &units);
        for ((u, unit), result) in keys.into_iter().zip(&units).zip(results) {
            let (Unit::Helm { render, .. }, Ok(r)) = (&u, &unit.render) else {
                continue;
            };
            let chart = &unit.chart;
            let mut how = vec![format!("release {}", r.release)];
            if let Some(ns) = &r.namespace {
                how.push(format!("namespace {ns}"));
            }
            if !r.values.is_empty() {
                how.push(plural(r.values.len(), "values file"));
            }
            if r.inline.is_some() {
                how.push("inline values".into());
            }
            let params = r.set.len() + r.set_string.len();
            if params > 0 {
                how.push(plural(params, "parameter"));
            }
            if !render.ignored.is_empty() {
                how.push(format!("not applied: {}", render.ignored.join(", ")));
            }
            let how = how.join(", ");
            let fid = files.len();
            let made = match &result {
                Outcome::Built(_) | Outcome::Cached(_) => Made::linted(
                    vec![fid],
                    format!("chart {}, rendered with {how}", chart.shown),
                ),
                Outcome::Failed(_) => Made::not(format!(
                    "chart {}: does not render (reported as source-build-failed)",
                    chart.shown
                )),
                Outcome::Skipped(skip) => {
                    Made::not(format!("chart {}: {}", chart.shown, skip.reason))
                }
            };
            // A chart the run lists as skipped already is not listed twice.
            let listed =
                matches!(result, Outcome::Skipped(_)) && standard_charts.contains(&chart.dir);
            if !listed {
                if let Some(m) = &render.manifest
                    && !self.cache.contains_key(m)
                    && let Some(f) = parsed_file(m)
                {
                    self.cache.insert(m.clone(), f);
                }
                let app = format!("{} ({how})", label(run, &u));
                self.add(&helm, unit, result, files, Some(&app));
            }
            run.units.insert(u, made);
        }
    }

    /// The files of the run for these paths (identities), loading those it does not hold yet.
    pub(super) fn take_files(
        &self,
        files: &mut Vec<SourceFile>,
        paths: &[PathBuf],
        run: &mut Run,
    ) -> Vec<FileId> {
        let mut out = Vec::new();
        for p in paths {
            if let Some(&fid) = run.by_identity.get(p) {
                out.push(fid);
                continue;
            }
            let Some(f) = parsed_file(p) else { continue };
            let fid = files.len();
            files.push(f);
            run.by_identity.insert(p.clone(), fid);
            out.push(fid);
        }
        out
    }

    /// The manifests of a directory source: YAML files (not kustomization files), in
    /// subdirectories only with `recurse`, filtered by `include` and `exclude` (matched against
    /// the path relative to the directory, as Argo CD does) and by the config's `exclude:`.
    pub(super) fn read_directory(
        &self,
        files: &mut Vec<SourceFile>,
        dir: &Path,
        opts: &DirOpts,
        run: &mut Run,
    ) -> Made {
        let glob = |g: &Option<String>| {
            g.as_deref()
                .and_then(|g| globset::Glob::new(g).ok())
                .map(|g| g.compile_matcher())
        };
        let (include, exclude) = (glob(&opts.include), glob(&opts.exclude));
        let root = identity(&self.root);
        let mut walker = ignore::WalkBuilder::new(dir);
        walker
            .hidden(false)
            .require_git(false)
            .follow_links(true)
            .max_depth(if opts.recurse { None } else { Some(1) })
            .filter_entry(|e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                // Chart templates are not manifests until rendered.
                !is_dir
                    || (e.file_name() != ".git" && !e.path().join("Chart.yaml").is_file())
                    || e.depth() == 0
            });
        let mut paths: Vec<PathBuf> = walker
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.into_path())
            .filter(|p| is_yaml_name(p) && !tree::is_kustomization_file(p))
            .filter(|p| {
                let rel = p.strip_prefix(dir).unwrap_or(p);
                include.as_ref().is_none_or(|m| m.is_match(rel))
                    && exclude.as_ref().is_none_or(|m| !m.is_match(rel))
            })
            .filter(|p| {
                let id = identity(p);
                let rel = id.strip_prefix(&root).unwrap_or(&id);
                self.exclude.as_ref().is_none_or(|x| !x.is_match(rel))
            })
            .map(|p| identity(&p))
            .collect();
        paths.sort();
        paths.dedup();
        let fids = self.take_files(files, &paths, run);
        let mut how = Vec::new();
        if opts.recurse {
            how.push("recursive".to_string());
        }
        if let Some(i) = &opts.include {
            how.push(format!("include {i}"));
        }
        if let Some(x) = &opts.exclude {
            how.push(format!("exclude {x}"));
        }
        let how = if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join(", "))
        };
        let what = format!(
            "directory {}{how}: {}",
            display_canonical(dir),
            plural(fids.len(), "file")
        );
        Made::linted(fids, what)
    }
}
