//! `gpuops why`: one object's placement explained, for a human or as JSON.

use super::output::print;
use super::repo::{found_settings, read_repo};
use crate::{WhyArgs, WhyFormat};
use gpuops::report::progress::Progress;
use std::path::PathBuf;
use std::process::ExitCode;

/// `gpuops why`: the same discovery, config and sources as lint, then one object explained.
pub(crate) fn why(args: WhyArgs) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let Some(mut settings) = found_settings(args.config.as_ref(), args.no_config, &paths[0]) else {
        return ExitCode::from(2);
    };
    settings.eks |= args.eks;
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
    let target = gpuops::why::Target::parse(&args.target, |p| std::path::Path::new(p).is_file());
    let report = match gpuops::why::explain(&files, &settings, &target) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}", e.message);
            return ExitCode::from(2);
        }
    };
    match args.format {
        WhyFormat::Human => print(&gpuops::why::human(&report)),
        WhyFormat::Json => match serde_json::to_string_pretty(&report) {
            Ok(s) => print(&format!("{s}\n")),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
    }
    ExitCode::SUCCESS
}
