//! The profile a platform team writes: `apiVersion: gpuops.dev/v1alpha1`, `kind: Platform`.
//!
//! These types are the wire format (serde) and the JSON schema (schemars) at once. Scalars that a
//! validation message may point at are [`Spanned`]; `#[schemars(with = …)]` gives the schema the
//! plain type.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

/// The only profile `apiVersion` this gpuops reads.
pub const API_VERSION: &str = "gpuops.dev/v1alpha1";

/// A GPU platform on one EKS cluster: node pools per workload class, teams with GPU quotas, and
/// training jobs. `gpuops render` turns it into Karpenter, Kueue and Kubernetes manifests.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "gpuops Platform profile")]
pub struct Profile {
    /// Always `gpuops.dev/v1alpha1`.
    pub api_version: ApiVersion,
    /// Always `Platform`.
    pub kind: Kind,
    pub cluster: Cluster,
    /// Render a device-plugin DaemonSet that runs on the nodes of every class, so their GPUs
    /// register with the kubelet: `nvidia`. Off by default (the plugin often comes from the GPU
    /// operator or an add-on). Needed on AL2023, whose NVIDIA AMIs ship the driver but not the
    /// plugin; Bottlerocket's NVIDIA variants run it on the host, so it is refused there.
    #[serde(default)]
    #[schemars(with = "Option<DevicePlugin>")]
    pub device_plugin: Option<Spanned<DevicePlugin>>,
    /// Workload classes. Each becomes an EC2NodeClass, one NodePool per capacity tier and a
    /// Kueue ResourceFlavor.
    #[schemars(with = "Vec<Class>")]
    pub classes: Spanned<Vec<Class>>,
    /// Teams: a namespace each, with a GPU quota per class they may use.
    #[serde(default)]
    pub teams: Vec<Team>,
    /// Training jobs (batch/v1 Jobs queued through Kueue).
    #[serde(default)]
    pub jobs: Vec<Job>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum ApiVersion {
    /// The first version of the profile format.
    #[serde(rename = "gpuops.dev/v1alpha1")]
    V1alpha1,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum Kind {
    /// A GPU platform profile.
    Platform,
}

/// Facts about the cluster the manifests are for.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Cluster {
    /// EKS cluster name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// AWS region, e.g. `us-west-2`.
    #[schemars(with = "String")]
    pub region: Spanned<String>,
    /// Availability zones GPU nodes may launch in, e.g. `[us-west-2a, us-west-2b]`.
    #[schemars(with = "Vec<String>")]
    pub zones: Spanned<Vec<Spanned<String>>>,
    /// IAM role name for the nodes Karpenter launches (EC2NodeClass `spec.role`).
    #[schemars(with = "String")]
    pub node_role: Spanned<String>,
    /// Value of the `karpenter.sh/discovery` tag on the cluster's subnets and security groups
    /// (default: the cluster name).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub discovery_tag: Option<Spanned<String>>,
    /// Pinned AMI alias: `bottlerocket@v1.42.0` or `al2023@v20250715`. `@latest` is refused:
    /// every new AMI release would replace every GPU node.
    #[schemars(with = "String")]
    pub ami_alias: Spanned<String>,
}

/// What kind of work a class runs; it decides consolidation and the default priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClassType {
    /// Long-running jobs that checkpoint: nodes are only consolidated when empty.
    Training,
    /// Serving: nodes are consolidated when empty or underutilized.
    Inference,
    /// Notebooks and interactive work that scales to zero: consolidated when empty or underutilized.
    Development,
    /// Batch jobs: nodes are only consolidated when empty.
    Batch,
}

impl ClassType {
    pub fn as_str(self) -> &'static str {
        match self {
            ClassType::Training => "training",
            ClassType::Inference => "inference",
            ClassType::Development => "development",
            ClassType::Batch => "batch",
        }
    }
}

/// Which device plugin to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DevicePlugin {
    /// The NVIDIA device plugin: advertises `nvidia.com/gpu` on every class's nodes.
    Nvidia,
}

/// How the class buys capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Capacity {
    /// Spot only.
    Spot,
    /// On-demand only.
    OnDemand,
    /// A spot NodePool weighted above an on-demand fallback NodePool.
    SpotFirst,
}

impl Capacity {
    pub fn as_str(self) -> &'static str {
        match self {
            Capacity::Spot => "spot",
            Capacity::OnDemand => "on-demand",
            Capacity::SpotFirst => "spot-first",
        }
    }
    pub fn uses_spot(self) -> bool {
        matches!(self, Capacity::Spot | Capacity::SpotFirst)
    }
}

/// A rung of the priority ladder (PriorityClass and Kueue WorkloadPriorityClass of the same name,
/// prefixed `gpuops-`): production > training > development > best-effort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Production inference (highest).
    Production,
    /// Training jobs.
    Training,
    /// Notebooks and interactive development.
    Development,
    /// Spare-capacity work that never preempts anything (lowest).
    BestEffort,
}

impl Tier {
    pub const ALL: [Tier; 4] = [
        Tier::Production,
        Tier::Training,
        Tier::Development,
        Tier::BestEffort,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Production => "production",
            Tier::Training => "training",
            Tier::Development => "development",
            Tier::BestEffort => "best-effort",
        }
    }
}

/// A workload class: which GPUs, bought how, how many at most, and how its nodes are disrupted.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Class {
    /// Class name (a DNS label); names the NodePools, EC2NodeClass, ResourceFlavor and LocalQueues.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// training, inference, development or batch.
    #[serde(rename = "type")]
    pub class_type: ClassType,
    /// GPU kinds: Karpenter GPU names (`a100`, `h100`, `l4`, `a10g`, …), instance families
    /// (`p5`, `g6e`) or instance types (`p5.48xlarge`).
    #[schemars(with = "Vec<String>")]
    pub gpus: Spanned<Vec<Spanned<String>>>,
    /// spot, on-demand, or spot-first (a spot pool weighted above an on-demand fallback pool).
    pub capacity: Capacity,
    /// Most GPUs the class's nodes may have at once: the NodePool `nvidia.com/gpu` limit and the
    /// ceiling for the teams' quotas.
    #[schemars(with = "u32")]
    pub max_gpus: Spanned<u32>,
    /// Priority tier (default: production for inference, training for training, development for
    /// development, best-effort for batch).
    #[serde(default)]
    pub priority: Option<Tier>,
    /// How long a node must be empty (or underutilized) before Karpenter removes it, e.g. `10m`,
    /// or `Never` (default: 10m; 5m for batch).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub consolidate_after: Option<Spanned<String>>,
    /// Node lifetime before Karpenter replaces it, e.g. `720h`, or `Never` (default 720h).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub expire_after: Option<Spanned<String>>,
    /// Longest a draining node waits for its pods, e.g. `24h` (default: 24h for training and
    /// batch, 1h otherwise).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub termination_grace_period: Option<Spanned<String>>,
    /// Most nodes Karpenter may disrupt at once: a count (`"2"`) or a percentage (`"10%"`, the
    /// default).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub disruption_budget: Option<Spanned<String>>,
    /// Root volume size, e.g. `50Gi` (default: 20Gi on Bottlerocket, where it holds only the OS;
    /// 100Gi on AL2023, where it also holds container images). Encrypted gp3.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub root_volume: Option<Spanned<String>>,
    /// Data volume size for container images and scratch, e.g. `500Gi` (default 200Gi).
    /// Encrypted gp3.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub data_volume: Option<Spanned<String>>,
    /// Share each GPU of the class among pods: `{mig: 1g.10gb}` cuts every GPU into MIG
    /// instances of one profile, `{timeSlicing: {replicas: 4}}` or `{mps: {replicas: 4}}` lets
    /// that many pods share a GPU (inference and development classes only: no isolation). The
    /// class's NodePools get the NVIDIA GPU operator's node labels and a taint of their own;
    /// needs AL2023 nodes and the GPU operator reading the rendered device plugin ConfigMap.
    #[serde(default)]
    #[schemars(with = "Option<Sharing>")]
    pub sharing: Option<Spanned<Sharing>>,
}

/// How a class shares its GPUs: exactly one of `mig`, `timeSlicing` and `mps`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Sharing {
    /// A MIG profile every GPU is cut into, as many instances as fit (`1g.10gb`: seven on an
    /// 80 GB A100 or H100). The class keeps only instance types whose GPUs have it.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub mig: Option<Spanned<String>>,
    /// How the device plugin advertises the MIG instances: `single` (default: pods ask for
    /// `nvidia.com/gpu`, one instance each) or `mixed` (they ask for `nvidia.com/mig-1g.10gb`;
    /// Karpenter then needs the rendered NodeOverlays, an alpha feature gate). One strategy for
    /// every MIG class of the cluster.
    #[serde(default)]
    pub strategy: Option<MigStrategyChoice>,
    /// CUDA time-slicing: pods take turns on each GPU, without memory or fault isolation.
    #[serde(default)]
    pub time_slicing: Option<Replicas>,
    /// CUDA MPS: memory and compute split evenly among the pods of a GPU.
    #[serde(default)]
    pub mps: Option<Replicas>,
}

/// How many pods share one GPU.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Replicas {
    /// Pods per GPU (at least 2).
    #[schemars(with = "u32")]
    pub replicas: Spanned<u32>,
}

/// The device plugin's MIG strategy a MIG class renders for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MigStrategyChoice {
    /// MIG instances are advertised as `nvidia.com/gpu`.
    Single,
    /// Each profile is its own resource, `nvidia.com/mig-<profile>`.
    Mixed,
}

/// A team: a namespace and its guaranteed GPUs per class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Team {
    /// Team name (a DNS label).
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Namespace the team's workloads run in (default: the team name).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// Render the Namespace object (default true; false when it is managed elsewhere).
    #[serde(default = "yes")]
    pub create_namespace: bool,
    /// Guaranteed GPUs per class, e.g. `{training: 16, development: 4}`. The classes listed are
    /// the ones the team may use; unused quota in a class may be borrowed by the other teams.
    #[schemars(with = "BTreeMap<String, u32>")]
    pub gpu_quota: SpannedMap<u32>,
}

fn yes() -> bool {
    true
}

/// A training job: a batch/v1 Job (Indexed when it has more than one worker), queued by Kueue.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Job {
    /// Job name (a DNS label).
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The team that runs it (its namespace and queues are used).
    #[schemars(with = "String")]
    pub team: Spanned<String>,
    /// The class it runs on (a training or batch class); the team needs a quota for it.
    #[schemars(with = "String")]
    pub class: Spanned<String>,
    /// Container image.
    #[schemars(with = "String")]
    pub image: Spanned<String>,
    /// Container command (default: the image's entrypoint).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub command: Vec<Spanned<String>>,
    /// Container arguments; they should point the trainer at the checkpoint path, e.g.
    /// `--checkpoint-dir=/checkpoints`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub args: Vec<Spanned<String>>,
    /// Extra environment variables.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub env: SpannedMap<String>,
    /// GPUs each worker pod gets (a whole number; at most what one instance of the class has).
    #[schemars(with = "u32")]
    pub gpus_per_worker: Spanned<u32>,
    /// Worker pods (default 1). More than one makes an Indexed Job with a headless Service.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub workers: Option<Spanned<u32>>,
    pub checkpoint: Checkpoint,
    /// Seconds a worker gets to write a checkpoint when its node goes away (default 90). Spot
    /// gives a 2-minute notice, so on spot classes it must be between 30 and 120.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub termination_grace_period_seconds: Option<Spanned<u32>>,
    /// Failed pods tolerated before the Job fails (default 3). Pods lost to node disruption
    /// (spot reclaim) do not count.
    #[serde(default)]
    pub backoff_limit: Option<u32>,
}

/// Where checkpoints go: a PersistentVolumeClaim mounted into every worker.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Checkpoint {
    /// Name of an existing PersistentVolumeClaim in the team's namespace.
    #[schemars(with = "String")]
    pub claim: Spanned<String>,
    /// Mount path; the job's args should point there.
    #[schemars(with = "String")]
    pub path: Spanned<String>,
}

/// A mapping whose keys and values keep their places, in the order written.
#[derive(Debug, Default)]
pub struct SpannedMap<V>(pub Vec<(Spanned<String>, Spanned<V>)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SpannedMap<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = SpannedMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<Spanned<String>>()? {
                    let v = m.next_value::<Spanned<V>>()?;
                    out.push((k, v));
                }
                Ok(SpannedMap(out))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(SpannedMap(Vec::new()))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}
