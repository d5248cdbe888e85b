//! Which pods get GPUs through Dynamic Resource Allocation: each pod's `resourceClaims` resolved
//! to the ResourceClaim or ResourceClaimTemplate of that name in its namespace, and the device
//! classes of their requests judged GPU or not. Also Kueue's `deviceClassMappings`, which name
//! the resource a claim's devices are charged to.
//!
//! Conservative by design: a claim not in the files, a class neither the files nor NVIDIA's
//! driver define as GPUs, or a request with alternatives that are not all GPUs gives no GPU.

use crate::model::dra::{self, DraGpu, PodClaim};
use crate::model::kueue_config::{self, DeviceClassMapping};
use crate::model::{Object, PodTemplate};
use crate::source::SourceFile;
use foldhash::{HashMap, HashMapExt};

/// Kueue's DRA mappings in the files.
fn mappings(files: &[SourceFile], objects: &[Object<'_>]) -> Vec<DeviceClassMapping> {
    // Each file's text is searched once, not once per object it holds.
    let mut marked: foldhash::HashMap<usize, bool> = foldhash::HashMap::default();
    objects
        .iter()
        .filter(|o| {
            *marked.entry(o.file).or_insert_with(|| {
                files
                    .get(o.file)
                    .is_some_and(|f| f.text.contains(kueue_config::MARKER))
            })
        })
        .flat_map(|o| kueue_config::device_class_mappings(o))
        .collect()
}

/// The resource Kueue charges a device class to, when exactly one name is mapped to it.
pub fn kueue_resource<'m>(mappings: &'m [DeviceClassMapping], class: &str) -> Option<&'m str> {
    let mut names = mappings
        .iter()
        .filter(|m| m.device_classes.iter().any(|c| c == class))
        .map(|m| m.name.as_str());
    let first = names.next()?;
    names.all(|n| n == first).then_some(first)
}

/// Gives each template the GPUs its claims resolve to; returns Kueue's DRA mappings.
pub(super) fn resolve<'a>(
    files: &[SourceFile],
    objects: &[Object<'a>],
    templates: &mut [PodTemplate<'a>],
) -> Vec<DeviceClassMapping> {
    let mappings = mappings(files, objects);
    if !templates
        .iter()
        .any(|t| t.spec.get("resourceClaims").is_some())
    {
        return mappings;
    }
    // Classes the files define: GPU only when every definition of the name says so.
    let mut classes: HashMap<&str, bool> = HashMap::new();
    let mut claims: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, o) in objects.iter().enumerate() {
        if let (Some(gpu), Some(name)) = (dra::class_is_gpu(o), o.name) {
            *classes.entry(name).or_insert(true) &= gpu;
        }
        if o.group == dra::GROUP
            && let Some(name) = o.name
        {
            claims.entry((o.kind, name)).or_default().push(i);
        }
    }
    let is_gpu = |class: &str| {
        classes
            .get(class)
            .copied()
            .unwrap_or_else(|| dra::well_known_gpu_class(class))
    };
    for t in templates.iter_mut() {
        let pod_claims = t.claims();
        if pod_claims.is_empty() {
            continue;
        }
        let namespace = objects.get(t.owner).and_then(|o| o.namespace);
        let mut gpus: Vec<DraGpu<'a>> = Vec::new();
        for pc in pod_claims {
            let Some(source) = claim_object(objects, &claims, &pc, namespace) else {
                continue;
            };
            let per_pod = pc.template.is_some();
            let requests = dra::claim_requests(&objects[source]).unwrap_or_default();
            for r in requests {
                if !r.classes.iter().all(|c| is_gpu(c)) {
                    continue;
                }
                let class = r.classes[0];
                gpus.push(DraGpu {
                    entry: pc.entry,
                    class,
                    request: r.name,
                    count: r.count,
                    source,
                    class_node: r.class_node,
                    per_pod,
                    // Kueue charges the claims of ResourceClaimTemplates only.
                    kueue_resource: per_pod
                        .then(|| kueue_resource(&mappings, class))
                        .flatten()
                        .map(str::to_string),
                });
            }
        }
        t.set_dra(gpus);
    }
    mappings
}

/// The claim object a pod's entry names: in the pod's namespace, else (a namespace left to
/// `kubectl -n` or kustomize on either side) the first of that name without one.
fn claim_object(
    objects: &[Object<'_>],
    claims: &HashMap<(&str, &str), Vec<usize>>,
    pc: &PodClaim<'_>,
    namespace: Option<&str>,
) -> Option<usize> {
    let key = match (pc.template, pc.claim) {
        (Some(t), _) => ("ResourceClaimTemplate", t),
        (None, Some(c)) => ("ResourceClaim", c),
        (None, None) => return None,
    };
    let named = claims.get(&key)?;
    let ns = |&&i: &&usize| objects[i].namespace;
    named
        .iter()
        .find(|i| ns(i) == namespace)
        .or_else(|| {
            named
                .iter()
                .find(|i| ns(i).is_none() || namespace.is_none())
        })
        .copied()
}

#[cfg(test)]
mod tests {
    use crate::config::Settings;
    use crate::index::{Class, Index};
    use crate::model::dra::Devices;
    use crate::source::SourceFile;

    #[test]
    fn claims_resolve_in_the_pods_namespace_and_map_to_kueue_resources() {
        let text = r#"apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
    - {name: example.com/gpu, deviceClassNames: [gpu.nvidia.com]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: mig.nvidia.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims:
    - {name: a, resourceClaimTemplateName: two}
    - {name: b, resourceClaimName: shared}
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: q, namespace: other}
spec:
  resourceClaims: [{name: a, resourceClaimTemplateName: two}]
  containers: [{name: c, image: x}]
"#;
        let files = vec![SourceFile::from_text("a.yaml".into(), text.into())];
        let settings = Settings::default();
        let ix = Index::build(&files, &settings);
        type Gpu<'s> = (&'s str, Option<u64>, bool, Option<&'s str>);
        let got: Vec<Vec<Gpu>> = ix
            .templates
            .iter()
            .map(|t| {
                t.dra_gpus()
                    .iter()
                    .map(|g| (g.class, g.count, g.per_pod, g.kueue_resource.as_deref()))
                    .collect()
            })
            .collect();
        assert_eq!(
            got,
            [
                vec![
                    ("gpu.nvidia.com", Some(2), true, Some("example.com/gpu")),
                    ("mig.nvidia.com", Some(1), false, None)
                ],
                vec![]
            ]
        );
        assert!(ix.templates[0].requests_gpu() && !ix.templates[1].requests_gpu());
        // Devices of every GPU claim; whole GPUs only of `gpu.nvidia.com` (not MIG devices).
        assert_eq!(ix.templates[0].dra_devices(), Some(Devices::Known(3)));
        assert_eq!(ix.templates[0].dra_whole_gpus(), 2);
        assert_eq!(ix.templates[0].constraints().nvidia_gpus, 2);
        assert_eq!(ix.templates[1].dra_devices(), None);
        assert_eq!(ix.templates[0].accelerator_name(), "GPU");
    }

    /// What a DRA pod is for is read from the containers that use its GPU claims.
    #[test]
    fn a_dra_pod_is_classified_by_the_containers_using_its_claims() {
        let deployment = |name: &str, args: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  replicas: 2\n  template:\n    spec:\n      resourceClaims: [{{name: gpu, resourceClaimTemplateName: one}}]\n      containers:\n        - name: main\n          image: ubuntu:22.04\n          command: [bash, -c]\n          args: [\"{args}\"]\n          resources: {{claims: [{{name: gpu}}]}}\n---\n"
            )
        };
        let text = format!(
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {{name: one, namespace: ml}}\nspec: {{spec: {{devices: {{requests: [{{name: g, exactly: {{deviceClassName: gpu.nvidia.com}}}}]}}}}}}\n---\n{}{}",
            deployment("idle", "nvidia-smi -L; sleep 9999"),
            deployment("server", "vllm serve meta-llama/Llama-3.1-8B")
        );
        let files = vec![SourceFile::from_text("a.yaml".into(), text)];
        let settings = Settings::default();
        let ix = Index::build(&files, &settings);
        let classes: Vec<Class> = ix.classes.iter().map(|c| c.class()).collect();
        assert_eq!(classes.len(), 2);
        assert_ne!(classes[0], Class::Inference);
        assert_eq!(classes[1], Class::Inference);
    }
}
