//! Running kustomize, kubectl and helm: no shell, a time limit, a clean environment, no network.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rendered output larger than this is refused, like an oversized file.
const MAX_OUTPUT: u64 = crate::source::MAX_FILE_BYTES;

/// Finds an executable on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file() || p.with_extension("exe").is_file()
}

/// One invocation of an external tool.
pub struct Invocation<'a> {
    pub program: &'a Path,
    pub args: Vec<OsString>,
    /// Working directory: the overlay or chart directory.
    pub cwd: &'a Path,
    /// A private scratch directory (becomes HOME and TMPDIR), removed by the caller.
    pub scratch: &'a Path,
    pub timeout: Duration,
}

/// Why a tool produced no usable output.
#[derive(Debug)]
pub enum ExecError {
    Spawn(std::io::Error),
    Timeout(Duration),
    /// Non-zero exit; stderr (or stdout when stderr is empty) as the tool wrote it.
    Failed(String),
    TooLarge,
    NotUtf8,
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Spawn(e) => write!(f, "could not start: {e}"),
            ExecError::Timeout(d) => write!(
                f,
                "killed after {}s (raise `sources.timeout` in .gpuops.yaml if the build is just slow)",
                d.as_secs()
            ),
            ExecError::Failed(m) => f.write_str(m),
            ExecError::TooLarge => write!(f, "output is over the {MAX_OUTPUT}-byte limit"),
            ExecError::NotUtf8 => f.write_str("output is not UTF-8 text"),
        }
    }
}

/// An address that refuses connections at once: proxies point there so any download a tool
/// attempts (a remote base, a chart repository) fails fast instead of reaching the network.
const NO_NETWORK_PROXY: &str = "http://127.0.0.1:9";

/// The environment tools run with. Nothing of the caller's is passed but `PATH` (to find
/// plugins' interpreters) and, on Windows, what processes need to start; HOME and the cache and
/// config directories point into the scratch directory so no user plugin, repository list or
/// kustomize plugin home is read.
fn environment(scratch: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for keep in ["PATH", "SYSTEMROOT", "SystemRoot", "WINDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            env.push((keep.into(), v));
        }
    }
    let s = scratch.as_os_str().to_os_string();
    for var in [
        "HOME",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
    ] {
        env.push((var.into(), s.clone()));
    }
    env.push(("KUBECONFIG".into(), scratch.join("no-kubeconfig").into()));
    for var in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        env.push((var.into(), NO_NETWORK_PROXY.into()));
    }
    // Remote kustomize bases are cloned with git: allow local protocols only, never prompt.
    env.push(("GIT_ALLOW_PROTOCOL".into(), "file".into()));
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    env.push(("GIT_CONFIG_NOSYSTEM".into(), "1".into()));
    env.push(("HELM_NO_PLUGINS".into(), "1".into()));
    env
}

/// Runs the tool and returns its stdout. The child is killed when the time limit passes.
pub fn run(inv: &Invocation) -> Result<String, ExecError> {
    let mut cmd = Command::new(inv.program);
    cmd.args(&inv.args)
        .current_dir(inv.cwd)
        .env_clear()
        .envs(environment(inv.scratch))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(ExecError::Spawn)?;
    // Both pipes are drained on their own threads so a chatty tool never blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(MAX_OUTPUT + 1).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() >= inv.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ExecError::Spawn(e));
            }
        }
    };
    let Some(status) = status else {
        return Err(ExecError::Timeout(inv.timeout));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let text = if stderr.iter().all(u8::is_ascii_whitespace) {
            String::from_utf8_lossy(&stdout).into_owned()
        } else {
            String::from_utf8_lossy(&stderr).into_owned()
        };
        let text = if text.trim().is_empty() {
            format!("exited with {status}")
        } else {
            text
        };
        return Err(ExecError::Failed(text));
    }
    if stdout.len() as u64 > MAX_OUTPUT {
        return Err(ExecError::TooLarge);
    }
    String::from_utf8(stdout).map_err(|_| ExecError::NotUtf8)
}

/// How an invocation reads in `--explain-sources`: program name and arguments, with the scratch
/// directory shown as `<tmp>`.
pub fn describe(inv: &Invocation) -> String {
    let scratch = inv.scratch.to_string_lossy();
    let cwd = std::env::current_dir()
        .map(|c| format!("{}/", super::tree::identity(&c).to_string_lossy()))
        .unwrap_or_default();
    let name = inv
        .program
        .file_name()
        .map_or_else(|| inv.program.to_string_lossy(), |n| n.to_string_lossy());
    let mut s = name.into_owned();
    for a in &inv.args {
        let mut a = a.to_string_lossy().replace(scratch.as_ref(), "<tmp>");
        if !cwd.is_empty()
            && let Some(rel) = a.strip_prefix(&cwd)
        {
            a = rel.to_string();
        }
        s.push(' ');
        if a.is_empty() || a.contains(char::is_whitespace) {
            s.push_str(&format!("'{a}'"));
        } else {
            s.push_str(&a);
        }
    }
    s
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn script(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("tool");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    fn inv<'a>(program: &'a Path, dir: &'a Path, timeout: Duration) -> Invocation<'a> {
        Invocation {
            program,
            args: vec!["a b".into(), "$HOME".into()],
            cwd: dir,
            scratch: dir,
            timeout,
        }
    }

    #[test]
    fn args_are_not_shell_words_and_env_is_clean() {
        let d = tempfile::tempdir().unwrap();
        let p = script(
            d.path(),
            "printf '%s|' \"$1\" \"$2\" \"$HTTPS_PROXY\" \"${KUSTOMIZE_PLUGIN_HOME:-unset}\" \"$HOME\"",
        );
        let out = run(&inv(&p, d.path(), Duration::from_secs(10))).unwrap();
        let home = d.path().to_string_lossy();
        assert_eq!(out, format!("a b|$HOME|{NO_NETWORK_PROXY}|unset|{home}|"));
    }

    #[test]
    fn a_slow_tool_is_killed() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "sleep 30");
        let start = Instant::now();
        let r = run(&inv(&p, d.path(), Duration::from_millis(300)));
        assert!(matches!(r, Err(ExecError::Timeout(_))), "{r:?}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn failure_carries_stderr() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "echo 'Error: boom' >&2; exit 3");
        match run(&inv(&p, d.path(), Duration::from_secs(10))) {
            Err(ExecError::Failed(m)) => assert_eq!(m.trim(), "Error: boom"),
            other => panic!("{other:?}"),
        }
    }
}
