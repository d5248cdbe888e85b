//! Benchmark on a generated multi-team GPU platform monorepo (shape and planted mistakes: see
//! `repo_gen/mod.rs`). The repo is generated once per size under `target/bench-repo-<files>/` and
//! reused while its `.complete` marker is there. Every timing is the best of `BENCH_RUNS` runs
//! (default 3).
//!
//! ```sh
//! cargo bench --bench lint                         # 10,000 files (~50,000 objects, ~5,000 NodePools)
//! BENCH_FILES=1000 cargo bench --bench lint        # another size
//! BENCH_RUNS=1 BENCH_FILES=2000 cargo bench --bench lint
//! BENCH_RULES=1 BENCH_FILES=1000 cargo bench --bench lint   # each rule alone, on one prebuilt index
//! BENCH_ONE=gpu-toleration-missing BENCH_FILES=1000 cargo bench --bench lint   # one rule
//! BENCH_SIZES=1000,2000,4000,10000 cargo bench --bench lint # a markdown table row per size
//! BENCH_POLICIES=1 cargo bench --bench lint        # lint (and the whole run) without, then with the bundled pack
//! BENCH_PACK=1 BENCH_RUNS=10 cargo bench --bench lint  # the bundled pack alone on one index, then each policy alone (wall and CPU; to profile it)
//! BENCH_FLOOR=1 cargo bench --bench lint           # the parser floor: saphyr events, + tree, + load
//! BENCH_KUSTOMIZE=1 cargo bench --bench lint       # 60 kustomizations through the binary: first run, second (cached), one patch changed
//! ```
//!
//! The default mode prints files, documents, objects, NodePools, YAML bytes, the seconds of
//! walk + parse, index and full lint, findings per rule next to the number planted, and the peak
//! RSS (`VmHWM`). Peak RSS only grows within a process, so measure it per size in separate
//! processes:
//!
//! ```sh
//! for n in 1000 2000 4000; do BENCH_FILES=$n BENCH_RUNS=1 cargo bench --bench lint | grep 'peak RSS'; done
//! # or, without cargo in the measurement, run the bench binary under GNU time:
//! bin=$(cargo bench --bench lint --no-run 2>&1 | grep -o 'target/[^ )]*lint-[0-9a-f]*')
//! BENCH_FILES=1000 BENCH_RUNS=1 /usr/bin/time -v "$bin" --bench 2>&1 | grep 'Maximum resident'
//! ```

mod kustomize_gen;
mod repo_gen;

use gpuops::config::Settings;
use gpuops::index::Index;
use gpuops::rules::{self, Ctx, Rule};
use gpuops::source::{self, Discovery, SourceFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// The allocator the binary uses (src/main.rs), so the figures are the CLI's.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    gpuops::tune_allocator();
    let runs = env_usize("BENCH_RUNS", 3).max(1);
    if let Some(sizes) = env_text("BENCH_SIZES") {
        sizes_table(&sizes, runs);
        return;
    }
    if env_text("BENCH_KUSTOMIZE").is_some() {
        kustomize_gen::run(runs);
        return;
    }
    let size = env_usize("BENCH_FILES", 10_000);
    let (root, summary) = prepare(size);
    // Opt-in rules on: every planted mistake is counted.
    let settings = gpuops::rules::with_opt_in(Settings::default());

    if let Some(name) = env_text("BENCH_ONE") {
        let Some(rule) = rules::find(&name) else {
            let hint =
                rules::closest(&name).map_or(String::new(), |c| format!(" (did you mean `{c}`?)"));
            eprintln!("BENCH_ONE: no rule `{name}`{hint}");
            std::process::exit(2);
        };
        let (parse, files) = best_of(runs, || load(&root));
        let (index, ix) = best_of(runs, || Index::build(&files, &settings));
        println!(
            "walk + parse {:.3} s, index {:.3} s",
            parse.as_secs_f64(),
            index.as_secs_f64()
        );
        let (took, found) = best_of(runs, || run_rule(&ix, rule));
        println!(
            "{}: {found} findings, {:.3} s (best of {runs})",
            rule.name,
            took.as_secs_f64()
        );
        return;
    }

    if env_text("BENCH_FLOOR").is_some() {
        floor(&root, runs);
        return;
    }

    if env_text("BENCH_RULES").is_some() {
        let (parse, files) = best_of(runs, || load(&root));
        let (index, ix) = best_of(runs, || Index::build(&files, &settings));
        println!(
            "walk + parse {:.3} s, index {:.3} s",
            parse.as_secs_f64(),
            index.as_secs_f64()
        );
        for rule in rules::all() {
            let (took, found) = best_of(runs, || run_rule(&ix, rule));
            println!(
                "{:40} {:8.3} s {found:7} findings",
                rule.name,
                took.as_secs_f64()
            );
        }
        return;
    }

    if env_text("BENCH_PACK").is_some() {
        // The bundled pack alone on one prebuilt index: input document, evaluation, findings
        // (what a profiler should look at when the pack's cost is the question).
        let (parse, files) = best_of(1, || load(&root));
        let (index, ix) = best_of(1, || Index::build(&files, &settings));
        let (with, pack) = with_bundled_policies(&settings);
        let pack = pack.as_ref();
        println!(
            "walk + parse {:.3} s, index {:.3} s",
            parse.as_secs_f64(),
            index.as_secs_f64()
        );
        // The whole pack, then each policy alone (the parts of the input it reads, and its
        // evaluation).
        let mut runs_of = vec![("the whole pack", with.clone())];
        for m in pack.iter().flat_map(|p| p.policies.iter()) {
            let mut one = with.clone();
            one.only = Some(vec![m.name.to_string()]);
            runs_of.push((m.name, one));
        }
        for (name, s) in &runs_of {
            // CPU time as well as wall: in a whole lint the rules keep the other core busy, so
            // the pack costs what it takes of both cores.
            let cpu = cpu_seconds();
            let (took, run) = best_of(runs, || gpuops::policy::run(&ix, s, pack, None));
            let cpu = cpu_seconds().map(|end| (end - cpu.unwrap_or(end)) / runs as f64);
            println!(
                "  {name:36} {:.3} s best, {} CPU s mean ({} findings)",
                took.as_secs_f64(),
                cpu.map_or("?".to_string(), |c| format!("{c:.3}")),
                run.diagnostics.len()
            );
        }
        return;
    }

    if env_text("BENCH_POLICIES").is_some() {
        let (parse, files) = best_of(runs, || load(&root));
        println!("walk + parse {:.3} s", parse.as_secs_f64());
        let (plain, out) = best_of(runs, || gpuops::lint(&files, &settings));
        let (with, pack) = with_bundled_policies(&settings);
        let pack = pack.as_ref();
        let (policies, out_p) = best_of(runs, || gpuops::lint_with(&files, &with, pack));
        println!(
            "lint without policies {:9.3} s ({} findings)",
            plain.as_secs_f64(),
            out.diagnostics.len()
        );
        println!(
            "lint with the bundled pack {:9.3} s ({} findings, {} policy errors): +{:.1} %",
            policies.as_secs_f64(),
            out_p.diagnostics.len(),
            out_p.policy_errors.len(),
            (policies.as_secs_f64() / plain.as_secs_f64() - 1.0) * 100.0
        );
        // What a user waits for: the whole run, reading and parsing included.
        let whole = |lint: Duration| (parse + lint).as_secs_f64();
        println!(
            "walk + parse + lint: {:.3} s without, {:.3} s with the pack: +{:.1} %",
            whole(plain),
            whole(policies),
            (whole(policies) / whole(plain) - 1.0) * 100.0
        );
        let ix = Index::build(&files, &settings);
        let (alone, _) = best_of(runs, || gpuops::policy::run(&ix, &with, pack, None));
        println!(
            "  the pack alone {:9.3} s (input, evaluation, findings)",
            alone.as_secs_f64()
        );
        let (input, _) = best_of(runs, || gpuops::policy::input::build(&ix, None));
        println!("  input document {:9.3} s", input.as_secs_f64());
        let (both, _) = best_of(runs, || drop(gpuops::policy::input::build(&ix, None)));
        println!(
            "  input document, built and dropped {:9.3} s",
            both.as_secs_f64()
        );
        for b in gpuops::policy::bundled::PACK {
            let mut one = settings.clone();
            one.only = Some(vec![b.name.to_string()]);
            let (took, _) = best_of(runs, || gpuops::policy::run(&ix, &one, None, None));
            println!(
                "  {:40} {:9.3} s (input included)",
                b.name,
                took.as_secs_f64()
            );
        }
        let mut found: BTreeMap<&str, usize> = BTreeMap::new();
        for d in out_p
            .diagnostics
            .iter()
            .filter(|d| d.rule.starts_with("policy/"))
        {
            *found.entry(d.rule).or_default() += 1;
        }
        for (rule, n) in found {
            println!("  {rule:40} {n:7}");
        }
        return;
    }

    let (parse, files) = best_of(runs, || load(&root));
    let after_parse = (status_mib("VmRSS:"), status_mib("VmHWM:"));
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let (index, pools) = best_of(runs, || Index::build(&files, &settings).nodepools.len());
    let after_index = status_mib("VmHWM:");
    let (lint, out) = best_of(runs, || gpuops::lint(&files, &settings));

    println!(
        "repo {} (generated: {} files, {} bytes, {} objects, {} planted findings)",
        root.display(),
        summary.files,
        summary.bytes,
        summary.objects,
        summary.expected.values().sum::<usize>()
    );
    println!(
        "files {}, documents {}, objects {}, NodePools {pools}, YAML {:.1} MiB ({bytes} bytes)",
        out.files,
        out.documents,
        out.objects,
        bytes as f64 / (1024.0 * 1024.0)
    );
    println!(
        "kinds: {}",
        summary
            .kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("best of {runs}, {} threads:", rayon::current_num_threads());
    println!("  walk + parse {:9.3} s", parse.as_secs_f64());
    println!("  index        {:9.3} s", index.as_secs_f64());
    println!(
        "  lint         {:9.3} s (index + every rule, after parsing)",
        lint.as_secs_f64()
    );
    println!("findings {}", out.diagnostics.len());
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &out.diagnostics {
        *found.entry(d.rule).or_default() += 1;
    }
    println!("  {:40} {:>7} {:>7}", "rule", "found", "planted");
    for rule in rules::all() {
        let n = found.get(rule.name).copied().unwrap_or(0);
        let planted = summary.expected.get(rule.name).copied().unwrap_or(0);
        let flag = if n == planted { "" } else { "  <- differs" };
        println!("  {:40} {n:7} {planted:7}{flag}", rule.name);
    }
    let mib = |v: Option<f64>| v.map_or("?".to_string(), |m| format!("{m:.1} MiB"));
    println!(
        "memory: {} resident after parsing (peak {}), peak {} after indexing",
        mib(after_parse.0),
        mib(after_parse.1),
        mib(after_index)
    );
    println!("peak RSS {}", peak_rss());
}

/// A `/proc/self/status` figure in MiB (`VmRSS:` now, `VmHWM:` the peak so far).
fn status_mib(field: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = s
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib as f64 / 1024.0)
}

/// `BENCH_SIZES=1000,2000`: one markdown row per size, to see how time grows with the repo.
fn sizes_table(list: &str, runs: usize) {
    let mut sizes = Vec::new();
    for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match s.replace('_', "").parse::<usize>() {
            Ok(n) => sizes.push(n),
            Err(_) => {
                eprintln!("BENCH_SIZES: `{s}` is not a number");
                std::process::exit(2);
            }
        }
    }
    let settings = gpuops::rules::with_opt_in(Settings::default());
    println!("best of {runs}, {} threads", rayon::current_num_threads());
    println!();
    println!("| files | objects | pools | parse s | lint s | total s | findings |");
    println!("|------:|--------:|------:|--------:|-------:|--------:|---------:|");
    for size in sizes {
        let (root, _) = prepare(size);
        let (parse, files) = best_of(runs, || load(&root));
        let pools = Index::build(&files, &settings).nodepools.len();
        let (lint, out) = best_of(runs, || gpuops::lint(&files, &settings));
        println!(
            "| {} | {} | {pools} | {:.3} | {:.3} | {:.3} | {} |",
            out.files,
            out.objects,
            parse.as_secs_f64(),
            lint.as_secs_f64(),
            (parse + lint).as_secs_f64(),
            out.diagnostics.len()
        );
    }
}

/// Every bundled policy on, with the allow-lists a platform team would configure, so that
/// each policy does its full work: accelerators for every tenth team's namespace, and the
/// registries the repository's images come from (plus NVIDIA's): the settings and the pack.
fn with_bundled_policies(settings: &Settings) -> (Settings, Option<gpuops::policy::Policies>) {
    let mut s = settings.clone();
    let accelerators: serde_json::Map<String, serde_json::Value> = (0..1000)
        .step_by(10)
        .map(|t| (format!("team-{t:04}"), serde_json::json!(["h100", "a100"])))
        .collect();
    let data = serde_json::json!({
        "namespace_accelerators": accelerators,
        "allowed_registries": ["nvcr.io/nvidia", "registry.example.com", "docker.io/rayproject", "docker.io/vllm"],
    });
    let pack = gpuops::policy::Policies::load(&[], Some(&data)).ok();
    if let Some(p) = &pack {
        for m in &p.policies {
            let level = match m.severity {
                gpuops::diag::Severity::Error => gpuops::config::Level::Error,
                gpuops::diag::Severity::Warning => gpuops::config::Level::Warning,
            };
            s.rules.insert(m.name.to_string(), level);
        }
    }
    (s, pack)
}

/// The generated repo for `size` files (generated now unless a complete one is there).
fn prepare(size: usize) -> (PathBuf, repo_gen::Summary) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/bench-repo-{size}"));
    let start = Instant::now();
    let summary = repo_gen::ensure(&root, size);
    let took = start.elapsed();
    // Only worth a line when it really generated something.
    if took > Duration::from_millis(500) {
        eprintln!(
            "generated {} in {:.1} s",
            root.display(),
            took.as_secs_f64()
        );
    }
    (root, summary)
}

/// Discovery and parsing, as `gpuops lint <root>` does them.
fn load(root: &Path) -> Vec<SourceFile> {
    let d = Discovery {
        exclude: None,
        exclude_root: None,
    };
    let (paths, _) = d.walk(&[root.to_path_buf()]);
    source::load(&paths).0
}

/// The parser floor: the same files (read beforehand) through saphyr-parser's events alone,
/// then through gpuops's tree builder, both on every core. What parsing costs without a tree,
/// with one, and what `load` adds (reading, YAML 1.1 checks, suppression comments).
fn floor(root: &Path, runs: usize) {
    use rayon::prelude::*;
    let d = Discovery {
        exclude: None,
        exclude_root: None,
    };
    let (paths, _) = d.walk(&[root.to_path_buf()]);
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let (events, n) = best_of(runs, || {
        texts
            .par_iter()
            .map(|t| saphyr_parser::Parser::new_from_str(t).count())
            .sum::<usize>()
    });
    let (tree, _) = best_of(runs, || {
        texts
            .par_iter()
            .map(|t| gpuops::yaml::parse(t, Default::default()).docs.len())
            .sum::<usize>()
    });
    let (full, _) = best_of(runs, || load(root).len());
    let mb = bytes as f64 / 1e6;
    let rate = |t: Duration| mb / t.as_secs_f64();
    println!("{} files, {mb:.1} MB, {n} events", texts.len());
    println!(
        "  saphyr events only   {:.3} s ({:.0} MB/s)",
        events.as_secs_f64(),
        rate(events)
    );
    println!(
        "  events + tree        {:.3} s ({:.0} MB/s)",
        tree.as_secs_f64(),
        rate(tree)
    );
    println!(
        "  walk + read + parse  {:.3} s ({:.0} MB/s)",
        full.as_secs_f64(),
        rate(full)
    );
}

/// One rule over the index as a lint runs it: a chunked rule chunk by chunk (one core), so
/// what it does once per chunk counts as often as it does in a lint.
fn run_rule(ix: &Index, rule: &'static Rule) -> usize {
    let mut out = Vec::new();
    if rule.chunked {
        for range in ix.chunks(gpuops::run::RULE_CHUNK) {
            (rule.check)(&Ctx::chunk(ix, rule, range), &mut out);
        }
    } else {
        (rule.check)(&Ctx::new(ix, rule), &mut out);
    }
    out.len()
}

/// The fastest of `runs` runs, and the last result (the previous one is dropped before each run,
/// so two results never inflate the peak RSS together).
/// User + system CPU seconds of this process so far, all threads (Linux `/proc`).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ').skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    // Clock ticks; 100 per second on every Linux this runs on.
    Some((utime + stime) / 100.0)
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last: Option<T> = None;
    for _ in 0..runs {
        drop(last.take());
        let start = Instant::now();
        let r = f();
        best = best.min(start.elapsed());
        last = Some(r);
    }
    match last {
        Some(r) => (best, r),
        // `runs` is at least 1.
        None => (best, f()),
    }
}

fn peak_rss() -> String {
    match status_mib("VmHWM:") {
        Some(m) => format!("{m:.1} MiB (VmHWM)"),
        None => "unknown (no /proc/self/status)".to_string(),
    }
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn env_usize(name: &str, default: usize) -> usize {
    match env_text(name) {
        None => default,
        Some(v) => match v.replace('_', "").parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("{name}: `{v}` is not a number");
                std::process::exit(2);
            }
        },
    }
}
