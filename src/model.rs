//! Typed views over parsed documents. A view keeps pointers to its nodes so any field can be
//! reported at its exact span; unknown or malformed fields never break a view, they are just absent.

use crate::diag::{FileId, Loc, ObjectRef};
use crate::yaml::Node;

mod kueue;
pub use kueue::*;

/// Any Kubernetes object (a document with `apiVersion` and `kind`).
#[derive(Debug)]
pub struct Object<'a> {
    pub file: FileId,
    pub root: Node<'a>,
    pub api_version: &'a str,
    /// API group (`""` for the core group).
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub namespace: Option<&'a str>,
}

impl<'a> Object<'a> {
    /// Reads an object from a document root; `None` when it is not a Kubernetes object.
    pub fn from_node(file: FileId, root: Node<'a>) -> Option<Self> {
        let api_version = root.get("apiVersion")?.as_str()?;
        let kind = root.get("kind")?.as_str()?;
        if api_version.is_empty() || kind.is_empty() {
            return None;
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let meta = root.get("metadata");
        let text = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(|n| n.as_str())
                .filter(|s| !s.is_empty())
        };
        Some(Object {
            file,
            root,
            api_version,
            group,
            version,
            kind,
            name: text("name").or_else(|| text("generateName")),
            namespace: text("namespace"),
        })
    }

    pub fn loc(&self, node: Node<'_>) -> Loc {
        Loc {
            file: self.file,
            span: node.span(),
        }
    }
    pub fn metadata(&self) -> Option<Node<'a>> {
        self.root.get("metadata")
    }
    pub fn spec(&self) -> Option<Node<'a>> {
        self.root.get("spec")
    }
    pub fn name_or_unnamed(&self) -> &'a str {
        self.name.unwrap_or("<unnamed>")
    }
    /// The most specific node that stands for the object as a whole: its name, else its kind.
    pub fn anchor(&self) -> Node<'a> {
        self.metadata()
            .and_then(|m| m.get("name"))
            .or_else(|| self.root.get("kind"))
            .unwrap_or(self.root)
    }
    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
    pub fn labels(&self) -> Option<Node<'a>> {
        self.metadata().and_then(|m| m.get("labels"))
    }
    pub fn annotations(&self) -> Option<Node<'a>> {
        self.metadata().and_then(|m| m.get("annotations"))
    }
    pub fn label(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.labels()?.entry(key)
    }
    pub fn annotation(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.annotations()?.entry(key)
    }
    pub fn obj_ref(&self) -> ObjectRef {
        ObjectRef {
            kind: self.kind.to_string(),
            namespace: self.namespace.map(str::to_string),
            name: self.name.map(str::to_string),
        }
    }
    /// `Kind/name` or `Kind/namespace/name` for messages.
    pub fn describe(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{} {}/{}", self.kind, ns, self.name_or_unnamed()),
            None => format!("{} {}", self.kind, self.name_or_unnamed()),
        }
    }
}

/// Whether a label selector (`matchLabels` + `matchExpressions`) selects pods with `labels`.
pub fn selects(selector: Node<'_>, labels: Option<Node<'_>>) -> bool {
    let value = |k: &str| labels.and_then(|l| l.get(k)).and_then(Node::as_str);
    let labels_ok = selector
        .get("matchLabels")
        .into_iter()
        .flat_map(|m| m.entries())
        .all(|(k, _, v)| v.as_str().is_some_and(|v| value(k) == Some(v)));
    let exprs_ok = selector
        .get("matchExpressions")
        .into_iter()
        .flat_map(|m| m.items())
        .all(|e| {
            let Some(key) = e.get("key").and_then(Node::as_str) else {
                return false;
            };
            let values: Vec<&str> = e
                .get("values")
                .into_iter()
                .flat_map(|v| v.items())
                .filter_map(Node::as_str)
                .collect();
            let v = value(key);
            match e.get("operator").and_then(Node::as_str) {
                Some("In") => v.is_some_and(|v| values.contains(&v)),
                Some("NotIn") => !v.is_some_and(|v| values.contains(&v)),
                Some("Exists") => v.is_some(),
                Some("DoesNotExist") => v.is_none(),
                _ => false,
            }
        });
    labels_ok && exprs_ok
}

/// Extended resources that are accelerators or devices: whole units only, never overcommitted.
pub fn is_accelerator_resource(name: &str) -> bool {
    is_gpu_resource(name)
        || name == "vpc.amazonaws.com/efa"
        || name.starts_with("aws.amazon.com/neuron")
        || name == "habana.ai/gaudi"
        || name.starts_with("google.com/tpu")
        || name.starts_with("gpu.intel.com/")
        || name.starts_with("xilinx.com/")
}

/// Resources that put a pod on a GPU (or Neuron/Gaudi) node: what makes a workload a GPU workload.
pub fn is_gpu_resource(name: &str) -> bool {
    name == "nvidia.com/gpu"
        || name.starts_with("nvidia.com/mig-")
        || name.starts_with("nvidia.com/gpu")
        || name == "amd.com/gpu"
        || name.starts_with("aws.amazon.com/neuron")
        || name == "habana.ai/gaudi"
        || name.starts_with("google.com/tpu")
        || name.starts_with("gpu.intel.com/")
}

#[derive(Debug, Clone)]
pub struct Container<'a> {
    pub node: Node<'a>,
    pub name: Option<&'a str>,
    pub init: bool,
    pub requests: Option<Node<'a>>,
    pub limits: Option<Node<'a>>,
    /// Whether requests or limits name a GPU resource: asked by nearly every rule, so read once.
    gpu: bool,
}

impl<'a> Container<'a> {
    /// Accelerator resources named in requests or limits: (name, key node in limits, else requests).
    pub fn accelerators(&self) -> Vec<(&'a str, Node<'a>)> {
        let mut out: Vec<(&'a str, Node<'a>)> = Vec::new();
        for m in [self.limits, self.requests].into_iter().flatten() {
            for (k, kn, _) in m.entries() {
                if is_accelerator_resource(k) && !out.iter().any(|(n, _)| *n == k) {
                    out.push((k, kn));
                }
            }
        }
        out
    }
    /// GPU count this container asks for (limit, else request), when it is a whole number.
    pub fn gpu_count(&self) -> u64 {
        if !self.gpu {
            return 0;
        }
        let whole = |n: Node<'_>| n.as_str().and_then(crate::quantity::whole).unwrap_or(0);
        let mut total = 0;
        // Each resource once: its limit, else its request.
        for (name, _, v) in self.limits.into_iter().flat_map(|l| l.entries()) {
            if is_gpu_resource(name) {
                total += whole(v).max(0) as u64;
            }
        }
        for (name, _, v) in self.requests.into_iter().flat_map(|r| r.entries()) {
            if is_gpu_resource(name) && self.limits.and_then(|l| l.get(name)).is_none() {
                total += whole(v).max(0) as u64;
            }
        }
        total
    }
    pub fn requests_gpu(&self) -> bool {
        self.gpu
    }
    pub fn volume_mounts(&self) -> impl Iterator<Item = Node<'a>> {
        self.node
            .get("volumeMounts")
            .into_iter()
            .flat_map(|n| n.items())
    }
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        self.node.get(key)
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Toleration<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub operator: &'a str,
    pub value: &'a str,
    pub effect: &'a str,
}

impl<'a> Toleration<'a> {
    pub fn from_node(node: Node<'a>) -> Self {
        let s = |k| node.get(k).and_then(|n| n.as_str()).unwrap_or("");
        Toleration {
            node,
            key: s("key"),
            operator: s("operator"),
            value: s("value"),
            effect: s("effect"),
        }
    }
    /// Kubernetes' ToleratesTaint: effect (empty = any), key (empty + Exists = any), then
    /// Exists or Equal (the default) on the value.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if self.key.is_empty() {
            return self.operator == "Exists";
        }
        if self.key != taint.key {
            return false;
        }
        match self.operator {
            "Exists" => true,
            "Equal" | "" => self.value == taint.value,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Taint<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub value: &'a str,
    pub effect: &'a str,
}

impl<'a> Taint<'a> {
    pub fn from_node(node: Node<'a>) -> Option<Self> {
        let s = |k| node.get(k).and_then(|n| n.as_str()).unwrap_or("");
        let key = s("key");
        if key.is_empty() {
            return None;
        }
        Some(Taint {
            node,
            key,
            value: s("value"),
            effect: s("effect"),
        })
    }
    /// NoSchedule and NoExecute keep pods off; PreferNoSchedule only steers.
    pub fn is_hard(&self) -> bool {
        matches!(self.effect, "NoSchedule" | "NoExecute")
    }
    pub fn display(&self) -> String {
        if self.value.is_empty() {
            format!("{}:{}", self.key, self.effect)
        } else {
            format!("{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A node selector requirement (pod affinity expression or NodePool requirement).
#[derive(Debug, Clone)]
pub struct Expr<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub op: &'a str,
    pub values: Vec<&'a str>,
}

impl<'a> Expr<'a> {
    pub fn from_node(node: Node<'a>) -> Option<Self> {
        let key = node.get("key")?.as_str()?;
        let op = node.get("operator").and_then(|n| n.as_str()).unwrap_or("");
        let values = node
            .get("values")
            .map(|v| v.items().filter_map(|n| n.as_str()).collect())
            .unwrap_or_default();
        Some(Expr {
            node,
            key,
            op,
            values,
        })
    }
}

/// GPUs one pod needs at once, from each container's count (`counts[i]` for `containers[i]`):
/// the sum over app containers, or the largest init container (init containers run one by one).
pub fn gpus_per_pod(containers: &[Container<'_>], counts: &[u64]) -> u64 {
    let of = |init: bool| {
        containers
            .iter()
            .zip(counts)
            .filter(move |(c, _)| c.init == init)
            .map(|(_, &n)| n)
    };
    of(false).sum::<u64>().max(of(true).max().unwrap_or(0))
}

/// A pod template inside a workload (or a bare Pod).
#[derive(Debug)]
pub struct PodTemplate<'a> {
    /// Index of the owning object in the index.
    pub owner: usize,
    pub file: FileId,
    /// Where in the owner it sits, for messages: `spec.template`, `spec.pytorchReplicaSpecs.Worker.template`.
    pub path: String,
    pub metadata: Option<Node<'a>>,
    pub spec: Node<'a>,
    pub containers: Vec<Container<'a>>,
    /// Whether any container requests a GPU resource.
    gpu: bool,
    /// Its scheduling constraints, read on first use: the index and several rules ask for them.
    constraints: std::sync::OnceLock<crate::sched::PodConstraints<'a>>,
}

impl<'a> PodTemplate<'a> {
    pub fn new(owner: usize, file: FileId, path: String, template: Node<'a>) -> Option<Self> {
        Self::from_parts(
            owner,
            file,
            path,
            template.get("metadata"),
            template.get("spec")?,
        )
    }
    pub fn from_parts(
        owner: usize,
        file: FileId,
        path: String,
        metadata: Option<Node<'a>>,
        spec: Node<'a>,
    ) -> Option<Self> {
        spec.as_map()?;
        let mut containers = Vec::new();
        for (key, init) in [("initContainers", true), ("containers", false)] {
            for c in spec.get(key).into_iter().flat_map(|n| n.items()) {
                let res = c.get("resources");
                let requests = res.and_then(|r| r.get("requests"));
                let limits = res.and_then(|r| r.get("limits"));
                let gpu = [limits, requests]
                    .into_iter()
                    .flatten()
                    .any(|m| m.entries().any(|(k, _, _)| is_gpu_resource(k)));
                containers.push(Container {
                    node: c,
                    name: c.get("name").and_then(|n| n.as_str()),
                    init,
                    requests,
                    limits,
                    gpu,
                });
            }
        }
        let gpu = containers.iter().any(|c| c.gpu);
        Some(PodTemplate {
            owner,
            file,
            path,
            metadata,
            spec,
            containers,
            gpu,
            constraints: std::sync::OnceLock::new(),
        })
    }
    /// Its node selector, required node affinity, tolerations and GPU requests.
    pub fn constraints(&self) -> &crate::sched::PodConstraints<'a> {
        self.constraints
            .get_or_init(|| crate::sched::PodConstraints::from_template(self))
    }
    pub fn loc(&self, node: Node<'_>) -> Loc {
        Loc {
            file: self.file,
            span: node.span(),
        }
    }
    pub fn annotation(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.metadata?.get("annotations")?.entry(key)
    }
    pub fn label(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.metadata?.get("labels")?.entry(key)
    }
    pub fn requests_gpu(&self) -> bool {
        self.gpu
    }
    /// GPUs one pod needs at once: the sum over app containers, or the largest init container.
    pub fn gpus_per_pod(&self) -> u64 {
        let counts: Vec<u64> = self.containers.iter().map(Container::gpu_count).collect();
        gpus_per_pod(&self.containers, &counts)
    }
    pub fn gpu_containers(&self) -> impl Iterator<Item = &Container<'a>> {
        self.containers.iter().filter(|c| c.requests_gpu())
    }
    pub fn tolerations(&self) -> Vec<Toleration<'a>> {
        self.spec
            .get("tolerations")
            .into_iter()
            .flat_map(|n| n.items())
            .map(Toleration::from_node)
            .collect()
    }
    /// `nodeSelector` entries: (key, key node, value node).
    pub fn node_selector(&self) -> Vec<(&'a str, Node<'a>, Node<'a>)> {
        self.spec
            .get("nodeSelector")
            .map(|n| n.entries().collect())
            .unwrap_or_default()
    }
    /// Required node affinity: terms are ORed, expressions in a term ANDed.
    pub fn affinity_terms(&self) -> Vec<Vec<Expr<'a>>> {
        self.spec
            .at(&[
                "affinity",
                "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms",
            ])
            .into_iter()
            .flat_map(|n| n.items())
            .map(|term| {
                term.get("matchExpressions")
                    .into_iter()
                    .flat_map(|n| n.items())
                    .filter_map(Expr::from_node)
                    .collect()
            })
            .collect()
    }
    pub fn volumes(&self) -> impl Iterator<Item = Node<'a>> {
        self.spec.get("volumes").into_iter().flat_map(|n| n.items())
    }
    pub fn priority_class(&self) -> Option<Node<'a>> {
        self.spec.get("priorityClassName")
    }
}

/// Pod templates of a workload object, with their paths. Covers core workloads, Kubeflow
/// training operators (`*ReplicaSpecs`), JobSet, Ray and LeaderWorkerSet.
pub fn pod_templates<'a>(owner: usize, obj: &Object<'a>) -> Vec<PodTemplate<'a>> {
    let mut out = Vec::new();
    let root = obj.root;
    let file = obj.file;
    let mut push = |path: String, node: Option<Node<'a>>| {
        if let Some(t) = node.and_then(|n| PodTemplate::new(owner, file, path, n)) {
            out.push(t);
        }
    };
    let Some(spec) = root.get("spec") else {
        return out;
    };
    match (obj.group, obj.kind) {
        ("", "Pod") => {
            if let Some(t) =
                PodTemplate::from_parts(owner, file, "spec".into(), root.get("metadata"), spec)
            {
                out.push(t);
            }
        }
        (
            "batch" | "apps" | "extensions",
            "Job" | "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet",
        )
        | ("", "ReplicationController" | "PodTemplate") => {
            push("spec.template".into(), spec.get("template"));
        }
        ("batch", "CronJob") => push(
            "spec.jobTemplate.spec.template".into(),
            spec.at(&["jobTemplate", "spec", "template"]),
        ),
        ("jobset.x-k8s.io", "JobSet") => {
            for (i, rj) in spec
                .get("replicatedJobs")
                .into_iter()
                .flat_map(|n| n.items())
                .enumerate()
            {
                let name = rj
                    .get("name")
                    .and_then(|n| n.as_str())
                    .map_or(i.to_string(), str::to_string);
                push(
                    format!("spec.replicatedJobs[{name}].template.spec.template"),
                    rj.at(&["template", "spec", "template"]),
                );
            }
        }
        ("ray.io", "RayCluster" | "RayJob" | "RayService") => {
            let cluster = match obj.kind {
                "RayJob" => spec.get("rayClusterSpec"),
                "RayService" => spec.get("rayClusterConfig"),
                _ => Some(spec),
            };
            let prefix = match obj.kind {
                "RayJob" => "spec.rayClusterSpec",
                "RayService" => "spec.rayClusterConfig",
                _ => "spec",
            };
            if let Some(c) = cluster {
                push(
                    format!("{prefix}.headGroupSpec.template"),
                    c.at(&["headGroupSpec", "template"]),
                );
                for (i, g) in c
                    .get("workerGroupSpecs")
                    .into_iter()
                    .flat_map(|n| n.items())
                    .enumerate()
                {
                    let name = g
                        .get("groupName")
                        .and_then(|n| n.as_str())
                        .map_or(i.to_string(), str::to_string);
                    push(
                        format!("{prefix}.workerGroupSpecs[{name}].template"),
                        g.get("template"),
                    );
                }
            }
        }
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => {
            for t in ["leaderTemplate", "workerTemplate"] {
                push(
                    format!("spec.leaderWorkerTemplate.{t}"),
                    spec.at(&["leaderWorkerTemplate", t]),
                );
            }
        }
        ("kubeflow.org", _) => {
            // PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob: a map of role → replica spec.
            for (key, _, replicas) in spec.entries() {
                if !key.ends_with("ReplicaSpecs") {
                    continue;
                }
                for (role, _, rs) in replicas.entries() {
                    push(format!("spec.{key}.{role}.template"), rs.get("template"));
                }
            }
        }
        _ => {}
    }
    out
}

/// A Job template nested between a workload and its pod template (JobSet replicated jobs,
/// CronJob): its path, its metadata, and the pod spec it holds.
pub struct JobTemplateMeta<'a> {
    pub path: String,
    pub metadata: Node<'a>,
    pub pod_spec: Option<Node<'a>>,
}

/// Metadata of the Job templates nested in an object (JobSet replicated jobs, CronJob): labels and
/// annotations there reach the Jobs, never the pods.
pub fn job_template_metadata<'a>(obj: &Object<'a>) -> Vec<JobTemplateMeta<'a>> {
    let mut out = Vec::new();
    let Some(spec) = obj.spec() else { return out };
    match (obj.group, obj.kind) {
        ("jobset.x-k8s.io", "JobSet") => {
            for (i, rj) in spec
                .get("replicatedJobs")
                .into_iter()
                .flat_map(|n| n.items())
                .enumerate()
            {
                if let Some(m) = rj.at(&["template", "metadata"]) {
                    let name = rj
                        .get("name")
                        .and_then(|n| n.as_str())
                        .map_or(i.to_string(), str::to_string);
                    out.push(JobTemplateMeta {
                        path: format!("spec.replicatedJobs[{name}].template"),
                        metadata: m,
                        pod_spec: rj.at(&["template", "spec", "template", "spec"]),
                    });
                }
            }
        }
        ("batch", "CronJob") => {
            if let Some(m) = spec.at(&["jobTemplate", "metadata"]) {
                out.push(JobTemplateMeta {
                    path: "spec.jobTemplate".to_string(),
                    metadata: m,
                    pod_spec: spec.at(&["jobTemplate", "spec", "template", "spec"]),
                });
            }
        }
        _ => {}
    }
    out
}

/// Karpenter NodePool (v1/v1beta1) or the older Provisioner (v1alpha5), in one shape.
#[derive(Debug)]
pub struct NodePool<'a> {
    pub obj: usize,
    pub file: FileId,
    pub name: &'a str,
    /// The node that names the pool (`metadata.name`).
    pub anchor: Node<'a>,
    pub spec: Node<'a>,
    /// `spec.template.metadata.labels` (Provisioner: `spec.labels`).
    pub labels: Vec<(&'a str, Node<'a>, Node<'a>)>,
    pub requirements: Vec<Expr<'a>>,
    pub taints: Vec<Taint<'a>>,
    pub startup_taints: Vec<Taint<'a>>,
    pub disruption: Option<Node<'a>>,
    pub consolidation_policy: Option<Node<'a>>,
    pub consolidate_after: Option<Node<'a>>,
    /// `spec.limits` (Provisioner: `spec.limits.resources`).
    pub limits: Option<Node<'a>>,
    pub node_class_ref: Option<Node<'a>>,
    pub legacy_provisioner: bool,
    /// The scheduling model's view of the pool, computed once on first use.
    pub(crate) sched: std::sync::OnceLock<crate::sched::PoolReqs<'a>>,
    pub(crate) bounded: std::sync::OnceLock<Option<Vec<&'static crate::catalog::Instance>>>,
}

impl<'a> NodePool<'a> {
    pub fn from_object(idx: usize, obj: &Object<'a>) -> Option<Self> {
        if obj.group != "karpenter.sh" {
            return None;
        }
        let spec = obj.spec()?;
        let taints_at = |n: Option<Node<'a>>| -> Vec<Taint<'a>> {
            n.into_iter()
                .flat_map(|n| n.items())
                .filter_map(Taint::from_node)
                .collect()
        };
        let reqs_at = |n: Option<Node<'a>>| -> Vec<Expr<'a>> {
            n.into_iter()
                .flat_map(|n| n.items())
                .filter_map(Expr::from_node)
                .collect()
        };
        let name = obj.name.unwrap_or("<unnamed>");
        match obj.kind {
            "NodePool" => {
                let tspec = spec.at(&["template", "spec"]);
                let disruption = spec.get("disruption");
                Some(NodePool {
                    obj: idx,
                    file: obj.file,
                    name,
                    anchor: obj.anchor(),
                    spec,
                    labels: spec
                        .at(&["template", "metadata", "labels"])
                        .map(|n| n.entries().collect())
                        .unwrap_or_default(),
                    requirements: reqs_at(tspec.and_then(|s| s.get("requirements"))),
                    taints: taints_at(tspec.and_then(|s| s.get("taints"))),
                    startup_taints: taints_at(tspec.and_then(|s| s.get("startupTaints"))),
                    disruption,
                    consolidation_policy: disruption.and_then(|d| d.get("consolidationPolicy")),
                    consolidate_after: disruption.and_then(|d| d.get("consolidateAfter")),
                    limits: spec.get("limits"),
                    node_class_ref: tspec.and_then(|s| s.get("nodeClassRef")),
                    legacy_provisioner: false,
                    sched: Default::default(),
                    bounded: Default::default(),
                })
            }
            "Provisioner" => Some(NodePool {
                obj: idx,
                file: obj.file,
                name,
                anchor: obj.anchor(),
                spec,
                labels: spec
                    .get("labels")
                    .map(|n| n.entries().collect())
                    .unwrap_or_default(),
                requirements: reqs_at(spec.get("requirements")),
                taints: taints_at(spec.get("taints")),
                startup_taints: taints_at(spec.get("startupTaints")),
                disruption: spec.get("consolidation"),
                consolidation_policy: None,
                consolidate_after: None,
                limits: spec.at(&["limits", "resources"]),
                node_class_ref: spec.get("providerRef"),
                legacy_provisioner: true,
                sched: Default::default(),
                bounded: Default::default(),
            }),
            _ => None,
        }
    }
    pub fn loc(&self, node: Node<'_>) -> Loc {
        Loc {
            file: self.file,
            span: node.span(),
        }
    }
    /// When the pool's nodes expire, as Karpenter writes durations (`720h`; a v1alpha5
    /// Provisioner's `ttlSecondsUntilExpired` as `<n>s`), with the node that says so (`None`:
    /// Karpenter's default of 720h). `None` when they never expire (`Never`, a Provisioner
    /// without the field) or the value is filled in later (`${TTL}`).
    pub fn expire_after(&self) -> Option<(std::borrow::Cow<'a, str>, Option<Node<'a>>)> {
        let readable = |n: Node<'a>| {
            n.as_str()
                .map(str::trim)
                .filter(|v| !v.contains('$') && !crate::quantity::is_placeholder(v))
        };
        if self.legacy_provisioner {
            let n = self.spec.get("ttlSecondsUntilExpired")?;
            return Some((format!("{}s", readable(n)?).into(), Some(n)));
        }
        let written = self
            .spec
            .at(&["template", "spec", "expireAfter"])
            .or_else(|| self.disruption.and_then(|d| d.get("expireAfter")));
        match written {
            Some(n) => {
                let v = readable(n).filter(|v| *v != "Never")?;
                Some((v.into(), Some(n)))
            }
            None => Some(("720h".into(), None)),
        }
    }
    /// The consolidation policy in force, with Karpenter v1's default when none is written.
    pub fn effective_policy(&self) -> &'a str {
        if self.legacy_provisioner {
            let enabled = self
                .disruption
                .and_then(|d| d.get("enabled"))
                .and_then(|n| n.as_str());
            return if enabled == Some("true") {
                "WhenUnderutilized"
            } else {
                "WhenEmpty"
            };
        }
        self.consolidation_policy
            .and_then(|n| n.as_str())
            .unwrap_or("WhenEmptyOrUnderutilized")
    }
    /// Capacity types the pool may launch (Karpenter defaults to on-demand when unconstrained).
    pub fn capacity_types(&self) -> Vec<&'a str> {
        const ALL: [&str; 3] = ["on-demand", "spot", "reserved"];
        let mut allowed: Vec<&'a str> = vec!["on-demand"];
        let mut constrained = false;
        for (k, _, v) in &self.labels {
            if *k == "karpenter.sh/capacity-type"
                && let Some(v) = v.as_str()
            {
                return vec![v];
            }
        }
        for r in &self.requirements {
            if r.key != "karpenter.sh/capacity-type" {
                continue;
            }
            constrained = true;
            match r.op {
                "In" => allowed = r.values.clone(),
                "NotIn" => {
                    allowed = ALL
                        .iter()
                        .copied()
                        .filter(|c| !r.values.contains(c))
                        .collect()
                }
                "Exists" => allowed = ALL.to_vec(),
                _ => {}
            }
        }
        if !constrained {
            return vec!["on-demand"];
        }
        allowed
    }
}

#[cfg(test)]
mod tests;
