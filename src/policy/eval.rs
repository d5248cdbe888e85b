//! Evaluating policies over a cluster's index: one input document, every enabled policy in
//! parallel, findings at the nodes their paths name.

use super::{Policies, PolicyError, PolicyMeta, bundled, input};
use crate::config::Settings;
use crate::diag::{Diagnostic, Severity};
use crate::index::Index;
use input::Seg;
use rayon::prelude::*;
use regorus::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;

impl Policies {
    /// Evaluates the enabled policies over one cluster's index, in parallel, the input document
    /// built once for all of them.
    pub fn run(&self, ix: &Index<'_>, settings: &Settings, cluster: Option<&str>) -> Run {
        let enabled: Vec<&PolicyMeta> = self
            .policies
            .iter()
            .filter(|p| super::enabled(settings, p.name))
            .collect();
        if enabled.is_empty() {
            return Run::default();
        }
        // User packages may call one another, enabled or not; bundled ones stand alone.
        let mut needs = self.library_needs.clone();
        for p in self
            .policies
            .iter()
            .filter(|p| !p.bundled || super::enabled(settings, p.name))
        {
            needs.merge(&p.needs);
        }
        let (doc, aside) = input::build_parts(ix, cluster, &needs);
        let runs: Vec<Run> = enabled.par_iter().map(|p| self.eval(p, ix, &doc)).collect();
        release(doc, aside);
        let mut out = Run::default();
        for r in runs {
            out.diagnostics.extend(r.diagnostics);
            out.errors.extend(r.errors);
        }
        out
    }

    fn eval(&self, p: &PolicyMeta, ix: &Index<'_>, doc: &Value) -> Run {
        let mut out = Run::default();
        let mut engine = self.engine.clone();
        engine.set_execution_timer_config(regorus::utils::limits::ExecutionTimerConfig {
            limit: self.budget,
            check_interval: std::num::NonZeroU32::MIN.saturating_add(63),
        });
        engine.set_input(doc.clone());
        let sets = [
            (&p.deny, "deny", p.severity),
            (&p.warn, "warn", Severity::Warning),
        ];
        for (declared, rule, severity) in sets {
            let Some((file, line)) = declared else {
                continue;
            };
            let value = match engine.eval_rule(format!("{}.{rule}", p.package)) {
                Ok(v) => v,
                Err(e) => {
                    let mut err = PolicyError::from_engine(&e, (&p.file, p.line));
                    err.policy = Some(p.name);
                    out.errors.push(err);
                    // The budget is spent, or the policy is broken on this input: `warn` would
                    // fail the same way.
                    break;
                }
            };
            let items: Vec<&Value> = match &value {
                Value::Set(s) => s.iter().collect(),
                Value::Array(a) => a.iter().collect(),
                Value::Undefined | Value::Null => Vec::new(),
                _ => {
                    out.errors.push(PolicyError {
                        policy: Some(p.name),
                        ..PolicyError::at(
                            file,
                            *line,
                            format!("`{rule}` must be a set of findings {{msg, object, path}}"),
                        )
                    });
                    continue;
                }
            };
            let mut bad: BTreeMap<String, usize> = BTreeMap::new();
            for item in items {
                match finding(ix, p.name, severity, item) {
                    Ok(d) => out.diagnostics.push(d),
                    Err(m) => *bad.entry(m).or_default() += 1,
                }
            }
            for (m, n) in bad {
                let times = if n > 1 {
                    format!(" ({n} findings)")
                } else {
                    String::new()
                };
                out.errors.push(PolicyError {
                    policy: Some(p.name),
                    ..PolicyError::at(file, *line, format!("{m}{times}"))
                });
            }
        }
        out
    }
}

/// The last input document, kept until the process exits (see [`keep_inputs_until_exit`]).
static KEPT: Mutex<Option<(Value, Vec<Value>)>> = Mutex::new(None);
static KEEP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A process that exits right after its lint (the CLI) keeps the last policy input document
/// instead of freeing it: freeing a few hundred thousand values costs a tenth of a second at
/// 10,000 files, and the exit returns the memory at once. Only the last: with one index per
/// cluster, keeping them all would add up. Others (tests, embedders) free each at once.
pub fn keep_inputs_until_exit() {
    KEEP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Frees an input document, or keeps it in place of the one kept before (see
/// [`keep_inputs_until_exit`]).
fn release(doc: Value, aside: Vec<Value>) {
    let free = if KEEP.load(std::sync::atomic::Ordering::Relaxed) {
        let mut kept = KEPT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.replace((doc, aside))
    } else {
        Some((doc, aside))
    };
    if let Some((doc, aside)) = free {
        // The views first, then objects and templates in parallel: that halves the time.
        drop(doc);
        aside.into_par_iter().for_each(drop);
    }
}

/// What the policies found on one input, and the policies that failed on it.
#[derive(Debug, Default)]
pub struct Run {
    pub diagnostics: Vec<Diagnostic>,
    pub errors: Vec<PolicyError>,
}

/// Runs the enabled policies (the run's loaded set, else the bundled pack) over one index.
pub fn run(
    ix: &Index<'_>,
    settings: &Settings,
    policies: Option<&Policies>,
    cluster: Option<&str>,
) -> Run {
    let any_on =
        |mut names: std::slice::Iter<'_, &'static str>| names.any(|n| super::enabled(settings, n));
    match policies {
        Some(p) => {
            let names: Vec<&'static str> = p.policies.iter().map(|m| m.name).collect();
            if any_on(names.iter()) {
                p.run(ix, settings, cluster)
            } else {
                Run::default()
            }
        }
        None => {
            let names: Vec<&'static str> = bundled::PACK.iter().map(|b| b.name).collect();
            if !any_on(names.iter()) {
                return Run::default();
            }
            match Policies::bundled() {
                Ok(p) => p.run(ix, settings, cluster),
                Err(e) => Run {
                    diagnostics: Vec::new(),
                    errors: vec![e.clone()],
                },
            }
        }
    }
}

/// Which object a finding's `object` names: an object of `input.objects`, its index, or
/// `{kind, namespace, name}`.
fn object_of(ix: &Index<'_>, v: &Value) -> Option<usize> {
    let index = |n: &Value| {
        n.as_u64()
            .ok()
            .map(|i| i as usize)
            .filter(|&i| i < ix.objects.len())
    };
    match v {
        Value::Number(_) => index(v),
        Value::Object(_) => {
            if let Some(i) = index(&v["gpuops"]["index"]) {
                return Some(i);
            }
            let kind = v["kind"].as_string().ok()?;
            let name = v["name"].as_string().ok()?;
            let ns = v["namespace"].as_string().ok();
            ix.objects.iter().position(|o| {
                o.kind == kind.as_ref()
                    && o.name == Some(name.as_ref())
                    && (ns.is_none() || o.namespace == ns.map(|s| s.as_ref()))
            })
        }
        _ => None,
    }
}

fn field_path(v: &Value) -> Option<Vec<Seg>> {
    let items = v.as_array().ok()?;
    items
        .iter()
        .map(|s| match s {
            Value::String(k) => Some(Seg::Key(k.to_string())),
            Value::Number(_) => s.as_u64().ok().map(|i| Seg::Index(i as usize)),
            _ => None,
        })
        .collect()
}

/// A `{msg, object, path, help?}` finding as a diagnostic at the node its path names, or at the
/// object's `metadata.name` when the path is missing or does not resolve.
fn finding(
    ix: &Index<'_>,
    rule: &'static str,
    severity: Severity,
    v: &Value,
) -> Result<Diagnostic, String> {
    if v.as_object().is_err() {
        return Err("a finding must be an object {msg, object, path}".into());
    }
    let msg = v["msg"]
        .as_string()
        .map_err(|_| "a finding has no `msg` string".to_string())?;
    let oi = object_of(ix, &v["object"]).ok_or_else(|| {
        "a finding's `object` names no input object (give the object from `input.objects`, its `gpuops.index`, or {kind, namespace, name})"
            .to_string()
    })?;
    let o = &ix.objects[oi];
    // A path that does not resolve to the end (a field the object lacks) is no place to point.
    let node = match field_path(&v["path"]) {
        Some(p) if !p.is_empty() => match input::resolve(o.root, &p) {
            (n, steps) if steps == p.len() => n,
            _ => o.anchor(),
        },
        _ => o.anchor(),
    };
    let mut d =
        Diagnostic::new(rule, severity, o.loc(node), msg.to_string()).object(Some(o.obj_ref()));
    if let Ok(h) = v["help"].as_string() {
        d = d.help(h.to_string());
    }
    Ok(d)
}
