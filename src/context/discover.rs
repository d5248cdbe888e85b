//! Which of the wanted kinds the cluster serves, at which version and under which resource name:
//! the group's preferred version first, then its others (a kind a release has not promoted yet,
//! such as Kueue's Topology, still reads).

use super::kinds::{self, WANTED, Wanted};
use super::session::{Failure, Session};
use super::{Note, PullError};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroup, APIResourceList};

/// A kind the cluster serves: where to list it.
pub struct Resource {
    pub wanted: &'static Wanted,
    /// `v1`, `karpenter.sh/v1`: the `apiVersion` its objects get.
    pub group_version: String,
    /// The collection's path (every namespace): `/apis/karpenter.sh/v1/nodepools`.
    pub path: String,
}

/// The served kinds in [`WANTED`]'s order, and a note for each kind that is not served.
pub async fn discover(s: &Session) -> Result<(Vec<Resource>, Vec<Note>), PullError> {
    let client = &s.conn.client;
    let mut found: Vec<Resource> = Vec::new();
    let mut notes = Vec::new();
    let core = fatal(
        s,
        s.call("GET /api".into(), client.list_core_api_versions())
            .await,
    )?;
    let groups = fatal(
        s,
        s.call("GET /apis".into(), client.list_api_groups()).await,
    )?;
    for group in kinds::groups() {
        let wanted: Vec<&'static Wanted> = WANTED.iter().filter(|w| w.group == group).collect();
        let versions = if group.is_empty() {
            core.versions.clone()
        } else {
            match groups.groups.iter().find(|g| g.name == group) {
                Some(g) => versions(g),
                None => {
                    let names: Vec<&str> = wanted.iter().map(|w| w.kind).collect();
                    notes.push(Note::new(
                        format!("{} ({group})", names.join(", ")),
                        "the cluster does not serve the group",
                    ));
                    continue;
                }
            }
        };
        let mut missing = wanted;
        for version in versions {
            if missing.is_empty() {
                break;
            }
            let (gv, path) = if group.is_empty() {
                (version.clone(), format!("/api/{version}"))
            } else {
                let gv = format!("{group}/{version}");
                let path = format!("/apis/{gv}");
                (gv, path)
            };
            let listed = if group.is_empty() {
                s.call(
                    format!("GET {path}"),
                    client.list_core_api_resources(&version),
                )
                .await
            } else {
                s.call(format!("GET {path}"), client.list_api_group_resources(&gv))
                    .await
            };
            let resources = match listed {
                Ok(r) => r,
                // A version /apis names that does not answer (an aggregated API that is down):
                // the group's other versions may still serve the kinds.
                Err(Failure::Api { code, message }) => {
                    notes.push(Note::new(
                        format!("kinds of {gv}"),
                        format!("its discovery answered {code} {message}"),
                    ));
                    continue;
                }
                Err(Failure::Fatal(e)) => return Err(e),
            };
            missing.retain(|w| match plural(&resources, w.kind) {
                Some(plural) => {
                    found.push(Resource {
                        wanted: w,
                        group_version: gv.clone(),
                        path: format!("{path}/{plural}"),
                    });
                    false
                }
                None => true,
            });
        }
        for w in missing {
            notes.push(Note::new(
                format!("{} ({})", w.kind, display_group(group)),
                "the cluster does not serve the kind",
            ));
        }
    }
    found.sort_by_key(|r| WANTED.iter().position(|w| std::ptr::eq(w, r.wanted)));
    Ok((found, notes))
}

/// The group's versions, the preferred one first.
fn versions(g: &APIGroup) -> Vec<String> {
    let mut out: Vec<String> = g
        .preferred_version
        .iter()
        .map(|v| v.version.clone())
        .collect();
    for v in &g.versions {
        if !out.contains(&v.version) {
            out.push(v.version.clone());
        }
    }
    out
}

/// The resource (plural) name serving `kind`, if it can be listed; subresources (`nodes/status`)
/// are not it.
fn plural<'a>(list: &'a APIResourceList, kind: &str) -> Option<&'a str> {
    list.resources
        .iter()
        .find(|r| r.kind == kind && !r.name.contains('/') && r.verbs.iter().any(|v| v == "list"))
        .map(|r| r.name.as_str())
}

fn display_group(group: &str) -> &str {
    if group.is_empty() { "core" } else { group }
}

/// Discovery of the core group and the group list must answer: without them nothing is known.
fn fatal<T>(s: &Session, r: Result<T, Failure>) -> Result<T, PullError> {
    r.map_err(|f| match f {
        Failure::Fatal(e) => e,
        Failure::Api { code, message } => PullError::Request {
            server: s.conn.server.clone(),
            request: s.current(),
            reason: format!("{code} {message}"),
        },
    })
}
