use super::Ctx;
use super::gpu_count_mismatch_parallelism::local_ranks;
use crate::diag::{Diagnostic, Loc};
use crate::model::{Container, Object};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a vLLM or SGLang server that runs several ranks in one container (a tensor,
    /// pipeline or data parallel size above 1, on a container with more than one GPU) while
    /// nothing is mounted at `/dev/shm`. The server and its sizes are read as
    /// `gpu-count-mismatch-parallelism` reads them, and only when they are certain. So is a
    /// training launcher told to start four or more processes on a container's GPUs (torchrun's
    /// `--nproc_per_node`, DeepSpeed's `--num_gpus`, read as `gpu-count-mismatch-processes`
    /// reads them): NCCL and PyTorch's DataLoader workers share memory through `/dev/shm` too,
    /// and NCCL's segments grow with the ranks (two ranks of a small job may fit in 64 MiB).
    ///
    /// Judged only for pods written out in full (Pods, Deployments, StatefulSets, ReplicaSets,
    /// Jobs, CronJobs) whose container names its image: serving operators (KServe, KubeAI,
    /// AIBrix, the NIM operator …) and kustomize patches add volumes of their own. Not flagged:
    /// a pod with `hostIPC: true` (the node's `/dev/shm`), LeaderWorkerSet and Ray workloads
    /// (KubeRay mounts a memory-backed `/dev/shm`, sized to the memory limit, in every Ray pod).
    ///
    /// ## Why is this bad?
    /// The ranks of a multi-GPU server exchange tensors and control messages through shared
    /// memory (vLLM's message queues, NCCL's shared-memory transport). A container's `/dev/shm`
    /// is the container runtime's default, 64 MiB under containerd and CRI-O, far less than the
    /// queues ask for: the server dies with a bus error (`SIGBUS`) or an NCCL
    /// `unhandled system error` at start or under its first load, and the pod restarts in a loop.
    ///
    /// ## Example
    /// ```yaml
    /// containers:
    ///   - name: vllm
    ///     image: vllm/vllm-openai:v0.9.0
    ///     args: [--model, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "4"]
    ///     resources:
    ///       limits: {nvidia.com/gpu: 4}
    /// ```
    ///
    /// ## Fix
    /// Mount a memory-backed `emptyDir` at `/dev/shm`, as vLLM's and SGLang's Kubernetes guides
    /// do (it counts against the pod's memory limit):
    /// ```yaml
    ///     volumeMounts:
    ///       - {name: dshm, mountPath: /dev/shm}
    /// volumes:
    ///   - name: dshm
    ///     emptyDir: {medium: Memory, sizeLimit: 16Gi}
    /// ```
    name: "shm-volume-missing",
    category: "resources",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a multi-GPU vLLM or SGLang server or training launcher with the runtime's 64 MiB /dev/shm",
    check: check,
    chunked: true,
}

const GPU: &str = "nvidia.com/gpu";

/// Owners whose pod template is the whole pod (no controller adds volumes to it).
const WRITTEN_OUT: [&str; 6] = [
    "Pod",
    "Deployment",
    "StatefulSet",
    "ReplicaSet",
    "Job",
    "CronJob",
];

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (_, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let owner = ix.owner(t);
        // LeaderWorkerSet and Ray pods, which span nodes, are none of these.
        if !WRITTEN_OUT.contains(&owner.kind)
            || t.spec.get("hostIPC").and_then(Node::as_str) == Some("true")
        {
            continue;
        }
        for c in t.containers.iter().filter(|c| !c.init) {
            let Some((limit, gpus)) = c.whole_limit(GPU) else {
                continue;
            };
            if gpus < 2 || c.get("image").is_none() || mounts_shm(c) {
                continue;
            }
            let Some(r) = local_ranks(cx, t, c).or_else(|| launched(cx, t, c)) else {
                continue;
            };
            if r.ranks < 2 {
                continue;
            }
            out.push(diagnostic(cx, owner, t.loc(limit), c, gpus, r));
        }
    }
}

fn diagnostic(
    cx: &Ctx,
    owner: &Object,
    limit: Loc,
    c: &Container,
    gpus: u64,
    r: super::gpu_count_mismatch_parallelism::LocalRanks,
) -> Diagnostic {
    let name = c.name.unwrap_or("<unnamed>");
    let who = if matches!(r.engine, "torchrun" | "DeepSpeed") {
        "the job"
    } else {
        "the server"
    };
    let formula = if r.formula.is_empty() {
        String::new()
    } else {
        format!(" ({})", r.formula)
    };
    cx.at(
            r.at,
            format!(
                "{} runs {} ranks{formula} on {gpus} GPUs in container `{name}` of {}, which mounts nothing at `/dev/shm`: the ranks exchange data through shared memory, the container runtime's default `/dev/shm` is 64 MiB, and {who} dies with a bus error or an NCCL `unhandled system error` once it outgrows it",
                r.engine,
                r.ranks,
                owner.describe(),
            ),
        )
        .object(Some(owner.obj_ref()))
        .help(
            "mount a memory-backed emptyDir at /dev/shm: `volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}]` and `volumeMounts: [{name: dshm, mountPath: /dev/shm}]` (it counts against the pod's memory limit)",
        )
        .related(limit, format!("{gpus} GPUs in one container"))
}

/// The processes a launcher starts in the container, when its command says how many:
/// torchrun's (or `torch.distributed.run`'s) `--nproc_per_node`, DeepSpeed's `--num_gpus`.
fn launched(
    cx: &Ctx,
    t: &crate::model::PodTemplate,
    c: &Container,
) -> Option<super::gpu_count_mismatch_parallelism::LocalRanks> {
    // Outside training only the launchers' own flags are read (not Lightning's `--gpus`).
    let claim = super::gpu_count_mismatch_processes::command_claims(cx, t, c, false)
        .into_iter()
        .next()
        // NCCL's shared-memory segments grow with the ranks on a node: two ranks of a small
        // job may fit in 64 MiB, four or more outgrow it.
        .filter(|k| k.n >= 4)?;
    let engine = if claim.what == "`--num_gpus`" {
        "DeepSpeed"
    } else {
        "torchrun"
    };
    Some(super::gpu_count_mismatch_parallelism::LocalRanks {
        engine,
        ranks: claim.n,
        formula: format!("`{} {}`", claim.what.trim_matches('`'), claim.n),
        at: claim.loc,
    })
}

/// Whether anything is mounted at `/dev/shm` (a memory `emptyDir`, the node's through a
/// `hostPath`, …).
fn mounts_shm(c: &Container) -> bool {
    c.volume_mounts().any(|m| {
        m.get("mountPath")
            .and_then(Node::as_str)
            .is_some_and(|p| p.trim().trim_end_matches('/') == "/dev/shm")
    })
}
