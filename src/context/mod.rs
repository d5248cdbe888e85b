//! Cluster context read from a live cluster: `gpuops context pull` writes it to a file, and
//! `lint --live` reads it for one run. Either way it is the same text, read back through the
//! same path as a `--context` file.
//!
//! ```text
//! kubeconfig ─connect─▶ Session (kube client, GET only, time limits)
//!            ─discover─▶ the served version and resource of each wanted kind (kinds.rs)
//!            ─list (paged)─▶ objects ─strip─▶ sorted ─write─▶ `kind: List` YAML with a header
//! ```
//!
//! A kind the cluster does not serve, or that the credentials may not list (403), is a note and
//! the rest is still read; a cluster that cannot be reached, answers an error otherwise, or runs
//! past the time limit fails the whole pull: a context with holes nobody was told of would make
//! findings up.

mod connect;
mod discover;
pub mod kinds;
mod pull;
mod session;
pub mod strip;
pub mod write;

pub use pull::pull;

use std::path::PathBuf;
use std::time::Duration;

/// What to read and how long to wait.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--kubeconfig`; `None`: `KUBECONFIG`, else `~/.kube/config`, else the pod's service
    /// account when running inside a cluster.
    pub kubeconfig: Option<PathBuf>,
    /// `--kube-context`; `None`: the kubeconfig's current context.
    pub context: Option<String>,
    /// The whole pull, discovery included.
    pub timeout: Duration,
    /// One request: connecting, and each wait for the server's answer.
    pub request_timeout: Duration,
    /// Objects per list request (`limit`); the rest follow with `continue`.
    pub page_size: u32,
    /// The time the header gives (seconds since the epoch).
    pub pulled_at: i64,
    /// Where Argo CD's cluster Secrets are read (`--argocd-namespace`).
    pub argocd_namespace: String,
}

impl Options {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
    pub const DEFAULT_PAGE_SIZE: u32 = 250;
}

/// A pulled context.
#[derive(Debug)]
pub struct Pulled {
    /// The context file's text.
    pub text: String,
    /// The kubeconfig context it was read through (`in-cluster` for a service account).
    pub context: String,
    /// Kinds not pulled and why.
    pub notes: Vec<Note>,
    /// Objects written.
    pub objects: usize,
}

/// A kind not pulled, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The kind (and its group or version).
    pub what: String,
    /// Why, short enough for the file's header.
    pub why: String,
    /// The API server's own words, for the terminal only (they may name the user).
    pub detail: Option<String>,
}

impl Note {
    pub fn new(what: impl Into<String>, why: impl Into<String>) -> Self {
        Note {
            what: what.into(),
            why: why.into(),
            detail: None,
        }
    }
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} not pulled: {}", self.what, self.why)?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

/// Why nothing was pulled.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("cannot start the client: {0}")]
    Runtime(std::io::Error),
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    #[error("cluster at {server}: {request}: {reason}")]
    Request {
        server: String,
        /// `GET /path`.
        request: String,
        reason: String,
    },
    #[error(
        "cluster at {server}: the pull took longer than its {secs}s time limit (--timeout); \
         it was waiting for {request}",
        secs = limit.as_secs_f64()
    )]
    TimedOut {
        server: String,
        limit: Duration,
        request: String,
    },
}
