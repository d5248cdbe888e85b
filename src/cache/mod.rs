//! A cache of rendered output on disk, shared by runs and by concurrent processes.
//!
//! An entry is one file named by its key: the hash of everything its content depends on (see
//! [`Hasher`], and [`digest`] for files, directory trees and programs). What the key covers is
//! the caller's business (`source::cached` for builds); this module only stores bytes safely:
//!
//! - writes go to a temporary file in the cache directory, renamed over the entry: a reader sees
//!   a whole entry or none, and of two runs writing one key the last wins (both wrote the same);
//! - no locks: nothing waits on another process;
//! - an entry carries its length and hash (`entry.rs`): a truncated or damaged one is a miss;
//! - a hit touches the entry; [`Cache::evict`] removes the least recently used past a size.
//!
//! Only files named as this module names them are read, evicted or cleaned, so a cache directory
//! pointed at a directory that holds other things removes none of them.

pub mod codec;
pub mod digest;
mod entry;
mod evict;

pub use evict::Cleaned;

use std::path::{Path, PathBuf};

/// What the cache keeps at most, in bytes, after a run that wrote to it.
pub const MAX_BYTES: u64 = 256 << 20;

/// The environment variable naming the cache directory, over the platform's default.
pub const DIR_ENV: &str = "GPUOPS_CACHE_DIR";

/// A key: 32 bytes of BLAKE3.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Key([u8; 32]);

impl Key {
    /// Lower-case hex: the entry's file name.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Builds a key. Every piece is written with its length, so no two sequences of pieces hash
/// alike by running into each other.
#[derive(Clone)]
pub struct Hasher(blake3::Hasher);

impl Hasher {
    /// A hasher for keys of one kind (`domain`): keys of different kinds never meet.
    pub fn new(domain: &str) -> Hasher {
        let mut h = Hasher(blake3::Hasher::new());
        h.str(domain);
        h
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update(&(b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    pub fn u64(&mut self, n: u64) -> &mut Self {
        self.0.update(&n.to_le_bytes());
        self
    }

    pub fn key(&mut self, k: &Key) -> &mut Self {
        self.0.update(&k.0);
        self
    }

    pub fn finish(&self) -> Key {
        Key(*self.0.finalize().as_bytes())
    }
}

/// The cache in one directory (made when first written to).
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(key.hex())
    }

    /// The entry's content, when there is a whole one. A hit counts as a use for eviction.
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        let payload = entry::open(bytes)?;
        // Best effort: an entry that cannot be touched is only evicted sooner. Opened for
        // writing (nothing is written): Windows sets times only through such a handle.
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Some(payload)
    }

    /// Stores `payload` under `key`; false when it could not (the run goes on uncached).
    pub fn put(&self, key: &Key, payload: &[u8]) -> bool {
        use std::io::Write;
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let mut tmp = tempfile::Builder::new()
                .prefix(evict::TEMP_PREFIX)
                .tempfile_in(&self.dir)?;
            tmp.write_all(&entry::seal(payload))?;
            tmp.persist(self.path(key)).map_err(|e| e.error)?;
            Ok(())
        };
        write().is_ok()
    }

    /// Removes the least recently used entries until the cache holds at most `max` bytes, and
    /// temporary files a killed run left behind.
    pub fn evict(&self, max: u64) {
        evict::evict(&self.dir, max);
    }

    /// Removes every entry.
    pub fn clean(&self) -> std::io::Result<Cleaned> {
        evict::clean(&self.dir)
    }
}

/// The cache directory: `GPUOPS_CACHE_DIR`, else the platform's cache directory with `gpuops`
/// in it (`$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS,
/// `%LOCALAPPDATA%` on Windows). `None` when none is known.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(d) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("gpuops").join("cache"));
    }
    let home = var("HOME");
    if cfg!(target_os = "macos") {
        return home.map(|h| h.join("Library/Caches/gpuops"));
    }
    var("XDG_CACHE_HOME")
        .or_else(|| home.map(|h| h.join(".cache")))
        .map(|d| d.join("gpuops"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_read_back_and_a_damaged_one_is_a_miss() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::new(d.path().join("c"));
        let k = Hasher::new("test").str("a").finish();
        assert_eq!(c.get(&k), None);
        assert!(c.put(&k, b"payload"));
        assert_eq!(c.get(&k).as_deref(), Some(&b"payload"[..]));
        let p = c.path(&k);
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(c.get(&k), None, "truncated");
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&p, &flipped).unwrap();
        assert_eq!(c.get(&k), None, "a byte changed");
        // Nothing but the entry is left in the directory.
        assert_eq!(std::fs::read_dir(c.dir()).unwrap().count(), 1);
    }

    #[test]
    fn pieces_do_not_run_into_each_other() {
        let a = Hasher::new("t").str("ab").str("c").finish();
        let b = Hasher::new("t").str("a").str("bc").finish();
        assert_ne!(a, b);
        assert_ne!(Hasher::new("t").finish(), Hasher::new("u").finish());
    }
}
