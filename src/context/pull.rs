//! One pull: connect, discover, list each served kind, trim, sort, write the text.

use super::connect::connect;
use super::discover::discover;
use super::kinds::{CLUSTER_SECRET_SELECTOR, CRD_GROUPS, DEFAULT_MIG_CONFIG, Shape};
use super::session::{Failure, Session};
use super::{Note, Options, PullError, Pulled, strip, write};
use kube::api::ListParams;
use serde_json::Value;

/// Reads the cluster the kubeconfig names, GET requests only, within `opts.timeout`.
pub fn pull(opts: &Options) -> Result<Pulled, PullError> {
    // One thread: the requests go one after the other, and the process has other work to share
    // the cores with.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PullError::Runtime)?;
    runtime.block_on(async {
        let session = Session::new(connect(opts).await?, opts.request_timeout);
        match tokio::time::timeout(opts.timeout, read(&session, opts)).await {
            Ok(r) => r,
            Err(_) => Err(PullError::TimedOut {
                server: session.conn.server.clone(),
                limit: opts.timeout,
                request: session.current(),
            }),
        }
    })
}

async fn read(s: &Session, opts: &Options) -> Result<Pulled, PullError> {
    let version = match s
        .call("GET /version".into(), s.conn.client.apiserver_version())
        .await
    {
        Ok(v) => v.git_version,
        Err(Failure::Fatal(e)) => return Err(e),
        // Some proxies in front of the API server do not pass /version: the header says so.
        Err(Failure::Api { code, .. }) => format!("unknown (/version answered {code})"),
    };
    let (resources, mut notes) = discover(s).await?;
    let mut items = Vec::new();
    for r in &resources {
        match s.list(&r.path, opts.page_size).await {
            Ok(objects) => items.extend(kept(
                objects,
                &r.group_version,
                r.wanted.kind,
                r.wanted.shape,
            )),
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Api { code, message }) => {
                let what = format!("{} ({})", r.wanted.kind, r.group_version);
                notes.push(refused(s, &r.path, what, code, message)?);
            }
        }
    }
    // The GPU operator's configuration lives in the ConfigMaps its ClusterPolicy names, read by
    // name: other ConfigMaps are not the context's business.
    for name in operator_configmaps(&items) {
        let x = Extra {
            path: "/api/v1/configmaps".into(),
            select: ListParams::default().fields(&format!("metadata.name={name}")),
            what: format!("ConfigMap {name} (the GPU operator's)"),
            shape: Shape::Plain,
        };
        extra(s, opts, x, &mut items, &mut notes).await?;
    }
    // Argo CD's cluster Secrets: the clusters its ApplicationSets generate Applications for.
    let ns = &opts.argocd_namespace;
    let x = Extra {
        path: format!("/api/v1/namespaces/{ns}/secrets"),
        select: ListParams::default().labels(CLUSTER_SECRET_SELECTOR),
        what: format!("Argo CD cluster Secrets (namespace {ns})"),
        shape: Shape::ClusterSecret,
    };
    extra(s, opts, x, &mut items, &mut notes).await?;
    let header = write::Header {
        cluster: &s.conn.cluster,
        server: &s.conn.server,
        version: &version,
        pulled_at: opts.pulled_at,
    };
    let text = write::render(&header, &notes, &items).map_err(|reason| PullError::Request {
        server: s.conn.server.clone(),
        request: "writing the context".into(),
        reason,
    })?;
    Ok(Pulled {
        text,
        context: s.conn.context.clone(),
        notes,
        objects: items.len(),
    })
}

/// Core objects read by selector besides the kinds.
struct Extra {
    path: String,
    select: ListParams,
    /// What a note calls them.
    what: String,
    shape: Shape,
}

/// The objects `x` selects, kept as its shape says, or a note when the server refuses (the
/// credentials may not read Secrets, and need not).
async fn extra(
    s: &Session,
    opts: &Options,
    x: Extra,
    items: &mut Vec<Value>,
    notes: &mut Vec<Note>,
) -> Result<(), PullError> {
    let kind = if x.shape == Shape::ClusterSecret {
        "Secret"
    } else {
        "ConfigMap"
    };
    match s.list_selected(&x.path, opts.page_size, &x.select).await {
        Ok(objects) => items.extend(kept(objects, "v1", kind, x.shape)),
        Err(Failure::Fatal(e)) => return Err(e),
        Err(Failure::Api { code, message }) => {
            notes.push(refused(s, &x.path, x.what, code, message)?)
        }
    }
    Ok(())
}

/// The ConfigMaps the pulled ClusterPolicies point at: device plugin configurations and MIG
/// layouts (the operator's default layouts when a policy names none).
fn operator_configmaps(items: &[Value]) -> Vec<String> {
    let mut names = Vec::new();
    for p in items.iter().filter(|o| o["kind"] == "ClusterPolicy") {
        let named = |ptr: &str| {
            p.pointer(ptr)
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
        };
        names.extend(named("/spec/devicePlugin/config/name").map(str::to_string));
        names.push(
            named("/spec/migManager/config/name")
                .unwrap_or(DEFAULT_MIG_CONFIG)
                .to_string(),
        );
    }
    names.sort();
    names.dedup();
    names
}

/// A list the server refused: forbidden or gone is a note (the rest is still worth reading);
/// any other error status fails the pull.
fn refused(
    s: &Session,
    path: &str,
    what: String,
    code: u16,
    message: String,
) -> Result<Note, PullError> {
    let why = match code {
        403 => "forbidden (403): the credentials may not list it",
        404 => "not found (404): the cluster does not serve it",
        _ => {
            return Err(PullError::Request {
                server: s.conn.server.clone(),
                request: format!("GET {path}"),
                reason: format!("{code} {message}"),
            });
        }
    };
    Ok(Note {
        what,
        why: why.into(),
        detail: Some(message).filter(|m| !m.is_empty()),
    })
}

/// The objects of one kind as the file holds them: identity set (list items of built-in kinds
/// come without it), trimmed, sorted by namespace and name.
fn kept(objects: Vec<Value>, group_version: &str, kind: &str, shape: Shape) -> Vec<Value> {
    let mut out: Vec<Value> = objects
        .into_iter()
        .filter_map(|mut o| {
            let map = o.as_object_mut()?;
            map.insert("apiVersion".into(), group_version.into());
            map.insert("kind".into(), kind.into());
            if shape == Shape::Crd {
                let group = o.pointer("/spec/group").and_then(Value::as_str);
                if !group.is_some_and(|g| CRD_GROUPS.contains(&g)) {
                    return None;
                }
            }
            strip::strip(&mut o, shape);
            Some(o)
        })
        .collect();
    let key = |o: &Value| {
        let field = |k: &str| {
            o.pointer(&format!("/metadata/{k}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        (field("namespace"), field("name"))
    };
    out.sort_by_cached_key(key);
    out
}
