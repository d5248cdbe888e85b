//! The test suites of Kubernetes tools: files a chainsaw test compares with the cluster or
//! expects the API server to refuse, and files the Kyverno CLI evaluates offline; and the YAML a
//! Podman Quadlet unit hands to `podman kube play`. None of them is a manifest anyone applies to
//! a cluster as it stands: a partial object to match, a negative sample, a policy's input or
//! expected output, one host's pods.

use super::tree::normalize;
use crate::yaml::{self, Budget, Node};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The names the tools look for (chainsaw's default test file, the Kyverno CLI's).
const CHAINSAW: [&str; 3] = [
    "chainsaw-test.yaml",
    ".chainsaw-test.yaml",
    "chainsaw-test.yml",
];
const KYVERNO: [&str; 3] = [
    "kyverno-test.yaml",
    ".kyverno-test.yaml",
    "kyverno-test.yml",
];

/// Files among `paths` that a test definition among them uses as something never applied (the
/// Kyverno CLI's test file itself included). Only the test files are read; each is small.
pub fn not_applied(paths: &[PathBuf]) -> HashSet<PathBuf> {
    let mut out = HashSet::new();
    for p in paths {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let (chainsaw, kyverno) = (CHAINSAW.contains(&name), KYVERNO.contains(&name));
        let quadlet = super::files::is_quadlet(p);
        if !chainsaw && !kyverno && !quadlet {
            continue;
        }
        let Some(text) = std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file() && m.len() < 1 << 20)
            .and_then(|_| std::fs::read_to_string(p).ok())
        else {
            continue;
        };
        let dir = p.parent().unwrap_or(Path::new(""));
        if quadlet {
            // `Yaml=pod.yaml`: what `podman kube play` runs on one host, never a cluster's.
            out.extend(text.lines().filter_map(|l| {
                let v = l.trim().strip_prefix("Yaml=")?.trim();
                (!v.is_empty()).then(|| normalize(&dir.join(v)))
            }));
            continue;
        }
        let parsed = yaml::parse(&text, Budget::default());
        let mut used = Vec::new();
        for doc in &parsed.docs {
            let root = doc.root();
            let api = root.str_at(&["apiVersion"]).unwrap_or("");
            if chainsaw && api.starts_with("chainsaw.kyverno.io/") {
                chainsaw_files(root, &mut used);
            } else if kyverno
                && (api.is_empty()
                    || (api.starts_with("cli.kyverno.io/") || api.starts_with("kyverno.io/"))
                        && root.str_at(&["kind"]) == Some("Test"))
            {
                kyverno_files(root, &mut used);
                out.insert(normalize(p));
            }
        }
        out.extend(used.iter().map(|f| normalize(&dir.join(f))));
    }
    out
}

/// A chainsaw test's files that are assertions (`assert`, `error`), partial updates (`patch`,
/// `update`), or applied expecting the API server to refuse them (`expect` checks `$error`).
fn chainsaw_files<'a>(root: Node<'a>, out: &mut Vec<&'a str>) {
    let steps = root
        .at(&["spec", "steps"])
        .into_iter()
        .flat_map(|s| s.items());
    for step in steps {
        for block in ["try", "catch", "finally", "cleanup"] {
            for op in step.get(block).into_iter().flat_map(|b| b.items()) {
                for (what, _, body) in op.entries() {
                    // `($error != null): true`, or the error expected.
                    let expects_error = |c: Node<'_>| {
                        c.entries()
                            .any(|(k, _, _)| k.contains("$error") && !k.contains("== null"))
                    };
                    // A script that applies files and expects kubectl to fail.
                    if what == "script" && body.get("check").is_some_and(expects_error) {
                        out.extend(applied_by(body.str_at(&["content"]).unwrap_or("")));
                        continue;
                    }
                    let Some(file) = body.str_at(&["file"]) else {
                        continue;
                    };
                    let refused = || {
                        body.get("expect")
                            .into_iter()
                            .flat_map(|e| e.items())
                            .any(|e| e.get("check").is_some_and(expects_error))
                    };
                    let skip = match what {
                        "assert" | "error" | "patch" | "update" => true,
                        "apply" | "create" => refused(),
                        _ => false,
                    };
                    if skip && !file.contains('*') {
                        out.push(file);
                    }
                }
            }
        }
    }
}

/// The files `kubectl apply|create -f FILE` lines of a script name (not URLs, not globs).
fn applied_by(script: &str) -> impl Iterator<Item = &str> {
    script.lines().flat_map(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        let kubectl = words.first() == Some(&"kubectl")
            && words.iter().any(|w| matches!(*w, "apply" | "create"));
        words
            .windows(2)
            .filter(move |w| kubectl && matches!(w[0], "-f" | "--filename"))
            .map(|w| w[1])
            .filter(|f| !f.contains("://") && !f.contains('*') && *f != "-")
            .collect::<Vec<_>>()
    })
}

/// A Kyverno CLI test's resources, and the context, values and expected outputs it reads.
fn kyverno_files<'a>(root: Node<'a>, out: &mut Vec<&'a str>) {
    for key in [
        "resources",
        "paramResources",
        "variables",
        "values",
        "userinfo",
        "context",
    ] {
        match root.get(key) {
            Some(n) if n.as_str().is_some() => out.extend(n.as_str()),
            Some(n) => out.extend(n.items().filter_map(|i| i.as_str())),
            None => {}
        }
    }
    for r in root.get("results").into_iter().flat_map(|r| r.items()) {
        for key in [
            "patchedResource",
            "patchedResources",
            "generatedResource",
            "cloneSourceResource",
        ] {
            out.extend(r.str_at(&[key]));
        }
    }
}

/// Whether the walk's path `p` is in `set` (built by [`not_applied`]), or in a directory the
/// Kyverno policy library keeps its CLI tests' data in (`.kyverno-test/`).
pub fn contains(set: &HashSet<PathBuf>, p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == ".kyverno-test")
        || (!set.is_empty() && set.contains(&normalize(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chainsaw_assertions_refusals_and_kyverno_inputs_are_not_applied() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join(".chainsaw-test");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(
            t.join("chainsaw-test.yaml"),
            "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nspec:\n  steps:\n  - try:\n    - apply:\n        file: pod-good.yaml\n    - apply:\n        file: pod-bad.yaml\n        expect:\n        - check:\n            ($error != null): true\n    - assert:\n        file: pod-patched.yaml\n    - error:\n        file: ../no-report.yaml\n    - apply:\n        file: pod-invalid.yaml\n        expect:\n        - check:\n            ($error): 'admission webhook denied the request'\n    - script:\n        content: kubectl apply -f policy-invalid.yaml\n        check:\n          ($error != null): true\n",
        )
        .unwrap();
        let k = d.path().join("cli");
        std::fs::create_dir_all(&k).unwrap();
        std::fs::write(
            k.join("kyverno-test.yaml"),
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\npolicies:\n- ../policy.yaml\nresources:\n- resource.yaml\nvariables: values.yaml\nresults:\n- patchedResource: patched.yaml\n",
        )
        .unwrap();
        let paths = vec![t.join("chainsaw-test.yaml"), k.join("kyverno-test.yaml")];
        let set = not_applied(&paths);
        for skipped in [
            t.join("pod-bad.yaml"),
            t.join("pod-invalid.yaml"),
            t.join("policy-invalid.yaml"),
            t.join("pod-patched.yaml"),
            d.path().join("no-report.yaml"),
            k.join("kyverno-test.yaml"),
            k.join("resource.yaml"),
            k.join("./values.yaml"),
            k.join("patched.yaml"),
            d.path().join("p/.kyverno-test/generatedResource.yaml"),
        ] {
            assert!(contains(&set, &skipped), "{skipped:?} in {set:?}");
        }
        for applied in [t.join("pod-good.yaml"), d.path().join("policy.yaml")] {
            assert!(!contains(&set, &applied), "{applied:?}");
        }
    }
}
