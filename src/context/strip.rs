//! What of a listed object goes into the context file: its definition, not the cluster's
//! bookkeeping. Two pulls of an unchanged cluster give the same bytes, and a diff of two pulls
//! shows what someone changed, not what controllers touched.

use super::kinds::{CLUSTER_SECRET_KEYS, Shape};
use serde_json::{Map, Value};

/// Metadata the API server and controllers write (it changes on every update, or is unique per
/// cluster), dropped from every object.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
];

/// `kubectl apply`'s copy of the last applied object: the object again, as JSON.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The node facts kept from `status.nodeInfo`: what a pod's node selector may test.
const NODE_INFO: &[&str] = &["architecture", "operatingSystem", "kubeletVersion"];

/// Trims one object in place, `apiVersion` and `kind` already set.
pub fn strip(obj: &mut Value, shape: Shape) {
    let Some(o) = obj.as_object_mut() else { return };
    if let Some(Value::Object(meta)) = o.get_mut("metadata") {
        strip_metadata(meta, shape);
    }
    match shape {
        Shape::Plain | Shape::Crd => {
            o.remove("status");
        }
        Shape::Node => strip_node(o),
        Shape::ClusterSecret => {
            o.remove("status");
            for part in ["data", "stringData"] {
                if let Some(Value::Object(d)) = o.get_mut(part) {
                    d.retain(|k, _| CLUSTER_SECRET_KEYS.contains(&k.as_str()));
                }
            }
        }
    }
}

fn strip_metadata(meta: &mut Map<String, Value>, shape: Shape) {
    for k in SERVER_METADATA {
        meta.remove(*k);
    }
    if shape == Shape::Node {
        // A node's annotations, owners and finalizers are its agents' state (volumes attached,
        // the NodeClaim behind it), not something a manifest refers to.
        meta.retain(|k, _| k == "name" || k == "labels");
        return;
    }
    if let Some(Value::Object(ann)) = meta.get_mut("annotations") {
        ann.remove(LAST_APPLIED);
        if ann.is_empty() {
            meta.remove("annotations");
        }
    }
}

/// A node keeps its taints (what pods must tolerate), whether it is cordoned, and its resources.
fn strip_node(o: &mut Map<String, Value>) {
    if let Some(Value::Object(spec)) = o.get_mut("spec") {
        spec.retain(|k, _| k == "taints" || k == "unschedulable");
    }
    if let Some(Value::Object(status)) = o.get_mut("status") {
        status.retain(|k, _| matches!(k.as_str(), "allocatable" | "capacity" | "nodeInfo"));
        if let Some(Value::Object(info)) = status.get_mut("nodeInfo") {
            info.retain(|k, _| NODE_INFO.contains(&k.as_str()));
        }
    }
    for part in ["spec", "status"] {
        if o.get(part)
            .is_some_and(|v| v.as_object().is_some_and(Map::is_empty))
        {
            o.remove(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_metadata_and_status_go() {
        let mut o = json!({
            "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {
                "name": "gpu", "uid": "u", "resourceVersion": "7", "generation": 3,
                "creationTimestamp": "2026-01-01T00:00:00Z", "selfLink": "/x",
                "managedFields": [{"manager": "kubectl"}],
                "labels": {"team": "ml"},
                "annotations": {LAST_APPLIED: "{}"},
            },
            "spec": {"limits": {"nvidia.com/gpu": "8"}},
            "status": {"conditions": []},
        });
        strip(&mut o, Shape::Plain);
        assert_eq!(
            o,
            json!({
                "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                "metadata": {"name": "gpu", "labels": {"team": "ml"}},
                "spec": {"limits": {"nvidia.com/gpu": "8"}},
            })
        );
    }

    #[test]
    fn a_cluster_secret_keeps_its_name_and_server_never_its_credentials() {
        let mut o = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "prod", "namespace": "argocd", "uid": "u",
                         "labels": {"argocd.argoproj.io/secret-type": "cluster", "env": "prod"},
                         "annotations": {LAST_APPLIED: "{\"stringData\":{\"config\":\"token\"}}"}},
            "type": "Opaque",
            "data": {"name": "cHJvZA==", "server": "aHR0cHM6Ly9r", "config": "c2VjcmV0"},
            "stringData": {"config": "secret", "project": "ml"},
        });
        strip(&mut o, Shape::ClusterSecret);
        assert_eq!(
            o,
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "prod", "namespace": "argocd",
                             "labels": {"argocd.argoproj.io/secret-type": "cluster", "env": "prod"}},
                "type": "Opaque",
                "data": {"name": "cHJvZA==", "server": "aHR0cHM6Ly9r"},
                "stringData": {"project": "ml"},
            })
        );
    }

    #[test]
    fn other_annotations_stay() {
        let mut o =
            json!({"metadata": {"name": "a", "annotations": {LAST_APPLIED: "{}", "team": "ml"}}});
        strip(&mut o, Shape::Plain);
        assert_eq!(
            o,
            json!({"metadata": {"name": "a", "annotations": {"team": "ml"}}})
        );
    }

    #[test]
    fn a_node_keeps_labels_taints_and_resources() {
        let mut o = json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": "ip-10-0-0-1", "uid": "u", "labels": {"nvidia.com/gpu.present": "true"},
                "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                "ownerReferences": [{"kind": "NodeClaim"}], "finalizers": ["karpenter.sh/termination"],
            },
            "spec": {"providerID": "aws:///i-1", "podCIDR": "10.0.0.0/24",
                     "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {
                "allocatable": {"nvidia.com/gpu": "8"}, "capacity": {"nvidia.com/gpu": "8"},
                "conditions": [{"type": "Ready"}], "images": [{"names": ["x"]}],
                "nodeInfo": {"architecture": "amd64", "bootID": "b", "kubeletVersion": "v1.33.1",
                             "machineID": "m", "operatingSystem": "linux"},
            },
        });
        strip(&mut o, Shape::Node);
        assert_eq!(
            o,
            json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "ip-10-0-0-1", "labels": {"nvidia.com/gpu.present": "true"}},
                "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                "status": {
                    "allocatable": {"nvidia.com/gpu": "8"}, "capacity": {"nvidia.com/gpu": "8"},
                    "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.33.1",
                                 "operatingSystem": "linux"},
                },
            })
        );
    }

    #[test]
    fn a_node_without_taints_has_no_empty_spec() {
        let mut o = json!({"metadata": {"name": "n"}, "spec": {"providerID": "x"}, "status": {}});
        strip(&mut o, Shape::Node);
        assert_eq!(o, json!({"metadata": {"name": "n"}}));
    }
}
