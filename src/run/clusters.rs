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
        s.complete = def.complete.unwrap_or(s.complete);
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

/// `--explain-clusters`: which clusters the run lints, which files each holds and why, and what
/// each is declared to be.
pub fn explain(files: &[SourceFile], settings: &Settings) -> String {
    let scopes = clusters(files, settings);
    let mut out = String::new();
    if settings.clusters.is_empty() && files.iter().all(|f| f.synced_to().is_none()) {
        out.push_str(
            "clusters: one, the whole repository (no `clusters:` in the config, no Argo CD Application): every object is judged with every other; `clusters:` splits it\n",
        );
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
}
