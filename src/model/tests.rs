use super::*;
use crate::yaml::{Budget, parse};

fn template(spec: &str) -> (Vec<u64>, bool, u64) {
    let p = parse(spec, Budget::default());
    let o = Object::from_node(0, p.docs[0].root()).unwrap();
    let t = pod_templates(0, &o).pop().unwrap();
    let counts = t.containers.iter().map(Container::gpu_count).collect();
    (counts, t.requests_gpu(), t.gpus_per_pod())
}

#[test]
fn gpu_count_takes_the_limit_else_the_request_once_per_resource() {
    let (counts, gpu, per_pod) = template(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n  - name: warm\n    resources: {requests: {nvidia.com/gpu: 2}}\n  containers:\n  - name: a\n    resources: {limits: {nvidia.com/gpu: 4}, requests: {nvidia.com/gpu: 4}}\n  - name: b\n    resources: {requests: {nvidia.com/gpu: 1, amd.com/gpu: 2}, limits: {amd.com/gpu: 3}}\n  - name: c\n    resources: {limits: {cpu: 2, vpc.amazonaws.com/efa: 1}}\n  - name: d\n    resources: {limits: {nvidia.com/gpu: 0.5}}\n",
    );
    // a: the limit once; b: nvidia request (no limit) + amd limit; c: no GPU; d: not whole.
    assert_eq!(counts, vec![2, 4, 4, 0, 0]);
    assert!(gpu);
    assert_eq!(per_pod, 8);
}

#[test]
fn expire_after_reads_nodepools_and_provisioners() {
    let expiry = |yaml: &str| {
        let p = parse(yaml, Budget::default());
        let o = Object::from_node(0, p.docs[0].root()).unwrap();
        let pool = NodePool::from_object(0, &o).unwrap();
        pool.expire_after()
            .map(|(v, n)| (v.into_owned(), n.is_some()))
    };
    let v1 = |spec: &str| {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: p}}\nspec: {spec}\n"
        )
    };
    assert_eq!(
        expiry(&v1("{template: {spec: {}}}")),
        Some(("720h".into(), false))
    );
    assert_eq!(
        expiry(&v1("{template: {spec: {expireAfter: 48h}}}")),
        Some(("48h".into(), true))
    );
    assert_eq!(
        expiry(&v1("{template: {spec: {expireAfter: Never}}}")),
        None
    );
    assert_eq!(
        expiry(&v1("{template: {spec: {expireAfter: '${TTL}'}}}")),
        None
    );
    let legacy = |spec: &str| {
        format!(
            "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {{name: p}}\nspec: {spec}\n"
        )
    };
    assert_eq!(
        expiry(&legacy("{ttlSecondsUntilExpired: 86400}")),
        Some(("86400s".into(), true))
    );
    assert_eq!(expiry(&legacy("{}")), None);
}

#[test]
fn a_pod_without_gpu_resources_requests_none() {
    let (counts, gpu, per_pod) = template(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    resources: {limits: {cpu: 1}}\n",
    );
    assert_eq!(counts, vec![0]);
    assert!(!gpu);
    assert_eq!(per_pod, 0);
}

#[test]
fn accelerators_are_named_for_what_they_are_and_zero_asks_for_none() {
    let name = |res: &str| {
        let p = parse(
            &format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: a\n    resources: {{limits: {{{res}}}}}\n"
            ),
            Budget::default(),
        );
        let o = Object::from_node(0, p.docs[0].root()).unwrap();
        let t = pod_templates(0, &o).pop().unwrap();
        (t.requests_gpu(), t.accelerator_name())
    };
    assert_eq!(name("nvidia.com/gpu: 1"), (true, "GPU"));
    assert_eq!(name("google.com/tpu: 8"), (true, "TPU"));
    assert_eq!(name("aws.amazon.com/neurondevice: 16"), (true, "Neuron"));
    assert_eq!(
        name("nvidia.com/gpu: 1, google.com/tpu: 4"),
        (true, "accelerator")
    );
    assert!(!name("nvidia.com/gpu: 0").0);
}
