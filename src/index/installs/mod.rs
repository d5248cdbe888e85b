//! Which releases of the controllers gpuops knows the cluster's files install, and for which
//! objects each install speaks.

use super::Index;

mod applied;

/// A file that installs a release of a controller gpuops knows (Kueue, Karpenter): the
/// directory it speaks for, and the release.
#[derive(Debug, Clone, Copy)]
pub struct Install<'a> {
    /// Objects under this directory (`""`: every object) are installed for by it: the directory
    /// above the installing file's own (`sample/kueue/kustomization.yaml` speaks for
    /// `sample/workloads/…`), as side-by-side samples in one repository install different
    /// releases.
    pub scope: &'a str,
    /// Major and minor version; `None`: a release the files pin in a way that names no upstream
    /// version (an OpenShift operator subscription's channel).
    pub version: Option<(u32, u32)>,
}

/// A Kueue install (see [`Install`]).
pub type KueueInstall<'a> = Install<'a>;

impl Install<'_> {
    /// Whether this install speaks for an object of the file at `path`.
    pub fn covers(&self, path: &str) -> bool {
        self.scope.is_empty()
            || path
                .strip_prefix(self.scope)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl Index<'_> {
    /// Whether the Kueue installs that speak for the objects of file `file` (see
    /// [`Index::kueue_installs`]) are all releases older than v0.15, the first to serve
    /// `v1beta2`, or of a version the files do not name (and there is one): there `v1beta1` is
    /// what the cluster serves, and the queue-name annotation is still read.
    ///
    /// When no install speaks for the file, a repository that keeps several releases (a
    /// toolkit's module vendoring the ones it supports, the examples elsewhere) installs one of
    /// them into every cluster it builds: those speak for it. One sample's install does not
    /// speak for the samples beside it.
    pub fn kueue_before_v1beta2(&self, file: usize) -> bool {
        let Some(path) = self.files.get(file).map(|f| f.path.as_str()) else {
            return false;
        };
        let all = self.kueue_installs();
        let near: Vec<&KueueInstall> = all.iter().filter(|i| i.covers(path)).collect();
        let releases: std::collections::BTreeSet<_> = all.iter().map(|i| i.version).collect();
        let judged = match near.is_empty() {
            true if releases.len() >= 2 => all.iter().collect(),
            _ => near,
        };
        !judged.is_empty() && judged.iter().all(|i| i.version.is_none_or(|v| v < (0, 15)))
    }

    /// The newest release the Kueue installs that speak for the objects of file `file` install,
    /// when there are some and each names its release.
    pub fn kueue_release(&self, file: usize) -> Option<(u32, u32)> {
        let path = self.files.get(file)?.path.as_str();
        let near: Vec<Option<(u32, u32)>> = self
            .kueue_installs()
            .iter()
            .filter(|i| i.covers(path))
            .map(|i| i.version)
            .collect();
        near.iter()
            .copied()
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()
    }

    /// Whether any Kueue install the files hold speaks for the objects of file `file`.
    pub fn kueue_release_known(&self, file: usize) -> bool {
        self.files.get(file).is_some_and(|f| {
            self.kueue_installs()
                .iter()
                .any(|i| i.covers(f.path.as_str()))
        })
    }
}

/// How the files name one controller's release.
struct Product {
    /// A file that does not hold this names no release of it.
    needle: &'static str,
    /// Text followed by the release: a release URL, an image, an OCI chart with its tag, the
    /// `helm.sh/chart` label of the chart's rendered objects.
    markers: &'static [&'static str],
    /// The chart's name (`chart: kueue`, `helm install … kueue … --version`).
    chart: &'static str,
    /// The source repository, as a kustomize remote base names it (`…/config/default?ref=v0.10.2`).
    repo: &'static str,
    /// The controller image's repository, as a kustomize `images:` entry names it beside its
    /// `newTag`.
    image: &'static str,
    /// The shell variable its install guides pin the release with (`KARPENTER_VERSION=1.0.6`).
    variable: &'static str,
    /// What follows the needle where it is the name of an API group (`kueue.x-k8s.io`), as
    /// every object of the product's kinds and every pod queued or placed by it spells it.
    groups: &'static [&'static str],
}

const KUEUE: Product = Product {
    needle: "kueue",
    markers: &[
        "kueue/releases/download/",
        "kueue/kueue:",
        "kueue/charts/kueue:",
        "helm.sh/chart: kueue-",
    ],
    chart: "kueue",
    repo: "github.com/kubernetes-sigs/kueue",
    image: "kueue/kueue",
    variable: "KUEUE_VERSION",
    groups: &[".x-k8s.io"],
};

const KARPENTER: Product = Product {
    needle: "karpenter",
    markers: &[
        "karpenter/controller:",
        "karpenter/karpenter:",
        "helm.sh/chart: karpenter-",
        // The CRDs of a release (`…/karpenter-provider-aws/v1.6.2/pkg/apis/crds/…`).
        "raw.githubusercontent.com/aws/karpenter-provider-aws/",
        "raw.githubusercontent.com/aws/karpenter/",
    ],
    chart: "karpenter",
    repo: "github.com/aws/karpenter",
    image: "karpenter/controller",
    variable: "KARPENTER_VERSION",
    groups: &[".sh/", ".k8s.aws/"],
};

/// Every Kueue install among the index's files: a release manifest
/// (`kubernetes-sigs/kueue/releases/download/v0.12.3/…`), the controller image
/// (`registry.k8s.io/kueue/kueue:v0.12.3`), or the `kueue` chart at a version (a Terraform
/// `helm_release`'s `chart`/`version`, an Argo CD source's `chart`/`targetRevision`, a Flux
/// HelmRelease's `chart`/`version`), and the OpenShift build of Kueue. One pass over the files.
pub(super) fn kueue<'a>(ix: &Index<'a>) -> Vec<Install<'a>> {
    // A page that sets its queues on OpenShift AI 2 speaks for the objects beside and below it
    // only: a sibling example's README does not say what another example runs on.
    let on_openshift_ai = ix.files.iter().filter_map(|f| {
        let page = crate::source::pages::is_page(std::path::Path::new(&f.path));
        (page && crate::source::pages::names_openshift_ai(&f.text)).then(|| Install {
            scope: f.path.rsplit_once('/').map_or("", |(dir, _)| dir),
            version: None,
        })
    });
    let mut out: Vec<Install<'a>> = on_openshift_ai.collect();
    // An OLM Subscription installs the operator for the whole cluster, and a repository that
    // holds one is that cluster's configuration: it speaks for every object, wherever it lies.
    out.extend(
        ix.files
            .iter()
            .filter(|f| {
                !crate::source::pages::is_page(std::path::Path::new(&f.path))
                    && f.text.contains("kueue-operator")
                    && f.text.lines().any(|l| l.trim_end() == "kind: Subscription")
            })
            .map(|_| Install {
                scope: "",
                version: None,
            })
            .take(1),
    );
    out.extend(installs(ix, &KUEUE, |text| {
        // The Kueue operator through OLM (OpenShift's build of Kueue): its channels are the
        // vendor's releases, not upstream ones. The same operator's `Kueue` object
        // (`kueue.openshift.io`) and the label of the namespaces it manages say so too.
        let operator_cr = text.contains("kueue.openshift.io/v")
            && text.lines().any(|l| l.trim_end() == "kind: Kueue");
        operator_cr
            || (text.contains("kind: Subscription") && text.contains("kueue-operator"))
            || text.contains("openshift-kueue-operator")
            || text.contains("Red Hat build of Kueue")
            // A namespace opted in to that build's management.
            || text.contains("kueue.openshift.io/managed")
            || openshift_ai_kueue(text)
    }));
    out
}

/// Every Karpenter install among the index's files: the controller image
/// (`public.ecr.aws/karpenter/controller:v0.31.0`), the chart at a version (`helm_release`,
/// Argo CD, Flux, `helm upgrade --install karpenter … --version "${KARPENTER_VERSION}"`), or
/// objects rendered from the chart (`helm.sh/chart: karpenter-0.16.3`).
pub(super) fn karpenter<'a>(ix: &Index<'a>) -> Vec<Install<'a>> {
    installs(ix, &KARPENTER, |_| false)
}

/// The installs of `product` among the index's files; `unnamed` says whether a file installs a
/// release that names no upstream version.
fn installs<'a>(
    ix: &Index<'a>,
    product: &Product,
    unnamed: impl Fn(&str) -> bool,
) -> Vec<Install<'a>> {
    let mut out = Vec::new();
    // The releases the product's variable is pinned to, per directory (`env.sh` beside
    // `install.sh`), for a `helm` line of another file there that uses it.
    let dir = |path: &'a str| path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut pins: std::collections::HashMap<&str, Vec<(u32, u32)>> = Default::default();
    for f in ix.files {
        for v in pinned_versions(&f.text, product.variable) {
            let e = pins.entry(dir(&f.path)).or_default();
            if !e.contains(&v) {
                e.push(v);
            }
        }
    }
    // The directories whose Terraform builds a cluster: each stack installs its own releases,
    // so an install there speaks for that stack, not for the blueprints beside it.
    let stacks: Vec<&str> = ix
        .files
        .iter()
        .filter(|f| f.path.ends_with(".tf") && crate::source::terraform::builds_eks(&f.text))
        .map(|f| crate::source::terraform::stack_dir(&f.path))
        .filter(|d| !d.is_empty())
        .collect();
    // Every file of the repository, not only the cluster's: an install script belongs to no
    // cluster's files, and its directory says which objects it installs for.
    for f in ix.files {
        let text: &str = &f.text;
        // A page kept only for the objects it shows installs nothing.
        let page = f.path.ends_with(".md");
        let named = if page {
            text.contains(product.needle) || (product.needle == "kueue" && text.contains("Kueue"))
        } else {
            names_beyond_group(text, product) || (text.contains(product.needle) && unnamed(text))
        } || text.contains(product.variable);
        if !named
            || (crate::source::pages::is_page(std::path::Path::new(&f.path))
                && !crate::source::pages::installs_release(text))
        {
            continue;
        }
        let mut scope = f.path.rsplitn(3, '/').nth(2).unwrap_or("");
        let stack = stacks
            .iter()
            .filter(|d| f.path.strip_prefix(**d).is_some_and(|r| r.starts_with('/')))
            .max_by_key(|d| d.len());
        if let Some(stack) = stack.filter(|d| d.len() > scope.len()) {
            scope = stack;
        }
        let before = out.len();
        // One release pinned beside the file, or none known.
        let pinned = match pins.get(dir(&f.path)).map(Vec::as_slice) {
            Some([one]) => Some((product.variable, *one)),
            _ => None,
        };
        for marker in product.markers {
            for (i, m) in text.match_indices(marker) {
                if let Some(version) = release_at(text, &text[i + m.len()..]) {
                    out.push(Install {
                        scope,
                        version: Some(version),
                    });
                }
            }
        }
        out.extend(
            chart_versions(text, product.chart)
                .into_iter()
                .chain(remote_base_versions(text, product.repo))
                .chain(image_tag_versions(text, product.image))
                .chain(chart_manifest_versions(&f.path, text, product.chart))
                .chain(pinned_versions(text, product.variable))
                .chain(eksctl_versions(text, product.chart))
                .chain(terraform_input_versions(&f.path, text, product.chart))
                .chain(prose_versions(&f.path, text, product))
                .map(Some)
                .chain(helm_cli_versions(text, product.chart, pinned))
                .map(|version| Install { scope, version }),
        );
        if unnamed(text) {
            out.push(Install {
                scope,
                version: None,
            });
        }
        // What the same file applies besides the release (`kubectl apply -f ../queues/`, a
        // module's path to its manifests) runs on that release too.
        let found: Vec<Option<(u32, u32)>> = out[before..].iter().map(|i| i.version).collect();
        if !found.is_empty() {
            for dir in applied::referenced_dirs(ix, &f.path, text) {
                out.extend(found.iter().map(|&version| Install {
                    scope: dir,
                    version,
                }));
            }
        }
    }
    out
}

/// Whether `text` names the product other than as its API group: no marker of an install is
/// the group's name, and in a platform's repository nearly every file holds that name (a
/// queue's label, a pool's requirements), so only these files are searched for releases.
fn names_beyond_group(text: &str, product: &Product) -> bool {
    text.match_indices(product.needle).any(|(i, m)| {
        let rest = &text[i + m.len()..];
        !product.groups.iter().any(|g| rest.starts_with(g))
    })
}

/// The release `rest` (of the file `text`) starts with: `v0.12.3`, `0.12.3`, or a shell
/// variable (`$VERSION`, `"${KARPENTER_VERSION}"`) the same file assigns.
fn release_at(text: &str, rest: &str) -> Option<(u32, u32)> {
    let rest = rest.trim_start_matches(['"', '\'']);
    match rest.strip_prefix('v') {
        Some(v) => minor_version(v),
        None => variable(rest)
            .and_then(|name| assigned(text, name))
            .or_else(|| terraform_default(text, rest))
            .or_else(|| minor_version(rest)),
    }
}

/// The versions of the `chart` a file installs: each `chart` key naming it, with the nearest
/// `version`, `chart_version` or `targetRevision` key of the same block (within a few lines
/// either way).
fn chart_versions(text: &str, chart: &str) -> Vec<(u32, u32)> {
    // Most files that name the product are its objects, not an install: ruled out at once.
    if !text.contains("chart") {
        return Vec::new();
    }
    use regex::Regex;
    use std::sync::LazyLock;
    // `chart: kueue`, `chartName: karpenter`; an OCI reference names the chart at its end, and
    // `chart` may then be left empty (`repository = "oci://public.ecr.aws/karpenter/karpenter"`).
    static CHART: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*"?(?:(?:chart|chartName|chart_name)"?\s*[:=]\s*["']?(?:\S*/)?|repository"?\s*[:=]\s*["']?oci://\S*/)([\w.-]+?)["']?\s*,?\s*(?:#.*)?$"#)
            .expect("a valid pattern")
    });
    static VERSION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?m)^\s*"?(?:version|chart_version|chartVersion|targetRevision)"?\s*[:=]\s*(?:["']?v?(\d+\.\d+)|(local|var)\.(\w+))"#,
        )
        .expect("a valid pattern")
    });
    // A block's keys lie within this many bytes of each other.
    const NEAR: usize = 600;
    let named: Vec<usize> = CHART
        .captures_iter(text)
        .filter(|c| c.get(1).is_some_and(|n| n.as_str() == chart))
        .filter_map(|c| Some(c.get(0)?.start()))
        .collect();
    if named.is_empty() {
        return Vec::new();
    }
    let versions: Vec<(usize, (u32, u32))> = VERSION
        .captures_iter(text)
        .filter_map(|c| match c.get(1) {
            Some(m) => Some((m.start(), minor_version(m.as_str())?)),
            // Terraform's `version = local.karpenter_version`: the value the same file gives it.
            None => {
                let (kind, name) = (c.get(2)?.as_str(), c.get(3)?);
                let v = if kind == "var" {
                    crate::source::terraform::variable_default(text, name.as_str())?
                } else {
                    crate::source::terraform::local_value(text, name.as_str())?
                };
                Some((
                    name.start(),
                    minor_version(v.strip_prefix('v').unwrap_or(v))?,
                ))
            }
        })
        .collect();
    named
        .into_iter()
        .filter_map(|at| {
            versions
                .iter()
                .map(|&(v_at, v)| (v_at.abs_diff(at), v))
                .filter(|&(d, _)| d <= NEAR)
                .min_by_key(|&(d, _)| d)
                .map(|(_, v)| v)
        })
        .collect()
}

/// The releases a Terraform module input installs (`kueue = { version = "v0.10.0" }`).
fn terraform_input_versions(path: &str, text: &str, chart: &str) -> Vec<(u32, u32)> {
    if !path.ends_with(".tf") {
        return Vec::new();
    }
    crate::source::terraform::input_versions(text, chart)
        .into_iter()
        .filter_map(|v| minor_version(v.strip_prefix('v').unwrap_or(v)))
        .collect()
}

/// The release a `Chart.yaml` installs of `chart`: its `appVersion` (the controller image's tag
/// by default) when the chart is a copy of it (`name: kueue`, `appVersion: "v0.8.1"`), or the
/// `version` of a dependency of that name (an umbrella chart; `~0.9.0` is 0.9).
fn chart_manifest_versions(path: &str, text: &str, chart: &str) -> Vec<(u32, u32)> {
    if !crate::source::pages::is_chart_manifest(std::path::Path::new(path)) {
        return Vec::new();
    }
    let parsed = crate::yaml::parse(text, crate::yaml::Budget::default());
    let Some(root) = parsed.docs.first().map(|d| d.root()) else {
        return Vec::new();
    };
    let version = |v: Option<&str>| {
        let v = v?.trim_start_matches(['~', '^', '=', '>', ' ']);
        minor_version(v.strip_prefix('v').unwrap_or(v))
    };
    let mut out = Vec::new();
    if root.str_at(&["name"]) == Some(chart) {
        out.extend(
            version(root.str_at(&["appVersion"])).or_else(|| version(root.str_at(&["version"]))),
        );
    }
    for dep in root.get("dependencies").into_iter().flat_map(|d| d.items()) {
        if dep.str_at(&["name"]) == Some(chart) {
            out.extend(version(dep.str_at(&["version"])));
        }
    }
    out
}

/// The releases a file pins with the product's variable (`export KARPENTER_VERSION="0.37.0"`,
/// an env file's `KUEUE_VERSION=v0.8.1`): an install guide's scripts read it, whichever file
/// runs the install.
fn pinned_versions(text: &str, variable: &str) -> Vec<(u32, u32)> {
    if !text.contains(variable) {
        return Vec::new();
    }
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("export ").unwrap_or(l).trim_start();
            let value = l.strip_prefix(variable)?.strip_prefix('=')?;
            release_at(text, shell_default(value.trim(), variable))
        })
        .collect()
}

/// The Kueue release a README's prose says the repository uses ("Kueue v0.6.2").
fn prose_versions(path: &str, text: &str, product: &Product) -> Vec<(u32, u32)> {
    if product.needle != "kueue" || !path.ends_with(".md") {
        return Vec::new();
    }
    crate::source::pages::prose_versions(text, product.needle)
}

/// The Karpenter release an eksctl `ClusterConfig` installs (`karpenter: {version: v0.36.2}`).
fn eksctl_versions(text: &str, chart: &str) -> Vec<(u32, u32)> {
    if chart != "karpenter" || !text.contains("kind: ClusterConfig") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim_end() != "karpenter:" {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let version = lines[i + 1..]
            .iter()
            .take_while(|n| n.trim().is_empty() || n.len() - n.trim_start().len() > indent)
            .find_map(|n| n.trim_start().strip_prefix("version:"));
        out.extend(version.and_then(|v| release_at(text, v.trim())));
    }
    out
}

/// The versions of kustomize remote bases of the `repo` a file names
/// (`https://github.com/kubernetes-sigs/kueue/config/default?ref=v0.10.2`).
fn remote_base_versions(text: &str, repo: &str) -> Vec<(u32, u32)> {
    text.match_indices(repo)
        .filter_map(|(i, _)| {
            let line = text[i..].lines().next()?;
            let at = line.find("?ref=")?;
            release_at(text, &line[at + "?ref=".len()..])
        })
        .collect()
}

/// The versions kustomize `images:` entries pin for the controller `image`: a `name` or
/// `newName` ending in it, with the `newTag` of the same entry.
fn image_tag_versions(text: &str, image: &str) -> Vec<(u32, u32)> {
    if !text.contains(image) || !text.contains("newTag") {
        return Vec::new();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let l = l.trim_start().trim_start_matches("- ");
        let named = ["name:", "newName:"].iter().any(|k| {
            l.strip_prefix(k)
                .map(|v| v.trim().trim_matches(['"', '\'']))
                .is_some_and(|v| v.ends_with(image) && v[..v.len() - image.len()].ends_with('/'))
        });
        if !named {
            continue;
        }
        // The entry's other keys: the next lines up to the next entry.
        let tag = lines[i + 1..]
            .iter()
            .take(3)
            .map(|n| n.trim_start())
            .take_while(|n| !n.starts_with("- "))
            .find_map(|n| n.strip_prefix("newTag:"));
        if let Some(v) = tag.and_then(|t| release_at(text, t.trim())) {
            out.push(v);
        }
    }
    out
}

/// Whether an OpenShift AI (or Open Data Hub) DataScienceCluster runs Kueue: `Managed` (its 2.x
/// releases bundle a Kueue of their own) or `Unmanaged` (it works with the Red Hat build of
/// Kueue operator); neither names an upstream release. YAML, or the JSON of an `oc patch`.
fn openshift_ai_kueue(text: &str) -> bool {
    use regex::Regex;
    use std::sync::LazyLock;
    static JSON: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#""kueue"\s*:\s*\{\s*"managementState"\s*:\s*"(?:Managed|Unmanaged)""#)
            .expect("a valid pattern")
    });
    if !text.contains("DataScienceCluster") && !text.contains("datasciencecluster") {
        return false;
    }
    if JSON.is_match(text) {
        return true;
    }
    let running = |t: &str| {
        let state = t.trim().trim_matches(['"', '\'']);
        state.ends_with("managementState: Managed") || state.ends_with("managementState: Unmanaged")
    };
    let lines: Vec<&str> = text.lines().collect();
    lines.iter().enumerate().any(|(i, l)| {
        let t = l.split('#').next().unwrap_or("").trim();
        (t == "kueue:"
            && lines[i + 1..]
                .iter()
                .take(3)
                .any(|n| running(n.split('#').next().unwrap_or(""))))
            || (t.starts_with("kueue:") && running(t.trim_end_matches('}').trim()))
    })
}

/// The versions `helm install|upgrade … <chart> … --version X` command lines install (`X` may
/// be a shell variable the file assigns; `None`: one set elsewhere, a release gpuops cannot
/// name).
fn helm_cli_versions(
    text: &str,
    chart: &str,
    pinned: Option<(&str, (u32, u32))>,
) -> Vec<Option<(u32, u32)>> {
    if !text.contains("helm ") || !text.contains("--version") {
        return Vec::new();
    }
    // One command a line: a line ending in `\` goes on on the next.
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    joined
        .lines()
        .filter(|l| l.contains("helm ") && l.contains(chart) && l.contains("--version"))
        .filter_map(|l| {
            let rest = &l[l.find("--version")? + "--version".len()..];
            let rest = rest.trim_start_matches(['=', ' ']);
            match release_at(text, rest) {
                Some(v) => Some(Some(v)),
                None => variable(rest.trim_start_matches(['"', '\'']))
                    .map(|name| pinned.and_then(|(var, v)| (var == name).then_some(v))),
            }
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

/// The default of the Terraform variable `rest` starts with (`${var.kueue_version}/…`).
fn terraform_default(text: &str, rest: &str) -> Option<(u32, u32)> {
    let name = rest.strip_prefix("${var.")?.split('}').next()?;
    let v = crate::source::terraform::variable_default(text, name)?;
    minor_version(v.strip_prefix('v').unwrap_or(v))
}

/// The release a script assigns to `name` (`VERSION=v0.8.1`, `export KUEUE_VERSION="v0.11.4"`).
fn assigned(text: &str, name: &str) -> Option<(u32, u32)> {
    text.lines().find_map(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("export ").unwrap_or(l).trim_start();
        let value = l.strip_prefix(name)?.strip_prefix('=')?;
        let value = shell_default(value.trim(), name).trim_start_matches(['"', '\'']);
        minor_version(value.strip_prefix('v').unwrap_or(value))
    })
}

/// The default of `NAME="${NAME:-v0.2.1}"` (a script that lets the caller override its pin),
/// else the value as it is.
fn shell_default<'a>(value: &'a str, name: &str) -> &'a str {
    value
        .trim_matches(['"', '\''])
        .strip_prefix("${")
        .and_then(|r| r.strip_prefix(name))
        .and_then(|r| r.strip_prefix(":-").or_else(|| r.strip_prefix('-')))
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(value)
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
mod tests;
