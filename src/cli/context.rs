//! `gpuops context pull`, and `--live`: the same pull, read for one run as a context file.

use super::output::print;
use crate::{KubeArgs, PullArgs};
use gpuops::context::{self, Options};
use gpuops::report::AtomicFile;
use gpuops::source::{self, Role, SourceFile};
use std::process::ExitCode;
use std::time::Duration;

pub(crate) fn context_pull(args: PullArgs) -> ExitCode {
    // The file is prepared first: a path that cannot be written fails before the cluster is read.
    let output = match &args.output {
        Some(path) => match AtomicFile::prepare(path) {
            Ok(o) => Some(o),
            Err(e) => {
                eprintln!("error: -o {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let pulled = match pull(&args.kube) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match (output, &args.output) {
        (Some(o), Some(path)) => {
            if let Err(e) = o.commit(&pulled.text) {
                eprintln!("error: -o {}: {e}", path.display());
                return ExitCode::from(2);
            }
            eprintln!(
                "wrote {} objects from context `{}` to {}",
                pulled.objects,
                pulled.context,
                path.display()
            );
        }
        _ => print(&pulled.text),
    }
    ExitCode::SUCCESS
}

/// `--live`: the pulled context as a context file of the run, shown as `<live:CONTEXT>`; `None`
/// without `--live`. The exit code when the pull failed (its error printed).
pub(crate) fn live(on: bool, kube: &KubeArgs) -> Result<Option<SourceFile>, ExitCode> {
    if !on {
        if kube.kubeconfig.is_some()
            || kube.kube_context.is_some()
            || kube.timeout.is_some()
            || kube.request_timeout.is_some()
            || kube.argocd_namespace.is_some()
        {
            eprintln!(
                "error: --kubeconfig, --kube-context, --timeout, --request-timeout and --argocd-namespace go with --live"
            );
            return Err(ExitCode::from(2));
        }
        return Ok(None);
    }
    let pulled = pull(kube)?;
    let mut file = source::from_bytes(
        format!("<live:{}>", pulled.context),
        pulled.text.into_bytes(),
    );
    file.role = Role::Context { cluster: None };
    let mut files = [file];
    source::nodes::derive(&mut files);
    let [file] = files;
    Ok(Some(file))
}

/// Pulls as the flags say, notes on stderr; an error printed becomes exit 2.
fn pull(kube: &KubeArgs) -> Result<context::Pulled, ExitCode> {
    let opts = Options {
        kubeconfig: kube.kubeconfig.clone(),
        context: kube.kube_context.clone(),
        timeout: kube.timeout.unwrap_or(Options::DEFAULT_TIMEOUT),
        request_timeout: kube
            .request_timeout
            .unwrap_or(Options::DEFAULT_REQUEST_TIMEOUT),
        page_size: Options::DEFAULT_PAGE_SIZE,
        pulled_at: pulled_at(),
        argocd_namespace: kube
            .argocd_namespace
            .clone()
            .unwrap_or_else(|| context::kinds::ARGOCD_NAMESPACE.into()),
    };
    match context::pull(&opts) {
        Ok(p) => {
            for n in &p.notes {
                eprintln!("note: {n}");
            }
            Ok(p)
        }
        Err(e) => {
            eprintln!("error: cannot pull the cluster context: {e}");
            Err(ExitCode::from(2))
        }
    }
}

/// Now, or `SOURCE_DATE_EPOCH` when set: a reproducible pull of an unchanged cluster gives the
/// same bytes.
fn pulled_at() -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        })
}

/// `--timeout 30`, `--timeout 0.5`, `--timeout 30s`: seconds, more than zero.
pub(crate) fn parse_secs(s: &str) -> Result<Duration, String> {
    let n = s.strip_suffix('s').unwrap_or(s);
    match n.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v < 1e9 => Ok(Duration::from_secs_f64(v)),
        _ => Err(format!("expected seconds (e.g. 30 or 0.5), got `{s}`")),
    }
}
