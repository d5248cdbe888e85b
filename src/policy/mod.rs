//! Organisation policies in Rego: the bundled pack (`policies/`, compiled in, each off until
//! enabled) and user directories (`policies:` in the config, `--policy DIR`).
//!
//! Policies are parsed once per run into one regorus engine; each cluster's index becomes one
//! input document ([`input`]) shared by every enabled policy, evaluated in parallel beside the
//! built-in rules. A policy package declares `metadata := {"id", "severity", "summary",
//! "description"}` and a `deny` and/or `warn` set of `{msg, object, path}`; findings become
//! ordinary diagnostics named `policy/<id>`, so severities, `fail-on`, suppressions and every
//! output format treat them like built-in rules.
//!
//! The engine is regorus without its I/O builtins (no `http.send`, `opa.runtime`, `time.*`,
//! `net.*`, `uuid.*`): a policy sees its input and `data`, never files, environment or network.

pub mod bundled;
pub mod input;
pub mod needs;
pub mod testing;

use crate::config::Settings;
use crate::diag::{Diagnostic, Severity};
use crate::index::Index;
use input::Seg;
use rayon::prelude::*;
use regorus::{Engine, Value};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Rule names of policies start with this.
pub use crate::config::POLICY_PREFIX as PREFIX;

/// How long one policy may run over one cluster's input before it is stopped.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(10);

/// A policy as `gpuops rules` lists it.
#[derive(Debug, Clone)]
pub struct PolicyMeta {
    /// `policy/<id>`.
    pub name: &'static str,
    pub id: String,
    /// Severity of `deny` findings (`warn` findings are warnings).
    pub severity: Severity,
    pub summary: String,
    pub description: String,
    /// The module that declares the metadata (a repository path for bundled policies).
    pub file: String,
    /// `data.<package>`.
    pub package: String,
    pub bundled: bool,
    /// Where `deny` and `warn` are declared (module, line), when they are.
    deny: Option<(String, u32)>,
    warn: Option<(String, u32)>,
    /// Where `metadata` is declared: errors of the policy as a whole point there.
    line: u32,
    /// What its package's modules read of the input document.
    needs: needs::Needs,
}

impl PolicyMeta {
    /// Bundled policies run only when the config or `--rule` asks for them.
    pub fn default_on(&self) -> bool {
        !self.bundled
    }
}

/// A policy that cannot be loaded (exit 2) or that failed on one input (the run goes on).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PolicyError {
    /// The policy that failed at run time, when it is known.
    pub policy: Option<&'static str>,
    pub path: String,
    /// 1-based; 0 when only the file is known.
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}: ", self.path)?,
            (l, 0) => write!(f, "{}:{l}: ", self.path)?,
            (l, c) => write!(f, "{}:{l}:{c}: ", self.path)?,
        }
        if let Some(p) = self.policy {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl PolicyError {
    fn at(path: &str, line: u32, message: impl Into<String>) -> Self {
        PolicyError {
            policy: None,
            path: path.to_string(),
            line,
            col: if line > 0 { 1 } else { 0 },
            message: message.into(),
        }
    }

    /// A regorus error (`--> file:line:col` … `error: message`) as a located error; errors
    /// without a place point at `fallback`.
    fn from_engine(err: &dyn fmt::Display, fallback: (&str, u32)) -> Self {
        let text = err.to_string();
        let mut out = PolicyError::at(fallback.0, fallback.1, text.trim());
        for line in text.lines().map(str::trim) {
            if let Some(place) = line.strip_prefix("--> ") {
                let mut parts = place.rsplitn(3, ':');
                let col = parts.next().and_then(|c| c.parse().ok());
                let row = parts.next().and_then(|l| l.parse().ok());
                if let (Some(col), Some(row), Some(path)) = (col, row, parts.next()) {
                    out.path = path.to_string();
                    out.line = row;
                    out.col = col;
                }
            } else if let Some(m) = line.strip_prefix("error: ") {
                out.message = m.to_string();
            }
        }
        if out.message.contains("exceeded time limit") {
            out.message = format!("stopped: it ran past its time budget ({})", out.message);
        }
        out
    }
}

/// One Rego module to load.
#[derive(Debug, Clone)]
pub struct Module {
    /// Shown in errors (`policies/x.rego`, `ci/policies/team.rego`).
    pub path: String,
    pub text: String,
}

/// The compiled policies of a run.
pub struct Policies {
    engine: Engine,
    pub policies: Vec<PolicyMeta>,
    /// Time one policy may run over one cluster's input.
    pub budget: Duration,
    /// What helper packages (no metadata of their own) read of the input: any policy may call
    /// them.
    library_needs: needs::Needs,
}

impl fmt::Debug for Policies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policies")
            .field("policies", &self.policies)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

/// Policy rule names live as long as the process: a [`Diagnostic`] names its rule with a
/// `&'static str`, and a run loads each user policy once, so each distinct name is leaked once
/// (interned here, so reloading in tests does not leak again).
static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();

fn intern(name: String) -> &'static str {
    let set = NAMES.get_or_init(Default::default);
    let mut set = match set.lock() {
        Ok(s) => s,
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some(&s) = set.get(name.as_str()) {
        return s;
    }
    let s: &'static str = Box::leak(name.into_boxed_str());
    set.insert(s);
    s
}

/// The policy rule name `name` if any policy of that name was loaded in this process (or is
/// bundled): how suppressions, scanned before they know the run's settings, keep a static name.
pub fn interned(name: &str) -> Option<&'static str> {
    if let Some(b) = bundled::find(name) {
        return Some(b.name);
    }
    let set = NAMES.get()?;
    let set = match set.lock() {
        Ok(s) => s,
        Err(poisoned) => poisoned.into_inner(),
    };
    set.get(name).copied()
}

pub use crate::config::valid_policy_id as valid_id;

/// The `.rego` files under `dir` (recursively, sorted): (policies, tests).
pub fn read_dir(dir: &Path) -> Result<(Vec<Module>, Vec<Module>), PolicyError> {
    let shown = crate::source::display_path(dir);
    if !dir.is_dir() {
        return Err(PolicyError::at(&shown, 0, "policy directory not found"));
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| {
            PolicyError::at(
                &crate::source::display_path(&d),
                0,
                format!("cannot read: {e}"),
            )
        })?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rego") {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut policies, mut tests) = (Vec::new(), Vec::new());
    for p in files {
        let path = crate::source::display_path(&p);
        let text = std::fs::read_to_string(&p)
            .map_err(|e| PolicyError::at(&path, 0, format!("cannot read: {e}")))?;
        let m = Module { path, text };
        if p.file_stem()
            .is_some_and(|s| s.to_string_lossy().ends_with("_test"))
        {
            tests.push(m);
        } else {
            policies.push(m);
        }
    }
    Ok((policies, tests))
}

/// The bundled pack's modules (`tests`: with their `_test.rego` modules).
pub fn bundled_modules(tests: bool) -> Vec<Module> {
    let mut out = Vec::new();
    for b in bundled::PACK {
        out.push(Module {
            path: b.file.to_string(),
            text: b.source.to_string(),
        });
        if tests {
            out.push(Module {
                path: b.test_file.to_string(),
                text: b.test_source.to_string(),
            });
        }
    }
    out
}

/// A fresh engine: Rego v1, `print` output gathered (a policy never writes to the terminal).
fn engine() -> Engine {
    let mut e = Engine::new();
    e.set_gather_prints(true);
    e
}

/// Adds modules to an engine; a syntax error is a located error.
fn add_modules(engine: &mut Engine, modules: &[Module]) -> Result<Vec<String>, PolicyError> {
    modules
        .iter()
        .map(|m| {
            engine
                .add_policy(m.path.clone(), m.text.clone())
                .map_err(|e| PolicyError::from_engine(&e, (&m.path, 0)))
        })
        .collect()
}

fn add_data(engine: &mut Engine, data: Option<&serde_json::Value>) -> Result<(), PolicyError> {
    let Some(d) = data else { return Ok(()) };
    engine
        .add_data(Value::from(d.clone()))
        .map_err(|e| PolicyError::at("policy-data", 0, format!("unusable `policy-data`: {e}")))
}

impl Policies {
    /// The bundled pack alone, compiled once per process.
    pub fn bundled() -> Result<&'static Policies, &'static PolicyError> {
        static CELL: OnceLock<Result<Policies, PolicyError>> = OnceLock::new();
        CELL.get_or_init(|| Policies::compile(bundled_modules(false), None))
            .as_ref()
    }

    /// The bundled pack plus the policies in `dirs`, with `data` as the `data` document.
    pub fn load(dirs: &[PathBuf], data: Option<&serde_json::Value>) -> Result<Self, PolicyError> {
        let mut modules = bundled_modules(false);
        for d in dirs {
            modules.extend(read_dir(d)?.0);
        }
        Policies::compile(modules, data)
    }

    /// Parses the modules and reads every policy's metadata.
    pub fn compile(
        modules: Vec<Module>,
        data: Option<&serde_json::Value>,
    ) -> Result<Self, PolicyError> {
        let mut engine = engine();
        let packages = add_modules(&mut engine, &modules)?;
        add_data(&mut engine, data)?;
        // Per package: the modules declaring metadata, deny and warn.
        #[derive(Default)]
        struct Decl<'m> {
            metadata: Option<&'m Module>,
            deny: Option<&'m Module>,
            warn: Option<&'m Module>,
        }
        let mut decls: BTreeMap<&str, Decl> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        let mut reads: BTreeMap<&str, needs::Needs> = BTreeMap::new();
        for (m, pkg) in modules.iter().zip(&packages) {
            reads
                .entry(pkg.as_str())
                .or_default()
                .merge(&if bundled::is_bundled(m) {
                    // The pack names every field it reads.
                    needs::Needs::of_module_by_name(&m.text)
                } else {
                    needs::Needs::of_module(&m.text)
                });
            let d = decls.entry(pkg.as_str()).or_insert_with(|| {
                order.push(pkg.as_str());
                Decl::default()
            });
            let has = |rule: &str| {
                engine
                    .has_declared_rule_rooted_at(&m.path, rule)
                    .unwrap_or(false)
            };
            if has("metadata") {
                d.metadata = d.metadata.or(Some(m));
            }
            if has("deny") {
                d.deny = d.deny.or(Some(m));
            }
            if has("warn") {
                d.warn = d.warn.or(Some(m));
            }
        }
        let mut policies: Vec<PolicyMeta> = Vec::new();
        let mut library_needs = needs::Needs::default();
        for pkg in order {
            let d = &decls[pkg];
            let Some(m) = d.metadata else {
                library_needs.merge(&reads[pkg]);
                if let Some(m) = d.deny.or(d.warn) {
                    return Err(PolicyError::at(
                        &m.path,
                        line_of(&m.text, if d.deny.is_some() { "deny" } else { "warn" }),
                        format!(
                            "package `{}` declares findings but no `metadata := {{\"id\": …, \"severity\": …, \"summary\": …, \"description\": …}}`",
                            pkg.trim_start_matches("data.")
                        ),
                    ));
                }
                // A library of helpers.
                continue;
            };
            let line = line_of(&m.text, "metadata");
            let value = engine
                .eval_rule(format!("{pkg}.metadata"))
                .map_err(|e| PolicyError::from_engine(&e, (&m.path, line)))?;
            let at = |m: Option<&Module>, rule: &str| {
                m.map(|m| (m.path.clone(), line_of(&m.text, rule)))
            };
            let mut meta =
                read_metadata(&value, pkg, m, line, at(d.deny, "deny"), at(d.warn, "warn"))?;
            meta.needs = reads.remove(pkg).unwrap_or_default();
            if let Some(first) = policies.iter().find(|p| p.id == meta.id) {
                return Err(PolicyError::at(
                    &m.path,
                    line,
                    format!(
                        "policy id `{}` is declared twice (first in {})",
                        meta.id, first.file
                    ),
                ));
            }
            policies.push(meta);
        }
        Ok(Policies {
            engine,
            policies,
            budget: DEFAULT_BUDGET,
            library_needs,
        })
    }

    /// The `rules:` entries of the config that name no loaded policy, as config problems.
    pub fn unknown_refs(&self, settings: &Settings) -> Vec<crate::config::ConfigProblem> {
        settings
            .policy_refs
            .iter()
            .filter(|(name, _)| self.find(name).is_none())
            .map(|(name, span)| {
                let hint = self
                    .closest(name)
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default();
                crate::config::ConfigProblem {
                    span: *span,
                    message: format!(
                        "unknown policy `{name}`{hint}; `gpuops rules` lists them (with `--policy DIR` for other directories)"
                    ),
                }
            })
            .collect()
    }

    pub fn find(&self, name: &str) -> Option<&PolicyMeta> {
        self.policies.iter().find(|p| p.name == name)
    }

    /// The policy name closest to a mistyped one.
    pub fn closest(&self, name: &str) -> Option<&'static str> {
        self.policies
            .iter()
            .map(|p| (crate::text::edit_distance(name, p.name), p.name))
            .filter(|(d, _)| *d <= 3)
            .min()
            .map(|(_, n)| n)
    }

    /// Evaluates the enabled policies over one cluster's index, in parallel, the input document
    /// built once for all of them.
    pub fn run(&self, ix: &Index<'_>, settings: &Settings, cluster: Option<&str>) -> Run {
        let enabled: Vec<&PolicyMeta> = self
            .policies
            .iter()
            .filter(|p| self::enabled(settings, p.name))
            .collect();
        if enabled.is_empty() {
            return Run::default();
        }
        // User packages may call one another, enabled or not; bundled ones stand alone.
        let mut needs = self.library_needs.clone();
        for p in self
            .policies
            .iter()
            .filter(|p| !p.bundled || self::enabled(settings, p.name))
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

/// The 1-based line where `name` starts a rule at the left margin (0 when none does).
fn line_of(text: &str, name: &str) -> u32 {
    text.lines()
        .position(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([' ', '\t', ':', '=', '{', '[', '(']))
        })
        .map_or(0, |i| i as u32 + 1)
}

fn read_metadata(
    v: &Value,
    pkg: &str,
    m: &Module,
    line: u32,
    deny: Option<(String, u32)>,
    warn: Option<(String, u32)>,
) -> Result<PolicyMeta, PolicyError> {
    let bad = |msg: String| PolicyError::at(&m.path, line, msg);
    if v.as_object().is_err() {
        return Err(bad(
            "`metadata` must be an object {\"id\", \"severity\", \"summary\", \"description\"}"
                .into(),
        ));
    }
    let text = |k: &str| v[k].as_string().ok().map(|s| s.to_string());
    let Some(id) = text("id") else {
        return Err(bad("`metadata.id` is missing (a kebab-case name)".into()));
    };
    if !valid_id(&id) {
        return Err(bad(format!(
            "`metadata.id` `{id}` is not kebab-case (lowercase words joined by `-`)"
        )));
    }
    let severity = match text("severity").as_deref() {
        None | Some("error") => Severity::Error,
        Some("warning") => Severity::Warning,
        Some(other) => {
            return Err(bad(format!(
                "`metadata.severity` `{other}` is not one of: error, warning"
            )));
        }
    };
    let Some(summary) = text("summary").filter(|s| !s.trim().is_empty()) else {
        return Err(bad("`metadata.summary` is missing (one line)".into()));
    };
    if deny.is_none() && warn.is_none() {
        return Err(bad(format!(
            "policy `{id}` declares neither `deny` nor `warn`"
        )));
    }
    let name = format!("{PREFIX}{id}");
    let bundled = bundled::PACK.iter().find(|b| b.file == m.path);
    if let Some(b) = bundled
        && b.name != name
    {
        return Err(bad(format!(
            "bundled policy {} declares id `{id}`; its file name says `{}`",
            b.file,
            b.name.trim_start_matches(PREFIX)
        )));
    }
    Ok(PolicyMeta {
        name: bundled.map_or_else(|| intern(name), |b| b.name),
        id,
        severity,
        description: text("description").unwrap_or_else(|| summary.clone()),
        summary,
        file: m.path.clone(),
        package: pkg.to_string(),
        bundled: bundled.is_some(),
        deny,
        warn,
        line,
        needs: needs::Needs::default(),
    })
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
        |mut names: std::slice::Iter<'_, &'static str>| names.any(|n| self::enabled(settings, n));
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

/// The policy rule name `name` refers to among the run's policies (else the bundled pack), if any.
pub fn known(policies: Option<&Policies>, name: &str) -> Option<&'static str> {
    if !name.starts_with(PREFIX) {
        return None;
    }
    match policies {
        Some(p) => p.find(name).map(|m| m.name),
        None => bundled::find(name).map(|b| b.name),
    }
}

/// Whether a rule (built-in or policy) runs under these settings. Bundled policies are opt-in:
/// they run when the config gives them a level or `--rule` names them.
pub fn enabled(settings: &Settings, name: &str) -> bool {
    settings.rule_enabled(name, off_by_default(name))
}

/// Whether a rule name is a policy that is off unless enabled (a bundled one).
pub fn off_by_default(name: &str) -> bool {
    name.starts_with(PREFIX) && bundled::find(name).is_some()
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

#[cfg(test)]
mod tests;
