//! Which files belong to which cluster of the run.

use crate::config::Settings;
use crate::diag;
use crate::source::{self, SourceFile};

/// One cluster of the run: the files deployed to it (plus its context) and its facts.
#[derive(Debug)]
pub struct ClusterScope {
    /// `None`: the repository as one cluster, or the files no named cluster claims.
    pub name: Option<String>,
    pub files: Vec<diag::FileId>,
    /// For one of the repository's examples judged again on its own ([`example_scopes`]): its
    /// files, whose findings it may only take back. It also holds the files outside every
    /// example, which it sees but does not report on. `None`: a cluster that reports on all it
    /// holds.
    pub reports: Option<std::collections::HashSet<diag::FileId>>,
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
    // Derived objects go where the file that defines them goes.
    let linted =
        || (0..files.len()).filter(|&i| !matches!(files[i].role, source::Role::Context { .. }));
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
    let rel = relative_paths(files, settings);
    if settings.clusters.is_empty() && synced.is_empty() {
        let every: Vec<usize> = (0..files.len()).collect();
        return example_scopes(files, &rel, settings, &every);
    }
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
        s.complete = def.complete.unwrap_or(s.complete);
        out.push(ClusterScope {
            name: Some(def.name.clone()),
            files: ids,
            reports: None,
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
            reports: None,
            settings: settings.clone(),
        });
    }
    let rest: Vec<usize> = linted().filter(|&i| !claimed[i]).collect();
    let dropped = settings.sources.argo.only_synced && !synced.is_empty();
    if !rest.is_empty() && !dropped {
        let mut ids = rest;
        ids.extend(context_for(None));
        ids.sort_unstable();
        // The files no cluster claims are judged as a repository without Argo CD is: its
        // examples and stacks apart too.
        if settings.clusters.is_empty() {
            out.extend(example_scopes(files, &rel, settings, &ids));
        } else {
            out.push(ClusterScope {
                name: None,
                files: ids,
                reports: None,
                settings: settings.clone(),
            });
        }
    }
    out
}

/// Each file's path from the run's root, `/`-separated (`None`: outside it).
fn relative_paths(files: &[SourceFile], settings: &Settings) -> Vec<Option<String>> {
    let root = settings
        .root
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let root = std::path::absolute(&root).unwrap_or(root);
    files
        .iter()
        .map(|f| {
            let abs = std::path::absolute(&f.path).ok()?;
            let r = abs.strip_prefix(&root).ok()?;
            Some(r.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

/// Directories whose subdirectories are separate examples, each meant for a cluster of its own.
const EXAMPLE_DIRS: [&str; 10] = [
    "examples",
    "example",
    "samples",
    "sample",
    "demos",
    "demo",
    "tutorials",
    "tutorial",
    "blueprints",
    "blueprint",
];

/// Endings of a directory's name that make it one example of its own (`rag-eval-demo/`,
/// `llama-quickstart/`), as a repository of demos side by side names them.
const EXAMPLE_SUFFIXES: [&str; 11] = [
    "-demo",
    "_demo",
    "-example",
    "_example",
    "-quickstart",
    "_quickstart",
    "-sample",
    "_sample",
    "-tutorial",
    "_tutorial",
    "-workshop",
];

/// The example a file belongs to: `examples/<name>` for a file inside one of its subdirectories,
/// `examples` for a file directly in it (several files side by side are one example), a
/// directory named as one example (`rag-eval-demo`); `None` outside every example directory.
pub fn example_of(rel: &str) -> Option<&str> {
    // The end of each directory's name in `rel` (the last segment is the file's).
    let ends: Vec<usize> = rel.match_indices('/').map(|(i, _)| i).collect();
    ends.iter().enumerate().find_map(|(k, &end)| {
        let start = rel[..end].rfind('/').map_or(0, |i| i + 1);
        let name = rel[start..end].to_ascii_lowercase();
        if EXAMPLE_DIRS.iter().any(|e| name == *e) {
            Some(&rel[..*ends.get(k + 1).unwrap_or(&end)])
        } else if EXAMPLE_SUFFIXES.iter().any(|e| name.ends_with(e)) {
            Some(&rel[..end])
        } else {
            None
        }
    })
}

/// The directories (relative to the root) that define a cluster of their own: where Terraform
/// builds an EKS cluster or node capacity (EKS managed node groups, Karpenter pools from chart
/// values), or an eksctl `ClusterConfig` stands. The root itself is none: it is the repository.
fn stack_roots(files: &[SourceFile], rel: &[Option<String>]) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let kind_of = |d: &crate::yaml::Document, kind: &str, api: &str| {
            d.root().str_at(&["kind"]) == Some(kind)
                && d.root()
                    .str_at(&["apiVersion"])
                    .is_some_and(|v| v.starts_with(api))
        };
        let defines = (f.path.ends_with(".tf")
            && ((f.is_context()
                && f.docs
                    .iter()
                    .any(|d| kind_of(d, "NodePool", "karpenter.sh/")))
                || source::terraform::builds_eks(&f.text)))
            || f.docs
                .iter()
                .any(|d| kind_of(d, "ClusterConfig", "eksctl.io/"));
        let Some(path) = rel[i].as_deref().filter(|_| defines) else {
            continue;
        };
        let dir = source::terraform::stack_dir(path);
        if !dir.is_empty() && !roots.iter().any(|r| r == dir) {
            roots.push(dir.to_string());
        }
    }
    roots
}

/// The stack a path belongs to: the deepest stack root that holds it.
fn stack_of<'r>(roots: &'r [String], path: &str) -> Option<&'r str> {
    roots
        .iter()
        .filter(|r| {
            path.strip_prefix(r.as_str())
                .is_some_and(|p| p.starts_with('/'))
        })
        .max_by_key(|r| r.len())
        .map(String::as_str)
}

/// The group of a file that is judged again on its own: its stack (with two or more in the
/// repository) and its example (context files belong to no example).
fn group_of<'p>(
    file: &SourceFile,
    path: &'p str,
    roots: &'p [String],
) -> (Option<&'p str>, Option<&'p str>) {
    let stack = if roots.len() >= 2 {
        stack_of(roots, path)
    } else {
        None
    };
    let example = example_of(path).filter(|_| !file.is_context());
    (stack, example)
}

/// The repository as one cluster, and when it holds two or more examples, or two or more
/// stacks that each build a cluster of their own, each example (and stack) judged again with
/// the files outside every example and stack (the platform they share) and not with the
/// others: a finding on an example's file stands only if it holds there too. A file of an
/// example inside a stack is judged with that stack's files; one outside every stack with every
/// stack's. Without examples and stacks this
/// is exactly one cluster of every file.
fn example_scopes(
    files: &[SourceFile],
    rel: &[Option<String>],
    settings: &Settings,
    among: &[usize],
) -> Vec<ClusterScope> {
    let all = || ClusterScope {
        name: None,
        files: among.to_vec(),
        reports: None,
        settings: settings.clone(),
    };
    let roots = stack_roots(files, rel);
    // Outside the root (linted from elsewhere without a config): the path as given.
    let path = |i: usize| rel[i].as_deref().unwrap_or(files[i].path.as_str());
    let groups: Vec<(Option<&str>, Option<&str>)> = (0..files.len())
        .map(|i| group_of(&files[i], path(i), &roots))
        .collect();
    let mut own: std::collections::BTreeMap<(Option<&str>, Option<&str>), Vec<usize>> =
        Default::default();
    for &i in among {
        let g = groups[i];
        if g != (None, None) && !files[i].is_context() {
            own.entry(g).or_default().push(i);
        }
    }
    let examples = own
        .keys()
        .filter_map(|(_, e)| *e)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let stacks = own
        .keys()
        .filter_map(|(s, _)| *s)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if examples < 2 && stacks < 2 {
        return vec![all()];
    }
    let mut out = vec![all()];
    for ((stack, example), reported) in own {
        let ids: Vec<usize> = among
            .iter()
            .copied()
            .filter(|&i| {
                let (s, e) = groups[i];
                // A stack's files are judged without the other stacks'; what lies outside
                // every stack (an example that any of them may run) with all of them.
                (s.is_none() || stack.is_none() || s == stack) && (e.is_none() || e == example)
            })
            .collect();
        out.push(ClusterScope {
            name: None,
            files: ids,
            reports: Some(reported.into_iter().collect()),
            settings: settings.clone(),
        });
    }
    out
}

/// `--explain-clusters`: which clusters the run lints, which files each holds and why, and what
/// each is declared to be.
pub fn explain(files: &[SourceFile], settings: &Settings) -> String {
    let scopes = clusters(files, settings);
    let mut out = String::new();
    if settings.clusters.is_empty() && files.iter().all(|f| f.synced_to().is_none()) {
        let aside = if scopes.iter().any(|s| s.reports.is_some()) {
            ", examples aside"
        } else {
            ""
        };
        out.push_str(&format!(
            "clusters: one, the whole repository (no `clusters:` in the config, no Argo CD Application): every object is judged with every other{aside}; `clusters:` splits it\n",
        ));
    } else {
        out.push_str(&format!(
            "clusters: {} (from {})\n",
            scopes.len(),
            match (
                settings.clusters.is_empty(),
                files.iter().any(|f| f.synced_to().is_some())
            ) {
                (false, true) => "`clusters:` in the config and Argo CD destinations",
                (false, false) => "`clusters:` in the config",
                _ => "Argo CD destinations",
            }
        ));
    }
    let (scopes, examples): (Vec<_>, Vec<_>) =
        scopes.into_iter().partition(|s| s.reports.is_none());
    for scope in &scopes {
        let (context, linted): (Vec<usize>, Vec<usize>) =
            scope.files.iter().partition(|&&i| files[i].is_context());
        let synced = linted
            .iter()
            .filter(|&&i| files[i].synced_to().is_some())
            .count();
        let name = match &scope.name {
            Some(n) => format!("`{n}`"),
            None if scopes.len() == 1 => "the repository".to_string(),
            None => "(files no cluster claims)".to_string(),
        };
        let mut facts = Vec::new();
        if synced > 0 {
            facts.push(format!("{synced} synced by Argo CD"));
        }
        if !context.is_empty() {
            facts.push(format!(
                "and {} context file{} describing it",
                context.len(),
                if context.len() == 1 { "" } else { "s" }
            ));
        }
        if scope.settings.complete {
            facts.push("declared complete: a reference to what it lacks is an error".into());
        }
        if scope.settings.karpenter {
            facts.push("runs Karpenter".into());
        }
        let facts = if facts.is_empty() {
            String::new()
        } else {
            format!(" ({})", facts.join("; "))
        };
        out.push_str(&format!(
            "  {name}: {} linted file{}{facts}\n",
            linted.len(),
            if linted.len() == 1 { "" } else { "s" }
        ));
    }
    if !examples.is_empty() {
        let rel = relative_paths(files, settings);
        let roots = stack_roots(files, &rel);
        out.push_str(&format!(
            "  {} examples (and stacks that build a cluster of their own) are also judged on their own, each with the files outside every example and stack and not with the others: a finding in an example stands only if it holds there too\n",
            examples.len()
        ));
        for ex in &examples {
            let own = ex.reports.as_ref().map_or(0, |r| r.len());
            let name = ex
                .reports
                .iter()
                .flatten()
                .map(|&i| {
                    let path = rel[i].as_deref().unwrap_or(files[i].path.as_str());
                    match group_of(&files[i], path, &roots) {
                        (_, Some(e)) => e.to_string(),
                        (Some(s), None) => s.to_string(),
                        (None, None) => "?".to_string(),
                    }
                })
                .min()
                .unwrap_or_else(|| "?".to_string());
            out.push_str(&format!(
                "    {name}/: {own} file{}\n",
                if own == 1 { "" } else { "s" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            ..ClusterDef::default()
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

    #[test]
    fn an_example_is_the_directory_under_an_examples_directory() {
        assert_eq!(
            example_of("examples/train/job.yaml"),
            Some("examples/train")
        );
        assert_eq!(
            example_of("examples/train/a/b/job.yaml"),
            Some("examples/train")
        );
        assert_eq!(example_of("docs/Samples/x/y.yaml"), Some("docs/Samples/x"));
        // Files side by side directly in the examples directory are one example.
        assert_eq!(example_of("examples/job.yaml"), Some("examples"));
        assert!(crate::source::terraform::builds_eks(
            "module \"eks\" {\n  source  = \"terraform-aws-modules/eks/aws\"\n}\n"
        ));
        assert!(crate::source::terraform::builds_eks(
            "resource \"aws_eks_cluster\" \"this\" {}\n"
        ));
        assert!(!crate::source::terraform::builds_eks(
            "module \"karpenter\" {\n  source = \"terraform-aws-modules/eks/aws//modules/karpenter\"\n}\n"
        ));
        assert_eq!(example_of("examples.yaml"), None);
        assert_eq!(example_of("infra/pools/gpu.yaml"), None);
        assert_eq!(example_of("my-examples/x/y.yaml"), None);
        assert_eq!(
            example_of("rag-eval-demo/manifests/evalhub.yaml"),
            Some("rag-eval-demo")
        );
        assert_eq!(
            example_of("demos/llama_quickstart/k8s/job.yaml"),
            Some("demos/llama_quickstart")
        );
        assert_eq!(example_of("demo.yaml"), None);
    }

    #[test]
    fn examples_are_judged_with_the_shared_files_but_not_with_each_other() {
        let files = vec![
            file("infra/pools.yaml", Role::Linted),
            file("examples/a/job.yaml", Role::Linted),
            file("examples/a/pool.yaml", Role::Linted),
            file("examples/b/job.yaml", Role::Linted),
        ];
        let settings = Settings {
            root: std::env::current_dir().ok(),
            ..Settings::default()
        };
        let scopes = clusters(&files, &settings);
        let got: Vec<(&[usize], Vec<usize>, bool)> = scopes
            .iter()
            .map(|s| {
                let mut r: Vec<usize> = s.reports.iter().flatten().copied().collect();
                r.sort_unstable();
                (s.files.as_slice(), r, s.reports.is_some())
            })
            .collect();
        // The whole repository, then each example with the shared files, reporting on its own.
        assert_eq!(
            got,
            vec![
                (&[0, 1, 2, 3][..], vec![], false),
                (&[0, 1, 2][..], vec![1, 2], true),
                (&[0, 3][..], vec![3], true),
            ]
        );
        // One example is the repository as one cluster.
        let one = clusters(&files[..3], &settings);
        assert_eq!(one.len(), 1);
        assert!(one[0].reports.is_none());
    }
}
