//! `.gpuops.yaml`: found by walking up from the linted path, parsed with spans, validated into
//! [`Settings`] with every problem reported at once.

use super::{ClusterDef, External, Level, Settings, sources};
use crate::diag::Severity;
use crate::yaml::{self, Budget, Node, Span};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = ".gpuops.yaml";

/// One located problem in a config file.
#[derive(Clone, Debug)]
pub struct ConfigProblem {
    pub span: Span,
    pub message: String,
}

/// A config file that could not be used.
#[derive(Debug)]
pub struct ConfigError {
    pub path: PathBuf,
    pub text: String,
    pub problems: Vec<ConfigProblem>,
}

/// Finds `.gpuops.yaml` in `start` (or its directory) or any parent.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(start).ok()?;
    let mut dir = if abs.is_dir() {
        Some(abs.as_path())
    } else {
        abs.parent()
    };
    while let Some(d) = dir {
        let candidate = d.join(FILE_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        dir = d.parent();
    }
    None
}

/// Loads and validates a config file; `rules` are the rule names it may configure.
pub fn load(path: &Path, rules: &[&str]) -> Result<Settings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        text: String::new(),
        problems: vec![ConfigProblem {
            span: Span::default(),
            message: format!("cannot read config: {e}"),
        }],
    })?;
    let mut s = parse(&text, rules).map_err(|problems| ConfigError {
        path: path.to_path_buf(),
        text: text.clone(),
        problems,
    })?;
    s.root = path.parent().map(Path::to_path_buf);
    Ok(s)
}

pub const RULE_LEVELS: &str = "off, warning, error";

/// Rule names of policies start with this.
pub const POLICY_PREFIX: &str = "policy/";

/// Whether a policy id is kebab-case (`team-label-missing`).
pub fn valid_policy_id(id: &str) -> bool {
    !id.is_empty()
        && id.split('-').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// A list of path strings (`context:`), each problem located.
fn path_list(v: Node<'_>, what: &str, bad: &mut dyn FnMut(Node<'_>, String)) -> Vec<String> {
    if v.is_null() {
        return Vec::new();
    }
    if v.as_seq().is_none() {
        bad(v, format!("`{what}` is a list of files or directories"));
        return Vec::new();
    }
    let mut out = Vec::new();
    for item in v.items() {
        match item
            .as_str()
            .filter(|t| !t.is_empty() && item.as_seq().is_none())
        {
            Some(t) if item.as_map().is_none() => out.push(t.to_string()),
            _ => bad(item, format!("a `{what}` entry is a path")),
        }
    }
    out
}

/// `cost: {spot-discount: 0.65, prices: {type-or-family: usd}, budget: {total: usd,
/// nodepools: {pool: usd}}}`, $/h throughout.
fn cost(
    v: Node<'_>,
    bad: &mut dyn FnMut(Node<'_>, String),
) -> crate::catalog::pricing::CostSettings {
    let mut c = crate::catalog::pricing::CostSettings::default();
    // A price or budget is a non-negative number of dollars per hour.
    let usd = |n: Node<'_>| {
        n.as_str()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|x| x.is_finite() && *x >= 0.0)
    };
    if v.as_map().is_none() {
        if !v.is_null() {
            bad(
                v,
                "`cost` is a mapping (spot-discount, prices, budget)".into(),
            );
        }
        return c;
    }
    for (k, kn, val) in v.entries() {
        match k {
            "spot-discount" => match usd(val).filter(|d| *d < 1.0) {
                Some(d) => c.spot_discount = d,
                None => bad(
                    val,
                    "`cost.spot-discount` is a fraction from 0 to below 1 (0.65: spot costs 35% of on-demand)".into(),
                ),
            },
            "prices" => {
                if val.as_map().is_none() {
                    bad(val, "`cost.prices` maps instance types or families to $/h".into());
                }
                for (t, tn, p) in val.entries() {
                    let known = crate::catalog::instances()
                        .iter()
                        .any(|i| i.instance_type == t || i.family == t);
                    match usd(p) {
                        _ if !known => bad(
                            tn,
                            format!("`{t}` is no instance type or family of the catalog"),
                        ),
                        Some(x) => {
                            c.prices.insert(t.to_string(), x);
                        }
                        None => bad(p, format!("the price of `{t}` is a number of $/h")),
                    }
                }
            }
            "budget" => {
                if val.as_map().is_none() {
                    bad(val, "`cost.budget` is a mapping (total, nodepools)".into());
                }
                for (bk, bkn, bv) in val.entries() {
                    match bk {
                        "total" => match usd(bv) {
                            Some(x) => c.budget_total = Some(x),
                            None => bad(bv, "`cost.budget.total` is a number of $/h".into()),
                        },
                        "nodepools" => {
                            if bv.as_map().is_none() {
                                bad(bv, "`cost.budget.nodepools` maps NodePool names to $/h".into());
                            }
                            for (pn, _, pv) in bv.entries() {
                                match usd(pv) {
                                    Some(x) => {
                                        c.budget_pools.insert(pn.to_string(), x);
                                    }
                                    None => bad(
                                        pv,
                                        format!("the budget of NodePool `{pn}` is a number of $/h"),
                                    ),
                                }
                            }
                        }
                        _ => bad(
                            bkn,
                            format!("unknown key `cost.budget.{bk}` (known: total, nodepools)"),
                        ),
                    }
                }
            }
            _ => bad(
                kn,
                format!("unknown key `cost.{k}` (known: spot-discount, prices, budget)"),
            ),
        }
    }
    c
}

/// `clusters: {name: {paths: [globs], eks, karpenter, context: [paths], server: url}}`.
fn clusters(v: Node<'_>, bad: &mut dyn FnMut(Node<'_>, String)) -> Vec<ClusterDef> {
    if v.as_map().is_none() {
        if !v.is_null() {
            bad(
                v,
                "`clusters` maps cluster names to their paths and facts".into(),
            );
        }
        return Vec::new();
    }
    let mut out = Vec::new();
    for (name, name_node, def) in v.entries() {
        let mut c = ClusterDef {
            name: name.to_string(),
            ..ClusterDef::default()
        };
        if def.as_map().is_none() {
            bad(
                def,
                format!(
                    "cluster `{name}` is a mapping (paths, eks, karpenter, context, server, name, labels)"
                ),
            );
            continue;
        }
        for (k, kn, val) in def.entries() {
            let flag = |b: Node<'_>| match b.as_str() {
                Some("true") if b.style() == Some(yaml::Style::Plain) => Some(true),
                Some("false") if b.style() == Some(yaml::Style::Plain) => Some(false),
                _ => None,
            };
            match k {
                "paths" => {
                    for g in path_list(val, "paths", bad) {
                        match globset::Glob::new(&g) {
                            Ok(_) => c.paths.push(g),
                            Err(e) => bad(val, format!("invalid glob `{g}`: {}", e.kind())),
                        }
                    }
                }
                "context" => c.context = path_list(val, "context", bad),
                "server" => match val.as_str().filter(|u| !u.trim().is_empty()) {
                    Some(u) => c.server = Some(u.trim().trim_end_matches('/').to_string()),
                    _ => bad(val, format!("`clusters.{name}.server` is a URL")),
                },
                "name" => match val.as_str().filter(|n| !n.trim().is_empty()) {
                    Some(n) => c.argo_name = Some(n.trim().to_string()),
                    _ => bad(
                        val,
                        format!("`clusters.{name}.name` is the cluster's name in Argo CD"),
                    ),
                },
                "labels" | "annotations" => {
                    let map = string_map(val, &format!("clusters.{name}.{k}"), bad);
                    if k == "labels" {
                        c.labels = map;
                    } else {
                        c.annotations = map;
                    }
                }
                "eks" | "karpenter" | "complete" => match flag(val) {
                    Some(f) if k == "eks" => c.eks = Some(f),
                    Some(f) if k == "karpenter" => c.karpenter = Some(f),
                    Some(f) => c.complete = Some(f),
                    None => bad(val, format!("`clusters.{name}.{k}` is true or false")),
                },
                _ => bad(
                    kn,
                    format!(
                        "unknown key `{k}` in cluster `{name}` (known: paths, eks, karpenter, complete, context, server, name, labels, annotations)"
                    ),
                ),
            }
        }
        // A cluster Argo CD deploys to needs no paths (`paths: []`, or its `server` or Argo CD
        // `name`): its Applications say what it gets.
        if c.paths.is_empty()
            && c.server.is_none()
            && c.argo_name.is_none()
            && def.get("paths").is_none()
        {
            bad(
                name_node,
                format!(
                    "cluster `{name}` needs `paths`: globs of the files deployed to it (or `server`, the Argo CD destination that deploys to it)"
                ),
            );
            continue;
        }
        out.push(c);
    }
    out
}

/// A mapping of strings (labels, annotations); numbers and booleans are taken as written, as
/// they would be quoted in a Secret's metadata.
fn string_map(
    v: Node<'_>,
    what: &str,
    bad: &mut dyn FnMut(Node<'_>, String),
) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    if v.as_map().is_none() {
        if !v.is_null() {
            bad(v, format!("`{what}` maps names to values"));
        }
        return out;
    }
    for (k, _, val) in v.entries() {
        match val.as_str().filter(|_| !val.is_null()) {
            Some(s) => {
                out.insert(k.to_string(), s.to_string());
            }
            None => bad(val, format!("`{what}.{k}` is a string")),
        }
    }
    out
}

/// Validates config text, all problems at once; `rules` are the rule names it may configure
/// (policies, `policy/<id>`, are checked once they are loaded).
pub fn parse(text: &str, rules: &[&str]) -> Result<Settings, Vec<ConfigProblem>> {
    let parsed = yaml::parse(text, Budget::default());
    let mut problems: Vec<ConfigProblem> = parsed
        .problems
        .iter()
        .map(|p| ConfigProblem {
            span: p.span,
            message: p.message.clone(),
        })
        .collect();
    let mut s = Settings::default();
    let Some(root) = parsed.docs.first().map(|d| d.root()) else {
        return if problems.is_empty() {
            Ok(s)
        } else {
            Err(problems)
        };
    };
    if root.is_null() {
        return if problems.is_empty() {
            Ok(s)
        } else {
            Err(problems)
        };
    }
    let mut bad = |n: Node<'_>, m: String| {
        problems.push(ConfigProblem {
            span: n.span(),
            message: m,
        })
    };
    if root.as_map().is_none() {
        bad(root, "the config must be a mapping".into());
    }
    for (key, kn, v) in root.entries() {
        match key {
            "fail-on" => match v.as_str() {
                Some("error") => s.fail_on = Some(Severity::Error),
                Some("warning") => s.fail_on = Some(Severity::Warning),
                Some("never") => s.fail_on = None,
                _ => bad(v, "`fail-on` must be one of: error, warning, never".into()),
            },
            "rules" => {
                if v.as_map().is_none() {
                    bad(v, "`rules` maps rule names to off, warning or error".into());
                }
                for (name, nn, lv) in v.entries() {
                    if let Some(id) = name.strip_prefix(POLICY_PREFIX) {
                        // Policies load after the config (their directories are in it).
                        if valid_policy_id(id) {
                            s.policy_refs.push((name.to_string(), nn.span()));
                        } else {
                            bad(nn, format!("`{name}`: a policy id is kebab-case"));
                            continue;
                        }
                    } else if !rules.contains(&name) {
                        let hint = crate::text::closest(name, rules.iter().copied())
                            .map(|c| format!(" (did you mean `{c}`?)"))
                            .unwrap_or_default();
                        bad(
                            nn,
                            format!("unknown rule `{name}`{hint}; `gpuops rules` lists them"),
                        );
                        continue;
                    }
                    let level = match lv.as_str() {
                        Some("off") | Some("false") if lv.style().is_some() => Level::Off,
                        Some("warning") => Level::Warning,
                        Some("error") => Level::Error,
                        _ => {
                            bad(lv, format!("a rule level is one of: {RULE_LEVELS}"));
                            continue;
                        }
                    };
                    s.rules.insert(name.to_string(), level);
                }
            }
            "exclude" => {
                for item in v.items() {
                    match item.as_str() {
                        Some(g) => match globset::Glob::new(g) {
                            Ok(_) => s.exclude.push(g.to_string()),
                            Err(e) => bad(item, format!("invalid glob: {}", e.kind())),
                        },
                        None => bad(item, "an exclude entry is a glob string".into()),
                    }
                }
                if v.as_seq().is_none() && !v.is_null() {
                    bad(v, "`exclude` is a list of globs".into());
                }
            }
            "external" => {
                if v.as_map().is_none() && !v.is_null() {
                    bad(v, "`external` maps a kind to a list of names (`namespace/name` for namespaced kinds)".into());
                }
                for (kind, _, names) in v.entries() {
                    if names.as_seq().is_none() {
                        bad(names, format!("`external.{kind}` is a list of names"));
                    }
                    for n in names.items() {
                        match n.as_str().filter(|t| !t.is_empty()) {
                            Some(t) => {
                                let (ns, name) = match t.split_once('/') {
                                    Some((a, b)) => (Some(a.to_string()), b.to_string()),
                                    None => (None, t.to_string()),
                                };
                                s.external.push(External {
                                    kind: kind.to_string(),
                                    namespace: ns,
                                    name,
                                });
                            }
                            None => bad(n, "a name is a non-empty string".into()),
                        }
                    }
                }
            }
            "cluster" => {
                for (k, kn2, b) in v.entries() {
                    let flag = match b.as_str() {
                        Some("true") if b.style() == Some(yaml::Style::Plain) => true,
                        Some("false") if b.style() == Some(yaml::Style::Plain) => false,
                        _ => {
                            bad(b, format!("`cluster.{k}` is true or false"));
                            continue;
                        }
                    };
                    match k {
                        "eks" => s.eks = flag,
                        "karpenter" => s.karpenter = flag,
                        "complete" => s.complete = flag,
                        _ => bad(
                            kn2,
                            format!("unknown cluster fact `{k}` (known: eks, karpenter, complete)"),
                        ),
                    }
                }
                if v.as_map().is_none() {
                    bad(
                        v,
                        "`cluster` is a mapping (eks, karpenter, complete)".into(),
                    );
                }
            }
            "training" => {
                for (k, kn2, t) in v.entries() {
                    match k {
                        "labels" => {
                            s.training_labels.clear();
                            for (lk, _, lv) in t.entries() {
                                match lv.as_str() {
                                    Some(val) => s.training_labels.push((lk.into(), val.into())),
                                    None => bad(lv, "a label value is a string".into()),
                                }
                            }
                            if t.as_map().is_none() {
                                bad(t, "`training.labels` maps label keys to values".into());
                            }
                        }
                        _ => bad(kn2, format!("unknown key `training.{k}` (known: labels)")),
                    }
                }
            }
            "spot" => {
                for (k, kn2, n) in v.entries() {
                    match (k, n.as_str().and_then(|t| t.parse::<u64>().ok())) {
                        ("min-termination-grace", Some(secs)) if secs <= 120 => {
                            s.spot_min_grace_seconds = secs
                        }
                        ("min-termination-grace", _) => bad(
                            n,
                            "`spot.min-termination-grace` is a number of seconds, at most 120 (the spot notice)".into(),
                        ),
                        _ => bad(
                            kn2,
                            format!("unknown key `spot.{k}` (known: min-termination-grace)"),
                        ),
                    }
                }
                if v.as_map().is_none() {
                    bad(v, "`spot` is a mapping (min-termination-grace)".into());
                }
            }
            "context" => s.context.extend(path_list(v, "context", &mut bad)),
            // CRD files are context like any other: the index holds them, schema-violation reads them.
            "crds" => s.context.extend(path_list(v, "crds", &mut bad)),
            "policies" => s.policy_dirs = path_list(v, "policies", &mut bad),
            "policy-data" => {
                if let Some((kn2, _)) = v.entry("gpuops") {
                    bad(
                        kn2,
                        "`policy-data.gpuops` is taken: policy packages live under `data.gpuops`"
                            .into(),
                    );
                } else if v.as_map().is_some() {
                    s.policy_data = Some(crate::yaml::to_json(v));
                } else if !v.is_null() {
                    bad(
                        v,
                        "`policy-data` is a mapping: the `data` document policies read".into(),
                    );
                }
            }
            "clusters" => s.clusters = clusters(v, &mut bad),
            "cost" => s.cost = cost(v, &mut bad),
            "sources" | "charts" | "argo" => sources::parse_key(key, v, &mut s.sources, &mut bad),
            _ => bad(
                kn,
                format!(
                    "unknown key `{key}` (known: fail-on, rules, exclude, external, cluster, training, spot, context, crds, clusters, sources, charts, argo, policies, policy-data, cost)"
                ),
            ),
        }
    }
    if problems.is_empty() {
        Ok(s)
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Settings, Vec<ConfigProblem>> {
        super::parse(text, &crate::rules::names())
    }

    #[test]
    fn full_config() {
        let s = parse(
            "fail-on: warning\nrules:\n  gpu-nodepool-unbounded: off\nexclude: [\"legacy/**\"]\nexternal:\n  ClusterQueue: [shared]\n  LocalQueue: [ml/default]\ncluster: {eks: true}\ntraining:\n  labels: {kind: train}\n",
        )
        .unwrap();
        assert_eq!(s.fail_on, Some(Severity::Warning));
        assert_eq!(s.level("gpu-nodepool-unbounded"), Some(Level::Off));
        assert!(s.is_external("ClusterQueue", None, "shared"));
        assert!(s.is_external("LocalQueue", Some("ml"), "default"));
        assert!(!s.is_external("LocalQueue", Some("other"), "default"));
        assert!(s.eks);
        assert!(!s.complete);
        assert!(parse("cluster: {complete: true}\n").unwrap().complete);
        assert_eq!(s.spot_min_grace_seconds, 30);
        assert_eq!(
            s.training_labels,
            vec![("kind".to_string(), "train".to_string())]
        );
    }

    #[test]
    fn a_cluster_argo_cd_deploys_to_needs_no_paths() {
        let s = parse(
            "clusters:\n  prod: {server: \"https://prod.example.com/\", eks: true}\n  staging: {paths: []}\n",
        )
        .unwrap();
        assert_eq!(
            s.clusters[0].server.as_deref(),
            Some("https://prod.example.com")
        );
        assert!(s.clusters[1].paths.is_empty());
        let errs = parse("clusters:\n  prod: {eks: true}\n").unwrap_err();
        assert!(errs[0].message.contains("needs `paths`"), "{errs:?}");
    }

    #[test]
    fn clusters_carry_their_argo_cd_name_labels_and_annotations() {
        let s = parse(
            "clusters:\n  prod:\n    name: prod-eks\n    labels: {environment: production, gpu: true}\n    annotations: {team: ml}\n",
        )
        .unwrap();
        let c = &s.clusters[0];
        assert_eq!(c.argo_name.as_deref(), Some("prod-eks"));
        assert_eq!(
            c.labels.get("environment").map(String::as_str),
            Some("production")
        );
        assert_eq!(c.labels.get("gpu").map(String::as_str), Some("true"));
        assert_eq!(c.annotations.get("team").map(String::as_str), Some("ml"));
        let errs = parse("clusters:\n  prod: {server: x, labels: [a], name: ''}\n").unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
    }

    #[test]
    fn cost_key() {
        let s = parse("cost: {spot-discount: 0.5, prices: {p5.48xlarge: 98.32, g6: 0.9}, budget: {total: 500, nodepools: {gpu-training: 200}}}\n").unwrap();
        assert_eq!(s.cost.spot_discount, 0.5);
        assert_eq!(s.cost.prices.get("g6"), Some(&0.9));
        assert_eq!(s.cost.budget_total, Some(500.0));
        assert_eq!(s.cost.budget_pools.get("gpu-training"), Some(&200.0));
        let errs = parse("cost: {spot-discount: 2, prices: {m9: 1, g6: cheap}, budget: {total: -1, nodepools: {a: x}, other: 1}, bogus: 1}\n").unwrap_err();
        assert_eq!(errs.len(), 7, "{errs:?}");
    }

    #[test]
    fn spot_grace_minimum() {
        let s = parse("spot: {min-termination-grace: 60}\n").unwrap();
        assert_eq!(s.spot_min_grace_seconds, 60);
        let errs = parse("spot: {min-termination-grace: 300, other: 1}\n").unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
    }

    #[test]
    fn every_problem_is_reported_with_its_place() {
        let text = "fail-on: sometimes\nrules:\n  gpu-limit-mising: off\n  gpu-limit-missing: loud\nbogus: 1\ncluster: {eks: maybe}\n";
        let errs = parse(text).unwrap_err();
        assert_eq!(errs.len(), 5, "{errs:?}");
        assert!(
            errs.iter()
                .any(|e| e.message.contains("did you mean `gpu-limit-missing`"))
        );
        assert_eq!(errs[0].span.start_pos(text).line, 1);
    }
}
