use super::Ctx;
use super::training_consolidation_underutilized::{Policy, protected};
use crate::diag::{Diagnostic, Loc, Severity};
use crate::intent::Intent;
use crate::model::{Container, PodTemplate};
use crate::quantity;
use crate::sched::{GpuCapability, PodConstraints, Req};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a GPU training container (Job, PyTorchJob and other Kubeflow jobs, JobSet, RayJob…)
    /// that has no durable volume mounted, or whose checkpoint argument or environment variable
    /// (`--checkpoint_dir`, `--ckpt_path`, `--output_dir`, `--save_dir`, `CHECKPOINT_DIR`,
    /// `OUTPUT_DIR`…, also inside `sh -c "…"` scripts) points outside every durable mount: into
    /// an `emptyDir`, generic ephemeral or `hostPath` volume, a relative path, or the container's
    /// own filesystem. Durable means a PersistentVolumeClaim, CSI (EFS, FSx), NFS, EBS
    /// and other network volumes, or a remote URI such as `s3://…`. Values with placeholders
    /// (`$(VAR)`, `${VAR}`) are skipped.
    ///
    /// It says why the loss is likely here: spot capacity (a NodePool that allows spot, the pod's
    /// node selector or a Kueue flavor), Karpenter disruption (a NodePool that consolidates
    /// underutilized nodes or expires them), Kueue preemption (a preempting ClusterQueue), or,
    /// with none of those in view, the node replacement and maintenance every cluster goes
    /// through. A container with no durable volume that shows no checkpoint argument or variable
    /// may write no checkpoint at all: it is flagged only where one of those risks is in view.
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

const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

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

/// A place the container is told to write checkpoints to.
struct Target<'a> {
    /// How it is given: `--checkpoint_dir` or `env CHECKPOINT_DIR`.
    what: String,
    value: String,
    node: Node<'a>,
    /// The flag (or variable name) text to find the value after, inside the node's source.
    after: Option<String>,
}

/// Why the pod is likely to go away, with the places that say so.
struct Risk {
    reasons: Vec<String>,
    related: Vec<(Loc, String)>,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // A workload whose templates all lack a durable volume is one finding: the first template's,
    // with the other containers marked on it (`owner`, index in `out`).
    let mut generic: Option<(usize, usize)> = None;
    for (ti, t) in cx.templates() {
        let Some(intent) = cx.ix.classes.get(ti).filter(|i| i.is_training()) else {
            continue;
        };
        let preempting = cx
            .ix
            .queues
            .get(ti)
            .copied()
            .flatten()
            .and_then(|q| q.cluster_queue)
            .filter(|&c| cx.ix.cluster_queues[c].preempts());
        let owner = cx.ix.owner(t);
        let volumes = volumes_of(t);
        let mut risk: Option<Risk> = None;
        for c in t.gpu_containers().filter(|c| !c.init) {
            let cname = c.name.unwrap_or("<unnamed>");
            let mounts = mounts_of(c, &volumes);
            let work_dir = c
                .get("workingDir")
                .and_then(Node::as_str)
                .filter(|w| w.starts_with('/') && !has_placeholder(w));
            let targets = targets_of(c);
            let mut has_target = false;
            for tg in &targets {
                has_target = true;
                let Some(problem) = judge(&tg.value, work_dir, &mounts) else {
                    continue;
                };
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
            if durable_mount {
                continue;
            }
            let at = c.get("name").unwrap_or(c.node);
            let r = risk.get_or_insert_with(|| risk_of(cx, ti, preempting));
            // Nothing says where it writes checkpoints, or that it writes any: said only where
            // losing the pod is likely (spot, Karpenter disruption, Kueue preemption in view).
            if r.reasons.is_empty() {
                continue;
            }
            // Merged only when the risk is alike: a spot worker beside an on-demand launcher is
            // a finding of its own.
            let severity = cx.rule.severity;
            if let Some((owner_at, i)) = generic
                && owner_at == t.owner
                && let Some(first) = out.get_mut(i)
                && first.severity == severity
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
                .help("mount a PersistentVolumeClaim (EBS, EFS or FSx through their CSI drivers) and write checkpoints under its mountPath, or checkpoint to object storage such as `s3://…`");
            generic = Some((t.owner, out.len()));
            out.push(with_evidence(cx, with_risk(d, r), t, intent));
        }
    }
}

/// Adds the places that make the loss likely; with none in view the finding stays a warning
/// (every cluster replaces nodes, but nothing here says how often).
fn with_risk(mut d: Diagnostic, r: &Risk) -> Diagnostic {
    for (loc, msg) in &r.related {
        d = d.related(*loc, msg.clone());
    }
    if r.reasons.is_empty() {
        d = d.with_severity(Severity::Warning);
    }
    d
}

/// Points at what made the template training, when that is more than its kind.
fn with_evidence(cx: &Ctx, d: Diagnostic, t: &PodTemplate, intent: &Intent) -> Diagnostic {
    match cx.evidence_loc(t, intent) {
        Some(loc) => d.related(loc, "classified as training from this"),
        None => d,
    }
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

/// Whether a flag or variable name names a checkpoint or output directory.
fn is_checkpoint_name(raw: &str) -> bool {
    let bare = raw.trim_start_matches('-');
    let last = bare.rsplit('.').next().unwrap_or(bare);
    let n = last.to_ascii_lowercase().replace('-', "_");
    if matches!(
        n.as_str(),
        "ckpt" | "checkpoint" | "checkpoints" | "output_dir" | "save_dir"
    ) {
        return true;
    }
    let stem = ["ckpt", "checkpoint", "checkpoints"]
        .iter()
        .any(|p| n.starts_with(p));
    let tail = [
        "_dir",
        "_path",
        "_root",
        "_directory",
        "_folder",
        "_location",
        "_uri",
        "_url",
    ]
    .iter()
    .any(|s| n.ends_with(s));
    stem && tail
}

/// Whether a value could be a path or URI (not a number, a boolean or empty).
fn path_like(v: &str) -> bool {
    !v.is_empty()
        && !v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "none" | "null"
        )
}

/// Splits a command string into shell-ish words, dropping quotes and separators.
fn words(s: &str) -> Vec<&str> {
    s.split(|ch: char| ch.is_whitespace() || ch == ';')
        .map(|w| w.trim_matches(|ch: char| matches!(ch, '"' | '\'' | '`' | '\\' | '(' | ')')))
        .filter(|w| !w.is_empty() && !matches!(*w, "&&" | "||" | "|"))
        .collect()
}

/// Checkpoint destinations given in `command`/`args` and `env`.
fn targets_of<'a>(c: &Container<'a>) -> Vec<Target<'a>> {
    let mut out = Vec::new();
    let mut toks: Vec<(&'a str, Node<'a>)> = Vec::new();
    for key in ["command", "args"] {
        for item in c.get(key).into_iter().flat_map(|n| n.items()) {
            if let Some(s) = item.as_str() {
                for w in words(s) {
                    toks.push((w, item));
                }
            }
        }
    }
    let mut i = 0;
    while i < toks.len() {
        let (tok, node) = toks[i];
        i += 1;
        let (name, inline) = match tok.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (tok, None),
        };
        if !is_checkpoint_name(name) {
            continue;
        }
        let is_flag = name.starts_with('-');
        let (value, vnode) = match inline {
            Some(v) => (v.trim_matches(|ch| ch == '"' || ch == '\''), node),
            // `--checkpoint_dir /ckpt`; a bare NAME without `=` is not an assignment.
            None if is_flag => match toks.get(i) {
                Some((next, n)) if !next.starts_with('-') => {
                    i += 1;
                    (*next, *n)
                }
                _ => continue,
            },
            None => continue,
        };
        if !is_flag
            && !name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
        {
            // Only flags, shell variables (`CKPT_DIR=/x`) and config overrides (`trainer.output_dir=/x`).
            continue;
        }
        if !path_like(value) {
            continue;
        }
        out.push(Target {
            what: format!("`{name}`"),
            value: value.to_string(),
            node: vnode,
            after: Some(name.to_string()),
        });
    }
    for e in c.get("env").into_iter().flat_map(|n| n.items()) {
        let Some(name) = e.get("name").and_then(Node::as_str) else {
            continue;
        };
        if !is_checkpoint_name(name) {
            continue;
        }
        let Some(v) = e.get("value") else { continue };
        let Some(value) = v.as_str() else { continue };
        if !path_like(value) {
            continue;
        }
        out.push(Target {
            what: format!("env `{name}`"),
            value: value.to_string(),
            node: v,
            after: None,
        });
    }
    out
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

/// Whether the pod's constraints (after flavor injection) let it run on spot capacity.
fn allows_spot(c: &PodConstraints) -> bool {
    let ok = |r: &&Req| {
        r.key != CAPACITY_TYPE
            || match r.op {
                "In" => r.values.contains(&"spot"),
                "NotIn" => !r.values.contains(&"spot"),
                "DoesNotExist" => false,
                _ => true,
            }
    };
    c.base.iter().all(|r| ok(&r))
        && (c.terms.is_empty() || c.terms.iter().any(|t| t.iter().all(|r| ok(&r))))
}

/// A requirement of the pod itself that asks for spot.
fn selects_spot<'r>(c: &'r PodConstraints) -> Option<&'r Req<'r>> {
    c.base
        .iter()
        .chain(c.terms.iter().flatten())
        .find(|r| r.key == CAPACITY_TYPE && r.op == "In" && r.values.contains(&"spot"))
}

fn risk_of(cx: &Ctx, ti: usize, preempting: Option<usize>) -> Risk {
    let mut risk = Risk {
        reasons: Vec::new(),
        related: Vec::new(),
    };
    let t = &cx.ix.templates[ti];
    let variants = cx
        .ix
        .variants
        .get(ti)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let own = t.constraints();
    if let Some(r) = selects_spot(own) {
        risk.reasons
            .push("its node selector asks for spot capacity".to_string());
        risk.related
            .push((r.loc, "spot capacity selected here".to_string()));
    } else if let Some((fname, loc)) = variants.iter().filter_map(|v| v.flavor).find_map(|fi| {
        let f = &cx.ix.flavors[fi];
        f.node_labels
            .iter()
            .find(|(k, _, v)| *k == CAPACITY_TYPE && v.as_str() == Some("spot"))
            .map(|(_, _, v)| (f.name, cx.ix.objects[f.obj].loc(*v)))
    }) {
        risk.reasons.push(format!(
            "Kueue may admit it to ResourceFlavor `{fname}`, whose nodes are spot"
        ));
        risk.related.push((
            loc,
            format!("ResourceFlavor `{fname}` selects spot capacity"),
        ));
    } else if cx.ix.uses_karpenter() {
        // Pools the pod can land on; with none (or no fit information), every pool. A pool
        // without GPU instances is no place for these pods, whatever its labels and taints.
        let fitting: Vec<usize> = cx
            .ix
            .landing_pools(ti)
            .into_iter()
            .filter(|&p| cx.ix.pools.capability[p] != GpuCapability::None)
            .collect();
        let candidates: Vec<usize> = if fitting.is_empty() {
            (0..cx.ix.nodepools.len()).collect()
        } else {
            fitting
        };
        let spot: Vec<usize> = candidates
            .iter()
            .copied()
            .filter(|&pi| {
                cx.ix.nodepools[pi].capacity_types().contains(&"spot")
                    && (variants.is_empty() || variants.iter().any(|v| allows_spot(&v.constraints)))
            })
            .collect();
        if spot.is_empty() {
            disruption_risk(cx, t, &candidates, &mut risk);
        }
        if let Some(&first) = spot.first() {
            let pool = &cx.ix.nodepools[first];
            let names: Vec<String> = spot
                .iter()
                .map(|&pi| format!("`{}`", cx.ix.nodepools[pi].name))
                .collect();
            let noun = if names.len() == 1 {
                "NodePool"
            } else {
                "NodePools"
            };
            risk.reasons.push(format!(
                "{noun} {} may run it on spot capacity",
                names.join(", ")
            ));
            let at = pool
                .requirements
                .iter()
                .find(|r| r.key == CAPACITY_TYPE)
                .map_or(pool.anchor, |r| r.node);
            risk.related.push((
                pool.loc(at),
                format!("NodePool `{}` may launch spot instances", pool.name),
            ));
        }
    }
    if let Some(ci) = preempting {
        let cq = &cx.ix.cluster_queues[ci];
        risk.reasons.push(format!(
            "ClusterQueue `{}` preempts admitted workloads",
            cq.name
        ));
        if let Some(p) = cq.preemption {
            let obj = &cx.ix.objects[cq.obj];
            let at = obj
                .root
                .at(&["spec"])
                .and_then(|s| s.entry("preemption"))
                .map_or(p, |(k, _)| k);
            risk.related.push((
                obj.loc(at),
                format!("ClusterQueue `{}` may preempt it", cq.name),
            ));
        }
    }
    risk
}

/// Karpenter's own disruption of the pools the pod may land on: consolidation of underutilized
/// nodes (unless the pods carry `karpenter.sh/do-not-disrupt: "true"`), else expiry, which that
/// annotation does not hold back.
fn disruption_risk(cx: &Ctx, t: &PodTemplate, candidates: &[usize], risk: &mut Risk) {
    if cx.ix.nodepools.is_empty() {
        risk.reasons.push(
            "Karpenter manages the nodes (config `cluster.karpenter`) and consolidates, expires and replaces them"
                .to_string(),
        );
        return;
    }
    let pools = || {
        candidates
            .iter()
            .filter(|&&pi| cx.ix.pools.capability[pi] != GpuCapability::None)
            .map(|&pi| &cx.ix.nodepools[pi])
    };
    if !protected(t) {
        let consolidating = pools().find_map(|p| {
            let version = cx.ix.objects.get(p.obj).map_or("v1", |o| o.version);
            Policy::of(p, version).map(|policy| (p, policy))
        });
        if let Some((pool, policy)) = consolidating {
            let default = if policy.by_default {
                ", its default"
            } else {
                ""
            };
            risk.reasons.push(format!(
                "NodePool `{}` consolidates underutilized nodes with `{}`{default}",
                pool.name, policy.name
            ));
            risk.related.push((
                pool.loc(policy.node),
                format!("NodePool `{}` consolidates underutilized nodes", pool.name),
            ));
            return;
        }
    }
    if let Some((pool, after, node)) =
        pools().find_map(|p| p.expire_after().map(|(a, n)| (p, a, n)))
    {
        let how = if node.is_some() {
            format!("`expireAfter: {after}`")
        } else {
            format!("`expireAfter` defaults to {after}")
        };
        risk.reasons.push(format!(
            "NodePool `{}` replaces its nodes on expiry ({how}), which `karpenter.sh/do-not-disrupt` does not prevent",
            pool.name
        ));
        risk.related.push((
            pool.loc(node.unwrap_or(pool.anchor)),
            format!("NodePool `{}` expires its nodes after {after}", pool.name),
        ));
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
    fn checkpoint_names() {
        for ok in [
            "--checkpoint_dir",
            "--checkpoint-dir",
            "--ckpt",
            "--ckpt_path",
            "--output_dir",
            "--output-dir",
            "--save_dir",
            "--save-dir",
            "--checkpoint-path",
            "CHECKPOINT_DIR",
            "CKPT_DIR",
            "OUTPUT_DIR",
            "SAVE_DIR",
        ] {
            assert!(is_checkpoint_name(ok), "{ok}");
        }
        for bad in [
            "--checkpoint_interval",
            "--checkpoint-every",
            "--data_dir",
            "--ckpt_steps",
            "HOME",
        ] {
            assert!(!is_checkpoint_name(bad), "{bad}");
        }
    }

    #[test]
    fn script_words() {
        assert_eq!(
            words("python train.py --ckpt_dir=/ckpt && echo 'done';"),
            vec!["python", "train.py", "--ckpt_dir=/ckpt", "echo", "done"]
        );
    }

    #[test]
    fn path_components() {
        assert_eq!(components("/a/./b//c/../d/"), vec!["a", "b", "d"]);
    }
}
