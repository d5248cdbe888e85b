//! Helm as a [`Builder`]: a unit is a chart with what it is rendered with.

use super::{Chart, FAILED, Render, remap};
use crate::source::builder::{Added, Builder, Failed, For, Outcome, Output, Skip, documents};
use crate::source::tree::{self, identity};
use crate::source::{
    Line, SourceFile, Sources, display_canonical, display_path, exec, first_key, parsed_file,
};
use crate::yaml::Span;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Renders charts with `helm template`.
#[derive(Default)]
pub(in crate::source) struct Helm {
    /// The program, looked for on `PATH` when a chart is first rendered.
    pub(super) program: OnceLock<Option<PathBuf>>,
}

/// One chart to render.
pub(in crate::source) struct Unit {
    pub chart: Chart,
    /// What it is rendered with, or why `charts:` in .gpuops.yaml does not say it right.
    pub render: Result<Render, String>,
    /// Files its values also come from (an Argo CD Application's manifest, for inline values).
    pub extra_values: Vec<PathBuf>,
}

/// A chart rendered.
pub(in crate::source) struct Rendered {
    pub(super) text: String,
    pub(super) command: String,
}

impl Builder for Helm {
    type Unit = Unit;
    type Built = Rendered;
    /// A template line helm's message names.
    type Fault = Option<(PathBuf, u32, u32)>;

    fn planned(&self, s: &mut Sources) -> Vec<Unit> {
        let mut units: Vec<Unit> = Vec::new();
        for d in &s.charts {
            match Chart::load(d) {
                Some(chart) => units.push(Unit {
                    render: s.chart_settings(&chart),
                    chart,
                    extra_values: Vec::new(),
                }),
                None => s.lines.push(Line {
                    what: "skipped",
                    path: display_path(d),
                    detail: "Chart.yaml cannot be read: not linted".into(),
                }),
            }
        }
        for c in &s.config.charts {
            let dir = tree::normalize(&s.root.join(&c.path));
            let id = identity(&dir);
            if !units.iter().any(|u| u.chart.dir == id) {
                s.lines.push(Line {
                    what: "unknown",
                    path: display_canonical(&dir),
                    detail: format!(
                        "`charts: {{{}: …}}` in .gpuops.yaml names no chart that was linted",
                        c.path
                    ),
                });
            }
        }
        units
    }

    fn build(&self, s: &Sources, unit: &Unit) -> Outcome<Helm> {
        let chart = &unit.chart;
        let render = match &unit.render {
            Ok(r) => r,
            Err(message) => {
                return Outcome::Failed(Failed {
                    message: message.clone(),
                    command: String::new(),
                    at: None,
                    timed_out: false,
                });
            }
        };
        let name_span = chart
            .file
            .docs
            .first()
            .and_then(|d| d.root().get("name"))
            .map(|n| n.span())
            .unwrap_or_else(|| first_key(&chart.file));
        let marker = chart.name.clone().unwrap_or_else(|| "Chart.yaml".into());
        let skipped = |reason: &str, marker: String, span: Span| {
            Outcome::Skipped(Skip {
                reason: reason.into(),
                marker,
                span,
                by_hand: super::hint(&chart.shown, render),
            })
        };
        if !s.config.helm {
            return skipped("Helm chart (rendering off)", marker, name_span);
        }
        let Some(helm) = self.program.get_or_init(|| exec::which("helm")) else {
            return skipped("Helm chart (helm not on PATH)", marker, name_span);
        };
        let missing = chart.missing_dependencies();
        if let Some((_, span)) = missing.first() {
            let names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
            return skipped(
                "Helm chart (dependencies not in charts/, not fetched)",
                names.join(", "),
                *span,
            );
        }
        let (out, command) = super::render(helm, chart, render, s.config.timeout);
        match out {
            Ok(text) => Outcome::Built(Rendered { text, command }),
            Err((message, timed_out)) => Outcome::Failed(Failed {
                at: super::error_location(chart, &message),
                message,
                command,
                timed_out,
            }),
        }
    }

    fn output(&self, s: &Sources, unit: &Unit, r: Rendered, app: For) -> Added {
        let chart = &unit.chart;
        let for_app = app.suffix();
        let sources = super::sources(&r.text, chart);
        let file = SourceFile::rendered(
            format!("{} (helm template{for_app})", chart.file.path),
            r.text,
        );
        let mut values: Vec<PathBuf> = Vec::new();
        let default_values = chart.dir.join("values.yaml");
        if default_values.is_file() {
            values.push(identity(&default_values));
        }
        values.extend(unit.render.iter().flat_map(|r| r.values.iter().cloned()));
        values.extend(unit.extra_values.iter().cloned());
        let detail = format!(
            "`{}` in {}{for_app}: {}",
            r.command,
            chart.shown,
            documents(file.docs.len())
        );
        let mut read: Vec<(PathBuf, SourceFile)> = Vec::new();
        let unread = |read: &[(PathBuf, SourceFile)], p: &PathBuf| {
            !s.cache.contains_key(p) && !read.iter().any(|(q, _)| q == p)
        };
        for p in &values {
            if unread(&read, p)
                && let Some(f) = parsed_file(p)
            {
                read.push((p.clone(), f));
            }
        }
        for p in sources.iter().filter_map(|(_, p)| p.as_ref()) {
            if unread(&read, p)
                && let Some(f) = text_file(p)
            {
                read.push((p.clone(), f));
            }
        }
        let output = Output {
            source: chart.dir.clone(),
            shown: display_canonical(&chart.dir),
            map: Box::new(remap::Map { sources, values }),
            read,
        };
        Added::output(file, (chart.shown.clone(), detail), output)
    }

    fn failure(&self, _: &Sources, unit: &Unit, f: Failed<Self::Fault>, app: For) -> Added {
        let chart = &unit.chart;
        let for_app = app.suffix();
        let detail = if f.command.is_empty() {
            format!("{}{for_app} (reported as source-build-failed)", f.message)
        } else {
            format!(
                "`{}`{for_app}: {} (reported as source-build-failed)",
                f.command, f.message
            )
        };
        let explained = Some((chart.shown.clone(), detail));
        let message = format!("{FAILED}{}", f.message);
        let in_template = f.at.and_then(|(p, line, col)| {
            let t = text_file(&p)?;
            let start = line_col(&t.text, line, col)?;
            let end = t.text[start..]
                .find('\n')
                .map_or(t.text.len(), |i| start + i);
            let span = crate::source::remap::span_at(&t.text, start, end - start);
            Some((t, span))
        });
        let (file, span) = match &in_template {
            Some((t, span)) => (t, *span),
            None => (&chart.file, first_key(&chart.file)),
        };
        Added::failure(
            file.path.clone(),
            file.text.to_string(),
            span,
            message,
            app.failure_kind(),
            explained,
        )
    }

    fn skip(&self, s: &Sources, unit: &Unit, skip: Skip, app: For) -> Added {
        let chart = &unit.chart;
        let detail = format!(
            "{}{}; lint it with `{}`",
            skip.reason,
            app.suffix(),
            skip.by_hand
        );
        let hint = s.config_hint(chart);
        Added::skip(
            chart.file.path.clone(),
            chart.file.text.to_string(),
            skip,
            hint,
            (chart.shown.clone(), detail),
        )
    }
}

impl Sources {
    /// What `charts:` in .gpuops.yaml renders the chart with.
    fn chart_settings(&self, chart: &Chart) -> Result<Render, String> {
        let rel = tree::relative(&identity(&self.root), &chart.dir);
        let rel = rel.to_string_lossy().replace('\\', "/");
        super::settings_for(chart, self.config.chart(&rel), &self.root)
    }

    /// How the notes say to lint a skipped chart by hand: with the settings of `charts:`, not
    /// an Application's, as a chart is linted outside Argo CD.
    fn config_hint(&self, chart: &Chart) -> Option<String> {
        let path = Path::new(&chart.file.path);
        let dir = path
            .parent()
            .map(display_canonical)
            .unwrap_or_else(|| ".".into());
        let chart = Chart::load(path.parent()?)?;
        let rel = tree::relative(&identity(&self.root), &chart.dir);
        let cfg = self.config.chart(&rel.to_string_lossy());
        let render = super::settings_for(&chart, cfg, &self.root).ok()?;
        Some(format!("lint it with `{}`", super::hint(&dir, &render)))
    }
}

/// Text only: templates are not YAML, and must not be listed as skipped templates.
fn text_file(path: &Path) -> Option<SourceFile> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(SourceFile {
        path: display_canonical(path),
        text: text.into(),
        docs: Vec::new(),
        problems: Vec::new(),
        skipped: None,
        role: Default::default(),
        lines: Default::default(),
    })
}

/// Byte offset of a 1-based line and column.
fn line_col(text: &str, line: u32, col: u32) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line as usize - 2)?.0 + 1
    };
    let rest = &text[start..];
    let end = rest.find('\n').unwrap_or(rest.len());
    let in_line = rest[..end]
        .char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(end, |(i, _)| i);
    Some(start + in_line)
}
