//! Unit tests of the value syntax checks, and of whole profiles through validation.

use super::checkpoint::inside;
use super::class::MAX_CLASS_NAME;
use super::formats::{is_budget, is_duration, is_volume_size};
use super::*;

#[test]
fn names_durations_budgets_and_sizes() {
    assert!(dns_label_problem("training", 63).is_none());
    assert!(dns_label_problem("0755", 63).is_none());
    for bad in ["", "Training", "a_b", "-a", "a-", "../x", "a.b"] {
        assert!(dns_label_problem(bad, 63).is_some(), "{bad:?}");
    }
    assert!(dns_label_problem(&"a".repeat(54), MAX_CLASS_NAME).is_some());
    for ok in ["10m", "1h30m", "720h", "30s"] {
        assert!(is_duration(ok), "{ok}");
    }
    for bad in ["", "m", "10", "1d", "1.5h", "Never"] {
        assert!(!is_duration(bad), "{bad}");
    }
    for ok in ["0", "3", "10%", "100%"] {
        assert!(is_budget(ok), "{ok}");
    }
    for bad in ["", "%", "101%", "1000%", "ten"] {
        assert!(!is_budget(bad), "{bad}");
    }
    for ok in ["50Gi", "1Ti", "500G"] {
        assert!(is_volume_size(ok), "{ok}");
    }
    for bad in ["", "50", "050Gi", "1.5Ti", "50Mi", "Gi"] {
        assert!(!is_volume_size(bad), "{bad}");
    }
    assert!(inside("/checkpoints/run1", "/checkpoints/"));
    assert!(!inside("/checkpoints2", "/checkpoints"));
}

const BASE: &str = "apiVersion: gpuops.dev/v1alpha1\nkind: Platform\ncluster:\n  name: c\n  region: us-east-1\n  zones: [us-east-1a]\n  nodeRole: r\n  amiAlias: al2023@v20250715\nclasses:\n  - name: t\n    type: training\n    gpus: [a100, g5, p5.48xlarge]\n    capacity: spot-first\n    maxGpus: 16\n";

#[test]
fn mixed_gpu_kinds_become_instance_types() {
    let p = crate::render::parse_profile("p.yaml", BASE).unwrap();
    let c = &p.classes[0];
    assert_eq!(c.selector.key(), "node.kubernetes.io/instance-type");
    assert!(c.selector.values().contains(&"p4d.24xlarge".to_string()));
    assert!(c.selector.values().contains(&"g5.xlarge".to_string()));
    assert_eq!(c.max_gpus_per_node(), 8);
    assert_eq!(
        c.tiers(),
        vec![("spot", Some(100)), ("on-demand", Some(10))]
    );
    assert_eq!(c.consolidation_policy(), "WhenEmpty");
    assert_eq!(c.root_volume, "100Gi");
}

#[test]
fn quotas_that_add_up_above_the_ceiling_are_reported_once_with_each_share() {
    let text = format!(
        "{BASE}teams:\n  - name: a\n    gpuQuota: {{t: 10}}\n  - name: b\n    gpuQuota: {{t: 10}}\n"
    );
    let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
    assert_eq!(e.problems.len(), 1, "{:#?}", e.problems);
    assert!(
        e.problems[0]
            .message
            .contains("add up to 20 GPUs, above its ceiling of 16")
    );
    assert_eq!(e.problems[0].related.len(), 2);
    assert_eq!(e.problems[0].span.start_pos(&text).line, 14);
}

#[test]
fn jobs_only_run_on_training_and_batch_classes() {
    let text = BASE.replace("type: training", "type: development")
        + "teams:\n  - name: a\n    gpuQuota: {t: 8}\njobs:\n  - name: j\n    team: a\n    class: t\n    image: x\n    args: [--checkpoint-dir=/c]\n    gpusPerWorker: 1\n    checkpoint: {claim: c, path: /c}\n";
    let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
    assert!(
        e.problems
            .iter()
            .any(|p| p.message.contains("consolidated when underutilized")),
        "{:#?}",
        e.problems
    );
}

#[test]
fn a_job_larger_than_its_cohort_is_never_admitted() {
    let job = |quota_b: u32| {
        BASE.to_string()
            + &format!(
                "teams:\n  - name: a\n    gpuQuota: {{t: 8}}\n  - name: b\n    gpuQuota: {{t: {quota_b}}}\njobs:\n  - name: j\n    team: a\n    class: t\n    image: x\n    args: [--checkpoint-dir=/c]\n    gpusPerWorker: 8\n    workers: 2\n    checkpoint: {{claim: c, path: /c}}\n"
            )
    };
    let text = job(4);
    let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
    let p = e
        .problems
        .iter()
        .find(|p| p.message.contains("never admits it"))
        .unwrap_or_else(|| panic!("{:#?}", e.problems));
    assert!(
        p.message
            .contains("16 GPUs at once (2 × 8), more than the 12")
    );
    assert_eq!(&text[p.span.range()], "2");
    // Borrowing from the other team's share is enough.
    let text = job(8);
    if let Err(e) = crate::render::parse_profile("p.yaml", &text) {
        assert!(
            !e.problems
                .iter()
                .any(|p| p.message.contains("never admits")),
            "{:#?}",
            e.problems
        );
    }
}

#[test]
fn a_launcher_starting_more_processes_than_gpus_is_reported_at_its_count() {
    let job = |args: &str| {
        BASE.to_string()
            + &format!(
                "teams:\n  - name: a\n    gpuQuota: {{t: 8}}\njobs:\n  - name: j\n    team: a\n    class: t\n    image: x\n    args: [{args}, --checkpoint-dir=/c]\n    gpusPerWorker: 6\n    checkpoint: {{claim: c, path: /c}}\n"
            )
    };
    let text = job("--nproc-per-node=8");
    let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
    let p = e
        .problems
        .iter()
        .find(|p| p.message.contains("starts 8 processes per node"))
        .unwrap_or_else(|| panic!("{:#?}", e.problems));
    assert_eq!(&text[p.span.range()], "--nproc-per-node=8");
    for agreeing in ["--nproc-per-node=6", "--nproc_per_node=gpu", "--nnodes=2"] {
        if let Err(e) = crate::render::parse_profile("p.yaml", &job(agreeing)) {
            assert!(
                !e.problems.iter().any(|p| p.message.contains("processes")),
                "{agreeing}: {:#?}",
                e.problems
            );
        }
    }
}
