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
    /// Major and minor version; `None`: a release the files pin in a way that names no upstream
    /// version (an OpenShift operator subscription's channel).
    pub version: Option<(u32, u32)>,
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
/// (`kubernetes-sigs/kueue/releases/download/v0.12.3/…`), the controller image
/// (`registry.k8s.io/kueue/kueue:v0.12.3`), or the `kueue` chart at a version (a Terraform
/// `helm_release`'s `chart`/`version`, an Argo CD source's `chart`/`targetRevision`, a Flux
/// HelmRelease's `chart`/`version`). One pass over the files.
pub(super) fn kueue<'a>(ix: &Index<'a>) -> Vec<KueueInstall<'a>> {
    let mut out = Vec::new();
    for f in ix.file_ids.iter().filter_map(|&f| ix.files.get(f)) {
        let text: &str = &f.text;
        if !text.contains("kueue") {
            continue;
        }
        let scope = f.path.rsplitn(3, '/').nth(2).unwrap_or("");
        for marker in [
            "kueue/releases/download/",
            "kueue/kueue:",
            "kueue/charts/kueue:",
        ] {
            for (i, m) in text.match_indices(marker) {
                let rest = &text[i + m.len()..];
                let version = match rest.strip_prefix('v') {
                    Some(v) => minor_version(v),
                    // A shell variable (`…/download/$VERSION/…`), set in the same script.
                    None => variable(rest)
                        .and_then(|name| assigned(text, name))
                        .or_else(|| minor_version(rest)),
                };
                if let Some(version) = version {
                    out.push(KueueInstall {
                        scope,
                        version: Some(version),
                    });
                }
            }
        }
        out.extend(
            chart_versions(text)
                .into_iter()
                .chain(helm_cli_versions(text))
                .map(|version| KueueInstall {
                    scope,
                    version: Some(version),
                }),
        );
        // The Kueue operator through OLM (OpenShift's build of Kueue): its channels are the
        // vendor's releases, not upstream ones.
        // The same operator's `Kueue` object (`kueue.openshift.io`) says so too.
        let operator_cr = text.contains("kueue.openshift.io/v")
            && text.lines().any(|l| l.trim_end() == "kind: Kueue");
        if operator_cr || (text.contains("kind: Subscription") && text.contains("kueue-operator")) {
            out.push(KueueInstall {
                scope,
                version: None,
            });
        }
    }
    out
}

/// The versions of the `kueue` chart a file installs: each `chart` key naming it, with the
/// nearest `version` or `targetRevision` key of the same block (within a few lines either way).
fn chart_versions(text: &str) -> Vec<(u32, u32)> {
    use regex::Regex;
    use std::sync::LazyLock;
    static CHART: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*"?chart"?\s*[:=]\s*["']?(?:\S*/)?kueue["']?\s*,?\s*(?:#.*)?$"#)
            .expect("a valid pattern")
    });
    static VERSION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*"?(?:version|targetRevision)"?\s*[:=]\s*["']?v?(\d+\.\d+)"#)
            .expect("a valid pattern")
    });
    // A block's keys lie within this many bytes of each other.
    const NEAR: usize = 600;
    let versions: Vec<(usize, (u32, u32))> = VERSION
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(1)?;
            Some((m.start(), minor_version(m.as_str())?))
        })
        .collect();
    CHART
        .find_iter(text)
        .filter_map(|c| {
            versions
                .iter()
                .map(|&(at, v)| (at.abs_diff(c.start()), v))
                .filter(|&(d, _)| d <= NEAR)
                .min_by_key(|&(d, _)| d)
                .map(|(_, v)| v)
        })
        .collect()
}

/// The versions `helm install|upgrade … kueue … --version X` command lines install.
fn helm_cli_versions(text: &str) -> Vec<(u32, u32)> {
    text.lines()
        .filter(|l| l.contains("helm ") && l.contains("kueue") && l.contains("--version"))
        .filter_map(|l| {
            let rest = &l[l.find("--version")? + "--version".len()..];
            let rest = rest.trim_start_matches(['=', ' ', '"', '\'']);
            minor_version(rest.strip_prefix('v').unwrap_or(rest))
        })
        .collect()
}

/// The name of the shell variable `rest` starts with (`$VERSION/…`, `${KUEUE_VERSION}/…`).
fn variable(rest: &str) -> Option<&str> {
    let r = rest.strip_prefix('$')?;
    let r = r.strip_prefix('{').unwrap_or(r);
    let end = r
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(r.len());
    (end > 0).then(|| &r[..end])
}

/// The Kueue release a script assigns to `name` (`VERSION=v0.8.1`, `export KUEUE_VERSION="v0.11.4"`).
fn assigned(text: &str, name: &str) -> Option<(u32, u32)> {
    text.lines().find_map(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("export ").unwrap_or(l).trim_start();
        let value = l.strip_prefix(name)?.strip_prefix('=')?;
        let value = value.trim_start_matches(['"', '\'']);
        minor_version(value.strip_prefix('v')?)
    })
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

#[cfg(test)]
mod tests {
    use super::chart_versions;

    #[test]
    fn helm_command_lines_are_installs() {
        use super::helm_cli_versions;
        assert_eq!(
            helm_cli_versions(
                "helm install kueue oci://registry.k8s.io/kueue/charts/kueue --version 0.11.6 -n kueue-system\n"
            ),
            vec![(0, 11)]
        );
        assert_eq!(
            helm_cli_versions("helm upgrade --install kueue kueue/kueue --version=v0.16.1\n"),
            vec![(0, 16)]
        );
        assert!(
            helm_cli_versions("helm install gpu-operator nvidia/gpu-operator --version 25.3.0\n")
                .is_empty()
        );
    }

    #[test]
    fn a_release_through_a_shell_variable_is_an_install() {
        use super::{assigned, variable};
        let sh = "KUEUE_VERSION=v0.11.4\nkubectl apply -f https://github.com/kubernetes-sigs/kueue/releases/download/${KUEUE_VERSION}/manifests.yaml\n";
        assert_eq!(
            variable("${KUEUE_VERSION}/manifests.yaml"),
            Some("KUEUE_VERSION")
        );
        assert_eq!(variable("$VERSION/manifests.yaml"), Some("VERSION"));
        assert_eq!(assigned(sh, "KUEUE_VERSION"), Some((0, 11)));
        assert_eq!(
            assigned("export VERSION=\"v0.8.1\"\n", "VERSION"),
            Some((0, 8))
        );
        assert_eq!(assigned("OTHER_VERSION=v0.8.1\n", "VERSION"), None);
    }

    #[test]
    fn the_kueue_chart_at_a_version_is_an_install() {
        let tf = "resource \"helm_release\" \"kueue\" {\n  repository = \"oci://registry.k8s.io/kueue/charts\"\n  chart      = \"kueue\"\n  # a comment\n  version    = \"0.13.0\"\n}\n";
        assert_eq!(chart_versions(tf), vec![(0, 13)]);
        let argo = "source:\n  repoURL: registry.k8s.io/kueue/charts\n  targetRevision: v0.12.2\n  chart: kueue\n";
        assert_eq!(chart_versions(argo), vec![(0, 12)]);
        // Another chart, or the chart without a version, is none.
        assert!(chart_versions("chart: kueue-extras\nversion: 0.1.0\n").is_empty());
        assert!(chart_versions("chart: kueue\n").is_empty());
    }
}
