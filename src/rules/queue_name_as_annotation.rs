use super::Ctx;
use crate::diag::{Diagnostic, Severity};
use crate::model::Object;
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags `kueue.x-k8s.io/queue-name` written as an annotation, on any object's metadata or
    /// on a pod or Job template inside it. It also flags the label when it sits only on a pod
    /// template (or a JobSet's Job template) of a batch Job, JobSet, Kubeflow training job,
    /// RayJob or RayCluster whose own metadata lacks it. Bare Pods (whose metadata is the pod's)
    /// and Deployments, StatefulSets and LeaderWorkerSets (whose pod-group integrations read the
    /// template) are left alone, and so is an autoscaling RayCluster (`enableInTreeAutoscaling`),
    /// which Kueue's RayCluster integration refuses to queue: labelled pods are then queued one by
    /// one by its plain-Pod integration. Where the files beside the object install a Kueue older
    /// than v0.15 (or a vendor's build), the annotation on the object's own metadata still queues
    /// it, as a deprecated alias of the label: a warning, not an error. Where no file names the
    /// Kueue release, it is a warning too, worded for Kueue v0.15 and later: an error only where
    /// the files install such a release. Where they install a release before v0.3, which read
    /// only the annotation, the object's own annotation is left alone.
    ///
    /// ## Why is this bad?
    /// Kueue finds a workload's LocalQueue only through the label on the workload object itself;
    /// the annotation form was removed in v0.15. With the queue name in the wrong place the Job is
    /// not suspended and queued: it starts at once, outside the ClusterQueue's quota and fair
    /// sharing, and competes with admitted workloads for the same GPUs (or, where Kueue manages
    /// jobs without a queue name, it waits forever).
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata:
    ///   name: finetune
    ///   annotations:
    ///     kueue.x-k8s.io/queue-name: team-a   # ignored by Kueue
    /// ```
    ///
    /// ## Fix
    /// Make it a label on the Job's (or JobSet's, PyTorchJob's…) own metadata, not on the pod
    /// template:
    /// ```yaml
    /// metadata:
    ///   name: finetune
    ///   labels:
    ///     kueue.x-k8s.io/queue-name: team-a
    /// ```
    name: "queue-name-as-annotation",
    category: "kueue",
    kinds: &["workloads"],
    severity: Error,
    summary: "`kueue.x-k8s.io/queue-name` as an annotation, or as a label only on the pod template",
    check: check,
    chunked: true,
}

const KEY: &str = "kueue.x-k8s.io/queue-name";

/// Owners whose queue label Kueue reads from the object itself, never from its templates.
fn is_job_like(obj: &Object) -> bool {
    obj.workload.is_some_and(|k| k.queue_label_on_object)
}

/// Where the label belongs for this object.
fn label_home(obj: &Object) -> String {
    match (obj.group, obj.kind) {
        ("batch", "CronJob") => "`spec.jobTemplate.metadata.labels` of the CronJob".to_string(),
        (_, kind) => format!("`metadata.labels` of the {kind}"),
    }
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (oi, obj) in cx.objects() {
        let own_meta = obj.metadata();
        let has_label = obj.label(KEY).is_some()
            || (obj.is("batch", "CronJob")
                && obj
                    .spec()
                    .and_then(|s| s.at(&["jobTemplate", "metadata", "labels"]))
                    .and_then(|l| l.entry(KEY))
                    .is_some());
        // Metadata nested in the object: Job templates, then pod templates (a bare Pod's template
        // metadata is its own). Places are worded only for a finding: this runs on every object.
        let templates = cx.ix.templates_of(oi);
        let job_templates = crate::model::job_template_metadata(obj);
        let mut inner: Vec<(Place<'_>, Node<'_>)> = job_templates
            .iter()
            .map(|jt| (Place::JobTemplate(&jt.path), jt.metadata))
            .collect();
        for t in templates {
            if let Some(m) = t.metadata
                && !own_meta.is_some_and(|o| o.is(m))
            {
                inner.push((Place::PodTemplate(&t.path), m));
            }
        }
        // Every metadata block of the object: its own, then the nested ones.
        let metas = own_meta
            .map(|m| (None, m))
            .into_iter()
            .chain(inner.iter().map(|(p, m)| (Some(p), *m)));
        for (nested, meta) in metas {
            let Some((key, value)) = meta.get("annotations").and_then(|a| a.entry(KEY)) else {
                continue;
            };
            let place = match nested {
                Some(p) => format!("the {}", p.describe()),
                None => format!("the {}'s metadata", obj.kind),
            };
            let home = label_home(obj);
            let queue = value.as_str().unwrap_or_default();
            let shown = shown(value);
            let move_to = |home: &str| {
                if templates.is_empty() || obj.is("", "Pod") {
                    format!("make it a label: move it to {home}")
                } else {
                    format!("make it a label: move it to {home} (not the pod template)")
                }
            };
            // Before v0.3 the annotation was the only form Kueue read.
            if nested.is_none() && cx.ix.kueue_release(obj.file).is_some_and(|v| v < (0, 3)) {
                continue;
            }
            let d = if has_label {
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{KEY}` is also given as an annotation on {place}: Kueue ignores the annotation (removed in v0.15) and uses the label"
                    ),
                )
                .help("remove the annotation; the label already selects the queue")
                .with_severity(Severity::Warning)
            } else if nested.is_none() && cx.ix.kueue_before_v1beta2(obj.file) {
                // The Kueue the files install (before v0.15, or a vendor's build) still reads the
                // object's own annotation as a deprecated alias of the label.
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{shown}` is an annotation on {place}: the Kueue installed beside it still reads it, but it is a deprecated alias that v0.15 removed, so upgrading Kueue leaves the {} unqueued",
                        obj.kind
                    ),
                )
                .help(format!("make it a label: move it to {home}"))
                .with_severity(Severity::Warning)
            } else if nested.is_none() && !cx.ix.kueue_release_known(obj.file) {
                // No release named: Kueue before v0.15 still reads the object's own
                // annotation, so the Job is unqueued only on a current Kueue; not certain.
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{shown}` is an annotation on {place}: Kueue v0.15 and later read only the label (earlier releases read the annotation as a deprecated alias), so there {}",
                        consequence(cx, obj, queue)
                    ),
                )
                .help(format!(
                    "{}; it queues the {} on every Kueue release",
                    move_to(&home),
                    obj.kind
                ))
                .with_severity(Severity::Warning)
            } else {
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{shown}` is an annotation on {place}: Kueue reads only the label (the annotation was removed in v0.15), so {}",
                        consequence(cx, obj, queue)
                    ),
                )
                .help(move_to(&home))
            };
            out.push(d);
        }
        if !is_job_like(obj) || has_label || autoscaling_ray_cluster(obj) {
            continue;
        }
        // The label only on a template: Kueue reads the Job-like object's own labels.
        for (place, meta) in inner {
            let Some((key, value)) = meta.get("labels").and_then(|l| l.entry(KEY)) else {
                continue;
            };
            let place = place.describe();
            let home = label_home(obj);
            let queue = value.as_str().unwrap_or_default();
            let shown = shown(value);
            out.push(
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{shown}` is set only on the {place}: Kueue reads the queue from the {}'s own labels, so {}",
                        obj.kind,
                        consequence(cx, obj, queue)
                    ),
                )
                .help(format!("move the label to {home} (it may stay on the template too)")),
            );
        }
    }
}

/// A RayCluster that autoscales (`enableInTreeAutoscaling: true`): Kueue's RayCluster integration
/// refuses to queue one, so a queue label on its pod templates is Kueue's plain-Pod integration at
/// work, each pod queued on its own, not a misplaced label.
fn autoscaling_ray_cluster(obj: &Object) -> bool {
    obj.kind == "RayCluster"
        && obj
            .spec()
            .and_then(|s| s.get("enableInTreeAutoscaling"))
            .is_some_and(|v| {
                v.yaml11() == Some(crate::yaml::Yaml11::Bool)
                    && v.as_str().is_some_and(|t| t.eq_ignore_ascii_case("true"))
            })
}

/// A metadata block nested in an object, by the path of what holds it.
enum Place<'s> {
    JobTemplate(&'s str),
    PodTemplate(&'s str),
}

impl Place<'_> {
    fn describe(&self) -> String {
        match self {
            Place::JobTemplate(path) => format!("Job template `{path}`"),
            Place::PodTemplate(path) => format!("pod template `{path}`"),
        }
    }
}

/// What happens to a workload whose queue name Kueue does not see (after a "so").
fn consequence(cx: &Ctx, obj: &Object, queue: &str) -> String {
    let defaulted = obj.namespace.is_some()
        && queue != "default"
        && cx.ix.local_queue(obj.namespace, "default").is_some();
    if defaulted {
        format!(
            "Kueue puts the {} in the namespace's `default` LocalQueue instead of `{queue}`",
            obj.kind
        )
    } else {
        format!(
            "the {} is never queued and runs outside the ClusterQueue's quota",
            obj.kind
        )
    }
}

/// `kueue.x-k8s.io/queue-name: <value>` as written, for messages.
fn shown(value: Node<'_>) -> String {
    match value.as_str().unwrap_or_default() {
        "" => KEY.to_string(),
        queue => format!("{KEY}: {queue}"),
    }
}
