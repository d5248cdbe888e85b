use super::Ctx;
use super::support::shared_gpu::shared;
use crate::diag::{Diagnostic, Severity};
use crate::model::is_gpu_resource;
use crate::model::nvidia::plugin_config::SharingKind;

declare_rule! {
    /// ## What it does
    /// Flags a container that asks for more than one replica of a shared GPU: a resource the
    /// NVIDIA device plugin advertises in replicas by time-slicing or MPS on the nodes of every
    /// NodePool the pod can land on (see `shared-gpu-for-training` for how that is read), or one
    /// whose name says it is shared (`nvidia.com/gpu.shared`).
    ///
    /// An error where the plugin refuses it: MPS always does, time-slicing with
    /// `failRequestsGreaterThanOne: true`. A warning otherwise.
    ///
    /// ## Why is this bad?
    /// A replica of a time-sliced GPU is a right to take turns on it, not a share of its compute:
    /// two replicas give no more compute than one and may even be the same GPU twice, while the
    /// pod holds two places other pods could use. Where the plugin refuses such a request, the
    /// kubelet rejects the pod at admission (`UnexpectedAdmissionError: … maximum request size
    /// for shared resources is 1`) and nothing retries it: it must be deleted and recreated.
    ///
    /// ## Example
    /// ```yaml
    /// # device plugin configuration: timeSlicing, renameByDefault: true, replicas: 4
    ///       containers:
    ///         - name: server
    ///           resources:
    ///             limits:
    ///               nvidia.com/gpu.shared: 2   # expects twice the compute; gets turns on one GPU
    /// ```
    ///
    /// ## Fix
    /// Ask for one replica. For more compute, ask for whole GPUs on a pool without sharing, or a
    /// larger MIG profile.
    name: "shared-gpu-count-above-one",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a container asks for more than one replica of a time-sliced or MPS-shared GPU",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        for c in t.gpu_containers() {
            for (resource, key) in c.accelerators() {
                if !is_gpu_resource(resource) {
                    continue;
                }
                let count = [c.limits, c.requests]
                    .into_iter()
                    .flatten()
                    .find_map(|m| m.get(resource))
                    .and_then(|v| v.as_str())
                    .and_then(crate::quantity::whole)
                    .unwrap_or(0);
                if count < 2 {
                    continue;
                }
                let Some(how) = shared(ix, ti, resource) else {
                    continue;
                };
                let owner = ix.owner(t);
                let container = c.name.unwrap_or("?");
                let (consequence, severity) = if how.fails_above_one {
                    let why = match how.kind {
                        Some(SharingKind::Mps) => "MPS allows one replica per container",
                        _ => "`failRequestsGreaterThanOne: true`",
                    };
                    (
                        format!(
                            "the device plugin refuses more than one replica ({why}): the kubelet rejects the pod with UnexpectedAdmissionError and nothing retries it"
                        ),
                        Severity::Error,
                    )
                } else {
                    (
                        format!(
                            "a replica is a turn on a shared GPU, not a share of its compute: {count} give no more than one and may be the same GPU more than once"
                        ),
                        Severity::Warning,
                    )
                };
                let mut d = cx
                    .on(
                        owner,
                        key,
                        format!(
                            "{} asks for {count} `{resource}` in container `{container}`, GPUs that are {}; {consequence}",
                            super::describe_template(owner, t),
                            how.describe(),
                        ),
                    )
                    .help("ask for 1; for more compute ask for whole GPUs on a pool without sharing, or a larger MIG profile");
                d.severity = severity;
                if let Some((loc, source)) = &how.config {
                    d = d.related(
                        cx.within_loc(*loc, "replicas", None),
                        format!("the GPUs are shared here ({source})"),
                    );
                }
                out.push(d);
            }
        }
    }
}
