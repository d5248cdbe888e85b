//! What a run infers from the repository alone: examples judged on their own, capacity outside
//! Karpenter, pools of providers whose instances the catalog does not hold, and manifests that
//! Terraform fills in before they are read.

use crate::common::{Run, gpuops_in, run, write};
use std::fs;

fn findings(out: &str) -> Vec<(String, String)> {
    crate::lint::findings(&crate::sources::json(out))
}

/// The findings of one rule.
fn of(rule: &str, out: &str) -> Vec<String> {
    findings(out)
        .into_iter()
        .filter(|(r, _)| r == rule)
        .map(|(_, path)| path)
        .collect()
}

const CONSOLIDATION: &str = "training-consolidation-underutilized";

const GPU_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    metadata:\n      labels: {pool: gpu}\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n  limits:\n    nvidia.com/gpu: 64\n";

const TRAINING_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: finetune\n  namespace: ml\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      tolerations:\n        - {key: nvidia.com/gpu, operator: Exists}\n      containers:\n        - name: trainer\n          image: ghcr.io/example/trainer:1.0\n          command: [torchrun, train.py, --epochs, \"3\"]\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n";

/// The training Job pinned to nodes by `selector` (a flow mapping's content).
fn pinned_job(selector: &str) -> String {
    TRAINING_JOB.replace(
        "      tolerations:",
        &format!("      nodeSelector: {{{selector}}}\n      tolerations:"),
    )
}

/// The files `nodeselector-matches-no-nodepool` reports on in a lint of `dir`.
fn no_pool_fits(dir: &std::path::Path) -> Vec<String> {
    let Run { out, .. } = run(gpuops_in(dir).args(["lint", "--format", "json"]));
    of("nodeselector-matches-no-nodepool", &out)
}

#[test]
fn one_example_does_not_judge_another() {
    // The pool of an autoscaling example and the training Job of another: each is meant for a
    // cluster of its own, so the pool's consolidation is no risk to that Job.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "examples/autoscaling/pool.yaml", GPU_POOL);
    write(d.path(), "examples/training/job.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(CONSOLIDATION, &out), Vec::<String>::new(), "{out}{err}");
    // The same pool outside every example is the platform the examples share.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "infra/pool.yaml", GPU_POOL);
    write(d.path(), "examples/training/job.yaml", TRAINING_JOB);
    write(d.path(), "examples/serving/job.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of(CONSOLIDATION, &out),
        vec!["infra/pool.yaml"],
        "{out}{err}"
    );
    // Demos side by side at the root, each a directory named as one (`…-demo`).
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "autoscaling-demo/pool.yaml", GPU_POOL);
    write(d.path(), "training-demo/job.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(CONSOLIDATION, &out), Vec::<String>::new(), "{out}{err}");
    // Inside one example the pool and the Job judge each other as before.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "examples/training/pool.yaml", GPU_POOL);
    write(d.path(), "examples/training/job.yaml", TRAINING_JOB);
    write(d.path(), "examples/other/job.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of(CONSOLIDATION, &out),
        vec!["examples/training/pool.yaml"],
        "{out}{err}"
    );
}

#[test]
fn aks_node_pools_and_other_providers_pools_are_not_judged_by_the_aws_catalog() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "pools/gpu.yaml", GPU_POOL);
    // AKS puts `agentpool` (and `kubernetes.azure.com/agentpool`) on its node pools' nodes.
    write(
        d.path(),
        "apps/aks.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: aks\nspec:\n  selector: {matchLabels: {app: aks}}\n  template:\n    metadata:\n      labels: {app: aks}\n    spec:\n      nodeSelector: {agentpool: gpu}\n      containers:\n        - name: c\n          image: nvidia/cuda:12.4.0-base-ubuntu22.04\n          resources:\n            limits: {nvidia.com/gpu: 1}\n",
    );
    // A pool of another provider: its instance type is not an AWS one, and it still launches
    // GPU nodes with the label the Deployment selects.
    write(
        d.path(),
        "pools/nebius.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: nebius-gpu\nspec:\n  template:\n    metadata:\n      labels: {nodepool: nebius-gpu}\n    spec:\n      nodeClassRef: {group: flex.aks.azure.com, kind: NebiusNodeClass, name: nebius}\n      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [gpu-h100-sxm-1gpu-16vcpu-200gb]}\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n  limits:\n    nvidia.com/gpu: 64\n",
    );
    write(
        d.path(),
        "apps/nebius.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nebius\nspec:\n  selector: {matchLabels: {app: nebius}}\n  template:\n    metadata:\n      labels: {app: nebius}\n    spec:\n      nodeSelector: {nodepool: nebius-gpu}\n      tolerations:\n        - {key: nvidia.com/gpu, operator: Exists}\n      containers:\n        - name: c\n          image: nvidia/cuda:12.4.0-base-ubuntu22.04\n          resources:\n            limits: {nvidia.com/gpu: 1}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // `why` does not give the other provider's pool the catalog's GPUs per node.
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["why", "apps/nebius.yaml"]));
    assert!(out.contains("1/unknown"), "{out}{err}");
}

#[test]
fn quotes_inside_a_terraform_interpolation_do_not_break_the_yaml_around_it() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "terraform/nodepools.tf",
        "resource \"kubectl_manifest\" \"gpu\" {\n  yaml_body = <<-YAML\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"${join(\"\\\", \\\"\", var.capacity_types)}\"]\n      taints:\n        - {key: nvidia.com/gpu, effect: NoSchedule}\n  YAML\n}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of("invalid-yaml", &out), Vec::<String>::new(), "{out}{err}");
    let json = crate::sources::json(&out);
    assert_eq!(json["summary"]["objects"], 1, "{out}");
}

#[test]
fn a_heredoc_line_terraform_fills_with_a_key_or_nothing_is_a_template() {
    // `${cond ? "kmsKeyId: \"${var.kms}\"" : ""}` where keys go: Terraform writes a whole line,
    // or nothing; unfilled, the YAML does not parse.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "storage.tf",
        "resource \"kubectl_manifest\" \"sc\" {\n  yaml_body = <<-YAML\n  apiVersion: storage.k8s.io/v1\n  kind: StorageClass\n  metadata:\n    name: gp3\n  provisioner: ebs.csi.aws.com\n  parameters:\n    type: gp3\n    ${var.kms != null ? \"kmsKeyId: \\\"${var.kms}\\\"\" : \"\"}\n  YAML\n}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of("invalid-yaml", &out), Vec::<String>::new(), "{out}{err}");
    let json = crate::sources::json(&out);
    assert_eq!(json["skipped"][0]["path"], "storage.tf", "{out}");
    // A heredoc that parses, with a duplicate key beside an interpolation, is still read.
    write(
        d.path(),
        "storage.tf",
        "resource \"kubectl_manifest\" \"sc\" {\n  yaml_body = <<-YAML\n  apiVersion: storage.k8s.io/v1\n  kind: StorageClass\n  metadata:\n    name: ${var.name}\n  provisioner: ebs.csi.aws.com\n  parameters:\n    type: gp3\n    type: gp2\n  YAML\n}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of("invalid-yaml", &out), vec!["storage.tf"], "{out}{err}");
}

#[test]
fn an_export_of_live_objects_describes_the_cluster_and_is_not_linted() {
    // `kubectl get provisioners -o yaml > provisioners.backup.yaml` before an upgrade: the API
    // server's `uid` and `resourceVersion` say it was read from a cluster, not written to apply.
    let exported = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: karpenter.sh/v1alpha5\n  kind: Provisioner\n  metadata:\n    name: gpu\n    uid: 6257a5e2-8977-4d1b-8b9f-f1c263cecd6d\n    resourceVersion: \"633634\"\n    creationTimestamp: \"2025-12-19T21:30:59Z\"\n  spec:\n    providerRef: {name: gpu}\n";
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "provisioners.backup.yaml", exported);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The same object written to be applied is judged.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "provisioner.yaml",
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: gpu\nspec:\n  providerRef: {name: gpu}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of("deprecated-api", &out),
        vec!["provisioner.yaml"],
        "{out}{err}"
    );
}

#[test]
fn a_spot_only_node_group_is_named_and_fixed_as_a_node_group() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "terraform/main.tf",
        "module \"eks\" {\n  eks_managed_node_groups = {\n    gpu = {\n      instance_types = [\"g5.xlarge\"]\n      capacity_type  = \"SPOT\"\n      labels = { workload = \"inference\" }\n    }\n  }\n}\n",
    );
    write(
        d.path(),
        "apps/vllm.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata:\n      labels: {app: vllm}\n    spec:\n      nodeSelector: {workload: inference}\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.6.3\n          args: [--model, facebook/opt-125m]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint"]));
    assert!(out.contains("inference-spot-only"), "{out}{err}");
    assert!(
        out.contains("EKS managed node group `gpu` is spot here"),
        "{out}{err}"
    );
    assert!(
        out.contains("an on-demand EKS managed node group"),
        "{out}{err}"
    );
}

#[test]
fn nodes_a_script_labels_by_hand_exist_outside_the_pools() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "karpenter/gpu.yaml", GPU_POOL);
    write(
        d.path(),
        "jobs/onprem.yaml",
        &pinned_job("node-type: onprem-gpu"),
    );
    assert_eq!(no_pool_fits(d.path()), ["jobs/onprem.yaml"]);
    // The on-premises nodes the Job is for are labelled by a script, not launched by Karpenter.
    write(
        d.path(),
        "scripts/label-nodes.sh",
        "#!/bin/sh\nLABEL=\"node-type=onprem-gpu\"\nfor n in $(kubectl get nodes -l hybrid -o name); do\n  kubectl label node \"$n\" \\\n    \"${LABEL}\" --overwrite\ndone\n",
    );
    assert!(no_pool_fits(d.path()).is_empty());
}

#[test]
fn an_untouched_kubebuilder_sample_is_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: trainjobs.example.com\nspec:\n  group: example.com\n  names: {kind: TrainJob, plural: trainjobs}\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                replicas: {type: integer}\n";
    write(d.path(), "config/crd/bases/trainjobs.yaml", crd);
    let sample = "apiVersion: example.com/v1\nkind: TrainJob\nmetadata:\n  name: trainjob-sample\nspec:\n  # TODO(user): Add fields here\n  foo: bar\n";
    write(d.path(), "config/samples/v1_trainjob.yaml", sample);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(of("schema-violation", &out).is_empty(), "{out}");
    // As older kubebuilder releases scaffold it.
    write(
        d.path(),
        "config/samples/v1_trainjob.yaml",
        &sample.replace("# TODO(user): Add fields here", "# Add fields here"),
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert!(of("schema-violation", &out).is_empty(), "{out}");
    // Filled in, the sample is judged.
    write(
        d.path(),
        "config/samples/v1_trainjob.yaml",
        &sample.replace("  # TODO(user): Add fields here\n", ""),
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of("schema-violation", &out),
        ["config/samples/v1_trainjob.yaml"]
    );
}

#[test]
fn autopilot_clusters_fill_a_gpu_limit_in_from_the_request() {
    let d = tempfile::tempdir().unwrap();
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: trl, namespace: ml}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: trainer\n          image: ghcr.io/example/trl:1.0\n          resources:\n            requests: {nvidia.com/gpu: 1}\n";
    write(d.path(), "jobs/trl.yaml", job);
    let severity = |out: &str| {
        crate::sources::json(out)["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["rule"] == "gpu-limit-missing")
            .map(|d| d["severity"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(severity(&out), ["error"], "{out}");
    // The README creates the cluster it runs on: an Autopilot one.
    write(
        d.path(),
        "README.md",
        "```sh\ngcloud container clusters create-auto trl --region us-central1\n```\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(severity(&out), ["warning"], "{out}");
    // Terraform's switch says the same.
    std::fs::remove_file(d.path().join("README.md")).unwrap();
    write(
        d.path(),
        "infra/gke.tf",
        "resource \"google_container_cluster\" \"trl\" {\n  name             = \"trl\"\n  enable_autopilot = true\n}\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(severity(&out), ["warning"], "{out}");
}

#[test]
fn pools_terraform_makes_from_values_its_users_supply_may_be_any_pool() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "karpenter/gpu.yaml", GPU_POOL);
    write(
        d.path(),
        "jobs/probe.yaml",
        &pinned_job("node-role: gpu-p5en"),
    );
    let module = "variable \"accelerator_pools\" {\n  type    = map(object({ instance_types = list(string) }))\n  default = {}\n}\nresource \"kubectl_manifest\" \"pool\" {\n  for_each = var.accelerator_pools\n  yaml_body = yamlencode({\n    apiVersion = \"karpenter.sh/v1\"\n    kind       = \"NodePool\"\n    metadata   = { name = each.key }\n    spec = {\n      template = {\n        metadata = { labels = { \"node-role\" = each.key } }\n        spec = {\n          nodeClassRef = { group = \"karpenter.k8s.aws\", kind = \"EC2NodeClass\", name = each.key }\n          requirements = [{ key = \"node.kubernetes.io/instance-type\", operator = \"In\", values = each.value.instance_types }]\n        }\n      }\n    }\n  })\n}\n";
    write(d.path(), "infra/pools.tf", module);
    // With only the default (no pools), the Job fits none of the pools in view.
    assert_eq!(no_pool_fits(d.path()), ["jobs/probe.yaml"]);
    // The module's example values show its users supply the pools: any of them may fit.
    write(
        d.path(),
        "infra/pools.tfvars.example",
        "accelerator_pools = {\n  gpu-p5en = { instance_types = [\"p5en.48xlarge\"] }\n}\n",
    );
    assert!(no_pool_fits(d.path()).is_empty());
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: tools\ndata:\n  mode: ";

/// An idpbuilder Application (`repoURL: cnoe://DIR`) syncing `DIR` beside its file.
fn cnoe_app(name: &str, dir: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: cnoe://{dir}\n    targetRevision: HEAD\n    path: \".\"\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: tools\n"
    )
}

#[test]
fn an_idpbuilder_application_syncs_the_directory_beside_it() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "stacks/one/tools.yaml",
        &cnoe_app("tools", "tools/manifests"),
    );
    write(
        d.path(),
        "stacks/one/tools/manifests/cm.yaml",
        &format!("{CONFIGMAP}a\n"),
    );
    // Another repository's whole root, synced recursively: nothing says it is this one.
    write(
        d.path(),
        "stacks/one/everything.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: everything\n  namespace: argocd\nspec:\n  source:\n    repoURL: https://git.example.com/platform/other.git\n    path: .\n    directory: {recurse: true}\n  destination:\n    server: https://kubernetes.default.svc\n",
    );
    // A second stack with its own ConfigMap of that name: another idpbuilder cluster's.
    write(d.path(), "stacks/two/cm.yaml", &format!("{CONFIGMAP}b\n"));
    let Run { code, out, err } =
        run(gpuops_in(d.path()).args(["lint", "--format", "json", "--explain-sources"]));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(findings(&out), vec![], "{out}");
    let apps = crate::sources::explained(&err, "app");
    assert!(
        apps.iter().any(|l| l.starts_with("stacks/one/tools.yaml: Application `tools`: directory stacks/one/tools/manifests: 1 file → cluster `in-cluster`")
            && l.ends_with("a directory beside the Application (idpbuilder's `cnoe://`))")),
        "{apps:#?}"
    );
    assert!(
        crate::sources::explained(&err, "unlinted").contains(&"stacks/one/everything.yaml: Application `everything`: a source from another repository (https://git.example.com/platform/other.git): its path is the root, which every repository has (list this repository's URLs under `argo: {repo: […]}` in .gpuops.yaml if it is)"),
        "{err}"
    );
}

#[test]
fn a_tests_expected_output_is_not_linted() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join(".git")).unwrap();
    let stale_pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: gpu}\n";
    // What a chart test compares its render with, and the same object outside a test tree.
    write(
        d.path(),
        "tests/clustergroup-normal.expected.yaml",
        stale_pool,
    );
    write(d.path(), "tests/golden/nodepool.yaml", stale_pool);
    write(d.path(), "docs/nodepool.expected.yaml", stale_pool);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of("deprecated-api", &out),
        vec!["docs/nodepool.expected.yaml"],
        "{out}"
    );
    let v = crate::sources::json(&out);
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"] == "a test's expected output")
        .filter_map(|s| s["path"].as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "tests/clustergroup-normal.expected.yaml",
            "tests/golden/nodepool.yaml"
        ],
        "{out}"
    );
}

#[test]
fn a_charts_own_render_kept_beside_it_is_not_linted() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "charts/nodes/Chart.yaml",
        "apiVersion: v2\nname: karpenter-nodes\nversion: 1.0.0\n",
    );
    let stale_pool = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: gpu}\n";
    write(
        d.path(),
        "charts/nodes/examples/output.yaml",
        &format!("---\n# Source: karpenter-nodes/templates/nodepool.yaml\n{stale_pool}"),
    );
    // Another chart's render, kept in this chart's directory: what it is, is not known.
    write(
        d.path(),
        "charts/nodes/examples/upstream.yaml",
        &format!("---\n# Source: other/templates/nodepool.yaml\n{stale_pool}"),
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of("deprecated-api", &out),
        vec!["charts/nodes/examples/upstream.yaml"],
        "{out}"
    );
    let v = crate::sources::json(&out);
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["path"] == "charts/nodes/examples/output.yaml"
                && s["reason"] == "a render of the chart `karpenter-nodes` kept in its directory"),
        "{out}"
    );
}

const UNLABELLED_DS: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: drainer\nspec:\n  selector:\n    matchLabels: {app: drainer}\n  template:\n    spec:\n      containers:\n        - name: drainer\n          image: amazon/aws-node-termination-handler:v1.0.0\n";

#[test]
fn a_selector_is_judged_where_no_kustomization_labels_the_template() {
    let d = tempfile::tempdir().unwrap();
    // Applied as it is: the API server rejects it.
    write(d.path(), "plain/ds.yaml", UNLABELLED_DS);
    // Beside a kustomization (here a template of one, filled in and built elsewhere) whose
    // `commonLabels` write the selector and the template's labels both.
    write(d.path(), "kustomized/ds.yaml", UNLABELLED_DS);
    write(
        d.path(),
        "kustomized/kustomization.yaml.template",
        "namespace: ${NAMESPACE}\ncommonLabels:\n  app: drainer\nresources:\n  - ds.yaml\n",
    );
    // A patch (`kubectl patch --patch-file`): its containers name no image.
    write(
        d.path(),
        "patches-by-hand/manager.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: manager\nspec:\n  template:\n    spec:\n      containers:\n        - name: manager\n          resources:\n            limits: {memory: 2Gi}\n",
    );
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of("schema-violation", &out), vec!["plain/ds.yaml"], "{out}");
}

/// A one-replica GPU server in `file`'s namespace `llm` mounting claim `models`, with its claim
/// in `mode`.
fn server_with_claim(mode: &str, gpu: bool) -> String {
    let limits = if gpu {
        "{nvidia.com/gpu: 1}"
    } else {
        "{cpu: \"4\"}"
    };
    format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: models\n  namespace: llm\nspec:\n  accessModes: [{mode}]\n  resources:\n    requests: {{storage: 50Gi}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: server\n  namespace: llm\nspec:\n  selector:\n    matchLabels: {{app: server}}\n  template:\n    metadata:\n      labels: {{app: server}}\n    spec:\n      containers:\n        - name: server\n          image: localai/localai:latest\n          resources:\n            limits: {limits}\n          volumeMounts: [{{name: models, mountPath: /models}}]\n      volumes:\n        - name: models\n          persistentVolumeClaim: {{claimName: models}}\n"
    )
}

#[test]
fn a_claim_is_read_from_the_variant_that_mounts_it() {
    const RULE: &str = "gpu-rollout-blocked-by-volume";
    // A CPU and a GPU variant of one server, each with its own copy of the claim: the GPU
    // variant's copy decides, whichever file comes last.
    for (gpu_mode, cpu_mode, expected) in [
        ("ReadWriteMany", "ReadWriteOnce", 0),
        ("ReadWriteOnce", "ReadWriteMany", 1),
    ] {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "k8s/deployment-nvidia.yaml",
            &server_with_claim(gpu_mode, true),
        );
        write(
            d.path(),
            "k8s/deployment.yaml",
            &server_with_claim(cpu_mode, false),
        );
        let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
        assert_eq!(of(RULE, &out).len(), expected, "{gpu_mode}: {out}{err}");
        if expected == 1 {
            // Its related place is the claim of its own file.
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let f = v["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["rule"] == RULE)
                .unwrap();
            let related: Vec<&str> = f["related"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["path"].as_str().unwrap())
                .collect();
            assert_eq!(related, vec!["k8s/deployment-nvidia.yaml"], "{f}");
        }
    }
}

/// Two stacks of one monorepo, each building its cluster with Terraform: `ai-ml/ray` on
/// Karpenter, `ai-ml/bionemo` on an EKS managed node group only, with a training Job.
fn two_stacks(root: &std::path::Path) {
    write(root, "ai-ml/ray/manifests/pool.yaml", GPU_POOL);
    write(
        root,
        "ai-ml/ray/terraform/eks.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n  eks_managed_node_groups = {\n    core = { instance_types = [\"m6i.xlarge\"] }\n  }\n}\n",
    );
    write(
        root,
        "ai-ml/bionemo/terraform/eks.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n  eks_managed_node_groups = {\n    gpu = {\n      instance_types = [\"g5.12xlarge\"]\n      taints = { gpu = { key = \"nvidia.com/gpu\", effect = \"NO_SCHEDULE\" } }\n    }\n  }\n}\n",
    );
    write(root, "ai-ml/bionemo/jobs/train.yaml", TRAINING_JOB);
}

/// Whether `--explain-clusters` names both stacks of [`two_stacks`].
fn names_both_stacks(root: &std::path::Path) -> bool {
    let Run { out, err, .. } = run(gpuops_in(root).args(["lint", "--explain-clusters"]));
    let text = format!("{out}{err}");
    text.contains("    ai-ml/bionemo/: ") && text.contains("    ai-ml/ray/: ")
}

#[test]
fn stacks_that_build_their_own_clusters_do_not_judge_each_other() {
    const DND: &str = "training-do-not-disrupt-missing";
    // The bionemo stack's training Job runs where Karpenter never disrupts anything.
    let d = tempfile::tempdir().unwrap();
    two_stacks(d.path());
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(DND, &out), Vec::<String>::new(), "{out}{err}");
    // The same Job in the Karpenter stack is told.
    write(d.path(), "ai-ml/ray/jobs/train.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of(DND, &out),
        vec!["ai-ml/ray/jobs/train.yaml"],
        "{out}{err}"
    );
    assert!(names_both_stacks(d.path()));
}

#[test]
fn stacks_are_judged_apart_beside_an_argo_cd_application() {
    const DND: &str = "training-do-not-disrupt-missing";
    // An Application elsewhere syncs one directory: the files it does not sync are still one
    // repository of stacks, each judged without the others.
    let d = tempfile::tempdir().unwrap();
    two_stacks(d.path());
    write(
        d.path(),
        "gitops/app.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  project: default\n  source: {repoURL: 'https://github.com/acme/platform.git', path: gitops/web}\n  destination: {server: 'https://kubernetes.default.svc', namespace: web}\n",
    );
    write(
        d.path(),
        "gitops/web/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: web}\ndata: {a: b}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(DND, &out), Vec::<String>::new(), "{out}{err}");
    assert!(names_both_stacks(d.path()));
}

#[test]
fn a_training_job_on_a_node_group_beside_a_pool_it_does_not_tolerate_is_off_karpenter() {
    const DND: &str = "training-do-not-disrupt-missing";
    // The Karpenter GPU pool is a notebook platform's (its taint keeps other pods away); the
    // training Job tolerates only the GPU taint and runs on the managed node group.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "pools/notebooks.yaml",
        &GPU_POOL.replace(
            "      taints:\n",
            "      taints:\n        - {key: hub.jupyter.org/dedicated, value: user, effect: NoSchedule}\n",
        ),
    );
    write(
        d.path(),
        "terraform/eks.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n  eks_managed_node_groups = {\n    gpu = {\n      instance_types = [\"g6e.12xlarge\"]\n      taints = { gpu = { key = \"nvidia.com/gpu\", effect = \"NO_SCHEDULE\" } }\n    }\n  }\n}\n",
    );
    write(d.path(), "jobs/train.yaml", TRAINING_JOB);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(DND, &out), Vec::<String>::new(), "{out}{err}");
    // Tolerating the pool's taints too, it may land on Karpenter's nodes.
    write(
        d.path(),
        "jobs/train.yaml",
        &TRAINING_JOB.replace(
            "        - {key: nvidia.com/gpu, operator: Exists}\n",
            "        - {key: nvidia.com/gpu, operator: Exists}\n        - {key: hub.jupyter.org/dedicated, operator: Exists}\n",
        ),
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of(DND, &out), vec!["jobs/train.yaml"], "{out}{err}");
}

#[test]
fn a_stacks_karpenter_release_speaks_for_that_stack_only() {
    // Blueprints side by side, each building its own cluster: the release one installs says
    // nothing of the Provisioner another applies.
    const PROVISIONER: &str = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: gpu\nspec:\n  requirements:\n    - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n";
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "ai-ml/bionemo/eks.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n}\n\nresource \"helm_release\" \"karpenter\" {\n  repository = \"oci://public.ecr.aws/karpenter\"\n  chart      = \"karpenter\"\n  version    = \"1.0.6\"\n}\n",
    );
    write(
        d.path(),
        "ai-ml/ray/terraform/main.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n  eks_managed_node_groups = {\n    core = { instance_types = [\"m6i.xlarge\"] }\n  }\n}\n",
    );
    // EKS Blueprints add-ons, given the chart's version as a module input.
    write(
        d.path(),
        "ai-ml/mlflow/eks.tf",
        "module \"eks\" {\n  source = \"terraform-aws-modules/eks/aws\"\n}\n\nmodule \"eks_blueprints_addons\" {\n  source           = \"aws-ia/eks-blueprints-addons/aws\"\n  enable_karpenter = true\n  karpenter = {\n    chart_version = \"v0.34.0\"\n  }\n}\n",
    );
    for stack in ["ray", "bionemo", "mlflow"] {
        write(
            d.path(),
            &format!("ai-ml/{stack}/karpenter/gpu.yaml"),
            PROVISIONER,
        );
    }
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let doc = crate::sources::json(&out);
    // The finding's severity, and the release its message names as installed.
    let judged = |stack: &str| {
        let path = format!("ai-ml/{stack}/karpenter/gpu.yaml");
        let found = doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["rule"] == "deprecated-api" && x["path"] == path.as_str());
        let found = found.unwrap_or_else(|| panic!("{path}: {out}{err}"));
        let message = found["message"].as_str().unwrap();
        let release = ["v1.0", "v0.34"]
            .into_iter()
            .find(|r| message.contains(&format!("Karpenter {r}, the release")));
        (found["severity"].as_str().unwrap().to_string(), release)
    };
    // The stacks that install a release past v1alpha5 certainly fail to apply it.
    assert_eq!(judged("bionemo"), ("error".to_string(), Some("v1.0")));
    assert_eq!(judged("mlflow"), ("error".to_string(), Some("v0.34")));
    // The other stack installs a release the files do not name.
    assert_eq!(judged("ray"), ("warning".to_string(), None));
}

#[test]
fn an_overlays_file_read_on_its_own_is_a_patch() {
    // A patch of the base's Deployment, its overlay's kustomization missing: the selector and
    // labels are the base's.
    const PARTIAL: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 6\n  template:\n    spec:\n      containers:\n        - name: web\n          image: ghcr.io/example/web:1.0\n";
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "app/overlays/prod/deployment.yaml", PARTIAL);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(of("schema-violation", &out), Vec::<String>::new(), "{err}");
    // The same object anywhere else is applied as it is, and rejected.
    write(d.path(), "app/deploy/deployment.yaml", PARTIAL);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        of("schema-violation", &out),
        vec!["app/deploy/deployment.yaml"],
        "{err}"
    );
}
