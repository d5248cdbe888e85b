//! `gpuops man`: the man page on stdout, or one page per command into a directory.

use super::output::print;
use crate::command;
use gpuops::source;
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn man(output: Option<PathBuf>) -> ExitCode {
    let Some(dir) = output else {
        let mut out = Vec::new();
        return match clap_mangen::Man::new(command()).render(&mut out) {
            Ok(()) => {
                print(&String::from_utf8_lossy(&out));
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    };
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        // One page per command: gpuops.1, gpuops-lint.1, …
        clap_mangen::generate_to(command(), &dir)
    });
    match written {
        Ok(()) => {
            println!("wrote the man pages into {}", source::display_path(&dir));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", dir.display());
            ExitCode::from(2)
        }
    }
}
