//! Workload kinds by family: which kinds are made for training, which serve.

use super::Object;

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

/// Replicated long-running servers Kubernetes keeps at a replica count: Deployment, StatefulSet.
pub fn is_server_kind(obj: &Object) -> bool {
    matches!(
        (obj.group, obj.kind),
        ("apps", "Deployment" | "StatefulSet")
    )
}
