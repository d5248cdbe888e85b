use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::is_accelerator_resource;
use crate::quantity;

declare_rule! {
    /// ## What it does
    /// Flags a container that requests an accelerator or device resource (`nvidia.com/gpu`,
    /// `nvidia.com/mig-*`, `amd.com/gpu`, `aws.amazon.com/neuron*`, `vpc.amazonaws.com/efa`, …)
    /// without a limit for it, or whose request differs from its limit. A request without a
    /// limit is a warning for GKE Autopilot (the repository creates Autopilot clusters with
    /// `gcloud container clusters create-auto` or `enable_autopilot = true`, or the pod selects a
    /// `cloud.google.com/compute-class`), whose admission fills the limit in from the request.
    ///
    /// ## Why is this bad?
    /// Extended resources cannot be overcommitted. The API server rejects such a pod
    /// ("Limit must be set for non overcommitable resources", "must be equal to … limit"), so the
    /// Job or Deployment never gets a pod and the failure shows only in controller events.
    ///
    /// ## Example
    /// ```yaml
    /// resources:
    ///   requests:
    ///     nvidia.com/gpu: 1   # no limit
    /// ```
    ///
    /// ## Fix
    /// Put the count in `limits`; the request defaults to the limit, and if you keep the request it
    /// must be the same number.
    /// ```yaml
    /// resources:
    ///   limits:
    ///     nvidia.com/gpu: 1
    /// ```
    name: "gpu-limit-missing",
    category: "resources",
    kinds: &["pod templates"],
    severity: Error,
    summary: "an accelerator requested without a limit, or requests not equal to limits",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, t) in cx.templates() {
        let owner = cx.ix.owner(t);
        for c in &t.containers {
            let Some(requests) = c.requests else { continue };
            let cname = c.name.unwrap_or("<unnamed>");
            for (res, key, req) in requests.entries() {
                if !is_accelerator_resource(res) {
                    continue;
                }
                match c.limits.and_then(|l| l.entry(res)) {
                    None if autopilot(cx, t) => out.push(
                        cx.on(
                            owner,
                            key,
                            format!(
                                "container `{cname}` requests `{res}` without a limit: GKE Autopilot fills the limit in from the request, but any other cluster's API server rejects the pod because extended resources cannot be overcommitted"
                            ),
                        )
                        .with_severity(crate::diag::Severity::Warning)
                        .help(format!(
                            "set `resources.limits.{res}` to the same count, so the manifest runs on every cluster (the request defaults to the limit and can then be dropped)"
                        )),
                    ),
                    None => out.push(
                        cx.on(
                            owner,
                            key,
                            format!(
                                "container `{cname}` requests `{res}` without a limit: the API server rejects the pod because extended resources cannot be overcommitted"
                            ),
                        )
                        .help(format!(
                            "set `resources.limits.{res}` to the same count (the request defaults to the limit and can then be dropped)"
                        )),
                    ),
                    Some((_, lim)) => {
                        let (Some(r), Some(l)) = (
                            req.as_str().and_then(quantity::parse),
                            lim.as_str().and_then(quantity::parse),
                        ) else {
                            continue;
                        };
                        if r != l {
                            out.push(
                                cx.on(
                                    owner,
                                    req,
                                    format!(
                                        "container `{cname}` requests {} `{res}` but its limit is {}: the API server rejects the pod because requests must equal limits for extended resources",
                                        req.as_str().unwrap_or_default(),
                                        lim.as_str().unwrap_or_default()
                                    ),
                                )
                                .related(owner.loc(lim), "the limit")
                                .help("make the request equal to the limit, or drop the request"),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Whether the pod is for GKE Autopilot, whose admission fills in a limit from the request
/// before the API server validates the pod: the repository creates Autopilot clusters, or the
/// pod selects an Autopilot compute class.
fn autopilot(cx: &Ctx, t: &crate::model::PodTemplate<'_>) -> bool {
    t.node_selector()
        .iter()
        .any(|(k, _, _)| *k == "cloud.google.com/compute-class")
        || cx.ix.autopilot()
}
