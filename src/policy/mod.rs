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
mod eval;
pub mod input;
mod load;
pub mod needs;
pub mod testing;

pub use eval::{Run, keep_inputs_until_exit, run};
pub use load::{bundled_modules, interned, read_dir};

use crate::config::Settings;
use crate::diag::Severity;
use regorus::Engine;
use std::fmt;
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

pub use crate::config::valid_policy_id as valid_id;

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

/// Whether a rule (built-in or policy) runs under these settings. Bundled policies and the
/// opt-in built-in rules run when the config gives them a level or `--rule` names them.
pub fn enabled(settings: &Settings, name: &str) -> bool {
    settings.rule_enabled(name, off_by_default(name))
}

/// Whether a rule is off unless enabled: a bundled policy, or an opt-in built-in rule
/// ([`crate::rules::OPT_IN`]).
pub fn off_by_default(name: &str) -> bool {
    crate::rules::OPT_IN.contains(&name)
        || (name.starts_with(PREFIX) && bundled::find(name).is_some())
}

#[cfg(test)]
mod tests;
