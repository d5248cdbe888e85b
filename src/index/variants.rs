//! What Kueue makes of a template: the queue it is submitted to, and one variant of its
//! constraints per flavor of that queue (the flavor's node labels and tolerations added).

use super::{Index, QueueRef, Variant};
use crate::model::{PodTemplate, Toleration};
use crate::sched::{PodConstraints, Req};

impl<'a> Index<'a> {
    pub(super) fn queue_of(&self, t: &PodTemplate<'a>) -> Option<QueueRef<'a>> {
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

    pub(super) fn compute_variants(&self, ti: usize) -> Vec<Variant<'a>> {
        let t = &self.templates[ti];
        let base = t.constraints();
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
                constraints: t.shared_constraints(),
            }];
        }
        flavors
            .into_iter()
            .map(|fi| {
                let f = &self.flavors[fi];
                let fobj = &self.objects[f.obj];
                // Built at their final size: a clone grown by a push holds twice what it needs.
                let mut reqs = Vec::with_capacity(base.base.len() + f.node_labels.len());
                reqs.extend(base.base.iter().cloned());
                for (k, _, v) in &f.node_labels {
                    if let Some(val) = v.as_str() {
                        reqs.push(Req {
                            key: k,
                            op: "In",
                            values: crate::sched::Values::One(val),
                            loc: fobj.loc(*v),
                        });
                    }
                }
                let mut tolerations =
                    Vec::with_capacity(base.tolerations.len() + f.tolerations.len());
                tolerations.extend(base.tolerations.iter().chain(&f.tolerations).copied());
                Variant {
                    flavor: Some(fi),
                    constraints: std::sync::Arc::new(PodConstraints {
                        base: reqs,
                        terms: base.terms.clone(),
                        tolerations,
                        extended: base.extended.clone(),
                        nvidia_gpus: base.nvidia_gpus,
                    }),
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
