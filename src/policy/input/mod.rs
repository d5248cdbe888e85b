//! The input document policies read, built once per cluster index and shared by every policy.
//!
//! Versioned by [`INPUT_VERSION`]; `docs/policies.md` ("The input document") documents every
//! field. Objects are the manifests as Kubernetes reads them (YAML 1.1 scalars resolved: `8` is
//! a number, `"8"` a string, `yes` a boolean) with a `gpuops` key added for what the file cannot
//! say (index, file, cluster); derived facts (pod templates, GPU requests, intent, queues,
//! landing NodePools) are the index's, so policies never re-derive Kubernetes semantics.

use crate::index::Index;
use crate::intent::IntentKind;
use crate::model::{Container, gpus_per_pod, is_gpu_resource};
use foldhash::{HashMap, HashMapExt};
use rayon::prelude::*;
use regorus::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;

pub use super::needs::Needs;
pub use paths::{Seg, path_to, resolve};
pub use values::{Strings, node_json, node_value};

mod image_ref;
mod paths;
mod side;
mod values;

use image_ref::ImageRef;
use side::Side;
use values::{obj, opt_str};

/// Bumped when a field changes meaning or goes away (additions keep it).
pub const INPUT_VERSION: &str = "gpuops.dev/policy-input/v1";

fn intent_name(k: IntentKind) -> &'static str {
    match k {
        IntentKind::Training => "training",
        IntentKind::Inference => "inference",
        IntentKind::Benchmark => "benchmark",
        IntentKind::SmokeTest => "smoke-test",
        IntentKind::Compile => "compile",
        IntentKind::Other => "other",
    }
}

/// Builds the input document of one cluster's index. Objects are converted in parallel, once;
/// the views (`by_kind`, `gpu_templates`) share them.
pub fn build(ix: &Index<'_>, cluster: Option<&str>) -> Value {
    build_parts(ix, cluster, &Needs::everything()).0
}

/// The parts of the document `needs` asks for (see [`Needs`]), with the objects and pod
/// templates kept aside: dropping them in parallel after the document halves the time freeing
/// hundreds of thousands of values takes.
pub fn build_parts(ix: &Index<'_>, cluster: Option<&str>, needs: &Needs) -> (Value, Vec<Value>) {
    let want_objects = needs.key("objects");
    let want_kinds = needs.key("by_kind");
    let want_templates = needs.key("templates");
    let want_by_namespace = needs.key("gpu_templates_by_namespace");
    let want_by_template_kind = needs.key("gpu_templates_by_kind");
    let want_gpu_templates =
        needs.key("gpu_templates") || want_by_namespace || want_by_template_kind;
    // The views that read only the index are built beside the conversion of objects and
    // templates: one core takes them while the other starts on the templates.
    let ((objects, templates), side) = rayon::join(
        || {
            // Each object's templates, for the objects converted (none when only views are read).
            let mut owned: Vec<Vec<usize>> = vec![Vec::new(); ix.objects.len()];
            let converted =
                |o: &crate::model::Object<'_>| want_objects || (want_kinds && needs.kind(o.kind));
            for (ti, t) in ix.templates.iter().enumerate() {
                if !ix.objects.get(t.owner).is_some_and(converted) {
                    continue;
                }
                if let Some(v) = owned.get_mut(t.owner) {
                    v.push(ti);
                }
            }
            // Objects not needed stay `Null` placeholders that are never put in the document.
            let objects: Vec<Value> = ix
                .objects
                .par_iter()
                .enumerate()
                .map_init(Strings::default, |strings, (i, o)| {
                    if converted(o) {
                        object(ix, strings, i, o, cluster, &owned[i])
                    } else {
                        Value::Null
                    }
                })
                .collect();
            let fields = Fields::new(needs);
            // PodDisruptionBudgets with a selector, by namespace (`None`: none written, which
            // matches any); each selector is read here once, not once per template.
            let mut pdbs: Pdbs = HashMap::new();
            if fields.wants("pdbs") {
                for (i, o) in ix.objects.iter().enumerate() {
                    if o.is("policy", "PodDisruptionBudget")
                        && let Some(sel) = o.spec().and_then(|s| s.get("selector"))
                    {
                        pdbs.entry(o.namespace).or_default().push((i, sel));
                    }
                }
            }
            let shared = Shared::default();
            let templates: Vec<Value> = (0..ix.templates.len())
                .into_par_iter()
                .map_init(Worker::default, |worker, ti| {
                    if want_templates || (want_gpu_templates && ix.templates[ti].requests_gpu()) {
                        template(ix, ti, &pdbs, &shared, &fields, worker)
                    } else {
                        Value::Null
                    }
                })
                .collect();
            drop(shared);
            (objects, templates)
        },
        || Side::build(ix, needs),
    );

    let mut by_kind: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    if want_kinds {
        for (o, v) in ix.objects.iter().zip(&objects) {
            if needs.kind(o.kind) {
                by_kind.entry(o.kind).or_default().push(v.clone());
            }
        }
    }
    let gpu_templates: Vec<Value> = ix
        .templates
        .iter()
        .zip(&templates)
        .filter(|(t, _)| t.requests_gpu())
        .map(|(_, v)| v.clone())
        .collect();
    // The same facts by namespace: a namespace-scoped policy walks its namespaces' templates
    // instead of every template (a tenth of the namespaces listed: a tenth of the work).
    let mut by_namespace: HashMap<&str, Vec<Value>> = HashMap::new();
    // And by their workload's kind: a policy about Deployments walks only theirs.
    let mut by_template_kind: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    if want_by_namespace || want_by_template_kind {
        for (t, v) in ix.templates.iter().zip(&templates) {
            if !t.requests_gpu() {
                continue;
            }
            let owner = ix.owner(t);
            if want_by_namespace && let Some(ns) = owner.namespace {
                by_namespace.entry(ns).or_default().push(v.clone());
            }
            if want_by_template_kind {
                by_template_kind
                    .entry(owner.kind)
                    .or_default()
                    .push(v.clone());
            }
        }
    }
    let by_namespace: BTreeMap<&str, Vec<Value>> = by_namespace.into_iter().collect();

    let mut entries = vec![
        ("version", Value::from(INPUT_VERSION)),
        ("cluster", opt_str(cluster)),
        (
            "settings",
            obj(vec![
                ("eks", Value::from(ix.settings.eks)),
                ("karpenter", Value::from(ix.uses_karpenter())),
            ]),
        ),
        (
            "objects",
            if want_objects {
                Value::from(objects.clone())
            } else {
                Value::Null
            },
        ),
        ("by_kind", keyed(by_kind)),
        (
            "templates",
            if want_templates {
                Value::from(templates.clone())
            } else {
                Value::Null
            },
        ),
        ("gpu_templates", Value::from(gpu_templates)),
        ("gpu_templates_by_namespace", keyed(by_namespace)),
        ("gpu_templates_by_kind", keyed(by_template_kind)),
        ("gpu_images", Value::from(side.gpu_images)),
        (
            "gpu_images_by_repository",
            Value::from(side.gpu_images_by_repository),
        ),
        ("gpu_images_by_tag", Value::from(side.gpu_images_by_tag)),
        ("namespaces", Value::from(side.namespaces)),
        ("nodepools", Value::from(side.nodepools)),
        ("flavors", Value::from(side.flavors)),
        ("cluster_queues", Value::from(side.cluster_queues)),
        ("local_queues", Value::from(side.local_queues)),
    ];
    entries.retain(|(k, _)| needs.key(k) || matches!(*k, "version" | "cluster" | "settings"));
    let mut aside = objects;
    aside.extend(templates);
    (obj(entries), aside)
}

/// A Rego object keyed by names.
fn keyed<V: Into<Value>>(m: BTreeMap<&str, V>) -> Value {
    Value::from(
        m.into_iter()
            .map(|(k, v)| (Value::from(k), v.into()))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn object<'a>(
    ix: &Index<'a>,
    strings: &mut Strings,
    i: usize,
    o: &crate::model::Object<'a>,
    cluster: Option<&str>,
    templates: &[usize],
) -> Value {
    let mut m: BTreeMap<Value, Value> = BTreeMap::new();
    for (k, _, v) in o.root.entries() {
        // Runtime state, not what the repository declares.
        if k == "status" {
            continue;
        }
        m.insert(strings.get(k), strings.node(v));
    }
    m.insert(
        Value::from("gpuops"),
        obj(vec![
            ("index", Value::from(i as u64)),
            (
                "file",
                Value::from(ix.files.get(o.file).map_or("", |f| f.path.as_str())),
            ),
            ("cluster", opt_str(cluster)),
            ("group", Value::from(o.group)),
            ("version", Value::from(o.version)),
            (
                "templates",
                Value::from(
                    templates
                        .iter()
                        .map(|&t| Value::from(t as u64))
                        .collect::<Vec<_>>(),
                ),
            ),
        ]),
    );
    Value::from(m)
}

fn container(
    c: &Container<'_>,
    gpus: u64,
    spec_path: &Value,
    index: usize,
    fields: &Fields,
    strings: &mut Strings,
) -> Value {
    let list = if c.init {
        "initContainers"
    } else {
        "containers"
    };
    let path = strings.container_path(spec_path, list, index);
    let mut resources = BTreeMap::new();
    let mut gpu_resources = Vec::new();
    let mut gpu_path = Value::Null;
    let accelerators = fields.wants("accelerators");
    if accelerators || fields.wants("gpu_resources") || fields.wants("gpu_path") {
        for (name, _) in c.accelerators() {
            let (which, q) = match c.limits.and_then(|l| l.get(name)) {
                Some(q) => ("limits", Some(q)),
                None => ("requests", c.requests.and_then(|r| r.get(name))),
            };
            if let Some(q) = q.filter(|_| accelerators) {
                resources.insert(strings.get(name), strings.node(q));
            }
            if is_gpu_resource(name) {
                gpu_resources.push(strings.get(name));
                if gpu_path == Value::Null {
                    gpu_path = strings.resource_path(&path, which, name);
                }
            }
        }
    }
    let image = c.get("image").and_then(|n| n.as_str());
    let mut e = Entries::new(fields);
    e.put("name", || strings.opt(c.name));
    e.put("init", || Value::from(c.init));
    e.put("image", || strings.opt(image));
    e.put("image_ref", || {
        image.map_or(Value::Null, |image| {
            strings.image(image, |strings| {
                ImageRef::parse(image).map_or(Value::Null, |r| r.value(strings))
            })
        })
    });
    e.put("path", || path);
    e.put("gpus", || Value::from(gpus));
    e.put("gpu_resources", || Value::from(gpu_resources));
    e.put("gpu_path", || gpu_path);
    e.put("accelerators", || Value::from(resources));
    e.done()
}

/// The GPUs a template's DRA claims give one pod: per GPU request of a claim, its device class,
/// count (null for `allocationMode: All` or alternatives of different counts), the claim object
/// and the resource Kueue charges it to.
fn dra_gpus(ix: &Index<'_>, t: &crate::model::PodTemplate<'_>, strings: &mut Strings) -> Value {
    let gpus: Vec<Value> = t
        .dra_gpus()
        .iter()
        .map(|g| {
            let claim = ix.objects.get(g.source);
            obj(vec![
                ("class", strings.get(g.class)),
                ("count", g.count.map_or(Value::Null, Value::from)),
                ("request", strings.opt(g.request)),
                ("claim_kind", strings.opt(claim.map(|c| c.kind))),
                ("claim_name", strings.opt(claim.and_then(|c| c.name))),
                ("claim_object", Value::from(g.source as u64)),
                ("per_pod", Value::from(g.per_pod)),
                ("kueue_resource", strings.opt(g.kueue_resource.as_deref())),
            ])
        })
        .collect();
    Value::from(gpus)
}

/// The fields of template and container facts to build: those the policies name
/// ([`Needs::field`]), in a hash set since every fact asks for each of its fields.
struct Fields {
    all: bool,
    names: foldhash::HashSet<String>,
}

impl Fields {
    fn new(needs: &Needs) -> Fields {
        Fields {
            all: needs.all || needs.all_fields,
            names: needs.fields.iter().cloned().collect(),
        }
    }

    fn wants(&self, field: &str) -> bool {
        self.all || self.names.contains(field)
    }
}

/// A fact's fields, each built only when wanted.
struct Entries<'f> {
    fields: &'f Fields,
    out: Vec<(&'static str, Value)>,
}

impl<'f> Entries<'f> {
    fn new(fields: &'f Fields) -> Self {
        Entries {
            fields,
            out: Vec::with_capacity(32),
        }
    }

    fn put(&mut self, field: &'static str, value: impl FnOnce() -> Value) {
        if self.fields.wants(field) {
            self.out.push((field, value()));
        }
    }

    fn done(self) -> Value {
        obj(self.out)
    }
}

/// A Kueue route: the queue label, and the LocalQueue and ClusterQueue it resolves to.
type QueueKey = (String, Option<usize>, Option<usize>);

/// Template facts that many templates share, built once: the same Kueue route, the same
/// placements and tolerations. A shared value is a reference count instead of a copy, so a
/// thousand templates that may land on the same thousand pools hold one list, not a million names.
#[derive(Default)]
struct Shared {
    /// Landing signature (see [`landing_signature`]) → (`nodepools`, `landings`).
    landings: Mutex<HashMap<Vec<u8>, (Value, Value)>>,
    /// (queue label, LocalQueue, ClusterQueue) → `queue`.
    queues: Mutex<HashMap<QueueKey, Value>>,
}

/// What one worker building template facts keeps between templates: its strings, and the
/// landings it has seen by signature (most templates share the signature of one seen before,
/// found here without a lock and without a new signature buffer).
#[derive(Default)]
struct Worker {
    strings: Strings,
    signature: Vec<u8>,
    landings: HashMap<Box<[u8]>, (Value, Value)>,
}

/// A GPU template's variants with the placement of each (see `Index::variant_placements`).
fn placed_variants<'i, 'a>(
    ix: &'i Index<'a>,
    ti: usize,
) -> impl Iterator<Item = (usize, &'i crate::index::Variant<'a>)> {
    let variants = ix.variants.get(ti);
    ix.variant_placements
        .get(ti)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(move |(v, &pl)| Some((pl, variants?.get(v)?)))
}

/// Who a template's landings depend on: per variant, its placement, its flavor and its
/// tolerations (with the extended resources EKS tolerates for it). Bytes, each string after its
/// length so no two signatures read alike: formatting numbers as text cost more than the rest.
fn landing_signature(ix: &Index<'_>, ti: usize, s: &mut Vec<u8>) {
    fn num(s: &mut Vec<u8>, n: usize) {
        s.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn text(s: &mut Vec<u8>, t: &str) {
        num(s, t.len());
        s.extend_from_slice(t.as_bytes());
    }
    s.clear();
    for (pl, variant) in placed_variants(ix, ti) {
        num(s, pl);
        num(s, variant.flavor.unwrap_or(usize::MAX));
        num(s, variant.constraints.tolerations.len());
        for t in &variant.constraints.tolerations {
            for part in [t.key, t.operator, t.value, t.effect] {
                text(s, part);
            }
        }
        num(s, variant.constraints.extended.len());
        for e in &variant.constraints.extended {
            text(s, e);
        }
    }
}

/// A `Shared` entry, built outside the lock (two threads may both build one; either is kept).
fn memo<K: std::hash::Hash + Eq, V: Clone>(
    map: &Mutex<HashMap<K, V>>,
    key: K,
    build: impl FnOnce() -> V,
) -> V {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    if let Some(v) = lock(map).get(&key) {
        return v.clone();
    }
    let v = build();
    lock(map).entry(key).or_insert(v).clone()
}

fn template(
    ix: &Index<'_>,
    ti: usize,
    pdbs: &Pdbs,
    shared: &Shared,
    fields: &Fields,
    worker: &mut Worker,
) -> Value {
    let Worker {
        strings,
        signature,
        landings: seen,
    } = worker;
    let t = &ix.templates[ti];
    let owner = ix.owner(t);
    // The pod spec's path, found by identity; the template is its parent (a bare Pod is its own).
    let paths = strings.spec_path(owner.root, t.spec, &t.path);
    let meta = |k: &str| t.metadata.and_then(|m| m.get(k));
    let mut e = Entries::new(fields);
    e.put("index", || Value::from(ti as u64));
    e.put("object", || Value::from(t.owner as u64));
    e.put("kind", || strings.get(owner.kind));
    e.put("api_version", || strings.get(owner.api_version));
    e.put("namespace", || strings.opt(owner.namespace));
    e.put("name", || strings.opt(owner.name));
    e.put("path", || paths.template.clone());
    e.put("spec_path", || paths.spec.clone());
    e.put("path_text", || strings.get(&t.path));
    e.put("labels", || strings.map(meta("labels")));
    e.put("annotations", || strings.map(meta("annotations")));
    e.put("node_selector", || strings.map(t.spec.get("nodeSelector")));
    e.put("pdbs", || covering_pdbs(ix, t, pdbs));
    e.put("object_labels", || {
        strings.map(owner.root.at(&["metadata", "labels"]))
    });
    // Each container's GPUs, read once for its own fact and the pod's sum.
    let gpus: Vec<u64> = if fields.wants("gpus") {
        t.containers.iter().map(Container::gpu_count).collect()
    } else {
        Vec::new()
    };
    e.put("gpus", || Value::from(gpus_per_pod(&t.containers, &gpus)));
    e.put("requests_gpu", || Value::from(t.requests_gpu()));
    e.put("dra_gpus", || dra_gpus(ix, t, strings));
    let intent = ix.classes.get(ti);
    e.put("intent", || {
        strings.get(intent.map_or("other", |i| intent_name(i.kind)))
    });
    e.put("intent_evidence", || {
        strings.get(intent.map_or("", |i| i.evidence.as_str()))
    });
    e.put("containers", || {
        let mut counts = [0usize; 2];
        let containers: Vec<Value> = t
            .containers
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let n = &mut counts[usize::from(c.init)];
                // Counted above whenever `gpus` is a field to build (templates and containers
                // share the field names).
                let count = gpus.get(ci).copied().unwrap_or_default();
                let v = container(c, count, &paths.spec, *n, fields, strings);
                *n += 1;
                v
            })
            .collect();
        Value::from(containers)
    });
    e.put("queue", || queue(ix, ti, shared, strings));
    if fields.wants("nodepools") || fields.wants("landings") {
        landing_signature(ix, ti, signature);
        let known = seen.get(signature.as_slice()).cloned();
        let (pools, landings) = known.unwrap_or_else(|| {
            let built = memo(&shared.landings, signature.clone(), || {
                let landings = landings(ix, ti);
                let mut pools: Vec<&str> = landings
                    .iter()
                    .flat_map(|(_, ps)| ps.iter().copied())
                    .collect();
                pools.sort_unstable();
                pools.dedup();
                let landings = Value::from(
                    landings
                        .into_iter()
                        .map(|(flavor, ps)| {
                            obj(vec![
                                ("flavor", opt_str(flavor)),
                                ("nodepools", strings.list(ps)),
                            ])
                        })
                        .collect::<Vec<_>>(),
                );
                (strings.list(pools), landings)
            });
            seen.insert(signature.as_slice().into(), built.clone());
            built
        });
        e.put("nodepools", || pools);
        e.put("landings", || landings);
    }
    e.done()
}

/// PodDisruptionBudgets by namespace: (object, its `spec.selector`).
type Pdbs<'a> = HashMap<Option<&'a str>, Vec<(usize, crate::yaml::Node<'a>)>>;

/// The PodDisruptionBudgets of a template's namespace whose selector selects its pods.
fn covering_pdbs(ix: &Index<'_>, t: &crate::model::PodTemplate<'_>, pdbs: &Pdbs) -> Value {
    let namespace = ix.owner(t).namespace;
    let labels = t.metadata.and_then(|m| m.get("labels"));
    let candidates: Vec<(usize, crate::yaml::Node<'_>)> = match namespace {
        Some(_) => [namespace, None]
            .iter()
            .filter_map(|ns| pdbs.get(ns))
            .flatten()
            .copied()
            .collect(),
        None => pdbs.values().flatten().copied().collect(),
    };
    let mut covering: Vec<usize> = candidates
        .into_iter()
        .filter(|&(_, sel)| crate::model::selects(sel, labels))
        .map(|(i, _)| i)
        .collect();
    covering.sort_unstable();
    Value::from(
        covering
            .iter()
            .map(|&i| Value::from(i as u64))
            .collect::<Vec<_>>(),
    )
}

/// A template's Kueue route (`None`: no queue label), shared by the templates of the same route.
fn queue(ix: &Index<'_>, ti: usize, shared: &Shared, strings: &mut Strings) -> Value {
    let Some(q) = ix.queues.get(ti).copied().flatten() else {
        return Value::Null;
    };
    let name = q.label.and_then(|n| n.as_str()).unwrap_or("default");
    let key = (name.to_string(), q.local_queue, q.cluster_queue);
    memo(&shared.queues, key, || {
        let lq = q.local_queue.map(|i| &ix.local_queues[i]);
        let cq = q.cluster_queue.map(|i| &ix.cluster_queues[i]);
        let mut flavors: Vec<&str> = Vec::new();
        for (n, _, _) in cq.map(|c| c.flavors.as_slice()).unwrap_or_default() {
            if !flavors.contains(n) {
                flavors.push(n);
            }
        }
        obj(vec![
            ("name", Value::from(name)),
            (
                "local_queue",
                lq.map_or(Value::Null, |l| {
                    Value::from(format!("{}/{}", l.namespace.unwrap_or(""), l.name))
                }),
            ),
            ("cluster_queue", opt_str(cq.map(|c| c.name))),
            ("flavors", strings.list(flavors)),
        ])
    })
}

/// Per variant of a GPU template (one per Kueue flavor; one without Kueue): the flavor and the
/// NodePools whose labels, requirements and taints admit it, as `Index::landing_pools` decides.
fn landings<'i>(ix: &'i Index<'_>, ti: usize) -> Vec<(Option<&'i str>, Vec<&'i str>)> {
    let mut out = Vec::new();
    for (pl, variant) in placed_variants(ix, ti) {
        let Some(placement) = ix.placements.get(pl) else {
            continue;
        };
        let mut tolerated: std::collections::HashMap<u32, bool> = Default::default();
        let mut pools = Vec::new();
        for &p in &placement.fits {
            let p = p as usize;
            let ok = *tolerated.entry(ix.pools.taint_class[p]).or_insert_with(|| {
                crate::sched::taints(&variant.constraints, &ix.nodepools[p], ix.settings.eks)
                    .untolerated
                    .is_empty()
            });
            if ok {
                pools.push(ix.nodepools[p].name);
            }
        }
        let flavor = variant.flavor.map(|f| ix.flavors[f].name);
        out.push((flavor, pools));
    }
    out
}
