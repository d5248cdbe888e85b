//! Typed views over parsed documents. A view keeps pointers to its nodes so any field can be
//! reported at its exact span; unknown or malformed fields never break a view, they are just absent.

use crate::diag::{FileId, Loc, ObjectRef};
use crate::yaml::Node;

pub mod constraints;
pub mod dra;
pub mod kinds;
mod kueue;
pub mod kueue_config;
mod nodeclass;
pub mod nodepool;
pub mod nvidia;
mod pod;
pub mod requirements;
pub use kueue::*;
pub use nodeclass::NodeClass;
pub use nodepool::{AUTO_MODE_GROUP, NodePool};
pub use pod::*;

/// Any Kubernetes object (a document with `apiVersion` and `kind`).
#[derive(Debug)]
pub struct Object<'a> {
    pub file: FileId,
    pub root: Node<'a>,
    pub api_version: &'a str,
    /// API group (`""` for the core group).
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub name: Option<&'a str>,
    pub namespace: Option<&'a str>,
    /// Its row in the workload table, when it is a workload kind gpuops knows.
    pub workload: Option<&'static kinds::WorkloadKind>,
}

impl<'a> Object<'a> {
    /// Reads an object from a document root; `None` when it is not a Kubernetes object.
    pub fn from_node(file: FileId, root: Node<'a>) -> Option<Self> {
        let api_version = root.get("apiVersion")?.as_str()?;
        let kind = root.get("kind")?.as_str()?;
        // A strategic-merge patch that deletes or replaces an object (`$patch: delete`, kept
        // beside a kustomization that lists it) edits an object; it is none itself.
        if api_version.is_empty() || kind.is_empty() || root.get("$patch").is_some() {
            return None;
        }
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let meta = root.get("metadata");
        let text = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(|n| n.as_str())
                .filter(|s| !s.is_empty())
        };
        Some(Object {
            file,
            root,
            api_version,
            group,
            version,
            kind,
            name: text("name").or_else(|| text("generateName")),
            // A namespace still to be filled in (`<user_namespace>`, `${NS}`) is unknown, as an
            // absent one is: it matches any.
            namespace: text("namespace").filter(|n| !crate::quantity::is_placeholder(n)),
            workload: kinds::lookup(group, kind),
        })
    }

    pub fn loc(&self, node: Node<'_>) -> Loc {
        Loc {
            file: self.file,
            span: node.span(),
        }
    }
    pub fn metadata(&self) -> Option<Node<'a>> {
        self.root.get("metadata")
    }
    pub fn spec(&self) -> Option<Node<'a>> {
        self.root.get("spec")
    }
    pub fn name_or_unnamed(&self) -> &'a str {
        self.name.unwrap_or("<unnamed>")
    }
    /// The most specific node that stands for the object as a whole: its name, else its kind.
    pub fn anchor(&self) -> Node<'a> {
        self.metadata()
            .and_then(|m| m.get("name"))
            .or_else(|| self.root.get("kind"))
            .unwrap_or(self.root)
    }
    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
    pub fn labels(&self) -> Option<Node<'a>> {
        self.metadata().and_then(|m| m.get("labels"))
    }
    pub fn annotations(&self) -> Option<Node<'a>> {
        self.metadata().and_then(|m| m.get("annotations"))
    }
    pub fn label(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.labels()?.entry(key)
    }
    pub fn annotation(&self, key: &str) -> Option<(Node<'a>, Node<'a>)> {
        self.annotations()?.entry(key)
    }
    pub fn obj_ref(&self) -> ObjectRef {
        ObjectRef {
            kind: self.kind.to_string(),
            namespace: self.namespace.map(str::to_string),
            name: self.name.map(str::to_string),
        }
    }
    /// `Kind/name` or `Kind/namespace/name` for messages.
    pub fn describe(&self) -> String {
        match self.namespace {
            Some(ns) => format!("{} {}/{}", self.kind, ns, self.name_or_unnamed()),
            None => format!("{} {}", self.kind, self.name_or_unnamed()),
        }
    }
}

/// Whether a label selector (`matchLabels` + `matchExpressions`) selects pods with `labels`.
pub fn selects(selector: Node<'_>, labels: Option<Node<'_>>) -> bool {
    let value = |k: &str| labels.and_then(|l| l.get(k)).and_then(Node::as_str);
    let labels_ok = selector
        .get("matchLabels")
        .into_iter()
        .flat_map(|m| m.entries())
        .all(|(k, _, v)| v.as_str().is_some_and(|v| value(k) == Some(v)));
    let exprs_ok = selector
        .get("matchExpressions")
        .into_iter()
        .flat_map(|m| m.items())
        .all(|e| {
            let Some(key) = e.get("key").and_then(Node::as_str) else {
                return false;
            };
            let values: Vec<&str> = e
                .get("values")
                .into_iter()
                .flat_map(|v| v.items())
                .filter_map(Node::as_str)
                .collect();
            let v = value(key);
            match e.get("operator").and_then(Node::as_str) {
                Some("In") => v.is_some_and(|v| values.contains(&v)),
                Some("NotIn") => !v.is_some_and(|v| values.contains(&v)),
                Some("Exists") => v.is_some(),
                Some("DoesNotExist") => v.is_none(),
                _ => false,
            }
        });
    labels_ok && exprs_ok
}

/// Extended resources that are accelerators or devices: whole units only, never overcommitted.
pub fn is_accelerator_resource(name: &str) -> bool {
    is_gpu_resource(name)
        || name == "vpc.amazonaws.com/efa"
        || name.starts_with("aws.amazon.com/neuron")
        || name == "habana.ai/gaudi"
        || name.starts_with("google.com/tpu")
        || name.starts_with("gpu.intel.com/")
        || name.starts_with("xilinx.com/")
}

pub use crate::catalog::is_gpu_resource;

#[derive(Debug, Clone, Copy)]
pub struct Toleration<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub operator: &'a str,
    pub value: &'a str,
    pub effect: &'a str,
}

impl<'a> Toleration<'a> {
    pub fn from_node(node: Node<'a>) -> Self {
        let s = |k| node.get(k).and_then(|n| n.as_str()).unwrap_or("");
        Toleration {
            node,
            key: s("key"),
            operator: s("operator"),
            value: s("value"),
            effect: s("effect"),
        }
    }
    /// Kubernetes' ToleratesTaint: effect (empty = any), key (empty + Exists = any), then
    /// Exists or Equal (the default) on the value.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if self.key.is_empty() {
            return self.operator == "Exists";
        }
        if self.key != taint.key {
            return false;
        }
        match self.operator {
            "Exists" => true,
            "Equal" | "" => self.value == taint.value,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Taint<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub value: &'a str,
    pub effect: &'a str,
}

impl<'a> Taint<'a> {
    pub fn from_node(node: Node<'a>) -> Option<Self> {
        let s = |k| node.get(k).and_then(|n| n.as_str()).unwrap_or("");
        let key = s("key");
        if key.is_empty() {
            return None;
        }
        Some(Taint {
            node,
            key,
            value: s("value"),
            effect: s("effect"),
        })
    }
    /// NoSchedule and NoExecute keep pods off; PreferNoSchedule only steers.
    pub fn is_hard(&self) -> bool {
        matches!(self.effect, "NoSchedule" | "NoExecute")
    }
    pub fn display(&self) -> String {
        if self.value.is_empty() {
            format!("{}:{}", self.key, self.effect)
        } else {
            format!("{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A node selector requirement (pod affinity expression or NodePool requirement).
#[derive(Debug, Clone)]
pub struct Expr<'a> {
    pub node: Node<'a>,
    pub key: &'a str,
    pub op: &'a str,
    pub values: Vec<&'a str>,
}

impl<'a> Expr<'a> {
    pub fn from_node(node: Node<'a>) -> Option<Self> {
        let key = node.get("key")?.as_str()?;
        let op = node.get("operator").and_then(|n| n.as_str()).unwrap_or("");
        let mut values: Vec<&'a str> = node
            .get("values")
            .map(|v| v.items().filter_map(|n| n.as_str()).collect())
            .unwrap_or_default();
        // Every NodePool requirement holds one: at its size, not the four slots a push makes.
        values.shrink_to_fit();
        Some(Expr {
            node,
            key,
            op,
            values,
        })
    }
}

#[cfg(test)]
mod tests;
