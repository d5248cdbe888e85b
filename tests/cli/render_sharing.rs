//! `gpuops render` of classes that share their GPUs: MIG under either strategy, time-slicing and
//! MPS render lint clean, with the GPU operator's node labels, a taint of their own, the device
//! plugin ConfigMap, quotas in the shared resource and jobs asking for a slice; the profiles
//! gpuops cannot render sharing for are located errors.

use super::render::{at, check_core, parse_one, render_text, tolerates, write_profile};
use crate::common::{gpuops_in, human_text, root, run};
use gpuops::render;
use serde_json::Value;

fn example() -> String {
    std::fs::read_to_string(root().join("examples/profiles/sharing.yaml")).expect("example")
}

fn variant(replacements: &[(&str, &str)]) -> String {
    let mut t = example();
    for (from, to) in replacements {
        assert!(t.contains(from), "the example has `{from}`");
        t = t.replacen(from, to, 1);
    }
    t
}

/// Both MIG classes under `mixed`.
fn mixed() -> String {
    variant(&[
        (
            "      mig: 1g.10gb\n",
            "      mig: 1g.10gb\n      strategy: mixed\n",
        ),
        (
            "      mig: 3g.40gb\n",
            "      mig: 3g.40gb\n      strategy: mixed\n",
        ),
    ])
}

/// The rendered objects, parsed, by path.
fn objects(text: &str) -> Vec<(String, Value)> {
    let files = render_text("sharing.yaml", text);
    let (sources, findings) = render::self_check(&files, "");
    assert!(
        findings.is_empty(),
        "{text}\n{}",
        human_text(&findings, &sources)
    );
    files
        .iter()
        .map(|f| (f.path.clone(), parse_one(&f.path, &f.text).1))
        .collect()
}

fn object<'o>(objs: &'o [(String, Value)], path: &str) -> &'o Value {
    &objs
        .iter()
        .find(|(p, _)| p == path)
        .unwrap_or_else(|| panic!("{path} is rendered"))
        .1
}

fn quota<'v>(cq: &'v Value, resource: &str) -> &'v Value {
    let flavor = &cq["spec"]["resourceGroups"][0]["flavors"][0];
    &flavor["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == resource)
        .unwrap_or_else(|| panic!("no {resource} quota in {cq}"))["nominalQuota"]
}

#[test]
fn every_way_of_sharing_renders_lint_clean() {
    let mps = variant(&[("      timeSlicing:", "      mps:")]);
    for text in [example(), mixed(), mps] {
        for (path, o) in objects(&text) {
            let kind = o["kind"].as_str().unwrap_or_default().to_string();
            if matches!(kind.as_str(), "ConfigMap" | "NodeOverlay" | "Job") {
                check_core(&path, &kind, &o);
            }
        }
    }
}

#[test]
fn a_mig_class_is_labelled_tainted_narrowed_and_given_quota_in_instances() {
    let objs = objects(&example());
    let pool = object(&objs, "nodepools/eval-mig-on-demand.yaml");
    let tmpl = &pool["spec"]["template"];
    let labels = &tmpl["metadata"]["labels"];
    assert_eq!(labels["nvidia.com/mig.config"], "all-3g.40gb");
    assert_eq!(labels["nvidia.com/device-plugin.config"], "eval-mig");
    // `a100` names p4d and p4de; only p4de's 80 GB A100s have 3g.40gb.
    let reqs = tmpl["spec"]["requirements"]
        .as_array()
        .expect("requirements");
    assert_eq!(reqs[0]["key"], "node.kubernetes.io/instance-type");
    assert_eq!(reqs[0]["values"], serde_json::json!(["p4de.24xlarge"]));
    let taints = tmpl["spec"]["taints"].as_array().expect("taints");
    assert!(
        taints
            .iter()
            .any(|t| t["key"] == "gpuops.dev/gpu-sharing" && t["value"] == "mig-3g.40gb")
    );
    // The flavor and the job tolerate every taint of the pool.
    let flavor = object(&objs, "resourceflavors/eval-mig.yaml");
    let job = object(&objs, "jobs/research.eval-llama.yaml");
    for t in taints {
        for tolerations in [
            &flavor["spec"]["tolerations"],
            &job["spec"]["template"]["spec"]["tolerations"],
        ] {
            let all = tolerations.as_array().expect("tolerations");
            assert!(all.iter().any(|tol| tolerates(tol, t)), "{t} in {all:?}");
        }
    }
    // Under `single`, a job asks for one `nvidia.com/gpu`: one MIG instance.
    let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    assert_eq!(limits["nvidia.com/gpu"], 1);
    // 8 GPUs of quota: 2 instances each on eval-mig, 7 on inference-mig.
    let eval = object(&objs, "clusterqueues/research-eval-mig.yaml");
    assert_eq!(quota(eval, "nvidia.com/gpu"), 16);
    let inference = object(&objs, "clusterqueues/research-inference-mig.yaml");
    assert_eq!(quota(inference, "nvidia.com/gpu"), 56);
    // Time-sliced notebooks: 4 GPUs of quota, 4 pods each.
    let notebooks = object(&objs, "clusterqueues/product-notebooks.yaml");
    assert_eq!(quota(notebooks, "nvidia.com/gpu"), 16);
    // The device plugin configurations the nodes' labels name.
    let cm = object(
        &objs,
        "configmaps/gpu-operator.gpuops-device-plugin-configs.yaml",
    );
    let config = |k: &str| parse_one(k, cm["data"][k].as_str().expect("config")).1;
    assert_eq!(config("eval-mig")["flags"]["migStrategy"], "single");
    let ts = &config("notebooks")["sharing"]["timeSlicing"];
    assert_eq!(ts["resources"][0]["replicas"], 4);
    assert_eq!(ts["failRequestsGreaterThanOne"], true);
    assert!(
        cm["data"]["training"].is_null(),
        "whole GPUs get no configuration"
    );
    assert!(!objs.iter().any(|(p, _)| p.starts_with("nodeoverlays/")));
}

#[test]
fn mixed_mig_asks_for_profiles_and_tells_karpenter_what_nodes_hold() {
    let objs = objects(&mixed());
    let job = object(&objs, "jobs/research.eval-llama.yaml");
    let limits = &job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
    assert_eq!(limits["nvidia.com/mig-3g.40gb"], 1);
    assert!(limits["nvidia.com/gpu"].is_null());
    let eval = object(&objs, "clusterqueues/research-eval-mig.yaml");
    assert_eq!(quota(eval, "nvidia.com/mig-3g.40gb"), 16);
    let overlays: Vec<(&str, &Value)> = objs
        .iter()
        .filter(|(p, _)| p.starts_with("nodeoverlays/"))
        .map(|(p, o)| (p.as_str(), &o["spec"]["capacity"]))
        .collect();
    assert_eq!(
        overlays,
        [
            (
                "nodeoverlays/eval-mig-8gpu.yaml",
                &serde_json::json!({"nvidia.com/mig-3g.40gb": "16"})
            ),
            (
                "nodeoverlays/inference-mig-1gpu.yaml",
                &serde_json::json!({"nvidia.com/mig-1g.10gb": "7"})
            ),
            (
                "nodeoverlays/inference-mig-8gpu.yaml",
                &serde_json::json!({"nvidia.com/mig-1g.10gb": "56"})
            ),
        ]
    );
    let rq = object(&objs, "resourcequotas/research.gpuops-gpu.yaml");
    assert_eq!(rq["spec"]["hard"]["requests.nvidia.com/mig-3g.40gb"], "16");
}

#[test]
fn sharing_gpuops_cannot_render_is_a_located_error() {
    // (profile, the line and token of the place, the message); `sharing` is reported at its
    // first key.
    let cases: Vec<(String, &str, usize, &str, &str)> = vec![
        (
            variant(&[("al2023@v20250715", "bottlerocket@v1.42.0")]),
            "mig: 1g.10gb",
            1,
            "mig",
            "Bottlerocket runs the NVIDIA device plugin on the host",
        ),
        (
            variant(&[(
                "    maxGpus: 32\n",
                "    maxGpus: 32\n    sharing:\n      mps: {replicas: 2}\n",
            )]),
            "mps: {replicas: 2}",
            1,
            "mps",
            "class `training` is for training",
        ),
        (
            variant(&[(
                "      timeSlicing:\n        replicas: 4",
                "      mig: 1g.20gb",
            )]),
            "mig: 1g.20gb",
            1,
            "1g.20gb",
            "no GPU of class `notebooks` has MIG profile `1g.20gb`: l4 has no MIG",
        ),
        (
            variant(&[("      mig: 1g.10gb", "      mig: 1g.11gb")]),
            "mig: 1g.11gb",
            1,
            "1g.11gb",
            "`1g.11gb` is not a MIG profile of any GPU gpuops knows",
        ),
        (
            variant(&[("        replicas: 4", "        replicas: 1")]),
            "replicas: 1",
            1,
            "1",
            "1 replica per GPU shares nothing",
        ),
        (
            variant(&[("    class: eval-mig", "    class: notebooks")]),
            "class: notebooks",
            1,
            "notebooks",
            "class `notebooks` shares its GPUs (time-slicing) without isolation",
        ),
        (
            variant(&[("    gpusPerWorker: 1", "    gpusPerWorker: 2")]),
            "gpusPerWorker: 2",
            1,
            "2",
            "a CUDA process uses one",
        ),
        (
            variant(&[(
                "      mig: 3g.40gb\n",
                "      mig: 3g.40gb\n      strategy: mixed\n",
            )]),
            "mig: 3g.40gb",
            1,
            "mig",
            "class `eval-mig` asks for another MIG strategy than class `inference-mig`",
        ),
    ];
    for (text, line, nth, token, message) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        write_profile(tmp.path(), &text);
        let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
        assert_eq!(r.code, 2, "{message}: {}", r.err);
        assert!(
            r.err.contains(message),
            "missing `{message}` in:\n{}",
            r.err
        );
        let place = format!("platform.yaml:{}", at(&text, line, nth, token));
        assert!(
            r.err.contains(&place),
            "{place} for `{message}` in:\n{}",
            r.err
        );
        assert!(!tmp.path().join("deploy").exists(), "nothing is written");
    }
}

/// `gpuops cost` of the rendered example prices a slice per shared pool: the cheapest GPU-hour
/// over what one GPU is advertised as.
#[test]
fn cost_prices_a_slice_of_each_shared_pool() {
    let dir = tempfile::tempdir().unwrap();
    for f in render_text("sharing.yaml", &example()) {
        crate::common::write(dir.path(), &f.path, &f.text);
    }
    let r = run(gpuops_in(dir.path()).args(["cost", "--format", "json"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).unwrap();
    let shared = v["shared"].as_array().expect("shared rows");
    let row = |pool: &str| {
        shared
            .iter()
            .find(|s| s["pool"].as_str().is_some_and(|p| p.starts_with(pool)))
            .unwrap_or_else(|| panic!("no row for {pool}: {shared:?}"))
    };
    let mig = row("inference-mig");
    assert_eq!(mig["per_gpu"], 7);
    assert_eq!(mig["compute_slices_used"], 7);
    let per = |s: &Value| s["gpu_usd_hour"].as_f64().unwrap() / s["per_gpu"].as_f64().unwrap();
    assert!((mig["slice_usd_hour"].as_f64().unwrap() - per(mig)).abs() < 1e-9);
    let ts = row("notebooks");
    assert_eq!(ts["per_gpu"], 4);
    assert!(ts["compute_slices_used"].is_null());
}
