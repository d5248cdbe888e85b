//! Every object once, with the lookups and derived views rules need. Built once per run.

use crate::config::Settings;
use crate::diag::Loc;
use crate::model::{
    ClusterQueue, Flavor, LocalQueue, NodePool, Object, PodTemplate, Toleration, pod_templates,
};
use crate::sched::{PodConstraints, Req};
use crate::source::SourceFile;
use rayon::prelude::*;
use std::collections::HashMap;

/// What a GPU workload is for, coarsely (`intent::IntentKind` has the detail and the evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Training,
    Inference,
    Other,
}

/// A pod template as it will run: after Kueue injects one flavor's labels and tolerations.
#[derive(Debug, Clone)]
pub struct Variant<'a> {
    /// Index into `Index::flavors` of the injected flavor.
    pub flavor: Option<usize>,
    pub constraints: PodConstraints<'a>,
}

/// How a workload reaches Kueue: the queue label and what it resolves to.
#[derive(Debug, Clone, Copy)]
pub struct QueueRef<'a> {
    /// The `kueue.x-k8s.io/queue-name` value node (None when defaulted to `default`).
    pub label: Option<&'a crate::yaml::Node>,
    pub local_queue: Option<usize>,
    pub cluster_queue: Option<usize>,
}

pub struct Index<'a> {
    pub files: &'a [SourceFile],
    pub settings: &'a Settings,
    pub objects: Vec<Object<'a>>,
    pub templates: Vec<PodTemplate<'a>>,
    pub nodepools: Vec<NodePool<'a>>,
    pub flavors: Vec<Flavor<'a>>,
    pub cluster_queues: Vec<ClusterQueue<'a>>,
    pub local_queues: Vec<LocalQueue<'a>>,
    /// Per template: what it is for, and the evidence that decided it.
    pub classes: Vec<crate::intent::Intent<'a>>,
    /// Per template: the Kueue queue it goes through, if any.
    pub queues: Vec<Option<QueueRef<'a>>>,
    /// Per template: the ways it may run (one per flavor it may be admitted to; one if no Kueue).
    pub variants: Vec<Vec<Variant<'a>>>,
    by_name: HashMap<(&'a str, &'a str), Vec<usize>>,
    /// Per object: the range of its templates in `templates` (they are stored in object order).
    template_ranges: Vec<std::ops::Range<usize>>,
    pub documents: usize,
}

/// Kinds made for training: Kubeflow `*Job`s, JobSet, RayJob, TrainJob. A batch/v1 Job is not
/// among them: it runs anything, and counts as training only when nothing says otherwise.
pub fn is_training_kind(obj: &Object) -> bool {
    match (obj.group, obj.kind) {
        // Not Notebook and the other non-job kinds of the group.
        ("kubeflow.org", k) => k.ends_with("Job"),
        (g, k) => matches!(
            (g, k),
            ("jobset.x-k8s.io", "JobSet")
                | ("ray.io", "RayJob")
                | ("trainer.kubeflow.org", "TrainJob")
        ),
    }
}

pub fn is_inference_kind(obj: &Object) -> bool {
    matches!(
        (obj.group, obj.kind),
        ("apps", "Deployment" | "StatefulSet")
            | ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")
            | ("ray.io", "RayService")
            | ("serving.kserve.io", _)
    )
}

impl<'a> Index<'a> {
    pub fn build(files: &'a [SourceFile], settings: &'a Settings) -> Self {
        let mut objects = Vec::new();
        let mut documents = 0;
        for (fid, f) in files.iter().enumerate() {
            for d in &f.docs {
                documents += 1;
                if let Some(o) = Object::from_node(fid, &d.root) {
                    if o.kind.ends_with("List") && o.group.is_empty() {
                        // `kind: List` (kubectl output): its items are the objects.
                        for item in o.root.get("items").into_iter().flat_map(|n| n.items()) {
                            if let Some(io) = Object::from_node(fid, item) {
                                objects.push(io);
                            }
                        }
                    } else {
                        objects.push(o);
                    }
                }
            }
        }
        let mut templates = Vec::new();
        let mut nodepools = Vec::new();
        let mut flavors = Vec::new();
        let mut cluster_queues = Vec::new();
        let mut local_queues = Vec::new();
        let mut by_name: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
        let mut template_ranges = Vec::with_capacity(objects.len());
        let per_object: Vec<Vec<PodTemplate>> = objects
            .par_iter()
            .enumerate()
            .map(|(i, o)| pod_templates(i, o))
            .collect();
        for ((i, o), own) in objects.iter().enumerate().zip(per_object) {
            if let Some(n) = o.name {
                by_name.entry((o.kind, n)).or_default().push(i);
            }
            let start = templates.len();
            templates.extend(own);
            template_ranges.push(start..templates.len());
            nodepools.extend(NodePool::from_object(i, o));
            flavors.extend(Flavor::from_object(i, o));
            cluster_queues.extend(ClusterQueue::from_object(i, o));
            local_queues.extend(LocalQueue::from_object(i, o));
        }
        let mut ix = Index {
            files,
            settings,
            objects,
            templates,
            nodepools,
            flavors,
            cluster_queues,
            local_queues,
            classes: Vec::new(),
            queues: Vec::new(),
            variants: Vec::new(),
            by_name,
            template_ranges,
            documents,
        };
        ix.classes = ix.templates.par_iter().map(|t| ix.classify(t)).collect();
        ix.queues = ix.templates.par_iter().map(|t| ix.queue_of(t)).collect();
        ix.variants = (0..ix.templates.len())
            .into_par_iter()
            .map(|i| ix.compute_variants(i))
            .collect();
        ix
    }

    /// The pod templates of object `oi`.
    pub fn templates_of(&self, oi: usize) -> &[PodTemplate<'a>] {
        self.template_ranges
            .get(oi)
            .map_or(&[], |r| &self.templates[r.clone()])
    }

    pub fn owner(&self, t: &PodTemplate) -> &Object<'a> {
        &self.objects[t.owner]
    }

    pub fn path(&self, loc: Loc) -> &str {
        &self.files[loc.file].path
    }

    /// Objects of a kind with a name (any namespace).
    pub fn named(&self, kind: &str, name: &str) -> Vec<&Object<'a>> {
        self.by_name
            .get(&(kind, name))
            .into_iter()
            .flatten()
            .map(|&i| &self.objects[i])
            .collect()
    }

    /// Whether an object of this kind and name exists in the files or is declared external.
    /// A missing namespace on either side matches any (kustomize often sets it later).
    pub fn exists(&self, kind: &str, namespace: Option<&str>, name: &str) -> bool {
        self.named(kind, name)
            .into_iter()
            .any(|o| namespace.is_none() || o.namespace.is_none() || o.namespace == namespace)
            || self.settings.is_external(kind, namespace, name)
    }

    pub fn has_kind(&self, group: &str, kind: &str) -> bool {
        self.objects.iter().any(|o| o.is(group, kind))
    }

    /// Whether the cluster runs Karpenter (pools in the files, or the config says so).
    pub fn uses_karpenter(&self) -> bool {
        !self.nodepools.is_empty() || self.settings.karpenter
    }

    /// What a template is for, from the evidence in its workload (see `intent`).
    fn classify(&self, t: &PodTemplate<'a>) -> crate::intent::Intent<'a> {
        crate::intent::classify(self.owner(t), t, self.settings)
    }

    /// The LocalQueue a namespace-qualified name resolves to.
    pub fn local_queue(&self, namespace: Option<&str>, name: &str) -> Option<usize> {
        self.local_queues.iter().position(|q| {
            q.name == name
                && (namespace.is_none() || q.namespace.is_none() || q.namespace == namespace)
        })
    }

    pub fn cluster_queue(&self, name: &str) -> Option<usize> {
        self.cluster_queues.iter().position(|q| q.name == name)
    }

    pub fn flavor(&self, name: &str) -> Option<usize> {
        self.flavors.iter().position(|f| f.name == name)
    }

    fn queue_of(&self, t: &PodTemplate<'a>) -> Option<QueueRef<'a>> {
        let owner = self.owner(t);
        let label = owner
            .label("kueue.x-k8s.io/queue-name")
            .or_else(|| t.label("kueue.x-k8s.io/queue-name"))
            .map(|(_, v)| v);
        let name = match label.and_then(|v| v.as_str()) {
            Some(n) => n,
            // Kueue defaults Jobs in a namespace with a LocalQueue named `default` to it.
            None if self.local_queue(owner.namespace, "default").is_some()
                && owner.namespace.is_some() =>
            {
                "default"
            }
            None => return None,
        };
        let lq = self.local_queue(owner.namespace, name);
        let cq = lq
            .and_then(|i| self.local_queues[i].cluster_queue)
            .and_then(|n| n.as_str())
            .and_then(|n| self.cluster_queue(n));
        Some(QueueRef {
            label,
            local_queue: lq,
            cluster_queue: cq,
        })
    }

    fn compute_variants(&self, ti: usize) -> Vec<Variant<'a>> {
        let t = &self.templates[ti];
        let base = PodConstraints::from_template(t);
        let flavors: Vec<usize> = self.queues[ti]
            .and_then(|q| q.cluster_queue)
            .map(|cq| {
                let mut v: Vec<usize> = Vec::new();
                for (name, _, _) in &self.cluster_queues[cq].flavors {
                    if let Some(f) = self.flavor(name)
                        && !v.contains(&f)
                    {
                        v.push(f);
                    }
                }
                v
            })
            .unwrap_or_default();
        if flavors.is_empty() {
            return vec![Variant {
                flavor: None,
                constraints: base,
            }];
        }
        flavors
            .into_iter()
            .map(|fi| {
                let f = &self.flavors[fi];
                let fobj = &self.objects[f.obj];
                let mut c = base.clone();
                for (k, _, v) in &f.node_labels {
                    if let Some(val) = v.as_str() {
                        c.base.push(Req {
                            key: k,
                            op: "In",
                            values: vec![val],
                            loc: fobj.loc(v),
                        });
                    }
                }
                c.tolerations.extend(f.tolerations.iter().copied());
                Variant {
                    flavor: Some(fi),
                    constraints: c,
                }
            })
            .collect()
    }

    /// Tolerations Kueue may add for a template (union over its flavors).
    pub fn injected_tolerations(&self, ti: usize) -> Vec<Toleration<'a>> {
        self.variants[ti]
            .iter()
            .filter_map(|v| v.flavor)
            .flat_map(|f| self.flavors[f].tolerations.iter().copied())
            .collect()
    }
}
