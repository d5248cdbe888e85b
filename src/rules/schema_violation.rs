use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::schema::{builtin, cel, check};

declare_rule! {
    /// ## What it does
    /// Checks the objects gpuops models against what the API server and the Karpenter and Kueue
    /// admission checks accept: NodePool and EC2NodeClass (`v1`), ResourceFlavor, ClusterQueue,
    /// LocalQueue, Cohort, WorkloadPriorityClass and AdmissionCheck (`v1beta1`, `v1beta2`),
    /// Topology, PriorityClass, and the pod-spec parts of every workload (tolerations,
    /// nodeSelector, node affinity, containers and their resources and env, volumes). It reports
    /// wrong types, missing required fields, values outside an enum, range, pattern or list
    /// length, names that are not DNS subdomains, label and taint keys that are not qualified
    /// names and values that are not label values, quantities that do not parse, unknown fields
    /// (with the likely intended name, and the new place of fields that moved between API
    /// versions), and the cross-field rules the CRDs enforce with CEL: requirement operators and
    /// value counts, `minValues`, reserved label domains (`karpenter.sh/*`, `karpenter.k8s.aws/*`,
    /// `kubernetes.io/hostname`) in requirements and template labels, budget `schedule`/`duration`
    /// pairs, `role` xor `instanceProfile`, alias terms, `borrowingLimit` without a cohort,
    /// `borrowWithinCohort` with `reclaimWithinCohort: Never`, and toleration
    /// operator/value/effect rules. Kueue's webhook rules too: a ClusterQueue's flavor resources
    /// in `coveredResources` order, a flavor or resource in two resource groups, negative quotas,
    /// `lendingLimit` without a cohort or above `nominalQuota`, `namespaceSelector` operators,
    /// ResourceFlavor node labels and taints. Karpenter's own validation after apply (a NodePool
    /// it fails launches no nodes) adds the length limits of label and taint keys, template label
    /// keys, and taints repeated by key and effect. Each message says which of these rejects it.
    /// Unknown fields of core kinds are reported only when they are near-misses of known ones.
    /// Objects whose CRD is given with `--crd` or `crds:` (or found among the linted files) are
    /// validated against that CRD instead: its schema and its `x-kubernetes-validations` CEL
    /// rules (for that kind and version the built-in checks are off, except Kueue's webhook
    /// check of flavor resource order).
    ///
    /// ## Why is this bad?
    /// A GitOps sync that the API server rejects leaves the NodePool, queue or Job out of the
    /// cluster, and it shows only as a red application. Unknown fields in a CRD are worse: the API
    /// server prunes them silently, so a `consolidationPolicy` written in the wrong place or a
    /// misspelled `toleration:` does nothing at all.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// spec:
    ///   consolidationPolicy: WhenEmpty     # pruned: it belongs under spec.disruption
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: karpenter.k8s.aws/instance-gpu-count
    ///           operator: Gt
    ///           values: ["0", "1"]         # Gt takes exactly one value
    /// ```
    ///
    /// ## Fix
    /// ```yaml
    /// spec:
    ///   disruption:
    ///     consolidationPolicy: WhenEmpty
    ///     consolidateAfter: 10m
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: karpenter.k8s.aws/instance-gpu-count
    ///           operator: Gt
    ///           values: ["0"]
    /// ```
    name: "schema-violation",
    category: "schema",
    kinds: &["any object"],
    severity: Error,
    summary: "a field the API server or the Karpenter/Kueue admission checks reject or prune",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let user = cx.ix.user_crds();
    let mut found = Vec::new();
    for (_, obj) in cx.objects() {
        found.clear();
        if !user.is_empty() && user.covers(obj) {
            user.validate(obj, &mut found);
            webhook(obj, &mut found);
        } else {
            object(obj, &mut found);
        }
        report(cx, obj, &mut found, out);
    }
    for (_, t) in cx.templates() {
        let obj = cx.ix.owner(t);
        // The CRD of the owner describes its pod templates (or chooses not to).
        if !user.is_empty() && user.covers(obj) {
            continue;
        }
        found.clear();
        let base = if obj.group.is_empty() && obj.kind == "Pod" {
            t.path.to_string()
        } else {
            format!("{}.spec", t.path)
        };
        // A bare Pod with no containers is never applied as it is: it is a pod template file
        // (Spark's `podTemplateFile`, Flink's) that the program adds its containers to.
        let fragment =
            obj.group.is_empty() && obj.kind == "Pod" && t.spec.get("containers").is_none();
        let walk = if fragment {
            check::walk_fragment
        } else {
            check::walk
        };
        walk(
            t.spec,
            &builtin::POD_SPEC,
            &base,
            "pod spec",
            obj.kind,
            &mut found,
        );
        if let Some(tol) = t.spec.get("tolerations") {
            cel::tolerations(tol, &format!("{base}.tolerations"), obj.kind, &mut found);
        }
        if let Some(aff) = t.spec.at(&["affinity", "nodeAffinity"]) {
            cel::node_affinity(aff, &base, obj.kind, &mut found);
        }
        cel::pod_names(t.spec, &base, obj.kind, &mut found);
        report(cx, obj, &mut found, out);
    }
}

fn object<'a>(obj: &Object<'a>, found: &mut Vec<check::Violation<'a>>) {
    let Some((schema, what)) = builtin::for_kind(obj.group, obj.version, obj.kind) else {
        return;
    };
    check::walk(obj.root, schema, "", what, obj.kind, found);
    cel::object_name(obj.root, obj.kind, found);
    let Some(spec) = obj.spec().filter(|s| s.as_map().is_some()) else {
        return;
    };
    match obj.kind {
        "NodePool" => {
            cel::nodepool(spec, found);
            cel::nodepool_names(spec, found);
        }
        "EC2NodeClass" => cel::ec2nodeclass(spec, found),
        "ClusterQueue" => {
            let cohort = if obj.version == "v1beta1" {
                "cohort"
            } else {
                "cohortName"
            };
            cel::cluster_queue(spec, cohort, false, found);
            cel::resource_groups(spec, obj.kind, cohort, found);
            cel::preemption(spec, found);
            if let Some(sel) = spec.get("namespaceSelector") {
                cel::namespace_selector(sel, found);
            }
        }
        "Cohort" => cel::resource_groups(spec, obj.kind, "parentName", found),
        "ResourceFlavor" => {
            if let Some(t) = spec.get("tolerations") {
                cel::tolerations(t, "spec.tolerations", obj.kind, found);
            }
            cel::resource_flavor(spec, found);
        }
        _ => {}
    }
}

/// Admission webhook checks that no CRD schema expresses, for objects validated by their CRD.
fn webhook<'a>(obj: &Object<'a>, found: &mut Vec<check::Violation<'a>>) {
    if obj.kind == "ClusterQueue"
        && obj.group == "kueue.x-k8s.io"
        && let Some(spec) = obj.spec().filter(|s| s.as_map().is_some())
    {
        cel::cluster_queue(spec, "", true, found);
    }
}

fn report(cx: &Ctx, obj: &Object, found: &mut Vec<check::Violation>, out: &mut Vec<Diagnostic>) {
    for v in found.drain(..) {
        let mut d = cx.on(obj, v.node, v.message);
        if let Some(h) = v.help {
            d = d.help(h);
        }
        out.push(d);
    }
}
