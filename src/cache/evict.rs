//! Keeping the cache bounded, and emptying it. Only this module's own files are touched: entries
//! (64 hex digits) and temporary files (their prefix).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How temporary files in the cache directory start.
pub(super) const TEMP_PREFIX: &str = ".gpuops-tmp-";

/// A temporary file this old was left by a run that was killed: no write takes so long.
const STALE_TEMP: Duration = Duration::from_secs(3600);

fn is_entry(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The cache's own files: (path, size, last used, is an entry).
fn own_files(dir: &Path) -> Vec<(PathBuf, u64, SystemTime, bool)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            let entry = is_entry(name);
            if !entry && !name.starts_with(TEMP_PREFIX) {
                return None;
            }
            let m = e.metadata().ok().filter(|m| m.is_file())?;
            let used = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            Some((e.path(), m.len(), used, entry))
        })
        .collect()
}

pub(super) fn evict(dir: &Path, max: u64) {
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for (path, len, used, entry) in own_files(dir) {
        if entry {
            entries.push((used, len, path));
        } else if now.duration_since(used).is_ok_and(|age| age > STALE_TEMP) {
            let _ = std::fs::remove_file(path);
        }
    }
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    // Oldest first. Another run may remove the same file meanwhile: that is fine.
    entries.sort();
    for (_, len, path) in entries {
        if total <= max {
            break;
        }
        let _ = std::fs::remove_file(path);
        total -= len;
    }
}

/// What [`super::Cache::clean`] removed.
pub struct Cleaned {
    pub entries: usize,
    pub bytes: u64,
}

pub(super) fn clean(dir: &Path) -> std::io::Result<Cleaned> {
    let mut out = Cleaned {
        entries: 0,
        bytes: 0,
    };
    for (path, len, _, entry) in own_files(dir) {
        match std::fs::remove_file(&path) {
            Ok(()) if entry => {
                out.entries += 1;
                out.bytes += len;
            }
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{Cache, Hasher};
    use std::time::{Duration, SystemTime};

    #[test]
    fn the_least_recently_used_go_first_and_other_files_stay() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::new(d.path().to_path_buf());
        let keys: Vec<_> = (0..3u64)
            .map(|i| Hasher::new("t").u64(i).finish())
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(c.put(k, &[0u8; 1000]));
            // Used 3, 2 and 1 hours ago.
            let t = SystemTime::now() - Duration::from_secs(3600 * (3 - i as u64));
            let f = std::fs::File::open(c.path(k)).unwrap();
            f.set_modified(t).unwrap();
        }
        std::fs::write(d.path().join("notes.txt"), "mine").unwrap();
        // A hit makes the oldest the newest.
        assert!(c.get(&keys[0]).is_some());
        c.evict(2500);
        let left: Vec<bool> = keys.iter().map(|k| c.path(k).exists()).collect();
        assert_eq!(left, [true, false, true]);
        let cleaned = c.clean().unwrap();
        assert_eq!(cleaned.entries, 2);
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["notes.txt"]);
    }
}
