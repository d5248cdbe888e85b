use super::Ctx;
use crate::catalog::Instance;
use crate::diag::{Diagnostic, Loc};
use crate::index::Index;
use crate::model::{NodePool, PodTemplate};
use crate::sched::{bounding_requirement, instances_for};
use crate::yaml::Node;

/// Device resources the catalog counts per instance type, beyond `nvidia.com/gpu` (whose count
/// per pod is part of label placement: `nodeselector-matches-no-nodepool` reports it).
const DEVICES: [&str; 4] = [
    "vpc.amazonaws.com/efa",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neurondevice",
    "aws.amazon.com/neuroncore",
];

declare_rule! {
    /// ## What it does
    /// Flags a GPU pod template that asks, per pod, for more EFA interfaces
    /// (`vpc.amazonaws.com/efa`) or Neuron devices or cores (`aws.amazon.com/neuron`,
    /// `aws.amazon.com/neurondevice`, `aws.amazon.com/neuroncore`) than any instance type the
    /// NodePools it lands on may launch has (per the embedded catalog: p5.48xlarge has 32 EFA
    /// interfaces, p4d.24xlarge 4, a g5.xlarge none; no NVIDIA instance has a Neuron device). The
    /// instance types are those each pool may launch, narrowed by the pod's own selector and its
    /// GPUs per pod. It stays silent when one of those pools leaves its instance types open (no
    /// family, type or GPU-name list), names types the catalog does not hold (Inf1/Inf2/Trn1/Trn2),
    /// or uses an EC2NodeClass with `networkInterfaces` (which sets the EFA count itself). More
    /// `nvidia.com/gpu` per pod than the largest instance has is reported by
    /// `nodeselector-matches-no-nodepool`, since it rules the pool out like a label does.
    ///
    /// ## Why is this bad?
    /// Karpenter only launches an instance type whose capacity covers every resource the pod
    /// requests. When none does, it launches nothing: the pods stay `Pending` with "no instance
    /// type satisfied resources", the job never starts, and nothing else fails.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu-training`: instance-family In [p4d]  (4 EFA interfaces per node)
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: train
    ///           resources:
    ///             limits:
    ///               nvidia.com/gpu: 8
    ///               vpc.amazonaws.com/efa: 32    # p5.48xlarge's count, not p4d's
    /// ```
    ///
    /// ## Fix
    /// Ask for at most what the instance has (`vpc.amazonaws.com/efa: 4` on p4d.24xlarge), or let
    /// the NodePool launch an instance type that has enough.
    name: "gpu-count-exceeds-instance",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Error,
    summary: "a pod asks for more EFA interfaces or Neuron devices than any instance its NodePools may launch has",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let asked: Vec<(&str, u64, Node<'_>)> = DEVICES
            .iter()
            .filter_map(|&r| demand(t, r).map(|(n, at)| (r, n, at)))
            .filter(|(_, n, _)| *n > 0)
            .collect();
        if asked.is_empty() {
            continue;
        }
        let pools = ix.landing_pools(ti);
        if pools.is_empty() {
            continue;
        }
        let pod = t.constraints();
        // Per pool: the instance types the pod may get there; any open pool ends the judgement.
        let mut sets: Vec<(usize, Vec<&'static Instance>)> = Vec::new();
        let mut open = false;
        for &p in &pools {
            match instances_for(pod, &ix.nodepools[p]) {
                Some(is) => sets.push((p, is)),
                None => {
                    open = true;
                    break;
                }
            }
        }
        // An empty set is another rule's finding (no instance fits the pool at all).
        sets.retain(|(_, is)| !is.is_empty());
        if open || sets.is_empty() {
            continue;
        }
        for (resource, n, at) in asked {
            if resource == "vpc.amazonaws.com/efa"
                && sets
                    .iter()
                    .any(|(p, _)| sets_own_interfaces(ix, &ix.nodepools[*p]))
            {
                continue;
            }
            let best = sets
                .iter()
                .flat_map(|(p, is)| is.iter().map(move |i| (*p, *i)))
                .map(|(p, i)| (i.device_capacity(resource).unwrap_or(0), p, i))
                .max_by_key(|(c, _, i)| (*c, std::cmp::Reverse(i.instance_type)));
            let Some((most, p, inst)) = best else {
                continue;
            };
            if most >= n {
                continue;
            }
            out.push(finding(cx, t, (resource, n, at), (most, p, inst), &sets));
        }
    }
}

/// What one pod asks for of a resource (app containers summed, the largest init container if
/// more), and the value node of the container asking most.
fn demand<'a>(t: &PodTemplate<'a>, resource: &str) -> Option<(u64, Node<'a>)> {
    let mut app = 0u64;
    let mut init = 0u64;
    let mut at: Option<(u64, Node<'a>)> = None;
    for c in &t.containers {
        let Some(v) = c
            .limits
            .and_then(|l| l.get(resource))
            .or_else(|| c.requests.and_then(|r| r.get(resource)))
        else {
            continue;
        };
        let n = v
            .as_str()
            .and_then(crate::quantity::whole)
            .filter(|q| *q > 0)
            .map_or(0, |q| q as u64);
        if c.init {
            init = init.max(n);
        } else {
            app += n;
        }
        if at.is_none_or(|(m, _)| n > m) {
            at = Some((n, v));
        }
    }
    at.map(|(_, node)| (app.max(init), node))
}

/// Whether the pool's EC2NodeClass lists its own network interfaces: the EFA count is then the
/// number of `efa-only` entries there, not the instance's maximum.
fn sets_own_interfaces(ix: &Index, pool: &NodePool) -> bool {
    let Some(name) = pool
        .node_class_ref
        .and_then(|r| r.get("name"))
        .and_then(Node::as_str)
    else {
        return false;
    };
    ix.named("EC2NodeClass", name)
        .iter()
        .any(|o| o.spec().and_then(|s| s.get("networkInterfaces")).is_some())
}

fn finding(
    cx: &Ctx,
    t: &PodTemplate,
    (resource, n, at): (&str, u64, Node<'_>),
    (most, p, inst): (u64, usize, &Instance),
    sets: &[(usize, Vec<&'static Instance>)],
) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let pool = &ix.nodepools[p];
    // In catalog order (family, then size), each type once.
    let types: Vec<&str> = crate::catalog::instances()
        .iter()
        .filter(|c| {
            sets.iter()
                .any(|(_, is)| is.iter().any(|i| i.instance_type == c.instance_type))
        })
        .map(|c| c.instance_type)
        .collect();
    let shown = if types.len() > 4 {
        format!("{} and {} more", types[..4].join(", "), types.len() - 4)
    } else {
        types.join(", ")
    };
    let names: Vec<String> = sets
        .iter()
        .map(|(q, _)| format!("`{}`", ix.nodepools[*q].name))
        .collect();
    let pools = if names.len() == 1 {
        format!("NodePool {}", names[0])
    } else {
        format!("NodePools {}", names.join(", "))
    };
    let offer = if most == 0 {
        format!("none of the instance types {pools} may launch for it ({shown}) has any")
    } else if sets.len() == 1 {
        format!(
            "no instance type {pools} may launch for it has more than {most} ({})",
            inst.instance_type
        )
    } else {
        format!(
            "no instance type {pools} may launch for it has more than {most} ({} of NodePool `{}`)",
            inst.instance_type, pool.name
        )
    };
    let mut d = cx
        .on(
            owner,
            at,
            format!(
                "{} asks for {n} `{resource}` per pod, but {offer}: Karpenter launches no node for it and its pods stay Pending",
                super::describe_template(owner, t),
            ),
        )
        .help(if most == 0 {
            format!(
                "drop `{resource}` from the pod, or let its NodePools launch an instance type that has it"
            )
        } else {
            format!(
                "ask for at most {most} `{resource}` (what {} has), or let its NodePools launch an instance type with {n}",
                inst.instance_type
            )
        });
    for (q, _) in sets.iter().take(3) {
        let np = &ix.nodepools[*q];
        d = d.related(
            Loc {
                file: np.file,
                span: bounding_requirement(np).span(),
            },
            format!("NodePool `{}` limits its instance types here", np.name),
        );
    }
    d
}
