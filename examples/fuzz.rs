//! Runs the fuzzer of `tests/fuzz/` for as long as asked and keeps what it breaks on.
//!
//! `cargo run --release --example fuzz -- --minutes 30 [--seed N] [--out DIR] [--max BYTES]`
//!
//! Each failing input goes to `DIR/<n>/` (default `target/fuzz-failures/`) with a minimized copy
//! and what failed; an input that runs longer than 5 s is a failure too. Exits 1 when anything
//! failed.

#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

use fuzz::{Case, Failure, Harness, Seeds, inputs::Rng};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(5);

struct Args {
    minutes: f64,
    seed: u64,
    out: PathBuf,
    max: usize,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        minutes: 1.0,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        out: PathBuf::from("target/fuzz-failures"),
        max: 100_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--minutes" => a.minutes = value()?.parse().map_err(|e| format!("--minutes: {e}"))?,
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--out" => a.out = PathBuf::from(value()?),
            "--max" => a.max = value()?.parse().map_err(|e| format!("--max: {e}"))?,
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    Ok(a)
}

enum Outcome {
    Ok(Duration),
    Failed(Failure),
    /// Still running after the limit; the thread is left behind.
    Hung,
}

/// Runs one input on a thread of its own so a hang can be told from slowness.
fn run(h: &Arc<Harness>, case: &Case) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let (h2, c2) = (Arc::clone(h), case.clone());
    let start = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(h2.check(&c2));
    });
    match rx.recv_timeout(LIMIT) {
        Ok(Some(f)) => Outcome::Failed(f),
        Ok(None) => Outcome::Ok(start.elapsed()),
        Err(_) => Outcome::Hung,
    }
}

fn save(out: &Path, n: usize, case: &Case, min: Option<&Case>, what: &str) {
    let write = |rel: String, text: &str| {
        let p = out.join(rel);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if let Err(e) = std::fs::write(&p, text) {
            eprintln!("cannot write {}: {e}", p.display());
        }
    };
    write(case.file_name(&n.to_string()), &case.text);
    if let Some(m) = min {
        write(m.file_name(&format!("{n}.min")), &m.text);
    }
    write(format!("{n}.txt"), &format!("{what}\n"));
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    fuzz::install_panic_hook();
    let seeds = Seeds::load();
    let h = Arc::new(Harness::new());
    let mut rng = Rng::new(a.seed);
    let deadline = Instant::now() + Duration::from_secs_f64(a.minutes * 60.0);
    eprintln!(
        "fuzzing for {} min, seed {}, failures to {}",
        a.minutes,
        a.seed,
        a.out.display()
    );
    let (mut runs, mut failures, mut hangs) = (0usize, 0usize, 0usize);
    let mut seen = BTreeSet::new();
    let mut slowest = Duration::ZERO;
    let mut last_report = Instant::now();
    while Instant::now() < deadline {
        let case = seeds.case(&mut rng, a.max);
        runs += 1;
        match run(&h, &case) {
            Outcome::Ok(t) => slowest = slowest.max(t),
            Outcome::Failed(f) => {
                failures += 1;
                // One minimized copy per distinct failure; repeats are only counted.
                if seen.insert(f.signature.clone()) {
                    let min = fuzz::minimize(
                        &case,
                        3_000,
                        |c| matches!(run(&h, c), Outcome::Failed(g) if g.signature == f.signature),
                    );
                    save(&a.out, seen.len(), &case, Some(&min), &f.detail);
                    eprintln!(
                        "FAIL #{} ({} -> {} bytes): {}",
                        seen.len(),
                        case.text.len(),
                        min.text.len(),
                        f.signature
                    );
                }
            }
            Outcome::Hung => {
                failures += 1;
                hangs += 1;
                seen.insert(format!("hang {runs}"));
                save(&a.out, seen.len(), &case, None, "ran over 5 s");
                eprintln!(
                    "FAIL #{}: ran over {LIMIT:?} ({} bytes)",
                    seen.len(),
                    case.text.len()
                );
                // Each hang leaves a thread spinning on one of the cores.
                if hangs >= 3 {
                    eprintln!("stopping: three inputs ran over the limit");
                    break;
                }
            }
        }
        if last_report.elapsed() >= Duration::from_secs(30) {
            last_report = Instant::now();
            eprintln!(
                "{runs} inputs ({} profiles rendered, {} findings), {failures} failures ({} distinct), slowest {:.2}s, {:.0} min left",
                h.rendered.load(std::sync::atomic::Ordering::Relaxed),
                h.findings.load(std::sync::atomic::Ordering::Relaxed),
                seen.len(),
                slowest.as_secs_f64(),
                deadline
                    .saturating_duration_since(Instant::now())
                    .as_secs_f64()
                    / 60.0
            );
        }
    }
    eprintln!(
        "done: {runs} inputs, {failures} failures ({} distinct), slowest {:.2}s",
        seen.len(),
        slowest.as_secs_f64()
    );
    if failures > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
