//! What names say: programs, word pairs, scripts and modules, and argument names, each read
//! as a sort of cue for the command scanner.

use super::scan::Sort;
use super::words::{contains_ci, ends_ci, starts_ci};

/// Two words that say something together (`accelerate launch`, `vllm serve`, `dcgmi diag`).
pub(super) fn pair_signal(prev: &str, base: &str) -> Option<(Sort, &'static str)> {
    const PAIRS: &[(&str, &str, Sort, &str)] = &[
        ("accelerate", "launch", Sort::Launcher, "accelerate launch"),
        ("tune", "run", Sort::Launcher, "tune run"),
        (
            "llamafactory-cli",
            "train",
            Sort::Launcher,
            "llamafactory-cli train",
        ),
        ("vllm", "serve", Sort::Inference, "vllm serve"),
        ("vllm", "bench", Sort::Bench, "vllm bench"),
        ("ollama", "serve", Sort::Inference, "ollama serve"),
        ("lmdeploy", "serve", Sort::Inference, "lmdeploy serve"),
        ("serve", "run", Sort::Inference, "serve run"),
        ("dcgmi", "diag", Sort::Bench, "dcgmi diag"),
    ];
    PAIRS
        .iter()
        .find(|(a, b, _, _)| prev.eq_ignore_ascii_case(a) && base.eq_ignore_ascii_case(b))
        .map(|(_, _, sort, shown)| (*sort, *shown))
}

/// A program (or binary path) whose name alone says what it does.
pub(super) fn program_signal(base: &str) -> Option<Sort> {
    let is = |names: &[&str]| names.iter().any(|n| base.eq_ignore_ascii_case(n));
    if is(&[
        "neuron_parallel_compile",
        "neuronx-cc",
        "trtllm-build",
        "trtexec",
    ]) {
        return Some(Sort::Compile);
    }
    // nccl-tests (`all_reduce_perf`, `sendrecv_perf_mpi`), genai-perf, perf_analyzer, perftest.
    if ends_ci(base, "_perf")
        || contains_ci(base, "_perf_")
        || ends_ci(base, "-perf")
        || starts_ci(base, "perf_analyzer")
        || (starts_ci(base, "ib_") && (ends_ci(base, "_bw") || ends_ci(base, "_lat")))
        || is(&[
            "gpu_burn",
            "gpu-burn",
            "gpuburn",
            "nvbandwidth",
            "xhpl",
            "hpl",
            "hpl.sh",
            "p2pbandwidthlatencytest",
            "bandwidthtest",
            // Nsight Systems and Nsight Compute profile what they run: a measured, short run.
            "nsys",
            "ncu",
        ])
        || contains_ci(base, "loadgen")
    {
        return Some(Sort::Bench);
    }
    // Device listings of each accelerator: Neuron, Gaudi, AMD, Intel, OpenCL, TPU.
    if is(&[
        "nvidia-smi",
        "devicequery",
        "nvcc",
        "neuron-ls",
        "neuron-top",
        "hl-smi",
        "rocm-smi",
        "amd-smi",
        "rocminfo",
        "xpu-smi",
        "clinfo",
        "tpu-info",
    ]) || contains_ci(base, "vectoradd")
    {
        return Some(Sort::Smoke);
    }
    if is(&["torchrun", "deepspeed", "horovodrun"]) {
        return Some(Sort::Launcher);
    }
    if is(&[
        "text-generation-launcher",
        "tritonserver",
        "trtllm-serve",
        "torchserve",
        "uvicorn",
    ]) {
        return Some(Sort::Inference);
    }
    None
}

/// A script or module whose name says what it does.
pub(super) fn script_signal(name: &str) -> Option<Sort> {
    if contains_ci(name, "bench") {
        Some(Sort::Bench)
    } else if contains_ci(name, "compile") || contains_ci(name, "convert_checkpoint") {
        Some(Sort::Compile)
    } else if ["smoke", "healthcheck", "health_check", "sanity"]
        .iter()
        .any(|s| contains_ci(name, s))
    {
        Some(Sort::Smoke)
    } else if is_training_word(name) {
        Some(Sort::Launcher)
    } else if ["serve", "server", "infer", "predict"]
        .iter()
        .any(|s| contains_ci(name, s))
    {
        Some(Sort::Inference)
    } else if ["generate", "sample", "_eval", "-eval", ".eval"]
        .iter()
        .any(|s| contains_ci(name, s))
        || starts_ci(name, "eval")
    {
        Some(Sort::Generate)
    } else {
        None
    }
}

/// `train.py`, `finetune`, `pretrain_gpt`, `verl.trainer` — but not `pretrained` (models are
/// pretrained whatever runs them).
pub(super) fn is_training_word(s: &str) -> bool {
    (says_train(s) && !contains_ci(s, "pretrained"))
        || contains_ci(s, "finetun")
        || contains_ci(s, "fine-tun")
        || contains_ci(s, "fine_tun")
}

/// Whether `train` stands in `s` as a word's stem: not in AWS's Trainium accelerator
/// (`trainium-test`), nor in `strain` or `constraint`.
fn says_train(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(5).enumerate().any(|(i, w)| {
        w.eq_ignore_ascii_case(b"train")
            && !(i > 0 && b[i - 1].eq_ignore_ascii_case(&b's'))
            && !b
                .get(i + 5..i + 8)
                .is_some_and(|r| r.eq_ignore_ascii_case(b"ium"))
    })
}

/// What an argument name says (dashes and underscores alike, any case).
pub(super) fn key_sort(key: &str) -> Option<Sort> {
    let is = |names: &[&str]| names.iter().any(|n| key_eq(key, n));
    if is(&[
        "smoke_test",
        "smoke",
        "smoketest",
        "dry_run",
        "dryrun",
        "sanity_check",
    ]) {
        return Some(Sort::SmokeFlag);
    }
    if is(&["compile_only", "only_compile"]) {
        return Some(Sort::Compile);
    }
    // A run that only evaluates or predicts with a trained model (`--evaluation_mode`, or
    // Hugging Face's `--do_eval` without `--do_train`, which outweighs it).
    if is(&[
        "eval_only",
        "only_eval",
        "evaluate_only",
        "evaluation_only",
        "evaluation_mode",
        "eval_mode",
        "inference_only",
        "inference_mode",
        "predict_only",
        "test_only",
        "do_eval",
        "do_predict",
    ]) {
        return Some(Sort::Generate);
    }
    if is(&[
        "epochs",
        "num_epochs",
        "num_train_epochs",
        "n_epochs",
        "max_epochs",
        "train_epochs",
        "max_steps",
        "train_steps",
        "num_train_steps",
        "train_iters",
        "do_train",
    ]) || (contains_ci(key, "train") && !contains_ci(key, "pretrained"))
    {
        return Some(Sort::TrainArg);
    }
    if is(&["output_dir", "out_dir"])
        || ["checkpoint", "ckpt", "save", "resume"]
            .iter()
            .any(|p| starts_ci(key, p))
    {
        return Some(Sort::WeakArg);
    }
    None
}

/// Equal ignoring ASCII case, with `-` and `_` alike.
fn key_eq(a: &str, b: &str) -> bool {
    let norm = |c: u8| {
        if c == b'-' {
            b'_'
        } else {
            c.to_ascii_lowercase()
        }
    };
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| norm(x) == norm(y))
}
