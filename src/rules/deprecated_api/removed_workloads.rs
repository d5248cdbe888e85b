//! GPU workloads written at an API version Kubernetes removed long ago (`extensions/v1beta1`
//! Deployments, `batch/v1beta1` CronJobs): no cluster of a supported release serves them.

use crate::diag::{Diagnostic, Severity};
use crate::model::{Object, is_accelerator_resource};
use crate::rules::Ctx;
use crate::yaml::Node;

/// The release that removed the version, and the one that replaces it.
fn removed(obj: &Object) -> Option<(&'static str, &'static str)> {
    Some(match (obj.group, obj.version, obj.kind) {
        ("extensions", "v1beta1", "Deployment" | "DaemonSet" | "ReplicaSet") => ("1.16", "apps/v1"),
        ("apps", "v1beta1", "Deployment" | "StatefulSet") => ("1.16", "apps/v1"),
        ("apps", "v1beta2", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") => {
            ("1.16", "apps/v1")
        }
        ("batch", "v2alpha1", "CronJob") => ("1.21", "batch/v1"),
        ("batch", "v1beta1", "CronJob") => ("1.25", "batch/v1"),
        _ => return None,
    })
}

/// Whether the workload's pods ask for an accelerator (the kubelet's old
/// `alpha.kubernetes.io/nvidia-gpu` included).
fn asks_for_accelerators(obj: &Object) -> bool {
    let template = match obj.kind {
        "CronJob" => obj
            .spec()
            .and_then(|s| s.at(&["jobTemplate", "spec", "template"])),
        _ => obj.spec().and_then(|s| s.get("template")),
    };
    let Some(pod) = template.and_then(|t| t.get("spec")) else {
        return false;
    };
    ["containers", "initContainers"]
        .into_iter()
        .flat_map(|k| pod.get(k).into_iter().flat_map(Node::items))
        .flat_map(|c| {
            ["limits", "requests"]
                .into_iter()
                .filter_map(move |k| c.at(&["resources", k]))
        })
        .flat_map(|m| m.entries())
        .any(|(k, _, _)| is_accelerator_resource(k) || k == "alpha.kubernetes.io/nvidia-gpu")
}

/// The finding for a GPU workload of a removed version.
pub(super) fn removed_workload(cx: &Ctx, obj: &Object) -> Option<Diagnostic> {
    let (since, to) = removed(obj)?;
    // A program's test inputs (conversion tests keep old versions on purpose) are not applied.
    let path = cx.ix.files.get(obj.file).map_or("", |f| f.path.as_str());
    let input =
        !cx.ix.settings.selected(super::RULE.name) && crate::source::in_test_input_dir(path);
    if !asks_for_accelerators(obj) || input {
        return None;
    }
    let at = obj.root.get("apiVersion").unwrap_or(obj.anchor());
    let selector = if to == "apps/v1" && obj.spec().and_then(|s| s.get("selector")).is_none() {
        " and give it the `spec.selector` `apps/v1` requires, matching its pod template's labels"
    } else {
        ""
    };
    Some(
        cx.on(
            obj,
            at,
            format!(
                "{} is written as `{}`, which no Kubernetes release serves since {since}: applying it fails (`no matches for kind \"{}\" in version \"{}\"`), so its GPU pods never run",
                obj.describe(),
                obj.api_version,
                obj.kind,
                obj.api_version,
            ),
        )
        .with_severity(Severity::Error)
        .help(format!("move it to `apiVersion: {to}`{selector}")),
    )
}
