//! Hashes of what an output depends on: a file's content, a directory tree (names and content
//! of everything in it), and a program (its path, size and modification time: a new version
//! is a new file, and running it to ask its version would cost what the cache saves).

use super::{Hasher, Key};
use std::path::Path;

/// A tree holding more than this is not hashed (its builds are not cached): hashing it could
/// cost more than the build.
const MAX_TREE_FILES: usize = 20_000;
const MAX_TREE_BYTES: u64 = 256 << 20;

/// The hash of a file's content; `None` when it cannot be read.
pub fn file(path: &Path) -> Option<Key> {
    let bytes = std::fs::read(path).ok()?;
    Some(Hasher::new("file").bytes(&bytes).finish())
}

/// Adds a program's identity to `h`; `None` when it cannot be found.
pub fn program(h: &mut Hasher, path: &Path) -> Option<()> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    h.bytes(path.as_os_str().as_encoded_bytes())
        .u64(m.len())
        .u64(mtime.as_secs())
        .u64(mtime.subsec_nanos().into());
    Some(())
}

/// The hash of everything under `dir`: each entry's path relative to it, its kind and, for a
/// file (or a symlink to one), its content; a symlink also by its target. Symlinked directories
/// are not entered (kustomize refuses files outside a kustomization's directory anyway). `.git`
/// and the directories in `skip` (the cache itself) are left out. `None` when the tree cannot
/// be read or is over the limits.
pub fn tree(dir: &Path, skip: &[&Path]) -> Option<Key> {
    let mut h = Hasher::new("tree");
    let mut files = 0usize;
    let mut bytes = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .ok()?
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            if e.file_name() == ".git" || skip.iter().any(|s| path == *s) {
                continue;
            }
            files += 1;
            if files > MAX_TREE_FILES {
                return None;
            }
            let rel = path.strip_prefix(dir).ok()?;
            h.bytes(rel.as_os_str().as_encoded_bytes());
            let kind = e.file_type().ok()?;
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).ok()?;
                h.str("link").bytes(target.as_os_str().as_encoded_bytes());
                if !path.is_file() {
                    continue;
                }
            } else if kind.is_dir() {
                h.str("dir");
                stack.push(path);
                continue;
            }
            // Sized before it is read: a huge file ends the walk without filling memory.
            bytes += std::fs::metadata(&path).map_or(0, |m| m.len());
            if bytes > MAX_TREE_BYTES {
                return None;
            }
            match std::fs::read(&path) {
                Ok(content) => {
                    h.str("file").bytes(&content);
                }
                // A socket, a fifo, a file it may not read: kustomize cannot read it either.
                Err(_) => {
                    h.str("unreadable");
                }
            }
        }
        // Marks the end of a directory: moving a file up or down a level changes the hash.
        h.str("end");
    }
    Some(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_changes_with_any_file_in_it_and_not_with_what_is_left_out() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("cache")).unwrap();
        std::fs::write(root.join("a/b/x.yaml"), "x: 1\n").unwrap();
        let skip = root.join("cache");
        let first = tree(root, &[&skip]).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(root.join("cache/e"), "entry").unwrap();
        assert_eq!(tree(root, &[&skip]).unwrap(), first);
        std::fs::write(root.join("a/b/x.yaml"), "x: 2\n").unwrap();
        let changed = tree(root, &[&skip]).unwrap();
        assert_ne!(changed, first);
        std::fs::rename(root.join("a/b/x.yaml"), root.join("a/x.yaml")).unwrap();
        assert_ne!(tree(root, &[&skip]).unwrap(), changed);
        assert_eq!(tree(&root.join("missing"), &[]), None);
    }
}
