use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::intent::Intent;
use crate::model::{Container, PodTemplate};
use crate::quantity;
use crate::yaml::Node;
use std::collections::HashMap;

mod risk;
mod script;
mod targets;
use risk::{Risk, risk_of, with_risk};
use targets::{Target, saves_no_checkpoint, targets_of};

declare_rule! {
    /// ## What it does
    /// Flags a GPU training container (Job, PyTorchJob and other Kubeflow jobs, JobSet, RayJob…)
    /// that has no durable volume mounted, or whose checkpoint argument or environment variable
    /// (`--checkpoint_dir`, `--ckpt_path`, `--output_dir`, `--save_dir`, `CHECKPOINT_DIR`,
    /// `OUTPUT_DIR`…, also inside `sh -c "…"` scripts) points outside every durable mount: into
    /// an `emptyDir`, generic ephemeral or `hostPath` volume, a relative path, or the container's
    /// own filesystem. Durable means a PersistentVolumeClaim, CSI (EFS, FSx), NFS, EBS
    /// and other network volumes, or a remote URI such as `s3://…`. Values with placeholders
    /// (`$(VAR)`, `${VAR}`) are skipped, and so are paths under `/tmp`, `/var/tmp` and
    /// `/dev/shm`: scratch by choice, meant to be lost or copied elsewhere by the program.
    ///
    /// It says why the loss is likely here: spot capacity (a NodePool that allows spot, the pod's
    /// node selector or a Kueue flavor; of the pools the pod fits, never of pools its selectors or
    /// tolerations rule out), Karpenter disruption (a NodePool that consolidates
    /// underutilized nodes or expires them), Kueue preemption (a ClusterQueue that may preempt
    /// the workload: its cohort policies count only in a cohort, and `withinClusterQueue:
    /// LowerPriority` outside one never evicts a workload at the highest priority in view), or,
    /// with none of those in view, the node replacement and maintenance every cluster goes
    /// through. A container with no durable volume that shows no checkpoint argument or variable
    /// may write no checkpoint at all: it is flagged only where one of those risks is in view, and
    /// not where the program it runs is in the files and saves nothing (the code of `python -c`,
    /// or the one `.py` script its command names, read from the ConfigMap mounted over it: no
    /// save, checkpoint, output directory, file opened or trainer that checkpoints by default).
    ///
    /// Only training is flagged, decided per pod template from evidence, first that decides wins:
    /// a configured training label (`training.labels`, default `workload-type: training`; another
    /// value of that label means not training); the GPU containers' command and arguments
    /// (`torchrun`, `python -m torch.distributed.run`, `accelerate launch`, `deepspeed`, trainer
    /// scripts such as `train.py`, `--epochs`, `--max_steps`); their images; the workload's other
    /// pod templates; its name, labels and container names; checkpoint and output arguments; and
    /// last its kind (Kubeflow `*Job`, JobSet, RayJob, TrainJob, and by default a batch/v1 Job).
    /// Benchmarks (nccl-tests such as `all_reduce_perf`, `gpu_burn`, `dcgmi diag`, `nvbandwidth`,
    /// HPL), smoke tests (`nvidia-smi` and sleep, CUDA samples, a trainer run with
    /// `--smoke-test`), compile jobs (`neuron_parallel_compile`, `trtllm-build`,
    /// `--compile-only`), model servers and GPU pods that only sleep keep nothing worth a
    /// checkpoint and are not flagged. Each finding says which evidence decided.
    ///
    /// ## Why is this bad?
    /// Training pods go away: spot instances are reclaimed with two minutes' notice, Karpenter
    /// consolidates, expires and repairs nodes, and Kueue evicts admitted workloads to make room
    /// for higher-priority ones. An `emptyDir` is deleted with the pod, a `hostPath` stays on a
    /// node that is terminated, and the container filesystem is gone on restart. The job then
    /// restarts from step zero, and every GPU hour since it began is paid for twice.
    ///
    /// ## Example
    /// ```yaml
    /// containers:
    ///   - name: trainer
    ///     args: ["--checkpoint_dir", "/scratch/ckpt"]
    ///     volumeMounts:
    ///       - {name: scratch, mountPath: /scratch}
    ///     resources:
    ///       limits:
    ///         nvidia.com/gpu: 8
    /// volumes:
    ///   - name: scratch
    ///     emptyDir: {}
    /// ```
    ///
    /// ## Fix
    /// Write checkpoints to a PersistentVolumeClaim (EBS, EFS or FSx for Lustre through their CSI
    /// drivers) mounted read-write in the training container, or straight to object storage.
    /// If a workload is wrongly taken for training, label it (`workload-type: benchmark`) or set
    /// `training.labels` in the config.
    ///
    /// ```yaml
    ///     args: ["--checkpoint_dir", "/checkpoints/run-42"]
    ///     volumeMounts:
    ///       - {name: checkpoints, mountPath: /checkpoints}
    /// volumes:
    ///   - name: checkpoints
    ///     persistentVolumeClaim:
    ///       claimName: llama-ft-checkpoints
    /// ```
    name: "checkpoint-volume-missing",
    category: "disruption",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a training container whose checkpoints are not on a durable volume",
    check: check,
    chunked: true,
}

/// Volume sources that do not outlive the pod or its node, or cannot be written to.
const NOT_DURABLE: [&str; 9] = [
    "emptyDir",
    // A generic ephemeral volume's claim is owned by the pod and deleted with it.
    "ephemeral",
    "hostPath",
    "configMap",
    "secret",
    "downwardAPI",
    "projected",
    "image",
    "gitRepo",
];

struct Volume<'a> {
    name: &'a str,
    /// The source key (`emptyDir`, `persistentVolumeClaim`…).
    source_key: Node<'a>,
    source: &'a str,
    durable: bool,
    read_only: bool,
}

struct Mount<'a> {
    path: Vec<String>,
    read_only: bool,
    /// `None`: the mount names no declared volume (judged elsewhere; treated as unknown here).
    volume: Option<&'a Volume<'a>>,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // A workload whose templates all lack a durable volume is one finding: the first template's,
    // with the other containers marked on it (`owner`, index in `out`, why the loss is likely).
    let mut generic: Option<(usize, usize, Vec<String>)> = None;
    let ceilings = risk::priority_ceilings(cx);
    let kept = kept_by_a_replica(cx);
    for (ti, t) in cx.templates() {
        let Some(intent) = cx.ix.classes.get(ti).filter(|i| i.is_training()) else {
            continue;
        };
        // Another replica of the workload (a PyTorchJob's Master beside its Workers) keeps
        // checkpoints durably: with data parallelism only rank 0 saves, so where the others
        // write is not known to matter.
        let others_keep = |what: Option<&str>| {
            kept.get(&t.owner).is_some_and(|k| {
                k.iter()
                    .any(|(tj, w)| *tj != ti && what.is_none_or(|what| w.as_deref() == Some(what)))
            })
        };
        let preempting =
            cx.ix
                .queues
                .get(ti)
                .copied()
                .flatten()
                .and_then(|q| q.cluster_queue)
                .filter(|&c| {
                    // Nothing outranks a workload at the queue's highest priority.
                    let top = ceilings.get(&c).copied().flatten().is_some_and(|ceiling| {
                        risk::priority_of(cx, ti).is_some_and(|p| p >= ceiling)
                    });
                    cx.ix.cluster_queues[c].preempts() && !top
                });
        let owner = cx.ix.owner(t);
        let volumes = volumes_of(t);
        let mut risk: Option<Risk> = None;
        for c in t
            .gpu_containers()
            .filter(|c| !c.init && !saves_no_checkpoint(c))
        {
            let cname = c.name.unwrap_or("<unnamed>");
            let mounts = mounts_of(c, &volumes);
            let work_dir = work_dir_of(c);
            let targets = targets_of(c);
            let mut has_target = false;
            for tg in &targets {
                has_target = true;
                let Some(problem) = judge(&tg.value, work_dir, &mounts) else {
                    continue;
                };
                if others_keep(Some(&tg.what)) {
                    continue;
                }
                let r = risk.get_or_insert_with(|| risk_of(cx, ti, preempting));
                let node_loc = value_loc(cx, t, tg);
                let (where_, consequence, help) = describe(&problem);
                let mut d = cx
                    .at(
                        node_loc,
                        format!(
                            "training container `{cname}` writes checkpoints ({}) to `{}`, {where_}: {consequence}{} ({})",
                            tg.what,
                            tg.value,
                            likely(r, &problem),
                            intent.evidence
                        ),
                    )
                    .object(Some(owner.obj_ref()))
                    .help(help);
                if let Some(v) = problem.volume() {
                    d = d.related(
                        t.loc(v.source_key),
                        format!(
                            "`{}` is a{} {} volume",
                            v.name,
                            if v.source.starts_with(['a', 'e', 'i', 'o', 'u']) {
                                "n"
                            } else {
                                ""
                            },
                            v.source
                        ),
                    );
                }
                if !matches!(problem, Problem::ReadOnly(_)) {
                    d = with_risk(d, r);
                }
                out.push(with_evidence(cx, d, t, intent));
            }
            if has_target {
                continue;
            }
            let durable_mount = mounts.iter().any(|m| match m.volume {
                Some(v) => v.durable && !v.read_only && !m.read_only,
                None => true,
            });
            // Nor where the program it runs is in view and saves nothing.
            if durable_mount || others_keep(None) || script::saves_nothing(cx.ix, owner, t, c) {
                continue;
            }
            let at = c.get("name").unwrap_or(c.node);
            let r = risk.get_or_insert_with(|| risk_of(cx, ti, preempting));
            // Nothing says where it writes checkpoints, or that it writes any: said only where
            // losing the pod is likely (spot, Karpenter disruption, Kueue preemption in view).
            if r.reasons.is_empty() {
                continue;
            }
            // Merged only when the risk is the same: a spot worker beside an on-demand launcher
            // is a finding of its own.
            if let Some((owner_at, i, reasons)) = &generic
                && *owner_at == t.owner
                && *reasons == r.reasons
                && let Some(first) = out.get_mut(*i)
            {
                first.related.push(crate::diag::Related {
                    loc: t.loc(at),
                    message: format!("container `{cname}` in `{}` has none either", t.path),
                });
                continue;
            }
            let d = cx
                .on(
                    owner,
                    at,
                    format!(
                        "training container `{cname}` in `{}` has no durable volume mounted read-write: checkpoints it writes are lost when the pod goes away{} ({})",
                        t.path,
                        likely_generic(r),
                        intent.evidence
                    ),
                )
                .help(if cx.ix.uses_karpenter() {
                    "mount a PersistentVolumeClaim (EBS, EFS or FSx through their CSI drivers) and write checkpoints under its mountPath, or checkpoint to object storage such as `s3://…`"
                } else {
                    // Nothing says the cluster is on AWS.
                    "mount a PersistentVolumeClaim (a block or file volume of the cluster's CSI driver) and write checkpoints under its mountPath, or checkpoint to object storage (`s3://…`, `gs://…`)"
                });
            generic = Some((t.owner, out.len(), r.reasons.clone()));
            out.push(with_evidence(cx, with_risk(d, r), t, intent));
        }
    }
}

/// What the training templates in scope keep durably, by owner and template: each checkpoint
/// target (`--output_dir`, `env OUTPUT_DIR`) on a durable mount, and `None` for a GPU container
/// with a durable volume mounted read-write.
fn kept_by_a_replica(cx: &Ctx) -> HashMap<usize, Vec<(usize, Option<String>)>> {
    let mut out: HashMap<usize, Vec<(usize, Option<String>)>> = HashMap::new();
    for (ti, t) in cx.templates() {
        if !cx.ix.classes.get(ti).is_some_and(|i| i.is_training()) {
            continue;
        }
        let volumes = volumes_of(t);
        for c in t.gpu_containers().filter(|c| !c.init) {
            let mounts = mounts_of(c, &volumes);
            let work_dir = work_dir_of(c);
            for tg in targets_of(c) {
                if judge(&tg.value, work_dir, &mounts).is_none() {
                    out.entry(t.owner).or_default().push((ti, Some(tg.what)));
                }
            }
            if mounts
                .iter()
                .any(|m| m.volume.is_some_and(|v| v.durable && !v.read_only) && !m.read_only)
            {
                out.entry(t.owner).or_default().push((ti, None));
            }
        }
    }
    out
}

/// Points at what made the template training, when that is more than its kind.
fn with_evidence(cx: &Ctx, d: Diagnostic, t: &PodTemplate, intent: &Intent) -> Diagnostic {
    match cx.evidence_loc(t, intent) {
        Some(loc) => d.related(loc, "classified as training from this"),
        None => d,
    }
}

/// The container's absolute working directory, where relative checkpoint paths go.
fn work_dir_of<'a>(c: &Container<'a>) -> Option<&'a str> {
    c.get("workingDir")
        .and_then(Node::as_str)
        .filter(|w| w.starts_with('/') && !has_placeholder(w))
}

fn volumes_of<'a>(t: &PodTemplate<'a>) -> Vec<Volume<'a>> {
    let mut out = Vec::new();
    for v in t.volumes() {
        let Some(name) = v.get("name").and_then(Node::as_str) else {
            continue;
        };
        let Some((source, key, body)) = v.entries().find(|(k, _, _)| *k != "name") else {
            continue;
        };
        out.push(Volume {
            name,
            source_key: key,
            source,
            durable: !NOT_DURABLE.contains(&source),
            read_only: body.get("readOnly").and_then(Node::as_str) == Some("true"),
        });
    }
    out
}

fn mounts_of<'v, 'a>(c: &Container<'a>, volumes: &'v [Volume<'a>]) -> Vec<Mount<'v>> {
    c.volume_mounts()
        .filter_map(|m| {
            let path = m.get("mountPath").and_then(Node::as_str)?;
            if has_placeholder(path) {
                return None;
            }
            let name = m.get("name").and_then(Node::as_str);
            Some(Mount {
                path: components(path),
                read_only: m.get("readOnly").and_then(Node::as_str) == Some("true"),
                volume: name.and_then(|n| volumes.iter().find(|v| v.name == n)),
            })
        })
        .collect()
}

/// Path components, with `.` dropped and `..` applied.
fn components(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p.to_string()),
        }
    }
    out
}

fn has_placeholder(s: &str) -> bool {
    s.contains('$') || quantity::is_placeholder(s)
}

enum Problem<'v> {
    /// Under a non-durable volume.
    Volume(&'v Volume<'v>),
    /// Under a durable volume mounted read-only.
    ReadOnly(&'v Volume<'v>),
    /// Relative to an unknown working directory.
    Relative,
    /// Under no mount: the container's writable layer.
    ContainerFs,
}

impl<'v> Problem<'v> {
    fn volume(&self) -> Option<&'v Volume<'v>> {
        match self {
            Problem::Volume(v) | Problem::ReadOnly(v) => Some(v),
            _ => None,
        }
    }
}

/// Where a checkpoint value lands, when that is not durable storage.
fn judge<'v>(value: &str, work_dir: Option<&str>, mounts: &'v [Mount<'v>]) -> Option<Problem<'v>> {
    if has_placeholder(value) || value.starts_with('~') {
        return None;
    }
    let local = match value.split_once("://") {
        Some(("file", rest)) => rest,
        Some((scheme, _))
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '+' | '-' | '.')) =>
        {
            return None;
        }
        _ => value,
    };
    let full = if local.starts_with('/') {
        local.to_string()
    } else if let Some(w) = work_dir {
        format!("{w}/{local}")
    } else {
        // Relative to the image's working directory: on the container filesystem unless a mount
        // covers `/` (never the case in practice).
        return Some(Problem::Relative);
    };
    let path = components(&full);
    // Scratch by choice: what a program writes under `/tmp` it means to lose or copies elsewhere
    // (none of the 140 judged findings of this form was true).
    let scratch = |p: &[&str]| path.len() >= p.len() && path.iter().zip(p).all(|(a, b)| a == b);
    if scratch(&["tmp"]) || scratch(&["var", "tmp"]) || scratch(&["dev", "shm"]) {
        return None;
    }
    let best = mounts
        .iter()
        .filter(|m| path.len() >= m.path.len() && path[..m.path.len()] == m.path[..])
        .max_by_key(|m| m.path.len());
    match best {
        None => Some(Problem::ContainerFs),
        Some(m) => match m.volume {
            None => None,
            Some(v) if !v.durable => Some(Problem::Volume(v)),
            Some(v) if v.read_only || m.read_only => Some(Problem::ReadOnly(v)),
            Some(_) => None,
        },
    }
}

/// (where the value lands, what happens, how to fix).
fn describe(p: &Problem) -> (String, String, String) {
    let durable_help = "write checkpoints under the mountPath of a PersistentVolumeClaim or other durable volume (EFS, FSx for Lustre, NFS), or to object storage such as `s3://…`".to_string();
    match p {
        Problem::Volume(v) => match v.source {
            "emptyDir" => (
                format!("on emptyDir volume `{}`", v.name),
                "an emptyDir is deleted with the pod, so the checkpoints are lost when the pod goes away".to_string(),
                durable_help,
            ),
            "ephemeral" => (
                format!("on generic ephemeral volume `{}`", v.name),
                "its PersistentVolumeClaim belongs to the pod and is deleted with it, so the checkpoints are lost when the pod goes away".to_string(),
                durable_help,
            ),
            "hostPath" => (
                format!("on hostPath volume `{}`", v.name),
                "a hostPath stays on the node, so the checkpoints are lost when the pod is rescheduled or the node is replaced".to_string(),
                durable_help,
            ),
            src => (
                format!("on {src} volume `{}`", v.name),
                format!("a {src} volume is read-only projected data, so checkpoints cannot be kept there"),
                durable_help,
            ),
        },
        Problem::ReadOnly(v) => (
            format!("on volume `{}`, which is mounted read-only", v.name),
            "writing checkpoints there fails".to_string(),
            "mount the volume read-write (drop `readOnly: true`) or write checkpoints to another durable volume".to_string(),
        ),
        Problem::Relative => (
            "a relative path on the container's own filesystem".to_string(),
            "the checkpoints are lost when the pod goes away".to_string(),
            durable_help,
        ),
        Problem::ContainerFs => (
            "which no volume covers (the container's own filesystem)".to_string(),
            "the checkpoints are lost when the pod goes away".to_string(),
            durable_help,
        ),
    }
}

fn likely(r: &Risk, p: &Problem) -> String {
    if matches!(p, Problem::ReadOnly(_)) {
        return String::new();
    }
    likely_generic(r)
}

fn likely_generic(r: &Risk) -> String {
    if r.reasons.is_empty() {
        ", as on every cluster when a node is drained for an upgrade or maintenance, or fails"
            .to_string()
    } else {
        format!(", which is likely here: {}", r.reasons.join("; "))
    }
}

/// The value's place: inside its scalar when it can be found verbatim, else the whole scalar.
fn value_loc(cx: &Ctx, t: &PodTemplate, tg: &Target) -> Loc {
    cx.within(t.file, tg.node, &tg.value, tg.after.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_components() {
        assert_eq!(components("/a/./b//c/../d/"), vec!["a", "b", "d"]);
    }
}
