//! Builds from the cache ([`crate::cache`]): a kind that says what its builds depend on
//! ([`Cached`]) gets the output of an earlier run with the same inputs instead of running its
//! tool. Only successful builds are stored: a failure or a skip is made again every run, so a
//! tool that failed once (a stand-in, a timeout on a busy machine) is not believed forever.
//!
//! A key holds gpuops' version and the identity of its binary (another gpuops may build or
//! strip differently), the tool's identity, the build's options, and the content and relative
//! paths of what the build reads, as the kind knows it ([`Inputs`]).

use super::Sources;
use super::builder::{Builder, Outcome};
use super::tree::identity;
use crate::cache::{Cache, Hasher, Key, digest};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the kinds' payloads look like: a change of any makes every entry a miss.
const PAYLOAD_FORMAT: u64 = 1;

/// A kind whose builds are cached. Each method's default leaves a build uncached.
pub(super) trait Cached: Builder {
    /// The kind, in every key: kinds never share entries.
    const KIND: &'static str;

    /// Feeds what a build of `unit` depends on into `inputs`; `None` when it is not cached (it
    /// would be skipped, or what it reads is not known in full).
    fn key(&self, _s: &Sources, _unit: &Self::Unit, _inputs: &mut Inputs) -> Option<()> {
        None
    }

    /// The payload stored for a build; `None`: not stored.
    fn encode(&self, _unit: &Self::Unit, _built: &Self::Built) -> Option<Vec<u8>> {
        None
    }

    /// A build read back from its payload; `None` when it does not read (a miss).
    fn decode(&self, _unit: &Self::Unit, _payload: &[u8]) -> Option<Self::Built> {
        None
    }
}

/// The cache of a run, and the trees it hashed.
#[derive(Debug)]
pub(super) struct Store {
    cache: Cache,
    /// The cache directory as trees name it: hashing a tree leaves it out.
    skip: PathBuf,
    /// In every key: gpuops' version and binary, the payload format.
    salt: Key,
    /// Directory trees hashed this run (many builds read one base).
    trees: Mutex<HashMap<PathBuf, Option<Key>>>,
    wrote: AtomicBool,
}

impl Store {
    pub(super) fn open(dir: &Path) -> Store {
        let mut salt = Hasher::new("gpuops");
        salt.str(env!("CARGO_PKG_VERSION")).u64(PAYLOAD_FORMAT);
        if let Ok(exe) = std::env::current_exe() {
            digest::program(&mut salt, &exe);
        }
        Store {
            cache: Cache::new(dir.to_path_buf()),
            skip: identity(dir),
            salt: salt.finish(),
            trees: Mutex::default(),
            wrote: AtomicBool::new(false),
        }
    }

    /// After the run: the cache kept to its size, when this run added to it.
    pub(super) fn finish(&self) {
        if self.wrote.load(Ordering::Relaxed) {
            self.cache.evict(crate::cache::MAX_BYTES);
        }
    }

    fn tree(&self, dir: &Path) -> Option<Key> {
        if let Some(k) = self.trees.lock().ok()?.get(dir) {
            return *k;
        }
        // Hashed outside the lock: two builds may hash one tree at once, and get one key.
        let k = digest::tree(dir, &[&self.skip]);
        self.trees.lock().ok()?.insert(dir.to_path_buf(), k);
        k
    }
}

/// What one build's key is made of, as a kind feeds it.
pub(super) struct Inputs<'a> {
    store: &'a Store,
    h: Hasher,
}

impl Inputs<'_> {
    pub(super) fn str(&mut self, s: &str) -> &mut Self {
        self.h.str(s);
        self
    }

    /// Some strings, however many.
    pub(super) fn strs<'s>(
        &mut self,
        items: impl ExactSizeIterator<Item = &'s String>,
    ) -> &mut Self {
        self.h.u64(items.len() as u64);
        for s in items {
            self.h.str(s);
        }
        self
    }

    /// A number: how many of what follows there are.
    pub(super) fn count(&mut self, n: usize) -> &mut Self {
        self.h.u64(n as u64);
        self
    }

    /// A path as the key holds it: relative to what was built, so a moved checkout keeps its
    /// entries.
    pub(super) fn path(&mut self, p: &Path) -> &mut Self {
        self.h.bytes(p.as_os_str().as_encoded_bytes());
        self
    }

    /// The tool that builds.
    pub(super) fn program(&mut self, p: &Path) -> Option<()> {
        digest::program(&mut self.h, p)
    }

    /// Everything under `dir`.
    pub(super) fn tree(&mut self, dir: &Path) -> Option<()> {
        let k = self.store.tree(dir)?;
        self.h.key(&k);
        Some(())
    }

    /// A file's content.
    pub(super) fn file(&mut self, p: &Path) -> Option<()> {
        let k = digest::file(p)?;
        self.h.key(&k);
        Some(())
    }
}

impl Sources {
    /// Builds `units` (in their order), each from the cache when an earlier run built the same
    /// inputs; the rest together, as the kind builds them, and stored.
    pub(super) fn build_cached<B: Cached>(&self, b: &B, units: &[B::Unit]) -> Vec<Outcome<B>> {
        let Some(store) = &self.store else {
            return b.build_all(self, &units.iter().collect::<Vec<_>>());
        };
        let keys: Vec<Option<Key>> = units
            .par_iter()
            .map(|u| {
                let mut inputs = Inputs {
                    store,
                    h: Hasher::new(B::KIND),
                };
                inputs.h.key(&store.salt);
                b.key(self, u, &mut inputs)?;
                Some(inputs.h.finish())
            })
            .collect();
        let hits: Vec<Option<B::Built>> = units
            .par_iter()
            .zip(&keys)
            .map(|(u, k)| b.decode(u, &store.cache.get(k.as_ref()?)?))
            .collect();
        let missed: Vec<&B::Unit> = units
            .iter()
            .zip(&hits)
            .filter(|(_, h)| h.is_none())
            .map(|(u, _)| u)
            .collect();
        let mut built = b.build_all(self, &missed).into_iter();
        units
            .iter()
            .zip(keys)
            .zip(hits)
            .map(|((u, key), hit)| {
                if let Some(h) = hit {
                    return Outcome::Cached(h);
                }
                let o = built.next().unwrap_or_else(|| b.build(self, u));
                if let (Outcome::Built(x), Some(k)) = (&o, key)
                    && let Some(payload) = b.encode(u, x)
                    && store.cache.put(&k, &payload)
                {
                    store.wrote.store(true, Ordering::Relaxed);
                }
                o
            })
            .collect()
    }
}
