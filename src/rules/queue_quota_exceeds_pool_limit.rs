use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::index::{PoolCap, flavor_pools_for, shared_pool_cap, show_quantity};
use crate::model::{FlavorQuotas, is_gpu_resource, resource_groups};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a ResourceFlavor whose nominal quota of a GPU resource (`nvidia.com/gpu`,
    /// `aws.amazon.com/neuron`, …), added up over every ClusterQueue (and Cohort) that gives the
    /// flavor quota, is more than the NodePools behind the flavor may launch. The pools behind a
    /// flavor are those that may launch GPU nodes carrying its `nodeLabels`. What a pool may
    /// launch is its `limits` on the resource, or for `nvidia.com/gpu` what its `cpu`, `memory`
    /// or `nodes` limit allows on the instance types its requirements limit it to (the catalog's
    /// best GPUs-per-unit ratio among them, so no mix of instance types exceeds it); a static pool
    /// (`replicas`) counts its nodes. Shared GPUs count as what one GPU is advertised as: a
    /// pool whose `nvidia.com/mig.config` layout cuts each GPU into seven `1g.10gb` instances
    /// holds seven `nvidia.com/mig-1g.10gb` per GPU (and seven `nvidia.com/gpu` under the
    /// `single` strategy), and one whose device plugin configuration time-slices or MPS-shares
    /// its GPUs four ways holds four per GPU (see `mig-strategy-mismatch` and
    /// `shared-gpu-for-training` for where gpuops reads the strategy and the configuration).
    ///
    /// The rule is silent when a pool behind the flavor is unbounded (no limit that caps the
    /// resource), when no pool in the files is behind the flavor (the pools may be created
    /// elsewhere), when a quota is not a quantity, and when no pool's layout makes the MIG
    /// profile at all (`shared-gpu-quota-unadvertised` says so). A ClusterQueue's quota on a
    /// flavor its MultiKueue or ProvisioningRequest AdmissionCheck gates is spent on nodes these
    /// pools never launch, and is not counted.
    ///
    /// ## Why is this bad?
    /// Kueue admits workloads against quota, not against capacity. When the quota is larger than
    /// what Karpenter may launch, Kueue admits jobs, unsuspends them, and their pods stay Pending
    /// at the pool's limit — holding quota that other jobs of the queue (or the cohort) could have
    /// used, and never timing out on their own.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ClusterQueue
    /// metadata:
    ///   name: training
    /// spec:
    ///   resourceGroups:
    ///     - coveredResources: [nvidia.com/gpu]
    ///       flavors:
    ///         - name: a100           # nodeLabels select NodePool `a100`
    ///           resources:
    ///             - name: nvidia.com/gpu
    ///               nominalQuota: 64  # NodePool `a100` has `limits: {nvidia.com/gpu: 32}`
    /// ```
    ///
    /// ## Fix
    /// Lower the nominal quotas to what the pools may launch, or raise the pools' `limits` to the
    /// quota they serve.
    name: "queue-quota-exceeds-pool-limit",
    category: "kueue",
    kinds: &["ClusterQueue"],
    severity: Warning,
    summary: "the GPU quota on a flavor is more than its NodePools may launch",
    check: check,
}

/// The holders of quota per (flavor, resource), in first-seen order; `None` once a quota is not a
/// quantity.
type Sums<'s, 'a> = Vec<((&'s str, &'s str), Option<Vec<Holder<'a>>>)>;

/// One holder of quota on a flavor: the object (ClusterQueue or Cohort) and its quota node.
struct Holder<'a> {
    obj: usize,
    nominal: i128,
    node: Node<'a>,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.nodepools.is_empty() || ix.flavors.is_empty() {
        return;
    }
    // Every holder's quotas, ClusterQueues then Cohorts, in object order.
    // A flavor an admission check places elsewhere (MultiKueue, a ProvisioningRequest) is
    // spent on nodes these pools never launch.
    let mut holders: Vec<(usize, Vec<FlavorQuotas>)> = ix
        .cluster_queues
        .iter()
        .enumerate()
        .map(|(c, q)| {
            let here = q
                .quotas
                .iter()
                .filter(|fq| ix.gate(c, Some(fq.flavor)).is_none())
                .cloned()
                .collect();
            (q.obj, here)
        })
        .collect();
    for (oi, o) in ix.objects.iter().enumerate() {
        if o.is("kueue.x-k8s.io", "Cohort") {
            holders.push((oi, resource_groups(o.spec()).1));
        }
    }
    holders.sort_by_key(|(oi, _)| *oi);
    // (flavor, resource) → holders, in first-seen order; `None` once a quota is not a quantity.
    let mut sums: Sums = Vec::new();
    let mut at: std::collections::HashMap<(&str, &str), usize> = Default::default();
    for (oi, quotas) in &holders {
        for fq in quotas {
            for r in fq.resources.iter().filter(|r| is_gpu_resource(r.name)) {
                let key = (fq.flavor, r.name);
                let i = *at.entry(key).or_insert_with(|| {
                    sums.push((key, Some(Vec::new())));
                    sums.len() - 1
                });
                let entry = &mut sums[i].1;
                match r.nominal.and_then(|q| Some((q.value?.0, q.node))) {
                    Some((nominal, node)) => {
                        if let Some(list) = entry {
                            list.push(Holder {
                                obj: *oi,
                                nominal,
                                node,
                            });
                        }
                    }
                    None => *entry = None,
                }
            }
        }
    }
    for ((flavor, resource), list) in sums {
        let Some(list) = list.filter(|l| !l.is_empty()) else {
            continue;
        };
        let quota: i128 = list.iter().map(|h| h.nominal).sum();
        let Some(fi) = ix.flavor(flavor) else {
            continue;
        };
        let pools = flavor_pools_for(ix, fi, resource);
        if pools.is_empty() {
            continue;
        }
        let caps: Option<Vec<(usize, PoolCap)>> = pools
            .iter()
            .map(|&p| Some((p, shared_pool_cap(ix, &ix.nodepools[p], resource)?)))
            .collect();
        let Some(caps) = caps else { continue };
        let capacity: i128 = caps.iter().map(|(_, c)| c.max).sum();
        // Pools whose layouts make none of it never advertise it: `shared-gpu-quota-unadvertised`.
        let unadvertised = caps.iter().all(|(_, c)| c.per_gpu == Some(0));
        if quota <= capacity || unadvertised {
            continue;
        }
        out.push(finding(cx, flavor, resource, &list, quota, &caps, capacity));
    }
}

fn finding(
    cx: &Ctx,
    flavor: &str,
    resource: &str,
    list: &[Holder],
    quota: i128,
    caps: &[(usize, PoolCap)],
    capacity: i128,
) -> Diagnostic {
    let ix = cx.ix;
    let first = &list[0];
    let obj = &ix.objects[first.obj];
    let (quota_s, capacity_s) = (show_quantity(quota), show_quantity(capacity));
    let holders = if list.len() == 1 {
        format!(
            "{} `{}` gives flavor `{flavor}` a nominal quota of {quota_s} {resource}",
            obj.kind,
            obj.name_or_unnamed()
        )
    } else {
        let names: Vec<String> = list
            .iter()
            .map(|h| {
                let o = &ix.objects[h.obj];
                format!("`{}` ({})", o.name_or_unnamed(), show_quantity(h.nominal))
            })
            .collect();
        let cohorts = list.iter().any(|h| ix.objects[h.obj].kind == "Cohort");
        let kinds = if cohorts {
            "ClusterQueues and Cohorts"
        } else {
            "ClusterQueues"
        };
        format!(
            "{kinds} {} give flavor `{flavor}` a nominal quota of {quota_s} {resource} in all",
            names.join(", ")
        )
    };
    let pools: Vec<String> = caps
        .iter()
        .map(|(p, c)| format!("`{}`: {}", ix.nodepools[*p].name, show_quantity(c.max)))
        .collect();
    let mut d = cx.on(
        obj,
        first.node,
        format!(
            "{holders}, but the NodePools behind the flavor may launch at most {capacity_s} ({}): Kueue admits jobs up to the quota, and the pods beyond the pools' limits stay Pending while holding quota",
            pools.join(", ")
        ),
    );
    for h in list.iter().skip(1).take(3) {
        let o = &ix.objects[h.obj];
        d = d.related(
            o.loc(h.node),
            format!(
                "{} `{}` gives flavor `{flavor}` {} {resource}",
                o.kind,
                o.name_or_unnamed(),
                show_quantity(h.nominal)
            ),
        );
    }
    for (p, c) in caps.iter().take(3) {
        let pool = &ix.nodepools[*p];
        let key = pool
            .limits
            .and_then(|l| l.entries().find(|(_, _, v)| v.is(c.node)))
            .map_or("replicas", |(k, _, _)| k);
        let why = if let Some(n) = c.per_gpu {
            format!(
                "its `{key}` limit allows {} GPUs, each advertised as {n} {resource}",
                show_quantity(c.max / i128::from(n))
            )
        } else if c.derived {
            format!(
                "its `{key}` limit allows at most {} {resource} on the instance types it may launch",
                show_quantity(c.max)
            )
        } else {
            format!("its `{key}` limit caps it at {}", show_quantity(c.max))
        };
        d = d.related(
            Loc {
                file: pool.file,
                span: c.node.span(),
            },
            format!("NodePool `{}`: {why}", pool.name),
        );
    }
    // Shared GPUs: the limits count GPUs, each advertised as several of the resource.
    let raise = match caps.first().and_then(|(_, c)| c.per_gpu) {
        Some(n) => format!(
            "{} GPUs ({n} {resource} each)",
            show_quantity((quota + i128::from(n) * 1000 - 1) / (i128::from(n) * 1000) * 1000)
        ),
        None => quota_s.clone(),
    };
    d.help(format!(
        "lower the nominal quota on flavor `{flavor}` to {capacity_s} {resource} in all, or raise the `limits` of the NodePools behind it to at least {raise}"
    ))
}
