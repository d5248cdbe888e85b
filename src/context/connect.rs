//! From the kubeconfig to a client: which context, which cluster, which server, with the
//! pull's per-request time limits.

use super::{Options, PullError};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

/// A client and the names the context file's header gives.
pub struct Connected {
    pub client: Client,
    /// The kubeconfig context.
    pub context: String,
    /// The kubeconfig's name for the cluster.
    pub cluster: String,
    /// The API server's URL, without a trailing `/`.
    pub server: String,
}

/// Reads the kubeconfig and builds the client; runs inside the runtime (the client spawns its
/// request buffer there).
pub async fn connect(opts: &Options) -> Result<Connected, PullError> {
    let (mut config, context, cluster) = config(opts).await?;
    // Every wait of a request is bounded; the pull as a whole by `timeout` (see `pull`).
    config.connect_timeout = Some(opts.request_timeout);
    config.read_timeout = Some(opts.request_timeout);
    config.write_timeout = Some(opts.request_timeout);
    // The read timeout counts from the request, not from when a pooled connection went idle.
    config.reset_reader_on_write = true;
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    let client = Client::try_from(config).map_err(|e| PullError::Kubeconfig(e.to_string()))?;
    Ok(Connected {
        client,
        context,
        cluster,
        server,
    })
}

/// The client config, the context's name and its cluster's name.
async fn config(opts: &Options) -> Result<(Config, String, String), PullError> {
    let err = |e: &dyn std::fmt::Display| PullError::Kubeconfig(e.to_string());
    let kubeconfig = match &opts.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).map_err(|e| {
            let shown = path.display();
            PullError::Kubeconfig(match e {
                KubeconfigError::ReadConfig(io, _) => format!("{shown}: {io}"),
                other => format!("{shown}: {other}"),
            })
        })?,
        None => match Kubeconfig::read() {
            Ok(k) => k,
            // No kubeconfig inside a pod: its service account, as kubectl does.
            Err(_) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
                let c = Config::incluster().map_err(|e| err(&e))?;
                return Ok((c, "in-cluster".into(), "in-cluster".into()));
            }
            Err(e) => return Err(err(&e)),
        },
    };
    let context = opts
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .ok_or_else(|| {
            PullError::Kubeconfig("no current context; name one with --kube-context".into())
        })?;
    let cluster = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
        .ok_or_else(|| PullError::Kubeconfig(format!("no context named `{context}`")))?;
    let options = KubeConfigOptions {
        context: Some(context.clone()),
        ..Default::default()
    };
    let config = Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| err(&e))?;
    Ok((config, context, cluster))
}
