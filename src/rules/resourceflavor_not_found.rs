use super::{Ctx, usable};
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags a flavor in a Kueue ClusterQueue's (or Cohort's) `spec.resourceGroups[].flavors[]`
    /// whose `name` matches no ResourceFlavor in the linted files and none declared external in
    /// `.gpuops.yaml`.
    ///
    /// ## Why is this bad?
    /// Kueue marks a ClusterQueue that names a missing ResourceFlavor inactive (reason
    /// `FlavorNotFound`): it admits nothing at all, not even the workloads that would fit its other
    /// flavors, so every Job in its LocalQueues stays suspended. Quota a Cohort declares under a
    /// missing flavor can never be used by the cohort's ClusterQueues.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ClusterQueue
    /// metadata:
    ///   name: gpu-queue
    /// spec:
    ///   resourceGroups:
    ///     - coveredResources: [nvidia.com/gpu]
    ///       flavors:
    ///         - name: a100-spto   # the ResourceFlavor is called `a100-spot`
    ///           resources:
    ///             - name: nvidia.com/gpu
    ///               nominalQuota: 8
    /// ```
    ///
    /// ## Fix
    /// Name an existing ResourceFlavor, or add it. If it is created outside the repo, declare it:
    /// ```yaml
    /// # .gpuops.yaml
    /// external:
    ///   ResourceFlavor: [a100-spot]
    /// ```
    name: "resourceflavor-not-found",
    category: "references",
    kinds: &["ClusterQueue", "Cohort"],
    severity: Error,
    summary: "a ClusterQueue or Cohort names a ResourceFlavor that does not exist",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, o) in cx.objects() {
        if o.group != "kueue.x-k8s.io" || !matches!(o.kind, "ClusterQueue" | "Cohort") {
            continue;
        }
        let groups = o.spec().and_then(|s| s.get("resourceGroups"));
        for g in groups.into_iter().flat_map(|n| n.items()) {
            for f in g.get("flavors").into_iter().flat_map(|n| n.items()) {
                let Some(node) = f.get("name") else { continue };
                let Some(name) = usable(node) else { continue };
                if cx.ix.exists("ResourceFlavor", None, name) {
                    continue;
                }
                let effect = if o.kind == "ClusterQueue" {
                    "Kueue marks the ClusterQueue inactive (FlavorNotFound) and admits none of its workloads"
                } else {
                    "the quota declared under it can never be used by the cohort's ClusterQueues"
                };
                let mut d = cx.on(
                    o,
                    node,
                    format!(
                        "{} lists flavor `{name}`, but no ResourceFlavor of that name exists: {effect}",
                        o.describe()
                    ),
                );
                let external = format!(
                    "if it is created outside this repo, declare it in .gpuops.yaml: `external: {{ResourceFlavor: [{name}]}}`"
                );
                let best = cx
                    .ix
                    .near_flavors()
                    .closest(name)
                    .map(|(d, n, &i)| (d, n, &cx.ix.flavors[i]));
                let help = match best {
                    Some((_, _, fl)) => {
                        let fo = &cx.ix.objects[fl.obj];
                        d = d.related(fo.loc(fo.anchor()), "the closest ResourceFlavor");
                        format!("did you mean `{}`? Otherwise, {external}", fl.name)
                    }
                    None => format!(
                        "add a ResourceFlavor `{name}` (an empty `spec: {{}}` is valid for homogeneous capacity) or fix the name; {external}"
                    ),
                };
                let d = d.help(help);
                out.extend(if best.is_some() {
                    Some(d)
                } else {
                    cx.unresolved(d, "ResourceFlavor")
                });
            }
        }
    }
}
