use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::Flavor;
use crate::sched::{self, LabelIssue, PodConstraints};

declare_rule! {
    /// ## What it does
    /// Flags a Kueue ResourceFlavor whose `nodeLabels` no single NodePool in the repository can put
    /// on one node. A NodePool provides a label through a template label with that value, or a
    /// requirement on that key admitting the value (`In [spot, on-demand]` admits `spot`); labels
    /// Karpenter derives from the instance type count too (`karpenter.k8s.aws/instance-gpu-name: a100`
    /// is fine for a pool that allows A100 instances or does not constrain the GPU, but not for one
    /// limited to H100s or to CPU instances). A flavor without `nodeLabels` (homogeneous capacity)
    /// is fine, and the rule is silent when the repository has no NodePools, and for a flavor that
    /// every ClusterQueue offering it gates with a MultiKueue or ProvisioningRequest AdmissionCheck
    /// (a worker cluster, or the cluster autoscaler's node groups, provide its nodes). Several
    /// labels that the closest pool lacks make one finding, on the first, with the others marked.
    ///
    /// ## Why is this bad?
    /// Kueue adds the flavor's `nodeLabels` to the nodeSelector of every workload it admits to that
    /// flavor. If no NodePool can launch a node with all of them, Karpenter never provisions for
    /// those pods: the workload is admitted, its quota is charged, and its pods stay `Pending` —
    /// GPU quota is blocked while nothing runs.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu` labels its nodes `role: gpu` and allows only on-demand capacity
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ResourceFlavor
    /// metadata:
    ///   name: gpu-spot
    /// spec:
    ///   nodeLabels:
    ///     node-role: gpu                     # no NodePool sets `node-role`
    ///     karpenter.sh/capacity-type: spot   # and the pool never launches spot
    /// ```
    ///
    /// ## Fix
    /// Use labels a NodePool really sets — its `spec.template.metadata.labels`, a value its
    /// requirements admit, or `karpenter.sh/nodepool: <pool>` — or add the label / value to the
    /// NodePool the flavor stands for.
    name: "flavor-matches-no-nodepool",
    category: "kueue",
    kinds: &["ResourceFlavor"],
    severity: Error,
    summary: "a ResourceFlavor's nodeLabels match no NodePool",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if ix.nodepools.is_empty() {
        return;
    }
    for (fi, f) in ix.flavors.iter().enumerate() {
        let Some(fobj) = ix.objects.get(f.obj) else {
            continue;
        };
        // Every queue that offers it gets its nodes elsewhere (MultiKueue, a ProvisioningRequest).
        if ix.flavor_elsewhere(fi).is_some() {
            continue;
        }
        let pod = PodConstraints::from_flavor(f, fobj);
        if pod.base.is_empty() {
            continue;
        }
        let best = ix.pools.closest(&pod, &ix.nodepools, |_| true, false);
        let Some((p, issues)) = best else { continue };
        // One finding per flavor: its first label that no pool provides, the others marked.
        let Some((first, rest)) = issues.split_first() else {
            continue;
        };
        let mut d = finding(cx, f, &pod, p, first);
        for issue in rest {
            let value = label_value(&pod, issue);
            d = d.related(
                issue.pod,
                format!(
                    "also `{}={value}`: {}",
                    issue.key,
                    issue.reason.replacen(
                        "the pool",
                        &format!("NodePool `{}`", ix.nodepools[p].name),
                        1
                    )
                ),
            );
        }
        out.push(d);
    }
}

/// The value of the flavor label an issue is about.
fn label_value<'p>(pod: &PodConstraints<'p>, issue: &LabelIssue) -> &'p str {
    pod.base
        .iter()
        .find(|r| r.loc == issue.pod)
        .and_then(|r| r.values.first().copied())
        .unwrap_or("")
}

fn finding<'a>(
    cx: &Ctx<'_, 'a>,
    f: &Flavor,
    pod: &PodConstraints,
    p: usize,
    issue: &LabelIssue,
) -> Diagnostic {
    let ix = cx.ix;
    let fobj = &ix.objects[f.obj];
    let pool = &ix.nodepools[p];
    let several = ix.nodepools.len() > 1;
    let name = if several {
        format!("NodePool `{}` (the closest)", pool.name)
    } else {
        format!("NodePool `{}`", pool.name)
    };
    let reason = issue
        .reason
        .replacen("the pool's nodes", &format!("the nodes of {name}"), 1)
        .replacen("the pool's", &format!("{name}'s"), 1)
        .replacen("the pool", &name, 1);
    let value = label_value(pod, issue);
    let shown = format!("`{}={value}`", issue.key);
    let mut reason = reason;
    let mut related_loc = issue.pool.unwrap_or_else(|| pool.loc(pool.anchor));
    let mut related_msg = if issue.pool.is_some() && issue.key != "karpenter.sh/nodepool" {
        format!("NodePool `{}` constrains `{}` here", pool.name, issue.key)
    } else {
        format!("closest NodePool `{}`", pool.name)
    };
    let help = if issue.key == "karpenter.sh/nodepool" {
        let (all, near_names) = ix.near_pools();
        let near = near_names.closest(value);
        let named = ix.nodepool(value).map(|p| &ix.nodepools[p]);
        match named {
            Some(np) => {
                reason = format!("NodePool `{value}` cannot provide the flavor's other labels");
                related_loc = np.loc(np.anchor);
                related_msg = format!("NodePool `{value}`");
            }
            None => reason = format!("there is no NodePool `{value}`"),
        }
        match near {
            Some((_, n, _)) if named.is_none() => {
                format!("did you mean `karpenter.sh/nodepool: {n}`?")
            }
            _ if named.is_some() => format!(
                "make the flavor's other labels match NodePool `{value}`, or point the flavor at a NodePool that has them"
            ),
            _ => format!(
                "name an existing NodePool: {}",
                crate::diag::backticked_few(all, ", ")
            ),
        }
    } else if issue.reason.starts_with("none of the instance types")
        || issue.reason.contains("rule out GPU instances")
    {
        related_msg = format!("NodePool `{}` limits its instance types here", pool.name);
        format!(
            "allow instance types with {shown} in a NodePool (its requirements), or change the flavor to an instance label a NodePool may launch"
        )
    } else {
        match sched::label_hint(pool, &issue.key, Some(value), &shown) {
            Some(hint) => hint,
            None => format!(
                "use a label NodePool `{}` sets (e.g. `karpenter.sh/nodepool: {}`), or add {shown} to its `spec.template.metadata.labels` or allow the value in its requirements",
                pool.name, pool.name
            ),
        }
    };
    cx.at(
        issue.pod,
        format!(
            "ResourceFlavor `{}` adds {shown} to the nodeSelector of every workload it admits, but no NodePool can launch a node with its labels: {reason}; admitted workloads hold their quota while their pods stay Pending",
            f.name
        ),
    )
    .object(Some(fobj.obj_ref()))
    .related(related_loc, related_msg)
    .help(help)
}

#[cfg(test)]
mod tests {
    use crate::config::Settings;
    use crate::source::SourceFile;

    #[test]
    fn silent_without_nodepools() {
        let text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nspec:\n  nodeLabels: {node-role: gpu}\n";
        let files = vec![SourceFile::from_text("t.yaml".into(), text.into())];
        let settings = Settings {
            only: Some(vec![super::RULE.name.to_string()]),
            ..Settings::default()
        };
        assert!(crate::lint(&files, &settings).diagnostics.is_empty());
    }
}
