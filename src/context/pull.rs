//! One pull: connect, discover, list each served kind, trim, sort, write the text.

use super::connect::connect;
use super::discover::{Resource, discover};
use super::kinds::{CRD_GROUPS, Shape};
use super::session::{Failure, Session};
use super::{Note, Options, PullError, Pulled, strip, write};
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
            Ok(objects) => items.extend(kept(objects, r)),
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Api { code, message }) => notes.push(refused(s, r, code, message)?),
        }
    }
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

/// A list the server refused: forbidden or gone is a note (the rest is still worth reading);
/// any other error status fails the pull.
fn refused(s: &Session, r: &Resource, code: u16, message: String) -> Result<Note, PullError> {
    let why = match code {
        403 => "forbidden (403): the credentials may not list it",
        404 => "not found (404): the cluster does not serve it",
        _ => {
            return Err(PullError::Request {
                server: s.conn.server.clone(),
                request: format!("GET {}", r.path),
                reason: format!("{code} {message}"),
            });
        }
    };
    Ok(Note {
        what: format!("{} ({})", r.wanted.kind, r.group_version),
        why: why.into(),
        detail: Some(message).filter(|m| !m.is_empty()),
    })
}

/// The objects of one kind as the file holds them: identity set (list items of built-in kinds
/// come without it), trimmed, sorted by namespace and name.
fn kept(objects: Vec<Value>, r: &Resource) -> Vec<Value> {
    let mut out: Vec<Value> = objects
        .into_iter()
        .filter_map(|mut o| {
            let map = o.as_object_mut()?;
            map.insert("apiVersion".into(), r.group_version.clone().into());
            map.insert("kind".into(), r.wanted.kind.into());
            if r.wanted.shape == Shape::Crd {
                let group = o.pointer("/spec/group").and_then(Value::as_str);
                if !group.is_some_and(|g| CRD_GROUPS.contains(&g)) {
                    return None;
                }
            }
            strip::strip(&mut o, r.wanted.shape);
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
