//! `--changed FILE…`: the whole repository is linted (cross-object rules need every NodePool, queue
//! and flavor in view) but only findings in the changed files are reported, as pre-commit wants.

use crate::diag::Diagnostic;
use crate::source::SourceFile;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The changed files, normalised so `./a.yaml`, `a.yaml`, `sub/../a.yaml` and an absolute path of
/// the same file (through symbolic links too) compare equal.
#[derive(Debug, Default)]
pub struct ChangedFiles {
    keys: HashSet<PathBuf>,
}

impl ChangedFiles {
    pub fn new(paths: &[PathBuf]) -> Self {
        ChangedFiles {
            keys: paths.iter().map(|p| key(p)).collect(),
        }
    }

    /// Whether a loaded file (by its display path) is one of the changed files.
    pub fn contains(&self, display_path: &str) -> bool {
        !self.keys.is_empty() && self.keys.contains(&key(Path::new(display_path)))
    }

    /// Keeps the findings located in a changed file, or whose related location is in one (a pod
    /// in an untouched file that no longer tolerates the taint a changed NodePool added).
    pub fn retain(&self, diags: &mut Vec<Diagnostic>, files: &[SourceFile]) {
        let mut memo: Vec<Option<bool>> = vec![None; files.len()];
        let mut changed = |file: usize| -> bool {
            match memo.get(file).copied().flatten() {
                Some(v) => v,
                None => {
                    let v = files.get(file).is_some_and(|f| self.contains(&f.path));
                    if let Some(m) = memo.get_mut(file) {
                        *m = Some(v);
                    }
                    v
                }
            }
        };
        diags.retain(|d| changed(d.loc.file) || d.related.iter().any(|r| changed(r.loc.file)));
    }
}

/// The real path when the file exists, else the absolute path with `.` and `..` resolved by hand
/// (a file deleted in the change still names a place).
fn key(p: &Path) -> PathBuf {
    if let Ok(real) = p.canonicalize() {
        return real;
    }
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_path_compare_equal() {
        let c = ChangedFiles::new(&[PathBuf::from("./x/../nowhere/a.yaml")]);
        assert!(c.contains("nowhere/a.yaml"));
        assert!(!c.contains("nowhere/b.yaml"));
        let abs = std::env::current_dir().unwrap().join("nowhere/a.yaml");
        assert!(c.contains(&abs.to_string_lossy()));
    }
}
