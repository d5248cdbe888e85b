//! Cross-field rules the API enforces beyond types: the CRDs' CEL `x-kubernetes-validations`,
//! Kueue's webhook and core validation, written out for the rules that matter in practice.

use super::check::Violation;
use super::names;
use crate::quantity::is_placeholder;
use crate::yaml::Node;

mod ec2nodeclass;
mod karpenter;
mod kueue;
mod kueue_webhook;
mod pod;

use ec2nodeclass::ec2nodeclass;
pub use karpenter::restricted_label;
use karpenter::{nodeclaim, nodepool, nodepool_names};
use pod::toleration_names;
pub use pod::{node_affinity, pod_names, pod_volumes, selector_matches, tolerations};

/// The field naming a ClusterQueue's cohort in this API version.
fn cohort_field(version: &str) -> &'static str {
    if version == "v1beta1" {
        "cohort"
    } else {
        "cohortName"
    }
}

/// The cross-field rules of an object whose kind has a built-in schema: its CRD's CEL rules
/// (written out here), then the admission webhooks' checks ([`webhook_rules`]).
pub fn object_rules<'a>(
    group: &str,
    kind: &str,
    version: &str,
    root: Node<'a>,
    out: &mut Vec<Violation<'a>>,
) {
    object_name(root, kind, out);
    if (group, kind) == ("kueue.x-k8s.io", "WorkloadPriorityClass") {
        kueue::workload_priority_class(root, out);
    }
    let Some(spec) = root.get("spec").filter(|s| s.as_map().is_some()) else {
        return;
    };
    match (group, kind) {
        ("karpenter.sh", "NodePool") => nodepool(spec, out),
        ("karpenter.sh", "NodeClaim") => nodeclaim(spec, out),
        ("karpenter.k8s.aws", "EC2NodeClass") => ec2nodeclass(spec, out),
        ("kueue.x-k8s.io", "ClusterQueue") => {
            kueue::flavor_resource_counts(spec, kind, out);
            kueue::borrowing_limits(spec, cohort_field(version), out);
            kueue::preemption(spec, out);
            kueue::flavor_fungibility(spec, out);
        }
        ("kueue.x-k8s.io", "Cohort") => kueue::flavor_resource_counts(spec, kind, out),
        ("kueue.x-k8s.io", "ResourceFlavor") => {
            if let Some(t) = spec.get("tolerations") {
                tolerations(t, "spec.tolerations", kind, true, out);
            }
            kueue::resource_flavor_values(spec, out);
            kueue::resource_flavor_topology(spec, out);
        }
        ("kueue.x-k8s.io", "Topology") => kueue::topology(spec, out),
        ("kueue.x-k8s.io", "ProvisioningRequestConfig") => {
            kueue::provisioning_request_config(spec, version, out);
        }
        _ => {}
    }
    webhook_rules(group, kind, version, root, out);
}

/// The checks of the validating webhooks gpuops knows (Kueue's) and of Karpenter's validation
/// after apply, which apply whether the kind's CRD is in view or not: no CRD schema or CEL rule
/// expresses them.
pub fn webhook_rules<'a>(
    group: &str,
    kind: &str,
    version: &str,
    root: Node<'a>,
    out: &mut Vec<Violation<'a>>,
) {
    let Some(spec) = root.get("spec").filter(|s| s.as_map().is_some()) else {
        return;
    };
    if (group, kind) == ("karpenter.sh", "NodePool") {
        // Not a webhook: Karpenter's own validation after apply, which no CRD expresses either.
        nodepool_names(spec, out);
        return;
    }
    if group != "kueue.x-k8s.io" {
        return;
    }
    match kind {
        "ClusterQueue" => {
            kueue_webhook::resource_groups(spec, kind, cohort_field(version), out);
            if let Some(sel) = spec.get("namespaceSelector") {
                kueue_webhook::namespace_selector(sel, out);
            }
            kueue_webhook::fair_sharing(spec, kind, out);
            kueue_webhook::totals(spec, out);
            kueue_webhook::admission_check_flavors(spec, out);
        }
        "Cohort" => {
            kueue_webhook::resource_groups(spec, kind, "parentName", out);
            kueue_webhook::fair_sharing(spec, kind, out);
        }
        "ResourceFlavor" => kueue_webhook::resource_flavor(spec, out),
        _ => {}
    }
}

fn text(n: Option<Node<'_>>) -> Option<&str> {
    n.and_then(Node::as_str)
        .filter(|s| !s.is_empty() && !is_placeholder(s))
}

fn push<'a>(out: &mut Vec<Violation<'a>>, node: Node<'a>, message: String, help: Option<&str>) {
    out.push(Violation {
        node,
        message,
        help: help.map(str::to_string),
        unknown: false,
    });
}

/// How a finding names a CRD's CEL rule: the layer and the rule's own message.
fn cel_layer(kind: &str, message: &str) -> String {
    format!("the API server rejects the {kind} (CEL rule: {message})")
}

/// How a finding names a check of Kueue's validating webhook, with its message.
fn webhook_layer(kind: &str, message: &str) -> String {
    format!("Kueue's webhook rejects the {kind} ({message})")
}

/// A label key, label value or name that fails one of [`names`]'s rules: `what` names it
/// (`requirement key`), `layer` says who rejects it.
fn name_finding<'a>(
    out: &mut Vec<Violation<'a>>,
    node: Node<'a>,
    what: &str,
    value: &str,
    reason: &str,
    layer: &str,
) {
    push(
        out,
        node,
        format!("{what} `{value}` is invalid: {reason}; {layer}"),
        None,
    );
}

/// The text of a scalar a rule can judge: not a placeholder, not a collection.
fn judged(n: Node<'_>) -> Option<&str> {
    n.as_str().filter(|s| !is_placeholder(s))
}

/// `metadata.name` of a kind whose names the API server checks as DNS subdomains (every custom
/// resource, and PriorityClass).
pub fn object_name<'a>(root: Node<'a>, kind: &str, out: &mut Vec<Violation<'a>>) {
    // A name ending in `-` is a prefix that a program completes (a timestamp, a run id), as the
    // API server completes `generateName`: never applied as it is.
    if let Some(n) = root.at(&["metadata", "name"])
        && let Some(name) = judged(n).filter(|s| !s.is_empty() && !s.ends_with('-'))
        && let Some(why) = names::dns_subdomain(name)
    {
        name_finding(
            out,
            n,
            "`metadata.name`",
            name,
            &format!("{why} (a DNS subdomain)"),
            &format!("the API server rejects the {kind}"),
        );
    }
}
