//! Cluster-wide settings of the GPU operator and the device plugin, wherever the files write
//! them: a ClusterPolicy (`spec.mig.strategy`, `spec.devicePlugin.config`), the Helm values of
//! the `gpu-operator` or `nvidia-device-plugin` chart in a Flux HelmRelease or an Argo CD
//! Application, or the device plugin DaemonSet's `MIG_STRATEGY` / `--mig-strategy`.
//!
//! The strategy the GPU operator is given reaches the device plugin as `MIG_STRATEGY`, which
//! outranks a configuration file's `flags.migStrategy` (flag, then environment, then file).

use super::plugin_config::{self, PluginConfig};
use super::{MigStrategy, Setting, each_embedded};
use crate::model::Object;
use crate::yaml::Node;

/// What one object says.
#[derive(Debug, Default)]
pub struct Declared {
    pub mig_strategy: Vec<Setting<MigStrategy>>,
    /// Device plugin configurations written inline (chart values `config.map`,
    /// `devicePlugin.config.data`).
    pub plugin_configs: Vec<Setting<PluginConfig>>,
    /// The configuration nodes without a `nvidia.com/device-plugin.config` label get
    /// (`devicePlugin.config.default`, `config.default`).
    pub plugin_default: Option<String>,
    /// The ConfigMap of device plugin configurations it points at (`devicePlugin.config.name`,
    /// `config.name`).
    pub plugin_config_map: Option<String>,
    /// It declares a GPU operator, which starts the device plugin with a MIG strategy of its
    /// own (`single` unless told otherwise).
    pub operator: bool,
    /// The layout the MIG manager gives nodes without a `nvidia.com/mig.config` label
    /// (`migManager.config.default`; `all-disabled` unless told otherwise).
    pub mig_default: Option<String>,
}

/// Which chart a set of values is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Chart {
    Operator,
    DevicePlugin,
}

impl Chart {
    fn of(name: &str) -> Option<Self> {
        match name.rsplit('/').next().unwrap_or(name) {
            "gpu-operator" => Some(Chart::Operator),
            "nvidia-device-plugin" => Some(Chart::DevicePlugin),
            _ => None,
        }
    }
}

/// The settings an object declares (empty for objects that declare none).
pub fn declared(obj: &Object<'_>) -> Declared {
    let mut d = Declared::default();
    match (obj.group, obj.kind) {
        ("nvidia.com", "ClusterPolicy") => {
            if let Some(spec) = obj.spec() {
                operator_values(obj, spec, &mut d);
            }
        }
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            let chart = obj
                .spec()
                .and_then(|s| s.str_at(&["chart", "spec", "chart"]))
                .and_then(Chart::of);
            if let (Some(chart), Some(values)) = (chart, obj.spec().and_then(|s| s.get("values"))) {
                chart_values(obj, chart, values, &mut d);
            }
        }
        ("argoproj.io", "Application") => {
            let spec = obj.spec();
            let sources = spec.and_then(|s| s.get("source")).into_iter().chain(
                spec.and_then(|s| s.get("sources"))
                    .into_iter()
                    .flat_map(|s| s.items()),
            );
            for source in sources {
                let Some(chart) = source
                    .get("chart")
                    .and_then(Node::as_str)
                    .and_then(Chart::of)
                else {
                    continue;
                };
                let helm = source.get("helm");
                if let Some(values) = helm.and_then(|h| h.get("valuesObject")) {
                    chart_values(obj, chart, values, &mut d);
                }
                if let Some(text) = helm.and_then(|h| h.get("values")) {
                    // A values string: read as YAML; its settings point at the string.
                    let at = text;
                    let inner: Vec<Declared> = each_embedded(text, |root| {
                        let mut e = Declared::default();
                        chart_values(obj, chart, root, &mut e);
                        Some(e)
                    });
                    for mut e in inner {
                        for s in &mut e.mig_strategy {
                            s.at = obj.loc(at);
                        }
                        for s in &mut e.plugin_configs {
                            s.at = obj.loc(at);
                        }
                        merge(&mut d, e);
                    }
                }
            }
        }
        ("apps", "DaemonSet") => daemonset(obj, &mut d),
        _ => {}
    }
    d
}

fn merge(into: &mut Declared, from: Declared) {
    into.mig_strategy.extend(from.mig_strategy);
    into.plugin_configs.extend(from.plugin_configs);
    into.plugin_default = into.plugin_default.take().or(from.plugin_default);
    into.plugin_config_map = into.plugin_config_map.take().or(from.plugin_config_map);
    into.operator |= from.operator;
    into.mig_default = into.mig_default.take().or(from.mig_default);
}

fn strategy(obj: &Object<'_>, n: Option<Node<'_>>, d: &mut Declared) {
    if let Some(n) = n
        && let Some(s) = n.as_str().and_then(MigStrategy::parse)
    {
        d.mig_strategy.push(Setting {
            value: s,
            at: obj.loc(n),
            source: obj.describe(),
        });
    }
}

/// A ClusterPolicy spec, or the gpu-operator chart's values (the same shape for these keys).
fn operator_values(obj: &Object<'_>, v: Node<'_>, d: &mut Declared) {
    d.operator = true;
    d.mig_default = text(v.at(&["migManager", "config"]), "default");
    strategy(obj, v.at(&["mig", "strategy"]), d);
    let config = v.at(&["devicePlugin", "config"]);
    d.plugin_default = text(config, "default");
    d.plugin_config_map = text(config, "name");
    inline_configs(obj, config.and_then(|c| c.get("data")), d);
}

fn chart_values(obj: &Object<'_>, chart: Chart, v: Node<'_>, d: &mut Declared) {
    match chart {
        Chart::Operator => operator_values(obj, v, d),
        Chart::DevicePlugin => {
            strategy(obj, v.get("migStrategy"), d);
            let config = v.get("config");
            let map = config.and_then(|c| c.get("map"));
            // The chart makes the only configuration of its map the default.
            let sole = map
                .and_then(|m| m.as_map())
                .filter(|m| m.len() == 1)
                .and_then(|m| m.first())
                .and_then(|(k, _)| k.as_str())
                .map(str::to_string);
            d.plugin_default = text(config, "default").or(sole);
            d.plugin_config_map = text(config, "name");
            inline_configs(obj, map, d);
        }
    }
}

/// A non-empty string under `key` of `map`.
fn text(map: Option<Node<'_>>, key: &str) -> Option<String> {
    map.and_then(|c| c.get(key))
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Configurations written as `name: <YAML text>` in chart values.
fn inline_configs(obj: &Object<'_>, map: Option<Node<'_>>, d: &mut Declared) {
    for (key, _, value) in map.into_iter().flat_map(|m| m.entries()) {
        let owner = obj.name_or_unnamed();
        for c in each_embedded(value, |root| plugin_config::read(root, key, owner)) {
            d.plugin_configs.push(Setting {
                value: c,
                at: obj.loc(value),
                source: format!("{} (config `{key}`)", obj.describe()),
            });
        }
    }
}

/// The NVIDIA device plugin's own DaemonSet: `MIG_STRATEGY` or `--mig-strategy`.
fn daemonset(obj: &Object<'_>, d: &mut Declared) {
    let containers = obj
        .root
        .at(&["spec", "template", "spec", "containers"])
        .into_iter()
        .flat_map(|c| c.items());
    for c in containers {
        let image = c.get("image").and_then(Node::as_str).unwrap_or("");
        if !image.contains("k8s-device-plugin") {
            continue;
        }
        for e in c.get("env").into_iter().flat_map(|e| e.items()) {
            if e.get("name").and_then(Node::as_str) == Some("MIG_STRATEGY") {
                strategy(obj, e.get("value"), d);
            }
        }
        let args: Vec<Node<'_>> = ["args", "command"]
            .iter()
            .filter_map(|k| c.get(k))
            .flat_map(|a| a.items())
            .collect();
        for (i, a) in args.iter().enumerate() {
            let Some(s) = a.as_str() else { continue };
            if let Some(v) = s.strip_prefix("--mig-strategy=") {
                if let Some(st) = MigStrategy::parse(v) {
                    d.mig_strategy.push(Setting {
                        value: st,
                        at: obj.loc(*a),
                        source: obj.describe(),
                    });
                }
            } else if s == "--mig-strategy" {
                strategy(obj, args.get(i + 1).copied(), d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    /// Strategies, the configuration ConfigMap, the default configuration, inline configurations.
    type Said = (Vec<MigStrategy>, Option<String>, Option<String>, usize);

    fn declared_of(text: &str) -> Vec<Said> {
        let p = parse(text, Budget::default());
        p.docs
            .iter()
            .map(|doc| {
                let o = Object::from_node(0, doc.root()).unwrap();
                let d = declared(&o);
                (
                    d.mig_strategy.iter().map(|s| s.value).collect(),
                    d.plugin_config_map,
                    d.plugin_default,
                    d.plugin_configs.len(),
                )
            })
            .collect()
    }

    #[test]
    fn strategies_and_config_references_are_read_everywhere() {
        let got = declared_of(
            r#"apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  mig: {strategy: mixed}
  devicePlugin:
    config: {name: time-slicing-config, default: any}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: nvdp, namespace: nvidia}
spec:
  chart: {spec: {chart: nvidia-device-plugin}}
  values:
    migStrategy: single
    config:
      default: shared
      map:
        shared: |
          version: v1
          sharing:
            timeSlicing:
              resources: [{name: nvidia.com/gpu, replicas: 4}]
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: gpu-operator, namespace: argocd}
spec:
  source:
    chart: gpu-operator
    helm:
      values: |
        mig:
          strategy: single
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
        - name: plugin
          image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
          args: ["--mig-strategy=mixed"]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data: {a: b}
"#,
        );
        use MigStrategy::{Mixed, Single};
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            got,
            [
                (vec![Mixed], s("time-slicing-config"), s("any"), 0),
                (vec![Single], None, s("shared"), 1),
                (vec![Single], None, None, 0),
                (vec![Mixed], None, None, 0),
                (vec![], None, None, 0),
            ]
        );
    }
}
