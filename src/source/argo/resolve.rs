//! How one source of an Application resolves: this repository's directory, kustomization or
//! chart (with its Helm parameters), a `ref` of values files, or what is not linted and why.

use super::app::{App, Source};
use super::normalize_repo;
use super::units::{HelmKey, Unit};
use crate::config::sources::dns_label;
use crate::source::{
    Sources,
    tree::{self, identity, normalize},
};
use crate::yaml::Span;
use std::collections::BTreeMap;
use std::path::Path;

/// How one source of an Application resolves.
pub(super) enum Resolved {
    Unit(Box<Unit>),
    /// A `ref` source: values files only.
    ValuesOnly,
    NotLinted(String),
    /// A source of this repository that Argo CD cannot sync (reported as source-build-failed).
    Failed(String, Span),
    /// A directory that does not exist, of a URL other Applications show to be this
    /// repository's (`argo.repo` not set).
    Missing(String, Span),
}

/// Per repository URL (normalized), the directories of this repository (not its root) that
/// Applications' sources of that URL sync, on the default branch; and the name this repository
/// is known by, where Applications here confirm it.
#[derive(Default)]
pub(super) struct Evidence {
    dirs: BTreeMap<String, std::collections::BTreeSet<String>>,
    /// Names this checkout may go by: its directory's and its git remotes' (computed once).
    candidates: Option<std::collections::BTreeSet<String>>,
    /// A URL of this repository, of a candidate name that a source here syncs a directory of
    /// this repository from.
    this: Option<String>,
}

/// The repository's name in a normalized URL (its last path segment); `None` for what is not
/// a URL of a repository (no host and path).
fn repo_name(normalized: &str) -> Option<&str> {
    let (host, rest) = normalized.split_once('/')?;
    let name = rest.trim_end_matches('/').rsplit('/').next()?;
    (!host.is_empty() && !name.is_empty() && !name.contains('{')).then_some(name)
}

impl Evidence {
    pub(super) fn note<'a>(&mut self, root: &Path, apps: impl Iterator<Item = &'a App>) {
        let candidates = self.candidates.get_or_insert_with(|| {
            let mut names: std::collections::BTreeSet<String> =
                crate::source::git::remote_urls(root)
                    .iter()
                    .filter_map(|u| repo_name(&normalize_repo(u)).map(str::to_string))
                    .collect();
            if let Some(n) = root.file_name() {
                names.insert(n.to_string_lossy().to_ascii_lowercase());
            }
            names
        });
        for s in apps.flat_map(|a| &a.sources) {
            let Some((path, _)) = &s.path else { continue };
            let path = path.trim_matches('/');
            if s.chart.is_some() || is_cnoe(&s.repo_url) {
                continue;
            }
            let dir = normalize(&root.join(path));
            if dir == root || !dir.starts_with(root) || !dir.is_dir() {
                continue;
            }
            let url = normalize_repo(&s.repo_url);
            if self.this.is_none() && repo_name(&url).is_some_and(|n| candidates.contains(n)) {
                self.this = Some(url.clone());
            }
            if default_revision(s) {
                self.dirs.entry(url).or_default().insert(path.to_string());
            }
        }
    }
    /// Whether two or more directories of this repository are synced from `url`.
    fn names_this_repo(&self, url: &str) -> Option<usize> {
        self.dirs
            .get(&normalize_repo(url))
            .map(|p| p.len())
            .filter(|&n| n >= 2)
    }
    /// This repository's URL, when `url` names a repository of another name: Applications here
    /// sync this repository's directories from a URL of its checkout's or its remote's name,
    /// and a URL of another name is another repository, whatever paths it shares with this one.
    fn another_repo(&self, url: &str) -> Option<&str> {
        let this = self.this.as_deref()?;
        let name = repo_name(this)?;
        let url = normalize_repo(url);
        repo_name(&url).is_some_and(|n| n != name).then_some(this)
    }
}

/// A source on the branch checked out here, as far as can be told: none given, `HEAD`, `main`
/// or `master`.
fn default_revision(s: &Source) -> bool {
    s.target_revision.as_deref().is_none_or(|r| {
        matches!(
            r.trim().to_ascii_lowercase().as_str(),
            "" | "head" | "main" | "master"
        )
    })
}

impl Sources {
    /// Whether a source is this repository, and what Argo CD makes of it.
    pub(super) fn resolve_source(
        &self,
        a: &App,
        s: &Source,
        refs: &BTreeMap<&str, &Source>,
        manifest: Option<&Path>,
        here: &Evidence,
    ) -> Resolved {
        if s.ref_name.is_some() && s.path.is_none() && s.chart.is_none() {
            return Resolved::ValuesOnly;
        }
        if let Some(chart) = &s.chart {
            return Resolved::NotLinted(format!(
                "chart `{chart}` from the Helm repository {}",
                s.repo_url
            ));
        }
        // An OCI artifact (Argo CD 3.1 and later): `path` is inside the pulled artifact, never a
        // directory of this repository.
        if s.repo_url
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("oci://"))
        {
            return Resolved::NotLinted(format!("the OCI artifact {}", s.repo_url));
        }
        // idpbuilder's `cnoe://DIR`: a directory relative to the Application's file, pushed to
        // a repository of its own; `path` is inside it.
        let local = cnoe_dir(&s.repo_url, manifest);
        if is_cnoe(&s.repo_url) && local.is_none() {
            return Resolved::NotLinted(format!(
                "a local directory ({}) that is not found beside the Application",
                s.repo_url
            ));
        }
        let configured = !self.config.argo.repo.is_empty() || local.is_some();
        if local.is_none() && configured && !self.is_this_repo(&s.repo_url) {
            return Resolved::NotLinted(format!(
                "a source from another repository ({})",
                s.repo_url
            ));
        }
        if !configured && let Some(this) = here.another_repo(&s.repo_url) {
            return Resolved::NotLinted(format!(
                "a source from another repository ({}): Applications here sync this one as {this}",
                s.repo_url
            ));
        }
        let (path, span) = s.path.clone().unwrap_or_else(|| (".".to_string(), s.span));
        let root = identity(&self.root);
        let base = local.as_deref().unwrap_or(&root);
        let joined = normalize(&base.join(path.trim_start_matches('/')));
        let inside = joined.starts_with(&root);
        // A file of this repository at that path says the source is this repository; Argo CD
        // syncs directories only (`app path is not a directory`).
        if inside && joined.is_file() && (configured || default_revision(s)) {
            let name = joined.file_name().map_or(String::new(), |n| {
                format!(
                    " (its directory with `directory: {{include: '{}'}}` syncs that one file)",
                    n.to_string_lossy()
                )
            });
            let why = format!(
                "path `{path}` is a file, and Argo CD syncs a directory (it fails with `app path is not a directory`){name}"
            );
            return if configured {
                Resolved::Failed(why, span)
            } else {
                Resolved::Missing(why, span)
            };
        }
        if !inside || !joined.is_dir() {
            if !configured
                && inside
                && default_revision(s)
                && let Some(n) = here.names_this_repo(&s.repo_url)
            {
                return Resolved::Missing(
                    format!(
                        "path `{path}` does not exist in this repository ({}, from which other Applications here sync {n} of its directories)",
                        s.repo_url
                    ),
                    span,
                );
            }
            if !configured {
                return Resolved::NotLinted(format!(
                    "a source from another repository ({}): `{path}` is not a directory of this one (list this repository's URLs under `argo: {{repo: […]}}` in .gpuops.yaml if it is)",
                    s.repo_url
                ));
            }
            return Resolved::Failed(
                if inside {
                    format!("path `{path}` does not exist in this repository")
                } else {
                    format!("path `{path}` leaves the repository")
                },
                span,
            );
        }
        let dir = identity(&joined);
        if !dir.starts_with(&root) {
            // A symbolic link out of the checkout: Argo CD refuses it too.
            return Resolved::Failed(format!("path `{path}` leaves the repository"), span);
        }
        if let Some(p) = &s.plugin {
            let name = if p.is_empty() {
                String::new()
            } else {
                format!(" `{p}`")
            };
            return Resolved::NotLinted(format!("config management plugin{name}: not run"));
        }
        let explicit = [
            s.helm.is_some(),
            s.kustomize.is_some(),
            s.directory.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if explicit > 1 {
            return Resolved::Failed(
                "more than one of `helm`, `kustomize` and `directory` is set".into(),
                s.span,
            );
        }
        let has_chart = dir.join("Chart.yaml").is_file();
        let kfile = tree::kustomization_in(&dir);
        let as_helm = s.helm.is_some() || (explicit == 0 && has_chart);
        let as_kustomize =
            s.kustomize.is_some() || (explicit == 0 && !has_chart && kfile.is_some());
        // `.` is a directory of every repository: with no other sign that the source is this
        // one, a root that lacks what the source renders is another repository's, and a folder
        // synced recursively from it is not taken to be this whole repository.
        let root_only = !configured && dir == root;
        if root_only && s.directory.as_ref().is_some_and(|d| d.recurse) {
            return Resolved::NotLinted(format!(
                "a source from another repository ({}): its path is the root, which every repository has (list this repository's URLs under `argo: {{repo: […]}}` in .gpuops.yaml if it is)",
                s.repo_url
            ));
        }
        let elsewhere = || {
            Resolved::NotLinted(format!(
                "a source from another repository ({}): the root of this one holds no {}",
                s.repo_url,
                if as_helm {
                    "Chart.yaml"
                } else {
                    "kustomization"
                }
            ))
        };
        if as_helm {
            if !has_chart && root_only {
                return elsewhere();
            }
            if !has_chart {
                // Only `helm:` makes a folder without a chart a Helm source.
                return Resolved::Failed(
                    format!(
                        "`{path}` has no Chart.yaml, yet the source's `helm:` block makes Argo CD \
                         render it as a chart (remove `helm:` to sync the folder as it is, or set \
                         `chart:` and `repoURL` to the chart's repository)"
                    ),
                    span,
                );
            }
            return self.resolve_helm(a, s, &dir, &path, span, refs, manifest);
        }
        if as_kustomize {
            let Some(k) = kfile else {
                if root_only {
                    return elsewhere();
                }
                return Resolved::Failed(format!("`{path}` has no kustomization"), span);
            };
            let components = s.kustomize.iter().flat_map(|o| o.components.iter());
            for c in components {
                if !identity(&normalize(&dir.join(c))).starts_with(&root) {
                    return Resolved::Failed(
                        format!("component `{c}` leaves the repository"),
                        span,
                    );
                }
            }
            return Resolved::Unit(Box::new(Unit::Kustomize {
                top: identity(&k),
                opts: s.kustomize.clone().unwrap_or_default(),
            }));
        }
        Resolved::Unit(Box::new(Unit::Directory {
            dir,
            opts: s.directory.clone().unwrap_or_default(),
        }))
    }

    fn is_this_repo(&self, url: &str) -> bool {
        self.config.argo.repo.contains(&normalize_repo(url))
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_helm(
        &self,
        a: &App,
        s: &Source,
        dir: &Path,
        path: &str,
        span: Span,
        refs: &BTreeMap<&str, &Source>,
        manifest: Option<&Path>,
    ) -> Resolved {
        let opts = s.helm.clone().unwrap_or_default();
        let root = identity(&self.root);
        let release = opts.release_name.clone().unwrap_or_else(|| a.name.clone());
        if !dns_label(&release, 53) {
            return Resolved::Failed(
                format!("`{release}` is not a Helm release name (lowercase letters, digits, `-`)"),
                span,
            );
        }
        let namespace = a.destination.namespace.clone();
        if let Some(ns) = &namespace
            && !dns_label(ns, 63)
        {
            return Resolved::Failed(format!("`{ns}` is not a namespace name"), span);
        }
        let mut values = Vec::new();
        for vf in &opts.value_files {
            let p = if let Some(rest) = vf.strip_prefix('$') {
                let (name, rel) = rest.split_once('/').unwrap_or((rest, ""));
                let Some(r) = refs.get(name) else {
                    return Resolved::Failed(
                        format!("values file `{vf}` names no source with `ref: {name}`"),
                        span,
                    );
                };
                let other = if self.config.argo.repo.is_empty() {
                    !normalize(&root.join(rel)).is_file()
                } else {
                    !self.is_this_repo(&r.repo_url)
                };
                if other {
                    return Resolved::NotLinted(format!(
                        "values file `{vf}` from another repository ({})",
                        r.repo_url
                    ));
                }
                normalize(&root.join(rel))
            } else if vf.contains("://") {
                return Resolved::NotLinted(format!("values file `{vf}` from a URL"));
            } else if let Some(rel) = vf.strip_prefix('/') {
                // Argo CD reads a values file that starts with `/` from the repository's root.
                normalize(&root.join(rel))
            } else {
                normalize(&dir.join(vf))
            };
            if !identity(&p).starts_with(&root) {
                return Resolved::Failed(format!("values file `{vf}` leaves the repository"), span);
            }
            if !p.is_file() {
                if opts.ignore_missing_value_files {
                    continue;
                }
                return Resolved::Failed(
                    format!("values file `{vf}` does not exist (in `{path}`)"),
                    span,
                );
            }
            values.push(identity(&p));
        }
        let mut set = Vec::new();
        let mut set_string = Vec::new();
        for p in &opts.parameters {
            if p.name.is_empty() || p.name.starts_with('-') {
                return Resolved::Failed(format!("`{}` is not a parameter name", p.name), span);
            }
            let kv = format!("{}={}", p.name, escape_commas(&p.value));
            if p.force_string {
                set_string.push(kv);
            } else {
                set.push(kv);
            }
        }
        Resolved::Unit(Box::new(Unit::Helm {
            chart: dir.to_path_buf(),
            render: HelmKey {
                release,
                namespace,
                values,
                manifest: opts.values.as_ref().and(manifest.map(Path::to_path_buf)),
                inline: opts.values,
                set,
                set_string,
                skip_crds: opts.skip_crds,
                ignored: opts.ignored,
            },
        }))
    }
}

/// Helm reads `a,b` in a `--set` value as two assignments; Argo CD escapes the commas.
fn escape_commas(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut prev = '\0';
    for c in v.chars() {
        if c == ',' && prev != '\\' {
            out.push('\\');
        }
        out.push(c);
        prev = c;
    }
    out
}

/// The directory a `cnoe://DIR` source names: `DIR` beside the Application's file, when it is a
/// directory there.
fn cnoe_dir(url: &str, manifest: Option<&Path>) -> Option<std::path::PathBuf> {
    let rest = url.get(7..).filter(|_| is_cnoe(url))?;
    let dir = normalize(&manifest?.parent()?.join(rest.trim_end_matches('/')));
    dir.is_dir().then(|| identity(&dir))
}

/// Whether a repository URL is idpbuilder's `cnoe://`: a directory beside the Application.
pub(super) fn is_cnoe(url: &str) -> bool {
    url.get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("cnoe://"))
}
