//! Kueue's own Configuration (`config.kueue.x-k8s.io`), wherever the files write it: as an object,
//! as text in the `kueue-manager-config` ConfigMap, or in the Helm values of the `kueue` chart
//! (`managerConfig.controllerManagerConfigYaml`), themselves often text in an Argo CD Application.
//! Only its DRA `deviceClassMappings` are read.

use super::Object;
use crate::diag::Loc;
use crate::yaml::{Budget, Node, parse};

/// The key that marks the text worth reading: most files never hold it.
pub const MARKER: &str = "deviceClassMappings";

/// One mapping: the resource name quota counts, and the device classes it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceClassMapping {
    pub name: String,
    pub device_classes: Vec<String>,
    /// Where the files declare it: the `deviceClassMappings` key, or the text that holds it (a
    /// ConfigMap value, chart values), in which the key stands verbatim.
    pub at: Loc,
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
        walk(obj, obj.root, None, &mut out);
    }
    out
}

/// Text nested in text deeper than this (values in an Application holding a ConfigMap…) is
/// not read.
const MAX_DEPTH: u32 = 3;

/// `holder`: where the text being read stands in the object (with its depth of nesting); `None`
/// while reading the object itself, whose nodes are located directly.
fn walk(
    obj: &Object<'_>,
    n: Node<'_>,
    holder: Option<(Loc, u32)>,
    out: &mut Vec<DeviceClassMapping>,
) {
    if let Some((key, list)) = n.get("resources").and_then(|r| r.entry(MARKER)) {
        let at = holder.map_or_else(|| obj.loc(key), |(h, _)| h);
        out.extend(list.items().filter_map(|m| mapping(m, at)));
    }
    if n.as_map().is_some() {
        for (_, _, v) in n.entries() {
            walk(obj, v, holder, out);
        }
    } else if n.as_seq().is_some() {
        for item in n.items() {
            walk(obj, item, holder, out);
        }
    } else if let Some(text) = n.as_str()
        && holder.is_none_or(|(_, depth)| depth < MAX_DEPTH)
        && text.contains(MARKER)
    {
        let inner = holder.map_or_else(|| (obj.loc(n), 1), |(h, depth)| (h, depth + 1));
        let parsed = parse(text, Budget::default());
        for d in &parsed.docs {
            walk(obj, d.root(), Some(inner), out);
        }
    }
}

fn mapping(n: Node<'_>, at: Loc) -> Option<DeviceClassMapping> {
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
        at,
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
        let all: Vec<Vec<DeviceClassMapping>> = p
            .docs
            .iter()
            .map(|d| device_class_mappings(&Object::from_node(0, d.root()).unwrap()))
            .collect();
        type Read = (String, Vec<String>);
        let got: Vec<Vec<Read>> = all
            .iter()
            .map(|ms| {
                ms.iter()
                    .map(|m| (m.name.clone(), m.device_classes.clone()))
                    .collect()
            })
            .collect();
        let m = |n: &str, cs: &[&str]| -> Read {
            (n.to_string(), cs.iter().map(|s| s.to_string()).collect())
        };
        // Each located at the text that holds it, where the key stands verbatim.
        for ms in &all {
            let at = ms[0].at.span;
            assert!(text[at.range()].contains(MARKER), "{at:?}");
        }
        assert_eq!(
            got,
            [
                vec![m("example.com/gpu", &["gpu.nvidia.com", "mig.nvidia.com"])],
                vec![m("gpus", &["gpu.nvidia.com"])]
            ]
        );
    }
}
