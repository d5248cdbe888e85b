//! `cargo bench`: generates a synthetic GitOps repo (10,000 files, 50,000 objects) once under
//! target/, then times discovery + parsing + indexing + every rule, best of several runs.

use gpuops::config::Settings;
use gpuops::source::{self, Discovery};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FILES: usize = 10_000;
const OBJECTS_PER_FILE: usize = 5;

fn job(i: usize) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: train-{i}
  namespace: team-{t}
  labels:
    kueue.x-k8s.io/queue-name: team-{t}
spec:
  template:
    metadata:
      annotations:
        karpenter.sh/do-not-disrupt: \"true\"
    spec:
      restartPolicy: Never
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: trainer
          image: ghcr.io/example/trainer:{i}
          args: [\"--checkpoint-dir=/ckpt/run-{i}\"]
          resources:
            limits:
              nvidia.com/gpu: {g}
              cpu: \"16\"
              memory: 128Gi
          volumeMounts:
            - name: ckpt
              mountPath: /ckpt
      volumes:
        - name: ckpt
          persistentVolumeClaim:
            claimName: ckpt-{i}
",
        t = i % 20,
        g = 1 + i % 8
    )
}

fn deployment(i: usize) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve-{i}
  namespace: serving
spec:
  replicas: 2
  selector:
    matchLabels: {{app: serve-{i}}}
  template:
    metadata:
      labels: {{app: serve-{i}}}
    spec:
      nodeSelector:
        workload: inference
      tolerations:
        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
      containers:
        - name: server
          image: vllm/vllm-openai:v0.9.{i}
          resources:
            limits:
              nvidia.com/gpu: 1
"
    )
}

fn config_map(i: usize) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-{i}\n  namespace: serving\ndata:\n  key: value-{i}\n"
    )
}

fn platform() -> String {
    let mut s = String::new();
    for (name, label, gpus) in [
        ("training", "training", "[a100, h100]"),
        ("inference", "inference", "[l4, a10g]"),
    ] {
        s.push_str(&format!(
            "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {name}
spec:
  template:
    metadata:
      labels:
        workload: {label}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}
      requirements:
        - {{key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: {gpus}}}
      taints:
        - {{key: nvidia.com/gpu, effect: NoSchedule}}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
  limits:
    nvidia.com/gpu: \"512\"
---
"
        ));
    }
    s.push_str("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: training\nspec:\n  nodeLabels:\n    workload: training\n  tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n---\n");
    s.push_str("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: training\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n    - coveredResources: [cpu, memory, nvidia.com/gpu]\n      flavors:\n        - name: training\n          resources:\n            - {name: cpu, nominalQuota: \"4096\"}\n            - {name: memory, nominalQuota: 32Ti}\n            - {name: nvidia.com/gpu, nominalQuota: \"512\"}\n");
    for t in 0..20 {
        s.push_str(&format!(
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: team-{t}\n  namespace: team-{t}\nspec:\n  clusterQueue: training\n"
        ));
    }
    s
}

fn generate(root: &Path) {
    let marker = root.join(".complete");
    if marker.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).expect("create bench repo");
    std::fs::write(root.join("platform.yaml"), platform()).expect("write");
    let mut n = 0;
    for f in 0..FILES - 1 {
        let dir = root.join(format!("apps/group-{}", f % 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut text = String::new();
        for k in 0..OBJECTS_PER_FILE {
            if k > 0 {
                text.push_str("---\n");
            }
            n += 1;
            text.push_str(&match n % 5 {
                0 | 1 => job(n),
                2 => deployment(n),
                _ => config_map(n),
            });
        }
        std::fs::write(dir.join(format!("f{f}.yaml")), text).expect("write");
    }
    std::fs::write(marker, "").expect("write");
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-repo");
    generate(&root);
    let settings = Settings::default();
    let mut best = Duration::MAX;
    let mut summary = (0, 0, 0, 0);
    for _ in 0..5 {
        let start = Instant::now();
        let d = Discovery {
            exclude: None,
            exclude_root: None,
        };
        let (paths, _) = d.walk(std::slice::from_ref(&root));
        let (files, _) = source::load(&paths);
        let loaded = start.elapsed();
        let out = gpuops::lint(&files, &settings);
        let took = start.elapsed();
        if std::env::var_os("BENCH_PHASES").is_some() {
            eprintln!(
                "walk+parse {:.3} s, index+rules {:.3} s",
                loaded.as_secs_f64(),
                (took - loaded).as_secs_f64()
            );
        }
        best = best.min(took);
        summary = (
            files.len(),
            out.documents,
            out.objects,
            out.diagnostics.len(),
        );
    }
    if let Some(rule) = std::env::var_os("BENCH_ONE") {
        let d = Discovery {
            exclude: None,
            exclude_root: None,
        };
        let (paths, _) = d.walk(std::slice::from_ref(&root));
        let (files, _) = source::load(&paths);
        let ix = gpuops::index::Index::build(&files, &settings);
        let r = gpuops::rules::find(&rule.to_string_lossy()).expect("rule");
        let start = Instant::now();
        for _ in 0..5 {
            let cx = gpuops::rules::Ctx { ix: &ix, rule: r };
            let mut out = Vec::new();
            (r.check)(&cx, &mut out);
        }
        eprintln!(
            "{}: {:.3} s per run",
            r.name,
            start.elapsed().as_secs_f64() / 5.0
        );
        return;
    }
    if std::env::var_os("BENCH_RULES").is_some() {
        let d = Discovery {
            exclude: None,
            exclude_root: None,
        };
        let (paths, _) = d.walk(std::slice::from_ref(&root));
        let (files, _) = source::load(&paths);
        let start = Instant::now();
        let _ = gpuops::index::Index::build(&files, &settings);
        eprintln!("index: {:.3} s", start.elapsed().as_secs_f64());
        for r in gpuops::rules::all() {
            let s = Settings {
                only: Some(vec![r.name.to_string()]),
                ..Settings::default()
            };
            let start = Instant::now();
            let _ = gpuops::lint(&files, &s);
            eprintln!(
                "{:40} {:.3} s (with index)",
                r.name,
                start.elapsed().as_secs_f64()
            );
        }
    }
    println!(
        "lint: {} files, {} documents, {} objects, {} findings: best of 5 = {:.3} s ({} threads)",
        summary.0,
        summary.1,
        summary.2,
        summary.3,
        best.as_secs_f64(),
        rayon::current_num_threads()
    );
}
