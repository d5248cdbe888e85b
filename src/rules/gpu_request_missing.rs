use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Container, PodTemplate};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a workload that runs a GPU model server on GPU nodes but asks for no GPU: a
    /// container of a model server's image (NVIDIA NIM, Triton, vLLM's `vllm/vllm-openai`, Text
    /// Generation Inference, SGLang, TensorRT-LLM, DeepStream) that runs the server (the image's
    /// own entrypoint, or a command that starts it: `vllm serve`, `tritonserver`,
    /// `sglang.launch_server`…), in a pod that tolerates a GPU taint (`nvidia.com/gpu`,
    /// `amd.com/gpu`) or selects GPU nodes by label (`nvidia.com/gpu.product`,
    /// `cloud.google.com/gke-accelerator`, `karpenter.k8s.aws/instance-gpu-name`…), while no
    /// container names a device resource in `requests` or `limits`.
    ///
    /// Not flagged: DaemonSets (node agents run on GPU nodes without taking a GPU); a container
    /// that names any device resource, even `nvidia.com/gpu: 0` (a Ray head kept off the GPU on
    /// purpose); another command run from a server's image (a router, a benchmark client); CUDA
    /// base images and `-gpu` framework builds, which also run CPU work; pods with DRA resource
    /// claims, a `runtimeClassName` or a `schedulerName` of their own, or `NVIDIA_VISIBLE_DEVICES`
    /// or `CUDA_VISIBLE_DEVICES` set in a container (GPU access chosen outside the device
    /// plugin); tags that say `cpu`.
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
    summary: "a GPU model server meant for GPU nodes whose pod asks for no GPU",
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

/// Images of model servers that need a GPU to serve (a CUDA base image or a `-gpu` build of a
/// framework also runs routers, benchmarks clients and Ray heads, which need none).
const GPU_IMAGES: [&str; 9] = [
    "/nim/",
    "tritonserver",
    "vllm/vllm-openai",
    "text-generation-inference",
    "sglang",
    "tensorrt-llm",
    "tensorrt_llm",
    "trtllm",
    "deepstream",
];

/// Words of a command that start the image's server (else the image's own entrypoint does).
const SERVER_WORDS: [&str; 7] = [
    "serve",
    "launch_server",
    "tritonserver",
    "text-generation-launcher",
    "api_server",
    "trtllm-serve",
    "deepstream-app",
];

/// Whether the image is a GPU model server's.
fn gpu_image(image: &str) -> bool {
    let image = image.trim().to_ascii_lowercase();
    let repo = crate::intent::image_repository(&image);
    let tag = image[repo.len()..].trim_start_matches(':');
    !(tag.contains("cpu") || repo.contains("cpu")) && GPU_IMAGES.iter().any(|g| repo.contains(g))
}

/// Whether the container runs the image's server: its own entrypoint (no `command`), or a
/// command that starts it (a program, a module's part or a script's word among
/// [`SERVER_WORDS`]). A router, a benchmark client or a script run from the same image needs no
/// GPU.
fn runs_server(c: &Container<'_>) -> bool {
    if c.node.get("command").is_none() {
        return true;
    }
    ["command", "args"]
        .into_iter()
        .flat_map(|k| c.node.get(k))
        .flat_map(|n| {
            // Exec form is a list; a scalar is one string too.
            let items: Vec<Node<'_>> = n.items().collect();
            if items.is_empty() { vec![n] } else { items }
        })
        .filter_map(Node::as_str)
        .flat_map(crate::intent::lex)
        .filter_map(|t| match t {
            crate::intent::Tok::Word(w) => Some(w),
            crate::intent::Tok::Sep => None,
        })
        // `/opt/tritonserver/bin/tritonserver`, `sglang.launch_server`: each part is a word.
        .flat_map(|w| w.split(['.', '/']))
        .any(|w| SERVER_WORDS.contains(&w))
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

/// Whether the container chooses its GPUs itself (`NVIDIA_VISIBLE_DEVICES`,
/// `CUDA_VISIBLE_DEVICES`).
fn picks_devices(c: &Container<'_>) -> bool {
    c.node
        .get("env")
        .into_iter()
        .flat_map(|e| e.items())
        .any(|v| {
            matches!(
                v.get("name").and_then(Node::as_str),
                Some("NVIDIA_VISIBLE_DEVICES" | "CUDA_VISIBLE_DEVICES")
            )
        })
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
            || ["resourceClaims", "runtimeClassName", "schedulerName"]
                .iter()
                .any(|k| t.spec.get(k).is_some())
        {
            continue;
        }
        let found = t.containers.iter().filter(|c| !c.init).find_map(|c| {
            let image = c.node.get("image")?;
            (gpu_image(image.as_str()?) && runs_server(c)).then_some((c, image))
        });
        let Some((c, image)) = found else {
            continue;
        };
        let what = "a GPU model server";
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
        assert!(gpu_image("nvcr.io/nvidia/tritonserver:24.05-py3"));
        assert!(gpu_image("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3"));
        assert!(gpu_image("vllm/vllm-openai:v0.6.3"));
        assert!(gpu_image("lmsysorg/sglang:v0.4.0"));
        // CPU builds, base images and framework builds that run anything.
        assert!(!gpu_image(
            "ghcr.io/huggingface/text-generation-inference:latest-intel-cpu"
        ));
        assert!(!gpu_image(
            "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.8.5"
        ));
        assert!(!gpu_image("pytorch/pytorch:2.2.0-cuda12.1-cudnn8-runtime"));
        assert!(!gpu_image("nvidia/cuda:12.4.0-devel-ubuntu22.04"));
        assert!(!gpu_image("rayproject/ray:2.35.0-py311-gpu"));
        assert!(!gpu_image("ollama/ollama:0.3.0"));
    }
}
