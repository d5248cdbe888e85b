use super::{Ctx, close_enough, edit_distance_within};
use crate::diag::Diagnostic;
use crate::index::flavor_pools_for;
use crate::model::ClusterQueue;
use crate::sched::bounded_instances;
use crate::yaml::Node;
use std::collections::HashSet;

declare_rule! {
    /// ## What it does
    /// Flags a resource name in a Kueue ClusterQueue's `coveredResources` or a flavor's
    /// `resources` that no node and no workload can have:
    /// - a name without a domain that is a near miss of a Kubernetes resource (`gpu`, `memroy`;
    ///   the known ones are `cpu`, `memory`, `ephemeral-storage`, `storage`, `pods` and
    ///   `hugepages-*`); other names without a domain may be virtual resources that Kueue's
    ///   resource transformations or DRA device class mappings define, and are left alone;
    /// - a near miss of a well-known device resource (`nvidia.com/gpus`, `nvida.com/gpu`,
    ///   `aws.amazon.com/neuron-core`) — the well-known ones are `nvidia.com/gpu`, `amd.com/gpu`,
    ///   `aws.amazon.com/neuron`, `…/neuroncore`, `…/neurondevice`, `vpc.amazonaws.com/efa` and
    ///   `habana.ai/gaudi`;
    /// - an NVIDIA MIG profile not written as the device plugin writes one (`nvidia.com/mig-1g5gb`
    ///   for `mig-1g.5gb`), or that none of the instance types of the NodePools behind the flavor
    ///   has (when those pools are limited to instance types the catalog knows). A well-formed
    ///   profile the catalog does not list (a newer GPU's, such as GB200's `3g.93gb`) is left
    ///   alone where nothing bounds the flavor's nodes.
    ///
    /// It is an error where a workload of the queue (through a LocalQueue) asks for the resource
    /// the name was likely meant to be and the queue does not cover it: that workload is never
    /// admitted. Elsewhere it is a warning, as the quota is only unused.
    ///
    /// A name any workload in the files requests, or that Kueue's `deviceClassMappings` (DRA)
    /// name, is never flagged, and other names with a domain (custom extended resources a device
    /// plugin advertises) are left alone unless they are a near miss of a well-known one.
    ///
    /// ## Why is this bad?
    /// A quota on a resource nobody has is never used, and the resource the name was meant to be
    /// is then not covered: Kueue never admits a workload that requests a resource its
    /// ClusterQueue does not cover, so every GPU job submitted to the queue stays suspended.
    /// A MIG profile the pools' GPUs cannot be partitioned into never appears on a node: jobs
    /// admitted against that quota stay Pending.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ClusterQueue
    /// metadata:
    ///   name: training
    /// spec:
    ///   resourceGroups:
    ///     - coveredResources: [cpu, memory, nvidia.com/gpus]   # the device plugin advertises nvidia.com/gpu
    /// ```
    ///
    /// ## Fix
    /// Use the name the device plugin advertises (`nvidia.com/gpu`), in `coveredResources` and in
    /// every flavor's `resources`, or a MIG profile the GPUs behind the flavor support.
    name: "queue-resource-unknown",
    category: "kueue",
    kinds: &["ClusterQueue"],
    severity: Error,
    summary: "a ClusterQueue covers or sets quota for a resource no node or workload has",
    check: check,
}

/// Resource names Kubernetes itself defines.
const NATIVE: [&str; 5] = ["cpu", "memory", "ephemeral-storage", "storage", "pods"];

/// Device resources the usual device plugins advertise.
const DEVICES: [&str; 8] = [
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "vpc.amazonaws.com/efa",
    "habana.ai/gaudi",
];

/// The MIG profiles a GPU of the catalog is advertised under (none without MIG).
fn mig_profiles(gpu: &str, memory_mib: u64) -> Vec<&'static str> {
    crate::catalog::mig::mig_gpu(gpu, memory_mib).map_or_else(Vec::new, |m| m.resource_profiles())
}

fn all_mig_names() -> impl Iterator<Item = String> {
    crate::catalog::mig::all_resource_profiles()
        .into_iter()
        .map(|p| format!("nvidia.com/mig-{p}"))
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.cluster_queues.is_empty() {
        return;
    }
    let requested: HashSet<&str> = ix
        .templates
        .iter()
        .flat_map(|t| t.containers.iter())
        .flat_map(|c| [c.requests, c.limits])
        .flatten()
        .flat_map(|m| m.entries().map(|(k, _, _)| k))
        // Kueue's DRA mappings name resources of their own.
        .chain(ix.kueue_dra.iter().map(|m| m.name.as_str()))
        .collect();
    let mut known: Vec<String> = NATIVE
        .iter()
        .chain(DEVICES.iter())
        .map(|s| s.to_string())
        .chain(all_mig_names())
        .chain(requested.iter().map(|s| s.to_string()))
        .collect();
    known.sort();
    known.dedup();
    // What the workloads of each ClusterQueue ask for (through their LocalQueue).
    let mut by_queue: std::collections::HashMap<usize, HashSet<&str>> =
        std::collections::HashMap::new();
    for (t, q) in ix.templates.iter().zip(&ix.queues) {
        if let Some(cqi) = q.as_ref().and_then(|q| q.cluster_queue) {
            let asked = t
                .containers
                .iter()
                .flat_map(|c| [c.requests, c.limits])
                .flatten()
                .flat_map(|m| m.entries().map(|(k, _, _)| k));
            by_queue.entry(cqi).or_default().extend(asked);
        }
    }
    let none = HashSet::new();
    for (cqi, cq) in ix.cluster_queues.iter().enumerate() {
        let mut seen: Vec<&str> = Vec::new();
        let covered: HashSet<&str> = names(cq).iter().map(|(n, _)| *n).collect();
        let asked = by_queue.get(&cqi).unwrap_or(&none);
        for (name, node) in names(cq) {
            if seen.contains(&name) || requested.contains(name) {
                continue;
            }
            seen.push(name);
            if let Some((d, meant)) = unknown(cx, cq, name, node, &known) {
                // Certain only where a workload of the queue asks for the resource meant and the
                // queue does not cover it: that workload is never admitted. Else the quota is
                // unused, and whether anything is meant to run there the files do not say.
                let certain = meant
                    .is_some_and(|m| asked.contains(m.as_str()) && !covered.contains(m.as_str()));
                out.push(if certain {
                    d
                } else {
                    d.with_severity(crate::diag::Severity::Warning)
                });
            }
        }
        mig_on_pools(cx, cq, &requested, out);
    }
}

/// Every resource name of the queue, `coveredResources` first.
fn names<'a>(cq: &ClusterQueue<'a>) -> Vec<(&'a str, Node<'a>)> {
    cq.groups
        .iter()
        .flat_map(|g| g.covered.iter().copied())
        .chain(
            cq.quotas
                .iter()
                .flat_map(|f| f.resources.iter().map(|r| (r.name, r.name_node))),
        )
        .collect()
}

fn is_known(name: &str) -> bool {
    NATIVE.contains(&name)
        || DEVICES.contains(&name)
        || name.starts_with("hugepages-")
        || all_mig_names().any(|m| m == name)
        || name
            .strip_prefix("nvidia.com/mig-")
            .is_some_and(well_formed_mig)
}

/// Whether a MIG profile is written as the device plugin names them (`2g.47gb`, `1g.10gb+me`):
/// a GPU newer than the catalog (GB200's `3g.93gb`) may have one it does not list. Profiles the
/// GPUs behind a flavor lack are judged from the flavor's instance types below.
fn well_formed_mig(profile: &str) -> bool {
    let base = profile.split_once('+').map_or(profile, |(b, _)| b);
    let Some((slices, memory)) = base.split_once("g.") else {
        return false;
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(slices) && memory.strip_suffix("gb").is_some_and(digits)
}

/// The finding for a name no node or workload has, if it is one, and the name likely meant.
fn unknown(
    cx: &Ctx,
    cq: &ClusterQueue,
    name: &str,
    node: Node<'_>,
    known: &[String],
) -> Option<(Diagnostic, Option<String>)> {
    if is_known(name) || crate::quantity::is_placeholder(name) {
        return None;
    }
    let closest = known
        .iter()
        .filter_map(|k| Some((edit_distance_within(name, k, 3)?, k)))
        .filter(|(d, _)| close_enough(name, *d))
        .min_by_key(|(d, k)| (*d, k.as_str()))
        .map(|(_, k)| k.clone());
    let mig = name.starts_with("nvidia.com/mig-");
    let domainless = !name.contains('/');
    // A domainless name that is no near miss of a Kubernetes resource may be virtual: Kueue's
    // resource transformations and DRA device class mappings make quota names of their own
    // (`cpu_credits`, `gpu.memory`), declared in Kueue's configuration, not in the queue.
    if domainless
        && !NATIVE
            .iter()
            .any(|n| edit_distance_within(name, n, 3).is_some_and(|d| close_enough(name, d)))
    {
        return None;
    }
    // A domainless name (`gpu`) may stand for a device resource of that name.
    let by_suffix = domainless
        .then(|| {
            // The usual device plugins first, in order: `gpu` is most likely NVIDIA's.
            DEVICES
                .iter()
                .map(|d| d.to_string())
                .chain(known.iter().cloned())
                .find(|k| k.rsplit_once('/').is_some_and(|(_, n)| n == name))
        })
        .flatten();
    let suggestion = by_suffix.or(closest);
    let why = if mig {
        "no MIG-capable GPU has that profile".to_string()
    } else if domainless {
        "it is not a Kubernetes resource, and extended resource names carry a domain, like `vendor.com/name`".to_string()
    } else {
        match &suggestion {
            Some(s) => format!("it is a near miss of `{s}`"),
            None => return None,
        }
    };
    let obj = &cx.ix.objects[cq.obj];
    let d = cx.on(
        obj,
        node,
        format!(
            "ClusterQueue `{}` sets quota for `{name}`, which no node advertises and no workload requests ({why}): the quota is never used, and Kueue never admits a workload asking for a resource the queue does not cover",
            cq.name
        ),
    );
    let help = match &suggestion {
        Some(s) => format!(
            "did you mean `{s}`? Rename it in `coveredResources` and in every flavor's `resources`"
        ),
        None if mig => format!(
            "use a MIG profile the GPUs behind the queue's flavors support, e.g. {}",
            crate::diag::backticked(&all_mig_names().take(3).collect::<Vec<_>>(), ", ")
        ),
        None => "use the name the device plugin advertises, e.g. `nvidia.com/gpu`".to_string(),
    };
    Some((d.help(help), suggestion))
}

/// MIG profiles a flavor's quota names that none of the instance types behind the flavor has.
fn mig_on_pools(cx: &Ctx, cq: &ClusterQueue, requested: &HashSet<&str>, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let obj = &ix.objects[cq.obj];
    for fq in &cq.quotas {
        let Some(fi) = ix.flavor(fq.flavor) else {
            continue;
        };
        for r in &fq.resources {
            let Some(profile) = r.name.strip_prefix("nvidia.com/mig-") else {
                continue;
            };
            // A profile no GPU has is reported above, once per queue.
            if !is_known(r.name) && !requested.contains(r.name) {
                continue;
            }
            let pools = flavor_pools_for(ix, fi, r.name);
            if pools.is_empty() {
                continue;
            }
            // Only pools limited to catalog instance types tell which GPUs the nodes have.
            let gpus: Option<Vec<(&str, u64)>> = pools
                .iter()
                .map(|&p| {
                    Some(
                        bounded_instances(&ix.nodepools[p])?
                            .iter()
                            .map(|i| (i.gpu_name, i.gpu_memory_mib))
                            .collect::<Vec<_>>(),
                    )
                })
                .collect::<Option<Vec<_>>>()
                .map(|v| v.concat());
            let Some(mut gpus) = gpus else { continue };
            if gpus
                .iter()
                .any(|(g, m)| mig_profiles(g, *m).contains(&profile))
            {
                continue;
            }
            gpus.sort_unstable();
            gpus.dedup_by_key(|(g, _)| *g);
            let names: Vec<&str> = gpus.iter().map(|(g, _)| *g).collect();
            let supported: Vec<String> = gpus
                .iter()
                .flat_map(|(g, m)| mig_profiles(g, *m))
                .map(|p| format!("nvidia.com/mig-{p}"))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let pool = &ix.nodepools[pools[0]];
            let help = if supported.is_empty() {
                format!(
                    "the GPUs behind flavor `{}` ({}) have no MIG; give it `nvidia.com/gpu` quota, or point the flavor at A100/H100/H200/B200 nodes",
                    fq.flavor,
                    names.join(", ")
                )
            } else {
                let near = supported
                    .iter()
                    .filter_map(|s| Some((edit_distance_within(r.name, s, 4)?, s)))
                    .min()
                    .map(|(_, s)| s.clone())
                    .unwrap_or_else(|| supported[0].clone());
                format!(
                    "use a profile these GPUs have (did you mean `{near}`?), or point the flavor at nodes whose GPUs have `{profile}`"
                )
            };
            out.push(
                cx.on(
                    obj,
                    r.name_node,
                    format!(
                        "ClusterQueue `{}` gives flavor `{}` quota for MIG profile `{}`, but the GPUs of the NodePools behind the flavor ({}) have no such profile: no node advertises it, so jobs admitted against this quota stay Pending",
                        cq.name,
                        fq.flavor,
                        r.name,
                        names.join(", ")
                    ),
                )
                .related(
                    pool.loc(crate::sched::bounding_requirement(pool)),
                    format!("NodePool `{}` limits its instance types here", pool.name),
                )
                .help(help),
            );
        }
    }
}
