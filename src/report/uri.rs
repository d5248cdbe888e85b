//! SARIF artifact locations: file paths as RFC 3986 URI references.
//!
//! A path is not a URI: `my job #1.yaml` would end at the `#` (a fragment), `a:b.yaml` would
//! start with a scheme, `%d` is a broken escape. Every byte outside the unreserved set and `/`
//! is percent-encoded. Relative paths (to the directory gpuops ran in) carry the
//! `uriBaseId` [`SRCROOT`], which code scanning resolves against the checkout; absolute ones
//! become `file:` URIs. Pseudo-files (`<stdin>`, `<live:context>`) have no URI, only a
//! description; the output of a build (`k/kustomization.yaml (kustomize build)`) points at the
//! file it was built from.

use serde_json::{Value, json};
use std::fmt::Write;

/// The base id of relative artifact URIs: the directory gpuops ran in.
pub const SRCROOT: &str = "%SRCROOT%";

/// What a path names, for SARIF.
#[derive(Debug, PartialEq, Eq)]
pub enum Artifact {
    /// A file relative to [`SRCROOT`]: the encoded relative reference.
    Relative(String),
    /// A file outside it: a `file:` URI.
    Absolute(String),
    /// The output of a build of this file: lines are the output's, not the file's.
    BuiltFrom(Box<Artifact>),
    /// Not a file (standard input, a live cluster): a description.
    Pseudo(String),
}

impl Artifact {
    pub fn of(path: &str) -> Artifact {
        if let Some(name) = path.strip_prefix('<').and_then(|p| p.strip_suffix('>')) {
            return Artifact::Pseudo(match name {
                "stdin" => "standard input".to_string(),
                other => other.to_string(),
            });
        }
        if let Some((file, _)) = path.split_once(" (")
            && path.ends_with(')')
        {
            return Artifact::BuiltFrom(Box::new(Artifact::of(file)));
        }
        if is_absolute(path) {
            return Artifact::Absolute(file_uri(path));
        }
        Artifact::Relative(encode(path))
    }

    /// Whether lines of the path's text are lines of the artifact named (not so for a build's
    /// output, which the file it was built from does not hold).
    pub fn has_lines(&self) -> bool {
        !matches!(self, Artifact::BuiltFrom(_))
    }

    /// The SARIF `artifactLocation` object; `path` as written goes in the description when the
    /// URI alone would not say it.
    pub fn location(&self, path: &str) -> Value {
        match self {
            Artifact::Relative(uri) => json!({"uri": uri, "uriBaseId": SRCROOT}),
            Artifact::Absolute(uri) => json!({"uri": uri}),
            Artifact::BuiltFrom(file) => {
                let mut l = file.location(path);
                l["description"] = json!({"text": path});
                l
            }
            Artifact::Pseudo(what) => json!({"description": {"text": what}}),
        }
    }
}

/// `originalUriBaseIds`: where [`SRCROOT`] is (the current directory), when it is known.
pub fn base_ids() -> Value {
    let mut root = json!({"description": {"text": "the directory gpuops ran in"}});
    if let Ok(cwd) = std::env::current_dir()
        && let Some(dir) = cwd.to_str()
    {
        let mut uri = file_uri(&dir.replace('\\', "/"));
        if !uri.ends_with('/') {
            uri.push('/');
        }
        root["uri"] = json!(uri);
    }
    json!({ SRCROOT: root })
}

fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with('/') || (b.len() > 2 && b[0].is_ascii_alphabetic() && &b[1..3] == b":/")
}

/// `file:///a/b` (`file:///C:/a` on Windows).
fn file_uri(path: &str) -> String {
    let rest = path.strip_prefix('/').unwrap_or(path);
    // A drive letter's colon stays: it is part of the path, not a scheme, after `file:///`.
    match rest.split_once(':') {
        Some((drive, tail)) if drive.len() == 1 && tail.starts_with('/') => {
            format!("file:///{drive}:{}", encode(tail))
        }
        _ => format!("file:///{}", encode(rest)),
    }
}

/// Percent-encodes every byte but RFC 3986's unreserved characters and `/`.
pub fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(encode("my job #1.yaml"), "my%20job%20%231.yaml");
        assert_eq!(encode("a,b:c%d.yaml"), "a%2Cb%3Ac%25d.yaml");
        assert_eq!(encode("dir/é.yaml"), "dir/%C3%A9.yaml");
        assert_eq!(
            Artifact::of("k8s/a b.yaml"),
            Artifact::Relative("k8s/a%20b.yaml".into())
        );
        assert_eq!(
            Artifact::of("/tmp/x y/a.yaml"),
            Artifact::Absolute("file:///tmp/x%20y/a.yaml".into())
        );
        assert_eq!(
            Artifact::of("C:/w/a.yaml"),
            Artifact::Absolute("file:///C:/w/a.yaml".into())
        );
    }

    #[test]
    fn stdin_and_builds_are_told_apart() {
        let stdin = Artifact::of("<stdin>");
        assert!(stdin.has_lines());
        assert_eq!(
            stdin.location("<stdin>"),
            json!({"description": {"text": "standard input"}})
        );
        let built = Artifact::of("o/kustomization.yaml (kustomize build for app x)");
        assert!(!built.has_lines());
        assert_eq!(
            built.location("o/kustomization.yaml (kustomize build for app x)"),
            json!({
                "uri": "o/kustomization.yaml",
                "uriBaseId": SRCROOT,
                "description": {"text": "o/kustomization.yaml (kustomize build for app x)"},
            })
        );
    }
}
