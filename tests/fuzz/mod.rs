//! A structured mutation fuzzer over the library, shared by `tests/fuzz.rs` (a fixed seed and a
//! few hundred inputs on every `cargo test`) and `examples/fuzz.rs` (as long as asked, in
//! release). Inputs are the project's own YAML mutated, generated Kubernetes-shaped documents,
//! and platform profiles; each goes through lint (default settings, and every bundled policy
//! on), the report emitters, `why`, `cost`, and for profiles parse, render and self-check. A
//! panic anywhere is a failure, and so is a rendered platform that fails its own lint.
#![allow(dead_code)]

pub mod inputs;

use gpuops::config::{Level, Settings};
use gpuops::policy::{Policies, bundled};
use gpuops::report::{self, Format};
use gpuops::source::SourceFile;
use inputs::Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What an input is fed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A file of a repository: lint, report, why, cost.
    Repo,
    /// A platform profile: parse, render, self-check.
    Profile,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub target: Target,
    /// The file's path in the linted repository (some rules and sources look at names).
    pub path: String,
    pub text: String,
}

impl Case {
    /// A fixture under `testdata/fuzz/`: `*.profile.yaml` is a profile, anything else a file
    /// of a repository at its path relative to that directory.
    pub fn fixture(dir: &Path, file: &Path) -> Case {
        let rel = file.strip_prefix(dir).unwrap_or(file);
        let path = rel.to_string_lossy().replace('\\', "/");
        Case {
            target: if path.ends_with(".profile.yaml") {
                Target::Profile
            } else {
                Target::Repo
            },
            text: std::fs::read_to_string(file).expect("fixture is UTF-8"),
            path,
        }
    }

    /// Where a failing input is written, relative to the output directory.
    pub fn file_name(&self, stem: &str) -> String {
        match self.target {
            Target::Profile => format!("{stem}/fuzz.profile.yaml"),
            Target::Repo => format!("{stem}/{}", self.path),
        }
    }
}

/// What failed: a panic's message and place, or a rendered platform that lints dirty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Stable across inputs that hit the same bug (minimization keeps it).
    pub signature: String,
    pub detail: String,
}

/// The project's YAML: seeds for mutation.
pub struct Seeds {
    pub yaml: Vec<String>,
    pub profiles: Vec<String>,
    /// Terraform (`.tf`) files: manifests, node groups and chart values in HCL.
    pub terraform: Vec<String>,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "tf")
        {
            out.push(p);
        }
    }
}

impl Seeds {
    /// The YAML under `testdata/` and `examples/`, sorted so a seed means the same inputs.
    pub fn load() -> Seeds {
        let mut paths = Vec::new();
        collect(&root().join("testdata"), &mut paths);
        collect(&root().join("examples"), &mut paths);
        let mut yaml = Vec::new();
        let mut profiles = Vec::new();
        let mut terraform = Vec::new();
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            if p.extension().is_some_and(|x| x == "tf") {
                terraform.push(text);
            } else if text.contains("kind: Platform") {
                profiles.push(text);
            } else {
                yaml.push(text);
            }
        }
        assert!(
            !yaml.is_empty() && !profiles.is_empty() && !terraform.is_empty(),
            "seeds found"
        );
        Seeds {
            yaml,
            profiles,
            terraform,
        }
    }

    /// The next input: mostly a seed mutated, else a generated document (mutated or not).
    pub fn case(&self, rng: &mut Rng, max: usize) -> Case {
        let path = rng
            .pick(&[
                "input.yaml",
                "input.yaml",
                "input.yaml",
                "kustomization.yaml",
                "templates/x.yaml",
                "values.yaml",
                "clusters/a/app.yml",
            ])
            .to_string();
        let mut path = path;
        let (target, text) = match rng.below(10) {
            // A Terraform file: its HCL, heredocs and evaluated values mutated.
            0 if rng.chance(1, 2) => {
                let s = rng.pick(&self.terraform);
                path = "main.tf".to_string();
                (Target::Repo, inputs::mutate(rng, s, &self.terraform, max))
            }
            0..=3 => {
                let s = rng.pick(&self.yaml);
                (Target::Repo, inputs::mutate(rng, s, &self.yaml, max))
            }
            4..=6 => {
                let g = inputs::generate(rng, max);
                let t = if rng.chance(1, 2) {
                    inputs::mutate(rng, &g, &self.yaml, max)
                } else {
                    g
                };
                (Target::Repo, t)
            }
            7 => {
                let s = rng.pick(&self.profiles);
                (Target::Profile, inputs::mutate(rng, s, &self.profiles, max))
            }
            8 => {
                // One odd value in an otherwise valid profile: these reach render.
                let s = rng.pick(&self.profiles);
                let mut lines: Vec<String> = s.lines().map(str::to_string).collect();
                let i = rng.below(lines.len());
                if let Some(c) = lines[i].find(": ") {
                    lines[i].truncate(c + 2);
                    let v = rng.pick::<&str>(inputs::ODD_SCALARS);
                    lines[i].push_str(v);
                }
                (Target::Profile, lines.join("\n") + "\n")
            }
            _ => {
                let p = inputs::profile(rng);
                let t = if rng.chance(1, 3) {
                    inputs::mutate(rng, &p, &self.profiles, max)
                } else {
                    p
                };
                (Target::Profile, t)
            }
        };
        Case { target, path, text }
    }
}

/// The settings and policies each input runs under.
pub struct Harness {
    defaults: Settings,
    every_policy: Settings,
    policies: Policies,
    renderer: gpuops::render::Renderer,
    /// Run the every-policy lint on one input in this many (policies are the slow part).
    pub policy_every: usize,
    count: AtomicUsize,
    /// Profiles that validated and rendered (the rest stopped at a located problem).
    pub rendered: AtomicUsize,
    /// Findings of the default-settings lint, over all repository inputs.
    pub findings: AtomicUsize,
}

impl Harness {
    pub fn new() -> Harness {
        let mut every_policy = Settings::default();
        for b in bundled::PACK {
            every_policy
                .rules
                .insert(b.name.to_string(), Level::Warning);
        }
        // The data the bundled pack's policies read (their fixtures' `policy-data`).
        let data = serde_json::json!({
            "namespace_accelerators": {"research": ["a100", "h100"], "a": []},
            "allowed_registries": ["nvcr.io/nvidia", "x"],
        });
        every_policy.policy_data = Some(data.clone());
        every_policy.eks = true;
        every_policy.complete = true;
        Harness {
            defaults: Settings::default(),
            every_policy,
            policies: Policies::load(&[], Some(&data)).expect("bundled policies load"),
            renderer: gpuops::render::Renderer::new(None).expect("bundled templates load"),
            policy_every: 1,
            count: AtomicUsize::new(0),
            rendered: AtomicUsize::new(0),
            findings: AtomicUsize::new(0),
        }
    }

    /// Runs one input through everything; a panic is caught and returned as a failure.
    pub fn check(&self, case: &Case) -> Option<Failure> {
        QUIET.fetch_add(1, Ordering::SeqCst);
        let r = catch_unwind(AssertUnwindSafe(|| self.run(case)));
        QUIET.fetch_sub(1, Ordering::SeqCst);
        match r {
            Ok(found) => found,
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic)".into());
                let at = LAST_PANIC
                    .lock()
                    .map(|mut l| l.take())
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                Some(Failure {
                    signature: format!("panic at {at}"),
                    detail: format!("panic at {at}: {msg}"),
                })
            }
        }
    }

    fn run(&self, case: &Case) -> Option<Failure> {
        match case.target {
            Target::Repo => {
                self.repo(case);
                None
            }
            Target::Profile => self.profile(case),
        }
    }

    fn repo(&self, case: &Case) {
        let files = vec![SourceFile::from_text(case.path.clone(), case.text.clone())];
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        let mut runs = vec![(&self.defaults, None)];
        if n.is_multiple_of(self.policy_every.max(1)) {
            runs.push((&self.every_policy, Some(&self.policies)));
        }
        for (settings, policies) in runs {
            let out = gpuops::lint_with(&files, settings, policies);
            if policies.is_none() {
                self.findings
                    .fetch_add(out.diagnostics.len(), Ordering::Relaxed);
            }
            let errors: Vec<String> = out.policy_errors.iter().map(|e| e.to_string()).collect();
            let run = report::Run {
                diagnostics: &out.diagnostics,
                files: &files,
                documents: out.documents,
                objects: out.objects,
                exit_code: report::exit_code(&out.diagnostics, settings.fail_on),
                fail_on: settings.fail_on,
                errors: &errors,
            };
            for f in Format::ALL {
                let _ = report::emit(*f, &run, n.is_multiple_of(2));
            }
            let _ = report::fingerprint::fingerprints(&out.diagnostics, &files);
        }
        // `why` by a line of the file and by the first Kind/name in it.
        let lines = case.text.lines().count() as u32;
        let target = gpuops::why::Target::File {
            path: case.path.clone(),
            line: Some((n as u32 % lines.max(1)) + 1),
        };
        if let Ok(r) = gpuops::why::explain(&files, &self.defaults, &target) {
            let _ = gpuops::why::human(&r);
            let _ = serde_json::to_string(&r);
        }
        if let Some(target) = first_object(&case.text)
            && let Ok(r) = gpuops::why::explain(&files, &self.defaults, &target)
        {
            let _ = gpuops::why::human(&r);
        }
        let ix = gpuops::index::Index::build(&files, &self.defaults);
        let cost = gpuops::cost::report(&ix, &self.defaults.cost);
        let _ = cost.human();
        let _ = cost.csv();
        let _ = serde_json::to_string(&cost);
    }

    fn profile(&self, case: &Case) -> Option<Failure> {
        let platform = match gpuops::render::parse_profile(&case.path, &case.text) {
            Ok(p) => p,
            Err(e) => {
                let _ = e.to_string();
                let _ = e.report(false);
                return None;
            }
        };
        let files = self.renderer.render(&platform, &case.path).ok()?;
        self.rendered.fetch_add(1, Ordering::Relaxed);
        let _ = gpuops::render::stream(&files);
        let (sources, findings) = gpuops::render::self_check(&files, "");
        let _ = gpuops::render::ceiling::line(&gpuops::render::ceiling::total(&sources));
        if findings.is_empty() {
            return None;
        }
        let mut rules: Vec<&str> = findings.iter().map(|d| d.rule).collect();
        rules.sort();
        rules.dedup();
        Some(Failure {
            signature: format!("rendered platform fails lint: {}", rules.join(", ")),
            detail: report::human(
                &findings,
                &sources,
                report::HumanOptions {
                    color: false,
                    width: 100,
                },
            ),
        })
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

/// `Kind/name` of the first object the text seems to hold.
fn first_object(text: &str) -> Option<gpuops::why::Target> {
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.trim_start().strip_prefix(key))
            .map(|v| v.trim().to_string())
    };
    Some(gpuops::why::Target::Name {
        kind: value("kind:")?,
        namespace: value("namespace:"),
        name: value("name:")?,
    })
}

/// Inside [`Harness::check`]: panics are recorded, not printed.
static QUIET: AtomicUsize = AtomicUsize::new(0);
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Installs a panic hook that keeps the place of a panic inside a check (the payload does not
/// carry it) and prints every other panic as before.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if QUIET.load(Ordering::SeqCst) > 0 {
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            if let Ok(mut last) = LAST_PANIC.lock() {
                last.get_or_insert(at);
            }
        } else {
            previous(info);
        }
    }));
}

/// The smallest input found that still fails with `signature`: chunks of lines deleted,
/// halving the chunk size, then the longest line halved; `still` runs the input (at most
/// `budget` times).
pub fn minimize(case: &Case, budget: usize, mut still: impl FnMut(&Case) -> bool) -> Case {
    let mut best = case.clone();
    let mut tries = 0;
    let mut attempt = |c: &Case, tries: &mut usize| {
        *tries += 1;
        still(c)
    };
    let mut chunk = best.text.lines().count().div_ceil(2).max(1);
    loop {
        let mut i = 0;
        loop {
            let lines: Vec<&str> = best.text.split_inclusive('\n').collect();
            if i >= lines.len() || tries >= budget {
                break;
            }
            let mut candidate = best.clone();
            candidate.text = lines[..i]
                .iter()
                .chain(&lines[(i + chunk).min(lines.len())..])
                .copied()
                .collect();
            if attempt(&candidate, &mut tries) {
                best = candidate;
            } else {
                i += chunk;
            }
        }
        if chunk == 1 || tries >= budget {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    // Long values: halve the longest line while the failure stays.
    while tries < budget {
        let lines: Vec<&str> = best.text.split_inclusive('\n').collect();
        let Some((li, longest)) = lines.iter().enumerate().max_by_key(|(_, l)| l.len()) else {
            break;
        };
        if longest.len() < 80 {
            break;
        }
        let mut cut = longest.len() / 2;
        while !longest.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut shorter = longest[..cut].to_string();
        if longest.ends_with('\n') {
            shorter.push('\n');
        }
        let mut candidate = best.clone();
        candidate.text = lines
            .iter()
            .enumerate()
            .map(|(i, l)| if i == li { shorter.as_str() } else { l })
            .collect();
        if attempt(&candidate, &mut tries) {
            best = candidate;
        } else {
            break;
        }
    }
    best
}
