//! `gpuops cache`: where the build cache is, and emptying it; and the cache a run uses.

use super::output::print;
use crate::CacheCommand;
use gpuops::cache::{self, Cache};
use std::path::PathBuf;
use std::process::ExitCode;

/// The cache directory a run builds through, unless `--no-cache`.
pub(crate) fn dir(no_cache: bool) -> Option<PathBuf> {
    if no_cache { None } else { cache::default_dir() }
}

pub(crate) fn cache(command: CacheCommand) -> ExitCode {
    let Some(dir) = cache::default_dir() else {
        eprintln!(
            "error: no cache directory: set {} (or HOME)",
            cache::DIR_ENV
        );
        return ExitCode::from(2);
    };
    match command {
        CacheCommand::Dir => print(&format!("{}\n", dir.display())),
        CacheCommand::Clean => match Cache::new(dir.clone()).clean() {
            Ok(c) => print(&format!(
                "removed {} cached build{} ({:.1} MiB) from {}\n",
                c.entries,
                if c.entries == 1 { "" } else { "s" },
                c.bytes as f64 / f64::from(1 << 20),
                dir.display()
            )),
            Err(e) => {
                eprintln!("error: cleaning {}: {e}", dir.display());
                return ExitCode::from(2);
            }
        },
    }
    ExitCode::SUCCESS
}
