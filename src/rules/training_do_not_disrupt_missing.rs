use super::{Ctx, template_anchor};
use crate::diag::{Diagnostic, Severity};
use crate::intent::Intent;
use crate::model::{Object, PodTemplate};
use crate::quantity;
use crate::yaml::{Node, Yaml11};

declare_rule! {
    /// ## What it does
    /// Flags a GPU training pod template whose pods do not carry
    /// `karpenter.sh/do-not-disrupt: "true"`, in a cluster that runs Karpenter (a NodePool in the
    /// files, or `cluster: {karpenter: true}` in the config). A workload with several pod
    /// templates (PyTorchJob Master and Worker, JobSet replicated jobs, Ray worker groups) gets
    /// one finding per template. A template whose selectors fit only capacity Karpenter does not
    /// manage (an EKS managed node group, existing Nodes) is not flagged, nor one that tolerates
    /// such capacity's taints but not those of any Karpenter pool it fits (a pool kept for
    /// notebooks by a taint of its own): it runs on the node group.
    ///
    /// Whatever the workload is for and whether or not a NodePool is in view, it also flags the
    /// annotation on the workload's own metadata or on a nested Job template (JobSet, CronJob),
    /// where it never reaches the pods: writing it there shows the cluster runs Karpenter and the
    /// pods were meant to be protected. And it flags an unquoted `true` (a boolean, which the API
    /// server rejects) on any GPU pod template, and on training pods a duration such as `"30m"`
    /// (protection that runs out) or any other value (`"false"`, `"yes"`), which protects nothing.
    ///
    /// Training is decided per pod template from evidence, first that decides wins: a configured
    /// training label (`training.labels`, default `workload-type: training`; another value of
    /// that label means not training); the GPU containers' command and arguments, `sh -c` scripts
    /// included (`torchrun`, `python -m torch.distributed.run`, `accelerate launch`, `deepspeed`,
    /// trainer scripts such as `train.py` or `finetune_*.py`, `--epochs`, `--max_steps`); their
    /// images; the workload's other pod templates; its name, labels and container names; and
    /// last its kind (Kubeflow `*Job`, JobSet, RayJob, TrainJob, and by default a batch/v1 Job).
    /// Benchmarks (`all_reduce_perf` and other nccl-tests, `gpu_burn`, `dcgmi diag`,
    /// `nvbandwidth`, HPL), smoke tests (`nvidia-smi` and sleep, CUDA samples such as
    /// `vectorAdd`, a trainer run with `--smoke-test`), compile jobs (`neuron_parallel_compile`,
    /// `trtllm-build`, `--compile-only`), model servers and GPU pods that only sleep are not
    /// training. Each finding says which evidence decided.
    ///
    /// ## Why is this bad?
    /// Karpenter consolidates nodes it considers underutilized or empty and drains them gracefully.
    /// A training pod is one rank of a gang: evicting it kills the whole step, and everything since
    /// the last checkpoint is lost, often hours of GPU time. Karpenter only holds back from a node
    /// whose pods carry `karpenter.sh/do-not-disrupt: "true"`; it reads the annotation from the
    /// pods, so on the Job or PyTorchJob object itself it does nothing. A duration value only
    /// protects the pod for that long after it starts.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kubeflow.org/v1
    /// kind: PyTorchJob
    /// metadata:
    ///   name: llama-ft
    ///   annotations:
    ///     karpenter.sh/do-not-disrupt: "true"   # on the PyTorchJob: never reaches the pods
    /// spec:
    ///   pytorchReplicaSpecs:
    ///     Worker:
    ///       template:
    ///         spec:
    ///           containers:
    ///             - name: pytorch
    ///               command: [torchrun, --nproc_per_node, "8", train.py]
    ///               resources:
    ///                 limits:
    ///                   nvidia.com/gpu: 8
    /// ```
    ///
    /// ## Fix
    /// Put the annotation, with the quoted string `"true"`, on every pod template:
    /// ```yaml
    ///       template:
    ///         metadata:
    ///           annotations:
    ///             karpenter.sh/do-not-disrupt: "true"
    /// ```
    /// It does not stop expiration (`expireAfter`), spot interruption or node repair, so long runs
    /// still need checkpoints on durable storage. If a workload is wrongly taken for training,
    /// label it (`workload-type: benchmark`) or set `training.labels` in the config.
    name: "training-do-not-disrupt-missing",
    category: "disruption",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a training pod template without `karpenter.sh/do-not-disrupt: \"true\"` where Karpenter runs",
    check: check,
    chunked: true,
}

const KEY: &str = "karpenter.sh/do-not-disrupt";

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // Only the "missing" finding needs Karpenter in view: the annotation, wherever it is
    // written, already says Karpenter runs.
    let karpenter = cx.ix.uses_karpenter();
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let Some(intent) = cx.ix.classes.get(ti) else {
            continue;
        };
        let training = intent.is_training();
        let owner = cx.ix.owner(t);
        // A bare Pod is its own template: its annotations are the object's.
        let bare_pod = t.path == "spec";
        let help = if bare_pod {
            format!("add `{KEY}: \"true\"` under `metadata.annotations`")
        } else {
            format!(
                "add `{KEY}: \"true\"` under `{}.metadata.annotations`",
                t.path
            )
        };
        let pods = if bare_pod {
            "the training pod".to_string()
        } else {
            format!("training pods of `{}`", t.path)
        };
        match t.annotation(KEY) {
            Some((_, value)) => check_value(cx, owner, t, value, intent, out),
            None => match misplaced(owner, t) {
                Some((where_, key)) => {
                    let consequence = if training {
                        format!(
                            "so it may consolidate their nodes and kill the training run ({})",
                            intent.evidence
                        )
                    } else {
                        "so it may consolidate or drain their nodes while they run".to_string()
                    };
                    out.push(with_evidence(
                        cx,
                        t,
                        intent,
                        training,
                        cx.on(
                            owner,
                            key,
                            format!(
                                "`{KEY}` is on the {where_}, which never reaches the pods of `{}`: Karpenter reads it from pods only, {consequence}",
                                t.path
                            ),
                        )
                        .help(format!("move it: {help}")),
                    ));
                }
                None if training && karpenter && !cx.off_karpenter(ti) => {
                    let Some(at) = template_anchor(owner, t) else {
                        continue;
                    };
                    out.push(with_evidence(
                        cx,
                        t,
                        intent,
                        true,
                        cx.on(
                            owner,
                            at,
                            format!(
                                "{pods} lack{} `{KEY}: \"true\"`: Karpenter may consolidate or drain {} GPU node{} mid-run, killing the job and losing the work since the last checkpoint ({})",
                                if bare_pod { "s" } else { "" },
                                if bare_pod { "its" } else { "their" },
                                if bare_pod { "" } else { "s" },
                                intent.evidence
                            ),
                        )
                        .help(help),
                    ));
                }
                None => {}
            },
        }
    }
}

/// Points at the evidence that made the template training, when there is a place to point at.
fn with_evidence(
    cx: &Ctx,
    t: &PodTemplate,
    intent: &Intent,
    training: bool,
    d: Diagnostic,
) -> Diagnostic {
    match cx.evidence_loc(t, intent) {
        Some(loc) if training => d.related(loc, "classified as training from this"),
        _ => d,
    }
}

/// Judges the annotation's value on the pod template.
fn check_value(
    cx: &Ctx,
    owner: &Object,
    t: &PodTemplate,
    value: Node<'_>,
    intent: &Intent,
    out: &mut Vec<Diagnostic>,
) {
    let Some(text) = value.as_str() else {
        out.push(
            cx.on(
                owner,
                value,
                format!("`{KEY}` in `{}` is not a string: annotation values must be strings, so the API server rejects the {}", t.path, owner.kind),
            )
            .help(format!("use the quoted string: `{KEY}: \"true\"`"))
            .with_severity(Severity::Error),
        );
        return;
    };
    if quantity::is_placeholder(text) {
        return;
    }
    if let Some(kind @ (Yaml11::Bool | Yaml11::Int | Yaml11::Float)) = value.yaml11() {
        out.push(
            cx.on(
                owner,
                value,
                format!(
                    "`{KEY}: {text}` in `{}` is an unquoted {}: annotation values are strings, so the API server rejects the {}",
                    t.path,
                    if kind == Yaml11::Bool { "boolean" } else { "number" },
                    owner.kind
                ),
            )
            .help(format!("quote it: `{KEY}: \"true\"`"))
            .with_severity(Severity::Error),
        );
        return;
    }
    // Type errors above break the object whatever it runs; the rest only matters to training,
    // where a duration or a stray value leaves a long run unprotected.
    if text == "true" || !intent.is_training() {
        return;
    }
    if is_go_duration(text) {
        out.push(
            cx.on(
                owner,
                value,
                format!(
                    "`{KEY}: \"{text}\"` in `{}` protects the pods only for {text} after they start: after that Karpenter may consolidate their nodes while training still runs ({})",
                    t.path, intent.evidence
                ),
            )
            .help(format!(
                "use `{KEY}: \"true\"` to protect the pods for their whole run"
            )),
        );
        return;
    }
    let shown = if text.is_empty() {
        "an empty value".to_string()
    } else {
        format!("`\"{text}\"`")
    };
    out.push(
        cx.on(
            owner,
            value,
            format!(
                "`{KEY}` in `{}` is {shown}: Karpenter honours only `\"true\"` or a duration, so the training pods are not protected from consolidation ({})",
                t.path, intent.evidence
            ),
        )
        .help("set the value to the quoted string `\"true\"`"),
    );
}

/// Go `time.ParseDuration` syntax (what Karpenter accepts besides `"true"`): `30m`, `1h30m`, `1.5h`.
fn is_go_duration(s: &str) -> bool {
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let num_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if num_len == 0 || !rest[..num_len].bytes().any(|b| b.is_ascii_digit()) {
            return false;
        }
        rest = &rest[num_len..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .iter()
            .filter(|u| rest.starts_with(**u))
            .max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// The annotation on metadata that does not reach the template's pods: the owner's own metadata,
/// a JobSet replicated job's Job template, or a CronJob's job template.
fn misplaced<'a>(owner: &Object<'a>, t: &PodTemplate<'a>) -> Option<(String, Node<'a>)> {
    let own = owner.metadata();
    let same = |m: Option<Node<'_>>| match (m, t.metadata) {
        (Some(a), Some(b)) => a.is(b),
        _ => false,
    };
    if !same(own)
        && let Some((k, _)) = owner.annotation(KEY)
    {
        return Some((format!("{}'s own metadata", owner.kind), k));
    }
    for (path, meta) in job_template_metadata(owner, t) {
        if let Some((k, _)) = meta.get("annotations").and_then(|a| a.entry(KEY)) {
            return Some((format!("Job template `{path}`"), k));
        }
    }
    None
}

/// Metadata of the Job template between the owner and this pod template (JobSet, CronJob).
fn job_template_metadata<'a>(owner: &Object<'a>, t: &PodTemplate<'a>) -> Vec<(String, Node<'a>)> {
    crate::model::job_template_metadata(owner)
        .into_iter()
        .filter(|jt| owner.kind == "CronJob" || jt.pod_spec.is_some_and(|s| s.is(t.spec)))
        .map(|jt| (jt.path, jt.metadata))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_go_duration;

    #[test]
    fn durations() {
        for ok in ["30m", "1h30m", "1.5h", "90s", "10ms"] {
            assert!(is_go_duration(ok), "{ok}");
        }
        for bad in ["", "true", "yes", "30", "m", "1d", "h1", ".h"] {
            assert!(!is_go_duration(bad), "{bad}");
        }
    }
}
