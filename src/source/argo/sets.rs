//! An ApplicationSet met while following Applications: expanded ([`super::appset`]) against
//! the clusters the run knows, each Application it generates followed like a written one, and
//! what it gave recorded for `--explain-sources`.

use super::app::{self, App};
use super::appset;
use super::sync::{Defined, Pending, Run, SetRecord};
use crate::source::Sources;
use crate::source::tree::identity;
use crate::yaml::{Node, Span};

impl Sources {
    /// The Applications the ApplicationSet `root` (defined at `p`) generates, to follow.
    pub(super) fn expand_set(
        &self,
        root: Node<'_>,
        name: String,
        span: Span,
        p: &Pending,
        run: &mut Run,
    ) -> Vec<(App, Pending)> {
        run.any_set = true;
        let cx = appset::Context {
            root: &identity(&self.root),
            repo: &self.config.argo.repo,
            fleet: &run.fleet,
        };
        let mut rec = SetRecord {
            name,
            at: p.at.clone(),
            span,
            via: p.via.clone(),
            generated: Vec::new(),
            skipped: Vec::new(),
            failed: Vec::new(),
            notes: Vec::new(),
            error: None,
        };
        // Argo CD gives generated Applications the ApplicationSet's namespace.
        let namespace = root.str_at(&["metadata", "namespace"]).map(str::to_string);
        let mut apps = Vec::new();
        match appset::expand(root, &cx) {
            Ok(e) => {
                rec.skipped = e.skipped;
                rec.failed = e.failed;
                rec.notes = e.notes.into_iter().collect();
                for g in e.apps {
                    let at = Defined {
                        generated: Some(g.label.clone()),
                        ..p.at.clone()
                    };
                    match app::parse(g.root()) {
                        Ok(mut a) => {
                            a.namespace = namespace.clone();
                            rec.generated.push(a.name.clone());
                            apps.push((
                                a,
                                Pending {
                                    at,
                                    via: p.via.clone(),
                                    depth: p.depth,
                                    origin: g.cluster.clone(),
                                },
                            ));
                        }
                        Err(e) => rec.skipped.push(format!("{}: {e}", g.label)),
                    }
                }
            }
            Err(e) => rec.error = Some(e),
        }
        run.set_by_defined.insert(p.at.clone(), run.sets.len());
        run.sets.push(rec);
        apps
    }
}
