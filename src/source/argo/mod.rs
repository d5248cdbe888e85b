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
//! [`app`] reads an Application, [`fleet`] knows the clusters Argo CD deploys to (from the
//! config and cluster Secrets) and maps destinations onto them, [`appset`] expands an
//! ApplicationSet (Go templates by [`gotmpl`]), `sync` follows Applications to what they sync
//! (`sets` those ApplicationSets generate), `units` builds it, `variants` finds overlays applied one at a time, and `explain` marks the files with
//! their clusters and says what happened (`--explain-sources`).

pub mod app;
pub mod appset;
mod base64;
mod explain;
pub mod fleet;
pub mod gotmpl;
mod resolve;
pub mod selector;
mod sets;
mod sync;
mod units;
mod variants;

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
}
