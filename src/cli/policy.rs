//! Rego policy directories: loading them for a run or a listing, and `gpuops policy test`.

use super::output::print;
use super::repo::cwd_settings;
use gpuops::config::Settings;
use gpuops::policy::Policies;
use std::path::PathBuf;
use std::process::ExitCode;

/// The policy directories of a run: the config's `policies:` (relative to the config's
/// directory), then `--policy` ones.
fn policy_dirs(settings: &Settings, cli: &[PathBuf]) -> Vec<PathBuf> {
    let root = settings.root.clone().unwrap_or_default();
    settings
        .policy_dirs
        .iter()
        .map(|d| root.join(d))
        .chain(cli.iter().cloned())
        .collect()
}

/// The bundled pack and the run's policy directories; a policy that cannot load is exit 2.
pub(super) fn load_policies(settings: &Settings, cli: &[PathBuf]) -> Result<Policies, ExitCode> {
    Policies::load(&policy_dirs(settings, cli), settings.policy_data.as_ref()).map_err(|e| {
        eprintln!("error: invalid policy: {e}");
        ExitCode::from(2)
    })
}

/// The policies `gpuops rules` and `gpuops rule` describe.
pub(crate) fn listing_policies(cli: &[PathBuf]) -> Result<Policies, ExitCode> {
    load_policies(&cwd_settings()?, cli)
}

pub(crate) fn policy_test(dirs: Vec<PathBuf>) -> ExitCode {
    let dirs = if dirs.is_empty() {
        match cwd_settings() {
            Ok(s) => policy_dirs(&s, &[]),
            Err(code) => return code,
        }
    } else {
        dirs
    };
    match gpuops::policy::testing::run(&dirs) {
        Ok(report) => {
            print(&report.render());
            if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: invalid policy: {e}");
            ExitCode::from(2)
        }
    }
}
