//! What a repository holds besides the manifests it applies: templates another tool renders,
//! objects whose name or namespace is still to be filled in, and test trees (fixtures, e2e
//! scenarios, older releases' objects).

use crate::common::{Run, gpuops_in, run, write};

const QUEUES_TFTPL: &str = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: \"a3\"\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [\"nvidia.com/gpu\"]\n    flavors:\n    - name: \"a3\"\n      resources:\n      - name: \"nvidia.com/gpu\"\n        nominalQuota: ${num_gpus}\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  namespace: \"default\"\n  name: \"a3\"\nspec:\n  clusterQueue: \"a3\"\n";

const DIRECTIVES_TFTPL: &str = "%{ for ns in namespaces ~}\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  namespace: ${ns}\n  name: dws\nspec:\n  clusterQueue: dws\n---\n%{ endfor ~}\n";

fn job(name: &str, namespace: &str, queue: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  namespace: \"{namespace}\"\n  labels: {{kueue.x-k8s.io/queue-name: {queue}}}\nspec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: busybox:1.36\n          command: [\"true\"]\n"
    )
}

fn findings(out: &str) -> Vec<(String, String)> {
    crate::lint::findings(&crate::sources::json(out))
}

#[test]
fn templates_rendered_elsewhere_define_what_workloads_name() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "kueue/queues.yaml.tftpl", QUEUES_TFTPL);
    write(d.path(), "kueue/dws.yaml.tftpl", DIRECTIVES_TFTPL);
    write(d.path(), "jobs/a3.yaml", &job("a3", "default", "a3"));
    write(d.path(), "jobs/dws.yaml", &job("dws", "team-a", "dws"));
    // A namespace still to be filled in matches any: the queue of `default` may be the one.
    write(
        d.path(),
        "jobs/user.yaml",
        &job("user", "<user_namespace>", "a3"),
    );
    write(
        d.path(),
        "jobs/missing.yaml",
        &job("m", "default", "nowhere"),
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "localqueue-not-found".to_string(),
            "jobs/missing.yaml".to_string()
        )],
        "{out}{err}"
    );
    // The templates are not linted, so nothing says they were skipped.
    assert!(!err.contains("tftpl"), "{err}");
    assert!(!out.contains("tftpl"), "{out}");
}

const SERVER: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: llm}}\n  template:\n    metadata:\n      labels: {app: llm}\n    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.9.0\n          command: [vllm, serve, m]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n";

const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}\n";

#[test]
fn advice_is_not_given_on_test_data_unless_the_rule_is_asked_for() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "karpenter/gpu.yaml", POOL);
    write(d.path(), "apps/llm.yaml", SERVER);
    write(d.path(), "test/e2e/llm.yaml", SERVER);
    // Nor on what is kept for reference only.
    write(d.path(), "deprecated/llm.yaml", SERVER);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let pdb: Vec<_> = findings(&out)
        .into_iter()
        .filter(|(r, _)| r == "gpu-inference-pdb-missing")
        .collect();
    assert_eq!(
        pdb,
        vec![(
            "gpu-inference-pdb-missing".to_string(),
            "apps/llm.yaml".to_string()
        )],
        "{out}{err}"
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--format",
        "json",
        "--rule",
        "gpu-inference-pdb-missing",
    ]));
    assert_eq!(findings(&out).len(), 3, "{out}{err}");
}

const CACHE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: caches.example.com\nspec:\n  group: example.com\n  names: {kind: Cache, plural: caches}\n  scope: Namespaced\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              required: [service]\n              properties:\n                service:\n                  type: object\n                  required: [ports]\n                  properties:\n                    ports: {type: array, items: {type: integer}}\n";

const OLD_CACHE: &str = "apiVersion: example.com/v1\nkind: Cache\nmetadata:\n  name: c\nspec:\n  service:\n    port: 9600\n";

#[test]
fn test_data_of_an_older_release_is_not_judged_by_the_current_crd() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "config/crd.yaml", CACHE_CRD);
    write(d.path(), "test/regression/v0.2.1/cache.yaml", OLD_CACHE);
    write(d.path(), "test/e2e/cache.yaml", OLD_CACHE);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let found = findings(&out);
    assert!(!found.is_empty(), "{out}{err}");
    assert!(
        found
            .iter()
            .all(|(r, p)| r == "schema-violation" && p == "test/e2e/cache.yaml"),
        "{out}{err}"
    );
}

#[test]
fn empty_fields_of_an_object_still_to_be_named_are_slots_not_nulls() {
    let d = tempfile::tempdir().unwrap();
    let crd = CACHE_CRD.replace(
        "                    ports: {type: array, items: {type: integer}}\n",
        "                    ports: {type: array, items: {type: integer}}\n                mode: {type: string}\n",
    );
    write(d.path(), "config/crd.yaml", &crd);
    let object = |name: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Cache\nmetadata:\n  name: {name}\nspec:\n  service:\n  mode:\n"
        )
    };
    write(d.path(), "templates/cache.yaml", &object("$NAME"));
    write(d.path(), "apps/cache.yaml", &object("real"));
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "schema-violation".to_string(),
            "apps/cache.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn examples_kept_for_an_older_api_version_are_not_called_deprecated() {
    let d = tempfile::tempdir().unwrap();
    let old = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  template:\n    spec:\n      nodeClassRef: {name: default}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}\n";
    // The same example for each version, side by side: the v1beta1 one is kept on purpose.
    write(d.path(), "examples/v1beta1/general.yaml", old);
    // The same version elsewhere is applied as it stands.
    write(d.path(), "hack/general.yaml", old);
    // A directory named for the current version holds no kept copy: a removed field is still
    // reported there.
    write(
        d.path(),
        "examples/v1/general.yaml",
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  disruption:\n    consolidationPolicy: WhenUnderutilized\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let deprecated: Vec<(String, String)> = findings(&out)
        .into_iter()
        .filter(|(rule, _)| rule == "deprecated-api")
        .collect();
    assert_eq!(
        deprecated,
        vec![
            (
                "deprecated-api".to_string(),
                "examples/v1/general.yaml".to_string()
            ),
            (
                "deprecated-api".to_string(),
                "hack/general.yaml".to_string()
            )
        ],
        "{out}{err}"
    );
}

/// How many `deprecated-api` findings a lint of `d` gives.
fn deprecated(d: &std::path::Path) -> usize {
    let Run { out, .. } = run(gpuops_in(d).args(["lint", "--format", "json"]));
    findings(&out)
        .into_iter()
        .filter(|(rule, _)| rule == "deprecated-api")
        .count()
}

#[test]
fn a_kueue_release_named_in_the_readme_is_the_one_installed() {
    let d = tempfile::tempdir().unwrap();
    let queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team\n  namespace: ml\nspec:\n  clusterQueue: cq\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n  namespaceSelector: {}\n";
    write(d.path(), "queues/queues.yaml", queue);
    assert_eq!(deprecated(d.path()), 1);
    // A release before v1beta2 was served: v1beta1 is what that cluster takes.
    write(
        d.path(),
        "README.md",
        "# Code batch\n\nLa versione di Kueue utilizzata è la `v0.6.2`.\n",
    );
    assert_eq!(deprecated(d.path()), 0);
    // A release that serves v1beta2: the deprecation stands.
    write(d.path(), "README.md", "Tested with Kueue v0.16.1.\n");
    assert_eq!(deprecated(d.path()), 1);
}

#[test]
fn files_named_as_broken_on_purpose_are_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let bad_yaml = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  maxHistory: !@#$%^&*()_+\n";
    let bad_schema = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  namespaceSelector: {}\n  resourceGroups: oops\n";
    // Negative samples, named so: kept to show what is rejected.
    write(d.path(), "samples/invalid.yaml", bad_yaml);
    write(d.path(), "samples/queue_invalid.yaml", bad_schema);
    // The same content under an ordinary name is reported.
    write(d.path(), "samples/queue.yaml", bad_schema);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "schema-violation".to_string(),
            "samples/queue.yaml".to_string()
        )],
        "{out}{err}"
    );
    // Named with `--rule`, each rule judges them too.
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation", "--format", "json"]));
    assert_eq!(findings(&out).len(), 2, "{out}{err}");
    let Run { out, err, .. } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "invalid-yaml", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "invalid-yaml".to_string(),
            "samples/invalid.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn chainsaw_bindings_and_releases_installed_by_scripts_are_read() {
    let d = tempfile::tempdir().unwrap();
    // A Chainsaw step resource: `($gpus)` is bound by the test before the apply.
    write(
        d.path(),
        "e2e/preemption/job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: victim\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      nodeSelector:\n        kubernetes.io/hostname: ($victim_node)\n      containers:\n        - name: c\n          image: busybox:1.36\n          resources:\n            limits:\n              nvidia.com/gpu: ($node_gpus)\n",
    );
    // Kueue v0.8 installed by the README through a shell variable: v1beta1 is all it serves.
    write(
        d.path(),
        "README.md",
        "# Setup\n\n```sh\nVERSION=v0.8.1\nkubectl apply --server-side -f https://github.com/kubernetes-sigs/kueue/releases/download/$VERSION/manifests.yaml\n```\n",
    );
    write(
        d.path(),
        "kueue/flavor.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The README is read for the release only: it is not listed or counted as a linted file.
    assert!(!out.contains("README.md"), "{out}");
}

#[test]
fn objects_that_scripts_and_pages_apply_exist() {
    let pool = |class: &str| {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: {class}\n      requirements:\n        - key: karpenter.k8s.aws/instance-family\n          operator: In\n          values: [g5]\n      taints:\n        - key: nvidia.com/gpu\n          effect: NoSchedule\n  limits:\n    nvidia.com/gpu: 8\n"
        )
    };
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "pools/gpu.yaml", &pool("default"));
    // Other objects of the kinds in view: a missing one would be reported.
    write(
        d.path(),
        "pools/classes.yaml",
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: system\nspec:\n  role: r\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: batch\nspec: {}\n",
    );
    // The install script pipes the node class to kubectl; the lab page shows a ClusterQueue
    // already there (`kubectl get -o yaml` output).
    write(
        d.path(),
        "setup/karpenter.sh",
        "#!/bin/bash\ncat <<EOF | envsubst | kubectl apply -f -\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: KarpenterNodeRole-${CLUSTER_NAME}\nEOF\n",
    );
    write(
        d.path(),
        "docs/queues.md",
        "Your cluster already has a queue:\n\n```yaml\napiVersion: v1\nkind: List\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n  kind: ClusterQueue\n  metadata:\n    name: shared\n    uid: 6f0e2d4c\n```\n",
    );
    write(
        d.path(),
        "queues/lq.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: team\n  namespace: team\nspec:\n  clusterQueue: shared\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--rule",
        "nodeclass-not-found",
        "--rule",
        "clusterqueue-not-found",
        "--format",
        "json",
    ]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    assert!(!out.contains("karpenter.sh\""), "{out}");
    // A name the pages do not show is still missing.
    write(d.path(), "pools/gpu.yaml", &pool("gpu"));
    let Run { out, err, .. } = run(gpuops_in(d.path()).args([
        "lint",
        "--rule",
        "nodeclass-not-found",
        "--format",
        "json",
    ]));
    assert_eq!(
        findings(&out),
        vec![(
            "nodeclass-not-found".to_string(),
            "pools/gpu.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn kueue_releases_a_module_vendors_speak_for_the_whole_repository() {
    let flavor =
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n";
    let manifest = |v: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: kueue-controller-manager\n  namespace: kueue-system\nspec:\n  selector:\n    matchLabels: {{app: kueue}}\n  template:\n    metadata:\n      labels: {{app: kueue}}\n    spec:\n      containers:\n        - name: manager\n          image: registry.k8s.io/kueue/kueue:{v}\n"
        )
    };
    // A module applies one of the releases it keeps; the blueprints' queues live elsewhere.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "modules/kubectl-apply/manifests/kueue-v0.10.0.yaml",
        &manifest("v0.10.0"),
    );
    write(
        d.path(),
        "modules/kubectl-apply/manifests/kueue-v0.11.4.yaml",
        &manifest("v0.11.4"),
    );
    write(d.path(), "examples/a3/queues.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // With a release that serves v1beta2 among them, the advice stands.
    write(
        d.path(),
        "modules/kubectl-apply/manifests/kueue-v0.16.1.yaml",
        &manifest("v0.16.1"),
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "deprecated-api".to_string(),
            "examples/a3/queues.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn kueue_installed_by_a_helm_command_or_an_operator_subscription_is_read() {
    let flavor =
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n";
    // A Helm command line in the docs beside the objects: Kueue 0.11 serves only v1beta1.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "configs/kueue/README.md",
        "```sh\nhelm install kueue oci://registry.k8s.io/kueue/charts/kueue:0.11.6 --values values.yaml\n```\n",
    );
    write(d.path(), "configs/kueue/dev/flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The operator through OLM: a vendor's channel names no upstream release, so nothing is
    // said either way.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "scheduling/kueue/operator/subscription.yaml",
        "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: kueue-operator\n  namespace: openshift-kueue-operator\nspec:\n  channel: stable-v1.0\n  name: kueue-operator\n  source: redhat-operators\n  sourceNamespace: openshift-marketplace\n",
    );
    write(d.path(), "scheduling/kueue/queues/flavor.yaml", flavor);
    // It installs Kueue for the whole cluster: a use case's queue far from it too.
    write(d.path(), "usecases/training/infra/flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The same Subscription in the installation guide.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "docs/install.md",
        "```yaml\napiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: kueue-operator\nspec:\n  channel: stable-v1.2\n  name: kueue-operator\n```\n",
    );
    write(d.path(), "docs/scenarios/one/manifests/flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The operator's own `Kueue` object beside the queues of a tutorial.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "chapter01/00-kueue.yaml",
        "apiVersion: kueue.openshift.io/v1\nkind: Kueue\nmetadata:\n  name: cluster\nspec:\n  config:\n    integrations:\n      frameworks: [BatchJob]\n",
    );
    write(d.path(), "chapter02/01-flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // A namespace labelled for that build's management, beside the queues of its tests.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "kueue/kube-burner/namespace.yml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: whisper\n  labels:\n    kueue.openshift.io/managed: \"true\"\n",
    );
    write(d.path(), "kueue/manifests/flavor.yml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // A copy of the Kueue chart in the repository (not rendered: its templates need helm) runs
    // its `appVersion`, v0.8.1, which serves v1beta1 only.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "helm-kueue/Chart.yaml",
        "apiVersion: v2\nname: kueue\ntype: application\nversion: 0.1.0\nappVersion: \"v0.8.1\"\n",
    );
    write(
        d.path(),
        "helm-kueue/templates/manager.yaml",
        "{{- if .Values.enabled }}\nkind: Deployment\n{{- end }}\n",
    );
    write(d.path(), "kubectl-files/flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // A README that sets the queues on OpenShift AI 2, whose Kueue build names no upstream
    // release.
    let e = tempfile::tempdir().unwrap();
    write(
        e.path(),
        "README.md",
        "Configure the OpenShift AI cluster for distributed workloads (https://access.redhat.com/documentation/en-us/red_hat_openshift_ai_self-managed/2.9/html/working_with_distributed_workloads) first. The Kueue objects are in [kueue/](kueue/flavor.yaml).\n",
    );
    write(e.path(), "kueue/flavor.yaml", flavor);
    let Run { out, err, .. } = run(gpuops_in(e.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The same chart at v0.16 serves v1beta2: the v1beta1 object is reported.
    write(
        d.path(),
        "helm-kueue/Chart.yaml",
        "apiVersion: v2\nname: kueue\nversion: 0.16.0\nappVersion: \"v0.16.0\"\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "deprecated-api".to_string(),
            "kubectl-files/flavor.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn a_prometheus_template_in_a_value_does_not_make_the_file_a_template() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "monitoring/gpu.yaml",
        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: gpu\nspec:\n  groups:\n    - name: gpu\n      rules:\n        - alert: GpuPods\n          annotations:\n            description: A total of {{ $value }} GPUs requested.\n          expr: sum(x) > 0\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: busybox:1.36\n          resources:\n            requests: {nvidia.com/gpu: 1}\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "gpu-limit-missing".to_string(),
            "monitoring/gpu.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn an_object_whose_name_is_still_to_be_filled_in_may_be_the_one_named() {
    let d = tempfile::tempdir().unwrap();
    // Terraform renders one LocalQueue per shape from this template.
    write(
        d.path(),
        "terraform/files/local-queue.yaml.tpl",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: ${flavor_name}\n  namespace: default\nspec:\n  clusterQueue: ${flavor_name}\n",
    );
    write(
        d.path(),
        "jobs/nccl.yaml",
        &job("nccl", "default", "bm-gpu-h100-8-rdma"),
    );
    // In another namespace the template's queue is not there.
    write(
        d.path(),
        "jobs/other.yaml",
        &job("o", "team-b", "bm-gpu-h100-8-rdma"),
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "localqueue-not-found".to_string(),
            "jobs/other.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn what_a_testdata_input_holds_is_not_judged_as_an_object() {
    let d = tempfile::tempdir().unwrap();
    // A field the schema lacks, and a required one missing.
    // And a ConfigMap value that is a number to Kubernetes.
    let queue = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  namespaceSelector: {}\n  fairSharing:\n    enable: true\n---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: r\nspec:\n  namespaceSelector: {}\n  resourceGroups:\n    - coveredResources: [cpu]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  vlanID: 2000\n";
    // A Go test's input, read by the program under test, not applied; a UI test's fixture
    // (JavaScript's convention), loaded as data; and the same objects applied from the
    // repository.
    write(d.path(), "pkg/k8s/testdata/input/queue.yaml", queue);
    write(d.path(), "ui/cypress/fixtures/queue.yaml", queue);
    write(d.path(), "deploy/queue.yaml", queue);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let v = crate::sources::json(&out);
    let severities: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(
        severities,
        [
            ("deploy/queue.yaml", "error"),
            ("deploy/queue.yaml", "error"),
            ("deploy/queue.yaml", "error")
        ],
        "{out}{err}"
    );
    // Asked for by name, the rule judges them too.
    let Run { out, .. } =
        run(gpuops_in(d.path()).args(["lint", "--rule", "schema-violation", "--format", "json"]));
    assert!(out.contains("pkg/k8s/testdata/input/queue.yaml"), "{out}");
}

#[test]
fn a_utf16_file_with_its_byte_order_mark_is_read_as_text() {
    let d = tempfile::tempdir().unwrap();
    let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  namespaceSelector: {}\n  fairSharing:\n    enable: true\n";
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(d.path().join("queue.yaml"), bytes).unwrap();
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    // Not "binary content": the object is read, and its unknown field found at its line.
    assert_eq!(
        findings(&out),
        vec![("schema-violation".to_string(), "queue.yaml".to_string())],
        "{out}{err}"
    );
    assert_eq!(crate::sources::json(&out)["diagnostics"][0]["line"], 8);
}

#[test]
fn files_named_as_templates_and_shell_notes_are_not_judged_as_manifests() {
    let d = tempfile::tempdir().unwrap();
    // A `sed` template: its placeholder field is replaced before anything is applied.
    let queue = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  namespaceSelector: {}\n  fairSharing:\n    enable: true\n";
    write(d.path(), "queues/template.yaml", queue);
    // Shell notes saved as YAML: the heredoc is run by hand.
    write(
        d.path(),
        "notes/nodepool.yml",
        "cat <<EOF | envsubst | kubectl apply -f -\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: gpu\nEOF\n",
    );
    // EC2 user data in MIME multipart form, which Terraform's `templatefile()` reads.
    write(
        d.path(),
        "infra/userdata.yaml",
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: ${cluster_name}\n--B--\n",
    );
    // An `envsubst` template that parses only once filled in: a placeholder in a flow mapping.
    write(
        d.path(),
        "routes/route.yaml",
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\nspec:\n  rules:\n  - matches:\n    - path: { type: Exact, value: ${ISVC_PATH}/v1/chat/completions }\n",
    );
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    let v = crate::sources::json(&out);
    let skipped = |reason: &str| -> Vec<String> {
        v["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["reason"] == reason)
            .filter_map(|s| s["path"].as_str().map(String::from))
            .collect()
    };
    assert_eq!(skipped("shell commands"), ["notes/nodepool.yml"], "{out}");
    assert_eq!(
        skipped("MIME multipart user data"),
        ["infra/userdata.yaml"],
        "{out}"
    );
    assert_eq!(skipped("envsubst template"), ["routes/route.yaml"], "{out}");
    // The same object, in a file not named a template, is judged.
    write(d.path(), "queues/queue.yaml", queue);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "schema-violation".to_string(),
            "queues/queue.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn a_tests_assertions_about_the_cluster_are_not_applied_objects() {
    let d = tempfile::tempdir().unwrap();
    // A kuttl step: the install is applied; the assert (a partial object with a status) is
    // compared with the cluster, and what it leaves out is by design.
    write(
        d.path(),
        "test/e2e-kuttl/queues/00-install.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: gpu\n",
    );
    let partial = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\nstatus:\n  pendingWorkloads: 0\n";
    write(d.path(), "test/e2e-kuttl/queues/00-assert.yaml", partial);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}{err}");
    // The same partial object as a manifest is rejected.
    write(d.path(), "deploy/queue.yaml", partial);
    let Run { out, err, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(
        findings(&out),
        vec![(
            "schema-violation".to_string(),
            "deploy/queue.yaml".to_string()
        )],
        "{out}{err}"
    );
}

#[test]
fn a_test_object_introduced_as_one_to_refuse_is_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let pod = |name: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n    - name: a\n      image: b\n      resources:\n        limits: {{nvidia.com/gpu: 2}}\n        requests: {{nvidia.com/gpu: 1}}\n"
        )
    };
    // An admission policy's test cases: the refused one is wrong on purpose.
    let cases = format!(
        "# PASS: asks as much as it may use\n{}---\n# FAIL: requests differ from limits (should be blocked)\n{}",
        pod("ok").replace("nvidia.com/gpu: 1}", "nvidia.com/gpu: 2}"),
        pod("refused")
    );
    write(d.path(), "policies/tests/gpu-cases.yaml", &cases);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    assert_eq!(findings(&out), vec![], "{out}");
    // The same outside a test tree is an object someone applies.
    write(d.path(), "apps/gpu-cases.yaml", &cases);
    let Run { out, .. } = run(gpuops_in(d.path()).args(["lint", "--format", "json"]));
    let paths: Vec<String> = findings(&out).into_iter().map(|(_, p)| p).collect();
    assert_eq!(paths, ["apps/gpu-cases.yaml"], "{out}");
}
