use super::{Ctx, usable};
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags a pod template's `priorityClassName` that names no PriorityClass
    /// (`scheduling.k8s.io`), and a `kueue.x-k8s.io/priority-class` label on an object that names
    /// no WorkloadPriorityClass (`kueue.x-k8s.io`), when the class is neither in the linted files
    /// nor declared external in `.gpuops.yaml`. The built-in `system-node-critical` and
    /// `system-cluster-critical` classes (and any reserved `system-` name) are never flagged.
    ///
    /// ## Why is this bad?
    /// The Priority admission plugin rejects every pod that names a PriorityClass that does not
    /// exist, so the Job or Deployment never gets a single pod; the error shows only in the
    /// controller's events. Kueue resolves both kinds of class when it creates a Workload: with a
    /// missing class it cannot create one, and the Job stays suspended and never starts.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata:
    ///   name: finetune
    ///   labels:
    ///     kueue.x-k8s.io/priority-class: prod-hihg   # WorkloadPriorityClass `prod-high`
    /// spec:
    ///   template:
    ///     spec:
    ///       priorityClassName: gpu-training           # no such PriorityClass
    /// ```
    ///
    /// ## Fix
    /// Name an existing class, or add it. If it is created outside the repo (a platform chart,
    /// Terraform), declare it:
    /// ```yaml
    /// # .gpuops.yaml
    /// external:
    ///   PriorityClass: [gpu-training]
    ///   WorkloadPriorityClass: [prod-high]
    /// ```
    name: "priorityclass-not-found",
    category: "references",
    kinds: &["workloads"],
    severity: Error,
    summary: "a priorityClassName or kueue.x-k8s.io/priority-class names a class that does not exist",
    check: check,
    chunked: true,
}

pub(crate) const WPC_LABEL: &str = "kueue.x-k8s.io/priority-class";

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, t) in cx.templates() {
        let Some(node) = t.priority_class() else {
            continue;
        };
        let Some(name) = usable(node) else { continue };
        // Built-in classes (`system-node-critical`, `system-cluster-critical`); the prefix is
        // reserved, so any other `system-` name is the API server's business, not a lookup.
        if name.starts_with("system-") {
            continue;
        }
        if cx.ix.exists("PriorityClass", None, name) {
            continue;
        }
        let owner = cx.ix.owner(t);
        let d = cx.on(
            owner,
            node,
            format!(
                "`{}` of {} uses priorityClassName `{name}`, but no PriorityClass of that name exists: the API server rejects every pod that names a missing class, so the workload never gets a pod",
                t.path,
                owner.describe()
            ),
        );
        out.extend(suggest(cx, d, "PriorityClass", "scheduling.k8s.io", name));
    }
    for (_, o) in cx.objects() {
        // Kueue reads the label on the workloads it admits.
        if o.workload.is_none() {
            continue;
        }
        let Some((_, node)) = o.label(WPC_LABEL) else {
            continue;
        };
        let Some(name) = usable(node) else { continue };
        if cx.ix.exists("WorkloadPriorityClass", None, name) {
            continue;
        }
        let d = cx.on(
            o,
            node,
            format!(
                "{} is labelled with WorkloadPriorityClass `{name}`, which does not exist: Kueue cannot create its Workload, so the workload stays suspended and never starts",
                o.describe()
            ),
        );
        out.extend(suggest(
            cx,
            d,
            "WorkloadPriorityClass",
            "kueue.x-k8s.io",
            name,
        ));
    }
}

/// Adds the closest existing class (as help and a related place), or how to declare it.
fn suggest(
    cx: &Ctx,
    mut d: Diagnostic,
    kind: &'static str,
    group: &str,
    name: &str,
) -> Option<Diagnostic> {
    let external = format!(
        "if it is created outside this repo, declare it in .gpuops.yaml: `external: {{{kind}: [{name}]}}`"
    );
    // The name exists as the other kind of class: the two are separate objects.
    let (other_kind, other_group, hint) = if kind == "PriorityClass" {
        (
            "WorkloadPriorityClass",
            "kueue.x-k8s.io",
            "`priorityClassName` needs a PriorityClass (a WorkloadPriorityClass is named by the `kueue.x-k8s.io/priority-class` label)",
        )
    } else {
        (
            "PriorityClass",
            "scheduling.k8s.io",
            "the `kueue.x-k8s.io/priority-class` label needs a WorkloadPriorityClass (a PriorityClass is named by the pod template's `priorityClassName`)",
        )
    };
    if let Some(o) = cx
        .ix
        .named(other_kind, name)
        .into_iter()
        .find(|o| o.group == other_group)
    {
        d = d.related(
            o.loc(o.anchor()),
            format!("this is a {other_kind}, not a {kind}"),
        );
        return Some(d.help(format!(
            "`{name}` is a {other_kind}, not a {kind}: {hint}; create a {kind} `{name}` or move the name to the matching field"
        )));
    }
    let near = cx.ix.near_objects(kind, Some(group));
    let best = near
        .closest(name)
        .map(|(d, n, &i)| (d, n, &cx.ix.objects[i]));
    let help = match best {
        Some((_, n, o)) => {
            d = d.related(o.loc(o.anchor()), format!("the closest {kind}"));
            format!("did you mean `{n}`? Otherwise, {external}")
        }
        None => {
            return cx.unresolved(
                d.help(format!(
                    "name an existing {kind} or add one named `{name}`; {external}"
                )),
                kind,
            );
        }
    };
    Some(d.help(help))
}
