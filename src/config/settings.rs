//! The settings a run uses: plain data, validated (see `file`), overridden by flags.

use super::sources::SourcesConfig;
use crate::diag::Severity;
use crate::yaml::Span;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to do with a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    Warning,
    Error,
}

/// An object that exists in the cluster but not in the linted files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct External {
    pub kind: String,
    pub namespace: Option<String>,
    /// `*` matches any name.
    pub name: String,
}

/// One cluster of a repository that deploys to several (`clusters:` in the config).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterDef {
    pub name: String,
    /// Globs (relative to the config file's directory) of the files deployed to it.
    pub paths: Vec<String>,
    /// Cluster facts that override the top-level `cluster:` ones.
    pub eks: Option<bool>,
    pub karpenter: Option<bool>,
    pub complete: Option<bool>,
    /// Context files or directories that describe only this cluster.
    pub context: Vec<String>,
    /// Its API server URL: Argo CD Applications whose `destination.server` is this deploy to it.
    pub server: Option<String>,
    /// The name Argo CD knows it by (its cluster Secret's `name`) when not `name`.
    pub argo_name: Option<String>,
    /// Its cluster Secret's labels and annotations, as the ApplicationSet `clusters` generator
    /// selects and templates with them.
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

/// Resolved settings the pipeline runs with.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Findings at or above this fail the run; `None`: never fail on findings.
    pub fail_on: Option<Severity>,
    pub rules: BTreeMap<String, Level>,
    /// Only these rules run, when set (`--rule`).
    pub only: Option<Vec<String>>,
    pub exclude: Vec<String>,
    pub external: Vec<External>,
    /// The cluster is EKS (ExtendedResourceToleration admission plugin on).
    pub eks: bool,
    /// The cluster runs Karpenter even when the linted files hold no NodePool.
    pub karpenter: bool,
    /// The linted files (with their context) hold every object the cluster has: a reference to
    /// one they do not define certainly fails (an error, not a warning).
    pub complete: bool,
    /// Pod-template labels that mark a workload as training (`workload-type: training`).
    pub training_labels: Vec<(String, String)>,
    /// Directory the config file was found in (exclude globs are relative to it).
    pub root: Option<PathBuf>,
    /// Files or directories describing objects that exist in the cluster but not in the linted
    /// files (a `kubectl get … -o yaml` dump, Terraform exports), relative to `root`.
    pub context: Vec<String>,
    /// Named clusters; empty means the repository is one cluster.
    pub clusters: Vec<ClusterDef>,
    /// Honour in-source suppressions (`--no-suppressions` turns this off).
    pub suppressions: bool,
    /// Rendering of kustomizations and charts (`sources:`, `charts:`).
    pub sources: SourcesConfig,
    /// The shortest `terminationGracePeriodSeconds` a training pod on spot may have
    /// (`spot: {min-termination-grace: 30}`).
    pub spot_min_grace_seconds: u64,
    /// Directories of Rego policies (`policies:`), relative to `root`.
    pub policy_dirs: Vec<String>,
    /// The `data` document policies read (`policy-data:`): allow-lists, limits.
    pub policy_data: Option<serde_json::Value>,
    /// `rules:` entries naming policies, checked once the policies are loaded
    /// (`policy::Policies::unknown_refs`): user policy ids are not known before.
    pub policy_refs: Vec<(String, Span)>,
    /// Prices, spot discount and budgets for `gpuops cost` (`cost:`).
    pub cost: crate::catalog::pricing::CostSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            fail_on: Some(Severity::Error),
            rules: BTreeMap::new(),
            only: None,
            exclude: Vec::new(),
            external: Vec::new(),
            eks: false,
            karpenter: false,
            complete: false,
            training_labels: vec![("workload-type".into(), "training".into())],
            root: None,
            context: Vec::new(),
            clusters: Vec::new(),
            suppressions: true,
            sources: SourcesConfig::default(),
            spot_min_grace_seconds: 30,
            policy_dirs: Vec::new(),
            policy_data: None,
            policy_refs: Vec::new(),
            cost: crate::catalog::pricing::CostSettings::default(),
        }
    }
}

impl Settings {
    pub fn level(&self, rule: &str) -> Option<Level> {
        self.rules.get(rule).copied()
    }

    /// Whether a rule runs: not when `--rule` selects others or its level is `off`; a rule that is
    /// off by default (a bundled policy) runs when given a level or selected.
    pub fn rule_enabled(&self, name: &str, off_by_default: bool) -> bool {
        let selected = self
            .only
            .as_ref()
            .map(|only| only.iter().any(|o| o == name));
        if selected == Some(false) {
            return false;
        }
        match self.level(name) {
            Some(Level::Off) => false,
            Some(_) => true,
            None => selected == Some(true) || !off_by_default,
        }
    }
    /// Whether the run selected this rule by name (`--rule`).
    pub fn selected(&self, rule: &str) -> bool {
        self.only
            .as_ref()
            .is_some_and(|only| only.iter().any(|o| o == rule))
    }

    pub fn is_external(&self, kind: &str, namespace: Option<&str>, name: &str) -> bool {
        self.external.iter().any(|e| {
            e.kind == kind
                && (e.name == "*" || e.name == name)
                && match (&e.namespace, namespace) {
                    (Some(a), Some(b)) => a == "*" || a == b,
                    _ => true,
                }
        })
    }
}
