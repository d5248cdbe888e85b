use super::Ctx;
use super::gpu_rollout_exceeds_quota::rollout;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::sched::template_pods;
use crate::yaml::Node;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a one-replica GPU Deployment that rolls out by starting its new pod before it stops
    /// the old one (the default `RollingUpdate`: `maxSurge` 25 % rounds up to 1,
    /// `maxUnavailable` down to 0) while the pod mounts a PersistentVolumeClaim of the files that
    /// only one node may attach (`ReadWriteOnce`) or only one pod may use
    /// (`ReadWriteOncePod`). Claims of a storage class that is a shared file system (EFS, NFS,
    /// Filestore, Azure Files, CephFS, FSx, Lustre, a class named `…-fs-…`), whose volumes are not
    /// attached to one node, or a placeholder, claims bound to `hostPath` PersistentVolumes
    /// (by `volumeName`, or a class whose volumes in the files are all `hostPath` ones), which
    /// no node attaches, and Deployments an autoscaler scales are not judged, nor anything when the files share GPUs among pods (NVIDIA time-slicing or MPS,
    /// Intel's `sharedDevNum`): the new pod may take a slice of the old pod's GPU.
    ///
    /// ## Why is this bad?
    /// The new pod needs a GPU the old one does not free, so it lands on another node (a GPU
    /// node is seldom left with one spare), where the volume cannot attach while the old pod
    /// holds it (`Multi-Attach error`); with `ReadWriteOncePod` it cannot start anywhere. The
    /// old pod is stopped only once the new one is ready, so every rollout of the model server
    /// stalls until its progress deadline reports it failed.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: apps/v1
    /// kind: Deployment
    /// metadata: {name: llm}
    /// spec:
    ///   replicas: 1
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: vllm
    ///           resources:
    ///             limits: {nvidia.com/gpu: 1}
    ///           volumeMounts: [{name: models, mountPath: /models}]
    ///       volumes:
    ///         - name: models
    ///           persistentVolumeClaim: {claimName: models}   # ReadWriteOnce
    /// ```
    ///
    /// ## Fix
    /// Stop the old pod first: `strategy: {type: Recreate}` (or
    /// `rollingUpdate: {maxSurge: 0, maxUnavailable: 1}`), or keep the models on a volume many
    /// nodes can mount (`ReadWriteMany`, `ReadOnlyMany`).
    name: "gpu-rollout-blocked-by-volume",
    category: "availability",
    kinds: &["Deployment", "PersistentVolumeClaim"],
    severity: Warning,
    summary: "a one-replica GPU Deployment's rolling update needs a second node to attach a volume only one may",
    check: check,
}

/// Storage classes whose volumes are file systems mounted over the network, not attached to
/// one node: an access mode there does not keep a second node out. Matched in the class's name
/// (`efs-sc`, `crusoe-csi-driver-fs-sc`), a word of it for the short ones.
const SHARED: [&str; 11] = [
    "efs",
    "nfs",
    "filestore",
    "azurefile",
    "cephfs",
    "fsx",
    "lustre",
    "gluster",
    "juicefs",
    "beegfs",
    "gpfs",
];
const SHARED_WORDS: [&str; 5] = ["fs", "file", "files", "shared", "rwx"];

/// Whether the template's GPUs may be slices of shared ones: a shared resource name, or a
/// sharing configuration in the files that the pools it lands on use (or pools not known).
fn may_share(ix: &crate::index::Index<'_>, ti: usize, t: &crate::model::PodTemplate<'_>) -> bool {
    let setup = ix.gpu_setup();
    let resources: Vec<&str> = t
        .containers
        .iter()
        .flat_map(|c| c.accelerators().into_iter().map(|(r, _)| r))
        .collect();
    // A renamed resource (`nvidia.com/gpu.shared`, a time-slicing config's own name) or another
    // plugin's (generic-cdi-plugin's `nvidia.com/gpu-all`, which adds a device after each
    // allocation): how many pods one GPU serves is not the device plugin's one.
    if resources.iter().any(|r| !whole_device(r)) {
        return true;
    }
    if !setup.shares_gpus() {
        return false;
    }
    // Looked up once per template, and only for templates every cheaper filter kept.
    let pools = ix.landing_pools(ti);
    pools.is_empty()
        || resources.iter().any(|r| {
            pools
                .iter()
                .any(|&p| setup.sharing_of(&ix.nodepools[p], r).is_some())
        })
}

/// The resource names device plugins give one whole device each, unshared unless configured.
fn whole_device(r: &str) -> bool {
    r == "nvidia.com/gpu"
        || r.starts_with("nvidia.com/mig-")
        || r == "amd.com/gpu"
        || r.starts_with("aws.amazon.com/neuron")
        || r == "habana.ai/gaudi"
        || r.starts_with("google.com/tpu")
        || r.starts_with("gpu.intel.com/")
}

/// Whether Intel's GPU device plugin shares each GPU among pods: a `GpuDevicePlugin` or the
/// plugin's container started with `sharedDevNum` / `-shared-dev-num` above one.
fn intel_shared(ix: &crate::index::Index<'_>) -> bool {
    let above_one = |v: &str| v.trim().parse::<u32>().is_ok_and(|n| n > 1);
    let crd = ix.of_kind("GpuDevicePlugin").any(|o| {
        o.spec()
            .and_then(|s| s.get("sharedDevNum"))
            .and_then(Node::as_str)
            .is_some_and(above_one)
    });
    crd || ix.templates.iter().any(|t| {
        t.containers.iter().any(|c| {
            let words: Vec<&str> = ["command", "args"]
                .iter()
                .filter_map(|k| c.node.get(k))
                .flat_map(|n| n.items())
                .filter_map(Node::as_str)
                .collect();
            words.iter().enumerate().any(|(i, w)| {
                let Some(rest) = w.trim_start_matches('-').strip_prefix("shared-dev-num") else {
                    return false;
                };
                match rest.strip_prefix('=') {
                    Some(v) => above_one(v),
                    None => rest.is_empty() && words.get(i + 1).is_some_and(|v| above_one(v)),
                }
            })
        })
    })
}

/// Whether a storage class name says its volumes are a shared file system, or is not known yet
/// (a placeholder a tool fills in).
fn shared_or_unknown(class: &str) -> bool {
    let class = class.to_ascii_lowercase();
    crate::quantity::is_placeholder(&class)
        || SHARED.iter().any(|s| class.contains(s))
        || class
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| SHARED_WORDS.contains(&w))
}

/// The one node the pod may run on (`nodeName`, or `kubernetes.io/hostname` with one value), if
/// it is pinned: the new pod must start there too, and the volume is not what stops it.
fn pinned_node<'a>(t: &crate::model::PodTemplate<'a>) -> Option<&'a str> {
    let one_host = |r: &crate::model::constraints::Req<'a>| {
        (r.key == "kubernetes.io/hostname" && r.op == "In" && r.values.len() == 1)
            .then(|| r.values[0])
    };
    let c = t.constraints();
    t.spec
        .get("nodeName")
        .and_then(Node::as_str)
        .or_else(|| c.base.iter().find_map(one_host))
        .or_else(|| match c.terms.as_slice() {
            [term] => term.iter().find_map(one_host),
            _ => None,
        })
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    // PersistentVolumes of a host's directory: no node attaches them, so `ReadWriteOnce` keeps
    // no second pod out. By name, and the classes whose every volume is one.
    let mut host_volumes: Vec<&str> = Vec::new();
    let mut classes: HashMap<&str, bool> = HashMap::new();
    for pv in ix
        .of_kind("PersistentVolume")
        .filter(|o| o.group.is_empty())
    {
        let Some(spec) = pv.spec() else { continue };
        let host = spec.get("hostPath").is_some();
        if host && let Some(n) = pv.name {
            host_volumes.push(n);
        }
        if let Some(c) = spec.get("storageClassName").and_then(Node::as_str) {
            *classes.entry(c).or_insert(true) &= host;
        }
    }
    // Claims by (namespace, name), each with the one access mode that binds a single node or
    // pod (`None`: it binds none, or is not judged). Alternatives of one claim (a CPU and a GPU
    // variant of a manifest) may differ: the workload's own file, then its directory, speaks.
    type Judged<'i, 'a> = (&'i Object<'a>, Option<(Node<'a>, &'static str)>);
    let mut claims: HashMap<(Option<&str>, &str), Vec<Judged>> = HashMap::new();
    for c in ix
        .of_kind("PersistentVolumeClaim")
        .filter(|o| o.group.is_empty())
    {
        let (Some(name), Some(spec)) = (c.name, c.spec()) else {
            continue;
        };
        let class = spec
            .get("storageClassName")
            .and_then(Node::as_str)
            .unwrap_or("");
        let host = spec
            .get("volumeName")
            .and_then(Node::as_str)
            .is_some_and(|v| host_volumes.contains(&v))
            || classes.get(class).copied().unwrap_or(false);
        let judged = (!(shared_or_unknown(class) || host))
            .then(|| spec.get("accessModes"))
            .flatten()
            .and_then(|modes| {
                let written: Vec<&str> = modes.items().filter_map(Node::as_str).collect();
                let single = match written.as_slice() {
                    ["ReadWriteOncePod"] => "ReadWriteOncePod",
                    ["ReadWriteOnce"] => "ReadWriteOnce",
                    _ => return None,
                };
                Some((modes, single))
            });
        claims
            .entry((c.namespace, name))
            .or_default()
            .push((c, judged));
    }
    claims.retain(|_, v| v.iter().any(|(_, j)| j.is_some()));
    // A shared GPU is split into slices: the new pod may take a slice beside the old one.
    if claims.is_empty() || intel_shared(ix) {
        return;
    }
    let scalers = super::gpu_inference_pdb_missing::scalers(ix);
    for (ti, t) in ix.templates.iter().enumerate() {
        if !t.requests_gpu() {
            continue;
        }
        let o = ix.owner(t);
        if o.kind != "Deployment"
            || o.group != "apps"
            || super::gpu_inference_pdb_missing::autoscaled(&scalers, o).is_some()
        {
            continue;
        }
        if template_pods(o, t) != Some(1) {
            continue;
        }
        let strategy = o.spec().and_then(|s| s.get("strategy"));
        match rollout(strategy, 1) {
            Some((surge, 0)) if surge > 0 => {}
            _ => continue,
        }
        if may_share(ix, ti, t) {
            continue;
        }
        let volumes = t.spec.get("volumes");
        for v in volumes.into_iter().flat_map(|v| v.items()) {
            let Some(claim) = v.at(&["persistentVolumeClaim", "claimName"]) else {
                continue;
            };
            let Some((pvc, (modes, single))) = claim
                .as_str()
                .and_then(|n| claims.get(&(o.namespace, n)))
                .and_then(|c| nearest(ix, o, c))
            else {
                continue;
            };
            let accel = t.accelerator_name();
            let why = if single == "ReadWriteOncePod" {
                "only one pod may use it, so the new pod cannot start while the old one runs"
                    .to_string()
            } else if let Some(node) = pinned_node(t) {
                format!(
                    "the pod may run only on node `{node}`, so the new pod needs a second {accel} there, and unless that node has one to spare it never starts"
                )
            } else {
                format!(
                    "the new pod needs a second {accel}, and another node cannot attach the volume while the old pod holds it, so unless the old pod's node has a {accel} to spare the new pod never starts"
                )
            };
            let mut d = cx.on(
                o,
                strategy.unwrap_or(claim),
                format!(
                    "{} rolls out by starting its new pod before it stops the old one, and both mount PersistentVolumeClaim `{}` ({single}): {why}; the old pod stops only once the new one is ready, so the rollout stalls",
                    o.describe(),
                    pvc.name_or_unnamed(),
                ),
            );
            if strategy.is_some() {
                d = d.related(o.loc(claim), "the claim the pod mounts");
            }
            out.push(
                d.related(pvc.loc(modes), format!("`{single}`"))
                .help("stop the old pod first: `strategy: {type: Recreate}` (or `rollingUpdate: {maxSurge: 0, maxUnavailable: 1}`), or keep the volume on storage many nodes can mount (`ReadWriteMany`)"),
            );
            break;
        }
    }
}

/// The copy of a claim that speaks for workload `o`: the one in its file, else the ones in its
/// directory, else all of them; judged only when every copy that speaks binds one node or pod.
fn nearest<'i, 'a>(
    ix: &crate::index::Index<'a>,
    o: &Object<'_>,
    copies: &[(&'i Object<'a>, Option<(Node<'a>, &'static str)>)],
) -> Option<(&'i Object<'a>, (Node<'a>, &'static str))> {
    let dir = |f: crate::diag::FileId| std::path::Path::new(&ix.files[f].path).parent();
    let same_file: Vec<_> = copies.iter().filter(|(c, _)| c.file == o.file).collect();
    let same_dir: Vec<_> = copies
        .iter()
        .filter(|(c, _)| dir(c.file) == dir(o.file))
        .collect();
    let speaking = if !same_file.is_empty() {
        same_file
    } else if !same_dir.is_empty() {
        same_dir
    } else {
        copies.iter().collect()
    };
    if speaking.iter().any(|(_, j)| j.is_none()) {
        return None;
    }
    speaking.first().and_then(|(c, j)| j.map(|j| (*c, j)))
}
