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
fn a_launcher_spreading_inference_or_generation_does_not_train() {
    // The checkpoint directory is what generation reads its weights from.
    let (k, ev, _) = of(&job(
        "run",
        "image: ghcr.io/x/app:1\ncommand: [torchrun]\nargs: [--nproc_per_node=8, generate.py, --ckpt_dir, /data/model, --save_file, /out/a.mp4]",
    ));
    assert_eq!(k, IntentKind::Other, "{ev}");
    assert!(ev.contains("`torchrun` with `generate.py`"), "{ev}");
    for script in ["infer.py", "evaluate.py", "lm_eval.py", "sample_video.py"] {
        let (k, ev, _) = of(&job(
            "run",
            &format!(
                "image: ghcr.io/x/app:1\ncommand: [torchrun, --nproc_per_node=8, {script}, --checkpoint, /ckpt]"
            ),
        ));
        assert_eq!(k, IntentKind::Other, "{script}: {ev}");
    }
    // Without a launcher the name alone says so too: a checkpoint argument makes no training run.
    let (k, ev, _) = of(&job(
        "run",
        "image: ghcr.io/x/app:1\ncommand: [python, generate.py, --ckpt_dir, /data/model]",
    ));
    assert_eq!(k, IntentKind::Other, "{ev}");
    // Training arguments or a training script still train; so does a script no name explains.
    for cmd in [
        "[torchrun, generate.py, --max_steps, '10']",
        "[torchrun, train.py, --eval_steps, '10']",
        "[torchrun, main.py, --ckpt_dir, /ckpt]",
        "[deepspeed, retrieval.py, --save_dir, /ckpt]",
    ] {
        let (k, ev, _) = of(&job(
            "run",
            &format!("image: ghcr.io/x/app:1\ncommand: {cmd}"),
        ));
        assert_eq!(k, IntentKind::Training, "{cmd}: {ev}");
    }
}

#[test]
fn a_script_written_inline_is_judged_by_its_body_not_its_name() {
    let script = |body: &str| {
        let body: String = body.lines().map(|l| format!("    {l}\n")).collect();
        format!(
            "image: ghcr.io/x/jax:1\ncommand:\n  - bash\n  - -c\n  - |\n    cat <<'EOF' > distributed_train.py\n{body}    EOF\n    python3 distributed_train.py\n"
        )
    };
    // A matrix product named `…train.py`: GPU work, not training.
    let (k, ev, _) = of(&job(
        "hello",
        &script(
            "import jax\ny = jax.jit(lambda a: a @ a)(x)\nprint(y.sum())  # training simulation",
        ),
    ));
    assert_ne!(k, IntentKind::Training, "{ev}");
    // The same name with an optimizer and a loss: training.
    let (k, ev, _) = of(&job(
        "fit",
        &script("import optax\nopt = optax.adam(1e-3)\nloss = step(params)"),
    ));
    assert_eq!(k, IntentKind::Training, "{ev}");
}

#[test]
fn profiling_runs_are_not_training() {
    // Under Nsight Systems or Compute.
    let (k, ev, _) = of(&job(
        "prof",
        "image: ghcr.io/x/app:1\ncommand: [nsys, profile, torchrun, --nproc_per_node, '8', train.py]",
    ));
    assert_eq!(k, IntentKind::Benchmark, "{ev}");
    // With the Nsight Operator's injector label on the pods.
    let yaml = job(
        "fsdp",
        "image: ghcr.io/x/app:1\ncommand: [torchrun, --nproc_per_node, '8', train.py, --num_epochs, '1']",
    )
    .replace(
        "  template:\n    spec:\n",
        "  template:\n    metadata:\n      labels:\n        nvidia-devtools-sidecar-injector: enabled\n    spec:\n",
    );
    let (k, ev, _) = of(&yaml);
    assert_eq!(k, IntentKind::Benchmark, "{ev}");
    assert!(ev.contains("profiling run"), "{ev}");
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
    // The namespace (`training`) is not evidence; an unknown name and image leave GPU batch work.
    let (k, _, b) = of(&job("gpu-job", "image: ghcr.io/x/app:1"));
    assert_eq!((k, b), (IntentKind::Other, Basis::Kind));
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
fn images_that_cannot_use_a_gpu_are_smoke_tests() {
    for c in [
        "image: registry.k8s.io/e2e-test-images/agnhost:2.53\nargs: [pause]",
        "image: gcr.io/k8s-staging-perf-tests/sleep:v0.1.0\nargs: [10s]",
        "image: registry.k8s.io/pause:3.9",
    ] {
        let (k, ev, _) = of(&job("sample-job", c));
        assert_eq!(k, IntentKind::SmokeTest, "{c}: {ev}");
        assert!(ev.contains("a test image that does no GPU work"), "{ev}");
    }
    // Only the repository's own name counts: a trainer named after sleep research trains.
    let (k, ev, _) = of(&job(
        "sleep-study",
        "image: ghcr.io/lab/sleep-trainer:1\nargs: [--epochs, '3']",
    ));
    assert_eq!(k, IntentKind::Training, "{ev}");
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
fn trainium_names_the_accelerator_not_training() {
    // A Neuron device listing in a Job named after the Trainium chip.
    let (k, ev, _) = of(&job(
        "trainium-test",
        "image: public.ecr.aws/x/neuron-monitor:1.0.0\ncommand: [/bin/sh, -c, 'echo Trainium job; neuron-ls; echo done']",
    ));
    assert_ne!(k, IntentKind::Training, "{ev}");
    // Nor is a constraint solver, while a retraining run still trains.
    let (k, ev, _) = of(&job(
        "gpu",
        "image: ghcr.io/x/app:1\ncommand: [python, solve_constraints.py]",
    ));
    assert_ne!(k, IntentKind::Training, "{ev}");
    let (k, ev, _) = of(&job(
        "gpu",
        "image: ghcr.io/x/app:1\ncommand: [python, retrain.py, --epochs, '3']",
    ));
    assert_eq!(k, IntentKind::Training, "{ev}");
}

#[test]
fn nvidia_smi_before_real_work_is_not_a_smoke_test() {
    // nvidia-smi printed before a training run.
    let (k, _, _) = of(&job(
        "gpu",
        "image: ghcr.io/x/app:1\nargs: ['nvidia-smi; torchrun train.py']",
    ));
    assert_eq!(k, IntentKind::Training);
    // Before an unknown program: GPU batch work, saying what it could not place.
    let (k, ev, b) = of(&job(
        "gpu",
        "image: ghcr.io/x/app:1\nargs: ['nvidia-smi && python main.py']",
    ));
    assert_eq!((k, b), (IntentKind::Other, Basis::Kind));
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
fn a_bare_python_job_is_gpu_batch_work_not_training() {
    let (k, ev, b) = of(&job(
        "job-1",
        "image: ghcr.io/x/app:1\ncommand: [python, main.py]",
    ));
    assert_eq!((k, b), (IntentKind::Other, Basis::Kind));
    assert_eq!(
        ev,
        "classified as other because it is a batch/v1 Job but nothing in its commands, images or names says it trains (`main.py` names no known launcher or trainer): GPU batch work"
    );
}

#[test]
fn a_kubeflow_job_trains_when_its_commands_say_so() {
    let pj = |cmd: &str| {
        format!(
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: x}}\nspec:\n  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: ghcr.io/x/app:1\n{cmd}              resources: {{limits: {{nvidia.com/gpu: 8}}}}\n"
        )
    };
    // The kind alone is GPU batch work; a launcher makes it training.
    let (k, ev, b) = of(&pj(""));
    assert_eq!((k, b), (IntentKind::Other, Basis::Kind), "{ev}");
    let (k, ev, _) = of(&pj(
        "              command: [torchrun, --nproc_per_node=8, main.py]\n",
    ));
    assert_eq!(k, IntentKind::Training, "{ev}");
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
    assert_eq!((k, b), (IntentKind::Other, Basis::Kind));
    // A pod that only takes checkpoint arguments.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      image: ghcr.io/x/app:1\n      args: [--checkpoint_dir, /ckpt]\n      resources: {limits: {nvidia.com/gpu: 1}}\n";
    let (k, ev, _) = of(pod);
    assert_eq!(k, IntentKind::Training);
    assert_eq!(
        ev,
        "classified as training because it passes `--checkpoint_dir`"
    );
    // The same with a flag that says it only evaluates: the checkpoints are read.
    let (k, _, _) = of(&pod.replace("/ckpt]", "/ckpt, --evaluation_mode]"));
    assert_eq!(k, IntentKind::Other);
    // Hugging Face's `--do_train` outweighs `--do_eval`.
    let (k, _, _) = of(&pod.replace("/ckpt]", "/ckpt, --do_train, --do_eval]"));
    assert_eq!(k, IntentKind::Training);
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
