//! NVIDIA device plugin configuration files (`version: v1` with `flags` and `sharing`), as a
//! ConfigMap holds them, one named configuration per key: the GPU operator's
//! `devicePlugin.config.name` and the device plugin chart's `config.name` / `config.map` point
//! at them, and a node's `nvidia.com/device-plugin.config` label picks one.

use super::{MigStrategy, Setting, boolean, each_embedded, whole};
use crate::model::Object;
use crate::yaml::Node;

/// How the GPUs of a node are shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharingKind {
    /// CUDA time-slicing: no memory or fault isolation.
    TimeSlicing,
    /// CUDA MPS: memory and compute split evenly among the replicas.
    Mps,
}

impl SharingKind {
    pub fn noun(self) -> &'static str {
        match self {
            SharingKind::TimeSlicing => "time-sliced",
            SharingKind::Mps => "MPS-shared",
        }
    }
    /// The key under `sharing`.
    pub fn key(self) -> &'static str {
        match self {
            SharingKind::TimeSlicing => "timeSlicing",
            SharingKind::Mps => "mps",
        }
    }
}

/// One replicated resource: `replicas` pods may hold each device of `name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replicated {
    pub name: String,
    /// What it is advertised as: `rename`, else `<name>.shared` with `renameByDefault`, else
    /// `name`.
    pub advertised: String,
    pub replicas: u32,
}

/// A sharing section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharing {
    pub kind: SharingKind,
    pub resources: Vec<Replicated>,
    /// `failRequestsGreaterThanOne` as written (unset: false).
    pub fail_above_one: Option<bool>,
}

impl Sharing {
    /// Whether the plugin refuses a container more than one replica: with MPS always (it
    /// ignores the flag, `internal/rm/rm.go` `ValidateRequest`), with time-slicing when
    /// `failRequestsGreaterThanOne: true`.
    pub fn fails_above_one(&self) -> bool {
        matches!(self.kind, SharingKind::Mps) || self.fail_above_one == Some(true)
    }
    /// The replicated resource advertised under this name.
    pub fn advertising(&self, resource: &str) -> Option<&Replicated> {
        self.resources.iter().find(|r| r.advertised == resource)
    }
}

/// One named device plugin configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// Its key in the ConfigMap (what `nvidia.com/device-plugin.config` names).
    pub name: String,
    /// The ConfigMap's name.
    pub config_map: String,
    pub mig_strategy: Option<MigStrategy>,
    /// Replicas > 1 of some resource.
    pub sharing: Option<Sharing>,
}

/// The device plugin configurations a ConfigMap holds (none for other objects, or for values
/// that are no such configuration).
pub fn configs(obj: &Object<'_>) -> Vec<Setting<PluginConfig>> {
    if !obj.is("", "ConfigMap") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (key, _, value) in obj.root.get("data").into_iter().flat_map(|d| d.entries()) {
        let Some(text) = value.as_str() else { continue };
        // Cheap test first: most ConfigMaps hold something else.
        if !(text.contains("sharing") || text.contains("migStrategy")) {
            continue;
        }
        for c in each_embedded(value, |root| read(root, key, obj.name_or_unnamed())) {
            out.push(Setting {
                value: c,
                at: obj.loc(value),
                source: format!("{} (config `{key}`)", obj.describe()),
            });
        }
    }
    out
}

/// The configurations in a values file of NVIDIA's device plugin chart (`config.map.<name>:`
/// the configuration as YAML text), a document that is no object: the chart's values are often
/// kept beside the `helm install` that uses them.
pub fn values_file(
    file: crate::diag::FileId,
    path: &str,
    root: Node<'_>,
) -> Vec<Setting<PluginConfig>> {
    if root.get("kind").is_some() || root.get("apiVersion").is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (key, _, value) in root
        .at(&["config", "map"])
        .into_iter()
        .flat_map(|m| m.entries())
    {
        for c in each_embedded(value, |r| read(r, key, path)) {
            out.push(Setting {
                value: c,
                at: crate::diag::Loc {
                    file,
                    span: value.span(),
                },
                source: format!("{path} (config `{key}`)"),
            });
        }
    }
    out
}

/// A configuration file's root, when it is one (`flags` or `sharing` at the top).
pub fn read(root: Node<'_>, name: &str, config_map: &str) -> Option<PluginConfig> {
    let flags = root.get("flags");
    let sharing_node = root.get("sharing");
    if flags.is_none() && sharing_node.is_none() {
        return None;
    }
    let mig_strategy = flags
        .and_then(|f| f.get("migStrategy"))
        .and_then(Node::as_str)
        .and_then(MigStrategy::parse);
    let sharing = sharing_node.and_then(|s| {
        // MPS wins when both are written (the plugin's own order).
        [SharingKind::Mps, SharingKind::TimeSlicing]
            .into_iter()
            .find_map(|k| replicated(s.get(k.key())?, k))
    });
    Some(PluginConfig {
        name: name.to_string(),
        config_map: config_map.to_string(),
        mig_strategy,
        sharing,
    })
}

fn replicated(section: Node<'_>, kind: SharingKind) -> Option<Sharing> {
    let rename_by_default = section
        .get("renameByDefault")
        .and_then(boolean)
        .unwrap_or(false);
    let resources: Vec<Replicated> = section
        .get("resources")
        .into_iter()
        .flat_map(|r| r.items())
        .filter_map(|r| {
            let name = r.get("name").and_then(Node::as_str)?.to_string();
            let replicas = r.get("replicas").and_then(whole)?;
            let advertised = match r.get("rename").and_then(Node::as_str) {
                Some(n) if n.contains('/') => n.to_string(),
                Some(n) => format!("nvidia.com/{n}"),
                None if rename_by_default => format!("{name}.shared"),
                None => name.clone(),
            };
            Some(Replicated {
                name,
                advertised,
                replicas,
            })
        })
        .filter(|r| r.replicas > 1)
        .collect();
    (!resources.is_empty()).then(|| Sharing {
        kind,
        resources,
        fail_above_one: section.get("failRequestsGreaterThanOne").and_then(boolean),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn configs_of(text: &str) -> Vec<PluginConfig> {
        let p = parse(text, Budget::default());
        let o = Object::from_node(0, p.docs[0].root()).unwrap();
        configs(&o).into_iter().map(|s| s.value).collect()
    }

    #[test]
    fn sharing_and_strategy_are_read_per_key() {
        let cs = configs_of(
            r#"apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
          - name: nvidia.com/gpu
            replicas: 4
  mps: |-
    version: v1
    sharing:
      mps:
        resources:
          - {name: nvidia.com/gpu, replicas: 2}
  mig-mixed: |-
    version: v1
    flags: {migStrategy: mixed}
  unrelated: hello
"#,
        );
        assert_eq!(cs.len(), 3);
        let ts = cs[0].sharing.as_ref().unwrap();
        assert_eq!(
            (
                ts.kind,
                ts.resources[0].advertised.as_str(),
                ts.resources[0].replicas
            ),
            (SharingKind::TimeSlicing, "nvidia.com/gpu.shared", 4)
        );
        assert!(!ts.fails_above_one());
        assert_eq!(cs[0].mig_strategy, Some(MigStrategy::None));
        let mps = cs[1].sharing.as_ref().unwrap();
        assert_eq!(mps.kind, SharingKind::Mps);
        assert!(mps.fails_above_one());
        assert_eq!(
            mps.advertising("nvidia.com/gpu").map(|r| r.replicas),
            Some(2)
        );
        assert_eq!(
            (
                cs[2].name.as_str(),
                cs[2].mig_strategy,
                cs[2].sharing.is_none()
            ),
            ("mig-mixed", Some(MigStrategy::Mixed), true)
        );
    }
}
