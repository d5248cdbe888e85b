//! The files and directories an install script or module applies besides the release: the
//! objects under them run on the release it installs, wherever they lie.

use super::super::Index;

/// At most this many paths are taken from one file.
const MAX_PATHS: usize = 64;

/// Directories of the index's files that `text` (of the file at `path`) names by a relative
/// path: `../../../manifests/kueue` (a Terraform variable's default), `file://../artifacts/pool.yaml`,
/// `kubectl apply -f ./queues/`. A path is taken relative to the file's directory, then to the
/// repository's root; a file stands for its directory. Each is borrowed from an index file's path.
pub(super) fn referenced_dirs<'a>(ix: &Index<'a>, path: &str, text: &str) -> Vec<&'a str> {
    let base = path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out: Vec<&'a str> = Vec::new();
    let words = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')))
        // `file://../x.yaml`: the path after the scheme; a URL's host then leads to no file.
        .map(|w| w.trim_start_matches('/'))
        .filter(|w| {
            w.starts_with("./")
                || w.starts_with("../")
                || (w.contains('/') && (w.ends_with(".yaml") || w.ends_with(".yml")))
        });
    for written in words.take(MAX_PATHS) {
        let written = written.trim_end_matches('/');
        for from in [base, ""] {
            let Some(p) = join(from, written) else {
                continue;
            };
            if let Some(dir) = dir_of(ix, &p)
                && !out.contains(&dir)
            {
                out.push(dir);
                break;
            }
        }
    }
    out
}

/// `base/rel` with `.` and `..` resolved; `None` when it leaves the repository.
fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The directory `p` names among the index's files (itself, or a file's), borrowed from one of
/// their paths; never the repository's root.
fn dir_of<'a>(ix: &Index<'a>, p: &str) -> Option<&'a str> {
    if p.is_empty() {
        return None;
    }
    ix.files.iter().find_map(|f| {
        let fp: &'a str = f.path.as_str();
        if fp == p {
            fp.rsplit_once('/').map(|(d, _)| d)
        } else {
            fp.strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('/'))
                .then(|| &fp[..p.len()])
        }
    })
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn joined_within_the_repository() {
        assert_eq!(
            join("lab/terraform/modules/kueue", "../../../manifests/kueue").as_deref(),
            Some("lab/manifests/kueue")
        );
        assert_eq!(join("a", "./b/c.yaml").as_deref(), Some("a/b/c.yaml"));
        assert_eq!(join("a", "../../x"), None);
    }
}
