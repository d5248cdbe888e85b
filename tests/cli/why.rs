//! `gpuops why`: the explanation of one object, in human and JSON form, and a target not found.

use crate::common::{Run, gpuops_in, root, run, write};

/// `gpuops why <args>` in the crate root.
fn why(args: &[&str]) -> Run {
    run(gpuops_in(root()).arg("why").args(args))
}

#[test]
fn why_a_deployment_that_cannot_land() {
    let Run { code, out, err } = why(&["Deployment/serving/llm-server", "examples/platform"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("why-llm-server", out);
}

#[test]
fn why_a_job_that_lands_through_kueue() {
    let Run { code, out, err } = why(&[
        "examples/clean/workloads/train-llama.yaml:5",
        "examples/clean",
    ]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("why-train-llama", out);
}

#[test]
fn why_a_job_larger_than_its_queue() {
    let Run { code, out, err } = why(&["job/research/sweep-lr", "examples/platform"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("why-sweep-lr", out);
    let Run { out, .. } = why(&[
        "job/research/sweep-lr",
        "examples/platform",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["objects"][0]["templates"][0];
    assert_eq!(t["verdict"]["lands"], false);
    let q = &t["route"]["flavors"][0]["quota"][0];
    assert_eq!(q["resource"], "nvidia.com/gpu");
    assert_eq!(q["nominal"], "96");
    assert_eq!(q["max"], "96");
    assert_eq!(q["request"], 128);
    assert!(
        q["location"]
            .as_str()
            .unwrap()
            .ends_with("quota-queues.yaml:42:29")
    );
}

#[test]
fn why_json_is_structured() {
    let Run { code, out, err } = why(&[
        "job/research/finetune-llama",
        "examples/clean",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let o = &v["objects"][0];
    assert_eq!(o["object"], "Job/research/finetune-llama");
    let t = &o["templates"][0];
    assert_eq!(t["path"], "spec.template");
    assert_eq!(t["verdict"]["lands"], true);
    assert_eq!(t["route"]["local_queue_name"], "research/training");
    assert_eq!(t["route"]["flavors"][0]["assignable"], true);
    let quota = &t["route"]["flavors"][0]["quota"][0];
    assert_eq!(quota["request"], 8);
    assert_eq!(quota["cohort"], "gpu");
    let pools = t["pools"].as_array().unwrap();
    assert!(pools.iter().any(|p| p["fits"] == true));
    let failing = pools.iter().find(|p| p["fits"] == false).unwrap();
    let check = failing["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["ok"] == false)
        .unwrap();
    // The Job selects nothing itself: the requirement is its flavor's `nodeLabels`.
    assert!(check["pod"].is_null(), "{check}");
    assert!(check["flavor"].as_str().unwrap().contains("queues.yaml:"));
    assert!(check["pool"].as_str().unwrap().contains("nodepools.yaml:"));
    let first = &t["instances"][0];
    assert_eq!(first["instance_type"], "p4d.24xlarge");
    assert!(first["price_usd_hour"].as_f64().is_some());
}

#[test]
fn why_unknown_object_is_exit_2_with_a_suggestion() {
    let Run { code, out, err } = why(&["Deployment/serving/llm-servr", "examples/platform"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("did you mean `Deployment/serving/llm-server`?"),
        "{err}"
    );
    let Run { code, err, .. } = why(&["examples/platform/nope.yaml", "examples/platform"]);
    assert_eq!(code, 2);
    assert!(err.contains("not among the files read"), "{err}");
}

#[test]
fn why_a_misspelt_queue_is_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "karpenter/nodepools.yaml",
        "kueue/queues.yaml",
        "workloads/train-llama.yaml",
    ] {
        let text = std::fs::read_to_string(root().join("examples/clean").join(rel))
            .unwrap()
            .replace("queue-name: training", "queue-name: trainng");
        write(dir.path(), rel, &text);
    }
    let out = gpuops_in(dir.path())
        .args(["why", "Job/finetune-llama", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["objects"][0]["templates"][0];
    assert_eq!(t["verdict"]["lands"], false);
    assert_eq!(
        t["verdict"]["summary"],
        "Kueue: LocalQueue `research/trainng` does not exist (did you mean `research/training`?)"
    );
}

/// The rendered example platform: a Job's own `gpuops.dev/class` selector and the one its flavor
/// injects are the same requirement. Each failing pool was listed twice (once per side, both
/// labelled `pod`); now once, with the flavor's line labelled as the flavor's.
#[test]
fn why_of_the_rendered_example_has_no_repeated_rows_and_labels_the_flavor() {
    let d = tempfile::tempdir().unwrap();
    let Run { code, err, .. } = run(gpuops_in(root())
        .args(["render", "examples/profiles/platform.yaml", "-o"])
        .arg(d.path()));
    assert_eq!(code, 0, "{err}");
    for job in [
        "jobs/ml-research.llama-finetune.yaml",
        "jobs/ml-applied.embeddings-backfill.yaml",
    ] {
        let Run { code, out, err } = run(gpuops_in(d.path()).args(["why", job, "."]));
        assert_eq!(code, 0, "{err}");
        // Table rows and "Why not" entries: none twice, no cell naming a label twice.
        let mut seen = std::collections::HashSet::new();
        let why_not = out.split("\n  Why not:\n").nth(1).unwrap_or("");
        let why_not = why_not.split("\n\n").next().unwrap_or("");
        let entries: Vec<&str> = why_not
            .lines()
            .take_while(|l| l.starts_with("    "))
            .filter(|l| !l.starts_with("      "))
            .collect();
        assert!(!entries.is_empty(), "{out}");
        for e in &entries {
            assert!(seen.insert(*e), "{job}: repeated `{e}`\n{out}");
        }
        for row in out.lines().filter(|l| l.contains(" no ")) {
            assert_eq!(row.matches("gpuops.dev/class").count(), 1, "{row}");
        }
        // The Job's selector is the pod's line, the flavor's nodeLabels the flavor's.
        for l in why_not.lines() {
            let l = l.trim_start();
            if let Some(at) = l.strip_prefix("pod ") {
                assert!(at.trim().starts_with("jobs/"), "{l}\n{out}");
            }
            if let Some(at) = l.strip_prefix("flavor ") {
                assert!(at.trim().starts_with("resourceflavors/"), "{l}\n{out}");
            }
        }
        assert!(why_not.contains("      flavor  resourceflavors/"), "{out}");
    }
}

/// A MIG request: which profile, on which GPU model, from which layout, how many per GPU; a DRA
/// claim: its device class and count.
#[test]
fn why_explains_mig_and_dra_requests() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(root().join("testdata/rules/shared-gpu-pool-ambiguous/fail.yaml"))
            .unwrap();
    write(dir.path(), "mig.yaml", &text);
    let text =
        std::fs::read_to_string(root().join("testdata/rules/gpu-toleration-missing/fail.dra.yaml"))
            .unwrap();
    write(dir.path(), "dra.yaml", &text);
    let json = |target: &str| -> serde_json::Value {
        let out = gpuops_in(dir.path())
            .args(["why", target, "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = json("Deployment/serving/llm");
    let rows = &v["objects"][0]["templates"][0]["sharing"];
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(rows[0]["pool"], "a100-mig");
    assert_eq!(
        rows[0]["what"],
        "a `1g.10gb` MIG instance on A100 80GB; layout `all-1g.10gb`; MIG strategy `single`; 7 per GPU"
    );
    assert_eq!(rows[0]["location"], "mig.yaml:33:32");
    let v = json("Job/ml/finetune");
    let rows = &v["objects"][0]["templates"][0]["sharing"];
    assert_eq!(rows[0]["request"], "ResourceClaimTemplate one-gpu");
    assert_eq!(
        rows[0]["what"],
        "DRA device class `gpu.nvidia.com`, 1 device"
    );
}

/// A DRA claim of every matching device (`allocationMode: All`): the GPUs per pod are a lower
/// bound, said so.
#[test]
fn why_says_at_least_for_a_claim_of_every_device() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        root().join("testdata/rules/nodeselector-matches-no-nodepool/pass.dra.yaml"),
    )
    .unwrap();
    write(dir.path(), "dra.yaml", &text);
    let out = gpuops_in(dir.path())
        .args(["why", "Job/ml/burn-in"])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(human.contains("at least 1 GPU per pod"), "{human}");
    let out = gpuops_in(dir.path())
        .args(["why", "Job/ml/finetune", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &v["objects"][0]["templates"][0];
    assert_eq!(t["gpus_per_pod"], 4, "{t}");
    assert!(t.get("gpus_at_least").is_none(), "{t}");
}

#[test]
fn why_a_job_an_admission_check_places_elsewhere() {
    let fixture = "testdata/rules/nodeselector-matches-no-nodepool/pass.admission-checks.yaml";
    for (target, place) in [
        ("Job/ml/remote-eval", "runs on a MultiKueue worker cluster"),
        (
            "Job/ml/queued-eval",
            "runs on nodes the cluster autoscaler provisions for a ProvisioningRequest",
        ),
    ] {
        let Run { code, out, err } = why(&[target, fixture, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let verdict = &v["objects"][0]["templates"][0]["verdict"];
        assert_eq!(verdict["lands"], true, "{target}: {out}");
        assert!(
            verdict["summary"].as_str().unwrap().starts_with(place),
            "{target}: {out}"
        );
    }
}

#[test]
fn why_lists_only_instances_with_the_memory_and_cpus_the_pod_asks_for() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "pool.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g4dn]}\n      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n",
    );
    // 32 GiB and 4 CPUs in one container, 8 GiB more in the other: g4dn.xlarge (16 GiB) and
    // g4dn.2xlarge (32 GiB) cannot hold it.
    write(
        d.path(),
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n      containers:\n        - name: main\n          image: trainer:1\n          resources:\n            requests: {cpu: '4', memory: 32Gi}\n            limits: {nvidia.com/gpu: 1, memory: 32Gi}\n        - name: loader\n          image: loader:1\n          resources:\n            limits: {memory: 8Gi}\n",
    );
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["why", "Job/train", "--no-config", "--format", "json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let types: Vec<&str> = v["objects"][0]["templates"][0]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["instance_type"].as_str())
        .collect();
    assert_eq!(types.first(), Some(&"g4dn.4xlarge"), "{out}");
    assert!(!types.contains(&"g4dn.xlarge") && !types.contains(&"g4dn.2xlarge"));
}
