//! CEL rules that were not checked, and why: counted with the CRDs they belong to, merged over a
//! run's clusters, said in one note.

use super::known_function;
use ::cel::ExecutionError;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Why a rule was not evaluated (for the summary note).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    Compile,
    Unsupported(String),
    Runtime,
    Cost,
}

/// Rules skipped, per (CRD kind and version, rule text): kept with the CRDs they belong to (one
/// set per cluster index), so a run says what it skipped and nothing of another run's.
#[derive(Default)]
pub struct Skips(Mutex<BTreeMap<(String, String), Skip>>);

impl Skips {
    pub(super) fn note(&self, what: &str, rule: &str, why: Skip) {
        if let Ok(mut m) = self.0.lock() {
            // The first reason is kept: compile problems before run-time ones.
            m.entry((what.to_string(), rule.to_string())).or_insert(why);
        }
    }

    /// What was skipped so far; clears the set.
    pub fn take(&self) -> SkipSet {
        SkipSet(
            self.0
                .lock()
                .map(|mut m| std::mem::take(&mut *m))
                .unwrap_or_default(),
        )
    }
}

/// Rules skipped, merged over a run's clusters.
#[derive(Default, Debug)]
pub struct SkipSet(pub(super) BTreeMap<(String, String), Skip>);

impl SkipSet {
    /// Adds another index's skips; a rule keeps the first reason given for it.
    pub fn merge(&mut self, other: SkipSet) {
        for (k, v) in other.0 {
            self.0.entry(k).or_insert(v);
        }
    }

    /// One line saying how many CEL rules were skipped and why, if any was.
    pub fn note(&self) -> Option<String> {
        let m = &self.0;
        if m.is_empty() {
            return None;
        }
        let mut compile = 0;
        let mut runtime = 0;
        let mut cost = 0;
        let mut functions: Vec<&str> = Vec::new();
        for why in m.values() {
            match why {
                Skip::Compile => compile += 1,
                Skip::Runtime => runtime += 1,
                Skip::Cost => cost += 1,
                Skip::Unsupported(f) => {
                    if !functions.contains(&f.as_str()) {
                        functions.push(f);
                    }
                }
            }
        }
        functions.sort_unstable();
        let unsupported = m.len() - compile - runtime - cost;
        let mut parts = Vec::new();
        if unsupported > 0 {
            parts.push(format!(
                "{unsupported} call{} not supported here ({})",
                if functions.len() == 1 {
                    "s a function"
                } else {
                    " functions"
                },
                crate::diag::backticked(&functions, ", ")
            ));
        }
        if compile > 0 {
            parts.push(format!(
                "{compile} do{} not compile",
                if compile == 1 { "es" } else { "" }
            ));
        }
        if runtime > 0 {
            parts.push(format!("{runtime} failed to evaluate"));
        }
        if cost > 0 {
            parts.push(format!("{cost} over the evaluation budget"));
        }
        Some(format!(
            "note: {} CEL rule{} (x-kubernetes-validations) of user CRDs not checked: {}",
            m.len(),
            if m.len() == 1 { "" } else { "s" },
            parts.join("; ")
        ))
    }
}

pub(super) fn skip_of(e: &ExecutionError) -> Skip {
    let name = match e {
        ExecutionError::UndeclaredReference(name) => name.as_str(),
        ExecutionError::NoSuchOverload(o) => o.function(),
        ExecutionError::NotSupportedAsMethod { method, .. } => method.as_str(),
        _ => return Skip::Runtime,
    };
    // A function the environment has, called with values of other types (a value of the wrong
    // type in the object), is a run-time failure, not a missing function.
    if known_function(name) {
        Skip::Runtime
    } else {
        Skip::Unsupported(name.to_string())
    }
}
