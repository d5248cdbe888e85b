//! The validated platform: what a profile means once every name resolves and every number fits.

use super::profile::{Capacity, ClassType, DevicePlugin, MigStrategyChoice, Tier};
use crate::catalog::Instance;

/// A profile that passed validation.
#[derive(Debug, Clone)]
pub struct Platform {
    pub cluster: ClusterSpec,
    /// The device-plugin DaemonSet to render, if any.
    pub device_plugin: Option<DevicePlugin>,
    pub classes: Vec<ClassSpec>,
    pub teams: Vec<TeamSpec>,
    pub jobs: Vec<JobSpec>,
}

#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub name: String,
    pub region: String,
    pub zones: Vec<String>,
    pub node_role: String,
    pub discovery_tag: String,
    pub ami_alias: String,
    pub ami_family: AmiFamily,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmiFamily {
    Al2023,
    Bottlerocket,
}

/// Which instances a class may launch, in the form its NodePool requirement takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuSelector {
    /// `karpenter.k8s.aws/instance-gpu-name In [...]`
    Names(Vec<String>),
    /// `karpenter.k8s.aws/instance-family In [...]`
    Families(Vec<String>),
    /// `node.kubernetes.io/instance-type In [...]` (also used when a class mixes kinds, since
    /// Karpenter ANDs requirements on different keys).
    Types(Vec<String>),
}

impl GpuSelector {
    pub fn key(&self) -> &'static str {
        match self {
            GpuSelector::Names(_) => "karpenter.k8s.aws/instance-gpu-name",
            GpuSelector::Families(_) => "karpenter.k8s.aws/instance-family",
            GpuSelector::Types(_) => "node.kubernetes.io/instance-type",
        }
    }
    pub fn values(&self) -> &[String] {
        match self {
            GpuSelector::Names(v) | GpuSelector::Families(v) | GpuSelector::Types(v) => v,
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClassSpec {
    pub name: String,
    pub class_type: ClassType,
    pub selector: GpuSelector,
    pub capacity: Capacity,
    pub max_gpus: u32,
    pub tier: Tier,
    pub consolidate_after: String,
    pub expire_after: String,
    pub termination_grace_period: String,
    pub disruption_budget: String,
    pub root_volume: String,
    pub data_volume: String,
    /// Catalog instances the selector admits (never empty).
    pub instances: Vec<&'static Instance>,
    /// How its GPUs are shared, if they are.
    pub sharing: Option<SharingSpec>,
}

/// A class's GPU sharing, validated against its instance types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharingSpec {
    /// Every GPU cut into MIG instances of one profile.
    Mig {
        /// `1g.10gb`.
        profile: String,
        strategy: MigStrategyChoice,
        /// Instances per GPU: the fewest over the class's GPU models.
        per_gpu: u32,
    },
    /// Pods take turns on each GPU.
    TimeSlicing { replicas: u32 },
    /// Memory and compute split evenly among the pods of a GPU.
    Mps { replicas: u32 },
}

impl SharingSpec {
    /// The resource pods of the class ask for.
    pub fn resource(&self) -> String {
        match self {
            SharingSpec::Mig {
                profile,
                strategy: MigStrategyChoice::Mixed,
                ..
            } => format!("nvidia.com/mig-{profile}"),
            _ => "nvidia.com/gpu".to_string(),
        }
    }
    /// How many of [`Self::resource`] one GPU is advertised as.
    pub fn per_gpu(&self) -> u32 {
        match self {
            SharingSpec::Mig { per_gpu, .. } => *per_gpu,
            SharingSpec::TimeSlicing { replicas } | SharingSpec::Mps { replicas } => *replicas,
        }
    }
    /// The value of the class's sharing taint and its short name: `mig-1g.10gb`,
    /// `time-slicing`, `mps`.
    pub fn name(&self) -> String {
        match self {
            SharingSpec::Mig { profile, .. } => format!("mig-{profile}"),
            SharingSpec::TimeSlicing { .. } => "time-slicing".to_string(),
            SharingSpec::Mps { .. } => "mps".to_string(),
        }
    }
}

impl ClassSpec {
    /// Most GPUs one node of this class can have.
    pub fn max_gpus_per_node(&self) -> u32 {
        self.instances
            .iter()
            .map(|i| i.gpu_count)
            .max()
            .unwrap_or(0)
    }
    /// vCPUs per GPU on the leanest instance of the class (so a quota in these units never asks
    /// for more than the nodes bring).
    pub fn cpu_per_gpu(&self) -> u32 {
        self.instances
            .iter()
            .filter(|i| i.gpu_count > 0)
            .map(|i| i.vcpu / i.gpu_count)
            .min()
            .unwrap_or(0)
    }
    /// GiB of memory per GPU on the leanest instance of the class.
    pub fn memory_gib_per_gpu(&self) -> u64 {
        self.instances
            .iter()
            .filter(|i| i.gpu_count > 0)
            .map(|i| i.memory_mib / 1024 / u64::from(i.gpu_count))
            .min()
            .unwrap_or(0)
    }
    /// The capacity tiers, one NodePool each: (capacity type, weight).
    pub fn tiers(&self) -> Vec<(&'static str, Option<u32>)> {
        match self.capacity {
            Capacity::Spot => vec![("spot", None)],
            Capacity::OnDemand => vec![("on-demand", None)],
            Capacity::SpotFirst => vec![("spot", Some(100)), ("on-demand", Some(10))],
        }
    }
    /// Training and batch nodes are removed only when empty; the others also when underutilized.
    pub fn consolidation_policy(&self) -> &'static str {
        match self.class_type {
            ClassType::Training | ClassType::Batch => "WhenEmpty",
            ClassType::Inference | ClassType::Development => "WhenEmptyOrUnderutilized",
        }
    }
}

#[derive(Debug, Clone)]
pub struct TeamSpec {
    pub name: String,
    pub namespace: String,
    pub create_namespace: bool,
    /// (class name, guaranteed GPUs), in profile order.
    pub quotas: Vec<(String, u32)>,
}

#[derive(Debug, Clone)]
pub struct JobSpec {
    pub name: String,
    pub team: String,
    pub namespace: String,
    pub class: String,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub gpus_per_worker: u32,
    pub workers: u32,
    pub checkpoint_claim: String,
    pub checkpoint_path: String,
    pub termination_grace_period_seconds: u32,
    pub backoff_limit: u32,
}

/// Numeric values of the priority ladder (PriorityClass and WorkloadPriorityClass alike).
pub fn tier_value(t: Tier) -> i32 {
    match t {
        Tier::Production => 100_000,
        Tier::Training => 10_000,
        Tier::Development => 1_000,
        Tier::BestEffort => 100,
    }
}

pub fn tier_name(t: Tier) -> String {
    format!("gpuops-{}", t.as_str())
}
