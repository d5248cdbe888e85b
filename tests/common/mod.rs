//! What the integration tests share: the `gpuops` binary run with a fixed environment, what a
//! run gave, files written into temporary repositories, the tools on PATH, and findings in the
//! human form the snapshots hold.
//!
//! A target includes it with `mod common;` (`tests/cli/main.rs`: `#[path = "../common/mod.rs"]`);
//! each uses only part of it.
#![allow(dead_code)]

use assert_cmd::Command;
use gpuops::config::{self, Settings};
use gpuops::diag::Diagnostic;
use gpuops::report::{HumanOptions, human};
use gpuops::source::SourceFile;
use std::fs;
use std::path::{Path, PathBuf};

/// The crate root: `examples/`, `testdata/` and the repository's own files.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The built `gpuops` binary with `NO_COLOR=1` and a build cache of its own (empty: no run
/// reads what another built, and the user's cache is never touched): it runs in the test's
/// working directory (the crate root under `cargo test`) unless `current_dir` (or [`gpuops_in`])
/// says otherwise. Tests add `args`, `env`, `env_remove` and `write_stdin` as they need.
pub fn gpuops() -> Command {
    let mut c = Command::cargo_bin("gpuops").expect("the gpuops binary is built");
    c.env("NO_COLOR", "1");
    c.env("GPUOPS_CACHE_DIR", fresh_cache_dir());
    c
}

/// A cache directory no run has used: `<target>/tmp/gpuops-cache/<process>/<n>`. The process's
/// directory is emptied first (one of an earlier process with the same id may be there), and
/// those of test processes over a day old are removed.
fn fresh_cache_dir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| {
        let all = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gpuops-cache");
        let day = std::time::Duration::from_secs(24 * 3600);
        for e in fs::read_dir(&all).into_iter().flatten().flatten() {
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > day));
            if old {
                let _ = fs::remove_dir_all(e.path());
            }
        }
        let b = all.join(std::process::id().to_string());
        let _ = fs::remove_dir_all(&b);
        b
    });
    base.join(N.fetch_add(1, Ordering::Relaxed).to_string())
}

/// [`gpuops`] run in `dir`.
pub fn gpuops_in(dir: impl AsRef<Path>) -> Command {
    let mut c = gpuops();
    c.current_dir(dir.as_ref());
    c
}

/// What a run of the binary gave: its exit code (-1 when a signal ended it), its standard output
/// and its standard error, decoded as UTF-8 (an invalid byte becomes U+FFFD). The tests take it
/// apart as `let Run { code, out, err } = run(…)`.
pub struct Run {
    pub code: i32,
    pub out: String,
    pub err: String,
}

/// Runs `c` to its end.
pub fn run(c: &mut Command) -> Run {
    let output = c.output().expect("gpuops runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&output.stdout).into_owned(),
        err: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Writes `text` to `dir/rel`, making the directories on the way.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// Whether a directory of PATH holds a file `name`.
pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// Whether kustomize builds can run here: `kustomize`, or `kubectl` (CI has it), is on PATH.
/// When neither is, it says so on stderr: the test that asked is then skipped.
pub fn kustomize_on_path() -> bool {
    if on_path("kustomize") || on_path("kubectl") {
        return true;
    }
    eprintln!("skipped: neither kustomize nor kubectl is on PATH");
    false
}

/// Findings as the human report prints them without colour, 100 columns wide.
pub fn human_text(diagnostics: &[Diagnostic], files: &[SourceFile]) -> String {
    human(
        diagnostics,
        files,
        HumanOptions {
            color: false,
            width: 100,
        },
    )
}

/// The findings of `rule` among `diagnostics` in the form of [`human_text`], and how many there are.
pub fn findings_of(
    rule: &str,
    diagnostics: Vec<Diagnostic>,
    files: &[SourceFile],
) -> (String, usize) {
    let own: Vec<_> = diagnostics.into_iter().filter(|d| d.rule == rule).collect();
    (human_text(&own, files), own.len())
}

/// The settings of a rule's or policy's fixture directory: its `config.yaml` when there is one,
/// else the defaults.
pub fn fixture_settings(dir: &Path) -> Settings {
    let cfg = dir.join("config.yaml");
    if cfg.exists() {
        config::parse(&fs::read_to_string(&cfg).unwrap(), &gpuops::rules::names())
            .expect("fixture config is valid")
    } else {
        Settings::default()
    }
}
