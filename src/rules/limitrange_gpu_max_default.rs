use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::is_accelerator_resource;
use crate::quantity;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a LimitRange item of `type: Container` that sets a `max` for an accelerator or
    /// device resource (`nvidia.com/gpu`, `amd.com/gpu`, `aws.amazon.com/neuron*`,
    /// `vpc.amazonaws.com/efa`, …) and no `default` for it, or a `default` of one or more of
    /// them. Where the repository holds workloads
    /// of the LimitRange's namespace, it is flagged only when the default changes what one of
    /// them asks for (a container that names no such resource, or an init container given more
    /// than its pod's containers ask), and that container is marked on the finding; a namespace
    /// whose pods the repository does not hold is flagged as is.
    ///
    /// ## Why is this bad?
    /// The API server fills a missing `default` from `max` (and a missing `defaultRequest` from
    /// `default`), and the LimitRanger admission plugin then gives every container of the
    /// namespace that sets no limit for the resource that many devices, as limit and request. A
    /// cap meant for GPU containers turns every CPU-only pod, sidecar and init container of the
    /// namespace into a GPU consumer: CPU pods wait for GPU nodes or take GPUs from training jobs,
    /// and a one-GPU pod with a sidecar asks for more GPUs than it uses.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: LimitRange
    /// metadata: {name: gpu-cap, namespace: research}
    /// spec:
    ///   limits:
    ///     - type: Container
    ///       max: {nvidia.com/gpu: "2"}
    /// ```
    ///
    /// ## Fix
    /// Say that containers get no GPU unless they ask: `default: {nvidia.com/gpu: "0"}` beside the
    /// max. Or cap the namespace's total with a ResourceQuota (`requests.nvidia.com/gpu`) instead.
    name: "limitrange-gpu-max-default",
    category: "resources",
    kinds: &["LimitRange"],
    severity: Warning,
    summary: "a LimitRange `max` on GPUs without a `default`, which makes every container take GPUs",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ranges: Vec<_> = cx
        .ix
        .of_kind("LimitRange")
        .filter(|o| o.group.is_empty())
        .collect();
    if ranges.is_empty() {
        return;
    }
    // Pod templates by namespace, built once: the other side of each finding is looked up in it.
    let mut by_namespace: HashMap<&str, Vec<usize>> = HashMap::new();
    for (ti, t) in cx.ix.templates.iter().enumerate() {
        if let Some(ns) = cx.ix.objects[t.owner].namespace {
            by_namespace.entry(ns).or_default().push(ti);
        }
    }
    for obj in ranges {
        let items = obj
            .spec()
            .and_then(|s| s.get("limits"))
            .into_iter()
            .flat_map(|l| l.items());
        for item in items {
            if item.get("type").and_then(|t| t.as_str()) != Some("Container") {
                continue;
            }
            let default = item.get("default");
            // A cap without a default (the API server makes the max the default), and a
            // default written out that gives GPUs: the same, by intent or not.
            let capped = item
                .get("max")
                .into_iter()
                .flat_map(|m| m.entries())
                .filter(|(res, _, _)| default.is_none_or(|d| d.get(res).is_none()))
                .map(|e| (e, true));
            let given = default
                .into_iter()
                .flat_map(|m| m.entries())
                .map(|e| (e, false));
            for ((res, key, v), cap) in capped.chain(given) {
                if !is_accelerator_resource(res) {
                    continue;
                }
                let Some(n) = v
                    .as_str()
                    .filter(|s| !quantity::is_placeholder(s))
                    .and_then(quantity::whole)
                    .filter(|&n| n > 0)
                else {
                    continue;
                };
                let ns = obj.namespace.map_or(String::new(), |ns| format!(" `{ns}`"));
                let name = obj.name.unwrap_or("<unnamed>");
                let (message, help) = if cap {
                    (
                        format!(
                            "LimitRange `{name}` caps `{res}` at {n} per container with no `default`: the API server makes the max the default, so every container in namespace{ns} that sets no `{res}` limit gets `{res}: {n}` as limit and request, CPU-only pods, sidecars and init containers included"
                        ),
                        format!(
                            "add `default: {{{res}: \"0\"}}` beside the max so that only containers that ask get GPUs, or cap the namespace with a ResourceQuota (`requests.{res}`) instead"
                        ),
                    )
                } else {
                    (
                        format!(
                            "LimitRange `{name}` makes `{res}: {n}` the default per container: every container in namespace{ns} that sets no `{res}` limit gets {n} as limit and request, CPU-only pods, sidecars and init containers included"
                        ),
                        format!(
                            "make the default `{res}: \"0\"` so that only containers that ask get GPUs, and let the GPU containers say how many they need"
                        ),
                    )
                };
                let mut d = cx.on(obj, key, message).help(help);
                // Where the repository holds the namespace's workloads, the default matters only
                // if it changes what one of them asks for (a busybox init container of a one-GPU
                // pod changes nothing).
                if let Some(tis) = obj.namespace.and_then(|ns| by_namespace.get(ns)) {
                    let Some((at, why)) = changed(cx, tis, res, n) else {
                        continue;
                    };
                    d = d.related(at, why);
                }
                out.push(d);
            }
        }
    }
}

/// The first container of the namespace's templates whose GPU default of `n` changes what its
/// pod asks for: a container that names no limit for `res` adds `n`, an init container only when
/// `n` is more than the pod's containers ask.
fn changed(
    cx: &Ctx,
    templates: &[usize],
    res: &str,
    n: i128,
) -> Option<(crate::diag::Loc, String)> {
    let count = |c: &crate::model::Container| {
        c.limits
            .or(c.requests)
            .and_then(|m| m.get(res))
            .and_then(|v| v.as_str())
            .and_then(quantity::whole)
    };
    templates.iter().find_map(|&ti| {
        let t = &cx.ix.templates[ti];
        let asked: i128 = t
            .containers
            .iter()
            .filter(|c| !c.init)
            .filter_map(&count)
            .sum();
        let c = t.containers.iter().find(|c| {
            c.limits.is_none_or(|l| l.get(res).is_none())
                && c.requests.is_none_or(|r| r.get(res).is_none())
                && (!c.init || n > asked)
        })?;
        let owner = &cx.ix.objects[t.owner];
        let at = c.node.get("name").unwrap_or(c.node);
        let kind = if c.init {
            "init container"
        } else {
            "container"
        };
        Some((
            owner.loc(at),
            format!(
                "{kind} `{}` of {} sets no `{res}` limit: it is given {n}",
                c.name.unwrap_or("<unnamed>"),
                owner.describe()
            ),
        ))
    })
}
