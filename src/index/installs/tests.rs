use super::chart_versions;

#[test]
fn helm_command_lines_are_installs() {
    use super::helm_cli_versions;
    assert_eq!(
        helm_cli_versions(
            "helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version 0.11.6 -n kueue-system\n",
            "kueue",
            None
        ),
        vec![Some((0, 11))]
    );
    assert_eq!(
        helm_cli_versions(
            "helm upgrade --install kueue kueue/kueue --version=v0.16.1\n",
            "kueue",
            None
        ),
        vec![Some((0, 16))]
    );
    assert!(
        helm_cli_versions(
            "helm install gpu-operator nvidia/gpu-operator --version 25.3.0\n",
            "kueue",
            None
        )
        .is_empty()
    );
}

#[test]
fn a_release_through_a_shell_variable_is_an_install() {
    use super::{assigned, variable};
    let sh = "KUEUE_VERSION=v0.11.4\nkubectl apply -f https://github.com/kubernetes-sigs/kueue/releases/download/${KUEUE_VERSION}/manifests.yaml\n";
    assert_eq!(
        variable("${KUEUE_VERSION}/manifests.yaml"),
        Some("KUEUE_VERSION")
    );
    assert_eq!(variable("$VERSION/manifests.yaml"), Some("VERSION"));
    assert_eq!(assigned(sh, "KUEUE_VERSION"), Some((0, 11)));
    assert_eq!(
        assigned("export VERSION=\"v0.8.1\"\n", "VERSION"),
        Some((0, 8))
    );
    assert_eq!(assigned("OTHER_VERSION=v0.8.1\n", "VERSION"), None);
    // A pin the caller may override: its default.
    assert_eq!(
        assigned(
            "KUEUE_VERSION=\"${KUEUE_VERSION:-v0.2.1}\"\n",
            "KUEUE_VERSION"
        ),
        Some((0, 2))
    );
}

#[test]
fn the_kueue_chart_at_a_version_is_an_install() {
    let tf = "resource \"helm_release\" \"kueue\" {\n  repository = \"oci://registry.k8s.io/kueue/charts\"\n  chart      = \"kueue\"\n  # a comment\n  version    = \"0.13.0\"\n}\n";
    assert_eq!(chart_versions(tf, "kueue"), vec![(0, 13)]);
    let argo = "source:\n  repoURL: registry.k8s.io/kueue/charts\n  targetRevision: v0.12.2\n  chart: kueue\n";
    assert_eq!(chart_versions(argo, "kueue"), vec![(0, 12)]);
    // Another chart, or the chart without a version, is none.
    assert!(chart_versions("chart: kueue-extras\nversion: 0.1.0\n", "kueue").is_empty());
    assert!(chart_versions("chart: kueue\n", "kueue").is_empty());
}

#[test]
fn kustomize_bases_and_images_are_installs() {
    use super::{image_tag_versions, openshift_ai_kueue, remote_base_versions};
    let k = "resources:\n- \"https://github.com/kubernetes-sigs/kueue/config/default?ref=v0.10.2\"\nimages:\n- name: us-central1-docker.pkg.dev/k8s-staging-images/kueue/kueue\n  newName: registry.k8s.io/kueue/kueue\n  newTag: v0.10.2\n";
    assert_eq!(
        remote_base_versions(k, "github.com/kubernetes-sigs/kueue"),
        vec![(0, 10)]
    );
    assert_eq!(image_tag_versions(k, "kueue/kueue"), vec![(0, 10), (0, 10)]);
    // Another image's tag is not the controller's.
    assert!(
        image_tag_versions(
            "images:\n- name: kueue/kueue-viz\n  newTag: v0.1.0\n",
            "kueue/kueue"
        )
        .is_empty()
    );
    let dsc = "kind: DataScienceCluster\nspec:\n  components:\n    kueue:\n      managementState: Managed\n";
    assert!(openshift_ai_kueue(dsc));
    assert!(openshift_ai_kueue(
        &dsc.replace("Managed", "Unmanaged    # the operator's")
    ));
    assert!(!openshift_ai_kueue(&dsc.replace("Managed", "Removed")));
    let patch = r#"oc patch datasciencecluster default-dsc --type merge -p '{"spec":{"components":{"kueue":{"managementState":"Unmanaged"}}}}'"#;
    assert!(openshift_ai_kueue(patch));
    assert!(!openshift_ai_kueue(&patch.replace("Unmanaged", "Removed")));
}

#[test]
fn karpenter_releases_are_read_as_kueue_ones_are() {
    use super::{helm_cli_versions, release_at};
    // Terraform's helm_release whose OCI reference names the chart, `chart` left empty.
    let oci = "resource \"helm_release\" \"karpenter\" {\n  name       = \"karpenter\"\n  repository = \"oci://public.ecr.aws/karpenter/karpenter\"\n  chart      = \"\"\n  version    = \"0.36.0\"\n}\n";
    assert_eq!(chart_versions(oci, "karpenter"), vec![(0, 36)]);
    // Terraform's helm_release of the old chart repository.
    let tf = "resource \"helm_release\" \"karpenter\" {\n  repository = \"https://charts.karpenter.sh\"\n  chart      = \"karpenter\"\n  version    = \"v0.13.2\"\n}\n";
    assert_eq!(chart_versions(tf, "karpenter"), vec![(0, 13)]);
    assert!(chart_versions(tf, "kueue").is_empty());
    // A platform's add-on object (`chartName`, `chartVersion`).
    let addon = "spec:\n  artifact:\n    artifact:\n      catalog: default\n      chartName: karpenter\n      chartVersion: 0.35.4\n";
    assert_eq!(chart_versions(addon, "karpenter"), vec![(0, 35)]);
    // EKS Blueprints add-ons name it `chart_version`.
    let addons =
        "karpenter = {\n  chart         = \"karpenter\"\n  chart_version = \"0.37.0\"\n}\n";
    assert_eq!(chart_versions(addons, "karpenter"), vec![(0, 37)]);
    // A version the same file sets in `locals` or as a variable's default.
    let local = "locals {\n  karpenter_version = \"v0.34.0\"\n}\nresource \"helm_release\" \"karpenter\" {\n  repository = \"https://charts.karpenter.sh\"\n  chart      = \"karpenter\"\n  version    = local.karpenter_version\n}\n";
    assert_eq!(chart_versions(local, "karpenter"), vec![(0, 34)]);
    let var = local.replace("local.", "var.").replace(
        "locals {\n  karpenter_version = \"v0.34.0\"\n}",
        "variable \"karpenter_version\" {\n  default = \"1.1.0\"\n}",
    );
    assert_eq!(chart_versions(&var, "karpenter"), vec![(1, 1)]);
    assert!(chart_versions(&local.replace("v0.34.0", ""), "karpenter").is_empty());
    // The getting-started guide's command line, through a variable set without a `v`.
    let sh = "export KARPENTER_VERSION=\"1.0.1\"\nhelm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version \"${KARPENTER_VERSION}\" --namespace kube-system\n";
    assert_eq!(helm_cli_versions(sh, "karpenter", None), vec![Some((1, 0))]);
    // A command over several lines.
    assert_eq!(
        helm_cli_versions(
            "helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter \\\n    --version \"1.6.2\" \\\n    --wait\n",
            "karpenter",
            None
        ),
        vec![Some((1, 6))]
    );
    // A variable set in another file: a release gpuops cannot name.
    assert_eq!(
        helm_cli_versions(&sh.replace("1.0.1", "$1"), "karpenter", None),
        vec![None]
    );
    // Set in another file of the repository (`env.sh`), and nowhere else to another release.
    let other = "helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version \"${KARPENTER_VERSION}\"\n";
    assert_eq!(
        helm_cli_versions(other, "karpenter", Some(("KARPENTER_VERSION", (0, 36)))),
        vec![Some((0, 36))]
    );
    assert_eq!(
        super::pinned_versions("export KARPENTER_VERSION=\"0.36.2\"\n", "KARPENTER_VERSION"),
        vec![(0, 36)]
    );
    let eksctl = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nkarpenter:\n  version: 'v0.36.2' # exact\n  createServiceAccount: true\n";
    assert_eq!(super::eksctl_versions(eksctl, "karpenter"), vec![(0, 36)]);
    // The chart's label on rendered objects.
    assert_eq!(release_at("", "0.16.3\n"), Some((0, 16)));
    assert_eq!(release_at("", "crds-0.1.0\n"), None);
}
