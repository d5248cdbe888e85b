//! Running kustomize and helm for a run, and what each build came to.

use super::{Line, Sources, display_canonical, exec, first_key, helm, kustomize, tree};
use crate::source::{SourceFile, display_path};
use crate::yaml::Span;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use tree::{Target, identity};

/// How overlays may share a build process (see [`Sources::batches`]).
#[derive(Clone, Copy)]
enum Packing {
    /// Overlays of one base together, when their own kustomizations tell their objects apart.
    Loose,
    /// No kustomization in common.
    Strict,
}

/// The builds of the top kustomizations, in `tops` order, made while the raw files are read.
#[derive(Default)]
pub struct Builds(Vec<KustomizeResult>);

/// The outcome of building one kustomization.
pub(super) enum KustomizeResult {
    Built(kustomize::Built),
    Failed(kustomize::Failed),
    Skipped {
        reason: String,
        marker: String,
        span: Span,
    },
}

/// The outcome of rendering one chart.
pub(super) enum HelmResult {
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
    /// Builds the top kustomizations. Each build waits on a `kustomize` process, so they run on
    /// threads of their own (as many at once as there are cores), not on the pool that parses:
    /// the caller reads and parses the raw files meanwhile. Overlays are built many to a process
    /// (see [`kustomize::build_many`] and [`Sources::batches`]).
    pub fn build_tops(&self) -> Builds {
        if self.tops.is_empty() {
            return Builds::default();
        }
        let workers = rayon::current_num_threads().max(1);
        let all: Vec<usize> = (0..self.tops.len()).collect();
        // A worker's share, so every core has a process; at most 64, so that a batch that fails
        // (and is built again apart) or runs into the output limit costs little.
        let cap = self.tops.len().div_ceil(workers).clamp(1, 64);
        let batches = self.batches(&all, Packing::Loose, cap);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut done: Vec<(usize, KustomizeResult)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers.min(batches.len()))
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(batch) = batches.get(b) else { break };
                            mine.extend(self.build_batch(batch));
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

    /// Builds one batch of [`Sources::batches`]: in one process, else (a collision, a failure)
    /// in batches that share no kustomization, else each on its own.
    fn build_batch(&self, batch: &[usize]) -> Vec<(usize, KustomizeResult)> {
        let plain = kustomize::Wrap::default();
        let alone = |i: usize| (i, self.build(&self.tops[i], &plain));
        if batch.len() < 2 {
            return batch.iter().map(|&i| alone(i)).collect();
        }
        if let Some(built) = self.build_together(batch) {
            return batch.iter().copied().zip(built).collect();
        }
        let strict = self.batches(batch, Packing::Strict, batch.len());
        if strict.len() == 1 {
            return batch.iter().map(|&i| alone(i)).collect();
        }
        let mut out = Vec::with_capacity(batch.len());
        for sub in strict {
            match (sub.len() > 1).then(|| self.build_together(&sub)).flatten() {
                Some(built) => out.extend(sub.iter().copied().zip(built)),
                None => out.extend(sub.iter().map(|&i| alone(i))),
            }
        }
        out
    }

    /// `members` (indices into `tops`) cut into batches of at most `cap`, each built in one
    /// process. Kustomization directories of tops in one batch are never one inside another
    /// (each document then has one directory its origin stands in), and with
    /// [`Packing::Strict`] never shared; with [`Packing::Loose`], overlays of one base share a
    /// batch when each sets its own `namespace:`, `namePrefix:` or `nameSuffix:` (which tells
    /// their objects apart, and names the overlay that transformed each). A top that is skipped
    /// or fails before any build goes alone.
    fn batches(&self, members: &[usize], packing: Packing, cap: usize) -> Vec<Vec<usize>> {
        let mut batches: Vec<Vec<(usize, Vec<&Path>)>> = Vec::new();
        let mut alone: Vec<Vec<usize>> = Vec::new();
        for &i in members {
            let top = &self.tops[i];
            let Some(mine) = self.batch_dirs(top) else {
                alone.push(vec![i]);
                continue;
            };
            let renamed = self.renaming(top);
            let fits = |other: &(usize, Vec<&Path>)| {
                let (j, theirs) = other;
                let shared = mine.iter().any(|d| theirs.contains(d));
                let nested = mine.iter().any(|d| {
                    theirs
                        .iter()
                        .any(|t| t != d && (d.starts_with(t) || t.starts_with(d)))
                });
                let told_apart = || {
                    let theirs = self.renaming(&self.tops[*j]);
                    renamed.is_some() && theirs.is_some() && renamed != theirs
                };
                !nested && (!shared || (matches!(packing, Packing::Loose) && told_apart()))
            };
            match batches
                .iter_mut()
                .find(|b| b.len() < cap && b.iter().all(fits))
            {
                Some(b) => b.push((i, mine)),
                None => batches.push(vec![(i, mine)]),
            }
        }
        batches
            .into_iter()
            .map(|b| b.into_iter().map(|(i, _)| i).collect())
            .chain(alone)
            .collect()
    }

    /// The top's own `namespace:`, `namePrefix:` and `nameSuffix:`, when it sets any.
    fn renaming(&self, top: &Path) -> Option<[Option<&str>; 3]> {
        let root = self.forest.get(top)?.root()?;
        let field = |k: &str| root.get(k).and_then(|n| n.as_str());
        let set = [field("namespace"), field("namePrefix"), field("nameSuffix")];
        set.iter().any(Option::is_some).then_some(set)
    }

    /// The kustomization directories a build of `top` reads, its own first; `None` when it is
    /// not built with others (a remote base or `helmCharts` skip it, no tool fails it, a
    /// `buildMetadata` of its own would be taken off with the batch's).
    fn batch_dirs(&self, top: &Path) -> Option<Vec<&Path>> {
        self.tool.as_ref()?;
        // The chain starts with the top's own kustomization; empty when it cannot be read. Every
        // kustomization it builds through must be known, or a document from an unknown one
        // could be taken for another overlay's.
        let chain = self.forest.chain(top);
        let plain = !chain.is_empty()
            && chain.iter().all(|c| {
                c.helm_charts.is_none()
                    && c.root().is_some_and(|r| r.get("buildMetadata").is_none())
                    && c.refs.iter().all(|r| {
                        // What kustomize will refuse fails the build: it fails alone.
                        !matches!(
                            r.target,
                            Target::Remote | Target::Missing(_) | Target::Dir(_)
                        )
                    })
                    && c.children().all(|k| self.forest.get(k).is_some())
            });
        plain.then(|| chain.iter().map(|c| c.dir.as_path()).collect())
    }

    /// Builds `batch` in one process; `None` when it cannot be built together.
    fn build_together(&self, batch: &[usize]) -> Option<Vec<KustomizeResult>> {
        let tool = self.tool.as_ref()?;
        let tops: Option<Vec<(&Path, Vec<&Path>)>> = batch
            .iter()
            .map(|&i| {
                let top = &self.tops[i];
                Some((self.forest.get(top)?.dir.as_path(), self.batch_dirs(top)?))
            })
            .collect();
        let built = kustomize::build_many(tool, &tops?, self.config.timeout)?;
        Some(built.into_iter().map(KustomizeResult::Built).collect())
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
        let results: Vec<HelmResult> = charts.par_iter().map(|c| self.render_chart(c)).collect();
        for (chart, r) in charts.iter().zip(results) {
            self.add_chart(chart, r, files, None);
        }
        for c in &self.config.charts {
            let dir = tree::normalize(&self.root.join(&c.path));
            let id = identity(&dir);
            if !charts.iter().any(|ch| ch.dir == id) {
                self.lines.push(Line {
                    what: "unknown",
                    path: display_canonical(&dir),
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

    pub(super) fn build(&self, top: &Path, wrap: &kustomize::Wrap) -> KustomizeResult {
        let Some(k) = self.forest.get(top) else {
            return KustomizeResult::Failed(kustomize::Failed {
                message: "cannot read the kustomization".into(),
                at: None,
                command: String::new(),
                missing_input: false,
            });
        };
        let chain = self.forest.chain(top);
        for c in &chain {
            let in_top = c.path == k.path;
            if let Some(r) = c.refs.iter().find(|r| r.target == Target::Remote) {
                return KustomizeResult::Skipped {
                    reason: "Kustomization with a remote resource (not fetched)".into(),
                    marker: r.raw.clone(),
                    span: if in_top { r.span } else { first_key(&k.file) },
                };
            }
            if let Some(span) = c.helm_charts {
                return KustomizeResult::Skipped {
                    reason:
                        "Kustomization with helmCharts (needs --enable-helm, which fetches charts)"
                            .into(),
                    marker: "helmCharts".into(),
                    span: if in_top { span } else { first_key(&k.file) },
                };
            }
        }
        let Some(tool) = &self.tool else {
            return KustomizeResult::Failed(kustomize::Failed {
                message: "no kustomize".into(),
                at: None,
                command: String::new(),
                missing_input: false,
            });
        };
        match kustomize::build(tool, &k.dir, wrap, self.config.timeout) {
            Ok(b) => KustomizeResult::Built(b),
            Err(f) => KustomizeResult::Failed(f),
        }
    }

    fn chart_settings(&self, chart: &helm::Chart) -> Result<helm::Render, String> {
        let rel = tree::relative(&identity(&self.root), &chart.dir);
        let rel = rel.to_string_lossy().replace('\\', "/");
        helm::settings_for(chart, self.config.chart(&rel), &self.root)
    }

    fn render_chart(&self, chart: &helm::Chart) -> HelmResult {
        match self.chart_settings(chart) {
            Ok(r) => self.render_chart_with(chart, r),
            Err(message) => HelmResult::Failed {
                message,
                command: String::new(),
                at: None,
            },
        }
    }

    pub(super) fn render_chart_with(
        &self,
        chart: &helm::Chart,
        render: helm::Render,
    ) -> HelmResult {
        let name_span = chart
            .file
            .docs
            .first()
            .and_then(|d| d.root().get("name"))
            .map(|n| n.span())
            .unwrap_or_else(|| first_key(&chart.file));
        let marker = chart.name.clone().unwrap_or_else(|| "Chart.yaml".into());
        let hint = helm::hint(&chart.shown, &render);
        let skipped = |reason: &str, marker: String, span: Span| HelmResult::Skipped {
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
            Ok(text) => HelmResult::Built {
                text,
                command,
                render,
            },
            Err(message) => HelmResult::Failed {
                at: helm::error_location(chart, &message),
                message,
                command,
            },
        }
    }
}
