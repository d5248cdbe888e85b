//! Cross-field rules the API enforces beyond types: the CRDs' CEL `x-kubernetes-validations`,
//! Kueue's webhook and core validation, written out for the rules that matter in practice.

use super::check::Violation;
use super::names;
use crate::quantity::is_placeholder;
use crate::yaml::Node;

mod karpenter;
mod kueue;
mod pod;

pub use karpenter::{ec2nodeclass, nodepool, nodepool_names, restricted_label};
pub use kueue::{cluster_queue, namespace_selector, preemption, resource_flavor, resource_groups};
use pod::toleration_names;
pub use pod::{node_affinity, pod_names, tolerations};

fn text(n: Option<Node<'_>>) -> Option<&str> {
    n.and_then(Node::as_str)
        .filter(|s| !s.is_empty() && !is_placeholder(s))
}

fn push<'a>(out: &mut Vec<Violation<'a>>, node: Node<'a>, message: String, help: Option<&str>) {
    out.push(Violation {
        node,
        message,
        help: help.map(str::to_string),
    });
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
    if let Some(n) = root.at(&["metadata", "name"])
        && let Some(name) = judged(n).filter(|s| !s.is_empty())
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
