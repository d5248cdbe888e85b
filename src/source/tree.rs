//! Kustomizations as a graph: what each one reads (resources, bases, components, patches,
//! generator inputs), which directories it builds through, and which are only reached through
//! others (bases).

use crate::source::SourceFile;
use crate::yaml::{Node, Span};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Component, Path, PathBuf};

/// File names kustomize looks for, in its order of preference.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether a file is a kustomization by its name.
pub fn is_kustomization_file(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILE_NAMES.contains(&n))
}

/// Whether a file named like a kustomization is a Flux `Kustomization` object
/// (`kustomize.toolkit.fluxcd.io`): an object Flux applies, not a kustomize configuration.
pub fn is_flux_kustomization(p: &Path) -> bool {
    std::fs::read(p).is_ok_and(|b| {
        b.split(|&c| c == b'\n').any(|line| {
            line.strip_prefix(b"apiVersion:")
                .is_some_and(|v| v.trim_ascii().starts_with(b"kustomize.toolkit.fluxcd.io/"))
        })
    })
}

/// The kustomization file of a directory, if it has one.
pub fn kustomization_in(dir: &Path) -> Option<PathBuf> {
    FILE_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// `a/b/../c` → `a/c` without touching the file system (kustomize resolves paths the same way).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The identity of a file or directory: canonical when it exists, else absolute and normalized.
pub fn identity(p: &Path) -> PathBuf {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| normalize(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())))
}

/// [`identity`] of many files, in order.
pub fn identities(paths: &[PathBuf]) -> Vec<PathBuf> {
    use rayon::prelude::*;
    let canonical = canonicalize_all(paths);
    paths
        .par_iter()
        .zip(canonical)
        .map(|(p, c)| c.unwrap_or_else(|| identity(p)))
        .collect()
}

/// `std::fs::canonicalize` of many paths, in order (`None` where it fails). Resolving a path
/// costs a system call per component; a repository's files share few directories, so each
/// directory is resolved once, and a file that is not a symlink is its directory's resolved
/// path joined with its name.
pub fn canonicalize_all<P: AsRef<Path> + Sync>(paths: &[P]) -> Vec<Option<PathBuf>> {
    use rayon::prelude::*;
    let mut dirs: Vec<&Path> = paths.iter().filter_map(|p| p.as_ref().parent()).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let resolved: std::collections::HashMap<&Path, PathBuf> = dirs
        .par_iter()
        .filter_map(|d| {
            let d: &Path = d;
            let dir = if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            };
            Some((d, std::fs::canonicalize(dir).ok()?))
        })
        .collect();
    paths
        .par_iter()
        .map(|p| {
            let p = p.as_ref();
            let plain = std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink());
            match (p.parent().and_then(|d| resolved.get(d)), p.file_name()) {
                (Some(dir), Some(name)) if plain => Some(dir.join(name)),
                _ => std::fs::canonicalize(p).ok(),
            }
        })
        .collect()
}

/// What a kustomization entry points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A directory with a kustomization file (the file's identity).
    Kustomization(PathBuf),
    File(PathBuf),
    /// A URL or remote git base: never fetched.
    Remote,
    /// Nothing there (kustomize will fail, and say so).
    Missing(PathBuf),
    /// A directory without a kustomization file.
    Dir(PathBuf),
}

/// One path-valued entry of a kustomization.
#[derive(Clone, Debug)]
pub struct Ref {
    /// The field it is in: `resources`, `patches`, `configMapGenerator`…
    pub field: &'static str,
    pub raw: String,
    pub span: Span,
    pub target: Target,
}

/// A parsed kustomization file.
#[derive(Debug)]
pub struct Kustomization {
    /// Identity of the file.
    pub path: PathBuf,
    /// Identity of its directory.
    pub dir: PathBuf,
    pub file: SourceFile,
    /// `kind: Component`: only ever built through another kustomization.
    pub component: bool,
    pub refs: Vec<Ref>,
    /// Uses `helmCharts` (needs `--enable-helm`, which gpuops never sets), with the node.
    pub helm_charts: Option<Span>,
    /// Its resource that is a template filled in before the build, found once: the ref's index
    /// and the template's marker (see `kustomize::inputs::template_resource`).
    pub template: std::sync::OnceLock<Option<(usize, String)>>,
}

impl Kustomization {
    pub fn root(&self) -> Option<Node<'_>> {
        self.file.docs.first().map(|d| d.root())
    }

    /// Kustomizations this one builds through (resources, bases, components).
    pub fn children(&self) -> impl Iterator<Item = &PathBuf> {
        self.refs.iter().filter_map(|r| match &r.target {
            Target::Kustomization(k) => Some(k),
            _ => None,
        })
    }
}

/// Whether an entry names something kustomize would download.
fn is_remote(raw: &str, local_exists: bool) -> bool {
    if raw.contains("://") || raw.starts_with("git@") || raw.contains("?ref=") {
        return true;
    }
    if local_exists {
        return false;
    }
    // `github.com/org/repo/path`: a host name as the first segment.
    let first = raw.split('/').next().unwrap_or("");
    let tld = first.rsplit('.').next().unwrap_or("");
    raw.contains('/')
        && first.contains('.')
        && tld.len() >= 2
        && tld.bytes().all(|b| b.is_ascii_alphabetic())
        && !matches!(tld, "yaml" | "yml" | "json")
}

/// Whether a string entry is an inline document rather than a path (patchesStrategicMerge,
/// transformers and generators accept both).
fn is_inline(raw: &str) -> bool {
    raw.contains('\n') || raw.trim_start().starts_with("apiVersion:")
}

fn resolve(dir: &Path, field: &'static str, raw: &str, span: Span, dirs_allowed: bool) -> Ref {
    let joined = normalize(&dir.join(raw));
    let target = if is_remote(raw, joined.exists()) {
        Target::Remote
    } else if joined.is_dir() {
        match kustomization_in(&joined) {
            Some(k) if dirs_allowed => Target::Kustomization(identity(&k)),
            _ => Target::Dir(identity(&joined)),
        }
    } else if joined.is_file() {
        Target::File(identity(&joined))
    } else {
        Target::Missing(joined)
    };
    Ref {
        field,
        raw: raw.to_string(),
        span,
        target,
    }
}

/// Reads the path-valued entries of a kustomization.
fn refs_of(dir: &Path, root: Node<'_>) -> Vec<Ref> {
    let mut out = Vec::new();
    let mut generated = Vec::new();
    let mut push = |field: &'static str, n: Node<'_>, dirs: bool| {
        if let Some(raw) = n.as_str().map(str::trim).filter(|s| !s.is_empty())
            && !is_inline(raw)
        {
            out.push(resolve(dir, field, raw, n.span(), dirs));
        }
    };
    for field in ["resources", "bases", "components"] {
        for item in root.get(field).into_iter().flat_map(Node::items) {
            push(field, item, true);
        }
    }
    for field in [
        "patchesStrategicMerge",
        "crds",
        "configurations",
        "transformers",
        "generators",
        "validators",
    ] {
        for item in root.get(field).into_iter().flat_map(Node::items) {
            push(field, item, matches!(field, "transformers" | "generators"));
        }
    }
    for field in ["patches", "patchesJson6902", "replacements"] {
        for item in root.get(field).into_iter().flat_map(Node::items) {
            if let Some(p) = item.get("path") {
                push(field, p, false);
            }
        }
    }
    if let Some(p) = root.at(&["openapi", "path"]) {
        push("openapi", p, false);
    }
    for field in ["configMapGenerator", "secretGenerator"] {
        for item in root.get(field).into_iter().flat_map(Node::items) {
            for list in ["files", "envs"] {
                for f in item.get(list).into_iter().flat_map(Node::items) {
                    // `key=path` names the data key; the file is after `=`.
                    if let Some(s) = f.as_str() {
                        let path = s.split_once('=').map_or(s, |(_, p)| p);
                        if !path.trim().is_empty() {
                            generated.push(resolve(dir, field, path.trim(), f.span(), false));
                        }
                    }
                }
            }
            if let Some(e) = item.get("env") {
                push(field, e, false);
            }
        }
    }
    out.extend(generated);
    out
}

/// Every kustomization reached from the discovered ones, by identity.
#[derive(Debug, Default)]
pub struct Forest {
    pub by_path: BTreeMap<PathBuf, Kustomization>,
}

impl Forest {
    /// Loads the given kustomization files and, transitively, every kustomization they build
    /// through (also outside the linted paths: kustomize reads them too).
    pub fn load(files: &[PathBuf]) -> Self {
        let mut forest = Forest::default();
        forest.add(files);
        forest
    }

    /// Adds the given kustomization files and what they build through, when not there yet.
    pub fn add(&mut self, files: &[PathBuf]) {
        let mut queue: VecDeque<PathBuf> = files.iter().map(|f| identity(f)).collect();
        while let Some(path) = queue.pop_front() {
            if self.by_path.contains_key(&path) {
                continue;
            }
            let Some(k) = load_one(&path) else { continue };
            queue.extend(k.children().cloned());
            self.by_path.insert(path, k);
        }
    }

    pub fn get(&self, path: &Path) -> Option<&Kustomization> {
        self.by_path.get(path)
    }

    /// The kustomizations a build of `top` reads, outer first (breadth-first), each once.
    pub fn chain(&self, top: &Path) -> Vec<&Kustomization> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut queue = VecDeque::from([top.to_path_buf()]);
        while let Some(p) = queue.pop_front() {
            if !seen.insert(p.clone()) {
                continue;
            }
            if let Some(k) = self.by_path.get(&p) {
                queue.extend(k.children().cloned());
                out.push(k);
            }
        }
        out
    }

    /// Files (not directories) a build of `top` reads: its kustomization files and every file
    /// they name.
    pub fn files_read(&self, top: &Path) -> BTreeSet<PathBuf> {
        let mut out = BTreeSet::new();
        for k in self.chain(top) {
            out.insert(k.path.clone());
            for r in &k.refs {
                if let Target::File(f) = &r.target {
                    out.insert(f.clone());
                }
            }
        }
        out
    }

    /// The kustomizations to build: those of `discovered` no other kustomization builds through
    /// (all of them with `lint_bases`), components excepted.
    pub fn tops(&self, discovered: &BTreeSet<PathBuf>, lint_bases: bool) -> Vec<PathBuf> {
        let referrers = self.referrers();
        let buildable = |k: &PathBuf| self.get(k).is_some_and(|k| !k.component);
        let mut tops: Vec<PathBuf> = discovered
            .iter()
            .filter(|k| buildable(k) && (lint_bases || !referrers.contains_key(*k)))
            .cloned()
            .collect();
        // A kustomization only reached through a cycle would never be built: build it itself
        // (kustomize then reports the cycle).
        let mut reached: BTreeSet<PathBuf> = tops
            .iter()
            .flat_map(|t| self.chain(t).into_iter().map(|k| k.path.clone()))
            .collect();
        for k in discovered {
            if !reached.contains(k) && buildable(k) {
                tops.push(k.clone());
                reached.extend(self.chain(k).into_iter().map(|k| k.path.clone()));
            }
        }
        tops
    }

    /// What building `discovered` claims: the files the builds read, and the directories of
    /// every kustomization involved.
    pub fn claims(&self, discovered: &BTreeSet<PathBuf>) -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>) {
        let mut files = BTreeSet::new();
        let mut dirs = BTreeSet::new();
        for k in discovered {
            files.extend(self.files_read(k));
            dirs.extend(self.chain(k).into_iter().map(|k| k.dir.clone()));
        }
        (files, dirs)
    }

    /// The files and directories (identities) a kustomization lists only in a comment
    /// (`# - ./kyverno/ks.yaml`): turned off by its author, with the kustomization as shown.
    pub fn commented_out(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        for k in self.by_path.values() {
            for line in k.file.text.lines() {
                let Some(entry) = line.trim_start().strip_prefix('#') else {
                    continue;
                };
                let Some(target) = entry.trim_start().strip_prefix("- ") else {
                    continue;
                };
                let target = target.trim().trim_matches(['"', '\'']);
                let local = target.starts_with("./") || target.starts_with("../");
                let yaml = target.ends_with(".yaml") || target.ends_with(".yml");
                if (local || yaml) && !target.contains(' ') && !target.contains("://") {
                    let id = identity(&k.dir.join(target));
                    // `# - ../` turns off no tree the kustomization itself lies in.
                    if !k.dir.starts_with(&id) {
                        out.push((id, k.file.path.clone()));
                    }
                }
            }
        }
        out
    }

    /// Kustomizations that another one builds through, with who does.
    pub fn referrers(&self) -> BTreeMap<PathBuf, Vec<PathBuf>> {
        let mut m: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for k in self.by_path.values() {
            for c in k.children() {
                m.entry(c.clone()).or_default().push(k.path.clone());
            }
        }
        m
    }
}

fn load_one(path: &Path) -> Option<Kustomization> {
    let bytes = std::fs::read(path).ok()?;
    let file = crate::source::from_bytes(super::display_canonical(path), bytes);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let (refs, component, helm_charts) = match file.docs.first().map(|d| d.root()) {
        Some(root) => (
            refs_of(&dir, root),
            root.str_at(&["kind"]) == Some("Component"),
            // `helmChartInflationGenerator` is the older spelling of the same thing.
            root.entry("helmCharts")
                .or_else(|| root.entry("helmChartInflationGenerator"))
                .map(|(k, _)| k.span()),
        ),
        None => (Vec::new(), false, None),
    };
    Some(Kustomization {
        path: path.to_path_buf(),
        dir,
        file,
        component,
        refs,
        helm_charts,
        template: Default::default(),
    })
}

/// The path from `from` (a directory) to `to`, with `..` where needed. Both are identities.
pub fn relative(from: &Path, to: &Path) -> PathBuf {
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut (a directory resolved once, joined with the file's name) gives what
    /// resolving each path does: through a symlinked directory, for a symlinked file, for a
    /// missing file and for `..`.
    #[cfg(unix)]
    #[test]
    fn canonical_paths_in_bulk_are_those_one_by_one() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("real/sub/b.yaml"), "b: 1\n").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("real/sub/b.yaml"), root.join("real/c.yaml")).unwrap();
        let paths: Vec<PathBuf> = [
            "real/a.yaml",
            "link/a.yaml",
            "link/sub/b.yaml",
            "real/c.yaml",
            "real/sub/../a.yaml",
            "real/missing.yaml",
            "real/sub",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        let one_by_one: Vec<Option<PathBuf>> = paths
            .iter()
            .map(|p| std::fs::canonicalize(p).ok())
            .collect();
        assert_eq!(canonicalize_all(&paths), one_by_one);
        assert_eq!(
            identities(&paths),
            paths.iter().map(|p| identity(p)).collect::<Vec<_>>()
        );
        assert_eq!(
            one_by_one[3].as_deref(),
            Some(
                root.join("real/sub/b.yaml")
                    .canonicalize()
                    .unwrap()
                    .as_path()
            )
        );
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/tmp/x/w"), Path::new("/work/repo/o")),
            PathBuf::from("../../../work/repo/o")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c")),
            PathBuf::from("c")
        );
    }

    #[test]
    fn remote_entries() {
        assert!(is_remote("https://github.com/org/repo//path?ref=v1", false));
        assert!(is_remote("github.com/org/repo/path", false));
        assert!(is_remote("git@github.com:org/repo.git", false));
        assert!(!is_remote("../base", false));
        assert!(!is_remote("job.v1.yaml", false));
        assert!(!is_remote("dir.d/job.yaml", true));
        assert!(!is_remote("config.d/missing.yaml", false));
    }

    #[test]
    fn normalizes_parent_components() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
    }
}
