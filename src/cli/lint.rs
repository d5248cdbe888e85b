//! `gpuops lint`: the run, its report, and the notes on what was not linted.

use super::output::{config_error, print};
use super::policy::load_policies;
use super::repo::read_repo;
use crate::{Color, FailOn, LintArgs};
use gpuops::config::{self, Settings};
use gpuops::diag::Severity;
use gpuops::report::progress::Progress;
use gpuops::report::{self, ChangedFiles, Format, OutputFile};
use gpuops::run::Linted;
use gpuops::source;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) fn lint(args: LintArgs) -> ExitCode {
    // Output files first: a path that cannot be written is a usage error, found before linting.
    let mut outputs = Vec::new();
    for (format, path) in &args.output_files {
        match OutputFile::prepare(*format, path) {
            Ok(o) => outputs.push(o),
            Err(e) => {
                eprintln!(
                    "error: --output-file {}={}: {e}",
                    format.name(),
                    path.display()
                );
                return ExitCode::from(2);
            }
        }
    }
    // With `--changed`, directories (and `-`) say what to lint and files what to report, wherever
    // they stand: pre-commit appends the staged files after the hook's `args`, so a flag there
    // (`--eks`) ends the `--changed` list and the files land among PATHS.
    let mut given = args.paths.clone();
    let changed = args.changed.clone().map(|list| {
        let (roots, files): (Vec<PathBuf>, Vec<PathBuf>) = given
            .drain(..)
            .chain(list)
            .partition(|p| p.as_os_str() == "-" || p.is_dir());
        given = roots;
        files
    });
    let paths = if given.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        given.clone()
    };
    let stdin = paths.iter().any(|p| p.as_os_str() == "-");
    let mut fs_paths: Vec<PathBuf> = paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();

    let config_path = gpuops::run::config_path(
        args.config.as_deref(),
        args.no_config,
        fs_paths.first().map_or(Path::new("."), |p| p.as_path()),
    );
    let mut settings = match &config_path {
        Some(path) => match config::load(path, &gpuops::rules::names()) {
            Ok(s) => s,
            Err(e) => {
                config_error(&e);
                return ExitCode::from(2);
            }
        },
        None => Settings::default(),
    };
    if let Some(f) = args.fail_on {
        settings.fail_on = match f {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Never => None,
        };
    }
    if args.eks {
        settings.eks = true;
    }
    if args.no_suppressions {
        settings.suppressions = false;
    }
    if args.no_render {
        settings.sources.kustomize = false;
        settings.sources.helm = false;
    }
    settings.sources.cache = super::cache::dir(args.no_cache);
    let policies = match load_policies(&settings, &args.policy) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let problems = policies.unknown_refs(&settings);
    if !problems.is_empty() {
        let path = config_path.unwrap_or_else(|| PathBuf::from(config::FILE_NAME));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        config_error(&config::ConfigError {
            path,
            text,
            problems,
        });
        return ExitCode::from(2);
    }
    if !args.rules.is_empty() {
        for r in &args.rules {
            if gpuops::rules::find(r).is_none() && policies.find(r).is_none() {
                let hint = gpuops::rules::closest(r)
                    .or_else(|| policies.closest(r))
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default();
                eprintln!("error: no rule named `{r}`{hint}");
                return ExitCode::from(2);
            }
        }
        settings.only = Some(args.rules.clone());
    }
    // `--changed` alone lints the repository the config belongs to, wherever pre-commit runs it.
    if changed.is_some()
        && given.is_empty()
        && let Some(root) = settings.root.as_ref().filter(|r| !r.as_os_str().is_empty())
    {
        fs_paths = vec![root.clone()];
    }
    // The cluster is read before the repository: a cluster that cannot be reached stops the
    // run before any work.
    let live = match super::context::live(args.live, &args.kube) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // Stdin typed at a terminal and --explain-sources' listing share the terminal with it.
    let progress = if stdin || args.explain_sources || args.explain_clusters {
        Progress::disabled()
    } else {
        Progress::stderr()
    };

    let mut repo = read_repo(
        &settings,
        &fs_paths,
        &[&args.context[..], &args.crd[..]].concat(),
        &progress,
    );
    if args.explain_sources {
        eprint!("{}", repo.sources.explain());
    }
    // What fails the run besides findings (SARIF lists them too), and warnings; printed once the
    // progress line is gone.
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for p in &repo.walk_problems {
        let missing = !std::path::Path::new(&p.path).exists()
            && fs_paths.iter().any(|r| source::display_path(r) == p.path);
        if missing {
            errors.push(format!("{}: {}", p.path, p.message));
        } else {
            warnings.push(format!("{}: {}", p.path, p.message));
        }
    }
    errors.extend(
        repo.load_problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message)),
    );
    let fatal = !errors.is_empty();
    if stdin {
        let mut buf = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
            eprintln!("error: reading stdin: {e}");
            return ExitCode::from(2);
        }
        repo.files.push(source::from_bytes("<stdin>".into(), buf));
    }
    repo.files.extend(live);

    if args.explain_clusters {
        eprint!("{}", gpuops::run::explain_clusters(&repo.files, &settings));
    }
    progress.linting(
        repo.files.iter().filter(|f| !f.is_context()).count(),
        repo.files.iter().map(|f| f.docs.len()).sum(),
        gpuops::rules::all()
            .iter()
            .filter(|r| gpuops::rule_enabled(&settings, r.name))
            .count(),
    );
    // The process ends after the report: the policy input is left to the exit.
    gpuops::exit_after_lint();
    let Linted { mut outcome, files } = gpuops::run::lint_repo(repo, &settings, Some(&policies));
    progress.finish();
    // A policy that failed on this input is an error of the run; the others still reported.
    errors.extend(outcome.policy_errors.iter().map(ToString::to_string));
    let fatal = fatal || !outcome.policy_errors.is_empty();
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if let Some(changed) = &changed {
        ChangedFiles::new(changed).retain(&mut outcome.diagnostics, &files);
    }
    let code = if fatal {
        2
    } else {
        report::exit_code(&outcome.diagnostics, settings.fail_on)
    };
    let run = report::Run {
        diagnostics: &outcome.diagnostics,
        files: &files,
        documents: outcome.documents,
        objects: outcome.objects,
        exit_code: code,
        fail_on: settings.fail_on,
        errors: &errors,
    };
    let format = args.format;
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    print(&report::emit(format, &run, color));
    if matches!(format, Format::Human) {
        for n in &outcome.notes {
            eprintln!("{n}");
        }
    }
    let mut code = code;
    for o in outputs {
        let path = o.path.display().to_string();
        // Files never get color: they are read by tools, or later.
        let text = report::emit(o.format, &run, false);
        if let Err(e) = o.commit(&text) {
            eprintln!("error: --output-file {path}: {e}");
            code = 2;
        }
    }
    // Freeing millions of tree nodes one by one costs more than the process exit does.
    std::mem::forget(files);
    ExitCode::from(code)
}
