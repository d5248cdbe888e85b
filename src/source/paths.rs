//! What a file's place and name say about it: test data, a negative sample, a kustomize patch,
//! a symbolic link to nothing.

/// Whether a path lies in a test tree (`test/`, `tests/`, `testdata/`, `e2e/`, `fixtures/`,
/// `.chainsaw-test/`…):
/// what is there serves a project's tests, and nothing deploys it as it stands. Only directories
/// inside the file's repository count (below the nearest directory holding `.git`): a repository
/// checked out under `~/tests/` is not a test tree.
pub fn in_test_tree(path: &str) -> bool {
    let test = |c: std::path::Component<'_>| {
        matches!(
            c.as_os_str().to_str().unwrap_or(""),
            "test"
                | "tests"
                | "testdata"
                | "test-data"
                | "e2e"
                | "fixtures"
                | "__tests__"
                | ".chainsaw-test"
                | ".kyverno-test"
        )
    };
    let p = std::path::Path::new(path);
    // Most paths name no such directory at all: no need to look for the repository on disk.
    if !p.components().any(test) {
        return false;
    }
    let repo = p
        .ancestors()
        .skip(1)
        .find(|d| !d.as_os_str().is_empty() && d.join(".git").exists());
    let inside = repo.and_then(|r| p.strip_prefix(r).ok()).unwrap_or(p);
    inside.components().any(test)
}

/// Whether the document holding byte `at` of a file is introduced as a negative case: a comment
/// above it (below the previous `---`) that says it must fail (`# FAIL: missing toleration`,
/// `# should be blocked`, `# invalid: …`), as the tests of admission policies mark the objects
/// they expect to be refused.
pub fn negative_case(text: &str, at: usize) -> bool {
    let before = text.get(..at).unwrap_or("");
    let start = before.rfind("\n---").map_or(0, |i| i + 4);
    let refused = |w: &str| {
        matches!(
            w,
            "fail"
                | "fails"
                | "failing"
                | "failure"
                | "blocked"
                | "denied"
                | "deny"
                | "invalid"
                | "negative"
                | "rejected"
                | "reject"
                | "rejects"
                | "violates"
                | "violation"
        )
    };
    for line in text[start..].lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some(comment) = line.strip_prefix('#') else {
            return false;
        };
        if comment
            .to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(refused)
        {
            return true;
        }
    }
    false
}

/// Whether a path lies in a directory kept for reference only (`archive/`, `legacy/`, `old/`,
/// `attic/`, `unused/`): what is there is no longer applied, and nothing about it is of use.
pub fn in_archived_tree(path: &str) -> bool {
    any_component(path, |c| {
        matches!(
            c,
            "archive"
                | "archived"
                | "archives"
                | "_archive"
                | ".archive"
                | "attic"
                | "legacy"
                | "obsolete"
                | "old"
                | "unused"
        )
    })
}

/// Whether a path lies in a `deprecated/` directory: objects of older releases or ways, kept
/// beside the current ones (examples of a deprecated API version are still examples).
pub fn in_deprecated_tree(path: &str) -> bool {
    any_component(path, |c| c == "deprecated")
}

fn any_component(path: &str, f: impl Fn(&str) -> bool) -> bool {
    std::path::Path::new(path)
        .components()
        .any(|c| f(&c.as_os_str().to_str().unwrap_or("").to_ascii_lowercase()))
}

/// The directory of design proposals a path lies in (`docs/proposals/`, `keps/`): their YAML
/// illustrates a design (often an excerpt, or fields of a version never released) and is never
/// applied as it stands.
pub fn proposal_dir(path: &str) -> Option<&str> {
    path.split('/').rev().skip(1).find(|c| {
        matches!(
            *c,
            "proposals" | "design-proposals" | "keps" | "enhancements" | "rfcs"
        )
    })
}

/// Whether a path lies in a vendored copy of another project (`vendor/`, `third_party/`,
/// `upstream/`): kept as the project ships it, its overlays built by that project's own tooling
/// if at all, not the repository's own to fix.
pub fn in_vendored_tree(path: &str) -> bool {
    std::path::Path::new(path).components().any(|c| {
        matches!(
            c.as_os_str().to_str().unwrap_or(""),
            "vendor" | "vendored" | "third_party" | "third-party" | "upstream"
        )
    })
}

/// Whether a file is an operator's sample as kubebuilder scaffolds it (`config/samples/`, still
/// holding the generator's placeholder: `TODO(user)`, or older releases' `# Add fields here`
/// over `foo: bar`): a placeholder to fill in, not a manifest to apply.
pub fn scaffold_sample(path: &str, text: &str) -> bool {
    let p = path.replace('\\', "/");
    (p.starts_with("config/samples/") || p.contains("/config/samples/"))
        && (text.contains("TODO(user)")
            || (text.contains("# Add fields here") && text.contains("foo: bar")))
}

/// A file's name without its extension, in lower case.
fn lower_stem(p: &std::path::Path) -> String {
    p.file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether a file's name says it is broken on purpose (`invalid.yaml`, `malformed-pool.yaml`,
/// `job_invalid.yaml`, `invalidWorkspaceKind.yaml`; in a test tree also `errors.yaml`,
/// `bad-pool.yaml`, `broken.yaml`, `missingDisplayName.yaml`): a negative sample kept to show or
/// test a rejection, never applied.
pub fn named_invalid(path: &str) -> bool {
    // `invalidWorkspaceKind.yaml` too: camel case starts a word at each capital.
    let stem = std::path::Path::new(path)
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let mut name = String::with_capacity(stem.len() + 4);
    for c in stem.chars() {
        if c.is_ascii_uppercase() {
            name.push('-');
        }
        name.push(c.to_ascii_lowercase());
    }
    let words = || name.split(['-', '_', '.']);
    words().any(|w| matches!(w, "invalid" | "malformed"))
        || (words().any(|w| matches!(w, "error" | "errors" | "bad" | "broken" | "missing"))
            && in_test_tree(path))
}

/// Whether a file is a test's assertion about the cluster's state, compared with it and never
/// applied: a kuttl step's `NN-assert*.yaml` or `NN-errors*.yaml`, or a chainsaw test's file named
/// for an assertion or an error beside its `chainsaw-test.yaml`. Its objects are partial (a
/// `status`, no `spec`) by design.
pub fn named_assertion(p: &std::path::Path) -> bool {
    let stem = lower_stem(p);
    let kuttl = stem.split_once('-').is_some_and(|(n, rest)| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (rest.starts_with("assert") || rest.starts_with("errors"))
    });
    let chainsaw = || {
        (stem.contains("assert") || stem.contains("error"))
            && p.parent().is_some_and(|d| {
                d.join("chainsaw-test.yaml").is_file() || d.join(".chainsaw-test.yaml").is_file()
            })
    };
    kuttl || chainsaw()
}

/// Whether a file is a test's expected output (`clustergroup-normal.expected.yaml`,
/// `render-golden.yaml`, `golden/…`) in a test tree: what a chart or tool is compared against,
/// never applied.
pub fn expected_output(path: &str) -> bool {
    let p = std::path::Path::new(path);
    let stem = lower_stem(p);
    let named = stem
        .rsplit(['-', '_', '.'])
        .next()
        .is_some_and(|w| matches!(w, "expected" | "golden"));
    let filed = p.parent().is_some_and(|d| {
        d.components()
            .any(|c| matches!(c.as_os_str().to_str(), Some("golden" | "expected")))
    });
    (named || filed) && in_test_tree(path)
}

/// Whether a file's name or directory says it is a kustomize patch (`patch-nodeclass.yaml`,
/// `gpu_patch.yaml`, `patches/…`): a partial object merged into a base, which need not hold the
/// fields the base has.
pub fn named_patch(path: &str) -> bool {
    let p = std::path::Path::new(path);
    let stem = lower_stem(p);
    stem.split(['-', '_', '.'])
        .any(|w| matches!(w, "patch" | "patches"))
        || p.parent().is_some_and(|d| {
            d.components()
                .any(|c| matches!(c.as_os_str().to_str(), Some("patch" | "patches")))
        })
}

/// Whether a file lies in a directory of a program's test inputs (`testdata`, Go's convention;
/// `fixtures` in JavaScript's, Ruby's and Python's test tools), read by its tests rather than
/// applied to a cluster.
pub fn in_test_input_dir(path: &str) -> bool {
    std::path::Path::new(path).components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("testdata" | "test-data" | "fixtures" | "__fixtures__")
        )
    })
}

/// Whether a file is a sample or an example: under a `samples`, `sample`, `examples` or
/// `example` directory, or named as one (`storage-sample-1.yml`, `example_job.yaml`).
pub fn in_sample_dir(path: &str) -> bool {
    let p = std::path::Path::new(path);
    let dir = p.parent().is_some_and(|d| {
        d.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("samples" | "sample" | "examples" | "example")
            )
        })
    });
    dir || lower_stem(p)
        .split(['-', '_', '.'])
        .any(|w| matches!(w, "sample" | "example"))
}

/// Whether a file's name says it holds what a kustomization patches with
/// (`ci-artifacts-platform-kustomization.yaml`), not being a kustomization file itself.
pub fn named_for_kustomization(path: &str) -> bool {
    let stem = lower_stem(std::path::Path::new(path));
    stem != "kustomization"
        && stem
            .split(['-', '_', '.'])
            .any(|w| matches!(w, "kustomization" | "kustomize"))
}

#[cfg(test)]
mod tests {
    use super::in_test_tree;

    #[test]
    fn only_directories_inside_the_repository_make_a_test_tree() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("tests/platform");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let at = |rel: &str| repo.join(rel).to_string_lossy().into_owned();
        assert!(!in_test_tree(&at("overlays/prod/kustomization.yaml")));
        assert!(in_test_tree(&at("test/e2e/kustomization.yaml")));
        assert!(in_test_tree("charts/x/tests/kustomization.yaml"));
        assert!(!in_test_tree("charts/x/templates/kustomization.yaml"));
        // A fixture named for its errors beside a valid one is broken on purpose; a deployed
        // file of that name is not.
        assert!(super::named_invalid("spec/fixtures/asset/errors.yaml"));
        assert!(!super::named_invalid("deploy/alerts/errors.yaml"));
        // Camel case, as a UI test's fixtures are named.
        assert!(super::named_invalid("kinds/invalidWorkspaceKind.yaml"));
        assert!(super::named_invalid(
            "src/__tests__/fixtures/missingDisplayNameKind.yaml"
        ));
        assert!(!super::named_invalid("deploy/missingDisplayNameKind.yaml"));
        assert!(!super::named_invalid("deploy/validWorkspaceKind.yaml"));
    }
}

#[cfg(test)]
mod name_tests {
    use super::{named_assertion, named_patch};

    #[test]
    fn test_assertions_are_named_so() {
        let p = std::path::Path::new;
        assert!(named_assertion(p(
            "test/e2e-kuttl/quota-forest/04-assert.yaml"
        )));
        assert!(named_assertion(p("tests/basic/01-errors.yaml")));
        assert!(named_assertion(p("tests/basic/00-assert-pods.yaml")));
        assert!(!named_assertion(p("tests/basic/00-install.yaml")));
        assert!(!named_assertion(p("deploy/assert.yaml")));
        assert!(!named_assertion(p("deploy/v1-assertive.yaml")));
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("chainsaw-test.yaml"), "").unwrap();
        assert!(named_assertion(&d.path().join("assert-queue.yaml")));
        assert!(!named_assertion(&d.path().join("queue.yaml")));
    }

    #[test]
    fn negative_cases_are_told_by_their_comment() {
        let text = "# PASS: tolerates the GPU taint\napiVersion: v1\nkind: Pod\n---\n# FAIL: missing toleration (should be blocked)\napiVersion: v1\nkind: Pod\n---\n# failover pool\nkind: Pod\n";
        let at = |needle: &str, nth: usize| text.match_indices(needle).nth(nth).unwrap().0;
        assert!(!super::negative_case(text, at("kind: Pod", 0)));
        assert!(super::negative_case(text, at("kind: Pod", 1)));
        assert!(!super::negative_case(text, at("kind: Pod", 2)));
    }

    #[test]
    fn patch_files_are_named_so() {
        assert!(super::named_for_kustomization(
            "test/e2e/data/ci-artifacts-platform-kustomization.yaml"
        ));
        assert!(!super::named_for_kustomization(
            "overlays/prod/kustomization.yaml"
        ));
        assert!(named_patch("overlays/prod/patch-ec2-node-class.yaml"));
        assert!(named_patch("gpu_patch.yaml"));
        assert!(named_patch("overlays/prod/patches/nodepool.yaml"));
        assert!(!named_patch("dispatcher.yaml"));
        assert!(!named_patch("base/nodepool.yaml"));
    }
}

/// A template named for the YAML it renders (`kueue.yaml.tftpl`, `pool.yml.j2`), or a YAML file
/// named a template (`template.yaml`, `notebook_template.yaml`, `pg.template.yaml`): a tool
/// other than gpuops fills it in (Terraform's `templatefile()`, Jinja, `envsubst`, `sed`, a
/// program), so what it defines exists once rendered, while the template itself is not what is
/// applied.
pub fn is_yaml_template(p: &std::path::Path) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let named = |s: &str| {
        let s = s.to_ascii_lowercase();
        s == "template"
            || [".template", "-template", "_template", ".tmpl", ".tpl"]
                .iter()
                .any(|t| s.ends_with(t))
    };
    (matches!(
        ext,
        "tftpl" | "tpl" | "tmpl" | "gotmpl" | "j2" | "jinja" | "jinja2" | "template"
    ) && super::files::is_yaml(std::path::Path::new(stem)))
        || (super::files::is_yaml(p) && named(stem))
}

/// The chart whose own render a file is: it lies in the chart's directory (not in the parts Helm
/// reads: `templates/`, `crds/`, `charts/`) and its documents say they come from that chart's
/// templates (`# Source: <chart>/templates/…`, as `helm template` writes). A sample of what the
/// chart renders, kept beside it; Helm never applies it, and the chart is what is deployed.
pub fn chart_render_sample(p: &std::path::Path, text: &str) -> Option<String> {
    if !text.contains("# Source: ") {
        return None;
    }
    let dir = p.parent()?.ancestors().find(|d| {
        d.join("Chart.yaml").is_file()
            || matches!(
                d.file_name().and_then(|n| n.to_str()),
                Some("templates" | "crds" | "charts")
            ) && d.parent().is_some_and(|c| c.join("Chart.yaml").is_file())
    })?;
    if !dir.join("Chart.yaml").is_file() {
        return None;
    }
    let chart = std::fs::read_to_string(dir.join("Chart.yaml")).ok()?;
    let name = chart.lines().find_map(|l| {
        let v = l.strip_prefix("name:")?.trim();
        Some(v.trim_matches(|c| c == '"' || c == '\'').to_string())
    })?;
    let source = format!("# Source: {name}/templates/");
    text.lines().any(|l| l.starts_with(&source)).then_some(name)
}

/// What a walk error says: a symbolic link to nothing (a path on its author's machine) is named
/// as such.
pub fn walk_problem(err: &ignore::Error) -> String {
    fn path_of(err: &ignore::Error) -> Option<&std::path::Path> {
        match err {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                path_of(err)
            }
            _ => None,
        }
    }
    if let Some(path) = path_of(err)
        && let Ok(target) = std::fs::read_link(path)
        && !path.exists()
    {
        return format!(
            "skipped: {}: a symbolic link to `{}`, which does not exist",
            super::display_path(path),
            target.display()
        );
    }
    if err.is_io() || err.to_string().contains("loop") {
        format!("skipped: {err}")
    } else {
        err.to_string()
    }
}
