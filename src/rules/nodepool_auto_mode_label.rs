use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags a requirement of a NodePool whose nodes come from an `EC2NodeClass` (Karpenter's
    /// own AWS provider) on an instance label of EKS Auto Mode (`eks.amazonaws.com/instance-family`,
    /// `instance-category`, `instance-generation`, `instance-size`, `instance-cpu`,
    /// `instance-gpu-count`, `instance-gpu-name`, `instance-gpu-manufacturer`). Pools of Auto
    /// Mode's `NodeClass` (`eks.amazonaws.com`), where these labels are the instance's, are not
    /// flagged.
    ///
    /// ## Why is this bad?
    /// Only EKS Auto Mode derives `eks.amazonaws.com/instance-*` from the instance type. To a
    /// self-managed Karpenter it is a custom label: the requirement does not narrow the instance
    /// types, so a pool meant for one GPU family may launch any type the other requirements
    /// allow (another GPU generation, a far larger instance, or a CPU type for pods that fit
    /// one), and pods that select the label find no node that has it.
    ///
    /// ## Example
    /// ```yaml
    /// spec:
    ///   template:
    ///     spec:
    ///       nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
    ///       requirements:
    ///         - key: eks.amazonaws.com/instance-family   # Auto Mode's label
    ///           operator: In
    ///           values: [g6e]
    /// ```
    ///
    /// ## Fix
    /// Use the label Karpenter's AWS provider derives from the instance type:
    /// `karpenter.k8s.aws/instance-family` (and likewise for the other `instance-*` labels).
    name: "nodepool-auto-mode-label",
    category: "scheduling",
    kinds: &["NodePool"],
    severity: Warning,
    summary: "an EKS Auto Mode instance label required by a self-managed Karpenter NodePool",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in cx.ix.nodepools.iter().filter(|p| p.is_ec2_node_class()) {
        let obj = &cx.ix.objects[pool.obj];
        for r in &pool.requirements {
            let karpenter = crate::catalog::karpenter_key(r.key);
            if karpenter == r.key {
                continue;
            }
            let mut d = cx
                .on(
                    obj,
                    r.node.get("key").unwrap_or(r.node),
                    format!(
                        "`{}` is an EKS Auto Mode label: NodePool `{}` launches through an EC2NodeClass, and self-managed Karpenter does not set that label from the instance type, so this requirement does not limit which instance types the pool launches",
                        r.key, pool.name
                    ),
                )
                .help(format!(
                    "require `{karpenter}`, the label Karpenter's AWS provider derives from the instance type"
                ));
            if let Some(class) = pool.node_class_ref {
                let at = class.get("group").unwrap_or(class);
                d = d.related(pool.loc(at), "the EC2NodeClass of self-managed Karpenter");
            }
            out.push(d);
        }
    }
}
