use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::Object;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags an object (same API group, kind, namespace and name) defined twice for one cluster
    /// with different content. It is reported when both definitions certainly reach the same
    /// cluster: in one file; in files Argo CD Applications sync to the same cluster; or anywhere
    /// in a cluster declared complete (`cluster: {complete: true}`). Elsewhere (sample
    /// repositories, overlays for different clusters) two definitions usually go to different
    /// clusters, and nothing is said. Sibling overlays of one base that hand-applied
    /// Applications (none deploys them) send to the same destination namespace are alternatives
    /// applied one at a time, and are not compared with each other. Identical copies are not flagged. A cluster-scoped object
    /// (NodePool, ClusterQueue, ResourceFlavor, …) is one object whatever `metadata.namespace`
    /// its copies carry, as the API server ignores it. Objects named only by `generateName` are
    /// new objects on every create and never the same.
    ///
    /// ## Why is this bad?
    /// Both are applied and the last one applied wins: which one that is depends on file order
    /// or on which Argo CD Application synced last. Argo CD reports the object as a repeated or
    /// shared resource and keeps flipping it between the two versions. A NodePool whose taints,
    /// limits or requirements silently change with the sync order breaks scheduling in ways
    /// nobody can reproduce from one file.
    ///
    /// ## Example
    /// ```yaml
    /// # platform/gpu-pool.yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   limits:
    ///     nvidia.com/gpu: 64
    /// ---
    /// # teams/ml/gpu-pool.yaml, synced to the same cluster
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   limits:
    ///     nvidia.com/gpu: 8
    /// ```
    ///
    /// ## Fix
    /// Keep one definition and delete the other, or give them different names when both are
    /// meant to exist.
    name: "object-defined-twice",
    category: "consistency",
    kinds: &["any object"],
    severity: Warning,
    summary: "one object defined twice for one cluster with different content",
    check: check,
}

/// Kinds without a namespace among those gpuops reads: an object of another kind with no
/// `metadata.namespace` goes to whatever namespace it is applied in, so two of them may differ.
const CLUSTER_SCOPED: &[&str] = &[
    "NodePool",
    "EC2NodeClass",
    "NodeClaim",
    "ClusterQueue",
    "ResourceFlavor",
    "Cohort",
    "Topology",
    "AdmissionCheck",
    "WorkloadPriorityClass",
    "ProvisioningRequestConfig",
    "PriorityClass",
    "Namespace",
    "CustomResourceDefinition",
    "StorageClass",
    "RuntimeClass",
    "ClusterRole",
    "ClusterRoleBinding",
];

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let files = cx.ix.files;
    let mut first: HashMap<(&str, &str, &str, &str), &Object> = HashMap::new();
    for o in &cx.ix.objects {
        let Some(name) = o.name else { continue };
        // Named only by `generateName`: every create makes a new object.
        if o.root.at(&["metadata", "name"]).is_none() {
            continue;
        }
        if files.get(o.file).is_none_or(|f| f.is_context()) || crate::quantity::is_placeholder(name)
        {
            continue;
        }
        // The API server ignores a cluster-scoped object's `metadata.namespace`.
        let cluster_scoped = CLUSTER_SCOPED.contains(&o.kind);
        let namespace = match o.namespace {
            _ if cluster_scoped => "",
            Some(ns) => ns,
            None => continue,
        };
        let key = (o.group, o.kind, namespace, name);
        let Some(earlier) = first.get(&key).copied() else {
            first.insert(key, o);
            continue;
        };
        if !same_cluster(cx, earlier, o) {
            continue;
        }
        if crate::yaml::to_json(earlier.root) == crate::yaml::to_json(o.root) {
            continue;
        }
        let path = files.get(earlier.file).map_or("", |f| f.path.as_str());
        let here = if earlier.file == o.file {
            "earlier in this file".to_string()
        } else {
            format!("in {path}")
        };
        out.push(
            cx.on(
                o,
                o.anchor(),
                format!(
                    "{} is defined twice for this cluster with different content (also {here}): both are applied and the last one applied wins, so what the cluster runs depends on apply order (Argo CD reports a repeated or shared resource and flips between them)",
                    if cluster_scoped {
                        format!("{} {name}", o.kind)
                    } else {
                        o.describe()
                    }
                ),
            )
            .related(earlier.loc(earlier.anchor()), "the other definition")
            .help("keep one definition, or rename one of them if both are meant to exist"),
        );
    }
}

/// Whether both definitions certainly reach the same cluster.
fn same_cluster(cx: &Ctx, a: &Object, b: &Object) -> bool {
    if a.file == b.file || cx.ix.settings.complete {
        return true;
    }
    let variant = |o: &Object| cx.ix.files.get(o.file).and_then(|f| f.variant());
    if let (Some((ga, ma)), Some((gb, mb))) = (variant(a), variant(b))
        && ga == gb
        && ma != mb
    {
        return false;
    }
    let synced = |o: &Object| cx.ix.files.get(o.file).and_then(|f| f.synced_to());
    match (synced(a), synced(b)) {
        (Some(x), Some(y)) => x.iter().any(|c| y.contains(c)),
        _ => false,
    }
}
