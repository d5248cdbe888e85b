use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::Object;
use crate::yaml::Node;

mod removed_workloads;
use removed_workloads::removed_workload;

declare_rule! {
    /// ## What it does
    /// Flags Karpenter and Kueue API versions, fields, values and annotations that are removed or
    /// deprecated:
    /// - `apiVersion: karpenter.sh/v1alpha5` (Provisioner, Machine) and `karpenter.sh/v1beta1`,
    ///   `karpenter.k8s.aws/v1alpha1` (AWSNodeTemplate) and `karpenter.k8s.aws/v1beta1`: Karpenter
    ///   v1.1 and later serve only `v1`. Not where the files beside it install only Karpenter
    ///   releases that serve that version (v1alpha5 up to v0.32, v1beta1 from v0.32 to v1.0), read
    ///   as for Kueue below, plus the controller image and the `helm.sh/chart: karpenter-…` label
    ///   of the chart's objects: there the cluster holds the object as written. Where every such
    ///   install is a release that no longer serves the version (or, for `v1beta1`, one older
    ///   than v0.32, which never did), the finding names it, and is an error when the release is
    ///   past the version: applying the file certainly fails.
    /// - `apiVersion: kueue.x-k8s.io/v1alpha1` and `v1beta1`: deprecated; `v1beta2` is the storage
    ///   version since Kueue v0.16. Not `v1beta1` where the files beside it install a Kueue older
    ///   than v0.15 (a release manifest URL, controller image or `kueue` chart version — a
    ///   Terraform `helm_release` (its OCI reference may name the chart), a Terraform module
    ///   input (`kueue = { version = "v0.10.0" }`), an Argo CD `targetRevision`, a `helm install`
    ///   line — of that
    ///   release, and none newer, in a file whose parent directory's parent holds the object
    ///   (a Terraform stack that builds an EKS cluster speaks for its own directory only),
    ///   or, when none is near it, in a repository that keeps several releases, all older;
    ///   scripts and Markdown count, also through a shell variable): there v1beta1 is the only
    ///   version served, and v1beta2 would be rejected; a README that names the release in prose
    ///   ("Kueue v0.6.2") counts too. Nor `v1alpha1` there (a Cohort aside), whose alpha kinds
    ///   such a release serves (Topology is `v1alpha1` only before v0.14). Nor where the Kueue
    ///   operator is installed through an OLM Subscription (anywhere in the repository), whose
    ///   channel names no upstream release. Where no release is named at all, the help says the
    ///   move is for v0.15 and later. One finding per file: the file's other v1beta1 objects are
    ///   marked on it.
    /// - On a NodePool: `consolidationPolicy: WhenUnderutilized`, `spec.disruption.expireAfter`,
    ///   `spec.template.spec.kubelet` and `nodeClassRef.apiVersion`, all removed in `karpenter.sh/v1`.
    ///   On a NodePool already of `v1`, a `nodeClassRef` with `apiVersion` and no `group` is an
    ///   error (the API server rejects it); and where the repository holds the v1 CRD,
    ///   `schema-violation` judges these fields against it instead, one finding each.
    /// - A Karpenter kind written at a version that never had it (`karpenter.sh/v1` Provisioner,
    ///   `karpenter.k8s.aws/v1` AWSNodeTemplate), or in Karpenter's other group (a `karpenter.sh`
    ///   EC2NodeClass or NodeClass): an error, as no release serves it.
    /// - The annotations `karpenter.sh/do-not-evict` and `karpenter.sh/do-not-consolidate`, on any
    ///   object, pod template or NodePool node template: removed in Karpenter v1.
    /// - A GPU workload (its pods ask for an accelerator) at a version Kubernetes removed:
    ///   `extensions/v1beta1`, `apps/v1beta1` and `apps/v1beta2` Deployments, StatefulSets,
    ///   DaemonSets and ReplicaSets (gone in 1.16), `batch/v2alpha1` and `batch/v1beta1` CronJobs
    ///   (1.21, 1.25): an error, as no supported cluster serves them.
    ///
    /// On an object of a Karpenter version no longer served, the fields v1 changed are the steps of
    /// one migration: they are marked on the apiVersion's finding, not reported one by one. A file
    /// of an old version under a directory named for it (`examples/v1beta1/`) is kept for that
    /// version on purpose and is not judged.
    ///
    /// ## Why is this bad?
    /// An API version the cluster no longer serves is rejected at apply time, so the NodePool or
    /// EC2NodeClass never exists and GPU pods stay Pending; a GitOps sync fails on it. Removed
    /// fields and values are rejected by the v1 schema or silently dropped: `expireAfter` and
    /// `kubelet` settings under their old paths do nothing, and the old annotations no longer keep
    /// Karpenter from draining a node in the middle of a training run.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1beta1
    /// kind: NodePool
    /// spec:
    ///   disruption:
    ///     consolidationPolicy: WhenUnderutilized
    ///     expireAfter: 720h
    /// ```
    ///
    /// ## Fix
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// spec:
    ///   template:
    ///     spec:
    ///       expireAfter: 720h
    ///       nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
    ///   disruption:
    ///     consolidationPolicy: WhenEmptyOrUnderutilized
    ///     consolidateAfter: 0s
    /// ```
    /// Replace `karpenter.sh/do-not-evict` and `karpenter.sh/do-not-consolidate` with
    /// `karpenter.sh/do-not-disrupt: "true"`, and move Kueue objects to `kueue.x-k8s.io/v1beta2`
    /// (a ClusterQueue's `spec.cohort` becomes `spec.cohortName`).
    name: "deprecated-api",
    category: "deprecation",
    kinds: &["any object"],
    severity: Warning,
    summary: "removed or deprecated Karpenter and Kueue API versions, fields and annotations; GPU workloads of removed Kubernetes versions",
    check: check,
    chunked: true,
}

const OLD_ANNOTATIONS: [&str; 2] = [
    "karpenter.sh/do-not-evict",
    "karpenter.sh/do-not-consolidate",
];

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // Per file, the finding its first deprecated Kueue v1beta1 object got: one choice of version
    // for the file, the other objects marked on it.
    let mut per_file: std::collections::HashMap<usize, usize> = Default::default();
    for (oi, obj) in cx.objects() {
        if let Some(d) = kind_never_served(cx, obj).or_else(|| removed_workload(cx, obj)) {
            out.push(d);
            continue;
        }
        // A file under a directory named for its object's old version (`examples/v1beta1/`) is
        // kept for that version on purpose, beside the current one.
        if old_version(obj)
            && cx.ix.files.get(obj.file).is_some_and(|f| {
                std::path::Path::new(&f.path)
                    .parent()
                    .is_some_and(|d| d.components().any(|c| c.as_os_str() == obj.version))
            })
        {
            continue;
        }
        // Only the annotations are judged where the cluster's Karpenter serves the object as
        // written (v1's changes are not due yet), or where the object is already v1 and its CRD
        // is in view (`schema-violation` judges its fields against that CRD; one finding each).
        let served = old_version(obj)
            && obj.group.starts_with("karpenter")
            && installed_karpenter_serves(cx, obj);
        let v1_by_crd =
            obj.group == "karpenter.sh" && obj.version == "v1" && cx.ix.user_crds().covers(obj);
        if served || v1_by_crd {
            old_annotations(cx, oi, obj, out);
            continue;
        }
        let mut fields = Vec::new();
        if obj.group == "karpenter.sh" && obj.kind == "NodePool" {
            nodepool_fields(cx, obj, &mut fields);
        }
        if obj.group == "karpenter.sh"
            && obj.kind == "NodeClaim"
            && let Some(spec) = obj.spec()
        {
            node_class_ref(
                cx,
                obj,
                spec.get("nodeClassRef"),
                "spec.nodeClassRef",
                &mut fields,
            );
        }
        // On an object of a version Karpenter no longer serves, the fields v1 changed are the
        // steps of one migration: the apiVersion's finding points at each, not a finding each.
        if !api_version(cx, obj, &fields, &mut per_file, out) {
            out.append(&mut fields);
        }
        old_annotations(cx, oi, obj, out);
    }
}

/// The kinds each Karpenter API version has had, in every release.
const KARPENTER_KINDS: &[(&str, &str, &[&str])] = &[
    ("karpenter.sh", "v1alpha5", &["Provisioner", "Machine"]),
    ("karpenter.sh", "v1beta1", &["NodePool", "NodeClaim"]),
    ("karpenter.sh", "v1", &["NodePool", "NodeClaim"]),
    ("karpenter.sh", "v1alpha1", &["NodeOverlay"]),
    ("karpenter.k8s.aws", "v1alpha1", &["AWSNodeTemplate"]),
    ("karpenter.k8s.aws", "v1beta1", &["EC2NodeClass"]),
    ("karpenter.k8s.aws", "v1", &["EC2NodeClass"]),
];

/// A Karpenter kind written at a version that never had it (`karpenter.sh/v1` Provisioner): no
/// release serves it, so the API server answers "no matches for kind" whatever is installed.
fn kind_never_served(cx: &Ctx, obj: &Object) -> Option<Diagnostic> {
    let (_, _, kinds) = KARPENTER_KINDS
        .iter()
        .find(|(g, v, _)| *g == obj.group && *v == obj.version)?;
    if kinds.contains(&obj.kind) {
        return None;
    }
    // Where the kind does live (in this group, else in Karpenter's other one: an EC2NodeClass
    // written as `karpenter.sh`); a kind Karpenter never had is not this rule's to judge, but
    // for the node class named without its provider.
    let lives = |kind: &str, same_group: bool| -> Vec<String> {
        KARPENTER_KINDS
            .iter()
            .filter(|(g, _, ks)| (*g == obj.group) == same_group && ks.contains(&kind))
            .map(|(g, v, _)| format!("`{g}/{v}`"))
            .collect()
    };
    let mut homes = lives(obj.kind, true);
    let mut kind = obj.kind;
    if homes.is_empty() {
        kind = if obj.kind == "NodeClass" {
            "EC2NodeClass"
        } else {
            obj.kind
        };
        // Its current version only.
        homes = lives(kind, false).pop().into_iter().collect();
    }
    if homes.is_empty() {
        return None;
    }
    let successor = match obj.kind {
        "Provisioner" => "; on a current Karpenter it is a NodePool (`karpenter.sh/v1`)",
        "Machine" => "; on a current Karpenter it is a NodeClaim (`karpenter.sh/v1`)",
        "AWSNodeTemplate" => {
            "; on a current Karpenter it is an EC2NodeClass (`karpenter.k8s.aws/v1`)"
        }
        _ => "",
    };
    let node = obj.root.get("apiVersion")?;
    Some(
        cx.on(
            obj,
            node,
            format!(
                "`{}` has no kind {}: no Karpenter release serves it at this version, so the API server rejects the object (no matches for kind)",
                obj.api_version, obj.kind
            ),
        )
        .with_severity(crate::diag::Severity::Error)
        .help(format!("{kind} is {}{successor}", homes.join(" or "))),
    )
}

/// Whether the object is of an API version Karpenter or Kueue removed or deprecated.
fn old_version(obj: &Object) -> bool {
    matches!(
        (obj.group, obj.version),
        ("karpenter.sh", "v1alpha5" | "v1beta1")
            | ("karpenter.k8s.aws", "v1alpha1" | "v1beta1")
            | ("kueue.x-k8s.io", "v1alpha1" | "v1beta1")
    )
}

/// Reports a removed or deprecated API version; whether it reported a removed Karpenter one (with
/// the changed `fields` as the steps of its migration).
fn api_version(
    cx: &Ctx,
    obj: &Object,
    fields: &[Diagnostic],
    per_file: &mut std::collections::HashMap<usize, usize>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(node) = obj.root.get("apiVersion") else {
        return false;
    };
    let av = obj.api_version;
    let kind = obj.kind;
    match (obj.group, obj.version) {
        ("karpenter.sh", "v1alpha5" | "v1beta1")
        | ("karpenter.k8s.aws", "v1alpha1" | "v1beta1") => {
            let new_group = obj.group;
            let new_kind = match kind {
                "Provisioner" => "NodePool",
                "Machine" => "NodeClaim",
                "AWSNodeTemplate" => "EC2NodeClass",
                k => k,
            };
            let since = if obj.version == "v1beta1" {
                "is not served since Karpenter v1.1"
            } else {
                "is not served since Karpenter v0.33, which replaced it with `v1beta1` (only `v1` is served since v1.1)"
            };
            let rename = if new_kind != kind {
                let article = if new_kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
                    "an"
                } else {
                    "a"
                };
                format!(", and replace the {kind} with {article} {new_kind}")
            } else {
                String::new()
            };
            // A v1 object of the new kind with the same name already replaces it: what is left
            // to do is to delete this copy.
            let successor = obj.name.and_then(|name| {
                // A NodePool the files define as such: not one a managed node group of the
                // same name stands for.
                cx.ix.named(new_kind, name).into_iter().find(|o| {
                    o.group == new_group
                        && o.version == "v1"
                        && cx.ix.files.get(o.file).is_some_and(|f| !f.is_context())
                })
            });
            // Older than the version itself: what the repository installs never served it.
            if let Some((major, minor)) = installed_karpenter_predates(cx, obj) {
                out.push(
                    cx.on(
                        obj,
                        node,
                        format!(
                            "`{av}` is not served by Karpenter v{major}.{minor}, the release this repository installs: it came with v0.32, so the API server rejects the {kind} as written"
                        ),
                    )
                    .help(format!(
                        "install Karpenter v1 and use `apiVersion: {new_group}/v1` (follow the Karpenter v1 migration guide), or write the {kind} as v{major}.{minor} serves it"
                    )),
                );
                return true;
            }
            let mut d = cx
                .on(
                    obj,
                    node,
                    if obj.version == "v1beta1" {
                        // Served up to v1.0: a pool of this version may exist in a cluster not
                        // yet upgraded, and is judged as one by the other rules.
                        format!(
                            "`{av}` {since}: from v1.1 on, the API server rejects the {kind} as written, so applying this file fails"
                        )
                    } else {
                        format!(
                            "`{av}` {since}: a current API server rejects the {kind}, so it cannot exist in an upgraded cluster"
                        )
                    },
                )
                .help(if fields.is_empty() {
                    format!(
                        "use `apiVersion: {new_group}/v1`{rename} (follow the Karpenter v1 migration guide for the changed fields)"
                    )
                } else {
                    format!(
                        "use `apiVersion: {new_group}/v1`{rename}, with the changes marked (follow the Karpenter v1 migration guide for the changed fields)"
                    )
                });
            // What the repository installs no longer serves it: certain to fail.
            if let Some((major, minor)) = installed_karpenter_beyond(cx, obj) {
                d.message = format!(
                    "`{av}` is not served by Karpenter v{major}.{minor}, the release this repository installs: the API server rejects the {kind} as written, so applying this file fails"
                );
                d = d.with_severity(crate::diag::Severity::Error);
            }
            if let Some(v1) = successor {
                let at = v1.root.at(&["metadata", "name"]).unwrap_or(v1.root);
                d = d
                    .related(v1.loc(at), format!("the v1 {new_kind} that replaces it"))
                    .help(format!(
                        "delete this leftover: {new_kind} `{}` of `{new_group}/v1` already replaces it",
                        v1.name.unwrap_or_default()
                    ));
                out.push(d);
                return true;
            }
            for f in fields {
                let step = f.help.as_deref().unwrap_or(&f.message);
                d = d.related(f.loc, format!("for v1: {step}"));
            }
            out.push(d);
            true
        }
        ("kueue.x-k8s.io", "v1alpha1" | "v1beta1") => {
            let mut notes = Vec::new();
            let spec = obj.spec();
            if kind == "ClusterQueue" {
                if spec.and_then(|s| s.get("cohort")).is_some() {
                    notes.push("rename `spec.cohort` to `spec.cohortName`");
                }
                if spec.and_then(|s| s.get("admissionChecks")).is_some() {
                    notes
                        .push("replace `spec.admissionChecks` with `spec.admissionChecksStrategy`");
                }
                let old_fungibility =
                    spec.and_then(|s| s.get("flavorFungibility"))
                        .is_some_and(|f| {
                            f.entries()
                                .any(|(_, _, v)| matches!(v.as_str(), Some("Borrow" | "Preempt")))
                        });
                if old_fungibility {
                    notes.push("replace flavorFungibility `Borrow`/`Preempt` with `MayStopSearch`");
                }
            }
            if kind == "Cohort" && spec.and_then(|s| s.get("parent")).is_some() {
                notes.push("rename `spec.parent` to `spec.parentName`");
            }
            // The release the files install serves what they wrote: v1beta1 before v0.15, and
            // the alpha kinds of its time (Topology is v1alpha1 only before v0.14); a Cohort's
            // alpha version went with v0.13, which `kueue_before_v1beta2` cannot tell apart.
            if cx.ix.kueue_before_v1beta2(obj.file)
                && (obj.version == "v1beta1" || kind != "Cohort")
            {
                return false;
            }
            let message = match (obj.version, kind) {
                ("v1alpha1", "Cohort") => format!(
                    "`{av}` Cohort is no longer served since Kueue v0.13 (Cohort moved to v1beta1): the API server rejects it"
                ),
                ("v1alpha1", _) => format!(
                    "`{av}` is an alpha version that current Kueue releases may no longer serve: the API server may reject the {kind}"
                ),
                _ => match cx.ix.kueue_release(obj.file) {
                    // The installed release still stores v1beta1: the move is the upgrade's.
                    Some((0, 15)) => format!(
                        "`{av}` is deprecated: Kueue v0.15, which this repository installs, serves it beside `kueue.x-k8s.io/v1beta2`, the storage version from v0.16 on; once v1beta1 stops being served the {kind} can no longer be applied"
                    ),
                    _ => format!(
                        "`{av}` is deprecated: `kueue.x-k8s.io/v1beta2` is the storage version since Kueue v0.16, and once v1beta1 stops being served the {kind} can no longer be applied"
                    ),
                },
            };
            let extra = if notes.is_empty() {
                String::new()
            } else {
                format!(" and {}", notes.join(", "))
            };
            // The same deprecated version again in one file: marked on the file's first finding.
            if obj.version == "v1beta1"
                && let Some(&first) = per_file.get(&obj.file)
                && let Some(d) = out.get_mut(first)
            {
                let what = match obj.name {
                    Some(n) => format!("{kind} `{n}`"),
                    None => kind.to_string(),
                };
                let notes = if notes.is_empty() {
                    String::new()
                } else {
                    format!("; {}", notes.join(", "))
                };
                d.related.push(crate::diag::Related {
                    loc: obj.loc(node),
                    message: format!("also `{av}`: {what}{notes}"),
                });
                return false;
            }
            if obj.version == "v1beta1" {
                per_file.insert(obj.file, out.len());
            }
            // Where the files name no Kueue release, the cluster may run one that serves only
            // v1beta1: the move is for v0.15 and later.
            let help = if obj.version == "v1beta1" && !cx.ix.kueue_release_known(obj.file) {
                format!(
                    "on Kueue v0.15 or later, use `apiVersion: kueue.x-k8s.io/v1beta2`{extra} (older releases and OpenShift AI 2 serve only v1beta1)"
                )
            } else if cx.ix.kueue_release(obj.file) == Some((0, 15)) {
                format!(
                    "use `apiVersion: kueue.x-k8s.io/v1beta2`{extra} before upgrading Kueue past v0.15"
                )
            } else {
                format!("use `apiVersion: kueue.x-k8s.io/v1beta2`{extra}")
            };
            out.push(cx.on(obj, node, message).help(help));
            false
        }
        _ => false,
    }
}

fn nodepool_fields(cx: &Ctx, obj: &Object, out: &mut Vec<Diagnostic>) {
    let Some(spec) = obj.spec() else { return };
    if let Some(disruption) = spec.get("disruption") {
        if let Some(policy) = disruption.get("consolidationPolicy")
            && policy.as_str() == Some("WhenUnderutilized")
        {
            out.push(
                cx.on(
                    obj,
                    policy,
                    "`consolidationPolicy: WhenUnderutilized` was removed in `karpenter.sh/v1`: the v1 schema rejects the NodePool",
                )
                .help("use `WhenEmptyOrUnderutilized` (with `consolidateAfter: 0s` for the old behaviour)")
                // On a v1 object the API server's enum refuses it: certain.
                .with_severity(if obj.version == "v1" {
                    crate::diag::Severity::Error
                } else {
                    crate::diag::Severity::Warning
                }),
            );
        }
        if let Some((key, _)) = disruption.entry("expireAfter") {
            // Written in its v1 place too: the old copy is only left over.
            let v1 = spec.at(&["template", "spec", "expireAfter"]);
            let d = match v1 {
                Some(n) => cx
                    .on(
                        obj,
                        key,
                        format!(
                            "`spec.disruption.expireAfter` was removed in `karpenter.sh/v1`{}; `spec.template.spec.expireAfter` already sets the expiry",
                            pruned(obj)
                        ),
                    )
                    .related(obj.loc(n), "the expiry v1 reads")
                    .help("delete `spec.disruption.expireAfter`"),
                None => cx
                    .on(
                        obj,
                        key,
                        format!(
                            "`spec.disruption.expireAfter` was removed in `karpenter.sh/v1`{}: nodes fall back to the default 720h expiry",
                            pruned(obj)
                        ),
                    )
                    .help("move it to `spec.template.spec.expireAfter` (changing it drifts existing nodes)"),
            };
            out.push(d);
        }
    }
    let tspec = spec.at(&["template", "spec"]);
    if let Some((key, _)) = tspec.and_then(|s| s.entry("kubelet")) {
        out.push(
            cx.on(
                obj,
                key,
                format!(
                    "`spec.template.spec.kubelet` on a NodePool was removed in `karpenter.sh/v1`{}: its settings (maxPods, reservations, eviction thresholds) no longer apply",
                    pruned(obj)
                ),
            )
            .help("move the block to `spec.kubelet` of the EC2NodeClass the NodePool references"),
        );
    }
    node_class_ref(
        cx,
        obj,
        tspec.and_then(|s| s.get("nodeClassRef")),
        "spec.template.spec.nodeClassRef",
        out,
    );
    // Node annotations Karpenter v1 no longer honours.
    let node_annotations = spec.at(&["template", "metadata", "annotations"]);
    for name in OLD_ANNOTATIONS {
        if let Some((key, _)) = node_annotations.and_then(|a| a.entry(name)) {
            out.push(
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{name}` on the NodePool's nodes was removed in Karpenter v1: it no longer keeps the nodes from being disrupted"
                    ),
                )
                .help("use `karpenter.sh/do-not-disrupt: \"true\"`"),
            );
        }
    }
}

/// What becomes of a field v1 removed, on an object already of v1: the v1 schema has no place
/// for it.
fn pruned(obj: &Object) -> &'static str {
    if obj.version == "v1" {
        " (the API server prunes it from this v1 object, and strict `kubectl apply` validation rejects it)"
    } else {
        ""
    }
}

fn node_class_ref(
    cx: &Ctx,
    obj: &Object,
    reference: Option<Node<'_>>,
    path: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Some((key, value)) = reference.and_then(|r| r.entry("apiVersion")) else {
        return;
    };
    let group = value
        .as_str()
        .and_then(|v| v.split_once('/').map(|(g, _)| g))
        .filter(|g| !g.is_empty())
        .unwrap_or("karpenter.k8s.aws");
    let mut d = cx
        .on(
            obj,
            key,
            format!(
                "`{path}.apiVersion` was renamed to `group` in `karpenter.sh/v1`: the v1 schema requires `group` and rejects the {}",
                obj.kind
            ),
        )
        .help(format!("replace it with `group: {group}` (no version)"));
    // Already v1 and no `group`: the API server certainly rejects it (`schema-violation` leaves
    // the missing `group` to this finding).
    if obj.version == "v1" && reference.and_then(|r| r.get("group")).is_none() {
        d = d.with_severity(crate::diag::Severity::Error);
    }
    out.push(d);
}

/// `karpenter.sh/do-not-evict` / `do-not-consolidate` on object and pod-template metadata.
fn old_annotations(cx: &Ctx, oi: usize, obj: &Object, out: &mut Vec<Diagnostic>) {
    let own = obj.metadata();
    let templates: Vec<_> = cx.ix.templates_of(oi).iter().collect();
    let mut metas: Vec<(Node<'_>, bool)> = Vec::new();
    if let Some(m) = own {
        // Pod metadata (a bare Pod) counts as pod-level.
        let is_pod = templates
            .iter()
            .any(|t| t.metadata.is_some_and(|tm| tm.is(m)));
        metas.push((m, is_pod));
    }
    for t in &templates {
        if let Some(m) = t.metadata
            && !own.is_some_and(|o| o.is(m))
        {
            metas.push((m, true));
        }
    }
    for (meta, pod_level) in metas {
        let Some(annotations) = meta.get("annotations") else {
            continue;
        };
        for name in OLD_ANNOTATIONS {
            let Some((key, _)) = annotations.entry(name) else {
                continue;
            };
            let help = if pod_level || templates.is_empty() {
                "use `karpenter.sh/do-not-disrupt: \"true\"` instead".to_string()
            } else {
                format!(
                    "use `karpenter.sh/do-not-disrupt: \"true\"` on the pod template (the {}'s own annotations never reach its pods)",
                    obj.kind
                )
            };
            out.push(
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{name}` was removed in Karpenter v1: it no longer keeps Karpenter from evicting the pods or consolidating their node"
                    ),
                )
                .help(help),
            );
        }
    }
}

/// The release the Karpenter installs that speak for a `v1beta1` object install, when every one
/// of them is older than v0.32, which brought `v1beta1` (the newest of them).
fn installed_karpenter_predates(cx: &Ctx, obj: &Object) -> Option<(u32, u32)> {
    let (_, newest) = installed_karpenter(cx, obj)?;
    (obj.version == "v1beta1" && newest < (0, 32)).then_some(newest)
}

/// The oldest release the Karpenter installs that speak for `obj` install, when every one of them
/// is a release that no longer serves its API version (v1beta1 from v1.1, the alpha versions
/// from v0.33): applying it there certainly fails.
fn installed_karpenter_beyond(cx: &Ctx, obj: &Object) -> Option<(u32, u32)> {
    let (oldest, _) = installed_karpenter(cx, obj)?;
    let gone = if obj.version == "v1beta1" {
        (1, 1)
    } else {
        (0, 33)
    };
    (oldest >= gone).then_some(oldest)
}

/// The oldest and newest release of the Karpenter installs that speak for `obj`, when there are
/// some and each names its release.
fn installed_karpenter(cx: &Ctx, obj: &Object) -> Option<((u32, u32), (u32, u32))> {
    let path = cx.ix.files.get(obj.file)?.path.as_str();
    let versions: Option<Vec<(u32, u32)>> = cx
        .ix
        .karpenter_installs()
        .iter()
        .filter(|i| i.covers(path))
        .map(|i| i.version)
        .collect();
    let versions = versions?;
    Some((*versions.iter().min()?, *versions.iter().max()?))
}

/// Whether the Karpenter installs that speak for `obj` (see
/// [`crate::index::Index::karpenter_installs`]) are all releases that serve its API version: a
/// v1alpha5 Provisioner (and v1alpha1 AWSNodeTemplate) up to v0.32, v1beta1 from v0.32 to v1.0.
/// The cluster then holds it as written; the move to v1 is that upgrade's work.
fn installed_karpenter_serves(cx: &Ctx, obj: &Object) -> bool {
    let Some(path) = cx.ix.files.get(obj.file).map(|f| f.path.as_str()) else {
        return false;
    };
    let serves = |v: (u32, u32)| match (obj.group, obj.version) {
        ("karpenter.sh", "v1alpha5") | ("karpenter.k8s.aws", "v1alpha1") => v < (0, 33),
        (_, "v1beta1") => ((0, 32)..(1, 1)).contains(&v),
        _ => false,
    };
    let mut near = cx
        .ix
        .karpenter_installs()
        .iter()
        .filter(|i| i.covers(path))
        .peekable();
    near.peek().is_some() && near.all(|i| i.version.is_some_and(serves))
}
