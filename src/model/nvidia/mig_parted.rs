//! MIG manager configurations of the files' own (mig-parted's `mig-configs`, held in a
//! ConfigMap the GPU operator's `migManager.config.name` points at): the named layouts a node's
//! `nvidia.com/mig.config` label picks.

use super::{Setting, each_embedded, whole};
use crate::model::Object;
use crate::yaml::Node;

/// One named layout: what its entries make of the GPUs, over every entry (an entry may hold
/// only for some GPU models, `device-filter`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayoutDef {
    pub name: String,
    /// Whether some entry turns MIG on.
    pub mig_enabled: bool,
    /// The profiles its entries make, as advertised (`1g.10gb` for `1g.10gb+me`), with the most
    /// any entry makes per GPU.
    pub devices: Vec<(String, u32)>,
}

impl LayoutDef {
    /// Whether some entry makes instances advertised as `profile`.
    pub fn makes(&self, profile: &str) -> bool {
        self.devices.iter().any(|(p, _)| p == profile)
    }
}

/// The layouts a ConfigMap's values define (none for other objects).
pub fn layouts(obj: &Object<'_>) -> Vec<Setting<LayoutDef>> {
    if !obj.is("", "ConfigMap") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (_, _, value) in obj.root.get("data").into_iter().flat_map(|d| d.entries()) {
        if !value.as_str().is_some_and(|t| t.contains("mig-configs")) {
            continue;
        }
        for defs in each_embedded(value, |root| Some(read(root))) {
            out.extend(defs.into_iter().map(|def| Setting {
                value: def,
                at: obj.loc(value),
                source: obj.describe(),
            }));
        }
    }
    out
}

fn read(root: Node<'_>) -> Vec<LayoutDef> {
    let mut out = Vec::new();
    for (name, _, entries) in root
        .get("mig-configs")
        .into_iter()
        .flat_map(|m| m.entries())
    {
        let mut def = LayoutDef {
            name: name.to_string(),
            ..LayoutDef::default()
        };
        for e in entries.items() {
            def.mig_enabled |= e
                .get("mig-enabled")
                .and_then(super::boolean)
                .unwrap_or(false);
            for (profile, _, n) in e.get("mig-devices").into_iter().flat_map(|d| d.entries()) {
                let advertised = profile.strip_suffix("+me").unwrap_or(profile);
                let n = whole(n).unwrap_or(0);
                match def.devices.iter_mut().find(|(p, _)| p == advertised) {
                    Some((_, most)) => *most = (*most).max(n),
                    None => def.devices.push((advertised.to_string(), n)),
                }
            }
        }
        out.push(def);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    #[test]
    fn layouts_are_read_from_configmap_values() {
        let text = r#"apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig-config, namespace: gpu-operator}
data:
  config.yaml: |
    version: v1
    mig-configs:
      inference-7x:
        - devices: all
          mig-enabled: true
          mig-devices:
            "1g.10gb": 7
      media:
        - devices: [0]
          mig-enabled: true
          mig-devices: {"1g.10gb+me": 1, "3g.40gb": 1}
        - devices: [1]
          mig-enabled: false
"#;
        let p = parse(text, Budget::default());
        let o = Object::from_node(0, p.docs[0].root()).unwrap();
        let defs: Vec<LayoutDef> = layouts(&o).into_iter().map(|s| s.value).collect();
        assert_eq!(defs.len(), 2);
        assert_eq!(defs[0].name, "inference-7x");
        assert_eq!(defs[0].devices, [("1g.10gb".to_string(), 7)]);
        assert!(defs[1].mig_enabled && defs[1].makes("1g.10gb") && defs[1].makes("3g.40gb"));
    }
}
