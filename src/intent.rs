//! What a GPU workload is for — training, inference, a benchmark, a smoke test, a compile job —
//! decided from evidence in its manifest, with that evidence kept for messages.
//!
//! Evidence, first that decides wins:
//! 1. a configured training label (`training.labels`, default `workload-type: training`) on the
//!    pod template or the workload: its value `training` makes it training; any other value
//!    takes it out of training whatever else says;
//! 2. the command and arguments of its GPU containers (and a RayJob's `entrypoint`), shell
//!    scripts under `sh -c` included: compile steps, then benchmarks, then smoke-test flags on a
//!    trainer, then training launchers and arguments, then model servers, then smoke tests that
//!    do nothing else;
//! 3. the images of its GPU containers;
//! 4. the commands and images of the workload's other pod templates (an MPIJob launcher that runs
//!    `all_reduce_perf` for sshd workers);
//! 5. a GPU container that only sleeps (`sleep infinity`): a development pod;
//! 6. the workload's name, its labels and its GPU containers' names (never its namespace);
//! 7. checkpoint and output arguments (`--output_dir`, `--checkpoint*`, `--save_*`), which load
//!    and write models for other purposes too, so they only tip a workload nothing else placed;
//! 8. its kind: Kubeflow `*Job`, JobSet, RayJob and TrainJob are training, and so, by default,
//!    is a batch/v1 Job; Deployment, StatefulSet, LeaderWorkerSet, RayService and KServe kinds are
//!    inference.
//!
//! MLPerf: MLPerf Training runs train a model for hours and are judged by their launcher like any
//! training run; only MLPerf Inference (`loadgen`, `mlperf-inference` images) is a benchmark.
//!
//! It runs on every pod template of a repository, so it borrows words from the manifest and
//! allocates only the evidence sentence.

use crate::config::Settings;
use crate::index::{Class, is_inference_kind, is_training_kind};
use crate::model::{Object, PodTemplate};
use crate::yaml::Node;

mod scan;

use scan::{Cue, Scan, Seg, feed_str, is_training_word, scan_container};

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
    let found = from_evidence(obj, t);
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
    let gpu: Vec<&crate::model::Container<'a>> = t
        .gpu_containers()
        .filter(|c| !c.init)
        .chain(t.gpu_containers().filter(|c| c.init))
        .collect();

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

    // 3. Own images.
    for c in &gpu {
        if let Some(n) = c.get("image")
            && let Some(img) = n.as_str()
            && let Some((kind, what)) = image_cue(img)
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
    for_each_pod_spec(obj, &mut |spec| {
        if spec.is(t.spec) {
            return;
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
    });
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

    // 7. Checkpoint and output arguments.
    if !inference_kind && let Some(w) = own.weak_arg {
        let reason = format!("it passes `{}`", w.shown);
        return from_command(Basis::Command, (IntentKind::Training, reason, w));
    }

    // 8. The kind.
    let kind_node = obj.root.get("kind");
    let unknown = own
        .unknown
        .map(|u| format!(" (`{}` names no known launcher or trainer)", u.shown))
        .unwrap_or_default();
    if is_training_kind(obj) {
        return intent(
            IntentKind::Training,
            Basis::Kind,
            kind_node,
            &format!(
                "it is a {}, a training kind, and nothing in its commands, images or names says otherwise{unknown}",
                obj.kind
            ),
        );
    }
    if obj.is("batch", "Job") {
        return intent(
            IntentKind::Training,
            Basis::Kind,
            kind_node,
            &format!(
                "it is a batch/v1 Job and nothing in its command, image or name says what it runs{unknown}: a GPU Job counts as training by default"
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
    let any = |needles: &[&str]| needles.iter().any(|n| contains_ci(img, n));
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

/// Every pod spec of a workload with several templates (Kubeflow jobs, JobSet, Ray, LWS).
fn for_each_pod_spec<'a>(obj: &Object<'a>, f: &mut dyn FnMut(Node<'a>)) {
    let Some(spec) = obj.spec() else { return };
    match (obj.group, obj.kind) {
        ("kubeflow.org", _) => {
            for (key, _, replicas) in spec.entries() {
                if key.ends_with("ReplicaSpecs") {
                    for (_, _, rs) in replicas.entries() {
                        if let Some(s) = rs.at(&["template", "spec"]) {
                            f(s);
                        }
                    }
                }
            }
        }
        ("jobset.x-k8s.io", "JobSet") => {
            for rj in spec.get("replicatedJobs").into_iter().flat_map(Node::items) {
                if let Some(s) = rj.at(&["template", "spec", "template", "spec"]) {
                    f(s);
                }
            }
        }
        ("ray.io", kind) => {
            let cluster = match kind {
                "RayJob" => spec.get("rayClusterSpec"),
                "RayService" => spec.get("rayClusterConfig"),
                _ => Some(spec),
            };
            let Some(c) = cluster else { return };
            if let Some(s) = c.at(&["headGroupSpec", "template", "spec"]) {
                f(s);
            }
            for g in c.get("workerGroupSpecs").into_iter().flat_map(Node::items) {
                if let Some(s) = g.at(&["template", "spec"]) {
                    f(s);
                }
            }
        }
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet") => {
            for t in ["leaderTemplate", "workerTemplate"] {
                if let Some(s) = spec.at(&["leaderWorkerTemplate", t, "spec"]) {
                    f(s);
                }
            }
        }
        _ => {}
    }
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    let n = needle.len();
    n == 0
        || hay
            .as_bytes()
            .windows(n)
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn starts_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn ends_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

enum Tok<'a> {
    Word(&'a str),
    /// `;`, `&&`, `||`, `|`, `&`, a newline: the next word starts a new command.
    Sep,
}

/// Shell-ish words: quotes keep spaces, separators split commands, `#` starts a comment.
/// Words come back without their surrounding quotes, parentheses or braces.
struct Lexer<'a> {
    s: &'a str,
    i: usize,
}

fn lex(s: &str) -> Lexer<'_> {
    Lexer { s, i: 0 }
}

fn is_sep(b: u8) -> bool {
    matches!(b, b'\n' | b';' | b'&' | b'|')
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Tok<'a>;
    fn next(&mut self) -> Option<Tok<'a>> {
        let b = self.s.as_bytes();
        loop {
            while self.i < b.len() && matches!(b[self.i], b' ' | b'\t' | b'\r') {
                self.i += 1;
            }
            if self.i + 1 < b.len() && b[self.i] == b'\\' && b[self.i + 1] == b'\n' {
                self.i += 2;
                continue;
            }
            if self.i < b.len() && b[self.i] == b'#' {
                while self.i < b.len() && b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            break;
        }
        if self.i >= b.len() {
            return None;
        }
        if is_sep(b[self.i]) {
            while self.i < b.len() && is_sep(b[self.i]) {
                self.i += 1;
            }
            return Some(Tok::Sep);
        }
        let start = self.i;
        let mut quote: Option<u8> = None;
        while self.i < b.len() {
            let c = b[self.i];
            match quote {
                Some(q) if c == b'\\' && q == b'"' => {
                    self.i += 2;
                    continue;
                }
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'\'' || c == b'"' => quote = Some(c),
                None if c == b'\\' => {
                    self.i += 2;
                    continue;
                }
                None if matches!(c, b' ' | b'\t' | b'\r') || is_sep(c) => break,
                None => {}
            }
            self.i += 1;
        }
        self.i = self.i.min(b.len());
        let raw = self.s.get(start..self.i).unwrap_or("");
        Some(Tok::Word(raw.trim_matches(|c: char| {
            matches!(c, '"' | '\'' | '`' | '(' | ')' | '{' | '}')
        })))
    }
}

/// An image reference without its tag or digest (`ghcr.io/x/trainer:1.2` → `ghcr.io/x/trainer`).
fn image_repository(img: &str) -> &str {
    let img = img.split_once('@').map_or(img, |(r, _)| r);
    match img.rfind(':') {
        // A colon after the last slash is a tag; before it, a registry port.
        Some(i) if !img[i..].contains('/') => &img[..i],
        _ => img,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod_templates;
    use crate::yaml::{Budget, parse};

    /// Classifies the first GPU template of the one object in `yaml`.
    fn classify_yaml(yaml: &str, settings: &Settings) -> (IntentKind, String, Basis) {
        let parsed = parse(yaml, Budget::default());
        let root = &parsed.docs[0].root();
        let obj = Object::from_node(0, *root).expect("an object");
        let templates = pod_templates(0, &obj);
        let t = templates
            .iter()
            .find(|t| t.requests_gpu())
            .expect("a GPU template");
        let i = classify(&obj, t, settings);
        (i.kind, i.evidence, i.basis)
    }

    fn of(yaml: &str) -> (IntentKind, String, Basis) {
        classify_yaml(yaml, &Settings::default())
    }

    /// A batch/v1 Job named `name` whose one GPU container has these extra fields.
    fn job(name: &str, container: &str) -> String {
        let mut c = String::new();
        for line in container.lines() {
            c.push_str("          ");
            c.push_str(line);
            c.push('\n');
        }
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: training\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n{c}          resources:\n            limits:\n              nvidia.com/gpu: 8\n"
        )
    }

    #[test]
    fn image_repositories_drop_tag_and_digest() {
        assert_eq!(
            image_repository("ghcr.io/x/trainer:1.2"),
            "ghcr.io/x/trainer"
        );
        assert_eq!(
            image_repository("registry:5000/x/trainer"),
            "registry:5000/x/trainer"
        );
        assert_eq!(
            image_repository("registry:5000/x/t:2@sha256:ab"),
            "registry:5000/x/t"
        );
        assert_eq!(image_repository("trainer"), "trainer");
    }

    #[test]
    fn torchrun_with_epochs_is_training() {
        let (k, ev, b) = of(&job(
            "run",
            "image: ghcr.io/x/app:1\ncommand: [torchrun, --nproc_per_node, '8', main.py, --epochs, '3']",
        ));
        assert_eq!(k, IntentKind::Training);
        assert_eq!(b, Basis::Command);
        assert_eq!(
            ev,
            "classified as training because it runs `torchrun` with `--epochs`"
        );
    }

    #[test]
    fn launchers_inside_sh_c_scripts() {
        for cmd in [
            "command: [sh, -c]\nargs: ['pip install -r r.txt && accelerate launch run.py --x 1']",
            "command: [bash, -ec, 'cd /w; python -m torch.distributed.run --nnodes 2 run.py']",
            "command: ['/bin/sh', '-c', 'NCCL_DEBUG=INFO deepspeed run.py']",
            "args: ['python finetune_llama.py --lr 1e-5']",
            "command: [python, -m, axolotl.cli.train, cfg.yaml]",
            "args: [python, main.py, trainer.max_epochs=3]",
        ] {
            let (k, ev, _) = of(&job("run", &format!("image: ghcr.io/x/app:1\n{cmd}")));
            assert_eq!(k, IntentKind::Training, "{cmd}: {ev}");
        }
    }

    #[test]
    fn nccl_all_reduce_is_a_benchmark_even_in_a_training_namespace() {
        let (k, ev, _) = of(&job(
            "allreduce",
            "image: ghcr.io/x/app:1\ncommand: [mpirun, -np, '16', -x, NCCL_DEBUG=INFO, /opt/nccl-tests/build/all_reduce_perf, -b, 8, -e, 8G]",
        ));
        assert_eq!(k, IntentKind::Benchmark, "{ev}");
        assert!(ev.contains("`all_reduce_perf`"), "{ev}");
        // The namespace (`training`) is not evidence; an unknown name and image leave the kind.
        let (k, _, b) = of(&job("gpu-job", "image: ghcr.io/x/app:1"));
        assert_eq!((k, b), (IntentKind::Training, Basis::Kind));
    }

    #[test]
    fn benchmarks_by_binary_image_and_name() {
        for (name, c) in [
            (
                "a",
                "image: ghcr.io/x/app:1\ncommand: [/usr/local/bin/gpu_burn, '600']",
            ),
            (
                "a",
                "image: nvcr.io/nvidia/cloud-native/dcgm:3\ncommand: [dcgmi, diag, -r, '3']",
            ),
            (
                "a",
                "image: ghcr.io/x/app:1\nargs: ['nvbandwidth -t device_to_device_memcpy_read_ce']",
            ),
            ("a", "image: public.ecr.aws/hpc-cloud/nccl-tests:latest"),
            (
                "a",
                "image: nvcr.io/nvidia/hpc-benchmarks:24.03\ncommand: [./hpl.sh, --dat, /w/HPL.dat]",
            ),
            ("llama-bench", "image: ghcr.io/x/app:1"),
            (
                "a",
                "image: ghcr.io/x/app:1\ncommand: [torchrun, benchmark_ddp.py]",
            ),
        ] {
            let (k, ev, _) = of(&job(name, c));
            assert_eq!(k, IntentKind::Benchmark, "{c}: {ev}");
        }
    }

    #[test]
    fn nvidia_smi_and_sleep_is_a_smoke_test() {
        let (k, ev, _) = of(&job(
            "gpu",
            "image: nvidia/cuda:12.4.0-base-ubuntu22.04\ncommand: [sh, -c, 'nvidia-smi && sleep 3600']",
        ));
        assert_eq!(k, IntentKind::SmokeTest);
        assert_eq!(
            ev,
            "classified as a smoke test because it only runs `nvidia-smi` and sleeps"
        );
        let (k, _, _) = of(&job(
            "gpu",
            "image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
        ));
        assert_eq!(k, IntentKind::SmokeTest);
        let (k, ev, _) = of(&job(
            "gpu",
            "image: pytorch/pytorch:2.3.0\ncommand: [python, -c, 'import torch; print(torch.cuda.is_available())']",
        ));
        assert_eq!(k, IntentKind::SmokeTest, "{ev}");
    }

    #[test]
    fn nvidia_smi_before_real_work_is_not_a_smoke_test() {
        // nvidia-smi printed before a training run.
        let (k, _, _) = of(&job(
            "gpu",
            "image: ghcr.io/x/app:1\nargs: ['nvidia-smi; torchrun train.py']",
        ));
        assert_eq!(k, IntentKind::Training);
        // Before an unknown program: the kind decides, and says what it could not place.
        let (k, ev, b) = of(&job(
            "gpu",
            "image: ghcr.io/x/app:1\nargs: ['nvidia-smi && python main.py']",
        ));
        assert_eq!((k, b), (IntentKind::Training, Basis::Kind));
        assert!(ev.contains("`main.py` names no known launcher"), "{ev}");
    }

    #[test]
    fn a_trainer_told_to_smoke_test_is_a_smoke_test() {
        let (k, ev, _) = of(&job(
            "llama",
            "image: ghcr.io/x/app:1\ncommand: [python, train.py, --smoke-test]",
        ));
        assert_eq!(k, IntentKind::SmokeTest);
        assert_eq!(
            ev,
            "classified as a smoke test because it runs `train.py` with `--smoke-test`"
        );
    }

    #[test]
    fn sleep_infinity_gpu_pod_is_a_dev_pod() {
        let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: dev}\nspec:\n  template:\n    spec:\n      containers:\n        - name: shell\n          image: pytorch/pytorch:2.3.0\n          command: [sleep, infinity]\n          resources: {limits: {nvidia.com/gpu: 1}}\n";
        let (k, ev, _) = of(yaml);
        assert_eq!(k, IntentKind::Other);
        assert!(ev.contains("development pod"), "{ev}");
        // `while true; do sleep 30; done` after setup is idle too.
        let (k, _, _) = of(&job(
            "x",
            "image: ghcr.io/x/app:1\nargs: ['pip install foo; while true; do sleep 30; done']",
        ));
        assert_eq!(k, IntentKind::Other);
    }

    #[test]
    fn compile_jobs() {
        for c in [
            "command: [neuron_parallel_compile, torchrun, train.py, --max_steps, '10']",
            "args: ['trtllm-build --checkpoint_dir /ckpt --output_dir /engines']",
            "args: ['python convert_checkpoint.py --model_dir /m --output_dir /c']",
            "command: [python, run.py, --compile-only]",
            "command: [python, -c, 'import torch; m = torch.compile(model); warmup(m)']",
        ] {
            let (k, ev, _) = of(&job("x", &format!("image: ghcr.io/x/app:1\n{c}")));
            assert_eq!(k, IntentKind::Compile, "{c}: {ev}");
        }
    }

    #[test]
    fn bare_python_job_keeps_the_kind_default() {
        let (k, ev, b) = of(&job(
            "job-1",
            "image: ghcr.io/x/app:1\ncommand: [python, main.py]",
        ));
        assert_eq!((k, b), (IntentKind::Training, Basis::Kind));
        assert_eq!(
            ev,
            "classified as training because it is a batch/v1 Job and nothing in its command, image or name says what it runs (`main.py` names no known launcher or trainer): a GPU Job counts as training by default"
        );
    }

    #[test]
    fn kubeflow_job_is_training_unless_commands_say_otherwise() {
        let pj = |cmd: &str| {
            format!(
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: x}}\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: ghcr.io/x/app:1\n{cmd}              resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
            )
        };
        let (k, ev, b) = of(&pj(""));
        assert_eq!((k, b), (IntentKind::Training, Basis::Kind), "{ev}");
        let (k, _, _) = of(&pj(
            "              command: [sh, -c, 'nvidia-smi && sleep 3600']\n",
        ));
        assert_eq!(k, IntentKind::SmokeTest);
    }

    #[test]
    fn mpijob_workers_take_the_launchers_benchmark() {
        let yaml = "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n  mpiReplicaSpecs:\n    Launcher:\n      template:\n        spec:\n          containers:\n            - name: l\n              image: ghcr.io/x/mpi:1\n              command: [mpirun, --allow-run-as-root, -np, '16', /opt/bin/all_gather_perf, -b, '8']\n    Worker:\n      template:\n        spec:\n          containers:\n            - name: w\n              image: ghcr.io/x/mpi:1\n              command: [/usr/sbin/sshd, -De]\n              resources: {limits: {nvidia.com/gpu: 8}}\n";
        let (k, ev, b) = of(yaml);
        assert_eq!((k, b), (IntentKind::Benchmark, Basis::Sibling), "{ev}");
    }

    #[test]
    fn rayjob_entrypoint_counts() {
        let yaml = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: x}\nspec:\n  entrypoint: python batch_infer.py --model /m\n  rayClusterSpec:\n    workerGroupSpecs:\n      - groupName: gpu\n        template:\n          spec:\n            containers:\n              - name: w\n                image: rayproject/ray:2.9.0-gpu\n                resources: {limits: {nvidia.com/gpu: 1}}\n";
        let (k, ev, _) = of(yaml);
        assert_eq!(k, IntentKind::Inference, "{ev}");
    }

    #[test]
    fn inference_by_kind_image_and_command() {
        let dep = |c: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: llm}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: s\n{c}          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
            )
        };
        // A checkpoint-ish argument does not make a server a trainer.
        let (k, _, b) = of(&dep(
            "          image: vllm/vllm-openai:v0.5.0\n          args: [--output_dir, /cache]\n",
        ));
        assert_eq!((k, b), (IntentKind::Inference, Basis::Image));
        let (k, _, b) = of(&dep("          image: ghcr.io/x/app:1\n"));
        assert_eq!((k, b), (IntentKind::Inference, Basis::Kind));
        let (k, _, _) = of(&job(
            "x",
            "image: ghcr.io/x/app:1\nargs: [vllm, serve, meta-llama/Llama-3-8B]",
        ));
        assert_eq!(k, IntentKind::Inference);
        // RL trainers that mention vllm in their overrides are still trainers.
        let (k, _, _) = of(&job(
            "x",
            "image: ghcr.io/x/app:1\nargs: [python3, -m, verl.trainer.main_ppo, actor.rollout.name=vllm]",
        ));
        assert_eq!(k, IntentKind::Training);
    }

    #[test]
    fn names_and_labels() {
        let (k, ev, b) = of(&job("gpu-smoke-test", "image: ghcr.io/x/app:1"));
        assert_eq!((k, b), (IntentKind::SmokeTest, Basis::Name), "{ev}");
        assert!(ev.contains("its name `gpu-smoke-test`"), "{ev}");
        // A trainer's health check is a health check.
        let (k, _, _) = of(&job("trainer-healthcheck", "image: ghcr.io/x/app:1"));
        assert_eq!(k, IntentKind::SmokeTest);
        // `pretrained` is not `train`.
        let (k, _, b) = of(&job(
            "eval",
            "image: ghcr.io/x/app:1\nargs: [--model, /models/pretrained]",
        ));
        assert_eq!((k, b), (IntentKind::Training, Basis::Kind));
        // A pod that only takes checkpoint arguments.
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: ghcr.io/x/app:1\n      args: [--checkpoint_dir, /ckpt]\n      resources: {limits: {nvidia.com/gpu: 1}}\n";
        let (k, ev, _) = of(pod);
        assert_eq!(k, IntentKind::Training);
        assert_eq!(
            ev,
            "classified as training because it passes `--checkpoint_dir`"
        );
    }

    #[test]
    fn config_labels_come_first() {
        let s = Settings::default();
        let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nccl-bench\n  labels: {workload-type: training}\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          image: x\n          command: [all_reduce_perf]\n          resources: {limits: {nvidia.com/gpu: 1}}\n";
        let (k, _, b) = classify_yaml(yaml, &s);
        assert_eq!((k, b), (IntentKind::Training, Basis::Config));
        let other = yaml.replace("workload-type: training", "workload-type: batch");
        let (k, _, _) = classify_yaml(&other, &s);
        assert_eq!(k, IntentKind::Benchmark);
        let other = other.replace("command: [all_reduce_perf]", "command: [torchrun, t.py]");
        let (k, ev, b) = classify_yaml(&other, &s);
        assert_eq!((k, b), (IntentKind::Other, Basis::Config), "{ev}");
    }

    #[test]
    fn no_gpu_is_other() {
        let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t}\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          command: [torchrun, train.py]\n";
        let parsed = parse(yaml, Budget::default());
        let obj = Object::from_node(0, parsed.docs[0].root()).expect("object");
        let templates = pod_templates(0, &obj);
        let i = classify(&obj, &templates[0], &Settings::default());
        assert_eq!((i.kind, i.basis), (IntentKind::Other, Basis::NoGpu));
    }

    #[test]
    fn lexer_keeps_quotes_and_splits_commands() {
        let words: Vec<String> = lex("a \"b c\" && d;e # comment\nf \\\n g")
            .map(|t| match t {
                Tok::Word(w) => w.to_string(),
                Tok::Sep => "|".to_string(),
            })
            .collect();
        assert_eq!(words, ["a", "b c", "|", "d", "|", "e", "|", "f", "g"]);
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for s in ["\\", "\"", "'unterminated", "é\\é", "a\\", "\\\n", "#"] {
            let _ = lex(s).count();
        }
    }
}
