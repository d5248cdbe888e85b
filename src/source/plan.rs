//! Planning a run: which files are read raw, which kustomizations built, which charts rendered.

use super::{Line, Sources, display_canonical, is_yaml_name, kustomize, tree};
use crate::config::Settings;
use crate::source::display_path;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tree::{Forest, identity};

impl Sources {
    /// Decides what is read raw and what is built. `found` is every file discovery found
    /// (YAML and `Kustomization`), `charts` the chart directories it did not enter.
    pub fn plan(found: Vec<PathBuf>, charts: Vec<PathBuf>, settings: &Settings) -> Sources {
        let config = settings.sources.clone();
        let root = settings
            .root
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let mut s = Sources {
            config,
            root,
            forest: Forest::default(),
            raw: Vec::new(),
            tops: Vec::new(),
            charts,
            tool: None,
            builds: Vec::new(),
            cache: BTreeMap::new(),
            lines: Vec::new(),
            notes: Vec::new(),
            clusters: settings.clusters.clone(),
            context_secrets: Vec::new(),
            exclude: {
                let mut b = globset::GlobSetBuilder::new();
                for g in &settings.exclude {
                    if let Ok(g) = globset::Glob::new(g) {
                        b.add(g);
                    }
                }
                b.build().ok().filter(|set| !set.is_empty())
            },
            argo_summary: None,
            old_kustomize: Vec::new(),
            script_outputs: Vec::new(),
            store: settings
                .sources
                .cache
                .as_deref()
                .map(super::cached::Store::open),
        };
        // Values files named in `charts:` are read by helm, not linted as manifests.
        let values: BTreeSet<PathBuf> = s
            .config
            .charts
            .iter()
            .flat_map(|c| c.values.iter())
            .map(|v| identity(&tree::normalize(&s.root.join(v))))
            .collect();
        let (values_found, found): (Vec<PathBuf>, Vec<PathBuf>) = found
            .into_iter()
            .partition(|f| !values.is_empty() && values.contains(&identity(f)));
        for v in values_found {
            s.lines.push(Line {
                what: "values",
                path: display_path(&v),
                detail: "a values file named in `charts:`: read by helm, not linted itself".into(),
            });
        }
        let kfiles: Vec<PathBuf> = found
            .iter()
            .filter(|f| tree::is_kustomization_file(f) && !tree::is_flux_kustomization(f))
            .cloned()
            .collect();
        if !kfiles.is_empty() {
            if !s.config.kustomize {
                s.lines.push(Line {
                    what: "off",
                    path: "kustomize".into(),
                    detail: "rendering is off (`--no-render` or `sources: {kustomize: false}`): kustomizations are read file by file".into(),
                });
            } else {
                s.tool = kustomize::Tool::find();
                if s.tool.is_none() {
                    let msg = "neither kustomize nor kubectl is on PATH: kustomizations are read file by file, not built";
                    s.notes.push(format!("note: {msg}"));
                    s.lines.push(Line {
                        what: "off",
                        path: "kustomize".into(),
                        detail: msg.into(),
                    });
                }
            }
        }
        if s.tool.is_none() {
            s.raw = found
                .into_iter()
                .filter(|f| !is_bare_kustomization(f))
                .collect();
            s.log_raw();
            return s;
        }
        s.forest = Forest::load(&kfiles);
        let scripts: Vec<(String, PathBuf, String)> =
            found.iter().filter_map(|p| read_script(p)).collect();
        s.old_kustomize = scripts
            .iter()
            .filter(|(_, _, text)| text.contains("--load_restrictor"))
            .map(|(shown, dir, _)| (shown.clone(), dir.clone()))
            .collect();
        s.script_outputs = scripts
            .iter()
            .flat_map(|(shown, _, text)| {
                kustomize::written_files(text)
                    .into_iter()
                    .map(move |w| (shown.clone(), w))
            })
            .collect();
        let discovered: BTreeSet<PathBuf> = kfiles.iter().map(|f| identity(f)).collect();
        let referrers = s.forest.referrers();
        let tops = s.forest.tops(&discovered, s.config.lint_bases);
        // What the builds read is not read raw, and neither is anything else in a
        // kustomization's own directory (ArgoCD syncs what the build makes of it).
        let (claimed, dirs) = s.forest.claims(&discovered);
        let off = s.forest.commented_out();
        let ids = tree::identities(&found);
        for (f, id) in found.into_iter().zip(ids) {
            if claimed.contains(&id) {
                continue;
            }
            // A file or directory its kustomization lists only in a comment: turned off.
            if let Some((_, k)) = off.iter().find(|(t, _)| id.starts_with(t)) {
                if is_yaml_name(&f) {
                    s.lines.push(Line {
                        what: "unused",
                        path: display_path(&f),
                        detail: format!("listed only in a comment of {k}, turned off: not linted"),
                    });
                }
                continue;
            }
            if id.parent().is_some_and(|d| dirs.contains(d)) && !super::terraform::is_terraform(&f)
            {
                if is_yaml_name(&f) {
                    s.lines.push(Line {
                        what: "unused",
                        path: display_path(&f),
                        detail: "in a kustomization's directory but not used by it: not linted"
                            .into(),
                    });
                }
                continue;
            }
            if !is_bare_kustomization(&f) {
                s.raw.push(f);
            }
        }
        s.log_raw();
        for k in &discovered {
            if tops.contains(k) {
                continue;
            }
            let via: Vec<String> = referrers
                .get(k)
                .into_iter()
                .flatten()
                .map(|r| display_canonical(r.parent().unwrap_or(r)))
                .collect();
            let (path, component) = s.forest.get(k).map_or((display_canonical(k), false), |k| {
                (k.file.path.clone(), k.component)
            });
            s.lines.push(Line {
                what: "through",
                path,
                detail: if via.is_empty() {
                    "a component no kustomization in the linted paths uses: not linted".into()
                } else if component {
                    format!("a component: linted through {}", via.join(", "))
                } else {
                    format!(
                        "linted through {}, not on its own (`sources: {{lint-bases: true}}` builds it too)",
                        via.join(", ")
                    )
                },
            });
        }
        s.tops = tops;
        s
    }

    fn log_raw(&mut self) {
        for f in &self.raw {
            let terraform = super::terraform::is_terraform(f);
            self.lines.push(Line {
                what: if terraform { "terraform" } else { "raw" },
                path: display_path(f),
                detail: if terraform {
                    "its manifests (YAML heredocs, HCL maps, yamlencode(…)), EKS managed node groups and karpenter-resources values, if any; locals, variable defaults and .tfvars are evaluated, what only Terraform knows is a placeholder".into()
                } else if super::paths::is_yaml_template(f) {
                    "named a template: another tool fills it in, so its objects are taken to exist, but it is not linted (lint what it renders, e.g. `envsubst < FILE | gpuops lint -`)".into()
                } else {
                    String::new()
                },
            });
        }
    }

    /// Files to read and parse as they are.
    pub fn raw(&self) -> &[PathBuf] {
        &self.raw
    }
}

/// The script or Makefile `p` (as shown, its directory and its text): one that runs kustomize
/// with v3's flag spelling (`--load_restrictor`, which v4 renamed `--load-restrictor`) builds
/// what a current kustomize refuses, and the files a script writes are no mistake when missing.
fn read_script(p: &Path) -> Option<(String, PathBuf, String)> {
    let name = p.file_name()?.to_str()?;
    let script = name == "Makefile" || name.ends_with(".sh") || name.ends_with(".mk");
    if !script || std::fs::metadata(p).ok()?.len() > 1 << 20 {
        return None;
    }
    let text = std::fs::read_to_string(p).ok()?;
    Some((display_path(p), identity(p.parent()?), text))
}

/// A `Kustomization` file (no extension): discovery lists it for building only; it is never
/// read raw.
fn is_bare_kustomization(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "Kustomization")
}
