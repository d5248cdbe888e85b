//! The workload kinds gpuops knows, in one table: where each keeps its pod templates (its
//! family), what it is made for, and how Kueue admits it. Every layer reads this table (the pod
//! template views, the pod counts, intent, the quota index and the rules), so adding a workload
//! kind is one row here, plus a family when it keeps its templates in a new place (then
//! `model/pod.rs` finds them and `sched/pods.rs` counts them).

use super::Object;

/// How a kind holds its pod templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// The object is the pod (`spec`).
    Pod,
    /// `spec.template`, one pod run `parallelism`/`completions` times.
    Job,
    /// `spec.jobTemplate.spec.template`.
    CronJob,
    /// `spec.template`, `spec.replicas` pods.
    Replicated,
    /// `spec.template`, one pod per node.
    DaemonSet,
    /// `spec.template`, never run by itself.
    PodTemplate,
    /// `spec.replicatedJobs[].template.spec.template`.
    JobSet,
    /// Head and worker groups of a Ray cluster (RayCluster `spec`, RayJob `spec.rayClusterSpec`,
    /// RayService `spec.rayClusterConfig`).
    Ray,
    /// `spec.leaderWorkerTemplate.{leaderTemplate,workerTemplate}`.
    LeaderWorkerSet,
    /// Kubeflow training operators: `spec.<x>ReplicaSpecs.<role>.template`.
    Kubeflow,
    /// Volcano Job: `spec.tasks[].template`, `replicas` pods each.
    Tasks,
    /// A kind whose purpose matters but whose pod templates gpuops does not read.
    Opaque,
}

/// What a kind is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Training jobs: Kubeflow `*Job`s, JobSet, RayJob, TrainJob.
    Training,
    /// Servers: Deployment, StatefulSet, LeaderWorkerSet, RayService, KServe.
    Serving,
    /// Anything (a batch/v1 Job runs what it is given).
    Any,
}

/// One row of the table.
#[derive(Debug)]
pub struct WorkloadKind {
    pub group: &'static str,
    /// The kind; `*` any kind of the group, `*Job` any kind ending in `Job`.
    pub kind: &'static str,
    pub family: Family,
    pub purpose: Purpose,
    /// Kept at a replica count by Kubernetes (long-running servers).
    pub replicated_server: bool,
    /// Kueue reads the queue label from the object itself (job-like integrations), not from its
    /// pod templates.
    pub queue_label_on_object: bool,
    /// Kueue admits each of its pods as a workload of its own (pod-group integrations).
    pub kueue_per_pod: bool,
}

const fn row(group: &'static str, kind: &'static str, family: Family) -> WorkloadKind {
    WorkloadKind {
        group,
        kind,
        family,
        purpose: Purpose::Any,
        replicated_server: false,
        queue_label_on_object: false,
        kueue_per_pod: false,
    }
}

const fn training(mut k: WorkloadKind) -> WorkloadKind {
    k.purpose = Purpose::Training;
    k
}

const fn serving(mut k: WorkloadKind) -> WorkloadKind {
    k.purpose = Purpose::Serving;
    k
}

const fn server(mut k: WorkloadKind) -> WorkloadKind {
    k.purpose = Purpose::Serving;
    k.replicated_server = true;
    k
}

const fn job_like(mut k: WorkloadKind) -> WorkloadKind {
    k.queue_label_on_object = true;
    k
}

const fn per_pod(mut k: WorkloadKind) -> WorkloadKind {
    k.kueue_per_pod = true;
    k
}

/// The table, first match wins.
pub static KINDS: &[WorkloadKind] = &[
    row("", "Pod", Family::Pod),
    job_like(row("batch", "Job", Family::Job)),
    row("batch", "CronJob", Family::CronJob),
    server(per_pod(row("apps", "Deployment", Family::Replicated))),
    server(row("apps", "StatefulSet", Family::Replicated)),
    per_pod(row("apps", "ReplicaSet", Family::Replicated)),
    row("apps", "DaemonSet", Family::DaemonSet),
    per_pod(row("extensions", "Deployment", Family::Replicated)),
    per_pod(row("extensions", "ReplicaSet", Family::Replicated)),
    row("extensions", "DaemonSet", Family::DaemonSet),
    per_pod(row("", "ReplicationController", Family::Replicated)),
    row("", "PodTemplate", Family::PodTemplate),
    training(job_like(row("jobset.x-k8s.io", "JobSet", Family::JobSet))),
    job_like(row("ray.io", "RayCluster", Family::Ray)),
    training(job_like(row("ray.io", "RayJob", Family::Ray))),
    serving(row("ray.io", "RayService", Family::Ray)),
    serving(row(
        "leaderworkerset.x-k8s.io",
        "LeaderWorkerSet",
        Family::LeaderWorkerSet,
    )),
    // PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob; not Notebook and the group's
    // other kinds, which hold no replica specs.
    training(job_like(row("kubeflow.org", "*Job", Family::Kubeflow))),
    row("kubeflow.org", "*", Family::Kubeflow),
    training(row("trainer.kubeflow.org", "TrainJob", Family::Opaque)),
    // Volcano runs any batch work; what a job is for comes from its command.
    row("batch.volcano.sh", "Job", Family::Tasks),
    serving(row("serving.kserve.io", "*", Family::Opaque)),
];

/// The table's row for a group and kind.
pub fn lookup(group: &str, kind: &str) -> Option<&'static WorkloadKind> {
    KINDS.iter().find(|k| {
        k.group == group
            && match k.kind {
                "*" => true,
                "*Job" => kind.ends_with("Job"),
                exact => exact == kind,
            }
    })
}

/// The object's family, if it is a workload kind of the table.
pub fn family(obj: &Object) -> Option<Family> {
    obj.workload.map(|k| k.family)
}

/// Kinds made for training: Kubeflow `*Job`s, JobSet, RayJob, TrainJob. A batch/v1 Job is not
/// among them: it runs anything, and counts as training only when nothing says otherwise.
pub fn is_training_kind(obj: &Object) -> bool {
    obj.workload.is_some_and(|k| k.purpose == Purpose::Training)
}

/// Kinds made for serving: Deployment, StatefulSet, LeaderWorkerSet, RayService, KServe.
pub fn is_inference_kind(obj: &Object) -> bool {
    obj.workload.is_some_and(|k| k.purpose == Purpose::Serving)
}

/// Replicated long-running servers Kubernetes keeps at a replica count: Deployment, StatefulSet.
pub fn is_server_kind(obj: &Object) -> bool {
    obj.workload.is_some_and(|k| k.replicated_server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_row_decides() {
        let of = |g, k| lookup(g, k).map(|r| (r.family, r.purpose));
        assert_eq!(
            of("kubeflow.org", "PyTorchJob"),
            Some((Family::Kubeflow, Purpose::Training))
        );
        assert_eq!(
            of("kubeflow.org", "Notebook"),
            Some((Family::Kubeflow, Purpose::Any))
        );
        assert_eq!(
            of("serving.kserve.io", "InferenceService"),
            Some((Family::Opaque, Purpose::Serving))
        );
        assert_eq!(
            of("apps", "Deployment"),
            Some((Family::Replicated, Purpose::Serving))
        );
        assert_eq!(
            of("extensions", "Deployment"),
            Some((Family::Replicated, Purpose::Any))
        );
        assert_eq!(
            of("batch.volcano.sh", "Job"),
            Some((Family::Tasks, Purpose::Any))
        );
        assert_eq!(of("apps", "Job"), None);
        assert_eq!(of("example.com", "Job"), None);
    }
}
