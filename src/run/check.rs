//! Linting parsed files: one index per cluster, the enabled rules and policies over each in
//! parallel, findings of shared files merged; then suppressions, severities and the order.

use super::Outcome;
use super::clusters::clusters;
use crate::config::{Level, Settings};
use crate::diag::{self, Diagnostic};
use crate::schema::validations::SkipSet;
use crate::source::SourceFile;
use crate::{index, policy, rules, suppress};
use rayon::prelude::*;

/// Objects per chunk of the chunked rules. Many small tasks keep both cores busy to the end (37
/// tasks of very unequal size did not: at 10,000 files a lint took 15 % longer). 64 to 4,096 gave
/// the same time, 16,384 (four chunks) 10 % more.
pub const RULE_CHUNK: usize = 256;

/// How many times the repository's files the examples judged again may hold together.
const REFINE_BUDGET: usize = 4;

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
        .filter(|r| policy::enabled(settings, r.name))
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
    let (scopes, examples): (Vec<_>, Vec<_>) =
        scopes.into_iter().partition(|s| s.reports.is_none());
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
    let mut skipped = SkipSet::default();
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
        skipped.merge(ix.cel_skips());
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
    // Each example judged again costs an index of its files and the shared ones: bounded to a
    // few times the whole repository's, so a repository of many examples over a large shared
    // tree stays linear (the examples past the budget keep the whole repository's findings).
    let mut budget = REFINE_BUDGET * files.len();
    for ex in &examples {
        let Some(own) = &ex.reports else { continue };
        if !found.iter().any(|(d, _)| own.contains(&d.loc.file)) {
            continue;
        }
        let Some(left) = budget.checked_sub(ex.files.len()) else {
            break;
        };
        budget = left;
        refine(files, ex, policies, &mut found);
    }
    Outcome {
        diagnostics: merge_clusters(found, &membership),
        files: files.iter().filter(|f| !f.is_context()).count(),
        documents,
        objects,
        policy_errors,
        notes: skipped.note().into_iter().collect(),
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
    let mut test_tree: std::collections::HashMap<usize, (bool, bool)> =
        std::collections::HashMap::new();
    diagnostics
        .retain(|d| settings.selected(d.rule) || !advice_on_test_data(d, files, &mut test_tree));
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

/// Advice on how an object runs (disruption, cost, availability, performance, security,
/// deprecation, consistency between copies) given on a file in a test tree or a `deprecated/`
/// directory: what is there is the input of a project's tests (fixtures, golden files, e2e
/// scenarios, older releases' objects), not what a cluster runs, so how it would run is nobody's
/// concern; findings that the object cannot be applied at all stand. A file kept for reference
/// only (`archive/`, `old/`, `legacy/`, …) is applied by nobody: nothing about it is. A rule
/// selected by name (`--rule`) judges every file.
fn advice_on_test_data(
    d: &Diagnostic,
    files: &[SourceFile],
    test_tree: &mut std::collections::HashMap<usize, (bool, bool)>,
) -> bool {
    let advice = crate::rules::find(d.rule).is_some_and(|r| {
        matches!(
            r.category,
            "disruption"
                | "cost"
                | "availability"
                | "performance"
                | "security"
                | "deprecation"
                | "consistency"
        )
    });
    // Each file's path is judged once (it looks for the repository's root on disk).
    let (test, archived) = *test_tree.entry(d.loc.file).or_insert_with(|| {
        files.get(d.loc.file).map_or((false, false), |f| {
            (
                crate::source::in_test_tree(&f.path) || crate::source::in_deprecated_tree(&f.path),
                crate::source::in_archived_tree(&f.path),
            )
        })
    });
    // A test's object introduced as one that must be refused (`# FAIL: …`): what is wrong with
    // it is the point of the test.
    let refused = test
        && files
            .get(d.loc.file)
            .is_some_and(|f| crate::source::negative_case(&f.text, d.loc.span.start()));
    archived || (advice && test) || refused
}

/// An example judged on its own (with the files outside every example): each finding on its
/// files stands only if it holds there too, in the words it has there; what another example's
/// objects caused goes. It never adds a finding, and an example without one is not judged again.
fn refine(
    files: &[SourceFile],
    ex: &super::ClusterScope,
    policies: Option<&policy::Policies>,
    found: &mut Vec<(Diagnostic, Option<&str>)>,
) {
    let Some(own) = &ex.reports else { return };
    let ix = index::Index::build_for(files, ex.files.clone(), &ex.settings);
    let (again, _) = run_rules(&ix, &ex.settings, policies, None);
    let mut held: std::collections::HashMap<(&'static str, diag::Loc), Diagnostic> = again
        .into_iter()
        .filter(|d| own.contains(&d.loc.file))
        .map(|d| ((d.rule, d.loc), d))
        .collect();
    found.retain_mut(|(d, _)| {
        if !own.contains(&d.loc.file) {
            return true;
        }
        match held.remove(&(d.rule, d.loc)) {
            Some(there) => {
                *d = there;
                true
            }
            None => false,
        }
    });
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
