//! A NodePool's requirement set as Karpenter builds it: its `requirements`, every template label
//! (as `In [value]`), `karpenter.sh/nodepool` and the node class name. Built once per pool; the
//! scheduling model (`sched`) matches pod requirements against it.

use super::NodePool;
use crate::diag::Loc;
use crate::one_or_many::OneOrMany;

/// One constraint of the pool on a key, with where it is written.
#[derive(Debug, Clone)]
pub(crate) struct PoolReq<'a> {
    pub op: &'a str,
    pub values: super::constraints::Values<'a>,
    pub loc: Loc,
}

/// The pool's requirement set, per key (nearly always one constraint a key, one value each).
#[derive(Debug)]
pub struct PoolReqs<'a> {
    pub(crate) by_key: Vec<(&'a str, OneOrMany<PoolReq<'a>>)>,
}

impl<'a> PoolReqs<'a> {
    /// The pool's requirement set (built once per pool and kept with it).
    pub fn of<'p>(pool: &'p NodePool<'a>) -> &'p Self {
        pool.sched.get_or_init(|| Self::build(pool))
    }

    fn build(pool: &NodePool<'a>) -> Self {
        let mut by_key: Vec<(&'a str, OneOrMany<PoolReq<'a>>)> = Vec::new();
        let mut add =
            |key: &'a str, r: PoolReq<'a>| match by_key.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(r),
                None => by_key.push((key, OneOrMany::One(r))),
            };
        for (k, _, v) in &pool.labels {
            if let Some(val) = v.as_str() {
                add(
                    k,
                    PoolReq {
                        op: "In",
                        values: OneOrMany::One(val),
                        loc: pool.loc(*v),
                    },
                );
            }
        }
        for r in &pool.requirements {
            add(
                normalize_key(r.key),
                PoolReq {
                    op: r.op,
                    values: OneOrMany::of(&r.values),
                    loc: pool.loc(r.node),
                },
            );
        }
        add(
            "karpenter.sh/nodepool",
            PoolReq {
                op: "In",
                values: OneOrMany::One(pool.name),
                loc: pool.loc(pool.anchor),
            },
        );
        if let Some(nc) = pool.node_class_ref.and_then(|n| n.get("name"))
            && let Some(v) = nc.as_str()
        {
            add(
                "karpenter.k8s.aws/ec2nodeclass",
                PoolReq {
                    op: "In",
                    values: OneOrMany::One(v),
                    loc: pool.loc(nc),
                },
            );
        }
        // EKS Auto Mode labels each of its nodes `eks.amazonaws.com/compute-type: auto`, the
        // selector AWS documents for pinning workloads to Auto Mode capacity.
        if pool.is_auto_mode() {
            add(
                "eks.amazonaws.com/compute-type",
                PoolReq {
                    op: "In",
                    values: OneOrMany::One("auto"),
                    loc: pool.loc(pool.node_class_ref.unwrap_or(pool.anchor)),
                },
            );
        }
        by_key.shrink_to_fit();
        PoolReqs { by_key }
    }
}

/// Deprecated beta keys Karpenter normalizes to their stable equivalents.
pub fn normalize_key(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        k => k,
    }
}
