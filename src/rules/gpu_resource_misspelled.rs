use super::{Ctx, close_enough, edit_distance_within};
use crate::diag::Diagnostic;
use crate::model::is_accelerator_resource;

declare_rule! {
    /// ## What it does
    /// Flags a container that asks for a resource whose name is a near miss of a well-known
    /// device resource: `nvidia/gpu` or `nvidia.com/gpus` for `nvidia.com/gpu`, `amd/gpu` for
    /// `amd.com/gpu`, `aws.amazon.com/nueron` for `aws.amazon.com/neuron`. The well-known ones
    /// are `nvidia.com/gpu`, `amd.com/gpu`, `aws.amazon.com/neuron`, `…/neuroncore`,
    /// `…/neurondevice`, `habana.ai/gaudi`, `vpc.amazonaws.com/efa` and `gpu.intel.com/i915`.
    /// A near miss is at most two edits away, or differs only in case, or writes the vendor's
    /// bare name for its domain. Names a device plugin advertises under its own domain (HAMi's
    /// `nvidia.com/gpumem`, `nvidia.com/gpu.shared`, MIG profiles), other vendors' names
    /// (`fake.com/gpu`) and placeholders are left alone. Also flagged: the resources of GKE's
    /// TPU Nodes (`cloud-tpus.google.com/v2`, `v3` and their `preemptible-` forms), which no
    /// node has advertised since TPU Nodes were retired in 2025, and the kubelet's
    /// `alpha.kubernetes.io/nvidia-gpu`, removed in Kubernetes 1.11.
    ///
    /// ## Why is this bad?
    /// The API server accepts any extended resource name with a domain, so the typo is not
    /// rejected: the pod is created and waits for a node that advertises that name. No device
    /// plugin does, so no node ever has it, and the pod stays Pending ("Insufficient
    /// nvidia/gpu"). Karpenter launches nothing for it either, and nothing else reports it.
    ///
    /// ## Example
    /// ```yaml
    /// resources:
    ///   limits:
    ///     nvidia/gpu: 1
    /// ```
    ///
    /// ## Fix
    /// Use the name the device plugin advertises (`nvidia.com/gpu: 1`), in `limits` and in
    /// `requests`.
    name: "gpu-resource-misspelled",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Error,
    summary: "a container asks for a near miss of a GPU resource name, which no node has",
    check: check,
    chunked: true,
}

/// Device resources the usual device plugins advertise.
const DEVICES: [&str; 8] = [
    "nvidia.com/gpu",
    "amd.com/gpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "habana.ai/gaudi",
    "vpc.amazonaws.com/efa",
    "gpu.intel.com/i915",
];

/// The well-known name `name` is a near miss of, if any.
pub(crate) fn near_miss(name: &str) -> Option<&'static str> {
    // A resource of a vendor's own domain is the vendor's to name (HAMi's `nvidia.com/gpumem`,
    // a renamed time-sliced `nvidia.com/gpu-shared`), unless only its case is off.
    let own_domain = |d: &str| {
        let (domain, _) = d.split_once('/').unwrap_or((d, ""));
        name.split_once('/').is_some_and(|(n, _)| n == domain)
    };
    if !name.contains('/') || is_accelerator_resource(name) || crate::quantity::is_placeholder(name)
    {
        return None;
    }
    // The device's name under the vendor's bare name for a domain (`nvidia/gpu`).
    let bare_domain = |d: &str| {
        let (Some((nd, nr)), Some((dd, dr))) = (name.split_once('/'), d.split_once('/')) else {
            return false;
        };
        nr == dr && nd != dd && dd.split('.').next() == Some(nd)
    };
    DEVICES
        .iter()
        .filter(|d| !own_domain(d) || name.eq_ignore_ascii_case(d))
        .filter_map(|d| {
            if bare_domain(d) || name.eq_ignore_ascii_case(d) {
                return Some((1, *d));
            }
            // Two edits at most: a third makes another vendor's name (`fake.com/gpu` of a
            // device plugin lab is three from `amd.com/gpu`).
            let dist = edit_distance_within(name, d, 2)?;
            close_enough(name, dist).then_some((dist, *d))
        })
        .min()
        .map(|(_, d)| d)
}

/// The resources of GKE's TPU Nodes (`cloud-tpus.google.com/v3`, `…/preemptible-v2`), which no
/// GKE cluster advertises since TPU Nodes were retired.
fn retired_tpu(name: &str) -> bool {
    name.strip_prefix("cloud-tpus.google.com/")
        .is_some_and(|v| matches!(v.strip_prefix("preemptible-").unwrap_or(v), "v2" | "v3"))
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, t) in cx.templates() {
        let owner = cx.ix.owner(t);
        for c in &t.containers {
            let cname = c.name.unwrap_or("<unnamed>");
            let mut seen: Vec<&str> = Vec::new();
            for (field, map) in [("limits", c.limits), ("requests", c.requests)] {
                for (res, key, _) in map.into_iter().flat_map(|m| m.entries()) {
                    if seen.contains(&res) {
                        continue;
                    }
                    let (why, help) = if res == "alpha.kubernetes.io/nvidia-gpu" {
                        (
                            "the kubelet's own GPU resource of Kubernetes 1.10 and before, removed in 1.11 for device plugins: no node advertises it any more, so the pod stays Pending".to_string(),
                            "ask for `nvidia.com/gpu`, which the NVIDIA device plugin advertises, in `limits`".to_string(),
                        )
                    } else if retired_tpu(res) {
                        (
                            "a resource of GKE's TPU Nodes, an architecture retired in 2025 for TPU VMs: no node advertises it any more, so the pod stays Pending".to_string(),
                            "run on TPU VMs: ask for `google.com/tpu` and select the slice with `cloud.google.com/gke-tpu-accelerator` and `cloud.google.com/gke-tpu-topology`".to_string(),
                        )
                    } else if let Some(meant) = near_miss(res) {
                        (
                            format!(
                                "a near miss of `{meant}`: no device plugin advertises `{res}`, so no node ever has it and the pod stays Pending (the API server accepts any resource name with a domain)"
                            ),
                            format!("did you mean `{meant}`? Rename it in `limits` and `requests`"),
                        )
                    } else {
                        continue;
                    };
                    seen.push(res);
                    out.push(
                        cx.on(
                            owner,
                            key,
                            format!("container `{cname}` asks for `{res}` in `{field}`, {why}"),
                        )
                        .help(help),
                    );
                }
            }
        }
    }
}
