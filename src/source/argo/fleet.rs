//! The clusters Argo CD knows, as far as the repository and its context tell: the clusters of
//! `clusters:` in the config (with the `name`, `server`, labels and annotations of their
//! cluster Secret) and Argo CD cluster Secrets (`argocd.argoproj.io/secret-type: cluster`) among
//! the linted files and the context files. A Secret with the `server` or Argo CD name of a
//! configured cluster is that cluster (the config's labels win); any other is a cluster of its
//! own, named after it.
//!
//! Argo CD's own cluster (`in-cluster`, `https://kubernetes.default.svc`) needs no Secret: the
//! `clusters` generator adds it, without labels or annotations, unless a Secret (or a configured
//! cluster) has its server, and leaves it out when the generator has a selector.
//!
//! Applications' destinations are mapped onto these clusters ([`Fleet::cluster_of`]).

use super::selector::Selector;
use super::{Destination, IN_CLUSTER, IN_CLUSTER_SERVER};
use crate::config::ClusterDef;
use crate::source::SourceFile;
use crate::yaml::Node;
use std::collections::BTreeMap;

/// The label that makes a Secret an Argo CD cluster.
pub const SECRET_TYPE: &str = "argocd.argoproj.io/secret-type";

/// An Argo CD cluster Secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    pub name: String,
    pub server: String,
    pub project: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// Where it is (`path:line:col` of its name).
    pub at: String,
}

/// A cluster the `clusters` generator can give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Known {
    /// The cluster of the run it is (a `clusters:` name, else its Argo CD name).
    pub cluster: String,
    /// Its name in Argo CD.
    pub name: String,
    pub server: String,
    pub project: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// Where it is declared.
    pub from: Vec<String>,
    /// Argo CD's own cluster, with no Secret: no labels, annotations or `metadata` at all.
    pub local: bool,
}

impl Known {
    /// Argo CD's own cluster as the generator adds it when no Secret is for it.
    fn local() -> Known {
        Known {
            cluster: IN_CLUSTER.into(),
            name: IN_CLUSTER.into(),
            server: IN_CLUSTER_SERVER.into(),
            project: String::new(),
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            from: vec!["Argo CD's own cluster, with no Secret".into()],
            local: true,
        }
    }

    /// What `--explain-sources` says of it.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("server {}", self.server)];
        if self.name != self.cluster {
            parts.push(format!("Argo CD name `{}`", self.name));
        }
        let pairs = |m: &BTreeMap<String, String>| {
            m.iter()
                .filter(|(k, _)| *k != SECRET_TYPE)
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
        };
        let labels = pairs(&self.labels);
        if !labels.is_empty() {
            parts.push(format!("labels {}", labels.join(", ")));
        }
        let annotations = pairs(&self.annotations);
        if !annotations.is_empty() {
            parts.push(format!("annotations {}", annotations.join(", ")));
        }
        if self.local {
            parts.push(
                "Argo CD's own cluster, with no Secret: no labels, and a `clusters` generator with a selector leaves it out"
                    .into(),
            );
        } else {
            parts.push(self.from.join(" and "));
        }
        parts.join("; ")
    }
}

/// The clusters of a run.
#[derive(Clone, Debug, Default)]
pub struct Fleet {
    /// Sorted by Argo CD name.
    pub known: Vec<Known>,
    /// Clusters whose server is not known (their name stands in for it).
    pub unknown_server: Vec<String>,
}

/// A scalar as text.
fn text(n: Node<'_>) -> Option<String> {
    n.as_str().filter(|_| !n.is_null()).map(str::to_string)
}

fn string_map(n: Option<Node<'_>>) -> BTreeMap<String, String> {
    n.into_iter()
        .flat_map(Node::entries)
        .filter_map(|(k, _, v)| Some((k.to_string(), text(v)?)))
        .collect()
}

/// The cluster Secrets of a file (a `kind: List` of kubectl output stands for its items).
pub fn secrets_in(f: &SourceFile) -> Vec<Secret> {
    let mut out = Vec::new();
    let objects = f.docs.iter().flat_map(|d| {
        let root = d.root();
        let list = root.str_at(&["kind"]).is_some_and(|k| k.ends_with("List"));
        let items: Vec<Node<'_>> = if list {
            root.get("items")
                .into_iter()
                .flat_map(Node::items)
                .collect()
        } else {
            vec![root]
        };
        items
    });
    for root in objects {
        if root.str_at(&["kind"]) != Some("Secret")
            || root.str_at(&["metadata", "labels", SECRET_TYPE]) != Some("cluster")
        {
            continue;
        }
        // `stringData` is written over `data` when the Secret is applied.
        let field = |k: &str| {
            root.at(&["stringData", k]).and_then(text).or_else(|| {
                let encoded = root.at(&["data", k]).and_then(text)?;
                let bytes = super::base64::decode(&encoded)?;
                String::from_utf8(bytes).ok()
            })
        };
        let Some(server) = field("server").map(|s| s.trim().trim_end_matches('/').to_string())
        else {
            continue;
        };
        let name = field("name").unwrap_or_default();
        // A registration template (`name: CLUSTER_NAME`) stands for clusters still to be filled
        // in: the Applications it would generate are not this repository's.
        if crate::quantity::is_placeholder(&name) {
            continue;
        }
        let name_span = root
            .at(&["metadata", "name"])
            .map_or(root.span(), |n| n.span());
        let p = f.pos(name_span.start());
        out.push(Secret {
            name,
            server,
            project: field("project"),
            labels: string_map(root.at(&["metadata", "labels"])),
            annotations: string_map(root.at(&["metadata", "annotations"])),
            at: format!("{}:{}:{}", f.path, p.line, p.col),
        });
    }
    out
}

impl Fleet {
    pub fn new(config: &[ClusterDef], secrets: &[Secret]) -> Fleet {
        let mut fleet = Fleet::default();
        for c in config {
            let name = c.argo_name.clone().unwrap_or_else(|| c.name.clone());
            let server = match (&c.server, name == IN_CLUSTER) {
                (Some(s), _) => s.clone(),
                (None, true) => IN_CLUSTER_SERVER.into(),
                (None, false) => {
                    fleet.unknown_server.push(c.name.clone());
                    name.clone()
                }
            };
            let mut labels = BTreeMap::from([(SECRET_TYPE.to_string(), "cluster".to_string())]);
            labels.extend(c.labels.clone());
            fleet.known.push(Known {
                cluster: c.name.clone(),
                name,
                server,
                project: String::new(),
                labels,
                annotations: c.annotations.clone(),
                from: vec![format!("`clusters.{}` in the config", c.name)],
                local: false,
            });
        }
        let configured = fleet.known.len();
        // Argo CD keys Secrets by name: of two with one name, the last read is the one.
        let mut by_name: BTreeMap<&str, &Secret> = BTreeMap::new();
        for s in secrets {
            by_name.insert(s.name.as_str(), s);
        }
        for s in by_name.into_values() {
            let same = fleet.known[..configured].iter_mut().find(|k| {
                k.server == s.server
                    || k.name == s.name
                    || (k.cluster == s.name && fleet.unknown_server.contains(&k.cluster))
            });
            match same {
                Some(k) => {
                    let own = std::mem::take(&mut k.labels);
                    k.labels = s.labels.clone();
                    k.labels
                        .extend(own.into_iter().filter(|(l, _)| l != SECRET_TYPE));
                    let own = std::mem::take(&mut k.annotations);
                    k.annotations = s.annotations.clone();
                    k.annotations.extend(own);
                    k.name = s.name.clone();
                    if fleet.unknown_server.contains(&k.cluster) {
                        fleet.unknown_server.retain(|c| *c != k.cluster);
                    }
                    k.server = s.server.clone();
                    k.project = s.project.clone().unwrap_or_default();
                    k.from.push(format!("cluster Secret {}", s.at));
                }
                None => fleet.known.push(Known {
                    cluster: if s.name.is_empty() {
                        s.server.clone()
                    } else {
                        s.name.clone()
                    },
                    name: s.name.clone(),
                    server: s.server.clone(),
                    project: s.project.clone().unwrap_or_default(),
                    labels: s.labels.clone(),
                    annotations: s.annotations.clone(),
                    from: vec![format!("cluster Secret {}", s.at)],
                    local: false,
                }),
            }
        }
        fleet
            .known
            .sort_by(|a, b| a.name.cmp(&b.name).then(a.cluster.cmp(&b.cluster)));
        fleet
    }

    /// Whether Argo CD's own cluster has a Secret (or a configured cluster is it).
    fn local_declared(&self) -> bool {
        self.known.iter().any(|k| k.server == IN_CLUSTER_SERVER)
    }

    /// What the `clusters` generator gives with this selector: the known clusters it matches,
    /// then Argo CD's own cluster when no selector is set and no Secret is for it.
    pub fn select(&self, selector: &Selector) -> Vec<Known> {
        let mut out: Vec<Known> = self
            .known
            .iter()
            .filter(|k| selector.matches(&k.labels))
            .cloned()
            .collect();
        if selector.is_empty() && !self.local_declared() {
            out.push(Known::local());
        }
        out
    }

    /// What `--explain-sources` lists: the known clusters, and Argo CD's own when no Secret is
    /// for it.
    pub fn listed(&self) -> Vec<Known> {
        self.select(&Selector::default())
    }

    /// The cluster of the run a destination is, and how that was decided. `origin`: the cluster
    /// whose parameters made the Application, which decides between clusters that share a
    /// server (each with an Argo CD of its own, each calling itself
    /// `https://kubernetes.default.svc`); an Application no generator made goes to each of them.
    pub fn cluster_of(
        &self,
        dest: &Destination,
        origin: Option<&str>,
    ) -> Option<(Vec<String>, String)> {
        if let Some(name) = dest.name.as_deref() {
            let found = self
                .known
                .iter()
                .find(|k| k.name == name && !k.local)
                .or_else(|| self.known.iter().find(|k| k.cluster == name));
            if let Some(k) = found {
                let how = if k.cluster == name {
                    format!("destination name `{name}`, {}", declared(k))
                } else {
                    format!(
                        "destination name `{name}`, Argo CD's name of cluster `{}`, {}",
                        k.cluster,
                        declared(k)
                    )
                };
                return Some((vec![k.cluster.clone()], how));
            }
            return Some((vec![name.to_string()], format!("destination name `{name}`")));
        }
        let server = dest.server.as_deref()?.trim_end_matches('/');
        let same: Vec<&Known> = self.known.iter().filter(|k| k.server == server).collect();
        match (same.as_slice(), origin) {
            ([], _) => {}
            ([k], _) => {
                return Some((
                    vec![k.cluster.clone()],
                    format!("destination server {server}, {}", server_of(k)),
                ));
            }
            (many, Some(o)) if many.iter().any(|k| k.cluster == o) => {
                let k = many.iter().find(|k| k.cluster == o)?;
                return Some((
                    vec![k.cluster.clone()],
                    format!(
                        "destination server {server}, {}; {} clusters have this server, each with its Argo CD: the one whose parameters made it",
                        server_of(k),
                        many.len()
                    ),
                ));
            }
            (many, _) => {
                return Some((
                    many.iter().map(|k| k.cluster.clone()).collect(),
                    format!(
                        "destination server {server}, which {} clusters have, each with its Argo CD: each syncs it",
                        many.len()
                    ),
                ));
            }
        }
        if server == IN_CLUSTER_SERVER {
            return Some((
                vec![IN_CLUSTER.to_string()],
                format!("destination server {server}, the cluster Argo CD runs in"),
            ));
        }
        Some((
            vec![server.to_string()],
            format!("destination server {server}"),
        ))
    }
}

impl Fleet {
    /// Which Argo CD an Application made with `origin`'s parameters belongs to, when several
    /// known clusters share its destination server (each running its own): that cluster.
    pub fn instance(&self, dest: &Destination, origin: Option<&str>) -> Option<String> {
        let server = dest.server.as_deref()?.trim_end_matches('/');
        let origin = origin?;
        let same: Vec<&Known> = self.known.iter().filter(|k| k.server == server).collect();
        (same.len() > 1 && same.iter().any(|k| k.cluster == origin)).then(|| origin.to_string())
    }
}

/// How a known cluster is declared, in the words the user declared it with.
fn declared(k: &Known) -> String {
    let config = k.from.iter().any(|f| f.starts_with("`clusters."));
    let secrets: Vec<&str> = k
        .from
        .iter()
        .filter_map(|f| f.strip_prefix("cluster Secret "))
        .collect();
    match (config, secrets.is_empty()) {
        (true, true) => "a cluster of `clusters:`".into(),
        (true, false) => format!(
            "a cluster of `clusters:` with the cluster Secret at {}",
            secrets.join(", ")
        ),
        (false, _) => format!("the cluster Secret at {}", secrets.join(", ")),
    }
}

/// How a server is a known cluster's.
fn server_of(k: &Known) -> String {
    if k.from.iter().all(|f| f.starts_with("`clusters.")) {
        format!("the `server` of cluster `{}` in `clusters:`", k.cluster)
    } else {
        format!("cluster `{}`, {}", k.cluster, declared(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn def(name: &str, server: Option<&str>) -> ClusterDef {
        ClusterDef {
            name: name.into(),
            server: server.map(Into::into),
            ..ClusterDef::default()
        }
    }

    fn secret(name: &str, server: &str, labels: &[(&str, &str)]) -> Secret {
        let mut l: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        l.insert(SECRET_TYPE.into(), "cluster".into());
        Secret {
            name: name.into(),
            server: server.into(),
            project: None,
            labels: l,
            annotations: BTreeMap::new(),
            at: format!("{name}.yaml:1:1"),
        }
    }

    fn of(f: &Fleet, name: Option<&str>, server: Option<&str>, origin: Option<&str>) -> String {
        f.cluster_of(
            &Destination {
                name: name.map(Into::into),
                server: server.map(Into::into),
                namespace: None,
            },
            origin,
        )
        .unwrap()
        .0
        .join(",")
    }

    #[test]
    fn destinations_become_clusters() {
        let mut prod = def("prod", Some("https://prod.example.com"));
        prod.argo_name = Some("prod-eks".into());
        let f = Fleet::new(
            &[prod],
            &[secret("staging", "https://staging.example.com", &[])],
        );
        assert_eq!(of(&f, Some("prod-eks"), None, None), "prod");
        assert_eq!(of(&f, Some("prod"), None, None), "prod");
        assert_eq!(of(&f, Some("other"), None, None), "other");
        assert_eq!(
            of(&f, None, Some("https://prod.example.com/"), None),
            "prod"
        );
        assert_eq!(
            of(&f, None, Some("https://staging.example.com"), None),
            "staging"
        );
        assert_eq!(
            of(&f, None, Some("https://kubernetes.default.svc"), None),
            "in-cluster"
        );
        assert_eq!(
            of(&f, None, Some("https://dev.example.com"), None),
            "https://dev.example.com"
        );
        assert!(f.cluster_of(&Destination::default(), None).is_none());
    }

    #[test]
    fn secrets_join_configured_clusters_and_the_config_wins() {
        let mut prod = def("prod", Some("https://prod.example.com"));
        prod.labels
            .insert("environment".into(), "production".into());
        let f = Fleet::new(
            &[prod],
            &[
                secret(
                    "prod-eks",
                    "https://prod.example.com",
                    &[("environment", "prod"), ("gpu", "true")],
                ),
                secret("dev", "https://dev.example.com", &[]),
            ],
        );
        let names: Vec<(&str, &str)> = f
            .known
            .iter()
            .map(|k| (k.name.as_str(), k.cluster.as_str()))
            .collect();
        assert_eq!(names, vec![("dev", "dev"), ("prod-eks", "prod")]);
        let prod = &f.known[1];
        assert_eq!(prod.labels.get("environment").unwrap(), "production");
        assert_eq!(prod.labels.get("gpu").unwrap(), "true");
    }

    #[test]
    fn the_local_cluster_joins_without_a_selector_only() {
        let f = Fleet::new(&[def("prod", Some("https://prod.example.com"))], &[]);
        let all: Vec<String> = f
            .select(&Selector::default())
            .into_iter()
            .map(|k| k.cluster)
            .collect();
        assert_eq!(all, vec!["prod", "in-cluster"]);
        let p = parse(
            &format!("matchLabels: {{{SECRET_TYPE}: cluster}}"),
            Budget::default(),
        );
        let s = Selector::parse(p.docs[0].root()).unwrap();
        let some: Vec<String> = f.select(&s).into_iter().map(|k| k.cluster).collect();
        assert_eq!(some, vec!["prod"]);
        // A configured cluster with Argo CD's own server is it, with its labels.
        let f = Fleet::new(&[def("hub", Some(IN_CLUSTER_SERVER))], &[]);
        assert_eq!(f.select(&Selector::default()).len(), 1);
    }

    #[test]
    fn clusters_sharing_a_server_go_by_the_parameters_that_made_the_application() {
        let f = Fleet::new(
            &[
                def("dev", Some(IN_CLUSTER_SERVER)),
                def("prod", Some(IN_CLUSTER_SERVER)),
            ],
            &[],
        );
        assert_eq!(of(&f, None, Some(IN_CLUSTER_SERVER), Some("prod")), "prod");
        assert_eq!(of(&f, None, Some(IN_CLUSTER_SERVER), Some("dev")), "dev");
        assert_eq!(of(&f, None, Some(IN_CLUSTER_SERVER), None), "dev,prod");
    }

    #[test]
    fn secrets_are_read_from_string_data_and_data() {
        let text = format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1\n  labels: {{{SECRET_TYPE}: cluster, environment: staging}}\nstringData:\n  name: staging\n  server: https://staging.example.com/\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: c2\n  labels: {{{SECRET_TYPE}: cluster}}\ndata:\n  name: {}\n  server: {}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: other}}\nstringData: {{server: x}}\n",
            super::super::base64::encode(b"dev"),
            super::super::base64::encode(b"https://dev.example.com"),
        );
        let f = SourceFile::from_text("clusters.yaml".into(), text.clone());
        let s = secrets_in(&f);
        assert_eq!(s.len(), 2);
        // As `kubectl get secret -o yaml` lists them.
        let items: String = text
            .split("---\n")
            .map(|d| format!("  - {}", d.trim_end().replace('\n', "\n    ")))
            .collect::<Vec<_>>()
            .join("\n");
        let listed = SourceFile::from_text(
            "list.yaml".into(),
            format!("apiVersion: v1\nkind: List\nitems:\n{items}\n"),
        );
        assert_eq!(secrets_in(&listed).len(), 2);
        assert_eq!(s[0].name, "staging");
        assert_eq!(s[0].server, "https://staging.example.com");
        assert_eq!(s[0].labels.get("environment").unwrap(), "staging");
        assert_eq!(s[0].at, "clusters.yaml:4:9");
        assert_eq!(s[1].name, "dev");
        assert_eq!(s[1].server, "https://dev.example.com");
    }

    #[test]
    fn registration_templates_are_no_clusters() {
        let text = format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-CLUSTER_NAME\n  labels: {{{SECRET_TYPE}: cluster, region-short: SHORT}}\nstringData:\n  name: CLUSTER_NAME\n  server: https://CLUSTER_API_SERVER\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-staging\n  labels: {{{SECRET_TYPE}: cluster}}\nstringData:\n  name: staging\n  server: https://CLUSTER_API_SERVER\n"
        );
        let s = secrets_in(&SourceFile::from_text("c.yaml".into(), text));
        // A real cluster whose endpoint is filled in later stays one.
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "staging");
    }
}
