//! What the NVIDIA GPU operator and device plugin are told in the files: the MIG strategy, the
//! MIG manager's named layouts, and the device plugin's sharing configurations (time-slicing,
//! MPS). Most of it is YAML held as text in a ConfigMap value or in Helm values, so it is read
//! into owned values that point back at the object's node that holds them.

use crate::diag::Loc;
use crate::yaml::{Budget, Node, parse};

pub mod mig_parted;
pub mod operator;
pub mod plugin_config;

/// How the device plugin advertises MIG devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigStrategy {
    /// MIG devices are not told apart from whole GPUs.
    None,
    /// Every GPU of a node carries the same MIG profile; its instances are `nvidia.com/gpu`.
    Single,
    /// Each profile is its own resource, `nvidia.com/mig-<profile>`.
    Mixed,
}

impl MigStrategy {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "none" => Some(MigStrategy::None),
            "single" => Some(MigStrategy::Single),
            "mixed" => Some(MigStrategy::Mixed),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            MigStrategy::None => "none",
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
    }
}

/// A value read from the files, with where it is written and what wrote it.
#[derive(Debug, Clone)]
pub struct Setting<T> {
    pub value: T,
    pub at: Loc,
    /// `ClusterPolicy cluster-policy`, `ConfigMap gpu-operator/time-slicing (config \`any\`)`.
    pub source: String,
}

/// The YAML documents a ConfigMap value holds as text, handed to `f` one root at a time; values
/// that are not YAML give nothing.
pub(crate) fn each_embedded<T>(
    value: Node<'_>,
    mut f: impl FnMut(Node<'_>) -> Option<T>,
) -> Vec<T> {
    let Some(text) = value.as_str() else {
        return Vec::new();
    };
    let parsed = parse(text, Budget::default());
    parsed.docs.iter().filter_map(|d| f(d.root())).collect()
}

/// A scalar read as a whole number (`4`, `"4"`).
pub(crate) fn whole(n: Node<'_>) -> Option<u32> {
    n.as_str()?.trim().trim_matches('"').parse().ok()
}

/// A scalar read as a boolean the way Go's YAML reads one here (`true`, `false`).
pub(crate) fn boolean(n: Node<'_>) -> Option<bool> {
    match n.as_str()?.trim() {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}
