//! The rule catalog: one file per rule, each a pure function of the index.

use crate::diag::{Diagnostic, Loc, Severity};
use crate::index::Index;
use crate::model::Object;
use crate::yaml::Node;

/// A lint rule: its metadata, its explanation and its check.
pub struct Rule {
    /// Stable kebab-case name.
    pub name: &'static str,
    pub category: &'static str,
    pub severity: Severity,
    /// One line for `gpuops rules`.
    pub summary: &'static str,
    /// The full explanation (the rule's doc comment): what, why, example, fix.
    pub doc: &'static str,
    pub check: fn(&Ctx, &mut Vec<Diagnostic>),
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

/// What a rule sees: the index, and helpers that stamp findings with the rule's name.
pub struct Ctx<'i, 'a> {
    pub ix: &'i Index<'a>,
    pub rule: &'static Rule,
}

impl<'a> Ctx<'_, 'a> {
    /// A finding at the rule's default severity.
    pub fn at(&self, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.rule.name, self.rule.severity, loc, message)
    }
    /// A finding about an object, at one of its nodes.
    pub fn on(&self, obj: &Object<'_>, node: &Node, message: impl Into<String>) -> Diagnostic {
        self.at(obj.loc(node), message).object(Some(obj.obj_ref()))
    }
}

/// A reference value worth checking: a non-empty scalar that is not null or a placeholder.
pub(crate) fn usable(n: &Node) -> Option<&str> {
    if n.is_null() {
        return None;
    }
    n.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty() && !crate::quantity::is_placeholder(s))
}

/// Whether an edit distance makes a likely typo of `name`.
pub(crate) fn close_enough(name: &str, dist: usize) -> bool {
    dist > 0 && dist <= 3 && dist * 3 <= name.chars().count().max(3)
}

/// Declares a rule's static from its doc comment and metadata.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        name: $name:literal,
        category: $cat:literal,
        severity: $sev:ident,
        summary: $summary:literal,
        check: $check:path $(,)?
    ) => {
        $(#[doc = $doc])*
        pub static RULE: $crate::rules::Rule = $crate::rules::Rule {
            name: $name,
            category: $cat,
            severity: $crate::diag::Severity::$sev,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}

mod ami_alias_unpinned;
mod checkpoint_volume_missing;
mod clusterqueue_not_found;
mod deprecated_api;
mod ebs_unencrypted;
mod flavor_matches_no_nodepool;
mod gpu_limit_missing;
mod gpu_nodepool_unbounded;
mod gpu_nodepool_untainted;
mod gpu_quantity_invalid;
mod gpu_toleration_missing;
mod imds_tokens_optional;
mod invalid_yaml;
mod localqueue_not_found;
mod nodeclass_not_found;
mod nodeselector_matches_no_nodepool;
mod priorityclass_not_found;
mod queue_name_as_annotation;
mod resourceflavor_not_found;
mod source_build_failed;
mod training_consolidation_underutilized;
mod training_do_not_disrupt_missing;

static ALL: &[&Rule] = &[
    &invalid_yaml::RULE,
    &source_build_failed::RULE,
    &gpu_limit_missing::RULE,
    &gpu_quantity_invalid::RULE,
    &gpu_toleration_missing::RULE,
    &nodeselector_matches_no_nodepool::RULE,
    &gpu_nodepool_untainted::RULE,
    &gpu_nodepool_unbounded::RULE,
    &training_do_not_disrupt_missing::RULE,
    &training_consolidation_underutilized::RULE,
    &checkpoint_volume_missing::RULE,
    &nodeclass_not_found::RULE,
    &clusterqueue_not_found::RULE,
    &localqueue_not_found::RULE,
    &resourceflavor_not_found::RULE,
    &priorityclass_not_found::RULE,
    &flavor_matches_no_nodepool::RULE,
    &queue_name_as_annotation::RULE,
    &ami_alias_unpinned::RULE,
    &ebs_unencrypted::RULE,
    &imds_tokens_optional::RULE,
    &deprecated_api::RULE,
];

/// Every registered rule, in catalog order.
pub fn all() -> &'static [&'static Rule] {
    ALL
}

pub fn find(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

/// The registered rule name closest to a mistyped one.
pub fn closest(name: &str) -> Option<&'static str> {
    ALL.iter()
        .map(|r| (edit_distance(name, r.name), r.name))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n)
}

pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
