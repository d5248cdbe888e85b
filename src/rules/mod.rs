//! The rule catalog: one file per rule, each a pure function of the index.
//!
//! Adding a rule: its file here (the doc comment is its explanation; `declare_rule!` gives its
//! name, category, what it judges, severity and summary), its `mod` line and its place in `ALL`
//! below, and `testdata/rules/<name>/{fail,pass}.yaml`; `tests/rules.rs` then requires its
//! snapshot and `docs/rules.md` regenerated (`GPUOPS_BLESS=1 cargo test --test rules`).

use crate::diag::{Diagnostic, FileId, Loc, Severity};
use crate::index::Index;
use crate::intent::Intent;
use crate::model::{NodeClass, NodePool, Object, PodTemplate, is_gpu_resource};
pub(crate) use crate::text::{Near, close_enough, edit_distance_within};
use crate::yaml::{Node, Span};
use std::ops::Range;

/// A lint rule: its metadata, its explanation and its check.
pub struct Rule {
    /// Stable kebab-case name.
    pub name: &'static str,
    pub category: &'static str,
    /// What it judges: object kinds (`NodePool`), or `pod templates` (of every workload kind),
    /// `workloads`, `any object`, `files`, `suppressions`.
    pub kinds: &'static [&'static str],
    pub severity: Severity,
    /// One line for `gpuops rules`.
    pub summary: &'static str,
    /// The full explanation (the rule's doc comment): what, why, example, fix.
    pub doc: &'static str,
    pub check: fn(&Ctx, &mut Vec<Diagnostic>),
    /// Whether the check judges each object (with its templates) on its own, reading the rest
    /// of the index only to look things up: then it runs chunk by chunk (see [`Ctx::objects`]).
    pub chunked: bool,
}

impl Rule {
    /// The explanation with the doc-comment indentation removed.
    pub fn explanation(&self) -> String {
        self.doc
            .lines()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string()
    }
}

/// What a rule sees: the index, the objects it judges, and helpers that stamp findings with the
/// rule's name.
pub struct Ctx<'i, 'a> {
    pub ix: &'i Index<'a>,
    pub rule: &'static Rule,
    /// The objects a chunked rule judges in this run (all of them for the others).
    scope: Range<usize>,
}

impl<'i, 'a> Ctx<'i, 'a> {
    /// A run over the whole index.
    pub fn new(ix: &'i Index<'a>, rule: &'static Rule) -> Self {
        Self::chunk(ix, rule, 0..ix.objects.len())
    }
    /// A run of a chunked rule over some objects (and their templates).
    pub fn chunk(ix: &'i Index<'a>, rule: &'static Rule, objects: Range<usize>) -> Self {
        Ctx {
            ix,
            rule,
            scope: objects,
        }
    }
    /// The objects this run judges, with their index in `ix.objects`.
    pub fn objects(&self) -> impl Iterator<Item = (usize, &'i Object<'a>)> + use<'i, 'a> {
        let start = self.scope.start;
        self.ix.objects[self.scope.clone()]
            .iter()
            .enumerate()
            .map(move |(i, o)| (start + i, o))
    }
    /// The pod templates of [`Self::objects`], with their index in `ix.templates`.
    pub fn templates(&self) -> impl Iterator<Item = (usize, &'i PodTemplate<'a>)> + use<'i, 'a> {
        let range = self.ix.templates_within(self.scope.clone());
        let start = range.start;
        self.ix.templates[range]
            .iter()
            .enumerate()
            .map(move |(i, t)| (start + i, t))
    }
    /// The node classes (EC2NodeClass, AWSNodeTemplate) among [`Self::objects`], with their
    /// objects.
    pub fn node_classes(
        &self,
    ) -> impl Iterator<Item = (&'i Object<'a>, &'i NodeClass<'a>)> + use<'i, 'a> {
        // In object order: the scope's classes are one run of them.
        let ix = self.ix;
        let lo = ix
            .node_classes
            .partition_point(|c| c.obj < self.scope.start);
        let hi = ix.node_classes.partition_point(|c| c.obj < self.scope.end);
        ix.node_classes[lo..hi]
            .iter()
            .map(move |c| (&ix.objects[c.obj], c))
    }
    /// The NodePools among [`Self::objects`], with their index in `ix.nodepools`.
    pub fn nodepools(&self) -> impl Iterator<Item = (usize, &'i NodePool<'a>)> + use<'i, 'a> {
        // In object order, like the node classes.
        let ix = self.ix;
        let lo = ix.nodepools.partition_point(|p| p.obj < self.scope.start);
        let hi = ix.nodepools.partition_point(|p| p.obj < self.scope.end);
        (lo..hi).map(move |i| (i, &ix.nodepools[i]))
    }
    /// A finding at the rule's default severity.
    /// Whether template `ti`'s selectors fit pools, none of them Karpenter's (a managed node
    /// group, a cluster-autoscaler group), or its queue's admission check places it elsewhere
    /// (MultiKueue, a ProvisioningRequest), or no Karpenter pool can launch GPU instances at all:
    /// Karpenter never disrupts the nodes it lands on. A template that fits no pool at all is
    /// another rule's finding and is not judged so either.
    pub fn off_karpenter(&self, ti: usize) -> bool {
        let ix = self.ix;
        if ix.nodepools.is_empty() {
            return false;
        }
        // A MultiKueue worker cluster or the cluster autoscaler's node groups.
        if ix.elsewhere.get(ti).copied().flatten().is_some() {
            return true;
        }
        // No Karpenter pool in view can launch a GPU instance (Azure D SKUs, CPU categories):
        // the GPU nodes come from elsewhere.
        if !ix.karpenter_launches_gpus() {
            return true;
        }
        let Some(p) = ix.own_placement.get(ti).copied().flatten() else {
            return false;
        };
        // Whose labels it fits and that can launch its accelerators (not only a Trainium pool
        // for an NVIDIA pod): without one, its GPU nodes come from elsewhere (HyperPod, a node
        // group). Taints count only where capacity outside Karpenter takes the pod instead: a
        // toleration missing for every pool is a mistake of its own.
        let offers = ix.offers_for(ti);
        let fitting: Vec<usize> = ix.placements[p]
            .fits
            .iter()
            .map(|&pool| pool as usize)
            .filter(|&pool| offers(pool))
            .collect();
        if !fitting
            .iter()
            .any(|&pool| ix.nodepools[pool].is_karpenter())
        {
            return true;
        }
        // Capacity outside Karpenter (an EKS managed node group) whose taints it tolerates,
        // where every Karpenter pool it fits taints it away: it runs on the group's nodes,
        // which Karpenter never disrupts (and no toleration is missing: it fits a pool).
        let t = &ix.templates[ti];
        let tolerated = |pool: usize| {
            crate::sched::taints(t.constraints(), &ix.nodepools[pool], ix.settings.eks)
                .untolerated
                .is_empty()
        };
        fitting
            .iter()
            .any(|&pool| !ix.nodepools[pool].is_karpenter() && tolerated(pool))
            && !fitting
                .iter()
                .any(|&pool| ix.nodepools[pool].is_karpenter() && tolerated(pool))
    }

    pub fn at(&self, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.rule.name, self.rule.severity, loc, message)
    }
    /// A reference to an object of `kind` the linted files do not define, and nothing close to
    /// it: an error only when the cluster is declared complete (`cluster: {complete: true}`);
    /// else a warning, since such objects often come from Terraform, an add-on or another
    /// repository; and nothing at all when the files define no object of that kind, which then
    /// all live elsewhere.
    pub fn unresolved(&self, d: Diagnostic, kind: &str) -> Option<Diagnostic> {
        if self.ix.settings.complete {
            return Some(d);
        }
        self.ix.of_kind(kind).next()?;
        let mut d = d;
        d.severity = Severity::Warning;
        Some(d)
    }
    /// A finding about an object, at one of its nodes.
    pub fn on(&self, obj: &Object<'_>, node: Node<'_>, message: impl Into<String>) -> Diagnostic {
        self.at(obj.loc(node), message).object(Some(obj.obj_ref()))
    }

    /// Where the evidence that classified a template stands, when it is more than the kind.
    pub fn evidence_loc(&self, t: &PodTemplate, intent: &Intent) -> Option<Loc> {
        let at = intent.at.filter(|_| intent.points_at_evidence())?;
        Some(match intent.cue {
            Some(cue) => self.within(t.file, at, cue, None),
            None => t.loc(at),
        })
    }

    /// The place of `needle` inside a scalar (after `after`, when given) when the source holds it
    /// verbatim, else the whole scalar: a word in a `sh -c` script, not the script.
    pub fn within(&self, file: FileId, node: Node<'_>, needle: &str, after: Option<&str>) -> Loc {
        self.within_loc(
            Loc {
                file,
                span: node.span(),
            },
            needle,
            after,
        )
    }

    /// [`Self::within`] for a place already located (a setting read from a ConfigMap value).
    pub fn within_loc(&self, whole: Loc, needle: &str, after: Option<&str>) -> Loc {
        let (file, span) = (whole.file, whole.span);
        let Some(src) = self
            .ix
            .files
            .get(file)
            .and_then(|f| f.text.get(span.range()))
        else {
            return whole;
        };
        let from = after
            .and_then(|a| src.find(a).map(|i| i + a.len()))
            .unwrap_or(0);
        let Some(rel) = src.get(from..).and_then(|rest| rest.find(needle)) else {
            return whole;
        };
        let start = from + rel;
        let end = start + needle.len();
        if needle.is_empty() || (start == 0 && end == src.len()) {
            return whole;
        }
        Loc {
            file,
            span: Span::new(span.start() + start, span.start() + end),
        }
    }
}

/// A reference value worth checking: a non-empty scalar that is not null or a placeholder.
pub(crate) fn usable(n: Node<'_>) -> Option<&str> {
    if n.is_null() {
        return None;
    }
    n.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !crate::quantity::is_placeholder(s))
}

/// Where to point at a pod template as a whole: its `metadata` key, else the GPU resource key
/// of its first GPU container, else its first GPU ResourceClaim, else the owner's name.
pub(crate) fn template_anchor<'a>(owner: &Object<'a>, t: &PodTemplate<'a>) -> Option<Node<'a>> {
    if let Some(m) = t.metadata
        && let Some(k) = key_of(owner.root, m)
    {
        return Some(k);
    }
    t.gpu_containers()
        .filter(|c| !c.init)
        .chain(t.gpu_containers())
        .flat_map(|c| c.accelerators())
        .find(|(name, _)| is_gpu_resource(name))
        .map(|(_, k)| k)
        .or_else(|| t.dra_gpus().first().map(|g| g.entry))
        .or(Some(owner.anchor()))
}

/// `Job ml/train` for a single-template workload, else with the template's path
/// (`PyTorchJob ml/llama (\`spec.pytorchReplicaSpecs.Worker.template\`)`).
pub(crate) fn describe_template(owner: &Object<'_>, t: &PodTemplate<'_>) -> String {
    match owner.kind {
        "Pod" | "Job" | "Deployment" | "StatefulSet" | "ReplicaSet" | "CronJob" => owner.describe(),
        _ => format!("{} (`{}`)", owner.describe(), t.path),
    }
}

/// The MIG resources a template's containers ask for: (resource, profile, key node), each
/// resource once (`nvidia.com/mig-1g.10gb` and its time-sliced `.shared` form).
pub(crate) fn mig_requests<'a>(t: &PodTemplate<'a>) -> Vec<(&'a str, &'a str, Node<'a>)> {
    let mut out: Vec<(&'a str, &'a str, Node<'a>)> = Vec::new();
    for c in t.gpu_containers() {
        for (name, key) in c.accelerators() {
            if let Some(profile) = crate::catalog::mig::requested_profile(name)
                && !out.iter().any(|(n, _, _)| *n == name)
            {
                out.push((name, profile, key));
            }
        }
    }
    out
}

/// The key node whose value is `target` (searched by identity under `root`).
pub(crate) fn key_of<'a>(root: Node<'a>, target: Node<'_>) -> Option<Node<'a>> {
    if let Some(map) = root.as_map() {
        for (k, v) in map {
            if v.is(target) {
                return Some(k);
            }
            if let Some(found) = key_of(v, target) {
                return Some(found);
            }
        }
    }
    root.items().find_map(|item| key_of(item, target))
}

/// Declares a rule's static from its doc comment and metadata.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        name: $name:literal,
        category: $cat:literal,
        kinds: $kinds:expr,
        severity: $sev:ident,
        summary: $summary:literal,
        check: $check:path
        $(, chunked: $chunked:literal)? $(,)?
    ) => {
        $(#[doc = $doc])*
        pub static RULE: $crate::rules::Rule = $crate::rules::Rule {
            name: $name,
            category: $cat,
            kinds: $kinds,
            severity: $crate::diag::Severity::$sev,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
            chunked: false $(|| $chunked)?,
        };
    };
}

mod ami_alias_unpinned;
mod checkpoint_volume_missing;
mod clusterqueue_admits_no_namespace;
mod clusterqueue_not_found;
mod cuda_visible_devices_hides_gpu;
mod deprecated_api;
mod device_plugin_misses_gpu_pool;
mod dra_class_unmapped;
mod ebs_unencrypted;
mod efa_not_requested;
mod expire_after_shorter_than_job;
mod flavor_matches_no_nodepool;
mod flavor_toleration_mismatch;
mod gpu_count_exceeds_instance;
mod gpu_count_mismatch_parallelism;
mod gpu_count_mismatch_processes;
mod gpu_inference_pdb_missing;
mod gpu_limit_missing;
mod gpu_nodepool_unbounded;
mod gpu_nodepool_untainted;
mod gpu_pdb_blocks_eviction;
mod gpu_pod_exceeds_quota;
mod gpu_quantity_invalid;
mod gpu_quota_unenforced;
mod gpu_request_missing;
mod gpu_resource_misspelled;
mod gpu_rollout_blocked_by_volume;
mod gpu_rollout_exceeds_quota;
mod gpu_toleration_missing;
mod gpu_workloads_exceed_quota;
mod hpa_gpu_resource_metric;
mod imds_tokens_optional;
mod inference_spot_only;
mod invalid_hcl;
mod invalid_yaml;
mod limitrange_gpu_max_default;
mod localqueue_not_found;
mod mig_profile_unavailable;
mod mig_strategy_mismatch;
mod nodeclass_not_found;
mod nodepool_auto_mode_label;
mod nodepool_cost_exceeds_budget;
mod nodepool_limit_below_instance;
mod nodepool_requirements_unsatisfiable;
mod nodeselector_matches_no_nodepool;
mod object_defined_twice;
mod priorityclass_not_found;
mod queue_name_as_annotation;
mod queue_quota_exceeds_pool_limit;
mod queue_resource_unknown;
mod resourceflavor_not_found;
mod schema_violation;
mod shared_gpu_count_above_one;
mod shared_gpu_for_training;
mod shared_gpu_pool_ambiguous;
mod shared_gpu_quota_unadvertised;
mod shm_volume_missing;
mod source_build_failed;
mod spot_termination_grace_too_short;
mod support;
pub(crate) mod suppression_invalid;
mod training_consolidation_underutilized;
mod training_do_not_disrupt_missing;
mod training_restart_always;
pub(crate) mod unused_suppression;
mod workload_exceeds_queue_quota;
mod yaml_type_trap;

static ALL: &[&Rule] = &[
    &invalid_yaml::RULE,
    &invalid_hcl::RULE,
    &source_build_failed::RULE,
    &gpu_limit_missing::RULE,
    &gpu_quantity_invalid::RULE,
    &gpu_resource_misspelled::RULE,
    &gpu_request_missing::RULE,
    &cuda_visible_devices_hides_gpu::RULE,
    &limitrange_gpu_max_default::RULE,
    &gpu_toleration_missing::RULE,
    &nodeselector_matches_no_nodepool::RULE,
    &gpu_count_exceeds_instance::RULE,
    &mig_profile_unavailable::RULE,
    &mig_strategy_mismatch::RULE,
    &shared_gpu_for_training::RULE,
    &shared_gpu_count_above_one::RULE,
    &shared_gpu_pool_ambiguous::RULE,
    &nodepool_requirements_unsatisfiable::RULE,
    &nodepool_limit_below_instance::RULE,
    &nodepool_auto_mode_label::RULE,
    &device_plugin_misses_gpu_pool::RULE,
    &gpu_nodepool_untainted::RULE,
    &gpu_nodepool_unbounded::RULE,
    &gpu_quota_unenforced::RULE,
    &gpu_pod_exceeds_quota::RULE,
    &gpu_workloads_exceed_quota::RULE,
    &gpu_rollout_exceeds_quota::RULE,
    &gpu_rollout_blocked_by_volume::RULE,
    &nodepool_cost_exceeds_budget::RULE,
    &training_do_not_disrupt_missing::RULE,
    &training_consolidation_underutilized::RULE,
    &checkpoint_volume_missing::RULE,
    &training_restart_always::RULE,
    &gpu_inference_pdb_missing::RULE,
    &gpu_pdb_blocks_eviction::RULE,
    &hpa_gpu_resource_metric::RULE,
    &inference_spot_only::RULE,
    &spot_termination_grace_too_short::RULE,
    &expire_after_shorter_than_job::RULE,
    &efa_not_requested::RULE,
    &gpu_count_mismatch_processes::RULE,
    &gpu_count_mismatch_parallelism::RULE,
    &shm_volume_missing::RULE,
    &nodeclass_not_found::RULE,
    &clusterqueue_not_found::RULE,
    &clusterqueue_admits_no_namespace::RULE,
    &localqueue_not_found::RULE,
    &resourceflavor_not_found::RULE,
    &priorityclass_not_found::RULE,
    &flavor_matches_no_nodepool::RULE,
    &queue_name_as_annotation::RULE,
    &queue_quota_exceeds_pool_limit::RULE,
    &workload_exceeds_queue_quota::RULE,
    &dra_class_unmapped::RULE,
    &queue_resource_unknown::RULE,
    &shared_gpu_quota_unadvertised::RULE,
    &flavor_toleration_mismatch::RULE,
    &object_defined_twice::RULE,
    &ami_alias_unpinned::RULE,
    &ebs_unencrypted::RULE,
    &imds_tokens_optional::RULE,
    &deprecated_api::RULE,
    &schema_violation::RULE,
    &yaml_type_trap::RULE,
    &suppression_invalid::RULE,
    &unused_suppression::RULE,
];

/// Every registered rule, in catalog order.
pub fn all() -> &'static [&'static Rule] {
    ALL
}

/// Built-in rules that run only when enabled (a level in `rules:`, or `--rule`): advice that is
/// a release-management choice more than a mistake, and that samples and labs rightly ignore.
pub const OPT_IN: &[&str] = &["ami-alias-unpinned"];

/// `settings` with every opt-in built-in rule on at its default severity (benchmarks and tests
/// that exercise every rule).
pub fn with_opt_in(mut settings: crate::config::Settings) -> crate::config::Settings {
    use crate::config::Level;
    for r in ALL.iter().filter(|r| OPT_IN.contains(&r.name)) {
        let level = match r.severity {
            crate::diag::Severity::Warning => Level::Warning,
            crate::diag::Severity::Error => Level::Error,
        };
        settings.rules.entry(r.name.to_string()).or_insert(level);
    }
    settings
}

pub fn find(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

/// The registered rule name closest to a mistyped one.
pub fn closest(name: &str) -> Option<&'static str> {
    crate::text::closest(name, ALL.iter().map(|r| r.name))
}

/// Every registered rule's name, in catalog order.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|r| r.name).collect()
}
