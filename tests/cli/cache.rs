//! The build cache: a second run builds nothing and reports the same; a changed base rebuilds
//! only the overlays that use it; `--no-cache`, a damaged entry and `gpuops cache clean`.

use crate::common::{Run, gpuops_in, kustomize_on_path, run, write};
use std::fs;
use std::path::{Path, PathBuf};

/// A job with half a GPU: findings on every build, which say the quantity.
const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: c\n          image: x:1\n          resources:\n            limits:\n              nvidia.com/gpu: 0.5\n";

/// Two applications, each a base and an overlay.
fn repo(root: &Path) {
    for app in ["a", "b"] {
        write(root, &format!("{app}/base/job.yaml"), JOB);
        write(
            root,
            &format!("{app}/base/kustomization.yaml"),
            "resources: [job.yaml]\n",
        );
        write(
            root,
            &format!("{app}/prod/kustomization.yaml"),
            &format!("namespace: {app}-prod\nresources: [../base]\n"),
        );
    }
}

/// A directory holding a `kustomize` that counts its runs in `runs` beside it, then runs the
/// real kustomize (or `kubectl kustomize`). Named `kustomize`, it is the one gpuops picks.
#[cfg(unix)]
fn counting_kustomize() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let which = |name: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    let real = match which("kustomize") {
        Some(k) => format!("'{}' build", k.display()),
        None => format!("'{}' kustomize", which("kubectl").unwrap().display()),
    };
    let d = tempfile::tempdir().unwrap();
    let script = format!(
        "#!/bin/sh\necho run >> '{}'\nshift\nexec {real} \"$@\"\n",
        d.path().join("runs").display()
    );
    let p = d.path().join("kustomize");
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn runs(bin: &Path) -> usize {
    fs::read_to_string(bin.join("runs")).map_or(0, |s| s.lines().count())
}

/// (what, kustomization) of the build lines of `--explain-sources`: `build` or `cached`.
fn builds(err: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = err
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let what = words.next()?;
            let path = words.next()?.trim_end_matches(':');
            matches!(what, "build" | "cached").then(|| (what.to_string(), path.to_string()))
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    fs::read_dir(cache)
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[cfg(unix)]
#[test]
fn a_second_run_builds_nothing_and_a_changed_base_rebuilds_only_its_overlay() {
    if !kustomize_on_path() {
        return;
    }
    let repo_dir = tempfile::tempdir().unwrap();
    repo(repo_dir.path());
    let bin = counting_kustomize();
    let cache = tempfile::tempdir().unwrap();
    let path = crate::sources::path_with(bin.path());
    let lint = |extra: &[&str]| {
        let Run { code, out, err } = run(gpuops_in(repo_dir.path())
            .env("PATH", &path)
            .env("GPUOPS_CACHE_DIR", cache.path())
            .args(["lint", "--format", "json", "--explain-sources"])
            .args(extra));
        assert_eq!(code, 1, "{err}");
        (out, builds(&err))
    };
    let both = |what: [&str; 2]| {
        vec![
            (what[0].to_string(), "a/prod/kustomization.yaml".to_string()),
            (what[1].to_string(), "b/prod/kustomization.yaml".to_string()),
        ]
    };

    let (first, explained) = lint(&[]);
    assert_eq!(explained, both(["build", "build"]));
    let built = runs(bin.path());
    assert!(built > 0);
    assert_eq!(entries(cache.path()).len(), 2);

    // Nothing changed: no kustomize runs, and the report is the same to the byte.
    let (second, explained) = lint(&[]);
    assert_eq!(explained, both(["cached", "cached"]));
    assert_eq!(runs(bin.path()), built);
    assert_eq!(second, first);

    // A changed base: only its overlay is built again; the report is what a run without the
    // cache gives.
    write(
        repo_dir.path(),
        "a/base/job.yaml",
        &JOB.replace("0.5", "1.5"),
    );
    let (changed, explained) = lint(&[]);
    assert_eq!(explained, both(["build", "cached"]));
    assert_ne!(changed, first);
    let n = runs(bin.path());
    let (uncached, explained) = lint(&["--no-cache"]);
    assert_eq!(explained, both(["build", "build"]));
    assert!(runs(bin.path()) > n);
    assert_eq!(uncached, changed);
    assert_eq!(entries(cache.path()).len(), 3, "--no-cache writes nothing");

    // A damaged entry is a miss.
    for e in entries(cache.path()) {
        let bytes = fs::read(&e).unwrap();
        fs::write(&e, &bytes[..bytes.len() / 2]).unwrap();
    }
    let (again, explained) = lint(&[]);
    assert_eq!(explained, both(["build", "build"]));
    assert_eq!(again, changed);

    let Run { code, out, .. } = run(gpuops_in(repo_dir.path())
        .env("GPUOPS_CACHE_DIR", cache.path())
        .args(["cache", "clean"]));
    assert_eq!(code, 0);
    assert!(out.starts_with("removed 3 cached builds"), "{out}");
    assert!(entries(cache.path()).is_empty());
    let Run { out, .. } = run(gpuops_in(repo_dir.path())
        .env("GPUOPS_CACHE_DIR", cache.path())
        .args(["cache", "dir"]));
    assert_eq!(out.trim_end(), cache.path().display().to_string());
}

/// A chart's render is cached; a failed render is not.
#[cfg(unix)]
#[test]
fn a_rendered_chart_is_cached_and_a_failed_one_is_not() {
    let cache = tempfile::tempdir().unwrap();
    let dir = crate::sources::fixture("chart");
    let lint = |helm: &Path| {
        run(gpuops_in(&dir)
            .env("PATH", crate::sources::path_with(helm))
            .env("GPUOPS_CACHE_DIR", cache.path())
            .args(["lint", "--format", "json"]))
    };
    let helm = crate::sources::printing_helm(crate::sources::RENDERED);
    let args = helm.path().join("args.txt");
    let first = lint(helm.path());
    assert!(args.exists());
    fs::remove_file(&args).unwrap();
    let second = lint(helm.path());
    assert!(!args.exists(), "helm ran again");
    assert_eq!((second.code, second.out), (first.code, first.out));

    let failing = crate::sources::stand_in_helm("echo 'Error: boom' >&2; exit 1");
    let args = failing.path().join("args.txt");
    let failed = lint(failing.path());
    assert!(failed.out.contains("boom"), "{}", failed.out);
    fs::remove_file(&args).unwrap();
    lint(failing.path());
    assert!(args.exists(), "a failure is not cached");
}
