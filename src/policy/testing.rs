//! `gpuops policy test`: the Rego unit tests (`test_*` rules) of the bundled pack and of user
//! policy directories, reported the way `opa test -v` does.

use super::load::{add_modules, engine};
use super::{Module, PolicyError, bundled_modules, read_dir};
use regorus::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long one test may run.
const TEST_BUDGET: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// The rule was false or undefined.
    Fail,
    /// Evaluation failed (runtime error, time budget).
    Error(String),
}

#[derive(Debug, Clone)]
pub struct TestResult {
    pub file: String,
    /// `data.<package>.test_<name>`.
    pub name: String,
    pub verdict: Verdict,
    pub took: Duration,
    /// What the test printed (`print(...)`), shown for failures.
    pub prints: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub results: Vec<TestResult>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.verdict == Verdict::Pass)
    }

    /// `opa test -v` style: tests grouped by file, then the counts.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut file: Option<&str> = None;
        for r in &self.results {
            if file != Some(r.file.as_str()) {
                if file.is_some() {
                    out.push('\n');
                }
                out.push_str(&format!("{}:\n", r.file));
                file = Some(&r.file);
            }
            let took = format_duration(r.took);
            match &r.verdict {
                Verdict::Pass => out.push_str(&format!("{}: PASS ({took})\n", r.name)),
                Verdict::Fail => out.push_str(&format!("{}: FAIL ({took})\n", r.name)),
                Verdict::Error(e) => out.push_str(&format!("{}: ERROR ({took})\n  {e}\n", r.name)),
            }
            if r.verdict != Verdict::Pass {
                for p in &r.prints {
                    out.push_str(&format!("  {p}\n"));
                }
            }
        }
        out.push_str(&"-".repeat(80));
        out.push('\n');
        let total = self.results.len();
        let count = |f: fn(&Verdict) -> bool| self.results.iter().filter(|r| f(&r.verdict)).count();
        let pass = count(|v| *v == Verdict::Pass);
        let fail = count(|v| *v == Verdict::Fail);
        let error = count(|v| matches!(v, Verdict::Error(_)));
        if total == 0 {
            out.push_str("no tests found\n");
        }
        if pass > 0 {
            out.push_str(&format!("PASS: {pass}/{total}\n"));
        }
        if fail > 0 {
            out.push_str(&format!("FAIL: {fail}/{total}\n"));
        }
        if error > 0 {
            out.push_str(&format!("ERROR: {error}/{total}\n"));
        }
        out
    }
}

fn format_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{:.3}ms", us as f64 / 1000.0)
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

/// `test_*` rule names declared at the left margin of a module, in order, once each.
fn test_names(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        if !line.starts_with("test_") {
            continue;
        }
        let end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(line.len());
        let name = &line[..end];
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Runs the tests of the bundled pack and of `dirs` (policies and `_test.rego` modules).
pub fn run(dirs: &[PathBuf]) -> Result<Report, PolicyError> {
    let mut modules: Vec<Module> = bundled_modules(true);
    for d in dirs {
        let (policies, tests) = read_dir(d)?;
        modules.extend(policies);
        modules.extend(tests);
    }
    let mut engine = engine();
    let packages = add_modules(&mut engine, &modules)?;
    let mut report = Report::default();
    for (m, pkg) in modules.iter().zip(&packages) {
        for name in test_names(&m.text) {
            let mut e = engine.clone();
            e.set_execution_timer_config(regorus::utils::limits::ExecutionTimerConfig {
                limit: TEST_BUDGET,
                check_interval: std::num::NonZeroU32::MIN.saturating_add(63),
            });
            let start = Instant::now();
            let verdict = match e.eval_rule(format!("{pkg}.{name}")) {
                Ok(Value::Bool(true)) => Verdict::Pass,
                Ok(_) => Verdict::Fail,
                Err(err) => {
                    Verdict::Error(PolicyError::from_engine(&err, (&m.path, 0)).to_string())
                }
            };
            report.results.push(TestResult {
                file: m.path.clone(),
                name: format!("{pkg}.{name}"),
                verdict,
                took: start.elapsed(),
                prints: e.take_prints().unwrap_or_default(),
            });
        }
    }
    Ok(report)
}
