use super::{Ctx, close_enough, usable};
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::yaml::{Node, Span};

declare_rule! {
    /// ## What it does
    /// Flags a `kueue.x-k8s.io/queue-name` label (on an object's `metadata.labels` or on a pod
    /// template's labels) that names no LocalQueue in the object's namespace, in the linted files
    /// or declared external in `.gpuops.yaml`. A missing namespace on either side matches any
    /// namespace (Kustomize often sets it later). When a LocalQueue of that name exists in another
    /// namespace, the finding points at it. The queue a Red Hat OpenShift AI DataScienceCluster
    /// has its operator create in every namespace it manages for Kueue
    /// (`spec.components.kueue.defaultLocalQueueName`, `default` when unset; not when Kueue is
    /// `Removed`) is taken to exist.
    ///
    /// ## Why is this bad?
    /// Kueue suspends every Job that carries the label and creates a Workload for the named
    /// LocalQueue. When that queue does not exist in the Job's namespace the Workload is
    /// inadmissible: the Job stays suspended forever, no pod is created, and nothing fails loudly.
    /// LocalQueues are namespaced, so a queue in `team-a` does not serve a Job in `team-b`.
    /// A repo that labels Jobs for Kueue but defines no LocalQueue at all is exactly this mistake.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: batch/v1
    /// kind: Job
    /// metadata:
    ///   name: finetune
    ///   namespace: ml
    ///   labels:
    ///     kueue.x-k8s.io/queue-name: team-a   # no LocalQueue team-a in namespace ml
    /// ```
    ///
    /// ## Fix
    /// Create the LocalQueue in the Job's namespace, or fix the label. If the queue is created
    /// outside the repo, declare it (`namespace/name`, or a bare name for any namespace):
    /// ```yaml
    /// # .gpuops.yaml
    /// external:
    ///   LocalQueue: [ml/team-a]
    /// ```
    name: "localqueue-not-found",
    category: "references",
    kinds: &["workloads"],
    severity: Error,
    summary: "a kueue.x-k8s.io/queue-name label names a LocalQueue that does not exist in the namespace",
    check: check,
    chunked: true,
}

const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// The LocalQueues an operator creates in each namespace it manages: a DataScienceCluster's
/// default queue (Red Hat OpenShift AI), unless its Kueue component is `Removed`.
fn operator_queues<'a>(cx: &Ctx<'_, 'a>) -> Vec<&'a str> {
    cx.ix
        .of_kind("DataScienceCluster")
        .filter_map(|o| {
            let kueue = o.spec()?.get("components")?.get("kueue")?;
            let state = kueue.get("managementState").and_then(Node::as_str);
            if !matches!(state, Some("Managed" | "Unmanaged")) {
                return None;
            }
            Some(
                kueue
                    .get("defaultLocalQueueName")
                    .and_then(Node::as_str)
                    .unwrap_or("default"),
            )
        })
        .collect()
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // Label value nodes already checked (a bare Pod's template metadata is its own metadata).
    let mut seen: std::collections::HashSet<(usize, Span)> = std::collections::HashSet::new();
    let mut labels: Vec<(&Object, Node<'_>)> = Vec::new();
    for (_, o) in cx.objects() {
        // Kueue reads the label on the workloads it admits, not on a Service or a ConfigMap.
        if o.workload.is_none() {
            continue;
        }
        if let Some((_, v)) = o.label(QUEUE_LABEL) {
            labels.push((o, v));
        }
    }
    for (_, t) in cx.templates() {
        if let Some((_, v)) = t.label(QUEUE_LABEL) {
            labels.push((cx.ix.owner(t), v));
        }
    }
    // One finding per workload and queue: the same name on the object and its pod templates is
    // one missing queue.
    let mut reported: std::collections::HashSet<(usize, Span, &str)> =
        std::collections::HashSet::new();
    let created = operator_queues(cx);
    for (owner, value) in labels {
        if !seen.insert((owner.file, value.span())) {
            continue;
        }
        let Some(name) = usable(value) else { continue };
        if !reported.insert((owner.file, owner.root.span(), name)) {
            continue;
        }
        let ns = owner.namespace;
        if cx.ix.local_queue(ns, name).is_some()
            || cx.ix.exists("LocalQueue", ns, name)
            || created.contains(&name)
        {
            continue;
        }
        let where_ = ns.map_or(String::new(), |n| format!(" in namespace `{n}`"));
        let mut elsewhere: Vec<&Object> = cx
            .ix
            .named("LocalQueue", name)
            .into_iter()
            .filter(|o| o.group == "kueue.x-k8s.io")
            .collect();
        // The queues nearest the workload's file first: the same directory before an example's.
        let path_of = |f| {
            cx.ix
                .files
                .get(f)
                .map_or("", |f: &crate::source::SourceFile| f.path.as_str())
        };
        let here = path_of(owner.file);
        let shared = |o: &&Object| {
            here.split('/')
                .zip(path_of(o.file).split('/'))
                .take_while(|(a, b)| a == b)
                .count()
        };
        elsewhere.sort_by_key(|o| std::cmp::Reverse(shared(o)));
        let mut namespaces: Vec<&str> = Vec::new();
        for o in &elsewhere {
            let n = o.namespace.unwrap_or("<none>");
            if !namespaces.contains(&n) {
                namespaces.push(n);
            }
        }
        let listed = match namespaces.as_slice() {
            [one] => format!("namespace `{one}`"),
            many => format!("namespaces {}", crate::diag::backticked_few(many, ", ")),
        };
        let external = format!(
            "if the LocalQueue is created outside this repo, declare it in .gpuops.yaml: `external: {{LocalQueue: [{}{name}]}}`",
            ns.map_or(String::new(), |n| format!("{n}/"))
        );
        if let Some(other) = elsewhere.first() {
            let other_ns = other.namespace.unwrap_or("<none>");
            let mut d = cx.on(
                owner,
                value,
                format!(
                    "{} is labelled for LocalQueue `{name}`, which does not exist{where_} (it exists in {listed}): LocalQueues are namespaced, so Kueue never admits the workload and it never starts",
                    owner.describe()
                ),
            );
            for o in &elsewhere {
                d = d.related(
                    o.loc(o.anchor()),
                    format!(
                        "LocalQueue `{name}` in namespace `{}`",
                        o.namespace.unwrap_or("<none>")
                    ),
                );
            }
            out.push(d.help(format!(
                "create a LocalQueue `{name}`{where_} (it may point at the same ClusterQueue), or move the workload to namespace `{other_ns}`; {external}"
            )));
            continue;
        }
        let mut d = cx.on(
            owner,
            value,
            format!(
                "{} is labelled for LocalQueue `{name}`, which does not exist{where_}: Kueue never admits the workload (a Job stays suspended), so it never starts",
                owner.describe()
            ),
        );
        let queues = &cx.ix.local_queues;
        let best = if ns.is_none() {
            cx.ix
                .near_local_queues()
                .closest(name)
                .map(|(d, _, &i)| (d, &queues[i]))
        } else {
            // The namespace's queues and those of no namespace: a team's few, searched in full.
            let by_ns = cx.ix.local_queues_by_namespace();
            let mut ids: Vec<usize> = [ns, None]
                .iter()
                .filter_map(|k| by_ns.get(k))
                .flatten()
                .copied()
                .collect();
            ids.sort_unstable();
            let near = super::Near::new(name, 3);
            ids.into_iter()
                .map(|i| &queues[i])
                .filter_map(|q| Some((near.distance(q.name)?, q)))
                .filter(|(dist, _)| close_enough(name, *dist))
                .min_by_key(|(dist, q)| (*dist, q.name))
        };
        let help = match best {
            Some((_, q)) => {
                let o = &cx.ix.objects[q.obj];
                d = d.related(o.loc(o.anchor()), "the closest LocalQueue");
                format!("did you mean `{}`? Otherwise, {external}", q.name)
            }
            None if cx.ix.local_queues.is_empty() => format!(
                "the repo defines no LocalQueue at all: add one{where_} that points at a ClusterQueue; {external}"
            ),
            None => {
                let declared: Vec<String> = cx
                    .ix
                    .settings
                    .external
                    .iter()
                    .filter(|e| e.kind == "LocalQueue" && e.name == name)
                    .filter_map(|e| e.namespace.as_ref().map(|n| format!("`{n}`")))
                    .collect();
                if declared.is_empty() {
                    format!("fix the label or create the LocalQueue{where_}; {external}")
                } else {
                    format!(
                        "`{name}` is declared external only in namespace {}: fix the label, create the LocalQueue{where_}, or {}",
                        declared.join(", "),
                        external.replacen(
                            "if the LocalQueue is created outside this repo, ",
                            "",
                            1
                        )
                    )
                }
            }
        };
        let d = d.help(help);
        out.extend(if best.is_some() {
            Some(d)
        } else {
            cx.unresolved(d, "LocalQueue")
        });
    }
}
