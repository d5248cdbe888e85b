//! Kueue's own Configuration (`config.kueue.x-k8s.io`), wherever the files write it: as an object,
//! as text in the `kueue-manager-config` ConfigMap, or in the Helm values of the `kueue` chart
//! (`managerConfig.controllerManagerConfigYaml`), themselves often text in an Argo CD Application.
//! Only its DRA `deviceClassMappings` are read.

use super::Object;
use crate::yaml::{Budget, Node, parse};

/// The key that marks the text worth reading: most files never hold it.
pub const MARKER: &str = "deviceClassMappings";

/// One mapping: the resource name quota counts, and the device classes it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceClassMapping {
    pub name: String,
    pub device_classes: Vec<String>,
}

/// The mappings an object declares, at any depth of YAML held as text (bounded).
pub fn device_class_mappings(obj: &Object<'_>) -> Vec<DeviceClassMapping> {
    let mut out = Vec::new();
    let wanted = obj.group == "config.kueue.x-k8s.io"
        || matches!(
            (obj.group, obj.kind),
            ("", "ConfigMap")
                | ("helm.toolkit.fluxcd.io", "HelmRelease")
                | ("argoproj.io", "Application")
        );
    if wanted {
        walk(obj.root, 0, &mut out);
    }
    out
}

/// Text nested in text deeper than this (values in an Application holding a ConfigMap…) is
/// not read.
const MAX_DEPTH: u32 = 3;

fn walk(n: Node<'_>, depth: u32, out: &mut Vec<DeviceClassMapping>) {
    if let Some(list) = n.at(&["resources", MARKER]) {
        out.extend(list.items().filter_map(mapping));
    }
    if n.as_map().is_some() {
        for (_, _, v) in n.entries() {
            walk(v, depth, out);
        }
    } else if n.as_seq().is_some() {
        for item in n.items() {
            walk(item, depth, out);
        }
    } else if let Some(text) = n.as_str()
        && depth < MAX_DEPTH
        && text.contains(MARKER)
    {
        let parsed = parse(text, Budget::default());
        for d in &parsed.docs {
            walk(d.root(), depth + 1, out);
        }
    }
}

fn mapping(n: Node<'_>) -> Option<DeviceClassMapping> {
    let name = n.get("name")?.as_str()?.to_string();
    let device_classes = n
        .get("deviceClassNames")
        .into_iter()
        .flat_map(|l| l.items())
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    Some(DeviceClassMapping {
        name,
        device_classes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_in_a_configmap_and_in_chart_values() {
        let text = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    resources:
      deviceClassMappings:
        - name: example.com/gpu
          deviceClassNames: [gpu.nvidia.com, mig.nvidia.com]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: kueue}
spec:
  source:
    chart: kueue
    helm:
      values: |
        managerConfig:
          controllerManagerConfigYaml: |-
            apiVersion: config.kueue.x-k8s.io/v1beta1
            kind: Configuration
            resources:
              deviceClassMappings:
                - {name: gpus, deviceClassNames: [gpu.nvidia.com]}
"#;
        let p = parse(text, Budget::default());
        let got: Vec<Vec<DeviceClassMapping>> = p
            .docs
            .iter()
            .map(|d| device_class_mappings(&Object::from_node(0, d.root()).unwrap()))
            .collect();
        let m = |n: &str, cs: &[&str]| DeviceClassMapping {
            name: n.to_string(),
            device_classes: cs.iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(
            got,
            [
                vec![m("example.com/gpu", &["gpu.nvidia.com", "mig.nvidia.com"])],
                vec![m("gpus", &["gpu.nvidia.com"])]
            ]
        );
    }
}
