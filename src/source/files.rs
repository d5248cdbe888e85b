//! Finding YAML files and parsing each one once, in parallel.

use crate::yaml::compat;
use crate::yaml::{Budget, Document, Pos, Problem, Span};
use globset::GlobSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files larger than this are reported, not parsed.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// A loaded and parsed file.
#[derive(Debug)]
pub struct SourceFile {
    /// Path as shown to the user (relative to the working directory where possible).
    pub path: String,
    /// Shared with the parsed documents, whose scalars point into it.
    pub text: Arc<str>,
    pub docs: Vec<Document>,
    /// Syntax errors, duplicate keys, unreadable content: each becomes an `invalid-yaml` finding.
    pub problems: Vec<Problem>,
    /// Set when the file is a template (Go/Helm, Jinja) that is not YAML until rendered: it has
    /// no documents and no problems, and the CLI lists it as skipped.
    pub skipped: Option<Skipped>,
    pub role: Role,
    /// Byte offset of each line's start, built the first time a position is asked for.
    pub lines: LineTable,
}

/// Where each line of a file starts; `Default` is not built yet.
#[derive(Debug, Default)]
pub struct LineTable(std::sync::OnceLock<Box<[u32]>>);

/// What a file is to the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// Linted: findings are reported in it.
    #[default]
    Linted,
    /// Cluster context (`context:`, `--context`): objects that exist in the cluster but are not
    /// deployed from the linted files. Indexed for every cross-object rule, never reported on.
    Context {
        /// The one cluster it describes; `None`: every cluster.
        cluster: Option<String>,
    },
    /// Linted, and deployed by Argo CD Applications to these clusters (sorted, unique): it is
    /// linted in each of them and in no other.
    Synced {
        clusters: Vec<String>,
        /// For an overlay applied by hand as one of several alternatives to one destination:
        /// (the alternatives' group, which one). Two of one group never run together.
        variant: Option<(u32, u32)>,
    },
    /// Objects a linted file defines in another form (the NodePools of an EKS managed node group
    /// in Terraform, the objects of a chart's values): in the clusters its file is in, like a
    /// linted file, and indexed like context, never reported on.
    Derived,
}

impl SourceFile {
    /// Byte offset of the start of the line `byte` is on (the line table is built once per
    /// file), without counting the characters before it on the line.
    pub fn line_start(&self, byte: usize) -> usize {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s as usize <= byte).max(1);
        starts[line - 1] as usize
    }

    /// Bytes in the longest of the lines within `context` lines of the one `byte` is on.
    pub fn longest_line_near(&self, byte: usize, context: usize) -> usize {
        let starts = self.line_starts();
        let line = starts.partition_point(|&s| s as usize <= byte).max(1) - 1;
        let end_of = |l: usize| {
            starts
                .get(l + 1)
                .map_or(self.text.len(), |&s| (s as usize).saturating_sub(1))
        };
        (line.saturating_sub(context)..=(line + context).min(starts.len() - 1))
            .map(|l| end_of(l).saturating_sub(starts[l] as usize))
            .max()
            .unwrap_or(0)
    }

    fn line_starts(&self) -> &[u32] {
        self.lines.0.get_or_init(|| {
            std::iter::once(0)
                .chain(
                    self.text
                        .bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect()
        })
    }

    /// Line and column of a byte offset (the line table is built once per file).
    pub fn pos(&self, byte: usize) -> Pos {
        let starts = self.line_starts();
        let mut byte = byte.min(self.text.len());
        while !self.text.is_char_boundary(byte) {
            byte -= 1;
        }
        let line = starts.partition_point(|&s| s as usize <= byte).max(1);
        let start = starts[line - 1] as usize;
        Pos {
            byte: byte as u32,
            line: line as u32,
            col: self.text[start..byte].chars().count() as u32 + 1,
        }
    }

    /// Where a span starts and ends.
    pub fn span_pos(&self, span: Span) -> (Pos, Pos) {
        (self.pos(span.start()), self.pos(span.end()))
    }

    /// Indexed but never reported on: context, or objects derived from a linted file.
    pub fn is_context(&self) -> bool {
        matches!(self.role, Role::Context { .. } | Role::Derived)
    }

    /// Whether it is an export of live objects (`kubectl get … -o yaml`): every document is an
    /// object, or a `List` of them, carrying the `uid` and `resourceVersion` only the API server
    /// assigns. Such a file is a snapshot of a cluster, kept as a backup or a record, and is
    /// read as context: applying it again is not what it is for.
    pub fn is_export(&self) -> bool {
        let exported = |n: crate::yaml::Node<'_>| {
            n.str_at(&["metadata", "uid"])
                .is_some_and(|u| !u.is_empty())
                && n.str_at(&["metadata", "resourceVersion"]).is_some()
        };
        let mut any = false;
        for d in &self.docs {
            let root = d.root();
            if root.is_null() {
                continue;
            }
            let listed = root.str_at(&["kind"]).is_some_and(|k| k.ends_with("List"));
            let ok = match root.get("items").filter(|_| listed) {
                Some(items) => {
                    let mut all = items.items().peekable();
                    all.peek().is_some() && all.all(exported)
                }
                None => exported(root),
            };
            if !ok {
                return false;
            }
            any = true;
        }
        any
    }

    /// The clusters Argo CD Applications deploy this file to, when any does.
    pub fn synced_to(&self) -> Option<&[String]> {
        match &self.role {
            Role::Synced { clusters, .. } => Some(clusters),
            _ => None,
        }
    }

    /// Which of several alternative overlays of one destination this file is the output of.
    pub fn variant(&self) -> Option<(u32, u32)> {
        match &self.role {
            Role::Synced { variant, .. } => *variant,
            _ => None,
        }
    }
}

/// Why a file was not linted, and where the evidence stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// What the file is, e.g. `Go template`.
    pub reason: String,
    /// The first template marker as written, e.g. `{{- if .Values.gpu }}`.
    pub marker: String,
    pub span: Span,
    /// How to lint it by hand, when the builder that skipped it knows.
    pub hint: Option<String>,
}

/// What only a Helm template refers to.
const HELM_VALUES: &[&str] = &[
    ".Values.",
    ".Release.",
    ".Chart.",
    ".Capabilities.",
    ".Files.",
];

fn is_applicationset(root: crate::yaml::Node<'_>) -> bool {
    root.str_at(&["apiVersion"])
        .is_some_and(|a| a.starts_with("argoproj.io/"))
        && root.str_at(&["kind"]) == Some("ApplicationSet")
}

impl SourceFile {
    /// A renderer's output (`kustomize build`, `helm template`): what is applied, as written.
    /// Nothing in it is a template any more, whatever its values hold (a generated ConfigMap of
    /// Python with `{loss}` in a multi-line quoted string).
    pub fn rendered(path: String, text: String) -> Self {
        let text: Arc<str> = Arc::from(text);
        let parsed = compat::parse_shared(&text, Budget::default());
        Self::of_parsed(path, text, parsed)
    }

    fn of_parsed(path: String, text: Arc<str>, parsed: crate::yaml::Parsed) -> Self {
        SourceFile {
            path,
            text,
            docs: parsed.docs,
            problems: parsed.problems,
            skipped: None,
            role: Role::Linted,
            lines: LineTable::default(),
        }
    }

    pub fn from_text(path: String, text: String) -> Self {
        let text: Arc<str> = Arc::from(text);
        let parsed = compat::parse_shared(&text, Budget::default());
        // A template is not YAML until rendered: one that fails to parse is not broken YAML, and
        // one that parses (`replicas: {{.Replicas}}` reads as a mapping) holds no object that is
        // applied as written.
        let template = match compat::syntax_error(&parsed) {
            Some(_) => compat::template_markers(&text)
                .or_else(|| compat::placeholder_markers(&text))
                .or_else(|| {
                    // Shell notes saved as YAML: a heredoc command the reader runs by hand.
                    super::pages::shell_heredoc(&text).map(|r| compat::TemplateHint {
                        kind: "shell commands",
                        marker: crate::text::shorten(&text[r.clone()], 60).to_string(),
                        span: Span::new(r.start, r.end),
                    })
                })
                // EC2 user data in MIME multipart form (a nodeadm `NodeConfig` part, a shell part):
                // read by the instance, never applied to the cluster.
                .or_else(|| {
                    crate::text::mime_header(&text).map(|r| compat::TemplateHint {
                        kind: "MIME multipart user data",
                        marker: text[r.clone()].to_string(),
                        span: Span::new(r.start, r.end),
                    })
                }),
            // An ApplicationSet is applied as written: its `{{ … }}` (`path: $values/{{ .path }}`)
            // are Argo CD's own, filled in by its controller, unless Helm's are there too.
            None if parsed.docs.iter().any(|d| is_applicationset(d.root()))
                && !HELM_VALUES.iter().any(|w| text.contains(w)) =>
            {
                None
            }
            None => compat::structural_template_markers(&text)
                .or_else(|| compat::step_functions_parameters(&text)),
        };
        if let Some(t) = template {
            let skipped = Skipped {
                reason: t.kind.to_string(),
                marker: t.marker,
                span: t.span,
                hint: None,
            };
            return Self::skipped_whole(path, text, skipped);
        }
        Self::of_parsed(path, text, parsed)
    }

    /// A file not read as YAML at all, and why.
    pub(super) fn skipped_whole(path: String, text: Arc<str>, skipped: Skipped) -> Self {
        SourceFile {
            path,
            text,
            docs: Vec::new(),
            problems: Vec::new(),
            skipped: Some(skipped),
            role: Role::Linted,
            lines: LineTable::default(),
        }
    }

    pub(super) fn unreadable(path: String, message: String) -> Self {
        SourceFile {
            path,
            text: "".into(),
            docs: Vec::new(),
            problems: vec![Problem {
                span: Span::at(0),
                message,
                first: None,
                kind: crate::yaml::ProblemKind::Content,
            }],
            skipped: None,
            role: Role::Linted,
            lines: LineTable::default(),
        }
    }
}

/// What a walk found: YAML files (and `Kustomization` files, which have no extension), and the
/// chart directories it did not enter.
#[derive(Debug, Default)]
pub struct Walked {
    pub files: Vec<PathBuf>,
    pub charts: Vec<PathBuf>,
    pub problems: Vec<IoProblem>,
}

/// A problem with the file system met while discovering or reading (exit code 2).
#[derive(Debug, Clone)]
pub struct IoProblem {
    pub path: String,
    pub message: String,
}

/// How discovery treats what it meets.
pub struct Discovery<'a> {
    pub exclude: Option<&'a GlobSet>,
    /// Directory the exclude globs are relative to.
    pub exclude_root: Option<&'a Path>,
}

/// Whether discovery reads a file of this name: YAML, `Kustomization`, Terraform, and templates
/// that render YAML.
fn wanted(p: &Path) -> bool {
    is_yaml(p)
        || is_quadlet(p)
        || p.file_name().is_some_and(|n| n == "Kustomization")
        || super::terraform::is_terraform(p)
        || super::paths::is_yaml_template(p)
        || super::pages::is_page(p)
}

/// A Podman Quadlet `.kube` unit: read only for the YAML it hands to `podman kube play`.
pub(super) fn is_quadlet(p: &Path) -> bool {
    p.extension().and_then(|e| e.to_str()) == Some("kube")
}

pub(super) fn is_yaml(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "YAML" | "YML")
    )
}

/// Path shown in reports: relative to the working directory when under it, without `./`; the
/// working directory itself is `.` (an empty label read as a missing path).
pub fn display_path(p: &Path) -> String {
    // Read once: the process never changes directory, and this runs for every file.
    static CWD: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let cwd = CWD.get_or_init(|| std::env::current_dir().ok());
    let rel = match (cwd, p.is_absolute()) {
        (Some(cwd), true) => p.strip_prefix(cwd).unwrap_or(p),
        _ => p,
    };
    let s = rel.to_string_lossy().replace('\\', "/");
    let mut s = s.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    if s.is_empty() {
        return ".".into();
    }
    s.to_string()
}

impl Discovery<'_> {
    /// Files under `root` that git tracks but the walk skipped because `.gitignore` lists them
    /// (git and Argo CD use them all the same), but for those in chart directories.
    fn tracked_but_ignored(
        &self,
        root: &Path,
        walked: &[PathBuf],
        charts: &[PathBuf],
    ) -> Vec<PathBuf> {
        let tracked = super::git::tracked_under(root);
        if tracked.is_empty() {
            return tracked;
        }
        let walked: std::collections::HashSet<&PathBuf> = walked.iter().collect();
        let in_chart = |p: &Path| {
            charts.iter().any(|c| p.starts_with(c.join("templates")))
                || chart_owned(p)
                || p.ancestors()
                    .skip(1)
                    .take_while(|d| d.starts_with(root) && *d != root)
                    .any(chart_part)
        };
        tracked
            .into_iter()
            .filter(|p| {
                !walked.contains(p) && wanted(p) && !self.excluded(p) && p.is_file() && !in_chart(p)
            })
            .collect()
    }

    fn excluded(&self, path: &Path) -> bool {
        let Some(set) = self.exclude else {
            return false;
        };
        if set.is_match(path) {
            return true;
        }
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(root) = self.exclude_root {
            let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
            if let Ok(rel) = abs.strip_prefix(&root) {
                return set.is_match(rel);
            }
        }
        false
    }

    /// Walks the given roots: .gitignore honoured in a git checkout, `.git` and Helm
    /// chart directories skipped, YAML files only (a file named explicitly is always taken).
    pub fn walk(&self, roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<IoProblem>) {
        let w = self.walk_sources(roots);
        let files = w
            .files
            .into_iter()
            .filter(|f| f.file_name().is_none_or(|n| n != "Kustomization"))
            .collect();
        (files, w.problems)
    }

    /// Like [`Discovery::walk`], and also lists the chart directories it did not enter and
    /// `Kustomization` files, for `sources` to render.
    pub fn walk_sources(&self, roots: &[PathBuf]) -> Walked {
        let mut files = Vec::new();
        let mut problems = Vec::new();
        let charts = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for root in roots {
            let meta = match std::fs::metadata(root) {
                Ok(m) => m,
                Err(e) => {
                    problems.push(IoProblem {
                        path: display_path(root),
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            if meta.is_file() {
                files.push(root.clone());
                continue;
            }
            if root.join("Chart.yaml").is_file()
                && let Ok(mut c) = charts.lock()
            {
                c.push(root.clone());
            }
            let found_charts = std::sync::Arc::clone(&charts);
            // `.gitignore` only inside a git checkout, as git reads it: a tree without `.git` (an
            // export, an archive) holds what was committed, ignored or not.
            let walker = ignore::WalkBuilder::new(root)
                .hidden(false)
                .require_git(true)
                .follow_links(true)
                .threads(rayon::current_num_threads())
                .filter_entry(move |e| {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    if !is_dir {
                        return true;
                    }
                    // Git's own, and what tools cache or build beside the sources (a committed
                    // `.cache` of vendored manifests, Terraform's downloaded modules, a Jekyll
                    // site's `_site` build): copies of what lies elsewhere, not what this
                    // repository applies.
                    if matches!(
                        e.file_name().to_str(),
                        Some(
                            ".git" | ".cache" | ".build" | ".terraform" | "node_modules" | "_site"
                        )
                    ) {
                        return false;
                    }
                    // Helm templates are not YAML until rendered; what else a chart's
                    // directory holds (examples, other charts) Helm does not render: walked.
                    if e.path().join("Chart.yaml").exists()
                        && let Ok(mut c) = found_charts.lock()
                    {
                        c.push(e.path().to_path_buf());
                    }
                    !chart_part(e.path())
                })
                .build_parallel();
            // A walk is thousands of directory reads and stats: on every core, as parsing is.
            // What each thread finds is sorted below, so the order of the walk does not show.
            let found = std::sync::Mutex::new((Vec::new(), Vec::new()));
            walker.run(|| {
                let found = &found;
                Box::new(move |entry| {
                    let mut keep = None;
                    let mut problem = None;
                    match entry {
                        Ok(e) => {
                            let is_file = e.file_type().is_some_and(|t| t.is_file());
                            // A chart's own files (`values.yaml`) are read with the chart.
                            if is_file
                                && wanted(e.path())
                                && !self.excluded(e.path())
                                && !chart_owned(e.path())
                            {
                                keep = Some(e.into_path());
                            }
                        }
                        Err(err) => {
                            problem = Some(IoProblem {
                                path: display_path(root),
                                message: super::paths::walk_problem(&err),
                            });
                        }
                    }
                    if (keep.is_some() || problem.is_some())
                        && let Ok(mut f) = found.lock()
                    {
                        f.0.extend(keep);
                        f.1.extend(problem);
                    }
                    ignore::WalkState::Continue
                })
            });
            let (mut these, mut troubles) = found.into_inner().unwrap_or_default();
            let charts_now = charts.lock().map(|c| c.clone()).unwrap_or_default();
            these.extend(self.tracked_but_ignored(root, &these, &charts_now));
            // A chart's `crds/` is plain YAML that Helm installs as it is: read even where the
            // chart itself is not rendered.
            // Its `Chart.yaml` names the release of a controller the chart installs.
            for c in &charts_now {
                these.extend(
                    super::helm::chart_crds(c)
                        .into_iter()
                        .filter(|p| !self.excluded(p)),
                );
                these.extend(Some(c.join("Chart.yaml")).filter(|p| !self.excluded(p)));
            }
            files.append(&mut these);
            troubles.sort_by(|a, b| a.message.cmp(&b.message));
            // The walker can meet one broken entry twice (as a directory entry, then as the
            // link it follows): one warning.
            troubles.dedup_by(|a, b| a.message == b.message);
            problems.append(&mut troubles);
        }
        files.sort();
        files.dedup();
        let mut charts = charts.lock().map(|c| c.clone()).unwrap_or_default();
        charts.retain(|c| !self.excluded(c));
        charts.sort();
        charts.dedup();
        Walked {
            files,
            charts,
            problems,
        }
    }
}

/// Whether a directory is the part of a chart Helm renders or installs as it is: its
/// `templates/`, its subcharts' `charts/`, its `crds/` (read on their own).
fn chart_part(dir: &Path) -> bool {
    matches!(
        dir.file_name().and_then(|n| n.to_str()),
        Some("templates" | "charts" | "crds")
    ) && dir.parent().is_some_and(|c| c.join("Chart.yaml").is_file())
}

/// Whether a file is one of a chart's own, beside its `Chart.yaml`: values files, the lock and
/// Helm 2's requirements. Other manifests there are no part of what Helm renders (it renders
/// `templates/`): plain files a user applies, read as any other.
fn chart_owned(file: &Path) -> bool {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    (name.contains("values")
        || matches!(
            name.as_str(),
            "chart.yaml" | "chart.lock" | "requirements.yaml" | "requirements.lock"
        ))
        && file
            .parent()
            .is_some_and(|c| c.join("Chart.yaml").is_file())
}

/// Whether a file is the output of a kustomization build or a chart render (named
/// `<source> (kustomize build…)` or `<source> (helm template…)` where the builds are added).
pub fn is_build_output(path: &str) -> bool {
    path.ends_with(')') && (path.contains(" (kustomize build") || path.contains(" (helm template"))
}

/// Turns raw bytes into a parsed file; binary or non-UTF-8 content is a located problem.
pub fn from_bytes(path: String, bytes: Vec<u8>) -> SourceFile {
    // UTF-16 with its byte order mark, which YAML allows (an editor's "Unicode" save): read as
    // the text it is; positions are then those of that text.
    if let Some(text) = crate::text::utf16(&bytes) {
        return SourceFile::from_text(path, text);
    }
    // Encrypted in the repository: text only once the key holder decrypts it.
    if let Some(tool) = crate::text::encrypted_by(&bytes) {
        let skipped = Skipped {
            reason: "encrypted file".into(),
            span: Span::at(0),
            marker: tool.into(),
            hint: Some("decrypt it and lint the output via stdin".into()),
        };
        return SourceFile::skipped_whole(path, "".into(), skipped);
    }
    if bytes.contains(&0) {
        return SourceFile::unreadable(path, "binary content (NUL byte); not linted".into());
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with('\u{feff}') {
                text.drain(..3);
            }
            SourceFile::from_text(path, text)
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let valid = &e.as_bytes()[..at];
            let line = valid.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
            let col = valid.iter().rev().take_while(|&&b| b != b'\n').count() as u32 + 1;
            // The valid prefix is the same bytes in the lossy text, so the offset stands.
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            SourceFile {
                path,
                text: text.into(),
                docs: Vec::new(),
                problems: vec![Problem {
                    span: Span::at(at),
                    message: format!(
                        "not UTF-8 text (invalid byte at line {line}, column {col}); not linted"
                    ),
                    first: None,
                    kind: crate::yaml::ProblemKind::Content,
                }],
                skipped: None,
                role: Role::Linted,
                lines: LineTable::default(),
            }
        }
    }
}
