//! From a validated [`Platform`] to the objects to render: kind, place, template and the data the
//! template sees. All derived facts (names, quotas, requirements) are computed here, so templates
//! stay plain YAML with holes.

use super::platform::{AmiFamily, ClassSpec, Platform, tier_name, tier_value};
use super::profile::{DevicePlugin, Tier};
use serde_json::{Value, json};

/// Label the pools set on their nodes and the flavors and jobs select.
pub const CLASS_LABEL: &str = "gpuops.dev/class";
pub const TEAM_LABEL: &str = "gpuops.dev/team";
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
/// The taint of a class that shares its GPUs (`mig-1g.10gb`, `time-slicing`, `mps`).
pub const SHARING_TAINT: &str = "gpuops.dev/gpu-sharing";
/// The ConfigMap of device plugin configurations, one per sharing class, for the GPU operator.
pub const PLUGIN_CONFIGS: &str = "gpuops-device-plugin-configs";
pub const GPU_OPERATOR_NAMESPACE: &str = "gpu-operator";

/// A kind of object render produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObjKind {
    PriorityClass,
    WorkloadPriorityClass,
    EC2NodeClass,
    NodePool,
    ResourceFlavor,
    ClusterQueue,
    Namespace,
    ResourceQuota,
    LimitRange,
    LocalQueue,
    Service,
    Job,
    DevicePlugin,
    ConfigMap,
    NodeOverlay,
}

impl ObjKind {
    pub const ALL: [ObjKind; 15] = [
        ObjKind::PriorityClass,
        ObjKind::WorkloadPriorityClass,
        ObjKind::EC2NodeClass,
        ObjKind::NodePool,
        ObjKind::ResourceFlavor,
        ObjKind::ClusterQueue,
        ObjKind::Namespace,
        ObjKind::ResourceQuota,
        ObjKind::LimitRange,
        ObjKind::LocalQueue,
        ObjKind::Service,
        ObjKind::Job,
        ObjKind::DevicePlugin,
        ObjKind::ConfigMap,
        ObjKind::NodeOverlay,
    ];
    pub fn kind(self) -> &'static str {
        match self {
            ObjKind::PriorityClass => "PriorityClass",
            ObjKind::WorkloadPriorityClass => "WorkloadPriorityClass",
            ObjKind::EC2NodeClass => "EC2NodeClass",
            ObjKind::NodePool => "NodePool",
            ObjKind::ResourceFlavor => "ResourceFlavor",
            ObjKind::ClusterQueue => "ClusterQueue",
            ObjKind::Namespace => "Namespace",
            ObjKind::ResourceQuota => "ResourceQuota",
            ObjKind::LimitRange => "LimitRange",
            ObjKind::LocalQueue => "LocalQueue",
            ObjKind::Service => "Service",
            ObjKind::Job => "Job",
            ObjKind::DevicePlugin => "DaemonSet",
            ObjKind::ConfigMap => "ConfigMap",
            ObjKind::NodeOverlay => "NodeOverlay",
        }
    }
    pub fn api_version(self) -> &'static str {
        match self {
            ObjKind::PriorityClass => "scheduling.k8s.io/v1",
            ObjKind::WorkloadPriorityClass
            | ObjKind::ResourceFlavor
            | ObjKind::ClusterQueue
            | ObjKind::LocalQueue => "kueue.x-k8s.io/v1beta2",
            ObjKind::EC2NodeClass => "karpenter.k8s.aws/v1",
            ObjKind::NodePool => "karpenter.sh/v1",
            ObjKind::NodeOverlay => "karpenter.sh/v1alpha1",
            ObjKind::Namespace
            | ObjKind::ResourceQuota
            | ObjKind::LimitRange
            | ObjKind::Service
            | ObjKind::ConfigMap => "v1",
            ObjKind::Job => "batch/v1",
            ObjKind::DevicePlugin => "apps/v1",
        }
    }
    /// Directory in the output: the kind's plural, lower case.
    pub fn plural(self) -> &'static str {
        match self {
            ObjKind::PriorityClass => "priorityclasses",
            ObjKind::WorkloadPriorityClass => "workloadpriorityclasses",
            ObjKind::EC2NodeClass => "ec2nodeclasses",
            ObjKind::NodePool => "nodepools",
            ObjKind::ResourceFlavor => "resourceflavors",
            ObjKind::ClusterQueue => "clusterqueues",
            ObjKind::Namespace => "namespaces",
            ObjKind::ResourceQuota => "resourcequotas",
            ObjKind::LimitRange => "limitranges",
            ObjKind::LocalQueue => "localqueues",
            ObjKind::Service => "services",
            ObjKind::Job => "jobs",
            ObjKind::DevicePlugin => "daemonsets",
            ObjKind::ConfigMap => "configmaps",
            ObjKind::NodeOverlay => "nodeoverlays",
        }
    }
    /// The template file that renders this kind.
    pub fn template(self) -> &'static str {
        match self {
            ObjKind::PriorityClass => "priorityclass.yaml.j2",
            ObjKind::WorkloadPriorityClass => "workloadpriorityclass.yaml.j2",
            ObjKind::EC2NodeClass => "ec2nodeclass.yaml.j2",
            ObjKind::NodePool => "nodepool.yaml.j2",
            ObjKind::ResourceFlavor => "resourceflavor.yaml.j2",
            ObjKind::ClusterQueue => "clusterqueue.yaml.j2",
            ObjKind::Namespace => "namespace.yaml.j2",
            ObjKind::ResourceQuota => "resourcequota.yaml.j2",
            ObjKind::LimitRange => "limitrange.yaml.j2",
            ObjKind::LocalQueue => "localqueue.yaml.j2",
            ObjKind::Service => "service.yaml.j2",
            ObjKind::Job => "job.yaml.j2",
            ObjKind::DevicePlugin => "deviceplugin.yaml.j2",
            ObjKind::ConfigMap => "devicepluginconfig.yaml.j2",
            ObjKind::NodeOverlay => "nodeoverlay.yaml.j2",
        }
    }
}

/// One object to render.
#[derive(Clone, Debug)]
pub struct Object {
    pub kind: ObjKind,
    pub namespace: Option<String>,
    pub name: String,
    /// What the template sees.
    pub ctx: Value,
}

impl Object {
    /// `deploy/<kind-plural>/<name>.yaml`, or `<kind-plural>/<namespace>.<name>.yaml` for
    /// namespaced objects (names are DNS labels, so the dot cannot be ambiguous).
    pub fn path(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}.{}.yaml", self.kind.plural(), self.name),
            None => format!("{}/{}.yaml", self.kind.plural(), self.name),
        }
    }
}

fn common_labels() -> Value {
    json!({ "app.kubernetes.io/managed-by": "gpuops" })
}

pub(super) fn with_labels(extra: &[(&str, &str)]) -> Value {
    let mut l = common_labels();
    if let Some(m) = l.as_object_mut() {
        for (k, v) in extra {
            m.insert((*k).to_string(), json!(v));
        }
    }
    l
}

/// NoSchedule taint on every GPU pool.
fn gpu_taint() -> Value {
    json!({ "key": GPU_RESOURCE, "effect": "NoSchedule" })
}

/// Adds `n` to the entry of `key` with `f` (a sum or a maximum), keeping first-seen order.
fn add_up(v: &mut Vec<(String, u64)>, key: &str, n: u64, f: fn(u64, u64) -> u64) {
    match v.iter_mut().find(|(k, _)| k == key) {
        Some((_, have)) => *have = f(*have, n),
        None => v.push((key.to_string(), n)),
    }
}

/// The taints of a class's NodePools; the device plugin tolerates the union, so it reaches every
/// pool by construction. A class that shares its GPUs has a taint of its own, so that only pods
/// meant for shared GPUs land there.
fn pool_taints(c: &ClassSpec) -> Vec<Value> {
    let mut t = vec![gpu_taint()];
    if let Some(s) = &c.sharing {
        t.push(json!({ "key": SHARING_TAINT, "value": s.name(), "effect": "NoSchedule" }));
    }
    t
}

/// The tolerations of a class's pods: one per taint of its pools.
fn class_tolerations(c: &ClassSpec) -> Vec<Value> {
    pool_taints(c).iter().map(tolerate).collect()
}

/// The resource a class's pods ask for, and how many of it one GPU is.
fn gpu_resource(c: &ClassSpec) -> (String, u32) {
    match &c.sharing {
        Some(s) => (s.resource(), s.per_gpu()),
        None => (GPU_RESOURCE.to_string(), 1),
    }
}

/// A toleration for exactly one taint (any value).
pub(super) fn tolerate(taint: &Value) -> Value {
    json!({ "key": taint["key"], "operator": "Exists", "effect": taint["effect"] })
}

/// Image of the NVIDIA device plugin: a pinned release, so a GitOps sync never changes it.
pub const NVIDIA_DEVICE_PLUGIN_IMAGE: &str = "nvcr.io/nvidia/k8s-device-plugin:v0.19.3";

fn pool_name(class: &str, capacity: &str) -> String {
    format!("{class}-{capacity}")
}

pub fn cluster_queue_name(team: &str, class: &str) -> String {
    format!("{team}-{class}")
}

/// Everything the platform renders to, in a stable order.
pub fn objects(p: &Platform) -> Vec<Object> {
    let mut out = Vec::new();
    let cluster = &p.cluster;
    for t in Tier::ALL {
        let base = json!({
            "name": tier_name(t),
            "tier": t.as_str(),
            "value": tier_value(t),
            "description": tier_description(t),
            "preemption_policy": if t == Tier::BestEffort { "Never" } else { "PreemptLowerPriority" },
            "labels": common_labels(),
        });
        for kind in [ObjKind::PriorityClass, ObjKind::WorkloadPriorityClass] {
            out.push(Object {
                kind,
                namespace: None,
                name: tier_name(t),
                ctx: json!({ "priority": base }),
            });
        }
    }
    for c in &p.classes {
        let labels = with_labels(&[(CLASS_LABEL, &c.name)]);
        let mut devices = vec![json!({
            "device": "/dev/xvda", "size": c.root_volume, "root": true,
        })];
        devices.push(json!({ "device": "/dev/xvdb", "size": c.data_volume, "root": false }));
        out.push(Object {
            kind: ObjKind::EC2NodeClass,
            namespace: None,
            name: c.name.clone(),
            ctx: json!({
                "labels": labels,
                "nodeclass": {
                    "name": c.name,
                    "class": c.name,
                    "ami_alias": cluster.ami_alias,
                    "ami_family": match cluster.ami_family { AmiFamily::Al2023 => "al2023", AmiFamily::Bottlerocket => "bottlerocket" },
                    "role": cluster.node_role,
                    "discovery_tag": cluster.discovery_tag,
                    "cluster": cluster.name,
                    "block_devices": devices,
                    "tags": { CLASS_LABEL: c.name, "gpuops.dev/cluster": cluster.name },
                },
            }),
        });
        for (capacity, weight) in c.tiers() {
            let name = pool_name(&c.name, capacity);
            out.push(Object {
                kind: ObjKind::NodePool,
                namespace: None,
                name: name.clone(),
                ctx: json!({
                    "labels": labels,
                    "pool": pool_ctx(c, &name, capacity, weight, &cluster.zones),
                }),
            });
        }
        out.push(Object {
            kind: ObjKind::ResourceFlavor,
            namespace: None,
            name: c.name.clone(),
            ctx: json!({
                "labels": labels,
                "flavor": {
                    "name": c.name,
                    "node_labels": { CLASS_LABEL: c.name },
                    "node_taints": pool_taints(c),
                    "tolerations": class_tolerations(c),
                },
            }),
        });
    }
    for t in &p.teams {
        let team_labels = with_labels(&[(TEAM_LABEL, &t.name)]);
        let classes: Vec<&ClassSpec> = t
            .quotas
            .iter()
            .filter_map(|(cn, _)| p.classes.iter().find(|c| &c.name == cn))
            .collect();
        for (cn, q) in &t.quotas {
            let Some(c) = p.classes.iter().find(|c| &c.name == cn) else {
                continue;
            };
            let cq = cluster_queue_name(&t.name, cn);
            let labels = with_labels(&[(TEAM_LABEL, &t.name), (CLASS_LABEL, cn)]);
            out.push(Object {
                kind: ObjKind::ClusterQueue,
                namespace: None,
                name: cq.clone(),
                ctx: json!({
                    "labels": labels,
                    "queue": {
                        "name": cq,
                        "cohort": cn,
                        "namespace": t.namespace,
                        "flavor": cn,
                        "gpu_resource": gpu_resource(c).0,
                        "gpus": u64::from(*q) * u64::from(gpu_resource(c).1),
                        "cpu": u64::from(*q) * u64::from(c.cpu_per_gpu()),
                        "memory": format!("{}Gi", u64::from(*q) * c.memory_gib_per_gpu()),
                        "within_cluster_queue": "LowerPriority",
                        "reclaim_within_cohort": "Any",
                    },
                }),
            });
            out.push(Object {
                kind: ObjKind::LocalQueue,
                namespace: Some(t.namespace.clone()),
                name: cn.clone(),
                ctx: json!({
                    "labels": labels,
                    "queue": { "name": cn, "namespace": t.namespace, "cluster_queue": cq },
                }),
            });
        }
        if t.create_namespace {
            out.push(Object {
                kind: ObjKind::Namespace,
                namespace: None,
                name: t.namespace.clone(),
                ctx: json!({ "labels": team_labels, "namespace": { "name": t.namespace, "team": t.name } }),
            });
        }
        // Kueue admits at most the class ceiling per class (own quota plus borrowing), so the
        // backstop quota for pods that bypass Kueue is the sum of those ceilings, per resource
        // (a shared GPU counts as what it is advertised as).
        let mut hard: Vec<(String, u64)> = vec![(GPU_RESOURCE.to_string(), 0)];
        let mut per_container: Vec<(String, u64)> = vec![(GPU_RESOURCE.to_string(), 0)];
        for c in &classes {
            let (resource, per_gpu) = gpu_resource(c);
            let per_gpu = u64::from(per_gpu);
            add_up(
                &mut hard,
                &resource,
                u64::from(c.max_gpus) * per_gpu,
                |a, b| a + b,
            );
            add_up(
                &mut per_container,
                &resource,
                u64::from(c.max_gpus_per_node()) * per_gpu,
                u64::max,
            );
        }
        let hard: serde_json::Map<String, Value> = hard
            .into_iter()
            .map(|(r, n)| (format!("requests.{r}"), json!(n.to_string())))
            .collect();
        let per_container: Vec<Value> = per_container
            .into_iter()
            .map(|(r, n)| json!({ "resource": r, "max": n.to_string() }))
            .collect();
        out.push(Object {
            kind: ObjKind::ResourceQuota,
            namespace: Some(t.namespace.clone()),
            name: "gpuops-gpu".into(),
            ctx: json!({
                "labels": team_labels,
                "quota": { "name": "gpuops-gpu", "namespace": t.namespace, "hard": hard },
            }),
        });
        out.push(Object {
            kind: ObjKind::LimitRange,
            namespace: Some(t.namespace.clone()),
            name: "gpuops-gpu".into(),
            ctx: json!({
                "labels": team_labels,
                "limits": { "name": "gpuops-gpu", "namespace": t.namespace, "resources": per_container },
            }),
        });
    }
    for j in &p.jobs {
        let Some(c) = p.classes.iter().find(|c| c.name == j.class) else {
            continue;
        };
        let labels = with_labels(&[(TEAM_LABEL, &j.team), (CLASS_LABEL, &j.class)]);
        let multi = j.workers > 1;
        // Ranks on several nodes talk over EFA when every instance that fits a worker has it.
        let fitting: Vec<u32> = c
            .instances
            .iter()
            .filter(|i| i.gpu_count >= j.gpus_per_worker)
            .map(|i| i.efa)
            .collect();
        let efa = fitting.iter().copied().min().filter(|&n| multi && n > 0);
        let mut env: Vec<Value> = Vec::new();
        if multi {
            let generated = [
                ("MASTER_ADDR", format!("{}-0.{}", j.name, j.name)),
                ("MASTER_PORT", "29500".to_string()),
                ("NNODES", j.workers.to_string()),
                ("NPROC_PER_NODE", j.gpus_per_worker.to_string()),
            ];
            for (k, v) in generated {
                if !j.env.iter().any(|(ek, _)| ek == k) {
                    env.push(json!({ "name": k, "value": v }));
                }
            }
        }
        for (k, v) in &j.env {
            env.push(json!({ "name": k, "value": v }));
        }
        out.push(Object {
            kind: ObjKind::Job,
            namespace: Some(j.namespace.clone()),
            name: j.name.clone(),
            ctx: json!({
                "labels": labels,
                "job": {
                    "name": j.name,
                    "namespace": j.namespace,
                    "team": j.team,
                    "class": j.class,
                    "queue": j.class,
                    "workload_priority_class": tier_name(c.tier),
                    "priority_class": tier_name(c.tier),
                    "image": j.image,
                    "command": j.command,
                    "args": j.args,
                    "env": env,
                    "gpu_resource": gpu_resource(c).0,
                    "gpus": j.gpus_per_worker,
                    "efa": efa,
                    "workers": j.workers,
                    "indexed": multi,
                    "node_rank_env": multi && !j.env.iter().any(|(k, _)| k == "NODE_RANK"),
                    "service": if multi { Value::from(j.name.clone()) } else { Value::Null },
                    "checkpoint_claim": j.checkpoint_claim,
                    "checkpoint_path": j.checkpoint_path,
                    "termination_grace_period_seconds": j.termination_grace_period_seconds,
                    "backoff_limit": j.backoff_limit,
                    "node_selector": { CLASS_LABEL: j.class },
                    "tolerations": class_tolerations(c),
                },
            }),
        });
        if multi {
            out.push(Object {
                kind: ObjKind::Service,
                namespace: Some(j.namespace.clone()),
                name: j.name.clone(),
                ctx: json!({
                    "labels": labels,
                    "service": { "name": j.name, "namespace": j.namespace, "job": j.name, "port": 29500 },
                }),
            });
        }
    }
    if let Some(dp) = p.device_plugin {
        out.push(device_plugin(p, dp));
    }
    out.extend(super::sharing::objects(p));
    out.sort_by_key(Object::path);
    out
}

/// The device-plugin DaemonSet: on the nodes of every class (node affinity on the class label
/// all pools set), tolerating every taint those pools carry.
fn device_plugin(p: &Platform, dp: DevicePlugin) -> Object {
    let (name, image, resource) = match dp {
        DevicePlugin::Nvidia => (
            "nvidia-device-plugin",
            NVIDIA_DEVICE_PLUGIN_IMAGE,
            GPU_RESOURCE,
        ),
    };
    let mut classes: Vec<&str> = p.classes.iter().map(|c| c.name.as_str()).collect();
    classes.sort_unstable();
    let mut tolerations: Vec<Value> = Vec::new();
    for c in &p.classes {
        for t in pool_taints(c) {
            let t = tolerate(&t);
            if !tolerations.contains(&t) {
                tolerations.push(t);
            }
        }
    }
    let namespace = "kube-system";
    Object {
        kind: ObjKind::DevicePlugin,
        namespace: Some(namespace.into()),
        name: name.into(),
        ctx: json!({
            "labels": with_labels(&[("app.kubernetes.io/name", name)]),
            "plugin": {
                "name": name,
                "namespace": namespace,
                "image": image,
                "resource": resource,
                "class_label": CLASS_LABEL,
                "classes": classes,
                "tolerations": tolerations,
                "priority_class": "system-node-critical",
                "requests": { "cpu": "50m", "memory": "64Mi" },
                "limits": { "cpu": "500m", "memory": "256Mi" },
            },
        }),
    }
}

fn tier_description(t: Tier) -> &'static str {
    match t {
        Tier::Production => "Production inference: preempts every other GPU tier.",
        Tier::Training => "Training jobs: preempt development and best-effort work.",
        Tier::Development => "Notebooks and interactive development.",
        Tier::BestEffort => "Best-effort batch work: runs on spare GPUs and never preempts.",
    }
}

fn pool_ctx(
    c: &ClassSpec,
    name: &str,
    capacity: &str,
    weight: Option<u32>,
    zones: &[String],
) -> Value {
    let requirements = vec![
        json!({ "key": c.selector.key(), "operator": "In", "values": c.selector.values() }),
        json!({ "key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity] }),
        json!({ "key": "topology.kubernetes.io/zone", "operator": "In", "values": zones }),
    ];
    json!({
        "name": name,
        "class": c.name,
        "class_type": c.class_type.as_str(),
        "capacity_type": capacity,
        "weight": weight,
        "node_class": c.name,
        "node_labels": super::sharing::node_labels(c),
        "taints": pool_taints(c),
        "requirements": requirements,
        "expire_after": c.expire_after,
        "termination_grace_period": c.termination_grace_period,
        "gpu_limit": c.max_gpus,
        "consolidation_policy": c.consolidation_policy(),
        "consolidate_after": c.consolidate_after,
        "budget_nodes": c.disruption_budget,
    })
}
