//! gpuops: lint and render GPU platform manifests (Karpenter, Kueue, Kubernetes).

pub mod catalog;
pub mod config;
pub mod cost;
pub mod diag;
pub mod index;
pub mod intent;
pub mod model;
pub mod policy;
pub mod quantity;
pub mod render;
pub mod report;
pub mod rules;
pub mod sched;
pub mod schema;
pub mod small;
pub mod source;
pub mod sources;
pub mod suppress;
pub mod text;
pub mod why;
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
    /// Policies that failed at run time (error, time budget); the rest of the run went on.
    pub policy_errors: Vec<policy::PolicyError>,
}

/// mimalloc v3's `mi_option_purge_delay` (its place in `mi_option_e`, mimalloc.h; the -sys
/// crate names no constant for it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Tunes the allocator the binary and the benchmark install (mimalloc): freed pages go back to
/// the OS after 100 ms instead of a second. Parsing frees scanner buffers while the trees grow,
/// and at 10,000 files this keeps about 30 MiB off the peak for no measurable time; purging at
/// once costs far more (every purge is a TLB shootdown on the other core: +75 % CPU with the
/// policy pack). Call it first in `main`, before any thread starts.
pub fn tune_allocator() {
    // `MIMALLOC_PURGE_DELAY` in the environment wins, as mimalloc documents for its options.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain store into mimalloc's option table; `mi_option_set` is not
        // thread-safe, so it runs before any other thread exists.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 100) }
    }
}

/// Whether a rule runs under these settings. Bundled policies are opt-in: they run when the
/// config gives them a level or `--rule` names them.
pub fn rule_enabled(settings: &Settings, name: &str) -> bool {
    let selected = settings
        .only
        .as_ref()
        .map(|only| only.iter().any(|o| o == name));
    if selected == Some(false) {
        return false;
    }
    match settings.level(name) {
        Some(Level::Off) => false,
        Some(_) => true,
        None => selected == Some(true) || !policy::off_by_default(name),
    }
}

/// One cluster of the run: the files deployed to it (plus its context) and its facts.
#[derive(Debug)]
pub struct ClusterScope {
    /// `None`: the repository as one cluster, or the files no named cluster claims.
    pub name: Option<String>,
    pub files: Vec<diag::FileId>,
    pub settings: Settings,
}

/// Splits the files into clusters (`clusters:` in the config, and the destinations of Argo CD
/// Applications). Without either the repository is one. A file an Application syncs belongs to
/// its destinations' clusters only ([`source::Role::Synced`]); other files go by the clusters'
/// `paths` globs, and a file under several clusters' paths (a shared base) belongs to each. Files
/// no cluster claims are linted together as one more, unnamed, cluster (with Applications present
/// and `argo: {only-synced: true}`, not at all). Context files go to the cluster they describe, or
/// to every cluster.
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
    let synced: std::collections::BTreeSet<&str> = files
        .iter()
        .filter_map(|f| f.synced_to())
        .flatten()
        .map(String::as_str)
        .collect();
    let synced_to = |i: usize, name: &str| {
        files[i]
            .synced_to()
            .is_some_and(|cs| cs.iter().any(|c| c == name))
    };
    if settings.clusters.is_empty() && synced.is_empty() {
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
    let mut claimed: Vec<bool> = files.iter().map(|f| f.synced_to().is_some()).collect();
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
            .filter(|&i| match files[i].synced_to() {
                Some(_) => synced_to(i, &def.name),
                None => rel[i].as_deref().is_some_and(|r| set.is_match(r)),
            })
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
    // Destinations the config does not name are clusters of their own, with the shared context.
    for name in synced
        .iter()
        .filter(|n| !settings.clusters.iter().any(|d| d.name == **n))
    {
        let mut ids: Vec<usize> = linted().filter(|&i| synced_to(i, name)).collect();
        ids.extend(context_for(Some(name)));
        ids.sort_unstable();
        out.push(ClusterScope {
            name: Some((*name).to_string()),
            files: ids,
            settings: settings.clone(),
        });
    }
    let rest: Vec<usize> = linted().filter(|&i| !claimed[i]).collect();
    let dropped = settings.sources.argo.only_synced && !synced.is_empty();
    if !rest.is_empty() && !dropped {
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

/// Objects per chunk of the chunked rules. Many small tasks keep both cores busy to the end (37
/// tasks of very unequal size did not: at 10,000 files a lint took 15 % longer). 64 to 4,096 gave
/// the same time, 16,384 (four chunks) 10 % more.
const RULE_CHUNK: usize = 256;

/// Runs the enabled rules over one index, in parallel, and the enabled policies beside them.
fn run_rules(
    ix: &index::Index,
    settings: &Settings,
    policies: Option<&policy::Policies>,
    cluster: Option<&str>,
) -> (Vec<Diagnostic>, Vec<policy::PolicyError>) {
    let enabled: Vec<&'static rules::Rule> = rules::all()
        .iter()
        .copied()
        .filter(|r| rule_enabled(settings, r.name))
        .collect();
    let (chunked, whole): (Vec<_>, Vec<_>) = enabled.into_iter().partition(|r| r.chunked);
    enum Task {
        Whole(&'static rules::Rule),
        Chunk(std::ops::Range<usize>),
    }
    // One task per whole-index rule, and one per chunk of objects running every chunked rule.
    let mut tasks: Vec<Task> = whole.into_iter().map(Task::Whole).collect();
    if !chunked.is_empty() {
        tasks.extend(ix.chunks(RULE_CHUNK).into_iter().map(Task::Chunk));
    }
    let (mut found, policies) = rayon::join(
        || {
            tasks
                .par_iter()
                .flat_map_iter(|task| {
                    let mut out = Vec::new();
                    match task {
                        Task::Whole(r) => (r.check)(&rules::Ctx::new(ix, r), &mut out),
                        Task::Chunk(range) => {
                            for r in &chunked {
                                (r.check)(&rules::Ctx::chunk(ix, r, range.clone()), &mut out);
                            }
                        }
                    }
                    out
                })
                .collect::<Vec<_>>()
        },
        || policy::run(ix, settings, policies, cluster),
    );
    found.extend(policies.diagnostics);
    (found, policies.errors)
}

/// Says that the process exits right after its lint (the CLI): the policy input document is
/// left to the exit instead of being freed one value at a time (about 0.1 s at 10,000 files).
/// The index is freed: the report that follows reuses its memory, which keeps the peak 20 MB
/// lower at 10,000 files, at no measurable cost in time. Others (tests, embedders) free both.
pub fn exit_after_lint() {
    policy::keep_inputs_until_exit();
}

/// Lints parsed files with the bundled policy pack: [`lint_with`] without policies of its own.
pub fn lint(files: &[SourceFile], settings: &Settings) -> Outcome {
    lint_with(files, settings, None)
}

/// Lints parsed files: [`check`], then [`finish`]. `policies`: the run's loaded policies; `None`
/// runs the bundled pack (as far as the settings enable it).
pub fn lint_with(
    files: &[SourceFile],
    settings: &Settings,
    policies: Option<&policy::Policies>,
) -> Outcome {
    let mut outcome = check(files, settings, policies);
    finish(files, settings, policies, &mut outcome);
    outcome
}

/// One index per cluster and the enabled rules in parallel over each; findings on context files
/// dropped (they describe the cluster, they are not linted), and findings that several clusters
/// produce in a shared file merged and named after their clusters. Not yet suppressed nor
/// sorted: whatever moves findings to other files (rendered sources mapped back to the files
/// that produced them) runs between this and [`finish`].
pub fn check(
    files: &[SourceFile],
    settings: &Settings,
    policies: Option<&policy::Policies>,
) -> Outcome {
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
    let mut policy_errors: Vec<policy::PolicyError> = Vec::new();
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
        let (diagnostics, errors) = run_rules(&ix, &sc.settings, policies, sc.name.as_deref());
        for e in errors {
            if !policy_errors.contains(&e) {
                policy_errors.push(e);
            }
        }
        found.extend(
            diagnostics
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
        policy_errors,
    }
}

/// Applies suppressions (they are read from the files the findings point into), the configured
/// severities, and sorts (path, line, column, rule) so parallel runs are byte-identical.
pub fn finish(
    files: &[SourceFile],
    settings: &Settings,
    policies: Option<&policy::Policies>,
    outcome: &mut Outcome,
) {
    let diagnostics = &mut outcome.diagnostics;
    suppress::apply(files, settings, policies, diagnostics);
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
            a.loc.span.start(),
            a.rule,
            &a.message,
        )
            .cmp(&(
                &files[b.loc.file].path,
                b.loc.span.start(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purge_delay_is_the_option_tune_allocator_sets() {
        // mimalloc v3 purges after 1000 ms by default: a wrong option index would read another.
        let v = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(v, 1000);
    }
    use crate::config::ClusterDef;
    use crate::source::Role;

    fn file(path: &str, role: Role) -> SourceFile {
        let mut f = SourceFile::from_text(path.into(), String::new());
        f.role = role;
        f
    }

    #[test]
    fn files_split_into_clusters_with_shared_bases_context_and_the_rest() {
        let files = vec![
            file("clusters/prod/a.yaml", Role::Linted),
            file("clusters/staging/b.yaml", Role::Linted),
            file("base/c.yaml", Role::Linted),
            file("tools/d.yaml", Role::Linted),
            file("ctx/all.yaml", Role::Context { cluster: None }),
            file(
                "ctx/prod.yaml",
                Role::Context {
                    cluster: Some("prod".into()),
                },
            ),
        ];
        let def = |name: &str, paths: &[&str], eks| ClusterDef {
            name: name.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            eks,
            karpenter: None,
            context: Vec::new(),
            server: None,
        };
        let settings = Settings {
            root: std::env::current_dir().ok(),
            clusters: vec![
                def("prod", &["clusters/prod/**", "base/**"], Some(true)),
                def("staging", &["clusters/staging/**", "base/**"], None),
            ],
            ..Settings::default()
        };
        let scopes = clusters(&files, &settings);
        let got: Vec<(Option<&str>, &[usize], bool)> = scopes
            .iter()
            .map(|s| (s.name.as_deref(), s.files.as_slice(), s.settings.eks))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("prod"), &[0, 2, 4, 5][..], true),
                (Some("staging"), &[1, 2, 4][..], false),
                (None, &[3, 4][..], false),
            ]
        );
        // Without `clusters:`, everything is one cluster.
        let one = clusters(&files, &Settings::default());
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].files, (0..files.len()).collect::<Vec<_>>());
    }
}
