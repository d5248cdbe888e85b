//! The `sources:` and `charts:` keys of `.gpuops.yaml`: whether and how overlays and charts are
//! rendered before linting.

use crate::yaml::{Node, Style};
use std::time::Duration;

/// How long an external tool may run before it is killed. Real overlays and charts build in a
/// few seconds; a build that runs longer is stuck on something (a huge input) more often than
/// slow, and a CI job should not wait a minute per overlay to learn it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// A longer limit is a typo more often than a real need.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// Resolved `sources:` settings, with the `charts:` entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcesConfig {
    /// Build kustomizations (`kustomize build` / `kubectl kustomize`) instead of reading them
    /// file by file.
    pub kustomize: bool,
    /// Render charts with `helm template`.
    pub helm: bool,
    /// Also build bases on their own, not only through the overlays that use them.
    pub lint_bases: bool,
    pub timeout: Duration,
    pub charts: Vec<ChartConfig>,
    pub argo: ArgoConfig,
    /// Where builds are cached between runs; `None`: not cached. The command line sets it
    /// (`--no-cache`, `GPUOPS_CACHE_DIR`), never the config file.
    pub cache: Option<std::path::PathBuf>,
}

/// The `argo:` key: how Argo CD Applications in the repository are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgoConfig {
    /// Read Applications and ApplicationSets and lint what they sync per destination cluster.
    pub enabled: bool,
    /// This repository's URLs, normalised (see [`crate::text::normalize_repo`]). Empty:
    /// a source is taken as this repository when its path exists here.
    pub repo: Vec<String>,
    /// With Applications present, lint only what they sync (files no Application reaches are
    /// otherwise linted together as one more cluster).
    pub only_synced: bool,
}

impl Default for ArgoConfig {
    fn default() -> Self {
        ArgoConfig {
            enabled: true,
            repo: Vec::new(),
            only_synced: false,
        }
    }
}

impl Default for SourcesConfig {
    fn default() -> Self {
        SourcesConfig {
            kustomize: true,
            helm: true,
            lint_bases: false,
            timeout: DEFAULT_TIMEOUT,
            charts: Vec::new(),
            argo: ArgoConfig::default(),
            cache: None,
        }
    }
}

/// How one chart is rendered. Paths are relative to the config file's directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChartConfig {
    pub path: String,
    pub values: Vec<String>,
    pub namespace: Option<String>,
    pub release: Option<String>,
}

impl SourcesConfig {
    /// The `charts:` entry for a chart directory given relative to the config root.
    pub fn chart(&self, rel: &str) -> Option<&ChartConfig> {
        let norm = |s: &str| s.trim_start_matches("./").trim_end_matches('/').to_string();
        let rel = norm(rel);
        self.charts.iter().find(|c| norm(&c.path) == rel)
    }
}

/// Reads the `sources:`, `charts:` or `argo:` key of the config into `out`; every problem goes
/// to `bad` with the node it is about.
pub fn parse_key(
    key: &str,
    v: Node<'_>,
    out: &mut SourcesConfig,
    bad: &mut dyn FnMut(Node<'_>, String),
) {
    match key {
        "sources" => parse_sources(v, out, bad),
        "charts" => parse_charts(v, out, bad),
        "argo" => parse_argo(v, &mut out.argo, bad),
        _ => {}
    }
}

fn parse_argo(v: Node<'_>, out: &mut ArgoConfig, bad: &mut dyn FnMut(Node<'_>, String)) {
    if v.as_map().is_none() {
        bad(v, "`argo` is a mapping (enabled, repo, only-synced)".into());
        return;
    }
    for (k, kn, val) in v.entries() {
        match k {
            "enabled" | "only-synced" => match flag(val) {
                Some(b) if k == "enabled" => out.enabled = b,
                Some(b) => out.only_synced = b,
                None => bad(val, format!("`argo.{k}` is true or false")),
            },
            "repo" => {
                // One URL or a list of them.
                let items: Vec<Node<'_>> = if val.as_seq().is_some() {
                    val.items().collect()
                } else {
                    vec![val]
                };
                for item in items {
                    match item.as_str().filter(|s| !s.trim().is_empty()) {
                        Some(u) if item.as_seq().is_none() => {
                            out.repo.push(crate::text::normalize_repo(u))
                        }
                        _ => bad(
                            item,
                            "`argo.repo` is this repository's URL, or a list of them".into(),
                        ),
                    }
                }
            }
            _ => bad(
                kn,
                format!("unknown key `argo.{k}` (known: enabled, repo, only-synced)"),
            ),
        }
    }
}

fn flag(n: Node<'_>) -> Option<bool> {
    match (n.as_str(), n.style()) {
        (Some("true"), Some(Style::Plain)) => Some(true),
        (Some("false"), Some(Style::Plain)) => Some(false),
        _ => None,
    }
}

fn parse_sources(v: Node<'_>, out: &mut SourcesConfig, bad: &mut dyn FnMut(Node<'_>, String)) {
    if v.as_map().is_none() {
        bad(
            v,
            "`sources` is a mapping (kustomize, helm, lint-bases, timeout)".into(),
        );
        return;
    }
    for (k, kn, val) in v.entries() {
        match k {
            "kustomize" | "helm" | "lint-bases" => match flag(val) {
                Some(b) => match k {
                    "kustomize" => out.kustomize = b,
                    "helm" => out.helm = b,
                    _ => out.lint_bases = b,
                },
                None => bad(val, format!("`sources.{k}` is true or false")),
            },
            "timeout" => match val.as_str().and_then(parse_duration) {
                Some(d) if !d.is_zero() && d <= MAX_TIMEOUT => out.timeout = d,
                Some(_) => bad(val, "`sources.timeout` is between 1s and 1h".into()),
                None => bad(
                    val,
                    "`sources.timeout` is a duration such as `60s`, `2m` or a number of seconds"
                        .into(),
                ),
            },
            _ => bad(
                kn,
                format!("unknown key `sources.{k}` (known: kustomize, helm, lint-bases, timeout)"),
            ),
        }
    }
}

/// `90`, `90s`, `2m`, `1m30s`, `1h`.
fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Some(Duration::from_secs(n));
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    if !digits.is_empty() {
        return None;
    }
    Some(Duration::from_secs(total))
}

/// A Kubernetes namespace or Helm release name: a DNS-1123 label. Checking it also keeps a value
/// from reaching `helm` as a flag (`--post-renderer=…`).
pub(crate) fn dns_label(s: &str, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn parse_charts(v: Node<'_>, out: &mut SourcesConfig, bad: &mut dyn FnMut(Node<'_>, String)) {
    if v.as_map().is_none() {
        bad(
            v,
            "`charts` maps a chart directory to its values, namespace and release".into(),
        );
        return;
    }
    for (path, pn, c) in v.entries() {
        if path.trim().is_empty() {
            bad(pn, "a chart path is a non-empty directory path".into());
            continue;
        }
        let mut chart = ChartConfig {
            path: path.to_string(),
            ..ChartConfig::default()
        };
        if c.as_map().is_none() && !c.is_null() {
            bad(
                c,
                format!("`charts.{path}` is a mapping (values, namespace, release)"),
            );
        }
        for (k, kn, val) in c.entries() {
            match k {
                "values" => {
                    if val.as_seq().is_none() {
                        bad(
                            val,
                            format!("`charts.{path}.values` is a list of values files"),
                        );
                    }
                    for item in val.items() {
                        match item.as_str().filter(|s| !s.trim().is_empty()) {
                            Some(f) if item.as_seq().is_none() => chart.values.push(f.to_string()),
                            _ => bad(item, "a values file is a path string".into()),
                        }
                    }
                }
                "namespace" => match val.as_str() {
                    Some(ns) if dns_label(ns, 63) => chart.namespace = Some(ns.to_string()),
                    _ => bad(
                        val,
                        "a namespace is a DNS-1123 label (lowercase letters, digits, `-`)".into(),
                    ),
                },
                "release" => match val.as_str() {
                    Some(r) if dns_label(r, 53) => chart.release = Some(r.to_string()),
                    _ => bad(
                        val,
                        "a release name is lowercase letters, digits and `-`, at most 53 characters"
                            .into(),
                    ),
                },
                _ => bad(
                    kn,
                    format!("unknown key `charts.{path}.{k}` (known: values, namespace, release)"),
                ),
            }
        }
        out.charts.push(chart);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Budget, parse};

    fn run(text: &str) -> (SourcesConfig, Vec<(u32, String)>) {
        let p = parse(text, Budget::default());
        let mut out = SourcesConfig::default();
        let mut problems = Vec::new();
        let mut bad = |n: Node<'_>, m: String| problems.push((n.span().start_pos(text).line, m));
        for (k, _, v) in p.docs[0].root().entries() {
            parse_key(k, v, &mut out, &mut bad);
        }
        (out, problems)
    }

    #[test]
    fn full_sources_and_charts() {
        let (s, problems) = run(
            "sources: {kustomize: false, helm: true, lint-bases: true, timeout: 1m30s}\ncharts:\n  charts/gpu/:\n    values: [a.yaml, b.yaml]\n    namespace: gpu-operator\n    release: gpu\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!s.kustomize && s.helm && s.lint_bases);
        assert_eq!(s.timeout, Duration::from_secs(90));
        let c = s.chart("./charts/gpu").unwrap();
        assert_eq!(c.values, vec!["a.yaml", "b.yaml"]);
        assert_eq!(c.namespace.as_deref(), Some("gpu-operator"));
        assert_eq!(c.release.as_deref(), Some("gpu"));
    }

    #[test]
    fn every_problem_is_located() {
        let (_, problems) = run(
            "sources:\n  kustomize: yes\n  timeout: forever\n  render: true\ncharts:\n  x:\n    values: a.yaml\n    release: --post-renderer=evil\n    namespace: Bad_NS\n    extra: 1\n",
        );
        let lines: Vec<u32> = problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, vec![2, 3, 4, 7, 8, 9, 10], "{problems:?}");
    }

    #[test]
    fn argo_settings_and_their_problems() {
        let (s, problems) = run(
            "argo:\n  repo: [git@github.com:example/gitops.git, https://github.com/example/mirror]\n  only-synced: true\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            s.argo.repo,
            vec!["github.com/example/gitops", "github.com/example/mirror"]
        );
        assert!(s.argo.enabled && s.argo.only_synced);
        let (s, _) = run("argo: {repo: https://github.com/example/gitops.git, enabled: false}\n");
        assert_eq!(s.argo.repo, vec!["github.com/example/gitops"]);
        assert!(!s.argo.enabled);
        let (_, problems) = run("argo:\n  repo: [{url: x}]\n  only-synced: yes\n  apps: []\n");
        let lines: Vec<u32> = problems.iter().map(|p| p.0).collect();
        assert_eq!(lines, vec![2, 3, 4], "{problems:?}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60"), Some(Duration::from_secs(60)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("10"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("5m3"), None);
    }
}
