//! Dynamic Resource Allocation (`resource.k8s.io`): the devices a pod gets from ResourceClaims and
//! ResourceClaimTemplates rather than from extended resources, and which device classes are GPUs.
//!
//! Read the way the API server serves each version: `v1beta1` writes a request's
//! `deviceClassName` on the request itself, `v1beta2` and `v1` under `exactly` (or as
//! alternatives under `firstAvailable`).

use super::Object;
use crate::yaml::Node;

pub const GROUP: &str = "resource.k8s.io";

/// Device classes NVIDIA's DRA driver installs for whole GPUs and MIG devices. Other classes of
/// that driver (ComputeDomain channels and daemons, IMEX) are no GPUs.
const GPU_CLASSES: [&str; 2] = ["gpu.nvidia.com", "mig.nvidia.com"];

/// DRA drivers whose devices are GPUs: a DeviceClass in the files that selects one of them is a
/// GPU class.
const GPU_DRIVERS: [&str; 3] = ["gpu.nvidia.com", "gpu.amd.com", "gpu.intel.com"];

/// One device request of a claim.
#[derive(Debug, Clone)]
pub struct DeviceRequest<'a> {
    /// Its `name` (what a container's `resources.claims[].request` picks).
    pub name: Option<&'a str>,
    /// The device class, or each alternative of `firstAvailable`.
    pub classes: Vec<&'a str>,
    /// The `deviceClassName` node (the first alternative's).
    pub class_node: Node<'a>,
    /// Devices asked (`count`, 1 by default); `None` for `allocationMode: All` or alternatives
    /// that ask different counts.
    pub count: Option<u64>,
}

/// The device requests of a ResourceClaim (`spec`) or ResourceClaimTemplate (`spec.spec`).
pub fn claim_requests<'a>(obj: &Object<'a>) -> Option<Vec<DeviceRequest<'a>>> {
    if obj.group != GROUP {
        return None;
    }
    let spec = match obj.kind {
        "ResourceClaim" => obj.spec()?,
        "ResourceClaimTemplate" => obj.spec()?.get("spec")?,
        _ => return None,
    };
    let requests = spec.at(&["devices", "requests"])?;
    Some(requests.items().filter_map(request).collect())
}

fn request(r: Node<'_>) -> Option<DeviceRequest<'_>> {
    // `adminAccess` gives monitoring access to devices in use by others: no device of its own.
    let admin = |n: Node<'_>| n.get("adminAccess").and_then(Node::as_str) == Some("true");
    if let Some(alts) = r.get("firstAvailable") {
        let subs: Vec<(Node<'_>, Option<u64>)> = alts
            .items()
            .filter(|s| !admin(*s))
            .filter_map(|s| Some((s.get("deviceClassName")?, count(s))))
            .collect();
        let (first, c) = *subs.first()?;
        return Some(DeviceRequest {
            name: r.get("name").and_then(Node::as_str),
            classes: subs.iter().filter_map(|(n, _)| n.as_str()).collect(),
            class_node: first,
            count: c.filter(|c| subs.iter().all(|(_, o)| *o == Some(*c))),
        });
    }
    let exact = r.get("exactly").unwrap_or(r);
    if admin(exact) {
        return None;
    }
    let node = exact.get("deviceClassName")?;
    Some(DeviceRequest {
        name: r.get("name").and_then(Node::as_str),
        classes: vec![node.as_str()?],
        class_node: node,
        count: count(exact),
    })
}

/// `count` under `ExactCount` (the default mode); `None` for `All`.
fn count(r: Node<'_>) -> Option<u64> {
    match r.get("allocationMode").and_then(Node::as_str) {
        Some("All") => None,
        _ => match r.get("count") {
            Some(n) => n.as_str()?.trim().parse().ok(),
            None => Some(1),
        },
    }
}

/// Whether a DeviceClass object in the files gives GPUs: its CEL selectors name a GPU driver, or
/// it is the class of a GPU extended resource (`extendedResourceName: nvidia.com/gpu`). `None`:
/// not a DeviceClass.
pub fn class_is_gpu(obj: &Object<'_>) -> Option<bool> {
    if obj.group != GROUP || obj.kind != "DeviceClass" {
        return None;
    }
    let spec = obj.spec();
    let extended = spec
        .and_then(|s| s.get("extendedResourceName"))
        .and_then(Node::as_str)
        .is_some_and(crate::catalog::is_gpu_resource);
    let by_driver = spec
        .and_then(|s| s.get("selectors"))
        .into_iter()
        .flat_map(|s| s.items())
        .filter_map(|s| s.at(&["cel", "expression"]).and_then(Node::as_str))
        .any(|e| GPU_DRIVERS.iter().any(|d| names_driver(e, d)));
    Some(extended || by_driver)
}

/// Whether a CEL expression compares `device.driver` with `driver`.
fn names_driver(expr: &str, driver: &str) -> bool {
    let compact: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    ["'", "\""].iter().any(|q| {
        compact.contains(&format!("device.driver=={q}{driver}{q}"))
            || compact.contains(&format!("{q}{driver}{q}==device.driver"))
    })
}

/// Whether a class name NVIDIA's driver installs for GPUs (when the files do not define it).
pub fn well_known_gpu_class(name: &str) -> bool {
    GPU_CLASSES.contains(&name)
}

/// One entry of a pod's `spec.resourceClaims`.
#[derive(Debug, Clone, Copy)]
pub struct PodClaim<'a> {
    pub entry: Node<'a>,
    /// The ResourceClaim it names (`resourceClaimName`).
    pub claim: Option<&'a str>,
    /// The ResourceClaimTemplate it names (`resourceClaimTemplateName`).
    pub template: Option<&'a str>,
}

/// A pod spec's `resourceClaims` (also the `source:` form of Kubernetes before 1.31).
pub fn pod_claims<'a>(spec: Node<'a>) -> Vec<PodClaim<'a>> {
    let name = |e: Node<'a>, key: &str| {
        e.get(key)
            .or_else(|| e.at(&["source", key]))
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
    };
    spec.get("resourceClaims")
        .into_iter()
        .flat_map(|n| n.items())
        .map(|e| PodClaim {
            entry: e,
            claim: name(e, "resourceClaimName"),
            template: name(e, "resourceClaimTemplateName"),
        })
        .collect()
}

/// GPUs a pod gets from one of its claims.
#[derive(Debug, Clone)]
pub struct DraGpu<'a> {
    /// The pod's `resourceClaims` entry.
    pub entry: Node<'a>,
    /// The device class.
    pub class: &'a str,
    /// The claim's request it comes from (its `name`).
    pub request: Option<&'a str>,
    /// Devices asked (`None`: every matching device, or alternatives of different counts).
    pub count: Option<u64>,
    /// The claim object (index into the index's objects) and its `deviceClassName` node.
    pub source: usize,
    pub class_node: Node<'a>,
    /// It comes from a ResourceClaimTemplate (one claim per pod), not a shared ResourceClaim.
    pub per_pod: bool,
    /// The resource Kueue charges it to (its `deviceClassMappings`), when the files say.
    pub kueue_resource: Option<String>,
}

/// How many devices some GPU claims give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Devices {
    Known(u64),
    /// A request asks for every matching device (`allocationMode: All`), or alternatives ask
    /// different counts: what the pod gets depends on the node.
    Unknown,
}

/// The devices of some GPU claims together; `None` when there are none.
pub fn devices<'x, 'a: 'x>(gpus: impl IntoIterator<Item = &'x DraGpu<'a>>) -> Option<Devices> {
    let mut total: Option<Devices> = None;
    for g in gpus {
        total = Some(match (total, g.count) {
            (Some(Devices::Unknown), _) | (_, None) => Devices::Unknown,
            (Some(Devices::Known(t)), Some(n)) => Devices::Known(t.saturating_add(n)),
            (None, Some(n)) => Devices::Known(n),
        });
    }
    total
}

/// The class of NVIDIA's driver that gives whole GPUs (not MIG devices): what an instance's GPU
/// count is compared with.
pub fn whole_gpu_class(name: &str) -> bool {
    name == GPU_CLASSES[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn first<T>(text: &str, f: impl Fn(&Object<'_>) -> T) -> T {
        let p = parse(text, Budget::default());
        let o = Object::from_node(0, p.docs[0].root()).unwrap();
        f(&o)
    }

    #[test]
    fn requests_of_each_version() {
        let got = |t: &str| {
            first(t, |o| {
                claim_requests(o)
                    .unwrap()
                    .iter()
                    .map(|r| (r.classes.join("|"), r.count))
                    .collect::<Vec<_>>()
            })
        };
        let v1 = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nspec:\n  spec:\n    devices:\n      requests:\n        - {name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n        - {name: all, exactly: {deviceClassName: mig.nvidia.com, allocationMode: All}}\n        - {name: adm, exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}}\n";
        assert_eq!(
            got(v1),
            [
                ("gpu.nvidia.com".to_string(), Some(2)),
                ("mig.nvidia.com".to_string(), None)
            ]
        );
        let v1beta1 = "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nspec:\n  devices:\n    requests:\n      - {name: g, deviceClassName: gpu.nvidia.com}\n      - name: alt\n        firstAvailable:\n          - {name: a, deviceClassName: mig.nvidia.com}\n          - {name: b, deviceClassName: gpu.nvidia.com}\n";
        assert_eq!(
            got(v1beta1),
            [
                ("gpu.nvidia.com".to_string(), Some(1)),
                ("mig.nvidia.com|gpu.nvidia.com".to_string(), Some(1))
            ]
        );
    }

    #[test]
    fn devices_add_up_unless_one_count_is_unknown() {
        let text = "k: v\n";
        let p = parse(text, Budget::default());
        let node = p.docs[0].root();
        let gpu = |count: Option<u64>| DraGpu {
            entry: node,
            class: "gpu.nvidia.com",
            request: None,
            count,
            source: 0,
            class_node: node,
            per_pod: true,
            kueue_resource: None,
        };
        assert_eq!(devices(&[]), None);
        assert_eq!(
            devices(&[gpu(Some(2)), gpu(Some(1))]),
            Some(Devices::Known(3))
        );
        assert_eq!(devices(&[gpu(Some(2)), gpu(None)]), Some(Devices::Unknown));
    }

    #[test]
    fn device_classes_by_driver() {
        let class = |sel: &str| {
            first(
                &format!(
                    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {{name: c}}\nspec:\n  selectors:\n    - cel:\n        expression: {sel}\n"
                ),
                class_is_gpu,
            )
        };
        assert_eq!(class("\"device.driver == 'gpu.nvidia.com'\""), Some(true));
        assert_eq!(
            class("\"device.driver == 'compute-domain.nvidia.com'\""),
            Some(false)
        );
        assert_eq!(class("'device.driver == \"gpu.example.com\"'"), Some(false));
    }
}
