//! The files a git checkout tracks, read from its index: git and Argo CD use every tracked file
//! whatever `.gitignore` says, so a tracked file the walk skipped as ignored is linted too.
//!
//! Only `.git/index` is read (versions 2 to 4, SHA-1 or SHA-256 object names); git itself never
//! runs, so nothing configured in the repository (hooks, fsmonitor) is executed.

use std::path::{Path, PathBuf};

/// Indexes larger than this are not read (a checkout of millions of files): the walk alone
/// decides then.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The tracked regular files under `root` (a directory), as `root` joined with their path below
/// it; empty outside a git checkout or when the index cannot be read.
pub fn tracked_under(root: &Path) -> Vec<PathBuf> {
    let Ok(abs) = std::path::absolute(root) else {
        return Vec::new();
    };
    let Some((top, git_dir)) = checkout_of(&abs) else {
        return Vec::new();
    };
    let Ok(below) = abs.strip_prefix(&top) else {
        return Vec::new();
    };
    let prefix = below.to_string_lossy().replace('\\', "/");
    let Some(paths) = read_index(&git_dir) else {
        return Vec::new();
    };
    paths
        .into_iter()
        .filter_map(|p| {
            let rel = if prefix.is_empty() {
                p.as_str()
            } else {
                p.strip_prefix(prefix.as_str())?.strip_prefix('/')?
            };
            Some(root.join(rel))
        })
        .collect()
}

/// The work tree top and git directory of the checkout `dir` is in.
fn checkout_of(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        let meta = std::fs::symlink_metadata(&dot_git).ok()?;
        if meta.is_dir() {
            return Some((d.to_path_buf(), dot_git));
        }
        if meta.is_file() {
            // A linked worktree or a submodule: `gitdir: <path>`.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            return Some((d.to_path_buf(), d.join(target)));
        }
    }
    None
}

/// Paths of the regular files (and executables) the index lists, `/`-separated.
fn read_index(git_dir: &Path) -> Option<Vec<String>> {
    let path = git_dir.join("index");
    if std::fs::metadata(&path).ok()?.len() > MAX_INDEX_BYTES {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    let sha256 = read_config(git_dir)
        .is_some_and(|c| c.to_ascii_lowercase().contains("objectformat = sha256"));
    parse_index(&bytes, if sha256 { 32 } else { 20 })
}

fn read_config(git_dir: &Path) -> Option<String> {
    std::fs::read_to_string(git_dir.join("config"))
        .ok()
        .or_else(|| {
            // A linked worktree keeps its config in the common directory.
            let common = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
            std::fs::read_to_string(git_dir.join(common.trim()).join("config")).ok()
        })
}

/// The URLs of the remotes of the git checkout `root` is in (`url =` under `[remote "…"]` in
/// its config); empty outside a checkout.
pub fn remote_urls(root: &Path) -> Vec<String> {
    let Ok(abs) = std::path::absolute(root) else {
        return Vec::new();
    };
    let Some((_, git_dir)) = checkout_of(&abs) else {
        return Vec::new();
    };
    read_config(&git_dir).map_or_else(Vec::new, |c| parse_remote_urls(&c))
}

fn parse_remote_urls(config: &str) -> Vec<String> {
    let mut in_remote = false;
    let mut out = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[') {
            in_remote = section
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("remote");
            continue;
        }
        if !in_remote {
            continue;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            let value = value.trim().trim_matches('"').trim();
            if !value.is_empty() {
                out.push(value.to_string());
            }
        }
    }
    out
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Entries of an index file; `None` when it is not one this reader knows.
fn parse_index(b: &[u8], id_len: usize) -> Option<Vec<String>> {
    if b.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(b, 8)? as usize;
    // Each entry takes at least 62 bytes: a count beyond that is a corrupt file.
    if count > b.len() / 62 {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(b, at + 24)?;
        let flags_at = at + 40 + id_len;
        let flags = u16::from_be_bytes(b.get(flags_at..flags_at + 2)?.try_into().ok()?);
        at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        let name: Vec<u8> = if version == 4 {
            let (strip, used) = varint(b.get(at..)?)?;
            at += used;
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&b[at..end]);
            at = end + 1;
            name
        } else {
            let end = at + b.get(at..)?.iter().position(|&c| c == 0)?;
            let name = b[at..end].to_vec();
            // NUL padding to a multiple of 8 bytes from the entry's start (at least one).
            let len = end - start;
            at = start + (len + 8) / 8 * 8;
            name
        };
        // Regular files only: not symlinks (0o120000), submodules (0o160000) or the directory
        // entries of a sparse index.
        if mode & 0o170000 == 0o100000
            && let Ok(s) = std::str::from_utf8(&name)
        {
            out.push(s.to_string());
        }
        previous = name;
    }
    Some(out)
}

/// Git's offset varint: 7 bits a byte, high bit set when more follow, each continuation adding
/// one before shifting.
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.first()?;
    let mut v = (c & 0x7f) as usize;
    while c & 0x80 != 0 {
        i += 1;
        c = *b.get(i)?;
        v = v.checked_add(1)?.checked_shl(7)? | (c & 0x7f) as usize;
    }
    Some((v, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_are_read_from_every_remote_section() {
        let config = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/gitops.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\turl = not-a-remote\n[remote \"fork\"]\n\turl = \"https://github.com/me/gitops\"\n";
        assert_eq!(
            parse_remote_urls(config),
            [
                "git@github.com:acme/gitops.git",
                "https://github.com/me/gitops"
            ]
        );
    }

    /// An index of version 2 or 4 listing `paths` (sorted), all regular files.
    fn index(version: u32, paths: &[&str]) -> Vec<u8> {
        let mut b = b"DIRC".to_vec();
        b.extend(version.to_be_bytes());
        b.extend((paths.len() as u32).to_be_bytes());
        let mut previous = "";
        for p in paths {
            let start = b.len();
            b.extend([0u8; 24]);
            b.extend(0o100644u32.to_be_bytes());
            b.extend([0u8; 12]);
            b.extend([0xabu8; 20]);
            b.extend((p.len().min(0xfff) as u16).to_be_bytes());
            if version == 4 {
                let common = previous
                    .bytes()
                    .zip(p.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                let strip = previous.len() - common;
                assert!(strip < 128);
                b.push(strip as u8);
                b.extend(&p.as_bytes()[common..]);
                b.push(0);
            } else {
                b.extend(p.as_bytes());
                let len = b.len() - start;
                b.extend(std::iter::repeat_n(0u8, (len + 8) / 8 * 8 - len));
            }
            previous = p;
        }
        b
    }

    #[test]
    fn reads_versions_2_and_4() {
        let paths = ["apps/a.yaml", "apps/b.yaml", "nodepools/gpu.yaml"];
        for v in [2, 4] {
            assert_eq!(parse_index(&index(v, &paths), 20).unwrap(), paths, "v{v}");
        }
    }

    #[test]
    fn garbage_is_not_an_index() {
        assert!(parse_index(b"DIRC\0\0\0\x02\xff\xff\xff\xff", 20).is_none());
        assert!(parse_index(b"not an index", 20).is_none());
        let mut cut = index(2, &["apps/a.yaml", "apps/b.yaml"]);
        cut.truncate(cut.len() - 10);
        assert!(parse_index(&cut, 20).is_none());
    }

    #[test]
    fn varints_as_git_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        // 128 is written 0x80 0x00.
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
