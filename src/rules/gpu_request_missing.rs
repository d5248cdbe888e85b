use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Container, PodTemplate};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a workload that runs a GPU image on GPU nodes but asks for no GPU: a container
    /// whose image needs one (NVIDIA NIM, Triton, vLLM's `vllm/vllm-openai`, Text Generation
    /// Inference, SGLang, TensorRT-LLM, DeepStream, `nvidia/cuda`, or a tag that says `cuda` or
    /// `gpu`), in a pod that tolerates a GPU taint (`nvidia.com/gpu`, `amd.com/gpu`) or selects
    /// GPU nodes by label (`nvidia.com/gpu.product`, `cloud.google.com/gke-accelerator`,
    /// `karpenter.k8s.aws/instance-gpu-name`…), while no container names a device resource in
    /// `requests` or `limits`.
    ///
    /// Not flagged: DaemonSets (node agents run on GPU nodes without taking a GPU); a container
    /// that names any device resource, even `nvidia.com/gpu: 0` (a Ray head kept off the GPU on
    /// purpose); pods with DRA resource claims, a `runtimeClassName`, or `NVIDIA_VISIBLE_DEVICES`
    /// set in the container (GPU access chosen outside the device plugin); tags that say `cpu`.
    ///
    /// ## Why is this bad?
    /// Only a request makes the device plugin hand a GPU to the container. Without one it gets
    /// none: where the runtime exposes devices only through the plugin (GKE, Bottlerocket, most
    /// current setups) the server finds no GPU and runs on the CPU of a GPU node, far slower, or
    /// fails to start; where the node's default runtime reads the image's
    /// `NVIDIA_VISIBLE_DEVICES=all`, it sees every GPU of the node and shares them, unaccounted,
    /// with the pods that did request them. Either way the GPU node is held by a pod the
    /// scheduler counts as using no GPU.
    ///
    /// ## Example
    /// ```yaml
    /// spec:
    ///   tolerations:
    ///     - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
    ///   containers:
    ///     - name: triton
    ///       image: nvcr.io/nvidia/tritonserver:24.05-py3
    ///       resources:
    ///         limits: {memory: 16Gi}
    /// ```
    ///
    /// ## Fix
    /// Ask for the GPUs the server uses, in `limits`:
    /// ```yaml
    ///       resources:
    ///         limits: {memory: 16Gi, nvidia.com/gpu: 1}
    /// ```
    /// If it is meant to run without a GPU, drop the GPU toleration or node selector so that it
    /// does not hold a GPU node.
    name: "gpu-request-missing",
    category: "resources",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a GPU image on GPU nodes whose pod asks for no GPU",
    check: check,
    chunked: true,
}

/// Node labels only GPU nodes carry (the NVIDIA GPU feature discovery's, the clouds' and
/// Karpenter's).
const GPU_NODE_LABELS: [&str; 11] = [
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.family",
    "nvidia.com/gpu.machine",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-count",
    "eks.amazonaws.com/instance-gpu-name",
];

/// Taints of GPU nodes, with the resource a pod asks for there.
const GPU_TAINTS: [(&str, &str); 2] = [
    ("nvidia.com/gpu", "nvidia.com/gpu"),
    ("amd.com/gpu", "amd.com/gpu"),
];

/// Image repositories that need a GPU to serve or run at all.
const GPU_IMAGES: [&str; 10] = [
    "/nim/",
    "tritonserver",
    "vllm/vllm-openai",
    "text-generation-inference",
    "sglang",
    "tensorrt-llm",
    "tensorrt_llm",
    "trtllm",
    "deepstream",
    "nvidia/cuda",
];

/// What in the image says it needs a GPU, when something does.
fn gpu_image(image: &str) -> Option<&'static str> {
    let image = image.trim().to_ascii_lowercase();
    let (repo, tag) = match image.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, t.split('@').next().unwrap_or(t)),
        _ => (image.split('@').next().unwrap_or(&image), ""),
    };
    let parts = || tag.split(['-', '_', '.']);
    if parts().any(|p| p.contains("cpu")) || repo.contains("cpu") {
        return None;
    }
    if GPU_IMAGES.iter().any(|g| repo.contains(g)) {
        return Some("a GPU server image");
    }
    if parts().any(|p| p == "gpu" || p.starts_with("cuda")) {
        return Some("a GPU build of its image");
    }
    None
}

/// What says the pod is meant for GPU nodes: (the resource asked there, its node, what it is).
fn pinned<'a>(t: &PodTemplate<'a>) -> Option<(&'static str, Node<'a>, String)> {
    let c = t.constraints();
    for tol in &c.tolerations {
        if let Some((_, res)) = GPU_TAINTS.iter().find(|(k, _)| *k == tol.key) {
            return Some((
                res,
                tol.node,
                format!("it tolerates the `{}` taint", tol.key),
            ));
        }
    }
    let by_label = |key: &str| {
        let key = crate::catalog::karpenter_key(key);
        GPU_NODE_LABELS.contains(&key)
    };
    for (k, key, _) in t.node_selector() {
        if by_label(k) {
            return Some(("nvidia.com/gpu", key, format!("it selects `{k}`")));
        }
    }
    for term in t.affinity_terms() {
        for e in term {
            if by_label(e.key) && e.op != "DoesNotExist" && e.op != "NotIn" {
                return Some(("nvidia.com/gpu", e.node, format!("it requires `{}`", e.key)));
            }
        }
    }
    None
}

/// Whether the container names a device resource (any with a domain), even at zero.
fn names_device(c: &Container<'_>) -> bool {
    [c.requests, c.limits]
        .into_iter()
        .flatten()
        .flat_map(|m| m.entries())
        .any(|(k, _, _)| k.contains('/'))
}

/// Whether the container chooses its GPUs itself (`NVIDIA_VISIBLE_DEVICES`).
fn picks_devices(c: &Container<'_>) -> bool {
    c.node
        .get("env")
        .into_iter()
        .flat_map(|e| e.items())
        .any(|v| v.get("name").and_then(Node::as_str) == Some("NVIDIA_VISIBLE_DEVICES"))
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (_, t) in cx.templates() {
        let owner = ix.owner(t);
        if owner.kind == "DaemonSet"
            || t.requests_gpu()
            || t.containers
                .iter()
                .any(|c| names_device(c) || picks_devices(c))
            || ["resourceClaims", "runtimeClassName"]
                .iter()
                .any(|k| t.spec.get(k).is_some())
        {
            continue;
        }
        let found = t.containers.iter().filter(|c| !c.init).find_map(|c| {
            let image = c.node.get("image")?;
            let what = gpu_image(image.as_str()?)?;
            Some((c, image, what))
        });
        let Some((c, image, what)) = found else {
            continue;
        };
        let Some((res, at, how)) = pinned(t) else {
            continue;
        };
        let cname = c.name.unwrap_or("<unnamed>");
        let shown = image.as_str().unwrap_or_default();
        let loc = c.node.get("resources").unwrap_or(image);
        out.push(
            cx.on(
                owner,
                loc,
                format!(
                    "container `{cname}` of {} runs {what} (`{shown}`) and is meant for GPU nodes ({how}), but no container asks for `{res}`: the device plugin gives it no GPU, so the server finds none and runs on the CPU, or, where the node's runtime exposes every GPU, uses them unaccounted beside the pods that asked for them",
                    owner.describe()
                ),
            )
            .object(Some(owner.obj_ref()))
            .related(owner.loc(at), "meant for GPU nodes here".to_string())
            .help(format!(
                "ask for the GPUs it uses in `resources.limits` (`{res}: 1`); if it is meant to run without a GPU, drop the GPU toleration or selector so it does not hold a GPU node"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::gpu_image;

    #[test]
    fn images_that_need_a_gpu() {
        assert!(gpu_image("nvcr.io/nvidia/tritonserver:24.05-py3").is_some());
        assert!(gpu_image("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3").is_some());
        assert!(gpu_image("vllm/vllm-openai:v0.6.3").is_some());
        assert!(gpu_image("pytorch/pytorch:2.2.0-cuda12.1-cudnn8-runtime").is_some());
        assert!(gpu_image("tensorflow/tensorflow:2.15.0-gpu").is_some());
        assert!(gpu_image("registry.local:5000/team/server:cuda12").is_some());
        // CPU builds, and images that say nothing.
        assert!(
            gpu_image("ghcr.io/huggingface/text-generation-inference:latest-intel-cpu").is_none()
        );
        assert!(gpu_image("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.8.5").is_none());
        assert!(gpu_image("ollama/ollama:0.3.0").is_none());
        assert!(gpu_image("registry.local:5000/team/server").is_none());
        assert!(gpu_image("python:3.11-slim").is_none());
    }
}
