//! A Kubernetes API server as far as `context pull` can tell: `/version`, discovery (`/api`,
//! `/apis`, `/api/v1`, `/apis/<group>/<version>`) and paged lists, served over loopback HTTP/1.1
//! from the objects of a `kind: List` file, one connection a request (`Connection: close`), a
//! thread a connection. It answers what it is set to answer (a 403, a group it does not serve, a
//! slow list) and keeps every request it was sent.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One resource the server serves: group, version, kind, plural, namespaced.
type Served = (&'static str, &'static str, &'static str, &'static str, bool);

/// What this cluster serves. Kueue's preferred version is v1beta2; its Topology is only in
/// v1alpha1. No `eks.amazonaws.com` group: the cluster is not in Auto Mode.
const SERVED: &[Served] = &[
    ("", "v1", "Node", "nodes", false),
    ("", "v1", "ConfigMap", "configmaps", true),
    ("", "v1", "Secret", "secrets", true),
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
    ),
    ("karpenter.sh", "v1", "NodePool", "nodepools", false),
    ("karpenter.sh", "v1", "NodeClaim", "nodeclaims", false),
    (
        "karpenter.k8s.aws",
        "v1",
        "EC2NodeClass",
        "ec2nodeclasses",
        false,
    ),
    (
        "kueue.x-k8s.io",
        "v1beta2",
        "ResourceFlavor",
        "resourceflavors",
        false,
    ),
    (
        "kueue.x-k8s.io",
        "v1beta2",
        "ClusterQueue",
        "clusterqueues",
        false,
    ),
    (
        "kueue.x-k8s.io",
        "v1beta2",
        "LocalQueue",
        "localqueues",
        true,
    ),
    (
        "kueue.x-k8s.io",
        "v1beta2",
        "WorkloadPriorityClass",
        "workloadpriorityclasses",
        false,
    ),
    ("kueue.x-k8s.io", "v1beta2", "Cohort", "cohorts", false),
    (
        "kueue.x-k8s.io",
        "v1beta2",
        "AdmissionCheck",
        "admissionchecks",
        false,
    ),
    (
        "kueue.x-k8s.io",
        "v1beta1",
        "ClusterQueue",
        "clusterqueues",
        false,
    ),
    (
        "kueue.x-k8s.io",
        "v1alpha1",
        "Topology",
        "topologies",
        false,
    ),
    (
        "nvidia.com",
        "v1",
        "ClusterPolicy",
        "clusterpolicies",
        false,
    ),
];

/// Items a list page holds at most, whatever `limit` asks: paging happens with few objects.
const PAGE: usize = 2;

/// What the server does besides serving the objects.
#[derive(Clone, Default)]
pub struct Behaviour {
    /// Collections (`/apis/…/admissionchecks`) answered with 403 Forbidden.
    pub forbidden: Vec<&'static str>,
    /// Paths answered only after this long.
    pub slow: Option<(&'static str, Duration)>,
    /// Items a page holds at most instead of [`PAGE`] (the `limit` asked, up to this).
    pub page: Option<usize>,
}

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub authorization: Option<String>,
}

pub struct ApiServer {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl ApiServer {
    /// Serves the items of `list` (a `kind: List` in YAML) until the test process ends.
    pub fn start(list: &str, behaviour: Behaviour) -> ApiServer {
        let list: Value = serde_saphyr::from_str(list).expect("the cluster fixture is YAML");
        Self::serving(&list, behaviour)
    }

    /// Serves the items of `list` (a `kind: List`).
    pub fn serving(list: &Value, behaviour: Behaviour) -> ApiServer {
        let objects = collections(list);
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("bound").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new((objects, behaviour));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (state, log) = (state.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &state.0, &state.1, &log));
            }
        });
        ApiServer { port, seen }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("log").clone()
    }
}

/// The fixture's items by collection path; built-in kinds lose `apiVersion` and `kind`, as the
/// real server's list items do.
fn collections(list: &Value) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for s in SERVED {
        out.entry(collection(s)).or_default();
    }
    for item in list["items"].as_array().expect("items") {
        let (api_version, kind) = (item["apiVersion"].as_str(), item["kind"].as_str());
        let served = SERVED
            .iter()
            .find(|s| Some(group_version(s).as_str()) == api_version && Some(s.2) == kind)
            .unwrap_or_else(|| panic!("the fake server does not serve {api_version:?} {kind:?}"));
        let mut item = item.clone();
        if served.0.is_empty() || served.0.ends_with(".k8s.io") {
            let o = item.as_object_mut().expect("an object");
            o.remove("apiVersion");
            o.remove("kind");
        }
        out.entry(collection(served)).or_default().push(item);
    }
    out
}

fn group_version(s: &Served) -> String {
    if s.0.is_empty() {
        s.1.to_string()
    } else {
        format!("{}/{}", s.0, s.1)
    }
}

fn base(s: &Served) -> String {
    if s.0.is_empty() {
        format!("/api/{}", s.1)
    } else {
        format!("/apis/{}/{}", s.0, s.1)
    }
}

fn collection(s: &Served) -> String {
    format!("{}/{}", base(s), s.3)
}

fn serve(
    stream: TcpStream,
    objects: &BTreeMap<String, Vec<Value>>,
    b: &Behaviour,
    log: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut authorization = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("authorization")
        {
            authorization = Some(value.trim().to_string());
        }
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    log.lock().expect("log").push(Seen {
        method: method.clone(),
        target: target.clone(),
        authorization,
    });
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if let Some((slow, delay)) = b.slow
        && path == slow
    {
        std::thread::sleep(delay);
    }
    let (code, body) = if method != "GET" {
        (405, status(405, "MethodNotAllowed", "read-only fake"))
    } else {
        answer(path, query, objects, b)
    };
    let reason = match code {
        200 => "OK",
        403 => "Forbidden",
        404 => "Not Found",
        _ => "Error",
    };
    let body = body.to_string();
    let mut out = &stream;
    let _ = write!(
        out,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = out.flush();
}

fn answer(
    path: &str,
    query: &str,
    objects: &BTreeMap<String, Vec<Value>>,
    b: &Behaviour,
) -> (u16, Value) {
    if path == "/version" {
        return (
            200,
            json!({"major": "1", "minor": "33", "gitVersion": "v1.33.2-fake"}),
        );
    }
    if path == "/api" {
        return (200, json!({"kind": "APIVersions", "versions": ["v1"]}));
    }
    if path == "/apis" {
        return (200, group_list());
    }
    if let Some(list) = resource_list(path) {
        return (200, list);
    }
    if b.forbidden.contains(&path) {
        let what = path.rsplit('/').next().unwrap_or_default();
        let message = format!(
            "{what} is forbidden: User \"system:serviceaccount:ci:gpuops\" cannot list resource \"{what}\""
        );
        return (403, status(403, "Forbidden", &message));
    }
    // A namespace's collection: the cluster's, of that namespace.
    let (path, namespace) = match path.strip_prefix("/api/v1/namespaces/") {
        Some(rest) => match rest.split_once('/') {
            Some((ns, plural)) => (format!("/api/v1/{plural}"), Some(ns)),
            None => (path.to_string(), None),
        },
        None => (path.to_string(), None),
    };
    match objects.get(&path) {
        Some(items) => {
            let items: Vec<&Value> = items
                .iter()
                .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
                .filter(|o| selected(o, query))
                .collect();
            (200, page(&path, &items, query, b.page.unwrap_or(PAGE)))
        }
        None => (
            404,
            status(
                404,
                "NotFound",
                "the server could not find the requested resource",
            ),
        ),
    }
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// `/apis`: each group with its versions, the first preferred.
fn group_list() -> Value {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in SERVED.iter().filter(|s| !s.0.is_empty()) {
        match groups.iter_mut().find(|(g, _)| *g == s.0) {
            Some((_, vs)) if !vs.contains(&s.1) => vs.push(s.1),
            Some(_) => {}
            None => groups.push((s.0, vec![s.1])),
        }
    }
    let groups: Vec<Value> = groups
        .iter()
        .map(|(g, vs)| {
            let versions: Vec<Value> = vs
                .iter()
                .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                .collect();
            json!({"name": g, "versions": versions, "preferredVersion": versions[0].clone()})
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/api/v1`, `/apis/<group>/<version>`: the resources served there (with a status subresource
/// each, which is not a kind to list).
fn resource_list(path: &str) -> Option<Value> {
    let here: Vec<&Served> = SERVED.iter().filter(|s| base(s) == path).collect();
    let first = here.first()?;
    let mut resources = Vec::new();
    for s in &here {
        let verbs = json!([
            "get", "list", "watch", "create", "update", "patch", "delete"
        ]);
        resources.push(json!({"name": s.3, "singularName": "", "namespaced": s.4, "kind": s.2, "verbs": verbs}));
        resources.push(json!({"name": format!("{}/status", s.3), "singularName": "", "namespaced": s.4, "kind": s.2, "verbs": ["get", "patch", "update"]}));
    }
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version(first), "resources": resources}),
    )
}

/// Whether the object passes the query's `labelSelector` and `fieldSelector`, each one
/// `key=value` (as much of the selector syntax as gpuops sends).
fn selected(o: &Value, query: &str) -> bool {
    query.split('&').all(|kv| {
        let Some((name, value)) = kv.split_once('=') else {
            return true;
        };
        let value = percent_decoded(value);
        let Some((k, v)) = value.split_once('=') else {
            return true;
        };
        match name {
            "labelSelector" => o["metadata"]["labels"][k] == v,
            "fieldSelector" => {
                let field = k.split('.').fold(o, |at, part| &at[part]);
                *field == v
            }
            _ => true,
        }
    })
}

fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(h) = s.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(h, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One page of a collection: `continue` is the offset of the next item.
fn page(path: &str, items: &[&Value], query: &str, most: usize) -> Value {
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let limit = param("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX);
    let from: usize = param("continue")
        .and_then(|c| c.strip_prefix("offset-")?.parse().ok())
        .unwrap_or(0);
    let to = (from + limit.min(most)).min(items.len());
    let mut metadata = json!({"resourceVersion": "48213"});
    if to < items.len() {
        metadata["continue"] = json!(format!("offset-{to}"));
        metadata["remainingItemCount"] = json!(items.len() - to);
    }
    let kind = path.rsplit('/').next().unwrap_or_default();
    json!({"apiVersion": "v1", "kind": format!("{kind}List"), "metadata": metadata, "items": items[from.min(to)..to].to_vec()})
}
