use super::Ctx;
use crate::diag::Diagnostic;
use crate::index::Index;
use crate::intent::Intent;
use crate::model::{NodePool, PodTemplate};
use crate::sched::{self, GpuCapability};
use crate::yaml::Node;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a GPU NodePool that consolidates underutilized nodes — `consolidationPolicy:
    /// WhenEmptyOrUnderutilized` (written, or Karpenter v1's default when `disruption` or the
    /// policy is left out), `WhenUnderutilized` (v1beta1, or a v1alpha5 Provisioner with
    /// `consolidation.enabled: true`) or `Balanced` — when some training workload in the
    /// repository can land on it (its selectors and tolerations fit the pool, after Kueue's flavor
    /// injection). Not flagged: `consolidateAfter: Never`, an always-active budget of `nodes: "0"`
    /// for underutilized consolidation, and training pods that carry
    /// `karpenter.sh/do-not-disrupt: "true"`.
    ///
    /// ## Why is this bad?
    /// Underutilized consolidation deletes or replaces nodes that still run pods, to pack them more
    /// cheaply. A training pod evicted mid-run loses everything since its last checkpoint, and a
    /// distributed job usually restarts as a whole: hours of GPU time are thrown away, and the run
    /// may never finish if it keeps being repacked.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata: {name: gpu-training}
    /// spec:
    ///   disruption:
    ///     consolidationPolicy: WhenEmptyOrUnderutilized
    ///     consolidateAfter: 30s
    ///   template: ...   # a PyTorchJob in the repo can land here
    /// ```
    ///
    /// ## Fix
    /// Only remove nodes once they are empty, and/or protect the training pods:
    /// ```yaml
    /// disruption:
    ///   consolidationPolicy: WhenEmpty
    ///   consolidateAfter: 10m
    /// # and/or on the training pod template:
    /// metadata:
    ///   annotations:
    ///     karpenter.sh/do-not-disrupt: "true"
    /// ```
    name: "training-consolidation-underutilized",
    category: "disruption",
    kinds: &["NodePool"],
    severity: Warning,
    summary: "a NodePool training workloads land on consolidates underutilized nodes",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let policies: Vec<Option<Policy>> = ix
        .nodepools
        .iter()
        .enumerate()
        .map(|(p, pool)| {
            if ix.pools.capability[p] == GpuCapability::None {
                return None;
            }
            let version = ix.objects.get(pool.obj).map_or("v1", |o| o.version);
            Policy::of(pool, version)
        })
        .collect();
    if policies.iter().all(Option::is_none) {
        return;
    }
    let owners = training_owners_by_pool(ix, &policies);
    for (pi, pool) in ix.nodepools.iter().enumerate() {
        let Some(policy) = &policies[pi] else {
            continue;
        };
        let Some(&(first, count)) = owners.get(&pi) else {
            continue;
        };
        let first = &ix.objects[first];
        let pool_obj = &ix.objects[pool.obj];
        let count = if count == 1 {
            format!("a training workload ({}) can land on it", first.describe())
        } else {
            format!(
                "{count} training workloads can land on it ({} and {} more)",
                first.describe(),
                count - 1
            )
        };
        let how = if policy.by_default {
            format!("`{}` by default ({})", policy.name, policy.why)
        } else {
            format!("`{}`", policy.name)
        };
        let help = if pool.legacy_provisioner {
            "migrate to a karpenter.sh/v1 NodePool with `disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: 10m}` (or set `consolidation.enabled: false`), and/or annotate the training pods with `karpenter.sh/do-not-disrupt: \"true\"`".to_string()
        } else {
            "set `spec.disruption.consolidationPolicy: WhenEmpty` with a `consolidateAfter` (e.g. `10m`) so GPU nodes are only removed once empty, and/or annotate the training pods with `karpenter.sh/do-not-disrupt: \"true\"`".to_string()
        };
        out.push(
            cx.on(
                pool_obj,
                policy.node,
                format!(
                    "NodePool `{}` consolidates {how} and {count}: Karpenter may drain an underutilized GPU node mid-run to repack its pods, killing the training and losing the progress since its last checkpoint",
                    pool.name
                ),
            )
            .related(
                first.loc(first.anchor()),
                format!("{} is a training workload that can land on NodePool `{}`", first.describe(), pool.name),
            )
            .help(help),
        );
    }
}

/// Per flagged pool: the first training workload (object index) that can land on it unprotected,
/// and how many distinct ones can. Templates with the same placement and tolerations form one
/// group whose pools are found once, so the cost follows groups × pools, not templates × pools.
fn training_owners_by_pool(
    ix: &Index,
    flagged: &[Option<Policy>],
) -> HashMap<usize, (usize, usize)> {
    let mut groups: HashMap<(usize, String), Group> = HashMap::new();
    for (ti, t) in ix.templates.iter().enumerate() {
        if !ix.classes.get(ti).is_some_and(Intent::is_training) || protected(t) {
            continue;
        }
        for l in ix.landings.get(ti).into_iter().flatten() {
            let v = &ix.variants[ti][l.variant];
            let key = (l.placement, tolerations_key(&v.constraints));
            let g = groups.entry(key).or_insert(Group {
                member: (ti, l.variant),
                owners: Vec::new(),
            });
            if g.owners.last() != Some(&t.owner) {
                g.owners.push(t.owner);
            }
        }
    }
    let mut pool_groups: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut groups: Vec<((usize, String), Group)> = groups.into_iter().collect();
    groups.sort_unstable_by_key(|(_, g)| g.member);
    for (gi, ((placement, _), g)) in groups.iter().enumerate() {
        let (ti, vi) = g.member;
        let constraints = &ix.variants[ti][vi].constraints;
        for class in &ix.placements[*placement].gpu_classes {
            let rep = &ix.nodepools[class.pools[0] as usize];
            if !sched::taints(constraints, rep, ix.settings.eks)
                .untolerated
                .is_empty()
            {
                continue;
            }
            // A Trainium pool is no place for an NVIDIA job, whatever its labels.
            let offers = ix.offers_for(ti);
            for &p in &class.pools {
                if flagged[p as usize].is_some() && offers(p as usize) {
                    pool_groups.entry(p as usize).or_default().push(gi);
                }
            }
        }
    }
    let mut merged: HashMap<Vec<usize>, (usize, usize)> = HashMap::new();
    pool_groups
        .into_iter()
        .map(|(p, mut gs)| {
            gs.sort_unstable();
            gs.dedup();
            let summary = *merged.entry(gs).or_insert_with_key(|gs| {
                let mut all: Vec<usize> = gs
                    .iter()
                    .flat_map(|&g| groups[g].1.owners.iter().copied())
                    .collect();
                all.sort_unstable();
                all.dedup();
                (all[0], all.len())
            });
            (p, summary)
        })
        .collect()
}

/// Unprotected training templates with one placement and one set of tolerations.
struct Group {
    /// A member: (template, variant).
    member: (usize, usize),
    /// Owning objects, ascending.
    owners: Vec<usize>,
}

/// Tolerations and extended resources: what decides the taint side of a fit.
fn tolerations_key(c: &sched::PodConstraints) -> String {
    let mut s = String::new();
    for t in &c.tolerations {
        s.push_str(&format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1e}",
            t.key, t.operator, t.value, t.effect
        ));
    }
    for e in &c.extended {
        s.push_str(e);
        s.push('\u{1d}');
    }
    s
}

/// The underutilized-consolidation policy in force, and where to point at it.
pub(super) struct Policy<'a> {
    pub(super) name: &'a str,
    pub(super) by_default: bool,
    pub(super) why: &'static str,
    pub(super) node: Node<'a>,
}

impl<'a> Policy<'a> {
    /// `None` when the pool never consolidates underutilized nodes.
    pub(super) fn of(pool: &NodePool<'a>, version: &str) -> Option<Self> {
        if pool.legacy_provisioner {
            // v1alpha5: `consolidation: {enabled: true}` is underutilized consolidation.
            let enabled = pool.disruption.and_then(|d| d.entry("enabled"))?;
            if enabled
                .1
                .as_str()
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            {
                return Some(Policy {
                    name: "WhenUnderutilized",
                    by_default: false,
                    why: "",
                    node: enabled.1,
                });
            }
            return None;
        }
        if pool
            .consolidate_after
            .and_then(Node::as_str)
            .is_some_and(|v| v == "Never")
        {
            return None;
        }
        if budgets_block_underutilized(pool) {
            return None;
        }
        match pool.consolidation_policy {
            Some(n) => {
                let name = n.as_str()?;
                matches!(
                    name,
                    "WhenEmptyOrUnderutilized" | "WhenUnderutilized" | "Balanced"
                )
                .then_some(Policy {
                    name,
                    by_default: false,
                    why: "",
                    node: n,
                })
            }
            None => {
                let (node, why) = match pool.spec.entry("disruption") {
                    Some((k, _)) => (k, "`disruption` sets no `consolidationPolicy`"),
                    None => (pool.anchor, "no `disruption` block"),
                };
                Some(Policy {
                    // v1beta1 defaulted to WhenUnderutilized, v1 to WhenEmptyOrUnderutilized.
                    name: if version == "v1beta1" {
                        "WhenUnderutilized"
                    } else {
                        "WhenEmptyOrUnderutilized"
                    },
                    by_default: true,
                    why,
                    node,
                })
            }
        }
    }
}

/// An always-active budget (no schedule) of zero nodes that covers underutilized consolidation.
fn budgets_block_underutilized(pool: &NodePool) -> bool {
    pool.disruption
        .and_then(|d| d.get("budgets"))
        .into_iter()
        .flat_map(|b| b.items())
        .any(|b| {
            let zero = b
                .get("nodes")
                .and_then(Node::as_str)
                .is_some_and(|n| matches!(n.trim(), "0" | "0%"));
            let always = b.get("schedule").is_none();
            let covers = match b.get("reasons") {
                None => true,
                Some(r) => r.items().any(|x| x.as_str() == Some("Underutilized")),
            };
            zero && always && covers
        })
}

/// Pods annotated `karpenter.sh/do-not-disrupt: "true"` block consolidation of their node.
pub(super) fn protected(t: &PodTemplate) -> bool {
    t.annotation("karpenter.sh/do-not-disrupt")
        .and_then(|(_, v)| v.as_str())
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}
