use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::schema::{builtin, cel, check};

declare_rule! {
    /// ## What it does
    /// Checks the objects gpuops models against what the API server and the Karpenter and Kueue
    /// admission checks accept: NodePool, NodeClaim and EC2NodeClass (`v1`), ResourceFlavor,
    /// ClusterQueue, LocalQueue, Cohort, WorkloadPriorityClass, AdmissionCheck and
    /// ProvisioningRequestConfig (`v1beta1`, `v1beta2`), Topology, PriorityClass, and the
    /// pod-spec parts of every workload (tolerations,
    /// nodeSelector, node affinity, containers and their resources and env, volumes). It reports
    /// wrong types, missing required fields, values outside an enum, range, pattern or list
    /// length, names that are not DNS subdomains, label and taint keys that are not qualified
    /// names and values that are not label values, quantities that do not parse, unknown fields
    /// (with the likely intended name, and the new place of fields that moved between API
    /// versions), and the cross-field rules the CRDs enforce with CEL: requirement operators and
    /// value counts, `minValues`, reserved label domains (`karpenter.sh/*`, `karpenter.k8s.aws/*`,
    /// `kubernetes.io/hostname`) in requirements and template labels, budget `schedule`/`duration`
    /// pairs, empty `nodeClassRef` parts, what a static NodePool (`replicas`) may not set, `role`
    /// xor `instanceProfile`, EC2NodeClass selector terms, alias terms, restricted tags, root
    /// volumes, network interfaces, kubelet eviction and reservation keys and the placement
    /// group selector, `borrowingLimit` without a cohort, `borrowWithinCohort`
    /// with `reclaimWithinCohort: Never`, a flavor fungibility `preference` without
    /// `TryNextFlavor` (after defaults), flavors listing as many resources as their group covers,
    /// `topologyName` without node labels, Topology levels (unique, `kubernetes.io/hostname`
    /// last), and toleration operator/value/effect rules. Kueue's webhook rules too: a flavor's
    /// resources in `coveredResources` order, a flavor or resource in two resource groups,
    /// negative quotas, `lendingLimit` without a cohort or above `nominalQuota`, a fair-sharing
    /// weight that is negative or at most `1n`, at most 256 flavors and 256 covered resources per
    /// queue and 512 flavor×resource entries per group, admission checks `onFlavors` the queue
    /// has, `namespaceSelector` operators, ResourceFlavor node labels and taints. Karpenter's own
    /// validation after apply (a NodePool it fails launches no nodes) adds the length limits of
    /// label and taint keys, template label keys, taints repeated by key and effect, and
    /// capacity types and tenancies none of which it knows; apps validation adds a Deployment's,
    /// ReplicaSet's, StatefulSet's or DaemonSet's `spec.selector` that its pod template's labels
    /// do not match. Each message says which of these
    /// rejects it, with the upstream rule's message. Unknown fields of core kinds are reported
    /// only when they are near-misses of known ones, or written one level off (a pod spec
    /// field such as `runtimeClassName` in a container, a container field in the pod spec, a
    /// Job's `ttlSecondsAfterFinished`, a Deployment's `replicas` or `annotations` in the pod spec).
    /// Objects whose CRD is given with `--crd` or
    /// `crds:` (or found among the linted files) are validated against that CRD instead: its
    /// schema and its `x-kubernetes-validations` CEL rules (a rule that fails to evaluate on the
    /// object's own data, such as `int()` of a value that is no integer, rejects it as at the API
    /// server); the name check, the webhooks' checks and Karpenter's validation after apply still
    /// run, as no CRD expresses them. Where a `MutatingWebhookConfiguration` in view intercepts
    /// the kind on create (the operator's own defaulting webhook), the required fields of its
    /// objects are not asked for: the webhook runs before validation and may fill them in.
    /// A pod spec with no `containers` at all is a fragment
    /// (a Spark pod template file, a kustomize patch left beside its base): its own required
    /// fields are not asked for, and neither are the required fields of an object in a file
    /// named as a kustomize patch (`patch-nodeclass.yaml`, `gpu_patch.yaml`, `patches/…`), lying
    /// in an `overlays/` directory, or named for the kustomization that patches with it
    /// (`ci-platform-kustomization.yaml`), which merges into a base that has them. A file whose name says it is broken on purpose
    /// (`invalid.yaml`) is not judged unless the rule is selected with `--rule`, nor is an
    /// operator's sample as kubebuilder scaffolds it (under `config/samples/`, still holding the
    /// generator's `TODO(user)`, or `foo: bar` under `# Add fields here`), a placeholder. Nor is an object
    /// under a `testdata`, `test-data` or `fixtures` directory (a program's test input: Go's
    /// convention, and JavaScript's, Ruby's and Python's test tools'), unless the rule is
    /// selected: tests read it as data (partial objects, placeholder names, the very rejections
    /// they expect), nothing applies it. An operator's sample of its own custom resource (under
    /// `samples/` or `examples/`, or named as one, its CRD the repository's own rather than given
    /// as the cluster's) is reported as a warning: it shows the API as it was when written, and
    /// nothing deploys it as it is. One mistake repeated at every
    /// index of a list (a `borrowingLimit` on each resource of a queue without a cohort) is one
    /// finding, with the other places marked on it.
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

/// Whether a file is test data of a release named in its path: a directory of the test tree named
/// as a version (`v0.2.1`, `0.19`).
fn of_another_release(path: &str) -> bool {
    let versioned = path.split('/').rev().skip(1).any(|d| {
        let d = d.strip_prefix('v').unwrap_or(d);
        let parts: Vec<&str> = d.split('.').collect();
        parts.len() >= 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    });
    versioned && crate::source::in_test_tree(path)
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let user = cx.ix.user_crds();
    let mut found = Vec::new();
    let mut test_data: std::collections::HashMap<usize, bool> = std::collections::HashMap::new();
    // A test tree's objects of another release (`test/regression/v0.2.1/`) are not judged by the
    // repository's CRD copy, which is the current release's (one given as the cluster's still
    // judges); built-in knowledge, which follows each object's own apiVersion, still does.
    // Selected by name (`--rule`), the rule judges every file.
    let selected = cx.ix.settings.selected(RULE.name);
    // A file named as broken on purpose (`invalid.yaml`) shows or tests a rejection, and an
    // untouched kubebuilder sample is a placeholder (unless the rule is selected by name).
    let mut deliberate: std::collections::HashMap<usize, bool> = std::collections::HashMap::new();
    let mut named_invalid = |file: usize| {
        !selected
            && *deliberate.entry(file).or_insert_with(|| {
                cx.ix.files.get(file).is_some_and(|f| {
                    crate::source::named_invalid(&f.path)
                        || crate::source::scaffold_sample(&f.path, &f.text)
                })
            })
    };
    for (_, obj) in cx.objects() {
        if named_invalid(obj.file) {
            continue;
        }
        found.clear();
        let mut test_object = || {
            !selected
                && *test_data.entry(obj.file).or_insert_with(|| {
                    cx.ix
                        .files
                        .get(obj.file)
                        .is_some_and(|f| of_another_release(&f.path))
                })
        };
        let covered = !user.is_empty() && user.covers(obj);
        let given = covered && user.given(obj);
        if covered && (given || !test_object()) {
            user.validate(obj, &mut found);
            webhook(obj, &mut found);
        } else {
            object(obj, &mut found);
        }
        // An operator's own sample of its custom resource (the CRD is this repository's, not
        // the cluster's as given): it shows the API as it was when written, and nothing deploys
        // it as it is. Applied, it is rejected: reported, as a warning.
        let sample = covered
            && !given
            && cx
                .ix
                .files
                .get(obj.file)
                .is_some_and(|f| crate::source::in_sample_dir(&f.path));
        let first = out.len();
        report(cx, obj, &mut found, out);
        if sample {
            for d in &mut out[first..] {
                d.severity = crate::diag::Severity::Warning;
            }
        }
    }
    let kustomized = |file: usize| {
        cx.ix.files.get(file).is_some_and(|f| {
            let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
            cx.ix.kustomize_dirs().contains(dir)
        })
    };
    for (_, t) in cx.templates() {
        let obj = cx.ix.owner(t);
        if named_invalid(obj.file) {
            continue;
        }
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
        // A pod spec with no containers is never applied as it is: a bare Pod is a pod template
        // file (Spark's `podTemplateFile`, Flink's) that the program adds its containers to, and
        // a workload is a strategic-merge patch (`spec.template.spec.serviceAccountName` alone)
        // that kustomize merges into its target.
        let fragment = t.spec.get("containers").is_none();
        let walk = if fragment {
            check::walk_fragment
        } else {
            check::walk
        };
        // The API server validates the pod templates of the built-in workloads with them; a
        // custom resource's controller creates pods, and those are what is rejected.
        let kind = if matches!(obj.group, "" | "apps" | "batch" | "extensions") {
            std::borrow::Cow::Borrowed(obj.kind)
        } else {
            std::borrow::Cow::Owned(format!("pods of the {}", obj.kind))
        };
        walk(
            t.spec,
            &builtin::POD_SPEC,
            &base,
            "pod spec",
            &kind,
            &mut found,
        );
        if let Some(tol) = t.spec.get("tolerations") {
            cel::tolerations(
                tol,
                &format!("{base}.tolerations"),
                &kind,
                false,
                &mut found,
            );
        }
        if let Some(aff) = t.spec.at(&["affinity", "nodeAffinity"]) {
            cel::node_affinity(aff, &base, &kind, &mut found);
        }
        cel::pod_names(t.spec, &base, &kind, &mut found);
        // The API server checks the mounts of the pods it is given whole; a controller may add
        // volumes to the pods it makes, a program to a bare Pod it reads as a template (a
        // platform's per-user pods), and a patch's volumes are in its base (a file of a
        // kustomization's directory read on its own, the kustomization not built, may be one).
        let whole = matches!(obj.group, "apps" | "batch") && !fragment && {
            let path = cx.ix.files.get(obj.file).map_or("", |f| f.path.as_str());
            // `volumes:` one level out, beside the template's `spec:`, is reported as unknown
            // there; the mounts that name them are the same mistake.
            let keys: Vec<&str> = t.path.split('.').collect();
            let misplaced = obj
                .root
                .at(&keys)
                .is_some_and(|tmpl| tmpl.get("volumes").is_some());
            let standalone = kustomized(obj.file) && std::path::Path::new(path).is_file();
            !(crate::source::named_patch(path) || standalone || misplaced)
        };
        // A StatefulSet's claim templates are volumes of its pods.
        let added = whole.then(|| {
            obj.root
                .at(&["spec", "volumeClaimTemplates"])
                .into_iter()
                .flat_map(|l| l.items())
                .filter_map(|c| c.at(&["metadata", "name"]).and_then(|n| n.as_str()))
                .collect()
        });
        cel::pod_volumes(t.spec, &base, &kind, added, &mut found);
        if (obj.group, obj.version) == ("apps", "v1")
            && t.path == "spec.template"
            && !fragment
            && t.containers.iter().all(|c| c.node.get("image").is_some())
            && let Some((key, spec)) = obj.root.entry("spec")
        {
            let labels = t.metadata.and_then(|m| m.get("labels"));
            let before = found.len();
            cel::selector_matches(key, spec, labels, &kind, &mut found);
            // Kustomize's labels (`commonLabels`, `labels`) write the selector and the template's
            // labels both: a file of a kustomization's directory read on its own (the
            // kustomization a template, or not built) is judged without them.
            if found.len() > before && kustomized(obj.file) {
                found.truncate(before);
            }
        }
        report(cx, obj, &mut found, out);
    }
}

fn object<'a>(obj: &Object<'a>, found: &mut Vec<check::Violation<'a>>) {
    let Some((schema, what)) = builtin::for_kind(obj.group, obj.version, obj.kind) else {
        return;
    };
    check::walk(obj.root, schema, "", what, obj.kind, found);
    // Of the built-in workloads only the fields are judged: their names are often filled in by
    // a script (`restore-TIMESTAMP`, `<CLUSTER>-wait`).
    if !matches!(obj.group, "apps" | "batch") && obj.kind != "Pod" {
        cel::object_rules(obj.group, obj.kind, obj.version, obj.root, found);
    }
}

/// What no CRD schema expresses, for objects validated by their CRD: the API server's own check
/// of a custom resource's name, and the admission webhooks' checks.
fn webhook<'a>(obj: &Object<'a>, found: &mut Vec<check::Violation<'a>>) {
    cel::object_name(obj.root, obj.kind, found);
    cel::webhook_rules(obj.group, obj.kind, obj.version, obj.root, found);
}

fn report(cx: &Ctx, obj: &Object, found: &mut Vec<check::Violation>, out: &mut Vec<Diagnostic>) {
    if found.is_empty() {
        return;
    }
    let path = cx.ix.files.get(obj.file).map_or("", |f| f.path.as_str());
    // A kustomize patch merges into a base that has the required fields; so do the objects of
    // a file named for the kustomization it patches with (`ci-platform-kustomization.yaml`).
    // A file of an overlay read on its own (its kustomization missing or not built) is one too.
    let overlay = std::path::Path::new(path)
        .parent()
        .is_some_and(|d| d.components().any(|c| c.as_os_str() == "overlays"));
    let patch = crate::source::named_patch(path)
        || overlay
        || (crate::source::named_for_kustomization(path) && !obj.kind.ends_with("Kustomization"));
    // A `testdata` directory holds a program's test inputs (Go's convention; `fixtures` in
    // JavaScript's, Ruby's and Python's test tools), read by its tests rather than applied
    // (partial objects, placeholder names, the very rejections a test expects): nothing there
    // is judged as what an API server would be given.
    let input = !cx.ix.settings.selected(RULE.name) && crate::source::in_test_input_dir(path);
    if input {
        found.clear();
        return;
    }
    // One mistake repeated at every index of a list (a `borrowingLimit` on each resource of a
    // queue without a cohort) is one finding, with the other places marked on it.
    let mut seen: Vec<(String, usize)> = Vec::new();
    for v in found.drain(..) {
        // A patch's selector and labels merge into its target's.
        if patch
            && (v.message.contains(" is required")
                || v.message.contains(" are required")
                || v.message
                    .contains("selector does not match template labels"))
        {
            continue;
        }
        let shape = without_indices(&v.message);
        if let Some(&(_, i)) = seen.iter().find(|(m, _)| *m == shape)
            && let Some(first) = out.get_mut(i)
        {
            first.related.push(crate::diag::Related {
                loc: obj.loc(v.node),
                message: "also here".to_string(),
            });
            continue;
        }
        seen.push((shape, out.len()));
        let mut d = cx.on(obj, v.node, v.message);
        if let Some(h) = v.help {
            d = d.help(h);
        }
        out.push(d);
    }
}

/// A message with its list indices dropped (`resources[1]` → `resources[]`): the same mistake
/// at another index reads the same.
fn without_indices(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits) == Some(&b']') {
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}
