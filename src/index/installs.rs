//! Which releases of the controllers gpuops knows the cluster's files install, and for which
//! objects each install speaks.

use super::Index;

/// A file that installs a Kueue release: the directory it speaks for, and the release.
#[derive(Debug, Clone, Copy)]
pub struct KueueInstall<'a> {
    /// Objects under this directory (`""`: every object) are installed for by it: the directory
    /// above the installing file's own (`sample/kueue/kustomization.yaml` speaks for
    /// `sample/workloads/…`), as side-by-side samples in one repository install different
    /// releases.
    pub scope: &'a str,
    /// Major and minor version.
    pub version: (u32, u32),
}

impl KueueInstall<'_> {
    /// Whether this install speaks for an object of the file at `path`.
    pub fn covers(&self, path: &str) -> bool {
        self.scope.is_empty()
            || path
                .strip_prefix(self.scope)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// Every Kueue install among the index's files: a release manifest
/// (`kubernetes-sigs/kueue/releases/download/v0.12.3/…`) or the controller image
/// (`registry.k8s.io/kueue/kueue:v0.12.3`). One pass over the files.
pub(super) fn kueue<'a>(ix: &Index<'a>) -> Vec<KueueInstall<'a>> {
    let mut out = Vec::new();
    for f in ix.file_ids.iter().filter_map(|&f| ix.files.get(f)) {
        let text: &str = &f.text;
        if !text.contains("kueue") {
            continue;
        }
        let scope = f.path.rsplitn(3, '/').nth(2).unwrap_or("");
        for marker in ["kueue/releases/download/v", "kueue/kueue:v"] {
            for (i, m) in text.match_indices(marker) {
                if let Some(version) = minor_version(&text[i + m.len()..]) {
                    out.push(KueueInstall { scope, version });
                }
            }
        }
    }
    out
}

/// `(0, 12)` of `0.12.3/manifests.yaml`.
fn minor_version(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}
