//! What the commands read: the config (its errors printed), and the repository via `run`.

use super::output::config_error;
use gpuops::config::Settings;
use std::path::PathBuf;
use std::process::ExitCode;

pub(super) use gpuops::run::read_repo;

/// The config found from the current directory (for commands without paths), or defaults.
pub(super) fn cwd_settings() -> Result<Settings, ExitCode> {
    gpuops::run::settings(None, false, std::path::Path::new(".")).map_err(|e| {
        config_error(&e);
        ExitCode::from(2)
    })
}

/// The config `--config` names, or the one found upward from `first`; `None` after reporting an
/// invalid one.
pub(super) fn found_settings(
    config: Option<&PathBuf>,
    no_config: bool,
    first: &std::path::Path,
) -> Option<Settings> {
    gpuops::run::settings(config.map(PathBuf::as_path), no_config, first)
        .map_err(|e| config_error(&e))
        .ok()
}
