//! The one diagnostic type every rule, policy and self-check produces.

use crate::yaml::Span;
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Index of a loaded file in the run's file list.
pub type FileId = usize;

/// A place in a loaded file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub file: FileId,
    pub span: Span,
}

/// The object a finding is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    pub kind: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

/// The other side of a cross-object finding (the taint not tolerated, the pool that is closest…).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub loc: Loc,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub rule: &'static str,
    pub severity: Severity,
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    pub loc: Loc,
    pub object: Option<ObjectRef>,
    pub related: Vec<Related>,
    /// Set when an in-source suppression covers the finding: it is still reported (JSON, SARIF)
    /// but does not count, fail the run or show in human and GitHub output.
    pub suppressed: Option<Suppression>,
}

/// Where a suppression was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SuppressionKind {
    /// `ignore.gpuops.dev/<rule>` on an object or a pod template.
    Annotation,
    /// `# gpuops:ignore[<rule>]` on the line or the line above.
    Comment,
    /// `# gpuops:ignore-file[<rule>]` in the file's leading comments.
    File,
}

impl SuppressionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SuppressionKind::Annotation => "annotation",
            SuppressionKind::Comment => "comment",
            SuppressionKind::File => "file",
        }
    }
}

/// The suppression that covers a finding, with its justification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    pub kind: SuppressionKind,
    pub reason: String,
    /// The annotation key or the comment.
    pub loc: Loc,
}

impl Diagnostic {
    pub fn new(
        rule: &'static str,
        severity: Severity,
        loc: Loc,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            rule,
            severity,
            message: message.into(),
            help: None,
            loc,
            object: None,
            related: Vec::new(),
            suppressed: None,
        }
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn object(mut self, object: Option<ObjectRef>) -> Self {
        self.object = object;
        self
    }
    pub fn related(mut self, loc: Loc, message: impl Into<String>) -> Self {
        self.related.push(Related {
            loc,
            message: message.into(),
        });
        self
    }
}

impl Diagnostic {
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

/// `a`, `b` in backticks, joined with `sep`: how lists of names appear in messages.
/// [`backticked`], at most [`FEW`] of them and then how many more: a list of every pool of a
/// large repository is no help.
pub fn backticked_few(values: &[impl AsRef<str>], sep: &str) -> String {
    if values.len() <= FEW {
        return backticked(values, sep);
    }
    format!(
        "{} and {} more",
        backticked(&values[..FEW], sep),
        values.len() - FEW
    )
}

/// Names listed in a message before "and N more".
pub const FEW: usize = 8;

pub fn backticked(values: &[impl AsRef<str>], sep: &str) -> String {
    values
        .iter()
        .map(|v| format!("`{}`", v.as_ref()))
        .collect::<Vec<_>>()
        .join(sep)
}
