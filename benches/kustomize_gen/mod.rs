//! `BENCH_KUSTOMIZE=1`: a platform repository of Kustomize overlays, linted by the `gpuops`
//! binary with its build cache, first with the cache empty and then again with nothing changed,
//! then after one overlay's patch changed.
//!
//! The repository: a shared base of GPU platform objects and a large CRD bundle (what real
//! overlays rebuild again and again), one base per application, and each application's `dev`,
//! `staging` and `prod` overlays, each with a patch of its own and each deployed on its own (as
//! an Argo CD Application per overlay does): `APPS` × 3 overlays, plus the bases.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Applications; each has a base and three overlays.
const APPS: usize = 14;
const ENVS: [&str; 3] = ["dev", "staging", "prod"];

/// Writes the repository under `root` (again each time: it is small), returning how many
/// kustomizations it holds.
pub fn generate(root: &Path) -> std::io::Result<usize> {
    if root.exists() {
        std::fs::remove_dir_all(root)?;
    }
    let mut kustomizations = 0;
    let write = |rel: &str, text: &str| -> std::io::Result<()> {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)
    };
    // The shared base: CRDs (large, as real ones are) and the platform's pools and queues.
    write(
        "platform/base/kustomization.yaml",
        "resources:\n  - crds.yaml\n  - pools.yaml\n",
    )?;
    write("platform/base/crds.yaml", &crds())?;
    write("platform/base/pools.yaml", POOLS)?;
    kustomizations += 1;
    for a in 0..APPS {
        let app = format!("app-{a:02}");
        write(
            &format!("apps/{app}/base/kustomization.yaml"),
            "resources:\n  - job.yaml\n  - queue.yaml\n",
        )?;
        write(&format!("apps/{app}/base/job.yaml"), &job(&app))?;
        write(&format!("apps/{app}/base/queue.yaml"), &queue(&app))?;
        kustomizations += 1;
        for env in ENVS {
            write(
                &format!("apps/{app}/overlays/{env}/kustomization.yaml"),
                &format!(
                    "namespace: {app}-{env}\nresources:\n  - ../../base\n  - ../../../../platform/base\npatches:\n  - path: patch.yaml\n"
                ),
            )?;
            write(
                &format!("apps/{app}/overlays/{env}/patch.yaml"),
                &patch(&app, env, 1),
            )?;
            kustomizations += 1;
        }
    }
    Ok(kustomizations)
}

/// Changes one overlay's patch (the second run after it rebuilds what uses it).
pub fn touch(root: &Path, round: usize) -> std::io::Result<()> {
    std::fs::write(
        root.join("apps/app-00/overlays/dev/patch.yaml"),
        patch("app-00", "dev", round + 2),
    )
}

fn patch(app: &str, env: &str, parallelism: usize) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {app}-train\nspec:\n  parallelism: {parallelism}\n  template:\n    metadata:\n      labels:\n        env: {env}\n"
    )
}

fn job(app: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {app}-train\n  labels:\n    kueue.x-k8s.io/queue-name: {app}\nspec:\n  parallelism: 1\n  completions: 1\n  template:\n    metadata:\n      annotations:\n        karpenter.sh/do-not-disrupt: \"true\"\n    spec:\n      restartPolicy: Never\n      tolerations:\n        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n      nodeSelector:\n        workload: training\n      containers:\n        - name: train\n          image: registry.example.com/{app}:1.0\n          command: [python, train.py, --checkpoint-dir, /ckpt]\n          resources:\n            limits: {{nvidia.com/gpu: 1}}\n          volumeMounts:\n            - {{name: ckpt, mountPath: /ckpt}}\n      volumes:\n        - name: ckpt\n          persistentVolumeClaim: {{claimName: {app}-ckpt}}\n"
    )
}

fn queue(app: &str) -> String {
    format!(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: {app}\nspec:\n  clusterQueue: training\n"
    )
}

const POOLS: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: training
spec:
  template:
    metadata:
      labels:
        workload: training
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      taints:
        - {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
  limits:
    nvidia.com/gpu: 64
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu
spec:
  role: KarpenterNodeRole-platform
  amiSelectorTerms:
    - alias: al2023@v20251120
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: platform}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: platform}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: training
spec:
  nodeLabels:
    workload: training
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: training
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: training
          resources:
            - {name: nvidia.com/gpu, nominalQuota: 64}
";

/// A CRD bundle of about 700 KB: many versions of a wide schema, like the operators'
/// bundles overlays pull in.
fn crds() -> String {
    let mut s = String::new();
    for c in 0..6 {
        let _ = write!(
            s,
            "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets{c}.example.com\nspec:\n  group: example.com\n  names: {{kind: Widget{c}, plural: widgets{c}}}\n  scope: Namespaced\n  versions:\n"
        );
        for v in 0..4 {
            let _ = write!(
                s,
                "    - name: v{v}\n      served: true\n      storage: {}\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n",
                v == 3
            );
            for f in 0..250 {
                let _ = writeln!(
                    s,
                    "                field{f}: {{type: string, description: \"Field {f} of the widget: what it sets and when it takes effect.\"}}"
                );
            }
        }
    }
    s
}

/// One `gpuops lint` of `root` with the cache in `cache` and `extra` flags: its wall time and
/// exit code.
fn lint(bin: &Path, root: &Path, cache: &Path, extra: &[&str]) -> (Duration, Option<i32>) {
    let start = Instant::now();
    let status = Command::new(bin)
        .args(["lint", "--no-config", "--format", "json"])
        .args(extra)
        .arg(root)
        .env("GPUOPS_CACHE_DIR", cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    (start.elapsed(), status.ok().and_then(|s| s.code()))
}

/// Generates the repository and times the three runs, best of `runs` each (a fresh cache for
/// each first run).
pub fn run(runs: usize) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_gpuops"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-kustomize");
    let kustomizations = match generate(&root) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("cannot write {}: {e}", root.display());
            std::process::exit(2);
        }
    };
    let cache = root.with_file_name("bench-kustomize-cache");
    let (mut first, mut second, mut changed) = (Duration::MAX, Duration::MAX, Duration::MAX);
    let mut codes = Vec::new();
    for round in 0..runs {
        let _ = std::fs::remove_dir_all(&cache);
        let (t, c) = lint(&bin, &root, &cache, &[]);
        first = first.min(t);
        let (t2, c2) = lint(&bin, &root, &cache, &[]);
        second = second.min(t2);
        if let Err(e) = touch(&root, round) {
            eprintln!("cannot change a patch: {e}");
            std::process::exit(2);
        }
        let (t3, c3) = lint(&bin, &root, &cache, &[]);
        changed = changed.min(t3);
        codes.extend([c, c2, c3]);
    }
    let (no_render, _) = lint(&bin, &root, &cache, &["--no-render"]);
    println!(
        "{kustomizations} kustomizations ({APPS} applications × {} overlays and their bases): first run {:.2} s, second run {:.2} s, one patch changed {:.2} s; --no-render {:.2} s (best of {runs}; exit codes {codes:?})",
        ENVS.len(),
        first.as_secs_f64(),
        second.as_secs_f64(),
        changed.as_secs_f64(),
        no_render.as_secs_f64(),
    );
}
