//! `--output-file FORMAT=PATH`: more outputs from one run (SARIF for code scanning while the log
//! shows the human report). Each file is prepared before linting, so a bad path fails fast, and
//! replaced atomically, so a reader never sees half a report.

use super::Format;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A report file to be written at the end of the run: its temporary file already exists beside
/// the target.
#[derive(Debug)]
pub struct OutputFile {
    pub format: Format,
    pub path: PathBuf,
    file: AtomicFile,
}

/// A file replaced whole at the end (`--output-file`, `context pull -o`): a temporary file
/// beside the target, renamed over it by [`AtomicFile::commit`]; dropped uncommitted, it leaves
/// nothing behind.
#[derive(Debug)]
pub struct AtomicFile {
    pub path: PathBuf,
    tmp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Creates the parent directories and a temporary file beside `path`: whatever would make the
    /// final write fail (a read-only directory, a path that is a directory) fails here.
    pub fn prepare(path: &Path) -> Result<Self, String> {
        let shown = path.display();
        if path.is_dir() {
            return Err(format!("{shown} is a directory"));
        }
        let Some(name) = path.file_name() else {
            return Err(format!("{shown} names no file"));
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        let mut b = tempfile::Builder::new();
        b.prefix(".gpuops-").suffix(".tmp");
        #[cfg(unix)]
        {
            // Reports and context files are read by other tools and users, not secrets: the
            // usual file mode, not the temporary file's owner-only one.
            use std::os::unix::fs::PermissionsExt;
            b.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = b
            .tempfile_in(&parent)
            .map_err(|e| format!("{}: {e}", parent.display()))?;
        Ok(AtomicFile {
            path: parent.join(name),
            tmp,
        })
    }

    /// Writes the text and renames it over the target.
    pub fn commit(mut self, text: &str) -> std::io::Result<()> {
        self.tmp.write_all(text.as_bytes())?;
        self.tmp.as_file().sync_all()?;
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

impl OutputFile {
    /// Parses `FORMAT=PATH`.
    pub fn parse_spec(spec: &str) -> Result<(Format, PathBuf), String> {
        let names = || {
            Format::ALL
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some((format, path)) = spec.split_once('=') else {
            return Err(format!(
                "expected FORMAT=PATH (e.g. sarif=gpuops.sarif), got `{spec}`; formats: {}",
                names()
            ));
        };
        let Some(f) = Format::parse(format) else {
            return Err(format!("unknown format `{format}`; formats: {}", names()));
        };
        if path.is_empty() {
            return Err(format!("no path after `{format}=`"));
        }
        Ok((f, PathBuf::from(path)))
    }

    /// The report's [`AtomicFile`], prepared now.
    pub fn prepare(format: Format, path: &Path) -> Result<Self, String> {
        let file = AtomicFile::prepare(path)?;
        Ok(OutputFile {
            format,
            path: file.path.clone(),
            file,
        })
    }

    /// Writes the report and renames it over the target.
    pub fn commit(self, text: &str) -> std::io::Result<()> {
        self.file.commit(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            OutputFile::parse_spec("sarif=out/a.sarif"),
            Ok((Format::Sarif, PathBuf::from("out/a.sarif")))
        );
        assert_eq!(
            OutputFile::parse_spec("junit=a=b.xml"),
            Ok((Format::Junit, PathBuf::from("a=b.xml")))
        );
        assert!(
            OutputFile::parse_spec("xml=a")
                .unwrap_err()
                .contains("formats: human")
        );
        assert!(OutputFile::parse_spec("a.sarif").is_err());
        assert!(OutputFile::parse_spec("json=").is_err());
    }

    #[test]
    fn writes_through_a_temporary_file_in_new_directories() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("reports/ci/gpuops.xml");
        let out = OutputFile::prepare(Format::Junit, &target).unwrap();
        assert_eq!(
            std::fs::read_dir(target.parent().unwrap()).unwrap().count(),
            1
        );
        out.commit("<x/>").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "<x/>");
        assert_eq!(
            std::fs::read_dir(target.parent().unwrap()).unwrap().count(),
            1
        );
        assert!(OutputFile::prepare(Format::Json, d.path()).is_err());
    }
}
