use super::Ctx;
use crate::diag::Diagnostic;
use crate::intent::Intent;
use crate::model::{NodePool, PodTemplate};
use crate::sched::{self, GpuCapability};
use crate::yaml::Node;

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
    severity: Warning,
    summary: "a NodePool training workloads land on consolidates underutilized nodes",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for pool in &ix.nodepools {
        if sched::gpu_capability(pool) == GpuCapability::None {
            continue;
        }
        let version = ix.objects.get(pool.obj).map_or("v1", |o| o.version);
        let Some(policy) = Policy::of(pool, version) else {
            continue;
        };
        // Training workloads (by owner) that can land here, unprotected.
        let mut owners: Vec<usize> = Vec::new();
        for (ti, t) in ix.templates.iter().enumerate() {
            if !ix.classes.get(ti).is_some_and(Intent::is_training)
                || owners.contains(&t.owner)
                || protected(t)
            {
                continue;
            }
            let lands = sched::assignable_variants(ix, ti)
                .iter()
                .any(|v| sched::fit(&v.constraints, pool, ix.settings.eks).fits());
            if lands {
                owners.push(t.owner);
            }
        }
        let Some(&first) = owners.first() else {
            continue;
        };
        let first = &ix.objects[first];
        let pool_obj = &ix.objects[pool.obj];
        let count = if owners.len() == 1 {
            format!("a training workload ({}) can land on it", first.describe())
        } else {
            format!(
                "{} training workloads can land on it ({} and {} more)",
                owners.len(),
                first.describe(),
                owners.len() - 1
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

/// The underutilized-consolidation policy in force, and where to point at it.
pub(super) struct Policy<'a> {
    pub(super) name: &'a str,
    pub(super) by_default: bool,
    pub(super) why: &'static str,
    pub(super) node: &'a Node,
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
