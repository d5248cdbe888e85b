//! Every object once, with the lookups and derived views rules need. Built once per run.

use crate::config::Settings;
use crate::diag::{FileId, Loc};
use crate::model::{
    ClusterQueue, Flavor, LocalQueue, NodeClass, NodePool, Object, PodTemplate, pod_templates,
};
use crate::one_or_many::OneOrMany;
use crate::sched::{Placement, PodConstraints, PoolIndex};
use crate::source::SourceFile;
use foldhash::{HashMap, HashMapExt, HashSet};
use rayon::prelude::*;
use std::collections::hash_map::Entry;

mod capacity;
mod dra;
mod installs;
mod kueue;
mod names;
mod pages;
mod quota;
mod sharing;
mod variants;

pub use capacity::*;
pub use dra::kueue_resource;
pub use kueue::*;
pub use quota::*;
pub use sharing::*;

pub use crate::intent::Class;
pub use crate::model::kinds::{is_inference_kind, is_server_kind, is_training_kind};

/// A pod template as it will run: after Kueue injects one flavor's labels and tolerations.
#[derive(Debug, Clone)]
pub struct Variant<'a> {
    /// Index into `Index::flavors` of the injected flavor.
    pub flavor: Option<usize>,
    /// Without a flavor, the template's own constraints, shared: most templates of a large
    /// repository have one variant, and a copy of each was a fifth of the index's memory.
    pub constraints: std::sync::Arc<PodConstraints<'a>>,
}

/// Where one assignable variant of a GPU template may land.
#[derive(Debug, Clone, Copy)]
pub struct Landing {
    /// Index into `Index::variants[template]`.
    pub variant: usize,
    /// Index into `Index::placements` (shared by every variant with the same label signature).
    pub placement: usize,
}

/// How a workload reaches Kueue: the queue label and what it resolves to.
#[derive(Debug, Clone, Copy)]
pub struct QueueRef<'a> {
    /// The `kueue.x-k8s.io/queue-name` value node (None when defaulted to `default`).
    pub label: Option<crate::yaml::Node<'a>>,
    pub local_queue: Option<usize>,
    pub cluster_queue: Option<usize>,
}

pub struct Index<'a> {
    /// Every loaded file (locations index into it).
    pub files: &'a [SourceFile],
    /// The files this index covers.
    pub file_ids: Vec<FileId>,
    pub settings: &'a Settings,
    pub objects: Vec<Object<'a>>,
    pub templates: Vec<PodTemplate<'a>>,
    pub nodepools: Vec<NodePool<'a>>,
    /// EC2NodeClasses and AWSNodeTemplates.
    pub node_classes: Vec<NodeClass<'a>>,
    pub flavors: Vec<Flavor<'a>>,
    pub cluster_queues: Vec<ClusterQueue<'a>>,
    pub local_queues: Vec<LocalQueue<'a>>,
    /// Kueue's DRA `deviceClassMappings` in the files.
    pub kueue_dra: Vec<crate::model::kueue_config::DeviceClassMapping>,
    /// Per template: what it is for, and the evidence that decided it.
    pub classes: Vec<crate::intent::Intent<'a>>,
    /// Per template: the Kueue queue it goes through, if any.
    pub queues: Vec<Option<QueueRef<'a>>>,
    /// Per template: the ways it may run (one per flavor it may be admitted to; one if no Kueue).
    pub variants: Vec<Vec<Variant<'a>>>,
    /// Per template: indices into its `variants` Kueue may really assign (see
    /// [`assignable_variants`]).
    pub assignable: Vec<Vec<usize>>,
    /// NodePools by what selects them, their GPU capability and taint classes.
    pub pools: PoolIndex<'a>,
    /// Whether some Karpenter NodePool may launch GPU instances (`None`: no Karpenter pool).
    karpenter_gpu: Option<bool>,
    /// Distinct placements of GPU templates' assignable variants.
    pub placements: Vec<Placement>,
    /// Per template: where each assignable variant lands (GPU templates only; else empty).
    pub landings: Vec<Vec<Landing>>,
    /// Per template: the placement of each of its variants, assignable or not (GPU templates only).
    pub variant_placements: Vec<Vec<usize>>,
    /// Per template: the placement of its own constraints, before Kueue adds anything (GPU
    /// templates only).
    pub own_placement: Vec<Option<usize>>,
    /// Per template: the admission check that places its pods outside this cluster's NodePools
    /// (see [`kueue::Gate`]); such templates are not placed on the pools.
    pub elsewhere: Vec<Option<kueue::Gate>>,
    /// Per ClusterQueue: its admission checks that place capacity elsewhere.
    cq_gates: Vec<Vec<(Vec<&'a str>, kueue::Gate)>>,
    /// Flavors every ClusterQueue listing them gates (see [`Index::flavor_elsewhere`]).
    flavor_gates: std::collections::HashMap<&'a str, kueue::Gate>,
    /// Objects by (kind, name): nearly always one each.
    by_name: HashMap<(&'a str, &'a str), OneOrMany<u32>>,
    kinds: HashSet<(&'a str, &'a str)>,
    by_kind: HashMap<&'a str, Vec<usize>>,
    /// LocalQueues: first by (name, namespace), first without a namespace by name, first by name.
    local_queue_exact: HashMap<(&'a str, &'a str), usize>,
    local_queue_unnamespaced: HashMap<&'a str, usize>,
    local_queue_any: HashMap<&'a str, usize>,
    cluster_queue_names: HashMap<&'a str, usize>,
    flavor_names: HashMap<&'a str, usize>,
    pool_names: HashMap<&'a str, usize>,
    pools_by_class: HashMap<&'a str, Vec<usize>>,
    /// Per object: the range of its templates in `templates` (they are stored in object order).
    template_ranges: Vec<std::ops::Range<usize>>,
    pub documents: usize,
    /// Built on first use by the rules that need them, shared by their chunks.
    user_crds: std::sync::OnceLock<crate::schema::crd::UserCrds>,
    names: names::Names<'a>,
    quotas: std::sync::OnceLock<QuotaIndex<'a>>,
    gpu_setup: std::sync::OnceLock<GpuSetup>,
    kueue_installs: std::sync::OnceLock<Vec<installs::KueueInstall<'a>>>,
    karpenter_installs: std::sync::OnceLock<Vec<installs::Install<'a>>>,
    /// (kind, namespace) of the objects whose name is still to be filled in (`${flavor_name}` in
    /// a template Terraform renders): each may be any object of its kind (built once).
    slots: std::sync::OnceLock<Vec<(&'a str, Option<&'a str>)>>,
    /// (kind, name) of the objects the repository's scripts and pages show (built once).
    shown: std::sync::OnceLock<Vec<crate::source::pages::Shown>>,
    /// Labels the repository's scripts and pages put on nodes by hand.
    labelled: std::sync::OnceLock<Vec<(String, String)>>,
    /// See [`Index::autopilot`], [`Index::pools_kept_elsewhere`] and [`Index::kustomize_dirs`].
    autopilot: std::sync::OnceLock<bool>,
    pools_elsewhere: std::sync::OnceLock<bool>,
    kustomize_dirs: std::sync::OnceLock<HashSet<&'a str>>,
    /// The files that could not be read whole (see [`Index::unread_file_names`]).
    unread: Vec<FileId>,
}

/// The objects of one file, in document order; a `kind: List` (kubectl output) stands for its
/// items.
fn file_objects<'a>(fid: FileId, f: &'a SourceFile) -> Vec<Object<'a>> {
    let mut objects = Vec::with_capacity(f.docs.len());
    for d in &f.docs {
        let Some(o) = Object::from_node(fid, d.root()) else {
            continue;
        };
        if o.kind.ends_with("List") && o.group.is_empty() {
            let items = o.root.get("items").into_iter().flat_map(|n| n.items());
            objects.extend(items.filter_map(|item| Object::from_node(fid, item)));
        } else {
            objects.push(o);
        }
    }
    objects
}

impl<'a> Index<'a> {
    pub fn build(files: &'a [SourceFile], settings: &'a Settings) -> Self {
        let all: Vec<FileId> = (0..files.len()).collect();
        Self::build_for(files, all, settings)
    }

    /// The index of one cluster: the files `ids` of `files` (locations keep their file ids).
    pub fn build_for(files: &'a [SourceFile], ids: Vec<FileId>, settings: &'a Settings) -> Self {
        // Every step below that reads one object at a time runs on every core: at 50,000
        // objects the serial loops were a third of the index's wall time on two cores.
        let per_file: Vec<(usize, Vec<Object<'a>>)> = ids
            .par_iter()
            .filter_map(|&fid| files.get(fid).map(|f| (fid, f)))
            .map(|(fid, f)| (f.docs.len(), file_objects(fid, f)))
            .collect();
        let documents = per_file.iter().map(|(d, _)| d).sum();
        let mut objects = Vec::with_capacity(per_file.iter().map(|(_, o)| o.len()).sum());
        for (_, own) in per_file {
            objects.extend(own);
        }
        let per_object: Vec<Vec<PodTemplate>> = objects
            .par_iter()
            .enumerate()
            .map(|(i, o)| pod_templates(i, o))
            .collect();
        let mut templates = Vec::with_capacity(per_object.iter().map(Vec::len).sum());
        let mut template_ranges = Vec::with_capacity(objects.len());
        for own in per_object {
            let start = templates.len();
            templates.extend(own);
            template_ranges.push(start..templates.len());
        }
        let kueue_dra = dra::resolve(files, &objects, &mut templates);
        fn each<'a, T: Send>(
            objects: &[Object<'a>],
            f: impl Fn(usize, &Object<'a>) -> Option<T> + Sync + Send,
        ) -> Vec<T> {
            objects
                .par_iter()
                .enumerate()
                .filter_map(|(i, o)| f(i, o))
                .collect()
        }
        // A v1alpha5 Provisioner is served by no Karpenter since v0.33 (`deprecated-api` says
        // so): it never exists in the cluster, so it judges no pod and is judged no further.
        let mut nodepools = each(&objects, |i, o| {
            NodePool::from_object(i, o).filter(|p| !p.legacy_provisioner)
        });
        let node_classes = each(&objects, NodeClass::from_object);
        resolve_class_groups(&mut nodepools, &node_classes, &objects);
        let flavors = each(&objects, Flavor::from_object);
        let cluster_queues = each(&objects, ClusterQueue::from_object);
        let local_queues = each(&objects, LocalQueue::from_object);
        let first_by_name = |names: &mut dyn Iterator<Item = &'a str>| {
            let mut m: HashMap<&'a str, usize> = HashMap::new();
            for (i, n) in names.enumerate() {
                m.entry(n).or_insert(i);
            }
            m
        };
        // The pool index and the lookup tables by name are independent: built side by side.
        let (pools, (by_name, by_kind)) = rayon::join(
            || PoolIndex::build(&nodepools),
            || {
                let mut by_name: HashMap<(&str, &str), OneOrMany<u32>> =
                    HashMap::with_capacity(objects.len());
                let mut by_kind: HashMap<&str, Vec<usize>> = HashMap::new();
                for (i, o) in objects.iter().enumerate() {
                    if let Some(n) = o.name {
                        match by_name.entry((o.kind, n)) {
                            Entry::Occupied(mut e) => e.get_mut().push(i as u32),
                            Entry::Vacant(e) => {
                                e.insert(OneOrMany::One(i as u32));
                            }
                        }
                    }
                    by_kind.entry(o.kind).or_default().push(i);
                }
                (by_name, by_kind)
            },
        );
        let mut local_queue_exact: HashMap<(&str, &str), usize> = HashMap::new();
        let mut local_queue_unnamespaced: HashMap<&str, usize> = HashMap::new();
        let mut local_queue_any: HashMap<&str, usize> = HashMap::new();
        for (i, q) in local_queues.iter().enumerate() {
            match q.namespace {
                Some(ns) => local_queue_exact.entry((q.name, ns)).or_insert(i),
                None => local_queue_unnamespaced.entry(q.name).or_insert(i),
            };
            local_queue_any.entry(q.name).or_insert(i);
        }
        let mut pools_by_class: HashMap<&str, Vec<usize>> = HashMap::new();
        // Auto Mode pools name an EKS NodeClass, not an EC2NodeClass of the same name.
        for (i, p) in nodepools
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_auto_mode())
        {
            if let Some(n) = p
                .node_class_ref
                .and_then(|r| r.get("name"))
                .and_then(|n| n.as_str())
            {
                pools_by_class.entry(n).or_default().push(i);
            }
        }
        // Files gpuops could not read whole: a syntax error, content that is not text, a template
        // skipped until rendered. Usually none; kept so existence checks need not scan every file.
        let unread: Vec<FileId> = ids
            .iter()
            .copied()
            .filter(|&f| {
                files.get(f).is_some_and(|f| {
                    f.skipped.is_some() || f.problems.iter().any(|p| p.first.is_none())
                })
            })
            .collect();
        // Computed once: rules ask it per template.
        let karpenter_gpu = {
            let mut karpenter = (0..nodepools.len())
                .filter(|&i| nodepools[i].is_karpenter())
                .peekable();
            karpenter.peek().is_some().then(|| {
                karpenter.any(|i| pools.capability[i] != crate::sched::GpuCapability::None)
            })
        };
        let mut ix = Index {
            karpenter_gpu,
            files,
            file_ids: ids,
            settings,
            kinds: objects.iter().map(|o| (o.group, o.kind)).collect(),
            by_kind,
            cluster_queue_names: first_by_name(&mut cluster_queues.iter().map(|q| q.name)),
            flavor_names: first_by_name(&mut flavors.iter().map(|f| f.name)),
            pool_names: first_by_name(&mut nodepools.iter().map(|p| p.name)),
            pools,
            objects,
            templates,
            nodepools,
            node_classes,
            flavors,
            cluster_queues,
            local_queues,
            kueue_dra,
            classes: Vec::new(),
            queues: Vec::new(),
            variants: Vec::new(),
            assignable: Vec::new(),
            placements: Vec::new(),
            landings: Vec::new(),
            own_placement: Vec::new(),
            elsewhere: Vec::new(),
            cq_gates: Vec::new(),
            flavor_gates: Default::default(),
            variant_placements: Vec::new(),
            by_name,
            local_queue_exact,
            local_queue_unnamespaced,
            local_queue_any,
            pools_by_class,
            template_ranges,
            documents,
            user_crds: Default::default(),
            names: Default::default(),
            quotas: Default::default(),
            gpu_setup: Default::default(),
            kueue_installs: Default::default(),
            karpenter_installs: Default::default(),
            slots: Default::default(),
            shown: Default::default(),
            labelled: Default::default(),
            autopilot: Default::default(),
            pools_elsewhere: Default::default(),
            kustomize_dirs: Default::default(),
            unread,
        };
        ix.classes = ix.templates.par_iter().map(|t| ix.classify(t)).collect();
        ix.queues = ix.templates.par_iter().map(|t| ix.queue_of(t)).collect();
        ix.variants = (0..ix.templates.len())
            .into_par_iter()
            .map(|i| ix.compute_variants(i))
            .collect();
        ix.assignable = (0..ix.templates.len())
            .into_par_iter()
            .map(|i| compute_assignable(&ix, i))
            .collect();
        ix.cq_gates = kueue::cluster_queue_gates(&ix);
        ix.flavor_gates = kueue::flavor_gates(&ix);
        ix.elsewhere = (0..ix.templates.len())
            .map(|i| ix.compute_elsewhere(i))
            .collect();
        ix.place();
        ix
    }

    /// Computes where GPU templates land: one placement per distinct label signature, each found
    /// through the candidate index, shared by every template variant with that signature.
    fn place(&mut self) {
        // Per GPU template: the signature of its own constraints, then of each variant.
        type Sigs = Option<(String, Vec<(usize, String)>)>;
        /// Who first had each signature: (template, variant; `None` for its own constraints).
        type Firsts = Vec<(usize, Option<usize>)>;
        fn ids_of<'s>(sigs: &'s [Sigs]) -> (Vec<Option<usize>>, Vec<Vec<usize>>, Firsts) {
            let mut ids: HashMap<&'s str, usize> = HashMap::new();
            let mut firsts: Firsts = Vec::new();
            let mut own = vec![None; sigs.len()];
            let mut per_variant = vec![Vec::new(); sigs.len()];
            for (ti, entry) in sigs.iter().enumerate() {
                let Some((own_sig, vs)) = entry else { continue };
                let mut id = |sig: &'s str, v: Option<usize>| {
                    let next = firsts.len();
                    *ids.entry(sig).or_insert_with(|| {
                        firsts.push((ti, v));
                        next
                    })
                };
                own[ti] = Some(id(own_sig, None));
                per_variant[ti] = vs.iter().map(|(v, sig)| id(sig, Some(*v))).collect();
            }
            (own, per_variant, firsts)
        }
        let n = self.templates.len();
        self.landings = vec![Vec::new(); n];
        self.own_placement = vec![None; n];
        self.variant_placements = vec![Vec::new(); n];
        if self.nodepools.is_empty() {
            return;
        }
        let sigs: Vec<Sigs> = (0..n)
            .into_par_iter()
            .map(|ti| {
                let t = &self.templates[ti];
                if !t.requests_gpu() || self.elsewhere[ti].is_some() {
                    return None;
                }
                let own = crate::sched::label_signature(t.constraints());
                let vs = self.variants[ti]
                    .iter()
                    .enumerate()
                    .map(|(v, variant)| (v, crate::sched::label_signature(&variant.constraints)))
                    .collect();
                Some((own, vs))
            })
            .collect();
        let (own, per_variant, firsts) = ids_of(&sigs);
        self.own_placement = own;
        self.landings = (0..n)
            .map(|ti| {
                let mut own: Vec<Landing> = self.assignable[ti]
                    .iter()
                    .filter_map(|&v| {
                        Some(Landing {
                            variant: v,
                            placement: *per_variant[ti].get(v)?,
                        })
                    })
                    .collect();
                // Kept for the run, one list per template.
                own.shrink_to_fit();
                own
            })
            .collect();
        self.variant_placements = per_variant;
        let placements: Vec<Placement> = firsts
            .par_iter()
            .map(|&(ti, v)| {
                let pod = match v {
                    Some(v) => std::borrow::Cow::Borrowed(&*self.variants[ti][v].constraints),
                    None => std::borrow::Cow::Borrowed(self.templates[ti].constraints()),
                };
                self.pools.placement(&pod, &self.nodepools)
            })
            .collect();
        self.placements = placements;
    }

    /// Where each assignable variant of template `ti` lands: (variant, placement).
    pub fn landings_of(&self, ti: usize) -> impl Iterator<Item = (&Variant<'a>, &Placement)> {
        self.landings
            .get(ti)
            .into_iter()
            .flatten()
            .map(move |l| (&self.variants[ti][l.variant], &self.placements[l.placement]))
    }

    /// The NodePool of this name.
    pub fn nodepool(&self, name: &str) -> Option<usize> {
        self.pool_names.get(name).copied()
    }

    /// The NodePools whose `nodeClassRef` names this EC2NodeClass.
    pub fn pools_using_class(&self, name: &str) -> &[usize] {
        self.pools_by_class.get(name).map_or(&[], Vec::as_slice)
    }

    /// The range in `templates` of the templates of the objects in `objects`.
    pub fn templates_within(&self, objects: std::ops::Range<usize>) -> std::ops::Range<usize> {
        if objects.is_empty() {
            return 0..0;
        }
        let start = self
            .template_ranges
            .get(objects.start)
            .map_or(0, |r| r.start);
        let end = self
            .template_ranges
            .get(objects.end - 1)
            .map_or(start, |r| r.end);
        start..end.max(start)
    }

    /// The objects in runs of about `size`, the chunked rules' many small tasks (every core busy
    /// to the end), each ending with a file's last object: what a rule says once per file does
    /// not depend on where chunks are cut.
    pub fn chunks(&self, size: usize) -> Vec<std::ops::Range<usize>> {
        let (n, size) = (self.objects.len(), size.max(1));
        let (mut out, mut start) = (Vec::with_capacity(n / size + 1), 0);
        while start < n {
            let mut end = (start + size).min(n);
            while end < n && self.objects[end].file == self.objects[end - 1].file {
                end += 1;
            }
            out.push(start..end);
            start = end;
        }
        out
    }

    /// The validators of the CRDs among the objects (built once, on first use).
    pub fn user_crds(&self) -> &crate::schema::crd::UserCrds {
        self.user_crds.get_or_init(|| {
            crate::schema::crd::UserCrds::from_objects(
                self.of_kind("CustomResourceDefinition"),
                self.of_kind("MutatingWebhookConfiguration"),
                self.files,
            )
        })
    }

    /// The CEL rules of the user CRDs skipped so far (none when no rule read the CRDs); clears
    /// them.
    pub fn cel_skips(&self) -> crate::schema::validations::SkipSet {
        self.user_crds
            .get()
            .map(|u| u.take_skips())
            .unwrap_or_default()
    }

    /// The Kueue releases the files install, and for which objects (built once, on first use).
    pub fn kueue_installs(&self) -> &[installs::KueueInstall<'a>] {
        self.kueue_installs.get_or_init(|| installs::kueue(self))
    }

    /// The Karpenter releases the files install, and for which objects (built once, on first
    /// use).
    pub fn karpenter_installs(&self) -> &[installs::Install<'a>] {
        self.karpenter_installs
            .get_or_init(|| installs::karpenter(self))
    }

    /// What each Kueue cohort may lend (built once, on first use).
    pub fn quotas(&self) -> &QuotaIndex<'a> {
        self.quotas.get_or_init(|| QuotaIndex::build(self))
    }

    /// The pod templates of object `oi`.
    pub fn templates_of(&self, oi: usize) -> &[PodTemplate<'a>] {
        self.template_ranges
            .get(oi)
            .map_or(&[], |r| &self.templates[r.clone()])
    }

    /// The indices into `templates` of object `oi`'s templates.
    pub fn template_range(&self, oi: usize) -> std::ops::Range<usize> {
        self.template_ranges.get(oi).cloned().unwrap_or(0..0)
    }

    pub fn owner(&self, t: &PodTemplate) -> &Object<'a> {
        &self.objects[t.owner]
    }

    pub fn path(&self, loc: Loc) -> &str {
        &self.files[loc.file].path
    }

    /// Objects of a kind with a name (any namespace).
    pub fn named(&self, kind: &str, name: &str) -> Vec<&Object<'a>> {
        self.by_name
            .get(&(kind, name))
            .into_iter()
            .flatten()
            .map(|&i| &self.objects[i as usize])
            .collect()
    }

    /// Whether an object of this kind and name exists in the files or is declared external.
    /// A missing namespace on either side matches any (kustomize often sets it later). A file
    /// that could not be read whole and names both the kind and the name may hold it (see
    /// [`Index::unread_file_names`]), and an object of the kind whose name is still to be filled
    /// in (`${flavor_name}`) may be it.
    pub fn exists(&self, kind: &str, namespace: Option<&str>, name: &str) -> bool {
        let near = |ns: Option<&str>| namespace.is_none() || ns.is_none() || ns == namespace;
        self.named(kind, name)
            .into_iter()
            .any(|o| near(o.namespace))
            || self.settings.is_external(kind, namespace, name)
            || self.unread_file_names(&[kind, name])
            || self.shown(kind, name, namespace)
            || self.slots().iter().any(|&(k, ns)| k == kind && near(ns))
    }

    /// (kind, namespace) of the objects whose name is still to be filled in (`${each.key}` of a
    /// Terraform `for_each` over values only Terraform knows): each stands for any number of
    /// objects of its kind, whatever their names.
    fn slots(&self) -> &[(&'a str, Option<&'a str>)] {
        self.slots.get_or_init(|| {
            self.objects
                .iter()
                .filter(|o| o.name.is_some_and(crate::quantity::is_placeholder))
                .map(|o| (o.kind, o.namespace))
                .collect()
        })
    }

    /// Whether some object of this kind has a name still to be filled in (see [`Index::slots`]).
    pub fn has_slot(&self, kind: &str) -> bool {
        self.slots().iter().any(|&(k, _)| k == kind)
    }

    /// Whether a file of this index that could not be read whole (a YAML syntax error, content
    /// that is not text, a template skipped until rendered) names every one of `words`, each as
    /// a whole word. What such a file defines is unknown: a rule that would report one of these
    /// words missing stays quiet rather than guess (the file's own problem is reported).
    pub fn unread_file_names(&self, words: &[&str]) -> bool {
        if words.iter().any(|w| w.is_empty()) {
            return false;
        }
        self.unread
            .iter()
            .filter_map(|&f| self.files.get(f))
            .any(|f| words.iter().all(|w| has_word(&f.text, w)))
    }

    /// Objects of a kind (any group), in order.
    pub fn of_kind(&self, kind: &str) -> impl Iterator<Item = &Object<'a>> {
        self.by_kind
            .get(kind)
            .into_iter()
            .flatten()
            .map(|&i| &self.objects[i])
    }

    pub fn has_kind(&self, group: &str, kind: &str) -> bool {
        self.kinds.contains(&(group, kind))
    }

    /// Whether some Karpenter NodePool in view may launch GPU instances (or the config says
    /// Karpenter runs, with no pool in view to say otherwise).
    pub fn karpenter_launches_gpus(&self) -> bool {
        self.karpenter_gpu
            .unwrap_or(self.settings.karpenter || self.nodepools.is_empty())
    }

    /// Whether the cluster runs Karpenter (pools in the files, or the config says so).
    pub fn uses_karpenter(&self) -> bool {
        // Node groups and existing Nodes are capacity without Karpenter.
        self.nodepools.iter().any(NodePool::is_karpenter) || self.settings.karpenter
    }

    /// What a template is for, from the evidence in its workload (see `intent`).
    fn classify(&self, t: &PodTemplate<'a>) -> crate::intent::Intent<'a> {
        crate::intent::classify(self.owner(t), t, self.settings)
    }

    /// The LocalQueue a namespace-qualified name resolves to.
    pub fn local_queue(&self, namespace: Option<&str>, name: &str) -> Option<usize> {
        // The first queue of that name in the namespace or in none (a missing namespace on either
        // side matches, as kustomize often sets it later).
        match namespace {
            None => self.local_queue_any.get(name).copied(),
            Some(ns) => {
                let exact = self.local_queue_exact.get(&(name, ns)).copied();
                let open = self.local_queue_unnamespaced.get(name).copied();
                exact.into_iter().chain(open).min()
            }
        }
    }

    pub fn cluster_queue(&self, name: &str) -> Option<usize> {
        self.cluster_queue_names.get(name).copied()
    }

    pub fn flavor(&self, name: &str) -> Option<usize> {
        self.flavor_names.get(name).copied()
    }
}

/// Whether `word` stands in `text` as a whole word: not inside a longer name or label
/// (`gpu` in `gpu-large` or `role.gpu` is not `gpu`).
fn has_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

/// A v1beta1 `nodeClassRef` may give only a name, the provider filling in the rest: where the
/// files hold an EC2NodeClass of that name and no other provider's node class of it, the pool's
/// nodes are that class's (AWS's, so on EKS).
fn resolve_class_groups(
    pools: &mut [NodePool<'_>],
    classes: &[NodeClass<'_>],
    objects: &[Object<'_>],
) {
    if !pools.iter().any(|p| p.name_only_class_ref().is_some()) {
        return;
    }
    let ec2: HashSet<&str> = classes
        .iter()
        .filter(|c| !c.legacy)
        .filter_map(|c| objects[c.obj].name)
        .collect();
    let other: HashSet<&str> = objects
        .iter()
        .filter(|o| o.kind.ends_with("NodeClass") && o.group != "karpenter.k8s.aws")
        .filter_map(|o| o.name)
        .collect();
    for p in pools.iter_mut() {
        if let Some(name) = p.name_only_class_ref()
            && ec2.contains(name)
            && !other.contains(name)
        {
            p.resolved_class_group = Some("karpenter.k8s.aws");
        }
    }
}
