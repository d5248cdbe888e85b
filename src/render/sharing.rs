//! What GPU sharing adds to a render: the node labels the NVIDIA GPU operator reads on a
//! sharing class's nodes (`nvidia.com/mig.config`, `nvidia.com/device-plugin.config`), the
//! ConfigMap of device plugin configurations those labels name, and for MIG under the `mixed`
//! strategy the Karpenter NodeOverlays that tell Karpenter how many instances a node brings.

use super::plan::{
    CLASS_LABEL, GPU_OPERATOR_NAMESPACE, ObjKind, Object, PLUGIN_CONFIGS, with_labels,
};
use super::platform::{ClassSpec, Platform, SharingSpec};
use super::profile::MigStrategyChoice;
use crate::index::{MIG_CONFIG_LABEL, PLUGIN_CONFIG_LABEL};
use serde_json::{Value, json};

/// The labels a class's NodePools put on their nodes.
pub fn node_labels(c: &ClassSpec) -> Value {
    let mut labels = json!({ CLASS_LABEL: c.name });
    if let (Some(s), Some(m)) = (&c.sharing, labels.as_object_mut()) {
        // The device plugin configuration of the class has the class's name.
        m.insert(PLUGIN_CONFIG_LABEL.into(), json!(c.name));
        if let SharingSpec::Mig { profile, .. } = s {
            m.insert(MIG_CONFIG_LABEL.into(), json!(format!("all-{profile}")));
        }
    }
    labels
}

/// The device plugin configuration file of a sharing class.
fn plugin_config(s: &SharingSpec) -> String {
    match s {
        SharingSpec::Mig { strategy, .. } => format!(
            "version: v1\nflags:\n  migStrategy: {}\n",
            match strategy {
                MigStrategyChoice::Single => "single",
                MigStrategyChoice::Mixed => "mixed",
            }
        ),
        // Not renamed: Karpenter knows `nvidia.com/gpu`, and launches nodes for it.
        SharingSpec::TimeSlicing { replicas } => format!(
            "version: v1\nsharing:\n  timeSlicing:\n    # More than one replica in a container is refused, not silently a turn on one GPU.\n    failRequestsGreaterThanOne: true\n    resources:\n      - name: nvidia.com/gpu\n        replicas: {replicas}\n"
        ),
        SharingSpec::Mps { replicas } => format!(
            "version: v1\nsharing:\n  mps:\n    resources:\n      - name: nvidia.com/gpu\n        replicas: {replicas}\n"
        ),
    }
}

/// The sharing objects of the platform: none without a sharing class.
pub fn objects(p: &Platform) -> Vec<Object> {
    let shared: Vec<(&ClassSpec, &SharingSpec)> = p
        .classes
        .iter()
        .filter_map(|c| Some((c, c.sharing.as_ref()?)))
        .collect();
    if shared.is_empty() {
        return Vec::new();
    }
    let configs: Vec<Value> = shared
        .iter()
        .map(|(c, s)| json!({ "name": c.name, "text": plugin_config(s), "sharing": s.name() }))
        .collect();
    let mut out = vec![Object {
        kind: ObjKind::ConfigMap,
        namespace: Some(GPU_OPERATOR_NAMESPACE.into()),
        name: PLUGIN_CONFIGS.into(),
        ctx: json!({
            "labels": with_labels(&[]),
            "config": {
                "name": PLUGIN_CONFIGS,
                "namespace": GPU_OPERATOR_NAMESPACE,
                "label": PLUGIN_CONFIG_LABEL,
                "configs": configs,
            },
        }),
    }];
    for (c, s) in shared {
        if let SharingSpec::Mig {
            strategy: MigStrategyChoice::Mixed,
            per_gpu,
            ..
        } = s
        {
            out.extend(overlays(c, &s.resource(), *per_gpu));
        }
    }
    out
}

/// One NodeOverlay per GPU count among the class's instance types: Karpenter counts
/// `nvidia.com/gpu` only, so without them it launches no node for a MIG request.
fn overlays(c: &ClassSpec, resource: &str, per_gpu: u32) -> Vec<Object> {
    let mut counts: Vec<u32> = c.instances.iter().map(|i| i.gpu_count).collect();
    counts.sort_unstable();
    counts.dedup();
    counts
        .into_iter()
        .map(|n| {
            let types: Vec<&str> = c
                .instances
                .iter()
                .filter(|i| i.gpu_count == n)
                .map(|i| i.instance_type)
                .collect();
            let name = format!("{}-{n}gpu", c.name);
            Object {
                kind: ObjKind::NodeOverlay,
                namespace: None,
                name: name.clone(),
                ctx: json!({
                    "labels": with_labels(&[(CLASS_LABEL, &c.name)]),
                    "overlay": {
                        "name": name,
                        "class": c.name,
                        "types": types,
                        "resource": resource,
                        "capacity": (n * per_gpu).to_string(),
                        "gpus": n,
                        "per_gpu": per_gpu,
                    },
                }),
            }
        })
        .collect()
}
