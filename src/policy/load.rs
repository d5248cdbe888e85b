//! Reading and compiling policies: directories of `.rego` files and the bundled pack, into one
//! engine with each policy's metadata checked.

use super::{
    DEFAULT_BUDGET, Module, PREFIX, Policies, PolicyError, PolicyMeta, bundled, needs, valid_id,
};
use crate::config::Settings;
use crate::diag::Severity;
use regorus::{Engine, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

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
pub(super) fn engine() -> Engine {
    let mut e = Engine::new();
    e.set_gather_prints(true);
    e
}

/// Adds modules to an engine; a syntax error is a located error.
pub(super) fn add_modules(
    engine: &mut Engine,
    modules: &[Module],
) -> Result<Vec<String>, PolicyError> {
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
            "`metadata.id` `{}` is not kebab-case (lowercase words joined by `-`)",
            crate::text::shorten(&id, crate::text::MAX_SHOWN)
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
