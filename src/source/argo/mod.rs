//! Argo CD: the `Application`s and `ApplicationSet`s in the repository say what is synced where.
//!
//! Each Application's sources from this repository are linted as Argo CD would render them (a
//! directory of manifests, a kustomization built with the Application's `kustomize` options, a
//! chart rendered with its `helm` options), and what they produce belongs to the cluster of the
//! Application's destination ([`crate::source::Role::Synced`]), so cross-object rules look only
//! within that cluster. ApplicationSets are expanded offline ([`appset`]); an Application whose
//! source holds more Applications is followed (app of apps). Sources from other repositories,
//! and what cannot be evaluated offline, are listed as not linted with the reason.
//!
//! [`app`] reads an Application, [`appset`] expands an ApplicationSet, `sync` follows
//! Applications to what they sync, `units` builds it, and `explain` marks the files with their
//! clusters and says what happened (`--explain-sources`).

pub mod app;
pub mod appset;
mod base64;
mod explain;
pub mod gotmpl;
mod sync;
mod units;

use crate::config::ClusterDef;

/// The API server of the cluster Argo CD runs in.
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
/// The name Argo CD gives that cluster.
pub const IN_CLUSTER: &str = "in-cluster";

pub use crate::text::normalize_repo;

/// Where an Application deploys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Destination {
    pub name: Option<String>,
    pub server: Option<String>,
    pub namespace: Option<String>,
}

/// The cluster a destination is, and how that was decided (for `--explain-sources`): a cluster
/// of `clusters:` by name or `server`, Argo CD's own cluster, else a cluster named after the
/// destination.
pub fn cluster_of(dest: &Destination, clusters: &[ClusterDef]) -> Option<(String, String)> {
    if let Some(name) = dest.name.as_deref() {
        let how = if clusters.iter().any(|c| c.name == name) {
            format!("destination name `{name}`, a cluster of `clusters:`")
        } else {
            format!("destination name `{name}`")
        };
        return Some((name.to_string(), how));
    }
    let server = dest.server.as_deref()?.trim_end_matches('/');
    if let Some(c) = clusters
        .iter()
        .find(|c| c.server.as_deref() == Some(server))
    {
        return Some((
            c.name.clone(),
            format!(
                "destination server {server}, the `server` of cluster `{}` in `clusters:`",
                c.name
            ),
        ));
    }
    if server == IN_CLUSTER_SERVER {
        return Some((
            IN_CLUSTER.to_string(),
            format!("destination server {server}, the cluster Argo CD runs in"),
        ));
    }
    // The clusters generator stands in a cluster's name for the server it does not know.
    if let Some(c) = clusters.iter().find(|c| c.name == server) {
        return Some((
            c.name.clone(),
            format!("cluster `{}` of `clusters:`", c.name),
        ));
    }
    Some((server.to_string(), format!("destination server {server}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_urls_compare_by_host_and_path() {
        for u in [
            "git@github.com:Example/gpu-gitops.git",
            "https://github.com/example/gpu-gitops",
            "https://github.com/example/gpu-gitops.git/",
            "ssh://git@github.com:22/example/gpu-gitops.git",
            "https://user@github.com/example/gpu-gitops",
        ] {
            assert_eq!(normalize_repo(u), "github.com/example/gpu-gitops", "{u}");
        }
        assert_ne!(
            normalize_repo("https://github.com/example/other"),
            "github.com/example/gpu-gitops"
        );
    }

    fn def(name: &str, server: Option<&str>) -> ClusterDef {
        ClusterDef {
            name: name.into(),
            paths: Vec::new(),
            eks: None,
            karpenter: None,
            complete: None,
            context: Vec::new(),
            server: server.map(Into::into),
        }
    }

    #[test]
    fn destinations_become_clusters() {
        let clusters = [def("prod", Some("https://prod.example.com"))];
        let of = |name: Option<&str>, server: Option<&str>| {
            cluster_of(
                &Destination {
                    name: name.map(Into::into),
                    server: server.map(Into::into),
                    namespace: None,
                },
                &clusters,
            )
            .map(|(c, _)| c)
        };
        assert_eq!(of(Some("staging"), None).as_deref(), Some("staging"));
        assert_eq!(
            of(None, Some("https://prod.example.com/")).as_deref(),
            Some("prod")
        );
        assert_eq!(
            of(None, Some("https://kubernetes.default.svc")).as_deref(),
            Some("in-cluster")
        );
        assert_eq!(
            of(None, Some("https://dev.example.com")).as_deref(),
            Some("https://dev.example.com")
        );
        assert_eq!(of(None, None), None);
    }
}
