//! A one-line progress display on stderr for runs that take more than a moment: files parsed, then
//! what the rules are working through. Only on an interactive terminal; never in pipes, files or
//! CI logs, where a line rewritten with `\r` turns into noise.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Whether progress may be drawn here: stderr is a terminal, `CI` is unset and the terminal is not
/// `dumb`.
pub fn wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Phase {
    Parsing {
        total: usize,
    },
    Linting {
        files: usize,
        documents: usize,
        rules: usize,
    },
}

struct State {
    phase: Mutex<(Phase, bool)>,
    parsed: AtomicUsize,
    wake: Condvar,
}

/// The progress line; a no-op when disabled. Dropping it (or [`Progress::finish`]) clears the line.
pub struct Progress {
    inner: Option<(Arc<State>, JoinHandle<()>)>,
}

impl Progress {
    /// Nothing is drawn.
    pub fn disabled() -> Self {
        Progress { inner: None }
    }

    /// Draws on stderr when [`wanted`], after half a second, at most ten times a second.
    pub fn stderr() -> Self {
        if !wanted() {
            return Progress::disabled();
        }
        Progress::to(
            Box::new(std::io::stderr()),
            Duration::from_millis(500),
            Duration::from_millis(100),
        )
    }

    /// Draws on `out`: first after `delay` (a quick run shows nothing), then every `interval`.
    pub fn to(out: Box<dyn Write + Send>, delay: Duration, interval: Duration) -> Self {
        let state = Arc::new(State {
            phase: Mutex::new((Phase::Parsing { total: 0 }, false)),
            parsed: AtomicUsize::new(0),
            wake: Condvar::new(),
        });
        let s = Arc::clone(&state);
        let handle = std::thread::spawn(move || draw_loop(&s, out, delay, interval));
        Progress {
            inner: Some((state, handle)),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    pub fn parsing(&self, total: usize) {
        self.set(Phase::Parsing { total });
    }

    /// `n` more files were parsed.
    pub fn parsed(&self, n: usize) {
        if let Some((s, _)) = &self.inner {
            s.parsed.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub fn linting(&self, files: usize, documents: usize, rules: usize) {
        self.set(Phase::Linting {
            files,
            documents,
            rules,
        });
    }

    fn set(&self, phase: Phase) {
        if let Some((s, _)) = &self.inner
            && let Ok(mut p) = s.phase.lock()
        {
            p.0 = phase;
        }
    }

    /// Stops drawing and clears the line, before the report is printed.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some((s, handle)) = self.inner.take() else {
            return;
        };
        if let Ok(mut p) = s.phase.lock() {
            p.1 = true;
        }
        s.wake.notify_all();
        let _ = handle.join();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}

fn line(phase: &Phase, parsed: usize, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match phase {
        Phase::Parsing { total } => format!("gpuops: parsing files {parsed}/{total} · {secs}s"),
        Phase::Linting {
            files,
            documents,
            rules,
        } => {
            format!("gpuops: linting {files} files, {documents} documents, {rules} rules · {secs}s")
        }
    }
}

fn draw_loop(s: &State, mut out: Box<dyn Write + Send>, delay: Duration, interval: Duration) {
    let start = Instant::now();
    let mut drawn: Option<String> = None;
    let mut wait = delay;
    loop {
        let Ok(guard) = s.phase.lock() else { return };
        let Ok((guard, _)) = s.wake.wait_timeout_while(guard, wait, |p| !p.1) else {
            return;
        };
        if guard.1 {
            break;
        }
        let text = line(&guard.0, s.parsed.load(Ordering::Relaxed), start.elapsed());
        drop(guard);
        // Redraw only what changed: a terminal is slow, and a line that does not move says so.
        if drawn.as_deref() != Some(text.as_str()) {
            let _ = write!(out, "\r\x1b[2K{text}");
            let _ = out.flush();
            drawn = Some(text);
        }
        wait = interval;
    }
    if drawn.is_some() {
        let _ = write!(out, "\r\x1b[2K");
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_quick_run_draws_nothing() {
        let buf = Shared::default();
        let p = Progress::to(
            Box::new(buf.clone()),
            Duration::from_secs(60),
            Duration::from_millis(10),
        );
        p.parsing(3);
        p.parsed(3);
        p.finish();
        assert!(buf.0.lock().unwrap().is_empty());
    }

    #[test]
    fn a_slow_run_draws_and_clears_the_line() {
        let buf = Shared::default();
        let text = || String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        // Waits for the drawing thread, however busy the machine is.
        let shows = |what: &str| {
            let until = Instant::now() + Duration::from_secs(20);
            while !text().contains(what) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            text().contains(what)
        };
        let p = Progress::to(
            Box::new(buf.clone()),
            Duration::from_millis(1),
            Duration::from_millis(1),
        );
        p.parsing(10);
        p.parsed(4);
        assert!(shows("parsing files 4/10"), "{:?}", text());
        p.linting(10, 12, 23);
        assert!(
            shows("linting 10 files, 12 documents, 23 rules"),
            "{:?}",
            text()
        );
        p.finish();
        assert!(text().ends_with("\r\x1b[2K"), "{:?}", text());
    }
}
