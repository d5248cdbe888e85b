//! The fuzzer (`tests/fuzz/`) on every `cargo test`: a fixed seed and a fixed number of inputs,
//! a panic is a failure; and every regression input under `testdata/fuzz/` replayed.
//! `cargo run --release --example fuzz -- --minutes 30` runs it for as long as asked.

#[path = "fuzz/mod.rs"]
mod fuzz;

use fuzz::{Case, Harness, Seeds, inputs::Rng};
use std::path::Path;
use std::sync::Mutex;

/// Inputs per run: about two seconds in a debug build on two cores.
const ITERATIONS: usize = 150;
const SEED: u64 = 0x6770_756f_7073;

/// The panic hook is process-wide: the tests here run one at a time so a failing assertion
/// of one is never taken for an input's panic in another.
static SERIAL: Mutex<()> = Mutex::new(());

fn harness() -> Harness {
    fuzz::install_panic_hook();
    let mut h = Harness::new();
    h.policy_every = 8;
    h
}

#[test]
fn fixed_seed_inputs_do_not_panic() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let seeds = Seeds::load();
    let h = harness();
    let mut rng = Rng::new(SEED);
    let mut failures = Vec::new();
    for i in 0..ITERATIONS {
        let case = seeds.case(&mut rng, 8_000);
        if let Some(f) = h.check(&case) {
            failures.push(format!(
                "input {i} ({:?} {}): {}\n{}",
                case.target, case.path, f.detail, case.text
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Fixtures under `testdata/fuzz/` (inputs the fuzzer once broke on) run clean.
#[test]
fn regression_inputs_run_clean() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = fuzz::root().join("testdata/fuzz");
    let h = harness();
    let mut failures = Vec::new();
    for file in fixtures(&dir) {
        let case = Case::fixture(&dir, &file);
        if let Some(f) = h.check(&case) {
            failures.push(format!("{}: {}", file.display(), f.detail));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn fixtures(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
