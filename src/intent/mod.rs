//! What a GPU workload is for — training, inference, a benchmark, a smoke test, a compile job —
//! decided from evidence in its manifest, with that evidence kept for messages.
//!
//! Evidence, first that decides wins:
//! 1. a configured training label (`training.labels`, default `workload-type: training`) on the
//!    pod template or the workload: its value `training` makes it training; any other value
//!    takes it out of training whatever else says;
//! 2. the command and arguments of its GPU containers (and a RayJob's `entrypoint`), shell
//!    scripts under `sh -c` included: compile steps, then benchmarks, then smoke-test flags on a
//!    trainer, then a launcher spreading a script named for inference, generation or evaluation
//!    (not training), then training launchers and arguments, then model servers, then such
//!    scripts on their own, then smoke tests that do nothing else;
//! 3. the images of its GPU containers;
//! 4. the commands and images of the workload's other pod templates (an MPIJob launcher that runs
//!    `all_reduce_perf` for sshd workers);
//! 5. a GPU container that only sleeps (`sleep infinity`): a development pod;
//! 6. the workload's name, its labels and its GPU containers' names (never its namespace);
//! 7. checkpoint and output arguments (`--output_dir`, `--checkpoint*`, `--save_*`), which load
//!    and write models for other purposes too, so they only tip a workload nothing else placed;
//! 8. its kind: Deployment, StatefulSet, LeaderWorkerSet, RayService and KServe kinds are
//!    inference. A training kind (Kubeflow `*Job`, JobSet, RayJob, TrainJob) or a batch/v1 Job
//!    that nothing above places is GPU batch work, not training: the kind alone never brings a
//!    training-only finding.
//!
//! MLPerf: MLPerf Training runs train a model for hours and are judged by their launcher like any
//! training run; only MLPerf Inference (`loadgen`, `mlperf-inference` images) is a benchmark.
//!
//! It runs on every pod template of a repository, so it borrows words from the manifest and
//! allocates only the evidence sentence.

use crate::config::Settings;
use crate::model::kinds::{Family, is_inference_kind, is_training_kind};
use crate::model::{Object, PodTemplate};
use crate::yaml::Node;

mod scan;
mod signals;
mod words;
pub(crate) use words::{Tok, image_repository, lex};
use words::{basename, contains_ci, ends_ci, starts_ci};

use scan::{Cue, Scan, Seg, feed_str, scan_container};
use signals::is_training_word;

/// What a GPU workload is for, coarsely (`intent::IntentKind` has the detail and the evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Training,
    Inference,
    Other,
}

/// What a workload is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntentKind {
    Training,
    Inference,
    Benchmark,
    SmokeTest,
    Compile,
    Other,
}

impl IntentKind {
    /// The coarse class rules filter on: benchmarks, smoke tests and compile jobs are not training.
    pub fn class(self) -> Class {
        match self {
            IntentKind::Training => Class::Training,
            IntentKind::Inference => Class::Inference,
            _ => Class::Other,
        }
    }
    /// How it reads in "classified as …".
    pub fn noun(self) -> &'static str {
        match self {
            IntentKind::Training => "training",
            IntentKind::Inference => "inference",
            IntentKind::Benchmark => "a benchmark",
            IntentKind::SmokeTest => "a smoke test",
            IntentKind::Compile => "a compile job",
            IntentKind::Other => "other",
        }
    }
}

/// Where the deciding evidence came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// The template asks for no GPU.
    NoGpu,
    /// A configured training label.
    Config,
    /// The template's own command or arguments (or a RayJob entrypoint).
    Command,
    /// The template's own image.
    Image,
    /// Another pod template of the same workload.
    Sibling,
    /// A name or label.
    Name,
    /// The workload's kind alone.
    Kind,
}

/// The decision and why.
#[derive(Clone, Debug)]
pub struct Intent<'a> {
    pub kind: IntentKind,
    /// A sentence: "classified as training because it runs `torchrun` with `--epochs`".
    pub evidence: String,
    /// The node holding the deciding evidence.
    pub at: Option<Node<'a>>,
    /// The words inside `at` that decided, when `at` is a longer command or script.
    pub cue: Option<&'a str>,
    pub basis: Basis,
}

impl Intent<'_> {
    pub fn class(&self) -> Class {
        self.kind.class()
    }
    pub fn is_training(&self) -> bool {
        self.kind == IntentKind::Training
    }
    /// Whether `at` is worth pointing at in a finding (a kind alone is not news).
    pub fn points_at_evidence(&self) -> bool {
        !matches!(self.basis, Basis::Kind | Basis::NoGpu)
    }
}

fn intent<'a>(kind: IntentKind, basis: Basis, at: Option<Node<'a>>, reason: &str) -> Intent<'a> {
    Intent {
        kind,
        evidence: format!("classified as {} because {reason}", kind.noun()),
        at,
        cue: None,
        basis,
    }
}

/// A decision from a command: the kind, the reason, and the cue that decided.
type Decision<'a> = (IntentKind, String, Cue<'a>);

fn from_command<'a>(basis: Basis, (kind, reason, cue): Decision<'a>) -> Intent<'a> {
    Intent {
        cue: Some(cue.shown),
        ..intent(kind, basis, Some(cue.node), &reason)
    }
}

/// The pod label the Nsight Operator's sidecar injector acts on.
const NSIGHT_INJECTOR: &str = "nvidia-devtools-sidecar-injector";

/// Decides what the pods of `t` (a template of `obj`) are for.
pub fn classify<'a>(obj: &Object<'a>, t: &PodTemplate<'a>, settings: &Settings) -> Intent<'a> {
    if !t.requests_gpu() {
        return intent(IntentKind::Other, Basis::NoGpu, None, "it requests no GPU");
    }
    let mut marked: Option<(&str, &'a str, Node<'a>, &str)> = None;
    for (k, v) in &settings.training_labels {
        let Some((_, n)) = t.label(k).or_else(|| obj.label(k)) else {
            continue;
        };
        let Some(x) = n.as_str() else { continue };
        if x == v {
            return intent(
                IntentKind::Training,
                Basis::Config,
                Some(n),
                &format!("its label `{k}: {x}` marks it so (config `training.labels`)"),
            );
        }
        if marked.is_none() {
            marked = Some((k, x, n, v));
        }
    }
    let mut found = from_evidence(obj, t);
    // Pods the Nsight Operator injects its profiler into are a profiling run: short, measured,
    // not a run to keep alive or checkpoint.
    if found.is_training()
        && let Some((_, n)) = t
            .label(NSIGHT_INJECTOR)
            .filter(|(_, v)| v.as_str() == Some("enabled"))
    {
        found = intent(
            IntentKind::Benchmark,
            Basis::Name,
            Some(n),
            &format!(
                "its label `{NSIGHT_INJECTOR}: enabled` has Nsight profile it (a profiling run)"
            ),
        );
    }
    // A DaemonSet (one pod per node: an agent or a burn-in) is never training.
    if found.is_training() && crate::model::kinds::family(obj) == Some(Family::DaemonSet) {
        found = intent(
            IntentKind::Other,
            Basis::Kind,
            obj.root.get("kind"),
            "it is a DaemonSet: one pod per node is an agent or a burn-in, not a training run",
        );
    }
    // Serving kinds are never training, whatever their templates' images or commands say.
    if found.is_training() && is_inference_kind(obj) {
        found = intent(
            IntentKind::Inference,
            Basis::Kind,
            obj.root.get("kind"),
            &format!("it is a {}, a serving kind", obj.kind),
        );
    }
    match marked {
        // An explicit label with another value is the author saying "not training".
        Some((k, x, n, v)) if found.is_training() => intent(
            if is_inference_kind(obj) {
                IntentKind::Inference
            } else {
                IntentKind::Other
            },
            Basis::Config,
            Some(n),
            &format!("its label `{k}: {x}` is not `{k}: {v}` (config `training.labels`)"),
        ),
        _ => found,
    }
}

fn from_evidence<'a>(obj: &Object<'a>, t: &PodTemplate<'a>) -> Intent<'a> {
    let inference_kind = is_inference_kind(obj);
    let mut gpu: Vec<&crate::model::Container<'a>> = t
        .gpu_containers()
        .filter(|c| !c.init)
        .chain(t.gpu_containers().filter(|c| c.init))
        .collect();
    // A pod whose GPUs come from DRA claims only: the containers that use them.
    if gpu.is_empty() {
        gpu = t.dra_gpu_containers().collect();
    }

    // 2. Own commands.
    let mut own = Scan::default();
    for c in &gpu {
        scan_container(&mut own, c.node);
    }
    if obj.is("ray.io", "RayJob")
        && let Some(e) = obj.spec().and_then(|s| s.get("entrypoint"))
        && let Some(text) = e.as_str()
    {
        feed_str(&mut own, text, e, &mut Seg::new(), 0);
    }
    if let Some(d) = own.decide("it") {
        return from_command(Basis::Command, d);
    }

    // 3. Own images; an image name never makes a serving kind training.
    for c in &gpu {
        if let Some(n) = c.get("image")
            && let Some(img) = n.as_str()
            && let Some((kind, what)) = image_cue(img)
            && !(kind == IntentKind::Training && inference_kind)
        {
            // The repository, not the tag: an overlay that bumps the tag changes no verdict.
            return intent(
                kind,
                Basis::Image,
                Some(n),
                &format!("its image `{}` is {what}", image_repository(img)),
            );
        }
    }

    // 4. The workload's other pod templates.
    let mut sib = Scan::default();
    let mut sib_image: Option<(IntentKind, &'static str, &'a str, Node<'a>)> = None;
    for other in crate::model::pod_templates(t.owner, obj) {
        let spec = other.spec;
        if spec.is(t.spec) {
            continue;
        }
        for key in ["initContainers", "containers"] {
            for c in spec.get(key).into_iter().flat_map(Node::items) {
                scan_container(&mut sib, c);
                if sib_image.is_none()
                    && let Some(n) = c.get("image")
                    && let Some(img) = n.as_str()
                    && let Some((kind, what)) = image_cue(img)
                {
                    sib_image = Some((kind, what, img, n));
                }
            }
        }
    }
    if let Some(d) = sib.decide("another pod template of the workload") {
        return from_command(Basis::Sibling, d);
    }
    if let Some((kind, what, img, n)) = sib_image {
        return intent(
            kind,
            Basis::Sibling,
            Some(n),
            &format!(
                "another pod template of the workload runs image `{}`, {what}",
                image_repository(img)
            ),
        );
    }

    // 5. A GPU pod that only sleeps is someone's shell.
    if let Some(idle) = own.idle
        && own.is_quiet()
    {
        let reason = format!(
            "it only sleeps (`{}`): an interactive or development pod",
            idle.shown
        );
        return from_command(Basis::Command, (IntentKind::Other, reason, idle));
    }

    // 6. Names and labels.
    if let Some((kind, what, text, n)) = name_evidence(obj, t, &gpu)
        && !(kind == IntentKind::Training && inference_kind)
    {
        return intent(
            kind,
            Basis::Name,
            Some(n),
            &format!("its {what} `{text}` says {}", name_says(kind)),
        );
    }

    // 7. Checkpoint and output arguments (not on a DaemonSet: one pod per node is an agent or a
    // burn-in, whatever it saves).
    let daemon = crate::model::kinds::family(obj) == Some(Family::DaemonSet);
    if !inference_kind
        && !daemon
        && let Some(w) = own.weak_arg
    {
        let reason = format!("it passes `{}`", w.shown);
        return from_command(Basis::Command, (IntentKind::Training, reason, w));
    }

    // 8. The kind.
    let kind_node = obj.root.get("kind");
    let unknown = own
        .unknown
        .map(|u| format!(" (`{}` names no known launcher or trainer)", u.shown))
        .unwrap_or_default();
    // A training kind or a batch Job with nothing that says it trains is GPU batch work:
    // device listings, burn-ins, profiling, quantization and batch inference run so too.
    if is_training_kind(obj) || obj.is("batch", "Job") {
        let what = if is_training_kind(obj) {
            format!("a {}, a training kind,", obj.kind)
        } else {
            "a batch/v1 Job".to_string()
        };
        return intent(
            IntentKind::Other,
            Basis::Kind,
            kind_node,
            &format!(
                "it is {what} but nothing in its commands, images or names says it trains{unknown}: GPU batch work"
            ),
        );
    }
    if inference_kind {
        return intent(
            IntentKind::Inference,
            Basis::Kind,
            kind_node,
            &format!("it is a {}, a serving kind", obj.kind),
        );
    }
    intent(
        IntentKind::Other,
        Basis::Kind,
        kind_node,
        &format!(
            "it is a {} and nothing in its commands, images or names says what it runs",
            obj.kind
        ),
    )
}

fn name_says(kind: IntentKind) -> &'static str {
    match kind {
        IntentKind::Training => "training",
        IntentKind::Inference => "serving",
        IntentKind::Benchmark => "benchmark",
        IntentKind::SmokeTest => "smoke test",
        IntentKind::Compile => "compile",
        IntentKind::Other => "other",
    }
}

/// What an image is, from its name: (kind, description).
fn image_cue(img: &str) -> Option<(IntentKind, &'static str)> {
    // Lowered once, then searched with `str::contains` (which skips ahead on a needle's bytes):
    // two dozen needles per GPU template were most of the classification's time.
    let lower = img.to_ascii_lowercase();
    let any = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    if any(&[
        "nccl-tests",
        "nccl_tests",
        "gpu-burn",
        "gpu_burn",
        "gpuburn",
        "nvbandwidth",
        "hpc-benchmarks",
        "mlperf-inference",
        "mlperf_inference",
        "perftest",
    ]) {
        return Some((IntentKind::Benchmark, "a benchmark image"));
    }
    if any(&["cuda-sample", "cuda-vector-add", "vectoradd", "devicequery"]) {
        return Some((IntentKind::SmokeTest, "a CUDA sample image"));
    }
    // The repository name, not the registry or the tag: `…/pytorch-training:2.3`, `…/trainer:1.0`.
    let repo = img.rsplit('/').next().unwrap_or(img);
    let repo = repo.split([':', '@']).next().unwrap_or(repo);
    // Images that cannot use a GPU: the pause container, Kubernetes' e2e test server
    // (`agnhost pause`) and the sleep image of Kueue's examples hold a GPU to test admission.
    if ["pause", "agnhost", "sleep"]
        .iter()
        .any(|x| repo.eq_ignore_ascii_case(x))
    {
        return Some((IntentKind::SmokeTest, "a test image that does no GPU work"));
    }
    if is_training_word(repo) {
        return Some((IntentKind::Training, "a training image"));
    }
    if any(&[
        "vllm",
        "text-generation-inference",
        "tritonserver",
        "sglang",
        "ollama",
        "lmdeploy",
        "torchserve",
        "kserve",
        "-inference",
        "/nim/",
    ]) {
        return Some((IntentKind::Inference, "a model-server image"));
    }
    None
}

/// The strongest thing the workload's name, labels or GPU container names say:
/// (kind, what the text is, the text, its node).
fn name_evidence<'a>(
    obj: &Object<'a>,
    t: &PodTemplate<'a>,
    gpu: &[&crate::model::Container<'a>],
) -> Option<(IntentKind, &'static str, &'a str, Node<'a>)> {
    let mut best: Option<(u8, IntentKind, &'static str, &'a str, Node<'a>)> = None;
    let mut consider = |what: &'static str, n: Node<'a>| {
        let Some(text) = n.as_str() else { return };
        if let Some((rank, kind)) = name_kind(text)
            && best.is_none_or(|b| rank > b.0)
        {
            best = Some((rank, kind, what, text, n));
        }
    };
    if let Some(m) = obj.metadata() {
        for key in ["name", "generateName"] {
            if let Some(n) = m.get(key) {
                consider("name", n);
            }
        }
    }
    for labels in [t.metadata.and_then(|m| m.get("labels")), obj.labels()]
        .into_iter()
        .flatten()
    {
        for (_, _, v) in labels.entries() {
            consider("label value", v);
        }
    }
    for c in gpu {
        if let Some(n) = c.get("name") {
            consider("container name", n);
        }
    }
    best.map(|(_, kind, what, text, n)| (kind, what, text, n))
}

/// What a name says, with a rank: benchmarks, smoke tests and compile jobs over training over
/// serving (`trainer-healthcheck` is a health check).
fn name_kind(s: &str) -> Option<(u8, IntentKind)> {
    let tokens = || s.split(|c: char| !c.is_ascii_alphanumeric());
    let tok = |names: &[&str]| tokens().any(|t| names.iter().any(|n| t.eq_ignore_ascii_case(n)));
    if tokens().any(|t| starts_ci(t, "bench"))
        || tok(&[
            "perf",
            "perftest",
            "nccl",
            "allreduce",
            "burn",
            "gpuburn",
            "nvbandwidth",
            "hpl",
            "stress",
            "loadtest",
        ])
    {
        return Some((5, IntentKind::Benchmark));
    }
    if tok(&[
        "smoke",
        "smoketest",
        "healthcheck",
        "sanity",
        "vectoradd",
        "devicequery",
        "smi",
    ]) || contains_ci(s, "health-check")
        || contains_ci(s, "health_check")
    {
        return Some((4, IntentKind::SmokeTest));
    }
    if tokens().any(|t| starts_ci(t, "compile") || starts_ci(t, "precompile")) {
        return Some((3, IntentKind::Compile));
    }
    if is_training_word(s) || tok(&["sft"]) {
        return Some((2, IntentKind::Training));
    }
    if tok(&[
        "serve",
        "serving",
        "server",
        "inference",
        "infer",
        "predictor",
        "vllm",
        "tgi",
        "triton",
    ]) {
        return Some((1, IntentKind::Inference));
    }
    None
}

#[cfg(test)]
mod tests;
