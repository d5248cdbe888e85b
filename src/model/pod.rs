//! Pod templates and their containers, as workloads hold them: where each template sits in its
//! object, what its containers ask for, and the Job templates nested between.

use super::kinds::Family;
use super::{Expr, Object, Toleration, is_accelerator_resource, is_gpu_resource};
use crate::diag::{FileId, Loc};
use crate::yaml::Node;

#[derive(Debug, Clone)]
pub struct Container<'a> {
    pub node: Node<'a>,
    pub name: Option<&'a str>,
    pub init: bool,
    pub requests: Option<Node<'a>>,
    pub limits: Option<Node<'a>>,
    /// Whether requests or limits name a GPU resource: asked by nearly every rule, so read once.
    gpu: bool,
    /// Its GPU count (see [`Container::gpu_count`]), read once for the same reason.
    gpus: u64,
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
        self.gpus
    }
    pub fn requests_gpu(&self) -> bool {
        self.gpu
    }
    /// The container's limit of `resource` when it is a positive whole number, and its node.
    pub fn whole_limit(&self, resource: &str) -> Option<(Node<'a>, u64)> {
        let limit = self.limits?.get(resource)?;
        let n = limit
            .as_str()?
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)?;
        Some((limit, n))
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

/// Whether a quantity is written as zero (`0`, `"0"`, `0m`).
fn is_zero(v: Node<'_>) -> bool {
    v.as_str()
        .and_then(crate::quantity::parse)
        .is_some_and(|m| m.0 == 0)
}

/// The GPUs of a container's `requests` and `limits`: each GPU resource once, its limit, else its
/// request; a count that is not a whole number counts 0.
fn count_gpus(requests: Option<Node<'_>>, limits: Option<Node<'_>>) -> u64 {
    let whole = |n: Node<'_>| n.as_str().and_then(crate::quantity::whole).unwrap_or(0);
    let mut total = 0;
    for (name, _, v) in limits.into_iter().flat_map(|l| l.entries()) {
        if is_gpu_resource(name) {
            total += whole(v).max(0) as u64;
        }
    }
    for (name, _, v) in requests.into_iter().flat_map(|r| r.entries()) {
        if is_gpu_resource(name) && limits.and_then(|l| l.get(name)).is_none() {
            total += whole(v).max(0) as u64;
        }
    }
    total
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
    /// Most are one of a few constant paths, held without an allocation.
    pub path: std::borrow::Cow<'static, str>,
    pub metadata: Option<Node<'a>>,
    pub spec: Node<'a>,
    pub containers: Vec<Container<'a>>,
    /// Whether any container requests a GPU resource.
    gpu: bool,
    /// GPUs its ResourceClaims give it (DRA), resolved by the index: claims live in other objects.
    dra: Vec<super::dra::DraGpu<'a>>,
    /// Its scheduling constraints, read on first use: the index and several rules ask for them.
    /// Shared with the Kueue variant that adds nothing to them (see `index::Variant`).
    constraints: std::sync::OnceLock<std::sync::Arc<super::constraints::PodConstraints<'a>>>,
}

impl<'a> PodTemplate<'a> {
    pub fn new(
        owner: usize,
        file: FileId,
        path: impl Into<std::borrow::Cow<'static, str>>,
        template: Node<'a>,
    ) -> Option<Self> {
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
        path: impl Into<std::borrow::Cow<'static, str>>,
        metadata: Option<Node<'a>>,
        spec: Node<'a>,
    ) -> Option<Self> {
        let path = path.into();
        spec.as_map()?;
        let mut containers = Vec::new();
        for (key, init) in [("initContainers", true), ("containers", false)] {
            for c in spec.get(key).into_iter().flat_map(|n| n.items()) {
                let res = c.get("resources");
                let requests = res.and_then(|r| r.get("requests"));
                let limits = res.and_then(|r| r.get("limits"));
                // `nvidia.com/gpu: 0` (a Ray head that must not take a GPU) asks for none.
                let gpu = [limits, requests].into_iter().flatten().any(|m| {
                    m.entries()
                        .any(|(k, _, v)| is_gpu_resource(k) && !is_zero(v))
                });
                containers.push(Container {
                    node: c,
                    name: c.get("name").and_then(|n| n.as_str()),
                    init,
                    requests,
                    limits,
                    gpu,
                    gpus: if gpu { count_gpus(requests, limits) } else { 0 },
                });
            }
        }
        let gpu = containers.iter().any(|c| c.gpu);
        // Kept as long as the index: at its size, not the four slots a first push makes.
        containers.shrink_to_fit();
        Some(PodTemplate {
            owner,
            file,
            path,
            metadata,
            spec,
            containers,
            gpu,
            dra: Vec::new(),
            constraints: std::sync::OnceLock::new(),
        })
    }
    /// Its node selector, required node affinity, tolerations and GPU requests.
    pub fn constraints(&self) -> &super::constraints::PodConstraints<'a> {
        self.shared_constraints_ref()
    }
    /// [`PodTemplate::constraints`], for a holder that keeps them as long as it likes.
    pub fn shared_constraints(&self) -> std::sync::Arc<super::constraints::PodConstraints<'a>> {
        std::sync::Arc::clone(self.shared_constraints_ref())
    }
    fn shared_constraints_ref(&self) -> &std::sync::Arc<super::constraints::PodConstraints<'a>> {
        self.constraints.get_or_init(|| {
            std::sync::Arc::new(super::constraints::PodConstraints::from_template(self))
        })
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
    /// Whether it is a GPU pod: a container asks for a GPU resource, or a ResourceClaim of a GPU
    /// device class is allocated to it.
    pub fn requests_gpu(&self) -> bool {
        self.gpu || !self.dra.is_empty()
    }
    /// Whether a container asks for a GPU as an extended resource (not through DRA).
    pub fn requests_gpu_resource(&self) -> bool {
        self.gpu
    }
    /// The GPUs its ResourceClaims give it.
    pub fn dra_gpus(&self) -> &[super::dra::DraGpu<'a>] {
        &self.dra
    }
    /// The devices its GPU claims give one pod; `None` without GPU claims.
    pub fn dra_devices(&self) -> Option<super::dra::Devices> {
        super::dra::devices(&self.dra)
    }
    /// Whole GPUs (`gpu.nvidia.com`) its claims certainly give one pod: a request of unknown
    /// count adds none, so a comparison with an instance's GPUs never overstates the need.
    pub fn dra_whole_gpus(&self) -> u64 {
        self.dra
            .iter()
            .filter(|g| super::dra::whole_gpu_class(g.class))
            .filter_map(|g| g.count)
            .fold(0, u64::saturating_add)
    }
    /// The GPU claims a container uses (`resources.claims` naming the pod's entry, and the
    /// request when it names one).
    pub fn container_dra_gpus(&self, c: &Container<'_>) -> Vec<&super::dra::DraGpu<'a>> {
        let uses: Vec<(Option<&str>, Option<&str>)> = c
            .get("resources")
            .and_then(|r| r.get("claims"))
            .into_iter()
            .flat_map(|l| l.items())
            .map(|i| {
                (
                    i.get("name").and_then(Node::as_str),
                    i.get("request").and_then(Node::as_str),
                )
            })
            .collect();
        self.dra
            .iter()
            .filter(|g| {
                let entry = g.entry.get("name").and_then(Node::as_str);
                uses.iter().any(|(name, request)| {
                    name.is_some() && *name == entry && request.is_none_or(|r| g.request == Some(r))
                })
            })
            .collect()
    }
    /// Its pod spec's `resourceClaims` (what the index resolves).
    pub fn claims(&self) -> Vec<super::dra::PodClaim<'a>> {
        super::dra::pod_claims(self.spec)
    }
    pub(crate) fn set_dra(&mut self, gpus: Vec<super::dra::DraGpu<'a>>) {
        self.dra = gpus;
    }
    /// GPUs one pod needs at once: the sum over app containers, or the largest init container.
    pub fn gpus_per_pod(&self) -> u64 {
        let counts: Vec<u64> = self.containers.iter().map(Container::gpu_count).collect();
        gpus_per_pod(&self.containers, &counts)
    }
    pub fn gpu_containers(&self) -> impl Iterator<Item = &Container<'a>> {
        self.containers.iter().filter(|c| c.requests_gpu())
    }
    /// The containers that use its GPU ResourceClaims (`resources.claims` naming one).
    pub fn dra_gpu_containers(&self) -> impl Iterator<Item = &Container<'a>> {
        let names: Vec<&str> = self
            .dra
            .iter()
            .filter_map(|g| g.entry.get("name")?.as_str())
            .collect();
        self.containers.iter().filter(move |c| {
            c.get("resources")
                .and_then(|r| r.get("claims"))
                .into_iter()
                .flat_map(|l| l.items())
                .any(|i| {
                    i.get("name")
                        .and_then(Node::as_str)
                        .is_some_and(|n| names.contains(&n))
                })
        })
    }
    /// The accelerator its containers ask for, named as its users name it: `GPU`, `TPU`,
    /// `Neuron` (Inferentia, Trainium), `Gaudi`, else `accelerator`.
    pub fn accelerator_name(&self) -> &'static str {
        let names: Vec<&str> = self
            .gpu_containers()
            .flat_map(|c| c.accelerators())
            .map(|(n, _)| n)
            .filter(|n| is_gpu_resource(n))
            .collect();
        let all = |p: &dyn Fn(&str) -> bool| !names.is_empty() && names.iter().all(|n| p(n));
        // Only DRA claims: their classes are GPU classes.
        if names.is_empty() && !self.dra.is_empty() {
            return "GPU";
        }
        if all(&|n| {
            n.starts_with("nvidia.com/") || n == "amd.com/gpu" || n.starts_with("gpu.intel.com/")
        }) {
            "GPU"
        } else if all(&|n| n.starts_with("google.com/tpu")) {
            "TPU"
        } else if all(&|n| n.starts_with("aws.amazon.com/neuron")) {
            "Neuron"
        } else if all(&|n| n == "habana.ai/gaudi") {
            "Gaudi"
        } else {
            "accelerator"
        }
    }
    pub fn tolerations(&self) -> Vec<Toleration<'a>> {
        match self.spec.get("tolerations") {
            Some(n) => n.items().map(Toleration::from_node).collect(),
            None => Vec::new(),
        }
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
/// training operators (`*ReplicaSpecs`), JobSet, Ray, LeaderWorkerSet and Volcano Job.
pub fn pod_templates<'a>(owner: usize, obj: &Object<'a>) -> Vec<PodTemplate<'a>> {
    let mut out = Vec::new();
    let root = obj.root;
    let file = obj.file;
    let mut push = |path: std::borrow::Cow<'static, str>, node: Option<Node<'a>>| {
        if let Some(t) = node.and_then(|n| PodTemplate::new(owner, file, path, n)) {
            out.push(t);
        }
    };
    let Some(spec) = root.get("spec") else {
        return out;
    };
    let Some(family) = super::kinds::family(obj) else {
        return out;
    };
    match family {
        Family::Pod => {
            if let Some(t) =
                PodTemplate::from_parts(owner, file, "spec", root.get("metadata"), spec)
            {
                out.push(t);
            }
        }
        Family::Job | Family::Replicated | Family::DaemonSet | Family::PodTemplate => {
            push("spec.template".into(), spec.get("template"));
        }
        Family::CronJob => push(
            "spec.jobTemplate.spec.template".into(),
            spec.at(&["jobTemplate", "spec", "template"]),
        ),
        Family::JobSet => {
            for (name, rj) in named_items(spec.get("replicatedJobs"), "name") {
                push(
                    format!("spec.replicatedJobs[{name}].template.spec.template").into(),
                    rj.at(&["template", "spec", "template"]),
                );
            }
        }
        Family::Ray => {
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
                    format!("{prefix}.headGroupSpec.template").into(),
                    c.at(&["headGroupSpec", "template"]),
                );
                for (name, g) in named_items(c.get("workerGroupSpecs"), "groupName") {
                    push(
                        format!("{prefix}.workerGroupSpecs[{name}].template").into(),
                        g.get("template"),
                    );
                }
            }
        }
        Family::LeaderWorkerSet => {
            for t in ["leaderTemplate", "workerTemplate"] {
                push(
                    format!("spec.leaderWorkerTemplate.{t}").into(),
                    spec.at(&["leaderWorkerTemplate", t]),
                );
            }
        }
        Family::Kubeflow => {
            // PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob: a map of role → replica spec.
            for (key, _, replicas) in spec.entries() {
                if !key.ends_with("ReplicaSpecs") {
                    continue;
                }
                for (role, _, rs) in replicas.entries() {
                    push(
                        format!("spec.{key}.{role}.template").into(),
                        rs.get("template"),
                    );
                }
            }
        }
        Family::Tasks => {
            for (name, task) in named_items(spec.get("tasks"), "name") {
                push(
                    format!("spec.tasks[{name}].template").into(),
                    task.get("template"),
                );
            }
        }
        Family::Opaque => {}
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

/// The items of a list with the name each goes by in paths: its `key` field, else its index.
fn named_items<'a>(
    list: Option<Node<'a>>,
    key: &'static str,
) -> impl Iterator<Item = (String, Node<'a>)> {
    list.into_iter()
        .flat_map(|n| n.items())
        .enumerate()
        .map(move |(i, item)| {
            let name = item.get(key).and_then(|n| n.as_str());
            (name.map_or(i.to_string(), str::to_string), item)
        })
}

/// Metadata of the Job templates nested in an object (JobSet replicated jobs, CronJob): labels and
/// annotations there reach the Jobs, never the pods.
pub fn job_template_metadata<'a>(obj: &Object<'a>) -> Vec<JobTemplateMeta<'a>> {
    let mut out = Vec::new();
    let Some(spec) = obj.spec() else { return out };
    match super::kinds::family(obj) {
        Some(Family::JobSet) => {
            for (name, rj) in named_items(spec.get("replicatedJobs"), "name") {
                if let Some(m) = rj.at(&["template", "metadata"]) {
                    out.push(JobTemplateMeta {
                        path: format!("spec.replicatedJobs[{name}].template"),
                        metadata: m,
                        pod_spec: rj.at(&["template", "spec", "template", "spec"]),
                    });
                }
            }
        }
        Some(Family::CronJob) => {
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
