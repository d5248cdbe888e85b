//! `gpuops context pull` and `lint --live` with the real client over real HTTP: the binary
//! talks to a loopback API server of the tests' own ([`apiserver`]) that serves the objects of
//! `cluster.yaml`, a hand-made `kubectl get -o yaml` dump. Run alone with
//! `cargo test --test context_pull`.

#[path = "../common/mod.rs"]
mod common;

mod apiserver;

use apiserver::{ApiServer, Behaviour};
use common::{Run, gpuops, root, run};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What the fake server serves, as kubectl would have dumped it.
fn cluster_yaml() -> String {
    std::fs::read_to_string(fixture("cluster.yaml")).expect("the fixture")
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/context_pull").join(name)
}

/// The usual cluster: everything served, AdmissionChecks forbidden.
fn server() -> ApiServer {
    ApiServer::start(
        &cluster_yaml(),
        Behaviour {
            forbidden: vec!["/apis/kueue.x-k8s.io/v1beta2/admissionchecks"],
            ..Behaviour::default()
        },
    )
}

/// A kubeconfig in `dir` whose current context `fake` points at `server` with a bearer token.
fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
         clusters:\n- name: fake-cluster\n  cluster:\n    server: {server}\n\
         contexts:\n- name: fake\n  context:\n    cluster: fake-cluster\n    user: reader\n\
         - name: other\n  context:\n    cluster: fake-cluster\n    user: reader\n\
         users:\n- name: reader\n  user:\n    token: t0k3n\n"
    );
    std::fs::write(&path, text).expect("kubeconfig written");
    path
}

/// The binary, with nothing of the developer's cluster setup: no KUBECONFIG, a HOME of its own,
/// not in a pod, a fixed pull time.
fn gpuops_isolated(home: &Path) -> assert_cmd::Command {
    let mut c = gpuops();
    c.env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", home)
        .env("SOURCE_DATE_EPOCH", "1780000000");
    c
}

/// `gpuops context pull` against `url`, with `args` added.
fn pull(dir: &Path, url: &str, args: &[&str]) -> Run {
    let kc = kubeconfig(dir, url);
    let mut c = gpuops_isolated(dir);
    c.arg("context")
        .arg("pull")
        .arg("--kubeconfig")
        .arg(&kc)
        .args(args);
    bounded(&mut c)
}

/// Runs `c`, bounded: a hung pull fails the test instead of hanging it.
fn bounded(c: &mut assert_cmd::Command) -> Run {
    run(c.timeout(Duration::from_secs(20)))
}

/// The server saw only GET requests, each with the kubeconfig's token.
fn assert_read_only(s: &ApiServer) {
    let seen = s.seen();
    assert!(!seen.is_empty());
    for r in &seen {
        assert_eq!(r.method, "GET", "{r:?}");
        assert_eq!(r.authorization.as_deref(), Some("Bearer t0k3n"), "{r:?}");
    }
}

/// The file with the server's port (which changes every run) replaced.
fn redacted(text: &str, s: &ApiServer) -> String {
    text.replace(&s.port.to_string(), "PORT")
}

#[test]
fn pull_writes_the_served_objects_trimmed_and_in_order() {
    let s = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let Run { code, out, err } = pull(dir.path(), &s.url(), &[]);
    assert_eq!(code, 0, "{err}");
    // A kind the credentials may not list, and a group the cluster does not serve, are notes.
    assert!(
        err.contains(
            "note: AdmissionCheck (kueue.x-k8s.io/v1beta2) not pulled: forbidden (403): the \
             credentials may not list it (admissionchecks is forbidden: User"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "note: NodeClass (eks.amazonaws.com) not pulled: the cluster does not serve the group"
        ),
        "{err}"
    );
    // No line of the fake's bookkeeping survives.
    for gone in [
        "uid:",
        "resourceVersion",
        "managedFields",
        "creationTimestamp",
        "generation:",
        "last-applied-configuration",
        "conditions",
        "images:",
        "bootID",
        "providerID",
        "cert-manager.io",
        "pendingWorkloads",
        // Credentials, and objects nothing in the context needs.
        "s3cr3t",
        "config: eyJ",
        "bearerToken",
        "repo-creds",
        "password",
        "kube-root-ca",
        "name: elsewhere",
    ] {
        assert!(!out.contains(gone), "{gone} is still in\n{out}");
    }
    insta::assert_snapshot!("pulled", redacted(&out, &s));
    assert_read_only(&s);
}

#[test]
fn two_pulls_give_the_same_bytes_and_o_writes_what_stdout_shows() {
    let s = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let first = pull(dir.path(), &s.url(), &[]);
    let file = dir.path().join("ctx/prod.yaml");
    std::fs::create_dir_all(file.parent().expect("parent")).expect("dir");
    let second = pull(dir.path(), &s.url(), &["-o", file.to_str().expect("utf-8")]);
    assert_eq!(second.code, 0, "{}", second.err);
    assert!(second.out.is_empty(), "{}", second.out);
    assert!(
        second
            .err
            .contains("wrote 18 objects from context `fake` to "),
        "{}",
        second.err
    );
    let written = std::fs::read_to_string(&file).expect("the file");
    assert_eq!(written, first.out);
    // Only the file: the temporary one was renamed.
    assert_eq!(
        std::fs::read_dir(file.parent().expect("dir"))
            .expect("dir")
            .count(),
        1
    );
    assert_read_only(&s);
}

#[test]
fn lists_are_read_page_by_page_and_every_version_is_discovered() {
    let s = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let Run { code, out, err } = pull(dir.path(), &s.url(), &[]);
    assert_eq!(code, 0, "{err}");
    let targets: Vec<String> = s.seen().into_iter().map(|r| r.target).collect();
    // Three nodes, two a page: the second page is asked for with the first's token.
    let nodes: Vec<Vec<&str>> = targets
        .iter()
        .filter_map(|t| t.strip_prefix("/api/v1/nodes?"))
        .map(|q| q.split('&').filter(|p| !p.is_empty()).collect())
        .collect();
    assert_eq!(
        nodes,
        [vec!["limit=250"], vec!["limit=250", "continue=offset-2"]],
        "{targets:?}"
    );
    assert_eq!(out.matches("\n  kind: Node\n").count(), 3, "{out}");
    // Kueue's preferred version first, then the others until Topology is found (v1alpha1).
    let kueue: Vec<&String> = targets
        .iter()
        .filter(|t| t.starts_with("/apis/kueue.x-k8s.io/v1") && !t.contains('?'))
        .collect();
    assert_eq!(
        kueue,
        [
            "/apis/kueue.x-k8s.io/v1beta2",
            "/apis/kueue.x-k8s.io/v1beta1",
            "/apis/kueue.x-k8s.io/v1alpha1",
        ]
    );
    assert!(out.contains("- apiVersion: kueue.x-k8s.io/v1alpha1\n  kind: Topology\n"));
    assert_read_only(&s);
}

#[test]
fn the_pulled_file_lints_like_the_hand_made_dump_and_live_reads_the_same() {
    let s = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = dir.path().join("ctx.yaml");
    let pulled = pull(dir.path(), &s.url(), &["-o", ctx.to_str().expect("utf-8")]);
    assert_eq!(pulled.code, 0, "{}", pulled.err);
    let kc = kubeconfig(dir.path(), &s.url());
    let lint = |extra: &[&std::ffi::OsStr]| {
        let mut c = gpuops_isolated(dir.path());
        c.arg("lint")
            .arg(fixture("repo"))
            .args(["--no-config", "--format", "json"])
            .args(extra);
        let r = bounded(&mut c);
        assert_eq!(r.code, 1, "{}", r.err);
        findings(&r.out)
    };
    let by_hand = lint(&["--context".as_ref(), fixture("cluster.yaml").as_os_str()]);
    let from_file = lint(&["--context".as_ref(), ctx.as_os_str()]);
    let live = lint(&[
        "--live".as_ref(),
        "--kubeconfig".as_ref(),
        kc.as_os_str(),
        "--kube-context".as_ref(),
        "other".as_ref(),
    ]);
    let without = lint(&[]);
    assert_eq!(from_file, by_hand);
    assert_eq!(live, by_hand);
    // The context is what the findings rest on: the Topology CRD, the queues, the priorities.
    assert_ne!(without, by_hand);
    for rule in [
        "schema-violation",
        "localqueue-not-found",
        "priorityclass-not-found",
        "gpu-toleration-missing",
    ] {
        assert!(
            by_hand.iter().any(|f| f.starts_with(rule)),
            "{rule}: {by_hand:#?}"
        );
    }
    assert_read_only(&s);
}

/// `rule path:line:column message` of each finding of a JSON report.
fn findings(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).expect("a JSON report");
    v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            format!(
                "{} {}:{}:{} {}",
                d["rule"].as_str().unwrap_or_default(),
                d["path"].as_str().unwrap_or_default(),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn an_unreachable_cluster_exits_two_naming_the_server() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("http://127.0.0.1:{port}");
    let file = dir.path().join("ctx.yaml");
    let Run { code, out, err } = pull(dir.path(), &url, &["-o", file.to_str().expect("utf-8")]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains(&format!(
            "error: cannot pull the cluster context: cluster at {url}: GET /version: Connection refused"
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        1,
        "only the kubeconfig"
    );
}

/// A cluster that answers `path` only after 5 s.
fn slow(path: &'static str) -> ApiServer {
    ApiServer::start(
        &cluster_yaml(),
        Behaviour {
            slow: Some((path, Duration::from_secs(5))),
            ..Behaviour::default()
        },
    )
}

/// [`pull`] that must fail (exit 2) well before the slow answer comes.
fn pull_in_time(dir: &Path, url: &str, args: &[&str]) -> String {
    let started = Instant::now();
    let Run { code, err, .. } = pull(dir, url, args);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "{took:?}");
    assert_eq!(code, 2, "{err}");
    err
}

#[test]
fn a_pull_past_its_time_limit_exits_two_and_writes_nothing() {
    let s = slow("/api/v1/nodes");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("ctx.yaml");
    let err = pull_in_time(
        dir.path(),
        &s.url(),
        &["-o", file.to_str().expect("utf-8"), "--timeout", "0.5"],
    );
    assert!(
        err.contains(&format!(
            "error: cannot pull the cluster context: cluster at {}: the pull took longer than its \
             0.5s time limit (--timeout); it was waiting for GET /api/v1/nodes",
            s.url()
        )),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        1,
        "only the kubeconfig"
    );
    assert_read_only(&s);
}

#[test]
fn a_request_past_its_time_limit_exits_two() {
    let s = slow("/apis/karpenter.sh/v1/nodepools");
    let dir = tempfile::tempdir().expect("tempdir");
    let err = pull_in_time(dir.path(), &s.url(), &["--request-timeout", "0.3"]);
    assert!(
        err.contains(
            "GET /apis/karpenter.sh/v1/nodepools: no answer within 0.3s (--request-timeout)"
        ),
        "{err}"
    );
}

#[test]
fn kubeconfig_problems_and_flags_without_live_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig(dir.path(), "http://127.0.0.1:9");
    let mut c = gpuops_isolated(dir.path());
    c.args(["context", "pull", "--kube-context", "nope", "--kubeconfig"])
        .arg(&kc);
    let r = bounded(&mut c);
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("kubeconfig: no context named `nope`"),
        "{}",
        r.err
    );

    let mut c = gpuops_isolated(dir.path());
    c.arg("lint")
        .arg(fixture("repo"))
        .args(["--kube-context", "fake"]);
    let r = bounded(&mut c);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("go with --live"), "{}", r.err);

    let mut c = gpuops_isolated(dir.path());
    c.args(["context", "pull", "--timeout", "0"]);
    let r = bounded(&mut c);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("expected seconds"), "{}", r.err);
}

#[test]
fn the_example_cluster_role_grants_exactly_what_a_pull_lists() {
    let text = std::fs::read_to_string(root().join("examples/rbac/gpuops-context-reader.yaml"))
        .expect("the example");
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&text).expect("the example is YAML");
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole")
        .expect("a ClusterRole");
    let mut granted = Vec::new();
    for rule in role["rules"].as_array().expect("rules") {
        let verbs: Vec<&str> = rule["verbs"]
            .as_array()
            .expect("verbs")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(verbs, ["get", "list"], "{rule}");
        for g in rule["apiGroups"].as_array().expect("groups") {
            for r in rule["resources"].as_array().expect("resources") {
                granted.push(format!(
                    "{}/{}",
                    g.as_str().unwrap_or_default(),
                    r.as_str().unwrap_or_default()
                ));
            }
        }
    }
    // Kubernetes' plural of each kind pulled (Policy → policies, Class → classes).
    let plural = |kind: &str| {
        let k = kind.to_lowercase();
        match k.strip_suffix('y') {
            Some(stem) => format!("{stem}ies"),
            None if k.ends_with('s') => format!("{k}es"),
            None => format!("{k}s"),
        }
    };
    let mut wanted: Vec<String> = gpuops::context::kinds::WANTED
        .iter()
        .map(|w| format!("{}/{}", w.group, plural(w.kind)))
        .collect();
    // The GPU operator's ConfigMaps, read by name.
    wanted.push("/configmaps".into());
    granted.sort();
    wanted.sort();
    assert_eq!(granted, wanted);
    // Secrets only in Argo CD's namespace, and only to get and list.
    let role = docs
        .iter()
        .find(|d| d["kind"] == "Role")
        .expect("a Role for the cluster Secrets");
    assert_eq!(role["metadata"]["namespace"], "argocd");
    assert_eq!(
        role["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}])
    );
}

#[test]
fn why_and_cost_read_the_live_context_too() {
    let s = server();
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = kubeconfig(dir.path(), &s.url());
    let mut c = gpuops_isolated(dir.path());
    c.args(["why", "Job/research/eval"])
        .arg(fixture("repo"))
        .args(["--no-config", "--live", "--kubeconfig"])
        .arg(&kc);
    let Run { code, out, err } = bounded(&mut c);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gpu-training"), "{out}");

    let mut c = gpuops_isolated(dir.path());
    c.arg("cost")
        .arg(fixture("repo"))
        .args(["--no-config", "--live", "--kubeconfig"])
        .arg(&kc);
    let Run { code, out, err } = bounded(&mut c);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("gpu-training"), "{out}");
    assert_read_only(&s);
}

/// How long a pull of a large cluster takes: 500 NodePools and 5,000 GPU Nodes, pages of 250 as
/// a real API server gives them. A measurement, not a test of a time:
/// `cargo test --release --test context_pull -- --ignored --nocapture a_large_cluster`.
#[test]
#[ignore]
fn a_large_cluster_pull_measured() {
    use serde_json::json;
    let mut items: Vec<serde_json::Value> = (0..500)
        .map(|i| {
            json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                "metadata": {"name": format!("pool-{i}"), "uid": format!("p{i}")},
                "spec": {"template": {"metadata": {"labels": {"team": format!("team-{}", i % 50)}},
                    "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.12xlarge"]}],
                        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}},
                    "limits": {"nvidia.com/gpu": 64}}})
        })
        .collect();
    items.extend((0..5000).map(|i| {
        let name = format!("ip-10-0-{}-{}", i / 250, i % 250);
        json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": format!("u{i}"),
                "labels": {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "g5.12xlarge",
                    "eks.amazonaws.com/nodegroup": format!("ng-{}", i % 40)},
                "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"providerID": format!("aws:///us-east-1a/i-{i}"),
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "48", "memory": "195784220Ki", "nvidia.com/gpu": "4"},
                "allocatable": {"cpu": "47810m", "memory": "186897004Ki", "nvidia.com/gpu": "4"},
                "conditions": [{"type": "Ready", "status": "True"}],
                "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.33.1",
                    "operatingSystem": "linux", "bootID": format!("b{i}")}}})
    }));
    let s = ApiServer::serving(
        &json!({"apiVersion": "v1", "kind": "List", "items": items}),
        Behaviour {
            page: Some(250),
            ..Behaviour::default()
        },
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = dir.path().join("ctx.yaml");
    let started = std::time::Instant::now();
    let r = pull(dir.path(), &s.url(), &["-o", ctx.to_str().expect("utf-8")]);
    let took = started.elapsed();
    assert_eq!(r.code, 0, "{}", r.err);
    let bytes = std::fs::metadata(&ctx).expect("written").len();
    println!(
        "pulled 500 NodePools and 5,000 Nodes in {:.2} s ({} requests, {bytes} bytes written)",
        took.as_secs_f64(),
        s.seen().len()
    );
}
