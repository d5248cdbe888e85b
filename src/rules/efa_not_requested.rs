use super::{Ctx, template_anchor};
use crate::diag::Diagnostic;
use crate::index::workload_gpu_pods;
use crate::sched::instances_for;

const EFA: &str = "vpc.amazonaws.com/efa";

declare_rule! {
    /// ## What it does
    /// Flags a GPU training pod template of a distributed multi-node workload (more than one GPU
    /// pod at once: PyTorchJob/MPIJob replicas, JobSet replicated jobs, RayJob workers, or a Job
    /// with `parallelism` whose launcher spans nodes: `--nnodes`, a rendezvous, `mpirun`,
    /// `MASTER_ADDR`/`WORLD_SIZE`/`NNODES`; a sweep of independent trials is not one) when every instance type it can get is EFA-capable (p4d, p4de, p5, p5e, p5en,
    /// p6-b200, p3dn and the 8xlarge-and-up g4dn/g5/g6/g6e/gr6 sizes, per the embedded catalog) and none of its
    /// containers asks for `vpc.amazonaws.com/efa`. The instance types are those the NodePools
    /// it lands on may launch, narrowed by its own selector and by its GPUs per pod; a pool
    /// whose instance types are open (no family, type or GPU-name list) says nothing, so it is
    /// not flagged. Pods of one GPU each are not flagged either: with so little to all-reduce
    /// per node, they are more often a demonstration than a run the network bounds.
    ///
    /// ## Why is this bad?
    /// EFA devices are extended resources: a pod gets them only by asking, in its limits. Without
    /// them NCCL finds no EFA interface and silently falls back to TCP sockets, so the all-reduce
    /// between nodes runs at a fraction of the bandwidth the instance is priced for (3,200 Gbps on
    /// p5) and a multi-node run takes several times longer on the same bill.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kubeflow.org/v1
    /// kind: PyTorchJob
    /// spec:
    ///   pytorchReplicaSpecs:
    ///     Worker:
    ///       replicas: 4
    ///       template:
    ///         spec:
    ///           nodeSelector: {karpenter.k8s.aws/instance-family: p5}
    ///           containers:
    ///             - name: pytorch
    ///               resources:
    ///                 limits: {nvidia.com/gpu: 8}   # no vpc.amazonaws.com/efa
    /// ```
    ///
    /// ## Fix
    /// Ask for the instance's EFA interfaces (p5.48xlarge has 32, p4d.24xlarge 4) and run the
    /// EFA device plugin on those nodes:
    /// ```yaml
    ///                 limits:
    ///                   nvidia.com/gpu: 8
    ///                   vpc.amazonaws.com/efa: 32
    /// ```
    name: "efa-not-requested",
    category: "performance",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "multi-node GPU training on EFA-capable instances without `vpc.amazonaws.com/efa` in its limits",
    check: check,
    chunked: true,
}

/// Whether the GPU pods of the workload form one distributed job rather than independent pods
/// (a sweep of single-GPU trials needs no EFA): a training operator's kind, or a launcher that
/// spans nodes (`--nnodes`, a rendezvous, `mpirun`, `MASTER_ADDR`/`WORLD_SIZE`/`NNODES`).
fn distributed(owner: &crate::model::Object, t: &crate::model::PodTemplate) -> bool {
    if crate::index::is_training_kind(owner) {
        return true;
    }
    t.gpu_containers().any(|c| {
        let env = c
            .get("env")
            .into_iter()
            .flat_map(|n| n.items())
            .filter_map(|e| e.get("name").and_then(crate::yaml::Node::as_str))
            .any(|n| matches!(n, "MASTER_ADDR" | "WORLD_SIZE" | "NNODES"));
        let launcher = ["command", "args"]
            .into_iter()
            .flat_map(|k| c.get(k).into_iter().flat_map(|n| n.items()))
            .filter_map(crate::yaml::Node::as_str)
            .flat_map(str::split_whitespace)
            .any(|w| {
                w.starts_with("--nnodes")
                    || w.starts_with("--rdzv")
                    || w.starts_with("--master_addr")
                    || w.starts_with("--hostfile")
                    || w == "mpirun"
                    || w == "horovodrun"
            });
        env || launcher
    })
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() || !ix.classes.get(ti).is_some_and(|c| c.is_training()) {
            continue;
        }
        if t.containers
            .iter()
            .any(|c| c.accelerators().iter().any(|(n, _)| *n == EFA))
        {
            continue;
        }
        if workload_gpu_pods(ix, t.owner) < 2 || !distributed(ix.owner(t), t) {
            continue;
        }
        // One GPU per pod: a demo of the mechanics more often than a run the network bounds.
        if t.gpu_containers().map(|c| c.gpu_count()).sum::<u64>() < 2 {
            continue;
        }
        let pools = ix.landing_pools(ti);
        if pools.is_empty() {
            continue;
        }
        let pod = t.constraints();
        let mut types: Vec<&'static crate::catalog::Instance> = Vec::new();
        let mut open = false;
        for &p in &pools {
            match instances_for(pod, &ix.nodepools[p]) {
                Some(is) => types.extend(is),
                None => {
                    open = true;
                    break;
                }
            }
        }
        if open || types.is_empty() || types.iter().any(|i| i.efa == 0) {
            continue;
        }
        types.sort_by_key(|i| i.instance_type);
        types.dedup_by_key(|i| i.instance_type);
        let least = types.iter().map(|i| i.efa).min().unwrap_or(1);
        let shown: Vec<String> = types
            .iter()
            .take(4)
            .map(|i| format!("{} ({} EFA)", i.instance_type, i.efa))
            .collect();
        let more = if types.len() > 4 {
            format!(" and {} more", types.len() - 4)
        } else {
            String::new()
        };
        let owner = ix.owner(t);
        let at = t
            .gpu_containers()
            .find(|c| !c.init)
            .and_then(|c| c.limits.and_then(|l| crate::rules::key_of(c.node, l)))
            .or_else(|| template_anchor(owner, t))
            .unwrap_or(owner.anchor());
        out.push(
            cx.on(
                owner,
                at,
                format!(
                    "{} runs {} GPU pods across nodes on EFA-capable instances ({}{more}), but `{}` asks for no `{EFA}`: NCCL falls back to TCP and inter-node all-reduce runs at a fraction of the network the instances are priced for ({})",
                    owner.describe(),
                    workload_gpu_pods(ix, t.owner),
                    shown.join(", "),
                    t.path,
                    ix.classes[ti].evidence
                ),
            )
            .help(format!(
                "add `{EFA}: {least}` (or the instance's full count) to the GPU container's limits, and run the EFA device plugin on these nodes"
            )),
        );
    }
}
