//! Rendering a chart with `helm template` (Helm 3 output: documents preceded by
//! `# Source: <chart>/templates/<file>` comments), and where each document came from.
//!
//! `builder` makes helm a kind of built source (its units and the file each outcome becomes);
//! [`remap`] points findings on a render back at its templates and values.

use super::exec::{self, Invocation};
use super::tree::{identity, normalize};
use crate::config::sources::ChartConfig;
use crate::source::SourceFile;
use crate::yaml::Span;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod builder;
mod cached;
pub mod remap;

pub(super) use builder::{Helm, Unit};

/// How a render failure starts its message; the `source-build-failed` rule owns such problems.
pub const FAILED: &str = "`helm template` failed: ";

/// A chart directory and its parsed `Chart.yaml`.
#[derive(Debug)]
pub struct Chart {
    /// Identity of the chart directory.
    pub dir: PathBuf,
    /// The directory as shown to the user.
    pub shown: String,
    pub file: SourceFile,
    /// `name:` from Chart.yaml (the first segment of `# Source:` paths).
    pub name: Option<String>,
}

impl Chart {
    pub fn load(dir: &Path) -> Option<Chart> {
        let path = dir.join("Chart.yaml");
        let bytes = std::fs::read(&path).ok()?;
        let file = crate::source::from_bytes(super::display_canonical(&path), bytes);
        let name = file
            .docs
            .first()
            .and_then(|d| d.root().str_at(&["name"]))
            .map(str::to_string);
        Some(Chart {
            dir: identity(dir),
            shown: super::display_canonical(dir),
            file,
            name,
        })
    }

    /// The node of a top-level key of Chart.yaml, for locating notes and failures.
    pub fn key_span(&self, key: &str) -> Option<Span> {
        let root = &self.file.docs.first()?.root();
        root.entry(key).map(|(k, _)| k.span())
    }

    /// Dependencies declared in Chart.yaml that are neither unpacked nor archived under
    /// `charts/`: rendering would need `helm dependency build`, which fetches from the network.
    pub fn missing_dependencies(&self) -> Vec<(String, Span)> {
        let Some(root) = self.file.docs.first().map(|d| d.root()) else {
            return Vec::new();
        };
        let present: Vec<String> = std::fs::read_dir(self.dir.join("charts"))
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Vec::new();
        for dep in root.get("dependencies").into_iter().flat_map(|d| d.items()) {
            let Some(name_node) = dep.get("name") else {
                continue;
            };
            let Some(name) = name_node.as_str() else {
                continue;
            };
            let found = present.iter().any(|p| {
                p == name
                    || (p.ends_with(".tgz")
                        && p.strip_prefix(name)
                            .is_some_and(|rest| rest.starts_with('-')))
            });
            if !found {
                out.push((name.to_string(), name_node.span()));
            }
        }
        out
    }
}

/// A release name helm accepts, from a directory name.
fn release_from(dir_name: &str) -> String {
    let mut s: String = dir_name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.truncate(53);
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "release".into() } else { s }
}

/// What a chart is rendered with.
#[derive(Debug, Clone, Default)]
pub struct Render {
    pub release: String,
    pub namespace: Option<String>,
    /// Configured values files (identities), in order.
    pub values: Vec<PathBuf>,
    /// The values files as shown.
    pub values_shown: Vec<String>,
    /// Values given inline (an Argo CD Application's `values`/`valuesObject`): written to a
    /// file in the scratch directory, read after the values files.
    pub inline: Option<String>,
    /// `name=value` overrides (`--set`, then `--set-string`).
    pub set: Vec<String>,
    pub set_string: Vec<String>,
    /// Leave CRDs out (`skipCrds`).
    pub skip_crds: bool,
}

/// Release, namespace and values for a chart from its `charts:` entry; values paths are
/// relative to `root` (the config file's directory). A values file that does not exist is an
/// error message.
pub fn settings_for(
    chart: &Chart,
    cfg: Option<&ChartConfig>,
    root: &Path,
) -> Result<Render, String> {
    let dir_name = chart
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut r = Render {
        release: cfg
            .and_then(|c| c.release.clone())
            .unwrap_or_else(|| release_from(&dir_name)),
        namespace: cfg.and_then(|c| c.namespace.clone()),
        ..Render::default()
    };
    for v in cfg.map(|c| c.values.as_slice()).unwrap_or_default() {
        let p = normalize(&root.join(v));
        if !p.is_file() {
            return Err(format!(
                "values file `{}` (from `charts:` in .gpuops.yaml) does not exist",
                super::display_canonical(&p)
            ));
        }
        r.values_shown.push(super::display_canonical(&p));
        r.values.push(identity(&p));
    }
    Ok(r)
}

fn args(r: &Render, inline: Option<&Path>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["template".into(), r.release.clone().into(), ".".into()];
    if let Some(ns) = &r.namespace {
        a.push("--namespace".into());
        a.push(ns.into());
    }
    if !r.skip_crds {
        a.push("--include-crds".into());
    }
    for v in r.values.iter().map(PathBuf::as_path).chain(inline) {
        // Absolute paths: a values file can never be read as a flag.
        a.push("--values".into());
        a.push(v.into());
    }
    // `--set=…` in one argument: an override is never read as a flag of its own.
    for s in &r.set {
        a.push(format!("--set={s}").into());
    }
    for s in &r.set_string {
        a.push(format!("--set-string={s}").into());
    }
    a
}

/// How to lint a chart by hand: `helm template … | gpuops lint -`.
pub fn hint(chart_shown: &str, r: &Render) -> String {
    let mut s = format!("helm template {} {chart_shown}", r.release);
    if let Some(ns) = &r.namespace {
        s.push_str(&format!(" --namespace {ns}"));
    }
    for v in &r.values_shown {
        s.push_str(&format!(" -f {v}"));
    }
    for v in &r.set {
        s.push_str(&format!(" --set {v}"));
    }
    for v in &r.set_string {
        s.push_str(&format!(" --set-string {v}"));
    }
    s.push_str(" | gpuops lint -");
    s
}

/// Runs `helm template` in the chart directory; returns (output, command) or ((error, killed at
/// the time limit), command).
pub fn render(
    helm: &Path,
    chart: &Chart,
    r: &Render,
    timeout: Duration,
) -> (Result<String, (String, bool)>, String) {
    let scratch = match tempfile::Builder::new().prefix("gpuops-helm-").tempdir() {
        Ok(t) => t,
        Err(e) => {
            return (
                Err((format!("cannot create a temporary directory: {e}"), false)),
                String::new(),
            );
        }
    };
    let inline = match &r.inline {
        Some(text) => {
            let p = inline_values(scratch.path());
            if let Err(e) = std::fs::write(&p, text) {
                return (
                    Err((format!("cannot write the inline values: {e}"), false)),
                    String::new(),
                );
            }
            Some(p)
        }
        None => None,
    };
    let inv = Invocation {
        program: helm,
        args: args(r, inline.as_deref()),
        cwd: &chart.dir,
        scratch: scratch.path(),
        timeout,
    };
    let command = exec::describe(&inv);
    let out = exec::run(&inv).map_err(|e| {
        let timed_out = matches!(e, exec::ExecError::Timeout(_));
        (clean_error(&e.to_string()), timed_out)
    });
    drop(scratch);
    (out, command)
}

/// Where inline values are written in the scratch directory.
fn inline_values(scratch: &Path) -> PathBuf {
    scratch.join("application-values.yaml")
}

/// The command [`render`] describes, without running it: for a render read from the cache,
/// whose command as described depends on the working directory.
pub fn command(helm: &Path, chart: &Chart, r: &Render) -> String {
    let scratch = Path::new("/gpuops-scratch");
    let inline = r.inline.as_ref().map(|_| inline_values(scratch));
    exec::describe(&Invocation {
        program: helm,
        args: args(r, inline.as_deref()),
        cwd: &chart.dir,
        scratch,
        timeout: Duration::ZERO,
    })
}

/// `Error: …` on one line.
fn clean_error(raw: &str) -> String {
    let msg = raw.trim();
    let msg = msg.strip_prefix("Error: ").unwrap_or(msg);
    let one = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(400) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// `template: chart/templates/x.yaml:12:7: …` in helm's error: the template file (identity) and
/// line and column, when the file is in this chart.
pub fn error_location(chart: &Chart, message: &str) -> Option<(PathBuf, u32, u32)> {
    let i = message.find("template: ")?;
    let rest = &message[i + "template: ".len()..];
    let mut parts = rest.splitn(4, ':');
    let (file, line, col) = (parts.next()?, parts.next()?, parts.next()?);
    let path = template_path(chart, file)?;
    Some((path, line.trim().parse().ok()?, col.trim().parse().ok()?))
}

/// `mychart/templates/job.yaml` (or `mychart/charts/sub/templates/job.yaml`) as a file in the
/// chart directory, when it exists.
fn template_path(chart: &Chart, source: &str) -> Option<PathBuf> {
    let source = source.trim();
    let rel = match &chart.name {
        Some(n) => source.strip_prefix(n.as_str())?.strip_prefix('/')?,
        None => source.split_once('/')?.1,
    };
    let p = normalize(&chart.dir.join(rel));
    // Never outside the chart.
    (p.starts_with(&chart.dir) && p.is_file()).then(|| identity(&p))
}

/// The `# Source:` comments of helm's output: byte offset of each and the template it names.
pub fn sources(text: &str, chart: &Chart) -> Vec<(usize, Option<PathBuf>)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if let Some(src) = line.trim_end().strip_prefix("# Source: ") {
            out.push((at, template_path(chart, src)));
        }
        at += line.len();
    }
    out
}

/// The YAML files under a chart's `crds/` directory (Helm reads it recursively), sorted.
pub(in crate::source) fn chart_crds(chart: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![chart.join("crds")];
    // Bounded: a symlink loop under `crds/` ends here.
    while let Some(d) = dirs.pop().filter(|_| out.len() < 10_000) {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() && dirs.len() < 1_000 => dirs.push(p),
                Ok(t) if t.is_file() && crate::source::files::is_yaml(&p) => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_are_dns_labels() {
        assert_eq!(release_from("GPU_Operator"), "gpu-operator");
        assert_eq!(release_from("__"), "release");
    }

    #[test]
    fn arguments_never_carry_a_dependency_update() {
        let r = Render {
            release: "x".into(),
            namespace: Some("ns".into()),
            values: vec![PathBuf::from("/v.yaml")],
            values_shown: vec!["v.yaml".into()],
            ..Render::default()
        };
        let a: Vec<String> = args(&r, None)
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            a,
            vec![
                "template",
                "x",
                ".",
                "--namespace",
                "ns",
                "--include-crds",
                "--values",
                "/v.yaml"
            ]
        );
        assert_eq!(
            hint("charts/x", &r),
            "helm template x charts/x --namespace ns -f v.yaml | gpuops lint -"
        );
    }
}
