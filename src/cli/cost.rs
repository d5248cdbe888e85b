//! `gpuops cost`: the worst-case $/h of the files lint would read.

use super::output::print;
use super::repo::{found_settings, read_repo};
use crate::{CostArgs, CostFormat};
use gpuops::report::progress::Progress;
use std::path::PathBuf;
use std::process::ExitCode;

/// `gpuops cost`: the files `lint` would read (and the config's context), priced.
pub(crate) fn cost(args: CostArgs) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let Some(mut settings) = found_settings(args.config.as_ref(), args.no_config, &paths[0]) else {
        return ExitCode::from(2);
    };
    settings.sources.cache = super::cache::dir(args.no_cache);
    let live = match super::context::live(args.live, &args.kube) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let repo = read_repo(&settings, &paths, &args.context, &Progress::disabled());
    let mut files = repo.files;
    files.extend(live);
    for p in repo.walk_problems.iter().chain(&repo.load_problems) {
        eprintln!("warning: {}: {}", p.path, p.message);
    }
    let ix = gpuops::index::Index::build(&files, &settings);
    let report = gpuops::cost::report(&ix, &settings.cost);
    let out = match args.format {
        CostFormat::Human => report.human(),
        CostFormat::Csv => report.csv(),
        CostFormat::Json => match serde_json::to_string_pretty(&report) {
            Ok(s) => format!("{s}\n"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    };
    print(&out);
    ExitCode::SUCCESS
}
