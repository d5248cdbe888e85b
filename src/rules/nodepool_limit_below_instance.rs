use super::Ctx;
use crate::catalog::Instance;
use crate::catalog::pricing::per_node;
use crate::diag::Diagnostic;
use crate::index::show_quantity;
use crate::sched::{bounded_instances, bounding_requirement};

declare_rule! {
    /// ## What it does
    /// Flags a NodePool whose `limits` are below what one node of every instance type it allows
    /// brings: `limits: {cpu: 100}` on a pool limited to `p5.48xlarge` (192 vCPUs), or
    /// `nvidia.com/gpu: 4` on one limited to 8-GPU instances. Only pools whose requirements
    /// limit them to instance types the catalog knows (types, families or GPU names) are judged;
    /// a limit of zero (a pool paused on purpose) and static pools (`replicas`) are left alone.
    /// Memory is judged with a tenth of margin, as Karpenter counts a node's memory after the
    /// hypervisor's share.
    ///
    /// ## Why is this bad?
    /// Karpenter leaves out every instance type whose node would take the pool past its limits,
    /// counting the nodes it already has. When that is every type the pool allows, it never
    /// launches a node: every pod that only this pool can hold stays Pending, and Karpenter
    /// reports no instance type fits.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: h100
    /// spec:
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: node.kubernetes.io/instance-type
    ///           operator: In
    ///           values: [p5.48xlarge]
    ///   limits:
    ///     cpu: 100   # one p5.48xlarge has 192 vCPUs
    /// ```
    ///
    /// ## Fix
    /// Raise the limit to at least one node's worth (a multiple of it for more nodes), or allow
    /// smaller instance types.
    name: "nodepool-limit-below-instance",
    category: "scheduling",
    kinds: &["NodePool"],
    severity: Error,
    summary: "a NodePool whose limits are below one node of every instance type it allows",
    check: check,
}

/// The limit (name, milli-units) that keeps one node of `i` out, and that node's amount of it.
fn blocking<'l>(limits: &'l [(String, i128)], i: &Instance) -> Option<(&'l str, i128, i128)> {
    limits.iter().find_map(|(k, lim)| {
        let need = per_node(k, i).filter(|n| *n > 0)?;
        // Karpenter counts memory after the hypervisor's share (about 7.5 %).
        let counted = if k == "memory" { need / 10 * 9 } else { need };
        (*lim > 0 && *lim < counted).then_some((k.as_str(), *lim, need))
    })
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in &cx.ix.nodepools {
        if pool.defined_by.is_some()
            || (!pool.legacy_provisioner && pool.spec.get("replicas").is_some())
        {
            continue;
        }
        let Some(limits) = pool.limits_milli() else {
            continue;
        };
        let Some(instances) = bounded_instances(pool).filter(|i| !i.is_empty()) else {
            continue;
        };
        let mut blocked = Vec::with_capacity(instances.len());
        for i in &instances {
            match blocking(&limits, i) {
                Some(b) => blocked.push((b, *i)),
                None => break,
            }
        }
        if blocked.len() < instances.len() {
            continue;
        }
        // The instance type that comes closest to fitting: the least of the limit it lacks.
        let Some(&((key, lim, need), smallest)) = blocked
            .iter()
            .min_by_key(|((_, lim, need), i)| (need - lim, i.instance_type))
        else {
            continue;
        };
        let Some(node) = pool.limits.and_then(|l| l.get(key)) else {
            continue;
        };
        let owner = &cx.ix.objects[pool.obj];
        let unit = match key {
            "cpu" => " vCPUs",
            "memory" => " of memory",
            k if crate::model::is_gpu_resource(k) => " GPUs",
            _ => "",
        };
        let amount = if key == "memory" {
            format!("{} GiB", need / 1000 / (1 << 30))
        } else {
            show_quantity(need)
        };
        let others = if instances.len() > 1 {
            format!(
                ", the closest to fitting of the {} instance types it allows",
                instances.len()
            )
        } else {
            String::new()
        };
        out.push(
            cx.on(
                owner,
                node,
                format!(
                    "NodePool `{}` can never launch a node: its limit `{key}: {}` is below one {} ({amount}{unit}{others}), and Karpenter launches no instance type that would take the pool past its limits, so pods only this pool can hold stay Pending",
                    pool.name,
                    node.as_str().map_or_else(|| show_quantity(lim), str::to_string),
                    smallest.instance_type,
                ),
            )
            .related(
                owner.loc(bounding_requirement(pool)),
                "the instance types the pool allows",
            )
            .help(format!(
                "raise `limits.{key}` to at least {amount} (a multiple of it for more nodes), or allow smaller instance types"
            )),
        );
    }
}
