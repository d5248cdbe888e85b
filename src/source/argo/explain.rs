//! What the run made of the Applications: files marked with their clusters, plain builds that
//! Applications build their own way emptied, and the `--explain-sources` lines and notes.

use super::sync::{Defined, Outcome, Run, plural};
use super::units::{Made, Unit};
use crate::diag::FileId;
use crate::source::{Line, Sources, display_canonical};
use crate::source::{Role, SourceFile};
use crate::yaml::Span;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

impl Sources {
    /// Where a definition is, as (file, `file:line:col`): for one in a build's output, the file
    /// it was rendered from (a template, a resource of a kustomization), without a line.
    pub(super) fn where_defined(
        &self,
        files: &[SourceFile],
        at: &Defined,
        span: Option<Span>,
    ) -> (String, String) {
        let Some(f) = files.get(at.fid) else {
            return ("?".into(), "?".into());
        };
        let doc = f.docs.get(at.doc);
        if let Some(b) = self.builds.iter().find(|b| b.fid == at.fid) {
            let from = b
                .map
                .made_from(f, at.doc)
                .map_or_else(|| f.path.clone(), display_canonical);
            return (from.clone(), from);
        }
        let span = span.or_else(|| {
            doc.map(|d| {
                d.root()
                    .at(&["metadata", "name"])
                    .map_or(d.root().span(), |n| n.span())
            })
        });
        let at = match span {
            Some(s) => {
                let p = f.pos(s.start());
                format!("{}:{}:{}", f.path, p.line, p.col)
            }
            None => f.path.clone(),
        };
        (f.path.clone(), at)
    }

    /// The run's own builds (of the first `standard`) that Applications build their own way
    /// (with options, or a chart with an Application's values) and do not use as they are: the
    /// rendered file and the kustomization or chart shown.
    pub(super) fn superseded(
        &self,
        units: &BTreeMap<Unit, Made>,
        membership: &BTreeMap<FileId, BTreeSet<String>>,
        standard: usize,
    ) -> Vec<(FileId, String)> {
        let built: BTreeSet<&PathBuf> = units.keys().filter_map(Unit::source).collect();
        self.builds[..standard]
            .iter()
            .filter(|b| !membership.contains_key(&b.fid) && built.contains(&b.source))
            .map(|b| (b.fid, b.shown.clone()))
            .collect()
    }

    /// Marks what Applications sync, empties plain builds that Applications build their own way,
    /// and writes the `--explain-sources` lines and notes.
    pub(super) fn finish_sync(&mut self, files: &mut [SourceFile], run: Run) {
        let Run {
            records,
            sets,
            units,
            membership,
            reached,
            overlays,
            notes,
            standard,
            fleet,
            any_set,
            ..
        } = run;
        let variants = super::variants::of_files(&self.forest, &records, &overlays, &reached);
        for (&fid, clusters) in &membership {
            if let Some(f) = files.get_mut(fid) {
                f.role = Role::Synced {
                    clusters: clusters.iter().cloned().collect(),
                    variant: variants.get(&fid).copied(),
                };
            }
        }
        for (fid, path) in self.superseded(&units, &membership, standard) {
            if let Some(f) = files.get_mut(fid) {
                f.docs.clear();
            }
            self.lines.push(Line {
                what: "through",
                path,
                detail: "Argo CD Applications sync it with options of their own: linted through their builds, not as it is".into(),
            });
        }

        let mut linted = 0;
        let mut generated = 0;
        for r in &records {
            if r.generated.is_some() {
                generated += 1;
            }
            let (path, at) = self.where_defined(files, &r.at, Some(r.span));
            let mut who = format!("Application `{}`", r.name);
            let mut ctx = Vec::new();
            if let Some(g) = &r.generated {
                ctx.push(g.clone());
            }
            if let Some(v) = &r.via {
                ctx.push(format!("via `{v}`"));
            }
            if !ctx.is_empty() {
                who.push_str(&format!(" ({})", ctx.join(", ")));
            }
            match &r.outcome {
                Outcome::Synced {
                    clusters,
                    how,
                    parts,
                    skipped,
                    failed,
                } => {
                    linted += 1;
                    let named: Vec<String> = clusters.iter().map(|c| format!("`{c}`")).collect();
                    let to = if named.len() == 1 {
                        format!("cluster {}", named[0])
                    } else {
                        format!("clusters {}", named.join(", "))
                    };
                    let mut detail = format!("{who}: {} → {to} ({how})", parts.join("; "));
                    if !skipped.is_empty() || !failed.is_empty() {
                        let all: Vec<&str> =
                            skipped.iter().chain(failed).map(String::as_str).collect();
                        detail.push_str(&format!("; not linted: {}", all.join("; ")));
                    }
                    self.lines.push(Line {
                        what: "app",
                        path,
                        detail,
                    });
                    for s in skipped {
                        self.notes.push(format!(
                            "note: not linted: a source of Application `{}` ({at}): {s}",
                            r.name
                        ));
                    }
                }
                Outcome::NotLinted(reason) => {
                    self.lines.push(Line {
                        what: "unlinted",
                        path,
                        detail: format!("{who}: {reason}"),
                    });
                    self.notes.push(format!(
                        "note: not linted: Application `{}` ({at}): {reason}",
                        r.name
                    ));
                }
                Outcome::Unbuilt(reason) | Outcome::Quiet(reason) => self.lines.push(Line {
                    what: "unlinted",
                    path,
                    detail: format!("{who}: {reason}"),
                }),
            }
        }
        for s in &sets {
            let (path, at) = self.where_defined(files, &s.at, Some(s.span));
            let via = s
                .via
                .as_ref()
                .map(|v| format!(" (via `{v}`)"))
                .unwrap_or_default();
            if let Some(e) = &s.error {
                self.lines.push(Line {
                    what: "unlinted",
                    path,
                    detail: format!("ApplicationSet `{}`{via}: {e}", s.name),
                });
                self.notes.push(format!(
                    "note: not linted: ApplicationSet `{}` ({at}): {e}",
                    s.name
                ));
                continue;
            }
            let names: Vec<String> = s.generated.iter().map(|n| format!("`{n}`")).collect();
            let mut detail = format!(
                "ApplicationSet `{}`{via}: {}",
                s.name,
                plural(names.len(), "Application")
            );
            if !names.is_empty() {
                detail.push_str(&format!(" ({})", names.join(", ")));
            }
            for sk in &s.skipped {
                detail.push_str(&format!("; not evaluated: {sk}"));
                self.notes.push(format!(
                    "note: not linted: ApplicationSet `{}` ({at}): {sk}",
                    s.name
                ));
            }
            for f in &s.failed {
                detail.push_str(&format!("; Argo CD fails: {f}"));
                self.notes.push(format!(
                    "note: ApplicationSet `{}` ({at}): Argo CD fails: {f} (it creates or updates none of the set's Applications while this stands)",
                    s.name
                ));
            }
            for n in &s.notes {
                detail.push_str(&format!("; {n}"));
            }
            self.lines.push(Line {
                what: "appset",
                path,
                detail,
            });
        }
        // The clusters the ApplicationSets could fan out to.
        if any_set {
            for k in fleet.listed() {
                self.lines.push(Line {
                    what: "cluster",
                    path: k.cluster.clone(),
                    detail: k.describe(),
                });
            }
        }
        self.notes.extend(notes);

        let clusters: BTreeSet<&String> = membership.values().flatten().collect();
        let clusters: Vec<String> = clusters.iter().map(|c| format!("`{c}`")).collect();
        // Files with objects in them: a config file or a values file does not count.
        let unsynced = files
            .iter()
            .filter(|f| {
                f.role == Role::Linted && f.docs.iter().any(|d| d.root().get("kind").is_some())
            })
            .count();
        let rest = if unsynced == 0 {
            String::new()
        } else if self.config.argo.only_synced {
            format!(
                "; {} no Application syncs not linted (`argo: {{only-synced: true}}`)",
                plural(unsynced, "file")
            )
        } else {
            format!(
                "; {} no Application syncs linted as one more cluster",
                plural(unsynced, "file")
            )
        };
        let from_sets = if generated > 0 {
            format!(" ({generated} from ApplicationSets)")
        } else {
            String::new()
        };
        self.argo_summary = Some(format!(
            "argo: {}{from_sets}, {linted} linted, {} not linted; clusters: {}{rest}",
            plural(records.len(), "Application"),
            records.len() - linted,
            if clusters.is_empty() {
                "none".to_string()
            } else {
                clusters.join(", ")
            }
        ));
    }
}
