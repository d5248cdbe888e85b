//! The views of the input document built from the index alone, without object or template
//! values: namespaces, distinct GPU images, NodePools, flavors and queues. They are built on one
//! core while the other converts templates (see `build_parts`).

use super::image_ref::ImageRef;
use super::values::{Strings, node_value, obj, opt_str, strings};
use crate::index::Index;
use crate::model::is_gpu_resource;
use crate::policy::needs::Needs;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use regorus::Value;
use std::collections::BTreeMap;

/// The views built from the index alone (no object or template values).
pub(super) struct Side {
    pub(super) namespaces: BTreeMap<Value, Value>,
    pub(super) gpu_images: BTreeMap<Value, Value>,
    /// The same images by `registry/repository`, and by tag (`""`: none), each `{image: ref}`.
    pub(super) gpu_images_by_repository: BTreeMap<Value, Value>,
    pub(super) gpu_images_by_tag: BTreeMap<Value, Value>,
    pub(super) nodepools: BTreeMap<Value, Value>,
    pub(super) flavors: BTreeMap<Value, Value>,
    pub(super) cluster_queues: BTreeMap<Value, Value>,
    pub(super) local_queues: BTreeMap<Value, Value>,
}

impl Side {
    pub(super) fn build(ix: &Index<'_>, needs: &Needs) -> Side {
        // Per namespace: its Namespace object, its objects, its GPU templates and what they ask for.
        #[derive(Default)]
        struct Ns<'x> {
            object: Option<usize>,
            objects: Vec<usize>,
            gpu_templates: Vec<usize>,
            gpu_objects: Vec<usize>,
            gpu_resources: Vec<&'x str>,
        }
        // Hashed while collecting; the view below is sorted once. Namespace names share long
        // prefixes (`team-0123`) that a sorted map would compare on every insert.
        let mut found: HashMap<&str, Ns> = HashMap::new();
        let want_namespaces = needs.key("namespaces");
        // Fields no policy reads are left out (see `Needs::field`): every object's index in
        // `objects`, every GPU container's resources in `gpu_resources`.
        let want_objects = needs.field("objects");
        let want_resources = needs.field("gpu_resources");
        for (i, o) in ix.objects.iter().enumerate().filter(|_| want_namespaces) {
            if o.is("", "Namespace")
                && let Some(n) = o.name
            {
                found.entry(n).or_default().object.get_or_insert(i);
            }
            if let Some(ns) = o.namespace {
                let e = found.entry(ns).or_default();
                if want_objects {
                    e.objects.push(i);
                }
            }
        }
        for (ti, t) in ix.templates.iter().enumerate().filter(|_| want_namespaces) {
            let Some(ns) = ix.owner(t).namespace else {
                continue;
            };
            if !t.requests_gpu() {
                continue;
            }
            let e = found.entry(ns).or_default();
            e.gpu_templates.push(ti);
            // Templates come in object order: an owner's templates are adjacent.
            if e.gpu_objects.last() != Some(&t.owner) {
                e.gpu_objects.push(t.owner);
            }
            for c in t.containers.iter().filter(|_| want_resources) {
                for (name, _) in c.accelerators() {
                    if is_gpu_resource(name) && !e.gpu_resources.contains(&name) {
                        e.gpu_resources.push(name);
                    }
                }
            }
        }
        let indices =
            |v: &[usize]| Value::from(v.iter().map(|&i| Value::from(i as u64)).collect::<Vec<_>>());
        let namespaces: BTreeMap<Value, Value> = found
            .into_iter()
            .map(|(name, mut n)| {
                n.gpu_resources.sort_unstable();
                let mut fields = vec![
                    ("name", Value::from(name)),
                    (
                        "object",
                        n.object.map_or(Value::Null, |i| Value::from(i as u64)),
                    ),
                ];
                if want_objects {
                    fields.push(("objects", indices(&n.objects)));
                }
                fields.push(("gpu_templates", indices(&n.gpu_templates)));
                fields.push(("gpu_objects", indices(&n.gpu_objects)));
                if want_resources {
                    fields.push(("gpu_resources", strings(n.gpu_resources)));
                }
                let facts = obj(fields);
                (Value::from(name), facts)
            })
            .collect();

        let want_images = needs.key("gpu_images");
        let want_by_repository = needs.key("gpu_images_by_repository");
        let want_by_tag = needs.key("gpu_images_by_tag");
        let mut images: HashSet<&str> = HashSet::new();
        for t in ix
            .templates
            .iter()
            .filter(|t| (want_images || want_by_repository || want_by_tag) && t.requests_gpu())
        {
            for c in &t.containers {
                if let Some(image) = c.get("image").and_then(|n| n.as_str()) {
                    images.insert(image);
                }
            }
        }
        let mut image_strings = Strings::default();
        // Each distinct image of a GPU container, read once: a monorepo has thousands (one per
        // team and version) and tens of thousands of containers, which a policy would otherwise
        // walk. Hashed and grouped, then sorted once (references share long prefixes). By
        // repository and by tag, a policy judges a registry once per repository, and finds the
        // images on a given tag without walking the others.
        let mut gpu_images = Vec::new();
        let mut by_repository: HashMap<String, Vec<(Value, Value)>> = HashMap::new();
        let mut by_tag: HashMap<&str, Vec<(Value, Value)>> = HashMap::new();
        for image in images {
            let parsed = ImageRef::parse(image);
            let facts = parsed
                .as_ref()
                .map_or(Value::Null, |r| r.value(&mut image_strings));
            let key = Value::from(image);
            // A reference that cannot be read (a placeholder) has no repository nor tag.
            if let Some(r) = &parsed {
                if want_by_repository {
                    by_repository
                        .entry(r.name())
                        .or_default()
                        .push((key.clone(), facts.clone()));
                }
                if want_by_tag {
                    by_tag
                        .entry(r.tag)
                        .or_default()
                        .push((key.clone(), facts.clone()));
                }
            }
            if want_images {
                gpu_images.push((key, facts));
            }
        }
        drop(image_strings);
        let gpu_images: BTreeMap<Value, Value> = gpu_images.into_iter().collect();
        let grouped = |groups: Vec<(Value, Vec<(Value, Value)>)>| -> BTreeMap<Value, Value> {
            groups
                .into_iter()
                .map(|(k, v)| (k, Value::from(v.into_iter().collect::<BTreeMap<_, _>>())))
                .collect()
        };
        let gpu_images_by_repository = grouped(
            by_repository
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        );
        let gpu_images_by_tag = grouped(
            by_tag
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        );

        let mut nodepools = BTreeMap::new();
        for p in ix.nodepools.iter().filter(|_| needs.key("nodepools")) {
            let key = Value::from(p.name);
            if nodepools.contains_key(&key) {
                continue;
            }
            let bounded = crate::sched::bounded_instances(p);
            let gpu_names = bounded.as_ref().map(|b| {
                let mut n: Vec<&str> = b.iter().map(|i| i.gpu_name).collect();
                n.sort_unstable();
                n.dedup();
                strings(n)
            });
            let types = bounded
                .as_ref()
                .filter(|_| needs.field("instance_types"))
                .map(|b| strings(b.iter().map(|i| i.instance_type)));
            let gpu = match crate::sched::gpu_capability(p) {
                crate::sched::GpuCapability::Explicit => "explicit",
                crate::sched::GpuCapability::Possible => "possible",
                crate::sched::GpuCapability::None => "none",
            };
            nodepools.insert(
                key,
                obj(vec![
                    ("name", Value::from(p.name)),
                    ("object", Value::from(p.obj as u64)),
                    ("gpu", Value::from(gpu)),
                    ("instance_types", types.unwrap_or(Value::Null)),
                    ("gpu_names", gpu_names.unwrap_or(Value::Null)),
                    ("capacity_types", strings(p.capacity_types())),
                ]),
            );
        }
        let mut flavors = BTreeMap::new();
        for f in ix.flavors.iter().filter(|_| needs.key("flavors")) {
            flavors.entry(Value::from(f.name)).or_insert_with(|| {
                obj(vec![
                    ("name", Value::from(f.name)),
                    ("object", Value::from(f.obj as u64)),
                    (
                        "node_labels",
                        f.node_labels_node.map_or(Value::new_object(), node_value),
                    ),
                ])
            });
        }
        let mut cluster_queues = BTreeMap::new();
        for q in ix
            .cluster_queues
            .iter()
            .filter(|_| needs.key("cluster_queues"))
        {
            let mut names: Vec<&str> = Vec::new();
            for (n, _, _) in &q.flavors {
                if !names.contains(n) {
                    names.push(n);
                }
            }
            cluster_queues
                .entry(Value::from(q.name))
                .or_insert_with(|| {
                    obj(vec![
                        ("name", Value::from(q.name)),
                        ("object", Value::from(q.obj as u64)),
                        ("flavors", strings(names)),
                    ])
                });
        }
        let mut local_queues = BTreeMap::new();
        for q in ix.local_queues.iter().filter(|_| needs.key("local_queues")) {
            let key = format!("{}/{}", q.namespace.unwrap_or(""), q.name);
            local_queues.entry(Value::from(key)).or_insert_with(|| {
                obj(vec![
                    ("name", Value::from(q.name)),
                    ("namespace", opt_str(q.namespace)),
                    ("object", Value::from(q.obj as u64)),
                    (
                        "cluster_queue",
                        opt_str(q.cluster_queue.and_then(|n| n.as_str())),
                    ),
                ])
            });
        }

        Side {
            namespaces,
            gpu_images,
            gpu_images_by_repository,
            gpu_images_by_tag,
            nodepools,
            flavors,
            cluster_queues,
            local_queues,
        }
    }
}
