use super::Ctx;
use crate::catalog::{self, Instance};
use crate::diag::Diagnostic;
use crate::model::{Expr, NodePool};
use crate::sched::{expr_holds, is_placeholder};

/// The most GPUs any EC2 instance type has: 8 (p3.16xlarge through p6-b200.48xlarge, g4dn.metal,
/// g5/g6/g6e.48xlarge in the catalog; no type outside it has more).
const MAX_GPUS_ANY_INSTANCE: i64 = 8;

const GPU_COUNT: &str = "karpenter.k8s.aws/instance-gpu-count";

/// GPU names the catalog holds that families outside it also report (the fractional-L4 `g6f` and
/// `gr6f`): naming them does not confine a pool to catalog rows.
const SHARED_GPU_NAMES: [&str; 1] = ["l4"];

declare_rule! {
    /// ## What it does
    /// Flags a NodePool whose requirements no instance type satisfies:
    /// - requirements that confine the pool to instance families, types or GPU models the
    ///   embedded catalog holds in full (`instance-family In [p5]`, `instance-type In
    ///   [g5.xlarge]`, `instance-gpu-name In [a100]`), combined with a requirement on another
    ///   instance label (category, generation, size, GPU count, name or manufacturer, vCPUs,
    ///   architecture) that none of those types has: `instance-category In [inf]` with
    ///   `instance-family In [p5]`, `instance-gpu-name In [a100]` with `instance-family In [g5]`;
    /// - `instance-gpu-count` asking for more than 8 GPUs (`Gt 8`), which no EC2 instance type has.
    ///
    /// A pool that does not pin GPU families, types or GPU models is not judged: the catalog
    /// holds only GPU instance types, so saying nothing about the CPU types (or the accelerator
    /// families it lacks: Inf/Trn, g5g, g6f, g7…) is not evidence that they do not exist. GPU
    /// memory and instance memory are not judged either: their reported values have changed
    /// between releases.
    ///
    /// ## Why is this bad?
    /// Karpenter intersects a NodePool's requirements with the instance types it can buy; an
    /// empty intersection makes the pool useless. Every pod that can only land there stays
    /// `Pending`, and Karpenter only says so in its logs ("no instance type satisfied the
    /// requirements"), often after a well-meant edit (a new family added to one requirement and
    /// not another).
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// spec:
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: karpenter.k8s.aws/instance-family
    ///           operator: In
    ///           values: [g5]
    ///         - key: karpenter.k8s.aws/instance-gpu-name
    ///           operator: In
    ///           values: [a100]     # g5 has A10G GPUs; A100s are on p4d/p4de
    /// ```
    ///
    /// ## Fix
    /// Make the requirements agree: pick the family that has the GPU (`p4d` for `a100`), or drop
    /// the requirement that excludes it. `gpuops why` on a pod meant for the pool shows the
    /// instance types each requirement leaves.
    name: "nodepool-requirements-unsatisfiable",
    category: "scheduling",
    kinds: &["NodePool"],
    severity: Error,
    summary: "a NodePool whose requirements no instance type satisfies",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in &cx.ix.nodepools {
        let reqs: Vec<&Expr> = pool
            .requirements
            .iter()
            .filter(|r| !r.values.iter().any(|v| is_placeholder(v)))
            .collect();
        if let Some(r) = too_many_gpus(&reqs) {
            out.push(gpu_count_finding(cx, pool, r));
            continue;
        }
        if let Some(d) = catalog_conflict(cx, pool, &reqs) {
            out.push(d);
        }
    }
}

/// A GPU-count requirement whose lower bound is above what any instance type has.
fn too_many_gpus<'r, 'a>(reqs: &[&'r Expr<'a>]) -> Option<&'r Expr<'a>> {
    reqs.iter().copied().find(|r| {
        if catalog::karpenter_key(r.key) != GPU_COUNT {
            return false;
        }
        let nums: Option<Vec<i64>> = r.values.iter().map(|v| v.trim().parse().ok()).collect();
        let Some(nums) = nums.filter(|n| !n.is_empty()) else {
            return false;
        };
        let least = match r.op {
            "In" => nums.iter().copied().min(),
            "Gt" => nums.first().map(|b| b + 1),
            "Gte" => nums.first().copied(),
            _ => None,
        };
        least.is_some_and(|l| l > MAX_GPUS_ANY_INSTANCE)
    })
}

fn gpu_count_finding(cx: &Ctx, pool: &NodePool, r: &Expr) -> Diagnostic {
    let obj = &cx.ix.objects[pool.obj];
    cx.on(
        obj,
        r.node,
        format!(
            "NodePool `{}` requires `{} {} [{}]`, but no EC2 instance type has more than {MAX_GPUS_ANY_INSTANCE} GPUs: Karpenter can launch no node for it and pods that need it stay Pending",
            pool.name,
            r.key,
            r.op,
            r.values.join(", ")
        ),
    )
    .help(format!(
        "allow at most {MAX_GPUS_ANY_INSTANCE} GPUs per node (e.g. `operator: Gt, values: [\"0\"]`) and spread larger jobs over several nodes"
    ))
}

/// Whether a requirement confines the pool to catalog rows: families, types or GPU models the
/// catalog holds every size of.
fn pins_catalog(r: &Expr) -> bool {
    r.op == "In"
        && !r.values.is_empty()
        && match catalog::karpenter_key(r.key) {
            "node.kubernetes.io/instance-type" => r
                .values
                .iter()
                .all(|v| catalog::instances().iter().any(|i| i.instance_type == *v)),
            "karpenter.k8s.aws/instance-family" => r
                .values
                .iter()
                .all(|v| catalog::instances().iter().any(|i| i.family == *v)),
            "karpenter.k8s.aws/instance-gpu-name" => r
                .values
                .iter()
                .all(|v| catalog::gpu_names().contains(v) && !SHARED_GPU_NAMES.contains(v)),
            _ => false,
        }
}

fn holds(r: &Expr, i: &Instance) -> bool {
    i.label(r.key)
        .is_none_or(|v| expr_holds(r.op, &r.values, &v))
}

/// The requirement that leaves no catalog instance type once the pool is confined to catalog
/// rows, with the one that confines it.
fn catalog_conflict(cx: &Ctx, pool: &NodePool, reqs: &[&Expr]) -> Option<Diagnostic> {
    let pin = reqs.iter().copied().find(|r| pins_catalog(r))?;
    let pinned: Vec<&Instance> = catalog::instances()
        .iter()
        .filter(|i| holds(pin, i))
        .collect();
    let others: Vec<&Expr> = reqs
        .iter()
        .copied()
        .filter(|r| !std::ptr::eq(*r, pin) && crate::sched::is_stable_instance_label(r.key))
        .collect();
    // First a single requirement that excludes every pinned type; else the one at which the
    // requirements, taken in order, leave none (with those that narrowed the set before it).
    let (culprit, before, narrowing) = match others
        .iter()
        .copied()
        .find(|r| pinned.iter().all(|i| !holds(r, i)))
    {
        Some(r) => (r, pinned.clone(), Vec::new()),
        None => {
            let mut left = pinned.clone();
            let mut narrowing: Vec<&Expr> = Vec::new();
            let mut found = None;
            for r in &others {
                let next: Vec<&Instance> = left.iter().copied().filter(|i| holds(r, i)).collect();
                if next.is_empty() {
                    found = Some(*r);
                    break;
                }
                if next.len() < left.len() {
                    narrowing.push(*r);
                }
                left = next;
            }
            (found?, left, narrowing)
        }
    };
    let obj = &cx.ix.objects[pool.obj];
    let mut families: Vec<&str> = pinned.iter().map(|i| i.family).collect();
    families.dedup();
    let families = families.join(", ");
    let pin_shown = format!("`{}`", describe(pin));
    let mut values: Vec<String> = before.iter().filter_map(|i| i.label(culprit.key)).collect();
    values.sort_unstable();
    values.dedup();
    let has = if values.len() > 6 {
        format!(
            "{} and {} more",
            crate::diag::backticked(&values[..6], ", "),
            values.len() - 6
        )
    } else {
        crate::diag::backticked(&values, ", ")
    };
    let reason = if narrowing.is_empty() {
        format!(
            "`{}` excludes every instance type {pin_shown} allows (on {families} `{}` is {has})",
            describe(culprit),
            culprit.key
        )
    } else {
        let others: Vec<String> = narrowing
            .iter()
            .map(|r| format!("`{}`", describe(r)))
            .collect();
        let left: Vec<&str> = before.iter().map(|i| i.instance_type).collect();
        format!(
            "{pin_shown} and {} leave {}, and `{}` excludes {} (its `{}` is {has})",
            others.join(" and "),
            left.join(", "),
            describe(culprit),
            if left.len() == 1 { "it" } else { "them" },
            culprit.key
        )
    };
    let mut d = cx
        .on(
            obj,
            culprit.node,
            format!(
                "NodePool `{}` can launch no instance type: {reason}; Karpenter launches no node for it and pods that need it stay Pending",
                pool.name
            ),
        )
        .related(
            pool.loc(pin.node),
            format!("NodePool `{}` is limited to {families} here", pool.name),
        )
        .help(format!(
            "make the requirements agree: let `{}` allow {has}, or allow instance types that have `{}`",
            culprit.key,
            describe(culprit)
        ));
    for r in narrowing {
        d = d.related(
            pool.loc(r.node),
            format!("NodePool `{}` narrows its instance types here", pool.name),
        );
    }
    Some(d)
}

fn describe(r: &Expr) -> String {
    match r.op {
        "In" if r.values.len() == 1 => format!("{}={}", r.key, r.values[0]),
        "Exists" | "DoesNotExist" => format!("{} {}", r.key, r.op),
        _ => format!("{} {} [{}]", r.key, r.op, r.values.join(", ")),
    }
}
