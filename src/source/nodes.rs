//! The Nodes of a cluster's context (`gpuops context pull`, `--live`, a `kubectl get nodes -o
//! yaml` dump) as capacity pods schedule on: nodes with the same labels (their hostname aside) and
//! taints become one NodePool-shaped object of their instance type, labels, taints and summed
//! capacity, marked as made from Nodes. A pod that fits a node that exists is not reported as
//! unschedulable, and `why` and `cost` count the nodes.
//!
//! Cordoned nodes (`spec.unschedulable`) take no new pods and are left out, and so are nodes
//! Karpenter launched for a NodePool the same context holds (that pool stands for them).

use super::SourceFile;
use crate::model::nodepool::{DEFINED_BY, EKS_NODE_GROUP, NODE};
use crate::yaml::{Document, Node, Shape, construct};
use std::collections::BTreeMap;

/// Labels each node has a value of its own for: they do not tell node groups apart.
const PER_NODE: [&str; 2] = ["kubernetes.io/hostname", "karpenter.sh/nodeclaim"];

/// Adds to every context file the pools its Nodes make.
pub fn derive(files: &mut [SourceFile]) {
    for f in files.iter_mut().filter(|f| f.is_context()) {
        let pools = pools_of(f);
        f.docs.extend(pools);
    }
}

/// The objects of a kind in a file: documents, or the items of a `kind: List`.
fn of_kind<'f>(f: &'f SourceFile, kind: &str) -> Vec<Node<'f>> {
    let mut out = Vec::new();
    for d in &f.docs {
        let root = d.root();
        match root.str_at(&["kind"]) {
            Some(k) if k == kind => out.push(root),
            Some(k) if k.ends_with("List") => out.extend(
                root.get("items")
                    .into_iter()
                    .flat_map(|i| i.items())
                    .filter(|i| i.str_at(&["kind"]) == Some(kind)),
            ),
            _ => {}
        }
    }
    out
}

/// One group of alike nodes: the first one and every node's capacity.
struct Group<'a> {
    first: Node<'a>,
    capacity: Vec<Node<'a>>,
}

fn pools_of(f: &SourceFile) -> Vec<Document> {
    // A node Karpenter launched for a NodePool in the same context is that pool's capacity
    // already (pulled together): a pool of its own would count it twice.
    let nodepools: Vec<&str> = of_kind(f, "NodePool")
        .into_iter()
        .filter_map(|p| p.str_at(&["metadata", "name"]))
        .collect();
    let mut groups: BTreeMap<String, Group<'_>> = BTreeMap::new();
    for n in of_kind(f, "Node") {
        let cordoned = n
            .at(&["spec", "unschedulable"])
            .and_then(|u| u.as_str())
            .is_some_and(|u| u == "true");
        let karpenter = n
            .at(&["metadata", "labels"])
            .and_then(|l| l.get("karpenter.sh/nodepool"))
            .and_then(|v| v.as_str())
            .is_some_and(|p| nodepools.contains(&p));
        if cordoned || karpenter || n.str_at(&["metadata", "name"]).is_none() {
            continue;
        }
        let g = groups.entry(signature(n)).or_insert(Group {
            first: n,
            capacity: Vec::new(),
        });
        // Karpenter's limits count node capacity; allocatable when that is all there is.
        g.capacity.extend(
            n.at(&["status", "capacity"])
                .or_else(|| n.at(&["status", "allocatable"])),
        );
    }
    groups.values().map(|g| pool(g, f)).collect()
}

/// What makes two nodes alike for scheduling: labels but the per-node ones, and taints.
fn signature(n: Node<'_>) -> String {
    let mut labels: Vec<String> = n
        .at(&["metadata", "labels"])
        .into_iter()
        .flat_map(|l| l.entries())
        .filter(|(k, _, _)| !PER_NODE.contains(k))
        .map(|(k, _, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    labels.sort();
    let taints: Vec<String> = n
        .at(&["spec", "taints"])
        .into_iter()
        .flat_map(|t| t.items())
        .map(|t| {
            format!(
                "{}={}:{}",
                t.str_at(&["key"]).unwrap_or_default(),
                t.str_at(&["value"]).unwrap_or_default(),
                t.str_at(&["effect"]).unwrap_or_default()
            )
        })
        .collect();
    format!("{}|{}", labels.join(","), taints.join(","))
}

fn pool(g: &Group<'_>, f: &SourceFile) -> Document {
    let n = g.first;
    let at = n.get("metadata").map_or(n.span(), |m| m.span());
    let key = |k: &str| Shape::str(at, k);
    let map = |entries| Shape::Map { span: at, entries };
    let labels = n.at(&["metadata", "labels"]);
    let label = |k: &str| labels.and_then(|l| l.get(k));
    let defined_by = if label("eks.amazonaws.com/nodegroup").is_some() {
        EKS_NODE_GROUP
    } else {
        NODE
    };
    let name = label("eks.amazonaws.com/nodegroup")
        .or_else(|| n.at(&["metadata", "name"]))
        .map_or(Shape::str(at, "node"), Shape::Copy);
    let mut spec = Vec::new();
    if let Some(t) = label("node.kubernetes.io/instance-type")
        .or_else(|| label("beta.kubernetes.io/instance-type"))
    {
        spec.push((
            key("requirements"),
            Shape::Seq {
                span: t.span(),
                items: vec![map(vec![
                    (
                        key("key"),
                        Shape::str(t.span(), "node.kubernetes.io/instance-type"),
                    ),
                    (key("operator"), Shape::str(t.span(), "In")),
                    (
                        key("values"),
                        Shape::Seq {
                            span: t.span(),
                            items: vec![Shape::Copy(t)],
                        },
                    ),
                ])],
            },
        ));
    }
    if let Some(t) = n.at(&["spec", "taints"]).filter(|t| t.as_seq().is_some()) {
        spec.push((key("taints"), Shape::Copy(t)));
    }
    let mut template = Vec::new();
    if let Some(l) = labels.filter(|l| l.as_map().is_some()) {
        template.push((key("metadata"), map(vec![(key("labels"), Shape::Copy(l))])));
    }
    template.push((key("spec"), map(spec)));
    let mut pool_spec = vec![(key("template"), map(template))];
    if let Some(l) = limits(&g.capacity, at) {
        pool_spec.push((key("limits"), l));
    }
    let root = map(vec![
        (key("apiVersion"), Shape::str(at, "karpenter.sh/v1")),
        (key("kind"), Shape::str(at, "NodePool")),
        (
            key("metadata"),
            map(vec![
                (key("name"), name),
                (
                    key("annotations"),
                    map(vec![(key(DEFINED_BY), Shape::str(at, defined_by))]),
                ),
            ]),
        ),
        (key("spec"), map(pool_spec)),
    ]);
    construct(f.text.clone(), &root)
}

/// The group's summed capacity of cpu and GPUs: what its nodes hold.
fn limits(capacity: &[Node<'_>], at: crate::yaml::Span) -> Option<Shape<'static>> {
    let mut entries = Vec::new();
    // Memory is left out: a kubelet reports less than the instance's nominal memory, so it would
    // count fewer nodes than there are.
    for res in ["cpu", "nvidia.com/gpu"] {
        let mut milli: i128 = 0;
        for c in capacity {
            match c
                .get(res)
                .and_then(|v| v.as_str())
                .and_then(crate::quantity::parse)
            {
                Some(q) => milli += q.0,
                None if res == "nvidia.com/gpu" => {}
                None => return None,
            }
        }
        if res == "nvidia.com/gpu" && milli == 0 {
            continue;
        }
        entries.push((
            Shape::str(at, res),
            Shape::plain(at, (milli / 1000).to_string()),
        ));
    }
    Some(Shape::Map { span: at, entries })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Role, SourceFile};

    const NODES: &str = "apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-1-1
      labels:
        kubernetes.io/hostname: ip-10-0-1-1
        node.kubernetes.io/instance-type: g5.12xlarge
        eks.amazonaws.com/nodegroup: gpu
    spec:
      taints:
        - key: nvidia.com/gpu
          value: \"true\"
          effect: NoSchedule
    status:
      capacity:
        cpu: \"48\"
        memory: 195784220Ki
        nvidia.com/gpu: \"4\"
      allocatable:
        cpu: 47810m
        memory: 186897004Ki
        nvidia.com/gpu: \"4\"
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-1-2
      labels:
        kubernetes.io/hostname: ip-10-0-1-2
        node.kubernetes.io/instance-type: g5.12xlarge
        eks.amazonaws.com/nodegroup: gpu
    spec:
      taints:
        - key: nvidia.com/gpu
          value: \"true\"
          effect: NoSchedule
    status:
      capacity:
        cpu: \"48\"
        nvidia.com/gpu: \"4\"
      allocatable:
        cpu: 47810m
        memory: 186897004Ki
        nvidia.com/gpu: \"4\"
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: spot-gpu
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-5-5
      labels:
        kubernetes.io/hostname: ip-10-0-5-5
        node.kubernetes.io/instance-type: g6.xlarge
        karpenter.sh/nodepool: spot-gpu
  - apiVersion: v1
    kind: Node
    metadata:
      name: ip-10-0-9-9
      labels:
        kubernetes.io/hostname: ip-10-0-9-9
        node.kubernetes.io/instance-type: m5.large
    spec:
      unschedulable: true
";

    #[test]
    fn alike_nodes_are_one_pool_of_their_labels_taints_and_summed_capacity() {
        let mut f = SourceFile::from_text("ctx.yaml".into(), NODES.into());
        f.role = Role::Context { cluster: None };
        let mut files = vec![f];
        derive(&mut files);
        let pools: Vec<_> = files[0].docs.iter().skip(1).map(|d| d.root()).collect();
        // The two GPU nodes are one pool; the cordoned node and the one of NodePool spot-gpu
        // (in the same context) are none.
        assert_eq!(pools.len(), 1);
        let p = pools[0];
        assert_eq!(p.str_at(&["metadata", "name"]), Some("gpu"));
        assert_eq!(
            p.str_at(&["metadata", "annotations", DEFINED_BY]),
            Some(EKS_NODE_GROUP)
        );
        assert_eq!(p.str_at(&["spec", "limits", "nvidia.com/gpu"]), Some("8"));
        assert_eq!(p.str_at(&["spec", "limits", "cpu"]), Some("96"));
        let v = p
            .at(&["spec", "template", "spec", "requirements"])
            .and_then(|r| r.items().next())
            .and_then(|r| r.get("values"))
            .and_then(|v| v.items().next());
        assert_eq!(v.and_then(|v| v.as_str()), Some("g5.12xlarge"));
    }

    #[test]
    fn linted_files_are_left_alone() {
        let mut files = vec![SourceFile::from_text("nodes.yaml".into(), NODES.into())];
        derive(&mut files);
        assert_eq!(files[0].docs.len(), 1);
    }
}
