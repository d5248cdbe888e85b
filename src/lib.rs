//! gpuops: lint and render GPU platform manifests (Karpenter, Kueue, Kubernetes).

pub mod catalog;
pub mod config;
pub mod diag;
pub mod index;
pub mod intent;
pub mod model;
pub mod quantity;
pub mod render;
pub mod report;
pub mod rules;
pub mod sched;
pub mod schema;
pub mod source;
pub mod sources;
pub mod suppress;
pub mod yaml;
pub mod yaml_compat;

use config::{Level, Settings};
use diag::Diagnostic;
use rayon::prelude::*;
use source::SourceFile;

/// The result of linting a set of files.
#[derive(Debug)]
pub struct Outcome {
    pub diagnostics: Vec<Diagnostic>,
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
}

/// Whether a rule runs under these settings.
pub fn rule_enabled(settings: &Settings, name: &str) -> bool {
    if let Some(only) = &settings.only
        && !only.iter().any(|o| o == name)
    {
        return false;
    }
    settings.level(name) != Some(Level::Off)
}

/// One cluster of the run: the files deployed to it (plus its context) and its facts.
#[derive(Debug)]
pub struct ClusterScope {
    /// `None`: the repository as one cluster, or the files no named cluster claims.
    pub name: Option<String>,
    pub files: Vec<diag::FileId>,
    pub settings: Settings,
}

/// Splits the files into clusters (`clusters:` in the config). Without clusters the repository
/// is one. A file under several clusters' paths (a shared base) belongs to each; files no cluster
/// claims are linted together as one more, unnamed, cluster. Context files go to the cluster they
/// describe, or to every cluster.
pub fn clusters(files: &[SourceFile], settings: &Settings) -> Vec<ClusterScope> {
    let context_for = |name: Option<&str>| -> Vec<usize> {
        files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match &f.role {
                source::Role::Context { cluster: None } => Some(i),
                source::Role::Context { cluster: Some(c) } if Some(c.as_str()) == name => Some(i),
                _ => None,
            })
            .collect()
    };
    let linted = || (0..files.len()).filter(|&i| !files[i].is_context());
    if settings.clusters.is_empty() {
        return vec![ClusterScope {
            name: None,
            files: (0..files.len()).collect(),
            settings: settings.clone(),
        }];
    }
    let root = settings
        .root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let root = std::path::absolute(&root).unwrap_or(root);
    let rel: Vec<Option<String>> = files
        .iter()
        .map(|f| {
            let abs = std::path::absolute(&f.path).ok()?;
            let r = abs.strip_prefix(&root).ok()?;
            Some(r.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    let mut claimed = vec![false; files.len()];
    let mut out = Vec::new();
    for def in &settings.clusters {
        let mut b = globset::GlobSetBuilder::new();
        for g in &def.paths {
            if let Ok(g) = globset::Glob::new(g) {
                b.add(g);
            }
        }
        let Ok(set) = b.build() else { continue };
        let mut ids: Vec<usize> = linted()
            .filter(|&i| rel[i].as_deref().is_some_and(|r| set.is_match(r)))
            .collect();
        for &i in &ids {
            claimed[i] = true;
        }
        ids.extend(context_for(Some(def.name.as_str())));
        ids.sort_unstable();
        let mut s = settings.clone();
        s.eks = def.eks.unwrap_or(s.eks);
        s.karpenter = def.karpenter.unwrap_or(s.karpenter);
        out.push(ClusterScope {
            name: Some(def.name.clone()),
            files: ids,
            settings: s,
        });
    }
    let rest: Vec<usize> = linted().filter(|&i| !claimed[i]).collect();
    if !rest.is_empty() {
        let mut ids = rest;
        ids.extend(context_for(None));
        ids.sort_unstable();
        out.push(ClusterScope {
            name: None,
            files: ids,
            settings: settings.clone(),
        });
    }
    out
}

/// Runs the enabled rules over one index, in parallel.
fn run_rules(ix: &index::Index, settings: &Settings) -> Vec<Diagnostic> {
    rules::all()
        .par_iter()
        .filter(|r| rule_enabled(settings, r.name))
        .flat_map_iter(|r| {
            let cx = rules::Ctx { ix, rule: r };
            let mut out = Vec::new();
            (r.check)(&cx, &mut out);
            out
        })
        .collect()
}

/// Lints parsed files: [`check`], then [`finish`].
pub fn lint(files: &[SourceFile], settings: &Settings) -> Outcome {
    let mut outcome = check(files, settings);
    finish(files, settings, &mut outcome);
    outcome
}

/// One index per cluster and the enabled rules in parallel over each; findings on context files
/// dropped (they describe the cluster, they are not linted), and findings that several clusters
/// produce in a shared file merged and named after their clusters. Not yet suppressed nor
/// sorted: whatever moves findings to other files (rendered sources mapped back to the files
/// that produced them) runs between this and [`finish`].
pub fn check(files: &[SourceFile], settings: &Settings) -> Outcome {
    let scopes = clusters(files, settings);
    let mut membership = vec![0u32; files.len()];
    for sc in &scopes {
        for &f in &sc.files {
            membership[f] += 1;
        }
    }
    let mut counted = vec![false; files.len()];
    let mut objects = 0;
    let mut documents = 0;
    // (finding, the cluster that produced it)
    let mut found: Vec<(Diagnostic, Option<&str>)> = Vec::new();
    for sc in &scopes {
        let ix = index::Index::build_for(files, sc.files.clone(), &sc.settings);
        for o in &ix.objects {
            if !counted[o.file] && !files[o.file].is_context() {
                objects += 1;
            }
        }
        for &f in &sc.files {
            if !counted[f] && !files[f].is_context() {
                counted[f] = true;
                documents += files[f].docs.len();
            }
        }
        found.extend(
            run_rules(&ix, &sc.settings)
                .into_iter()
                .filter(|d| d.rule == "invalid-yaml" || !files[d.loc.file].is_context())
                .map(|d| (d, sc.name.as_deref())),
        );
    }
    Outcome {
        diagnostics: merge_clusters(found, &membership),
        files: files.iter().filter(|f| !f.is_context()).count(),
        documents,
        objects,
    }
}

/// Applies suppressions (they are read from the files the findings point into), the configured
/// severities, and sorts (path, line, column, rule) so parallel runs are byte-identical.
pub fn finish(files: &[SourceFile], settings: &Settings, outcome: &mut Outcome) {
    let diagnostics = &mut outcome.diagnostics;
    suppress::apply(files, settings, diagnostics);
    // Context describes the cluster; only its unreadable files are worth a word.
    diagnostics.retain(|d| d.rule == "invalid-yaml" || !files[d.loc.file].is_context());
    for d in diagnostics.iter_mut() {
        match settings.level(d.rule) {
            Some(Level::Warning) => d.severity = diag::Severity::Warning,
            Some(Level::Error) => d.severity = diag::Severity::Error,
            _ => {}
        }
    }
    diagnostics.sort_by(|a, b| {
        (
            &files[a.loc.file].path,
            a.loc.span.start,
            a.rule,
            &a.message,
        )
            .cmp(&(
                &files[b.loc.file].path,
                b.loc.span.start,
                b.rule,
                &b.message,
            ))
    });
    diagnostics.dedup();
}

/// The same finding from several clusters (a shared base) is one finding; in a file that more
/// than one cluster deploys, the message names the clusters it holds for.
fn merge_clusters(found: Vec<(Diagnostic, Option<&str>)>, membership: &[u32]) -> Vec<Diagnostic> {
    let mut out: Vec<(Diagnostic, Vec<&str>)> = Vec::with_capacity(found.len());
    let mut seen: std::collections::HashMap<(&'static str, diag::Loc, String), usize> =
        std::collections::HashMap::new();
    for (d, cluster) in found {
        let shared = membership.get(d.loc.file).copied().unwrap_or(0) > 1;
        if !shared {
            out.push((d, Vec::new()));
            continue;
        }
        let key = (d.rule, d.loc, d.message.clone());
        match seen.get(&key) {
            Some(&i) => {
                if let Some(c) = cluster
                    && !out[i].1.contains(&c)
                {
                    out[i].1.push(c);
                }
            }
            None => {
                seen.insert(key, out.len());
                out.push((d, cluster.into_iter().collect()));
            }
        }
    }
    out.into_iter()
        .map(|(mut d, mut names)| {
            if !names.is_empty() {
                names.sort_unstable();
                let noun = if names.len() == 1 {
                    "cluster"
                } else {
                    "clusters"
                };
                d.message = format!("{} [{noun} {}]", d.message, diag::backticked(&names, ", "));
            }
            d
        })
        .collect()
}
