//! `gpuops render`, `init` and `schema`: snapshots of the example profiles, the self-check (no
//! finding in rendered output), upstream CRD schemas, `--check`, located profile errors, template
//! overrides, no-clobber writes and stale-file removal. Tests that run the binary use temp dirs.

use crate::common::{gpuops_in, human_text, root, run, write};
use gpuops::render::{self, RenderedFile};
use gpuops::yaml::{self, Budget, Node, Value as YValue, Yaml11};
use serde_json::{Value, json};
use std::path::Path;

/// `examples/profiles/*.yaml`, relative to the crate root, sorted.
fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("examples/profiles"))
        .expect("examples/profiles exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .map(|n| format!("examples/profiles/{n}"))
        .collect();
    v.sort();
    assert!(v.len() >= 2, "expected the example profiles, found {v:?}");
    v
}

/// Every profile that must render cleanly: the examples and `gpuops init`'s output.
fn clean_profiles() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = examples()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).expect("readable example");
            (p, text)
        })
        .collect();
    v.push(("platform.yaml".into(), render::INIT_PROFILE.to_string()));
    v
}

pub(crate) fn render_text(path: &str, text: &str) -> Vec<RenderedFile> {
    let platform = match render::parse_profile(path, text) {
        Ok(p) => p,
        Err(e) => panic!("{path} does not validate:\n{}", e.report(false)),
    };
    render::Renderer::new(None)
        .expect("embedded templates compile")
        .render(&platform, path)
        .expect("renders")
}

pub(crate) fn write_profile(dir: &Path, text: &str) {
    write(dir, "platform.yaml", text);
}

fn example_text() -> String {
    std::fs::read_to_string(root().join("examples/profiles/platform.yaml")).expect("example")
}

/// Every file under `dir`, relative, with contents.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// Output of the example profiles

#[test]
fn example_profiles_render_to_the_snapshotted_stream() {
    for p in examples() {
        let r = run(gpuops_in(root()).args(["render", p.as_str()]));
        assert_eq!(r.code, 0, "{p}: {}", r.err);
        let stem = Path::new(&p)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("profile")
            .to_string();
        insta::assert_snapshot!(format!("stream-{stem}"), r.out);
    }
}

#[test]
fn rendered_output_lints_clean_with_every_rule() {
    for (path, text) in clean_profiles() {
        let files = render_text(&path, &text);
        let (sources, findings) = render::self_check(&files, "deploy/");
        assert!(
            findings.is_empty(),
            "{path}: render produced lint findings:\n{}",
            human_text(&findings, &sources)
        );
    }
}

#[test]
fn the_terraform_form_reads_back_with_every_object_and_lints_clean() {
    let d = tempfile::tempdir().unwrap();
    write_profile(d.path(), &example_text());
    let yaml = run(gpuops_in(d.path()).args(["render", "platform.yaml"]));
    assert_eq!(yaml.code, 0, "{}", yaml.err);
    let objects = yaml.out.matches("\napiVersion: ").count();
    let r = run(gpuops_in(d.path()).args([
        "render",
        "platform.yaml",
        "--format",
        "terraform",
        "-o",
        "tf",
    ]));
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let files = tree(&d.path().join("tf"));
    assert_eq!(files.len(), objects);
    assert!(
        files
            .iter()
            .all(|(p, t)| p.ends_with(".tf") && t.contains("resource \"kubectl_manifest\""))
    );
    // Linted as a repository, the Terraform holds every object and nothing is wrong with it.
    let lint = run(gpuops_in(d.path()).args(["lint", "tf", "--format", "json"]));
    assert_eq!(lint.code, 0, "{}{}", lint.out, lint.err);
    let v: Value = serde_json::from_str(&lint.out).unwrap();
    assert_eq!(v["summary"]["files"], objects, "{}", lint.out);
    // --check compares the same form; switching forms replaces the generated files.
    let check = run(gpuops_in(d.path()).args([
        "render",
        "platform.yaml",
        "--format",
        "terraform",
        "-o",
        "tf",
        "--check",
    ]));
    assert_eq!(check.code, 0, "{}{}", check.out, check.err);
    let back = run(gpuops_in(d.path()).args(["render", "platform.yaml", "-o", "tf"]));
    assert_eq!(back.code, 0, "{}", back.err);
    assert!(
        tree(&d.path().join("tf"))
            .iter()
            .all(|(p, _)| p.ends_with(".yaml"))
    );
}

#[test]
fn rendering_is_deterministic() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("platform.yaml"), example_text()).expect("write");
    let a = run(gpuops_in(tmp.path()).args(["render", "platform.yaml"]));
    let b = run(gpuops_in(tmp.path()).args(["render", "platform.yaml"]));
    assert_eq!(a.code, 0, "{}", a.err);
    assert_eq!(a.out, b.out);
    let first = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(first.code, 0, "{}", first.err);
    let before = tree(&tmp.path().join("deploy"));
    let again = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(again.code, 0, "{}", again.err);
    assert!(again.out.contains(" 0 written"), "{}", again.out);
    assert_eq!(before, tree(&tmp.path().join("deploy")));
    // Every file carries the header naming the profile; the stream is the files joined.
    for (path, text) in &before {
        assert!(
            text.starts_with("# Generated by gpuops from platform.yaml."),
            "{path}"
        );
    }
    let joined: String = before.iter().map(|(_, t)| format!("---\n{t}")).collect();
    assert_eq!(joined, a.out);
}

#[test]
fn layout_is_kind_plural_and_namespace_dot_name() {
    let files = render_text("platform.yaml", &example_text());
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for expected in [
        "nodepools/training-spot.yaml",
        "nodepools/training-on-demand.yaml",
        "nodepools/inference-on-demand.yaml",
        "ec2nodeclasses/training.yaml",
        "resourceflavors/training.yaml",
        "clusterqueues/research-training.yaml",
        "localqueues/ml-research.training.yaml",
        "workloadpriorityclasses/gpuops-training.yaml",
        "priorityclasses/gpuops-best-effort.yaml",
        "namespaces/ml-research.yaml",
        "resourcequotas/ml-research.gpuops-gpu.yaml",
        "limitranges/ml-research.gpuops-gpu.yaml",
        "jobs/ml-research.llama-finetune.yaml",
        "services/ml-research.llama-finetune.yaml",
        "jobs/ml-applied.embeddings-backfill.yaml",
    ] {
        assert!(
            paths.contains(&expected),
            "{expected} missing from {paths:#?}"
        );
    }
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "files come out in path order");
}

// ---------------------------------------------------------------------------------------------
// Rendered objects against the real API

pub(crate) fn parse_one(path: &str, text: &str) -> (Node<'static>, Value) {
    let parsed = yaml::parse(text, Budget::default());
    assert!(parsed.problems.is_empty(), "{path}: {:?}", parsed.problems);
    assert_eq!(parsed.docs.len(), 1, "{path}: one document per file");
    let doc = parsed.docs.into_iter().next().expect("a document");
    // Kept for the test's whole run: nodes borrow their document.
    let node = Box::leak(Box::new(doc)).root();
    let json = gpuops::schema::crd::to_json(node);
    (node, json)
}

fn crd_file(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "NodePool" => "karpenter.sh_nodepools.yaml",
        "EC2NodeClass" => "karpenter.k8s.aws_ec2nodeclasses.yaml",
        "ResourceFlavor" => "kueue.x-k8s.io_resourceflavors.yaml",
        "ClusterQueue" => "kueue.x-k8s.io_clusterqueues.yaml",
        "LocalQueue" => "kueue.x-k8s.io_localqueues.yaml",
        "WorkloadPriorityClass" => "kueue.x-k8s.io_workloadpriorityclasses.yaml",
        _ => return None,
    })
}

fn crd_validator(dir: &Path, kind: &str, version: &str) -> jsonschema::Validator {
    let file = crd_file(kind).unwrap_or_default();
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let (_, crd) = parse_one(file, &text);
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let v = versions
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{file} does not serve {version}"));
    assert_eq!(
        v["served"],
        Value::Bool(true),
        "{file} {version} is not served"
    );
    let mut schema = v["schema"]["openAPIV3Schema"].clone();
    // The same normalisation `--crd` applies (unknown fields are errors, as with strict apply).
    gpuops::schema::crd::normalize(&mut schema);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(&schema)
        .unwrap_or_else(|e| panic!("{file}: schema does not compile: {e}"))
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |acc, k| &acc[*k])
}

/// Focused checks for the core kinds (no CRD to validate against).
pub(crate) fn check_core(path: &str, kind: &str, o: &Value) {
    let name = s(o, &["metadata", "name"]).as_str().unwrap_or_default();
    assert!(
        !name.is_empty() && name.len() <= 63,
        "{path}: metadata.name"
    );
    match kind {
        "Job" => {
            assert_eq!(o["apiVersion"], "batch/v1", "{path}");
            let labels = s(o, &["metadata", "labels"]);
            assert!(
                labels["kueue.x-k8s.io/queue-name"].is_string(),
                "{path}: queue-name label on the Job"
            );
            assert!(
                labels["kueue.x-k8s.io/priority-class"].is_string(),
                "{path}: priority-class label on the Job"
            );
            assert!(
                s(o, &["metadata", "annotations"]).is_null(),
                "{path}: Kueue reads labels, not annotations"
            );
            assert!(
                o["spec"]["suspend"].is_null(),
                "{path}: suspend is Kueue's to set"
            );
            let spec = &o["spec"];
            let workers = spec["completions"].as_i64().expect("completions");
            assert_eq!(
                spec["parallelism"].as_i64(),
                Some(workers),
                "{path}: completions = parallelism"
            );
            if workers > 1 {
                assert_eq!(spec["completionMode"], "Indexed", "{path}");
            }
            let tmpl = &spec["template"];
            assert_eq!(
                s(
                    tmpl,
                    &["metadata", "annotations", "karpenter.sh/do-not-disrupt"]
                ),
                "true",
                "{path}: a string on the pod template"
            );
            let pod = &tmpl["spec"];
            assert!(
                matches!(pod["restartPolicy"].as_str(), Some("Never" | "OnFailure")),
                "{path}"
            );
            let grace = pod["terminationGracePeriodSeconds"]
                .as_i64()
                .expect("grace period");
            assert!(
                (1..=120).contains(&grace),
                "{path}: {grace}s does not fit a spot notice"
            );
            assert!(pod["priorityClassName"].is_string(), "{path}");
            let tolerates = pod["tolerations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| {
                    t["key"] == "nvidia.com/gpu"
                        && t["operator"] == "Exists"
                        && t["effect"] == "NoSchedule"
                });
            assert!(tolerates, "{path}: GPU toleration");
            assert!(
                pod["nodeSelector"]["gpuops.dev/class"].is_string(),
                "{path}: node selector"
            );
            let containers = pod["containers"].as_array().expect("containers");
            for c in containers {
                // Whole GPUs, or the MIG instances of a class that shares them.
                let gpu = c["resources"]["limits"]
                    .as_object()
                    .and_then(|l| l.keys().find(|k| k.starts_with("nvidia.com/")))
                    .map_or("nvidia.com/gpu", String::as_str);
                let req = &c["resources"]["requests"][gpu];
                let lim = &c["resources"]["limits"][gpu];
                assert!(
                    req.is_i64() && req.as_i64() > Some(0),
                    "{path}: integer GPU request"
                );
                assert_eq!(req, lim, "{path}: requests = limits");
                let mounts: Vec<&str> = c["volumeMounts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m["mountPath"].as_str())
                    .collect();
                let words: Vec<&str> = c["command"]
                    .as_array()
                    .into_iter()
                    .chain(c["args"].as_array())
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let ckpt = mounts.iter().find(|m| {
                    m.contains("checkpoint")
                        || words.iter().any(|w| w.contains(*m) && **m != "/dev/shm")
                });
                let ckpt =
                    ckpt.unwrap_or_else(|| panic!("{path}: no checkpoint mount among {mounts:?}"));
                assert!(
                    words.iter().any(|w| w.contains(ckpt)),
                    "{path}: args point at {ckpt}"
                );
            }
            let volumes = pod["volumes"].as_array().expect("volumes");
            assert!(
                volumes
                    .iter()
                    .any(|v| v["persistentVolumeClaim"]["claimName"].is_string()),
                "{path}: checkpoint claim"
            );
        }
        "PriorityClass" => {
            assert_eq!(o["apiVersion"], "scheduling.k8s.io/v1");
            let v = o["value"].as_i64().expect("value");
            assert!((-2_147_483_648..=1_000_000_000).contains(&v), "{path}");
            assert!(!name.starts_with("system-"), "{path}");
            let policy = o["preemptionPolicy"].as_str().unwrap_or_default();
            assert!(matches!(policy, "Never" | "PreemptLowerPriority"), "{path}");
            if name.ends_with("best-effort") {
                assert_eq!(policy, "Never", "{path}");
            }
            assert_eq!(o["globalDefault"], Value::Bool(false), "{path}");
        }
        "ResourceQuota" => {
            let hard = o["spec"]["hard"].as_object().expect("hard");
            for (k, v) in hard {
                assert!(
                    k.starts_with("requests."),
                    "{path}: extended resources are quota'd as requests.*"
                );
                assert!(
                    v.as_str().is_some_and(|q| q.parse::<u64>().is_ok()),
                    "{path}: {k}"
                );
            }
        }
        "LimitRange" => {
            for l in o["spec"]["limits"].as_array().expect("limits") {
                assert_eq!(l["type"], "Container", "{path}");
                let max = l["max"]["nvidia.com/gpu"]
                    .as_str()
                    .and_then(|q| q.parse::<u64>().ok());
                assert!(max.is_some_and(|m| m > 0), "{path}: max GPUs");
                // Without a default, the max would reject every container that asks for no GPU.
                assert_eq!(l["default"]["nvidia.com/gpu"], "0", "{path}");
            }
        }
        "Namespace" => assert_eq!(o["apiVersion"], "v1"),
        "Service" => {
            assert_eq!(o["spec"]["clusterIP"], "None", "{path}: headless");
            assert!(
                o["spec"]["selector"]["batch.kubernetes.io/job-name"].is_string(),
                "{path}"
            );
        }
        "ConfigMap" => {
            assert_eq!(o["apiVersion"], "v1", "{path}");
            // Device plugin configurations: each value a `version: v1` file.
            for (k, v) in o["data"].as_object().expect("data") {
                let text = v.as_str().expect("a string");
                let (_, config) = parse_one(&format!("{path}#{k}"), text);
                assert_eq!(config["version"], "v1", "{path}: {k}");
            }
        }
        "NodeOverlay" => {
            assert_eq!(o["apiVersion"], "karpenter.sh/v1alpha1", "{path}");
            for r in o["spec"]["requirements"].as_array().expect("requirements") {
                assert_eq!(r["operator"], "In", "{path}");
                assert!(
                    r["values"].as_array().is_some_and(|v| !v.is_empty()),
                    "{path}"
                );
            }
            for (k, v) in o["spec"]["capacity"].as_object().expect("capacity") {
                assert!(k.starts_with("nvidia.com/mig-"), "{path}: {k}");
                assert!(
                    v.as_str()
                        .is_some_and(|q| q.parse::<u64>().is_ok_and(|n| n > 0)),
                    "{path}: {k}"
                );
            }
        }
        "DaemonSet" => {
            assert_eq!(o["apiVersion"], "apps/v1", "{path}");
            let pod = &o["spec"]["template"]["spec"];
            assert_eq!(pod["priorityClassName"], "system-node-critical", "{path}");
            let matches = s(o, &["spec", "selector", "matchLabels"])
                .as_object()
                .expect("selector");
            for (k, v) in matches {
                assert_eq!(
                    &o["spec"]["template"]["metadata"]["labels"][k], v,
                    "{path}: the selector selects the template"
                );
            }
            for c in pod["containers"].as_array().expect("containers") {
                let image = c["image"].as_str().unwrap_or_default();
                let tag = image.rsplit_once(':').map(|(_, t)| t).unwrap_or_default();
                assert!(
                    !tag.is_empty() && tag != "latest" && !tag.contains('/'),
                    "{path}: pinned image, got {image}"
                );
                for r in ["cpu", "memory"] {
                    assert!(c["resources"]["limits"][r].is_string(), "{path}: {r} limit");
                    assert!(
                        c["resources"]["requests"][r].is_string(),
                        "{path}: {r} request"
                    );
                }
            }
        }
        other => panic!("{path}: no check for kind {other}"),
    }
}

/// The CEL and webhook rules of the CRDs that matter for rendered objects (the JSON schema check
/// cannot run CEL), from api-facts.md §1.2, §3, §7.
fn check_cel_equivalents(path: &str, kind: &str, o: &Value) {
    match kind {
        "NodePool" => {
            let tspec = &o["spec"]["template"]["spec"];
            for r in tspec["requirements"].as_array().expect("requirements") {
                let values = r["values"].as_array().map_or(0, Vec::len);
                match r["operator"].as_str() {
                    Some("In") => assert!(values > 0, "{path}: In needs values"),
                    Some("Gt" | "Lt" | "Gte" | "Lte") => assert_eq!(values, 1, "{path}"),
                    _ => {}
                }
                let key = r["key"].as_str().unwrap_or_default();
                assert!(
                    key != "karpenter.sh/nodepool" && key != "kubernetes.io/hostname",
                    "{path}: {key}"
                );
            }
            let labels = o["spec"]["template"]["metadata"]["labels"]
                .as_object()
                .expect("labels");
            for k in labels.keys() {
                let domain = k.split_once('/').map_or("", |(d, _)| d);
                assert!(
                    !domain.ends_with("karpenter.sh") && domain != "karpenter.k8s.aws",
                    "{path}: reserved label {k}"
                );
            }
            for b in o["spec"]["disruption"]["budgets"]
                .as_array()
                .into_iter()
                .flatten()
            {
                assert_eq!(
                    b["schedule"].is_null(),
                    b["duration"].is_null(),
                    "{path}: schedule and duration go together"
                );
            }
            let taints = tspec["taints"].as_array().expect("taints");
            assert!(
                taints
                    .iter()
                    .any(|t| t["key"] == "nvidia.com/gpu" && t["effect"] == "NoSchedule"),
                "{path}"
            );
            assert!(
                o["spec"]["limits"]["nvidia.com/gpu"].is_i64(),
                "{path}: GPU limit"
            );
        }
        "EC2NodeClass" => {
            let spec = &o["spec"];
            let terms = spec["amiSelectorTerms"]
                .as_array()
                .expect("amiSelectorTerms");
            assert_eq!(terms.len(), 1, "{path}: an alias term stands alone");
            let alias = terms[0]["alias"].as_str().expect("alias");
            assert!(
                !alias.ends_with("@latest") && alias.len() <= 30,
                "{path}: pinned alias"
            );
            assert!(
                spec["role"].is_string() != spec["instanceProfile"].is_string(),
                "{path}: role xor instanceProfile"
            );
            let devices = spec["blockDeviceMappings"].as_array().expect("devices");
            assert_eq!(
                devices
                    .iter()
                    .filter(|d| d["rootVolume"] == Value::Bool(true))
                    .count(),
                1,
                "{path}"
            );
            assert!(
                devices
                    .iter()
                    .all(|d| d["ebs"]["encrypted"] == Value::Bool(true)),
                "{path}: encrypted"
            );
            assert_eq!(spec["metadataOptions"]["httpTokens"], "required", "{path}");
        }
        "ClusterQueue" => {
            for g in o["spec"]["resourceGroups"].as_array().expect("groups") {
                let covered: Vec<&Value> = g["coveredResources"]
                    .as_array()
                    .expect("covered")
                    .iter()
                    .collect();
                for f in g["flavors"].as_array().expect("flavors") {
                    let names: Vec<&Value> = f["resources"]
                        .as_array()
                        .expect("resources")
                        .iter()
                        .map(|r| &r["name"])
                        .collect();
                    assert_eq!(
                        names, covered,
                        "{path}: flavor resources in coveredResources order"
                    );
                }
                assert!(
                    covered
                        .iter()
                        .any(|c| c.as_str().is_some_and(|c| c.starts_with("nvidia.com/"))),
                    "{path}"
                );
            }
            assert!(
                o["spec"]["namespaceSelector"].is_object(),
                "{path}: nil selector admits no namespace"
            );
        }
        "ResourceFlavor" => {
            for t in o["spec"]["tolerations"].as_array().into_iter().flatten() {
                if t["key"].as_str().is_none_or(str::is_empty) {
                    assert_eq!(t["operator"], "Exists", "{path}");
                }
            }
        }
        _ => {}
    }
}

#[test]
fn rendered_objects_are_accepted_by_the_upstream_schemas() {
    let crds = root().join("../shared/reference/crds");
    let have_crds = crds.is_dir();
    if !have_crds {
        eprintln!(
            "note: {} is absent; CRD schema validation skipped (core kinds still checked)",
            crds.display()
        );
    }
    let mut validators: Vec<(String, jsonschema::Validator)> = Vec::new();
    let mut checked = 0;
    for (profile, text) in clean_profiles() {
        for f in render_text(&profile, &text) {
            let (_, obj) = parse_one(&f.path, &f.text);
            let kind = obj["kind"].as_str().unwrap_or_default().to_string();
            let api = obj["apiVersion"].as_str().unwrap_or_default().to_string();
            if crd_file(&kind).is_none() {
                check_core(&f.path, &kind, &obj);
                continue;
            }
            check_cel_equivalents(&f.path, &kind, &obj);
            if !have_crds {
                continue;
            }
            let version = api.rsplit('/').next().unwrap_or_default();
            let key = format!("{kind}/{version}");
            if !validators.iter().any(|(k, _)| *k == key) {
                validators.push((key.clone(), crd_validator(&crds, &kind, version)));
            }
            let Some((_, validator)) = validators.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            let errors: Vec<String> = validator
                .iter_errors(&obj)
                .map(|e| format!("  at {}: {e}", e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{profile} → {} is rejected by the {key} CRD schema:\n{}",
                f.path,
                errors.join("\n")
            );
            checked += 1;
        }
    }
    if have_crds {
        assert!(checked > 20, "only {checked} CRD objects checked");
    }
}

#[test]
fn the_crd_check_would_catch_a_bad_object() {
    let crds = root().join("../shared/reference/crds");
    if !crds.is_dir() {
        eprintln!("note: {} is absent; skipped", crds.display());
        return;
    }
    let files = render_text("platform.yaml", &example_text());
    let pool = files
        .iter()
        .find(|f| f.path == "nodepools/training-spot.yaml")
        .expect("pool");
    let validator = crd_validator(&crds, "NodePool", "v1");
    let (_, good) = parse_one(&pool.path, &pool.text);
    assert!(validator.is_valid(&good));
    for (bad_text, what) in [
        (
            pool.text.replace(
                "consolidationPolicy: WhenEmpty",
                "consolidationPolicy: WhenUnderutilized",
            ),
            "old policy",
        ),
        (
            pool.text.replace("expireAfter: 720h", "expireAfter: 30d"),
            "day units",
        ),
        (
            pool.text.replace("  weight: 100", "  weight: 0"),
            "zero weight",
        ),
        (
            pool.text.replace("consolidateAfter", "consolidateafter"),
            "unknown field",
        ),
    ] {
        let (_, bad) = parse_one(&pool.path, &bad_text);
        assert!(!validator.is_valid(&bad), "{what} passed");
    }
}

#[test]
fn yaml_1_1_lookalike_names_come_out_quoted() {
    let profile = r#"apiVersion: gpuops.dev/v1alpha1
kind: Platform
cluster:
  name: ml
  region: us-east-1
  zones: [us-east-1a]
  nodeRole: "1_000"
  discoveryTag: "null"
  amiAlias: al2023@v20250715
classes:
  - name: "no"
    type: training
    gpus: [a100]
    capacity: spot
    maxGpus: 16
teams:
  - name: "on"
    namespace: "yes"
    gpuQuota: {"no": 16}
jobs:
  - name: "0755"
    team: "on"
    class: "no"
    image: example/trainer:1
    args: ["--checkpoint-dir=/checkpoints"]
    gpusPerWorker: 8
    workers: 2
    env: {FLAG: "off", COUNT: "1e3"}
    checkpoint: {claim: "y", path: /checkpoints}
"#;
    let files = render_text("platform.yaml", profile);
    let risky = [
        "no", "on", "yes", "0755", "null", "1_000", "off", "1e3", "y",
    ];
    fn walk(n: Node<'_>, path: &str, risky: &[&str], found: &mut Vec<String>) {
        match n.value() {
            YValue::Map(m) => {
                for (k, v) in m {
                    walk(k, path, risky, found);
                    walk(v, path, risky, found);
                }
            }
            YValue::Seq(s) => s.iter().for_each(|i| walk(i, path, risky, found)),
            YValue::Scalar { text, .. } => {
                if risky.contains(&text) && n.yaml11() != Some(Yaml11::Str) {
                    found.push(format!(
                        "{path} (byte {}): `{text}` reads as {:?}",
                        n.span().start(),
                        n.yaml11()
                    ));
                }
            }
        }
    }
    let mut found = Vec::new();
    let mut seen = 0;
    for f in &files {
        let (node, _) = parse_one(&f.path, &f.text);
        walk(node, &f.path, &risky, &mut found);
        seen += risky
            .iter()
            .filter(|r| f.text.contains(&format!("\"{r}\"")))
            .count();
    }
    assert!(
        found.is_empty(),
        "unquoted YAML 1.1 lookalikes:\n{}",
        found.join("\n")
    );
    assert!(
        seen > 20,
        "the lookalikes should appear (quoted) in the output"
    );
    let (_, findings) = render::self_check(&files, "");
    assert!(findings.is_empty(), "{findings:#?}");
}

// ---------------------------------------------------------------------------------------------
// CLI: init, schema, --check, errors, overrides, writes

#[test]
fn init_prints_a_profile_that_renders_and_checks_clean() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let init = run(gpuops_in(tmp.path()).args(["init"]));
    assert_eq!(init.code, 0);
    assert_eq!(init.out, render::INIT_PROFILE);
    assert!(
        init.out
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .count()
            > 10,
        "commented"
    );
    write_profile(tmp.path(), &init.out);
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy/"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let c =
        run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy/", "--check"]));
    assert_eq!(c.code, 0, "{}{}", c.out, c.err);
    assert!(c.out.contains("up to date"), "{}", c.out);
    // The files lint clean through the ordinary CLI too.
    let l = run(gpuops_in(tmp.path()).args(["lint", "deploy"]));
    assert_eq!(l.code, 0, "{}", l.out);
}

#[test]
fn schema_describes_the_profiles() {
    let r = run(gpuops_in(root()).args(["schema", "profile"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let schema: Value = serde_json::from_str(&r.out).expect("JSON");
    assert_eq!(schema["title"], "gpuops Platform profile");
    for key in [
        "apiVersion",
        "kind",
        "cluster",
        "devicePlugin",
        "classes",
        "teams",
        "jobs",
    ] {
        assert!(schema["properties"][key].is_object(), "{key}");
    }
    // A class's GPU sharing, one of three ways.
    let sharing = &schema["$defs"]["Sharing"]["properties"];
    for key in ["mig", "strategy", "timeSlicing", "mps"] {
        assert!(sharing[key].is_object(), "sharing.{key}");
    }
    assert!(schema["$defs"]["Class"]["properties"]["sharing"].is_object());
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    for (path, text) in clean_profiles() {
        let (_, obj) = parse_one(&path, &text);
        let errors: Vec<String> = validator
            .iter_errors(&obj)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:#?}");
    }
    let (_, mut bad) = parse_one("x", &example_text());
    bad["classes"][0]["capacity"] = json!("cheap");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn check_is_clean_then_reports_drift_missing_and_stale_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    write_profile(dir, &example_text());
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy"])).code,
        0
    );
    let clean = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"]));
    assert_eq!(clean.code, 0, "{}{}", clean.out, clean.err);

    // A hand edit.
    let pool = dir.join("deploy/nodepools/training-spot.yaml");
    let original = std::fs::read_to_string(&pool).expect("pool");
    std::fs::write(
        &pool,
        original.replace("nvidia.com/gpu: 64", "nvidia.com/gpu: 128"),
    )
    .expect("edit");
    let before = tree(&dir.join("deploy"));
    let drift = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"]));
    assert_eq!(drift.code, 1, "{}", drift.err);
    assert!(
        drift
            .out
            .contains("--- deploy/nodepools/training-spot.yaml (on disk)"),
        "{}",
        drift.out
    );
    assert!(
        drift
            .out
            .contains("+++ deploy/nodepools/training-spot.yaml (rendered)"),
        "{}",
        drift.out
    );
    assert!(
        drift
            .out
            .contains("-    nvidia.com/gpu: 128\n+    nvidia.com/gpu: 64"),
        "{}",
        drift.out
    );
    assert!(
        drift.err.contains("1 changed, 0 missing, 0 stale"),
        "{}",
        drift.err
    );
    assert_eq!(before, tree(&dir.join("deploy")), "--check writes nothing");
    std::fs::write(&pool, &original).expect("restore");

    // A missing file.
    let lq = dir.join("deploy/localqueues/ml-research.training.yaml");
    std::fs::remove_file(&lq).expect("remove");
    let missing = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"]));
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .out
            .contains("+++ deploy/localqueues/ml-research.training.yaml (rendered)"),
        "{}",
        missing.out
    );
    assert!(!lq.exists(), "--check writes nothing");
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy"])).code,
        0
    );

    // A stale generated file (the profile no longer produces it).
    std::fs::write(dir.join("deploy/nodepools/old-pool.yaml"), &original).expect("stale");
    let stale = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"]));
    assert_eq!(stale.code, 1);
    assert!(
        stale
            .out
            .contains("deploy/nodepools/old-pool.yaml (on disk, no longer rendered)"),
        "{}",
        stale.out
    );
    assert!(
        stale.err.contains("0 changed, 0 missing, 1 stale"),
        "{}",
        stale.err
    );

    // Hand-written files that render does not produce are not its business.
    std::fs::remove_file(dir.join("deploy/nodepools/old-pool.yaml")).expect("rm");
    std::fs::write(dir.join("deploy/README.yaml"), "# notes\nkind: Notes\n").expect("notes");
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"])).code,
        0
    );
}

fn profile_with(replacements: &[(&str, &str)]) -> String {
    let mut t = example_text();
    for (from, to) in replacements {
        assert!(t.contains(from), "the example has `{from}`");
        t = t.replacen(from, to, 1);
    }
    t
}

/// `line:column` of `token` on the `nth` (1-based) line containing `line_needle`.
pub(crate) fn at(text: &str, line_needle: &str, nth: usize, token: &str) -> String {
    let (i, line) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(line_needle))
        .nth(nth - 1)
        .unwrap_or_else(|| panic!("`{line_needle}` ×{nth} not in the profile"));
    let c = line
        .find(token)
        .unwrap_or_else(|| panic!("`{token}` not on line `{line}`"));
    format!("{}:{}", i + 1, line[..c].chars().count() + 1)
}

#[test]
fn semantic_profile_errors_are_all_reported_with_their_places() {
    let text = profile_with(&[
        ("gpus: [a100, h100]", "gpus: [a100, h1000]"),
        (
            "      development: 4\n      batch: 8\n\n  - name: applied",
            "      developmnt: 4\n      batch: 8\n\n  - name: applied",
        ),
        ("      inference: 16", "      inference: 24"),
        ("  - name: batch\n", "  - name: inference\n"),
    ]);
    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &text);
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(!tmp.path().join("deploy").exists(), "nothing is written");
    let err = &r.err;
    assert!(
        err.contains("error: invalid profile platform.yaml:"),
        "{err}"
    );
    let expect = [
        (at(&text, "h1000", 1, "h1000"), "unknown GPU name `h1000`"),
        (at(&text, "h1000", 1, "h1000"), "did you mean `h100`?"),
        (
            at(&text, "developmnt", 1, "developmnt"),
            "uses class `developmnt`, which is not defined",
        ),
        (
            at(&text, "inference: 24", 1, "24"),
            "quota of 24 GPUs for class `inference` is above the class ceiling of 16",
        ),
        (
            at(&text, "name: inference", 2, "inference"),
            "class `inference` is defined twice",
        ),
    ];
    for (place, message) in expect {
        assert!(err.contains(message), "missing `{message}` in:\n{err}");
        let place = format!("platform.yaml:{place}");
        assert!(
            err.contains(&place),
            "missing location {place} for `{message}` in:\n{err}"
        );
    }
    // The allowed values are part of the report.
    assert!(
        err.contains("defined classes: training, inference, development"),
        "{err}"
    );
    assert!(err.contains("GPU names: a100, a10g"), "{err}");
    // Each underline says what is wrong, not just that it is the profile's.
    for label in ["undefined", "over-ceiling", "duplicate"] {
        assert!(err.contains(&format!("╰── {label}")), "{label}:\n{err}");
    }
    assert!(!err.contains("── profile"), "{err}");
}

#[test]
fn structural_profile_errors_are_all_reported_with_their_places() {
    let text = profile_with(&[
        ("gpusPerWorker: 8", "gpusPerWorker: 1.5"),
        (
            "maxGpus: 16\n    consolidateAfter: 15m",
            "maxGpus: \"16\"\n    consolidateAfter: 15m",
        ),
        ("capacity: on-demand", "capacity: ondemand"),
        ("  discoveryTag: ml-prod", "  discoverytag: ml-prod"),
        (
            "  - name: research\n",
            "  - name: research\n    name: research2\n",
        ),
    ]);
    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &text);
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml"]));
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.out.is_empty(), "nothing rendered");
    let err = &r.err;
    let expect = [
        (
            at(&text, "1.5", 1, "1.5"),
            "`gpusPerWorker` must be a whole number, found `1.5`",
        ),
        (
            at(&text, "\"16\"", 1, "\""),
            "`maxGpus` must be a whole number, found `16`",
        ),
        (
            at(&text, "ondemand", 1, "ondemand"),
            "`capacity` must be one of: spot, on-demand, spot-first; found `ondemand`",
        ),
        (
            at(&text, "discoverytag", 1, "discoverytag"),
            "unknown key `discoverytag` in `cluster`",
        ),
        (
            at(&text, "name: research2", 1, "name"),
            "duplicate key `name`",
        ),
    ];
    for (place, message) in expect {
        assert!(err.contains(message), "missing `{message}` in:\n{err}");
        let place = format!("platform.yaml:{place}");
        assert!(
            err.contains(&place),
            "missing location {place} for `{message}` in:\n{err}"
        );
    }
    assert!(err.contains("did you mean `discoveryTag`?"), "{err}");
    assert!(err.contains("5 errors"), "{err}");
    for label in ["wrong-type", "not-allowed", "unknown-key", "duplicate"] {
        assert!(err.contains(&format!("╰── {label}")), "{label}:\n{err}");
    }
}

#[test]
fn job_and_name_errors_are_located() {
    let text = profile_with(&[
        (
            "    team: applied\n    class: batch",
            "    team: applied\n    class: training\n",
        ),
        (
            "--checkpoint-dir=/checkpoints/llama-8b",
            "--checkpoint-dir=/tmp/ckpt",
        ),
        (
            "terminationGracePeriodSeconds: 90",
            "terminationGracePeriodSeconds: 300",
        ),
        ("  - name: applied", "  - name: Applied_Team"),
    ]);
    let err = match render::parse_profile("platform.yaml", &text) {
        Ok(_) => panic!("the profile should not validate"),
        Err(e) => e,
    };
    let messages: Vec<&str> = err.problems.iter().map(|p| p.message.as_str()).collect();
    let has = |m: &str| messages.iter().any(|x| x.contains(m));
    assert!(
        has("`--checkpoint-dir` points at `/tmp/ckpt`, outside the checkpoint volume"),
        "{messages:#?}"
    );
    assert!(
        has("team `Applied_Team` is not a valid name"),
        "{messages:#?}"
    );
    assert!(
        has("job `embeddings-backfill` names team `applied`, which is not defined"),
        "{messages:#?}"
    );
    let report = err.report(false);
    assert!(
        report.contains(&format!(
            "platform.yaml:{}",
            at(&text, "--checkpoint-dir=/tmp", 1, "--")
        )),
        "{report}"
    );
}

#[test]
fn spot_grace_and_checkpoint_path_are_enforced() {
    let text = profile_with(&[
        (
            "terminationGracePeriodSeconds: 90",
            "terminationGracePeriodSeconds: 300",
        ),
        ("      - --checkpoint-dir=/checkpoints/llama-8b\n", ""),
    ]);
    let err = match render::parse_profile("platform.yaml", &text) {
        Ok(_) => panic!("the profile should not validate"),
        Err(e) => e,
    };
    let messages: Vec<&str> = err.problems.iter().map(|p| p.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("300 seconds is longer than the 2-minute notice")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("never mention the checkpoint path `/checkpoints`")),
        "{messages:#?}"
    );
}

/// A spot class's grace period must fit between the lint rule's minimum (30 s) and the notice;
/// an on-demand class is not held to the minimum. Errors are located and nothing is written.
#[test]
fn spot_grace_below_the_minimum_is_a_located_error() {
    let text = profile_with(&[(
        "terminationGracePeriodSeconds: 90",
        "terminationGracePeriodSeconds: 20",
    )]);
    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &text);
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(!tmp.path().join("deploy").exists(), "nothing is written");
    assert!(
        r.err.contains(
            "20 seconds is too short to write a checkpoint when a spot instance is reclaimed"
        ),
        "{}",
        r.err
    );
    let place = format!(
        "platform.yaml:{}",
        at(&text, "terminationGracePeriodSeconds: 20", 1, "20")
    );
    assert!(r.err.contains(&place), "{place} in {}", r.err);
    assert!(r.err.contains("use 30 to 120 seconds"), "{}", r.err);
    // The bounds themselves are accepted on spot; on-demand may go lower.
    for secs in ["30", "120"] {
        let ok = profile_with(&[(
            "terminationGracePeriodSeconds: 90",
            &format!("terminationGracePeriodSeconds: {secs}"),
        )]);
        let files = render_text("platform.yaml", &ok);
        let (_, findings) = render::self_check(&files, "");
        assert!(findings.is_empty(), "{secs}: {findings:#?}");
    }
    let on_demand = profile_with(&[
        (
            "    capacity: spot
",
            "    capacity: on-demand
",
        ),
        (
            "terminationGracePeriodSeconds: 90",
            "terminationGracePeriodSeconds: 10",
        ),
    ]);
    let files = render_text("platform.yaml", &on_demand);
    let job = files
        .iter()
        .find(|f| f.path == "jobs/ml-applied.embeddings-backfill.yaml")
        .expect("job");
    assert!(job.text.contains("terminationGracePeriodSeconds: 10"));
    let (_, findings) = render::self_check(&files, "");
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn the_default_grace_leaves_a_margin_inside_the_spot_notice() {
    let files = render_text("platform.yaml", &example_text());
    let job = files
        .iter()
        .find(|f| f.path == "jobs/ml-research.llama-finetune.yaml")
        .expect("job");
    assert!(
        job.text.contains("terminationGracePeriodSeconds: 90\n"),
        "{}",
        job.text
    );
}

// ---------------------------------------------------------------------------------------------
// Device plugin

/// Several classes with different GPU kinds and capacities, on AL2023 with the device plugin.
fn device_plugin_profile() -> String {
    profile_with(&[
        (
            "amiAlias: bottlerocket@v1.42.0",
            "amiAlias: al2023@v20250715",
        ),
        ("\nclasses:\n", "\ndevicePlugin: nvidia\n\nclasses:\n"),
        ("rootVolume: 20Gi", "rootVolume: 100Gi"),
    ])
}

/// Whether a toleration tolerates a taint (Kubernetes' rule: key, operator Exists or equal
/// values, and an empty effect matching any).
pub(crate) fn tolerates(t: &Value, taint: &Value) -> bool {
    let key_ok = t["key"].is_null() && t["operator"] == "Exists" || t["key"] == taint["key"];
    let value_ok = t["operator"] == "Exists" || t["value"] == taint["value"];
    let effect_ok = t["effect"].is_null() || t["effect"] == taint["effect"];
    key_ok && value_ok && effect_ok
}

/// Whether a node with `labels` (a pool's template labels) satisfies one match expression.
fn satisfies(labels: &Value, e: &Value) -> bool {
    let v = labels[e["key"].as_str().unwrap_or_default()].as_str();
    let values: Vec<&str> = e["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match e["operator"].as_str() {
        Some("In") => v.is_some_and(|v| values.contains(&v)),
        Some("NotIn") => v.is_none_or(|v| !values.contains(&v)),
        Some("Exists") => v.is_some(),
        Some("DoesNotExist") => v.is_none(),
        _ => false,
    }
}

#[test]
fn the_device_plugin_tolerates_and_selects_every_gpu_pool() {
    let files = render_text("platform.yaml", &device_plugin_profile());
    let ds = files
        .iter()
        .find(|f| f.path == "daemonsets/kube-system.nvidia-device-plugin.yaml")
        .expect("the device plugin is rendered");
    let (_, ds) = parse_one(&ds.path, &ds.text);
    let pod = &ds["spec"]["template"]["spec"];
    let tolerations = pod["tolerations"].as_array().expect("tolerations");
    let terms = s(
        pod,
        &[
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ],
    )
    .as_array()
    .expect("node selector terms");
    assert!(pod["nodeSelector"].is_null());
    let mut pools = 0;
    for f in files.iter().filter(|f| f.path.starts_with("nodepools/")) {
        let (_, pool) = parse_one(&f.path, &f.text);
        let tmpl = &pool["spec"]["template"];
        for taint in tmpl["spec"]["taints"].as_array().into_iter().flatten() {
            assert!(
                tolerations.iter().any(|t| tolerates(t, taint)),
                "{}: taint {taint} not tolerated",
                f.path
            );
        }
        let labels = &tmpl["metadata"]["labels"];
        let admitted = terms.iter().any(|term| {
            term["matchExpressions"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|e| satisfies(labels, e))
        });
        assert!(admitted, "{}: the plugin's affinity excludes it", f.path);
        pools += 1;
    }
    assert_eq!(pools, 5, "every class's pools were checked");
    let (_, findings) = render::self_check(&files, "");
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn no_device_plugin_unless_the_profile_asks() {
    let files = render_text("platform.yaml", &example_text());
    assert!(!files.iter().any(|f| f.path.starts_with("daemonsets/")));
}

#[test]
fn a_device_plugin_on_bottlerocket_is_a_located_error() {
    let text = profile_with(&[("\nclasses:\n", "\ndevicePlugin: nvidia\n\nclasses:\n")]);
    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &text);
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(!tmp.path().join("deploy").exists(), "nothing is written");
    assert!(
        r.err
            .contains("Bottlerocket's NVIDIA variants already run the NVIDIA device plugin"),
        "{}",
        r.err
    );
    let place = format!("platform.yaml:{}", at(&text, "devicePlugin:", 1, "nvidia"));
    assert!(r.err.contains(&place), "{place} in {}", r.err);
    assert!(r.err.contains("Bottlerocket chosen here"), "{}", r.err);
}

// ---------------------------------------------------------------------------------------------
// Cost ceiling

/// render's stderr line is `gpuops cost`'s total over the files it writes.
#[test]
fn render_prints_the_cost_ceiling_of_its_output() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &example_text());
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", r.err);
    let c = run(gpuops_in(tmp.path()).args(["cost", "deploy", "--format", "json"]));
    assert_eq!(c.code, 0, "{}", c.err);
    let report: Value = serde_json::from_str(&c.out).expect("JSON");
    let total = &report["total"];
    let expected = format!(
        "cost ceiling: {:.2} $/h ({:.2} $/h on-demand, {:.2} $/h spot-only),",
        total["worst"].as_f64().expect("worst"),
        total["on_demand"].as_f64().expect("on-demand"),
        total["spot"].as_f64().expect("spot")
    );
    assert!(
        lines[0].starts_with(&expected),
        "{} vs {expected}",
        lines[0]
    );
    assert!(
        total["unbounded_pools"]
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    // The stream mode keeps stdout pure YAML: the line goes to stderr there too.
    let s = run(gpuops_in(tmp.path()).args(["render", "platform.yaml"]));
    assert!(s.err.starts_with("cost ceiling: "), "{}", s.err);
    assert!(!s.out.contains("cost ceiling"));
}

/// `gpuops cost` of the example profile's output against the arithmetic done here from the
/// catalog's prices. Each class's pools are at its `maxGpus`, filled with the instance type of
/// its GPUs that costs most per GPU (a one-GPU size: the big sizes cost no more per GPU):
/// - training (a100, h100; spot-first; 64): p5.4xlarge, one H100 at 6.88 $/h (p5.48xlarge is
///   8 × 6.88 too). Its spot pool and on-demand fallback share the 48 + 16 GPUs of the teams'
///   quotas: the 64 count once, on demand (the dearer side).
/// - inference (l4, a10g; on-demand; 16) and development (g6, g5; on-demand; 8): g5.16xlarge,
///   one A10G at 4.096 $/h.
/// - batch (g6e.xlarge, g6e.2xlarge; spot only; 16): g6e.2xlarge at 2.24208 $/h, at spot
///   (1 − 0.65): in the spot total, not the on-demand one.
#[test]
fn cost_of_the_example_profile_is_the_hand_computation() {
    let price = |t: &str| gpuops::cost::catalog_price(t).expect(t);
    let on_demand = 64.0 * price("p5.4xlarge") + (16.0 + 8.0) * price("g5.16xlarge");
    let spot = 16.0 * price("g6e.2xlarge") * (1.0 - 0.65);
    assert!((64.0 * price("p5.4xlarge") - 8.0 * price("p5.48xlarge")).abs() < 1e-9);

    let tmp = tempfile::tempdir().expect("tempdir");
    write_profile(tmp.path(), &example_text());
    let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 0, "{}", r.err);
    let c = run(gpuops_in(tmp.path()).args(["cost", "deploy", "--format", "json"]));
    assert_eq!(c.code, 0, "{}", c.err);
    let report: Value = serde_json::from_str(&c.out).expect("JSON");
    let total = &report["total"];
    let got = |k: &str| total[k].as_f64().expect(k);
    assert!((got("on_demand") - on_demand).abs() < 1e-6, "{total}");
    assert!((got("spot") - spot).abs() < 1e-6, "{total}");
    assert!((got("worst") - (on_demand + spot)).abs() < 1e-6, "{total}");
    // The training class: the fallback counts the 64 GPUs, the spot pool nothing on top.
    let pool = |name: &str| {
        report["nodepools"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == name))
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let (od, spot_pool) = (pool("training-on-demand"), pool("training-spot"));
    assert!((od["counted"].as_f64().unwrap() - 64.0 * price("p5.4xlarge")).abs() < 1e-6);
    assert_eq!(spot_pool["counted"].as_f64(), Some(0.0));
    assert_eq!(spot_pool["capped_by"]["gpus"].as_f64(), Some(64.0));
    // render's line says the same.
    assert!(
        r.err.starts_with(&format!(
            "cost ceiling: {:.2} $/h ({on_demand:.2} $/h on-demand, {spot:.2} $/h spot-only),",
            on_demand + spot
        )),
        "{}",
        r.err
    );
}

// ---------------------------------------------------------------------------------------------
// Lint-clean by construction, over many shapes of profile

/// Classes of every GPU kind and capacity, single- and multi-node jobs on EFA and non-EFA
/// instances, grace periods at the bounds, both AMI families (with the device plugin on AL2023):
/// the output has no finding under the full rule set.
#[test]
fn every_shape_of_profile_renders_lint_clean() {
    let gpus = [
        "[a100]",
        "[h100, a100]",
        "[p5]",
        "[p4d.24xlarge]",
        "[g5, a100]",
        "[l4]",
        "[g6e.xlarge, g6e.12xlarge]",
    ];
    let mut checked = 0;
    for (gi, g) in gpus.iter().enumerate() {
        for capacity in ["spot", "on-demand", "spot-first"] {
            for class_type in ["training", "batch"] {
                let al2023 = (gi + checked) % 2 == 0;
                let (alias, plugin) = if al2023 {
                    ("al2023@v20250715", "devicePlugin: nvidia\n")
                } else {
                    ("bottlerocket@v1.42.0", "")
                };
                let per_node = if g.contains("l4") || g.contains("g6e.xlarge") {
                    1
                } else {
                    8
                };
                let grace = ["30", "90", "120"][checked % 3];
                let text = format!(
                    "apiVersion: gpuops.dev/v1alpha1\nkind: Platform\ncluster:\n  name: c\n  region: us-east-1\n  zones: [us-east-1a, us-east-1b]\n  nodeRole: r\n  amiAlias: {alias}\n{plugin}classes:\n  - name: work\n    type: {class_type}\n    gpus: {g}\n    capacity: {capacity}\n    maxGpus: 32\n  - name: serve\n    type: inference\n    gpus: [l4]\n    capacity: on-demand\n    maxGpus: 4\nteams:\n  - name: t\n    gpuQuota: {{work: 32, serve: 4}}\njobs:\n  - name: multi\n    team: t\n    class: work\n    image: example/trainer:1\n    command: [torchrun]\n    args: [--nnodes=2, --nproc-per-node={per_node}, train.py, --checkpoint-dir=/ckpt]\n    gpusPerWorker: {per_node}\n    workers: 2\n    checkpoint: {{claim: ckpt, path: /ckpt}}\n    terminationGracePeriodSeconds: {grace}\n  - name: single\n    team: t\n    class: work\n    image: example/trainer:1\n    args: [--checkpoint-dir=/ckpt]\n    gpusPerWorker: 1\n    checkpoint: {{claim: ckpt, path: /ckpt}}\n"
                );
                let files = render_text("p.yaml", &text);
                let (sources, findings) = render::self_check(&files, "");
                assert!(
                    findings.is_empty(),
                    "{text}\n{}",
                    human_text(&findings, &sources)
                );
                assert_eq!(
                    files.iter().any(|f| f.path.starts_with("daemonsets/")),
                    al2023
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 42);
}

#[test]
fn a_template_override_changes_only_its_output() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    write_profile(dir, &example_text());
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "plain"])).code,
        0
    );
    let templates = dir.join("templates");
    std::fs::create_dir(&templates).expect("mkdir");
    let original = render::templates::EMBEDDED
        .iter()
        .find(|(n, _)| *n == "namespace.yaml.j2")
        .map(|(_, s)| *s)
        .expect("namespace template");
    let changed = original.replace(
        "  labels:\n",
        "  annotations:\n    example.com/owner: {{ namespace.team | toyaml }}\n  labels:\n",
    );
    assert_ne!(original, changed);
    std::fs::write(templates.join("namespace.yaml.j2"), changed).expect("write");
    let r = run(gpuops_in(dir).args([
        "render",
        "platform.yaml",
        "-o",
        "custom",
        "--templates",
        "templates",
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    let plain = tree(&dir.join("plain"));
    let custom = tree(&dir.join("custom"));
    assert_eq!(plain.len(), custom.len());
    for ((pa, ta), (pb, tb)) in plain.iter().zip(&custom) {
        assert_eq!(pa, pb);
        if pa.starts_with("namespaces/") {
            assert_ne!(ta, tb, "{pa} should change");
            assert!(
                tb.contains("example.com/owner: research")
                    || tb.contains("example.com/owner: applied"),
                "{tb}"
            );
        } else {
            assert_eq!(ta, tb, "{pa} should not change");
        }
    }
    // A file that replaces no template is a mistake worth stopping for.
    std::fs::write(templates.join("nodepol.yaml.j2"), "x").expect("write");
    let bad = run(gpuops_in(dir).args(["render", "platform.yaml", "--templates", "templates"]));
    assert_eq!(bad.code, 2);
    assert!(
        bad.err.contains("`nodepol.yaml.j2` replaces no template"),
        "{}",
        bad.err
    );
    std::fs::remove_file(templates.join("nodepol.yaml.j2")).expect("rm");
    // An override that renders the wrong object is caught before anything is written.
    std::fs::write(
        templates.join("namespace.yaml.j2"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n",
    )
    .expect("write");
    let wrong = run(gpuops_in(dir).args([
        "render",
        "platform.yaml",
        "-o",
        "wrong",
        "--templates",
        "templates",
    ]));
    assert_eq!(wrong.code, 2);
    assert!(
        wrong
            .err
            .contains("template `namespace.yaml.j2` rendered v1 Namespace other"),
        "{}",
        wrong.err
    );
    assert!(!dir.join("wrong").exists());
    // Undefined values are errors, not empty strings.
    std::fs::write(
        templates.join("namespace.yaml.j2"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ namespace.nmae }}\n",
    )
    .expect("write");
    let undefined =
        run(gpuops_in(dir).args(["render", "platform.yaml", "--templates", "templates"]));
    assert_eq!(undefined.code, 2);
    assert!(undefined.err.contains("undefined"), "{}", undefined.err);
}

#[test]
fn a_template_that_breaks_a_rule_fails_the_self_check() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    write_profile(dir, &example_text());
    std::fs::create_dir(dir.join("templates")).expect("mkdir");
    let job = render::templates::EMBEDDED
        .iter()
        .find(|(n, _)| *n == "job.yaml.j2")
        .map(|(_, s)| *s)
        .expect("job template");
    let broken = job.replace("        karpenter.sh/do-not-disrupt: \"true\"\n", "");
    assert_ne!(job, broken);
    std::fs::write(dir.join("templates/job.yaml.j2"), broken).expect("write");
    let r = run(gpuops_in(dir).args([
        "render",
        "platform.yaml",
        "-o",
        "deploy",
        "--templates",
        "templates",
    ]));
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.err.contains("the rendered manifests fail lint"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("training-do-not-disrupt-missing"),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains("deploy/jobs/ml-research.llama-finetune.yaml"),
        "{}",
        r.err
    );
    assert!(!dir.join("deploy").exists(), "nothing is written");
}

#[test]
fn a_hand_written_file_is_not_overwritten_without_force() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    write_profile(dir, &example_text());
    let mine = dir.join("deploy/nodepools/training-spot.yaml");
    std::fs::create_dir_all(mine.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &mine,
        "# my own pool\napiVersion: karpenter.sh/v1\nkind: NodePool\n",
    )
    .expect("write");
    let r = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 2, "{}", r.out);
    assert!(
        r.err
            .contains("refusing to overwrite 1 file not generated by gpuops"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("deploy/nodepools/training-spot.yaml"),
        "{}",
        r.err
    );
    assert!(r.err.contains("--force"), "{}", r.err);
    assert_eq!(
        tree(&dir.join("deploy")).len(),
        1,
        "nothing else was written"
    );
    assert!(
        std::fs::read_to_string(&mine)
            .expect("read")
            .starts_with("# my own pool")
    );
    let forced = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--force"]));
    assert_eq!(forced.code, 0, "{}", forced.err);
    assert!(render::is_generated(
        &std::fs::read_to_string(&mine).expect("read")
    ));
    // No temporary files are left behind.
    assert!(
        tree(&dir.join("deploy")).iter().all(|(p, _)| !p
            .rsplit('/')
            .next()
            .unwrap_or(p)
            .starts_with(".gpuops-"))
    );
}

#[test]
fn files_the_profile_no_longer_produces_are_removed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    write_profile(dir, &example_text());
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy"])).code,
        0
    );
    std::fs::write(dir.join("deploy/kustomization.yaml"), "resources: []\n").expect("hand-written");
    // Drop the multi-worker job: its Job and Service go; the rest stays.
    let text = example_text();
    let start = text.find("  - name: llama-finetune").expect("job");
    let end = text
        .find("  - name: embeddings-backfill")
        .expect("next job");
    let smaller = format!("{}{}", &text[..start], &text[end..]);
    write_profile(dir, &smaller);
    let r = run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy"]));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .contains("removed deploy/jobs/ml-research.llama-finetune.yaml"),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("removed deploy/services/ml-research.llama-finetune.yaml"),
        "{}",
        r.out
    );
    assert!(
        !dir.join("deploy/jobs/ml-research.llama-finetune.yaml")
            .exists()
    );
    assert!(
        !dir.join("deploy/services").exists(),
        "emptied directories go too"
    );
    assert!(
        dir.join("deploy/jobs/ml-applied.embeddings-backfill.yaml")
            .exists()
    );
    assert!(
        dir.join("deploy/kustomization.yaml").exists(),
        "other files are left alone"
    );
    assert_eq!(
        run(gpuops_in(dir).args(["render", "platform.yaml", "-o", "deploy", "--check"])).code,
        0
    );
}

#[test]
fn names_that_could_escape_the_output_directory_are_refused() {
    let text = profile_with(&[("  - name: llama-finetune", "  - name: ../../etc")]);
    let err = match render::parse_profile("platform.yaml", &text) {
        Ok(_) => panic!("`../../etc` must not validate"),
        Err(e) => e,
    };
    assert!(
        err.problems
            .iter()
            .any(|p| p.message.contains("job `../../etc` is not a valid name")),
        "{:#?}",
        err.problems
    );
    let files = vec![RenderedFile {
        path: "../outside.yaml".into(),
        text: render::header("p.yaml"),
    }];
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = render::output::write(&tmp.path().join("deploy"), &files, true);
    assert!(
        matches!(out, Err(render::output::OutputError::Escape { .. })),
        "{out:?}"
    );
    assert!(!tmp.path().join("outside.yaml").exists());
}

#[test]
fn check_needs_an_output_directory_and_lint_still_works() {
    let r = run(gpuops_in(root()).args(["render", "examples/profiles/minimal.yaml", "--check"]));
    assert_eq!(r.code, 2, "{}", r.err);
    let rules = run(gpuops_in(root()).args(["rules"]));
    assert_eq!(rules.code, 0);
    assert!(rules.out.contains("gpu-limit-missing"));
    let missing = run(gpuops_in(root()).args(["render", "no/such/profile.yaml"]));
    assert_eq!(missing.code, 2);
    assert!(
        missing
            .err
            .contains("cannot read profile no/such/profile.yaml"),
        "{}",
        missing.err
    );
}

// ---------------------------------------------------------------------------------------------
// The same checks through `schema-violation`: built-in knowledge, and the `--crd` path

fn schema_findings(files: Vec<gpuops::source::SourceFile>) -> Vec<gpuops::diag::Diagnostic> {
    let settings = gpuops::config::Settings {
        only: Some(vec!["schema-violation".into(), "yaml-type-trap".into()]),
        ..Default::default()
    };
    gpuops::lint(&files, &settings).diagnostics
}

fn rendered_sources(profile: &str, text: &str) -> Vec<gpuops::source::SourceFile> {
    render_text(profile, text)
        .into_iter()
        .map(|f| gpuops::source::SourceFile::from_text(f.path, f.text))
        .collect()
}

#[test]
fn rendered_objects_pass_the_built_in_schema_checks() {
    for (profile, text) in clean_profiles() {
        let found = schema_findings(rendered_sources(&profile, &text));
        assert!(found.is_empty(), "{profile}: {found:#?}");
    }
}

/// The upstream CRDs, read as `--crd` reads them (context files), validate the rendered objects
/// through schema-violation; a planted mistake is found there too.
#[test]
fn rendered_objects_pass_the_upstream_crds_given_as_crd_paths() {
    let crds = root().join("../shared/reference/crds");
    if !crds.is_dir() {
        eprintln!("note: {} is absent; skipped", crds.display());
        return;
    }
    let crd_files = || -> Vec<gpuops::source::SourceFile> {
        let mut v: Vec<_> = std::fs::read_dir(&crds)
            .expect("crds dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).expect("crd");
                let mut f = gpuops::source::SourceFile::from_text(p.display().to_string(), text);
                f.role = gpuops::source::Role::Context { cluster: None };
                f
            })
            .collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v
    };
    for (profile, text) in clean_profiles() {
        let mut files = rendered_sources(&profile, &text);
        files.extend(crd_files());
        let found = schema_findings(files);
        assert!(found.is_empty(), "{profile}: {found:#?}");
    }
    let mut files: Vec<_> = rendered_sources("platform.yaml", &example_text())
        .into_iter()
        .map(|f| {
            if f.path == "nodepools/training-spot.yaml" {
                let bad = f
                    .text
                    .replace("consolidateAfter", "consolidateafter")
                    .replace("  weight: 100", "  weight: 0");
                gpuops::source::SourceFile::from_text(f.path, bad)
            } else {
                f
            }
        })
        .collect();
    files.extend(crd_files());
    let found = schema_findings(files);
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`consolidateafter`") && m.contains("CRD schema")),
        "{messages:#?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("spec.weight") && m.contains("CRD schema")),
        "{messages:#?}"
    );
}

/// A profile that is not UTF-8 made `gpuops render` exit 2 with an error naming no place; every
/// mutated profile is reported at a line and column, and nothing is written.
#[test]
fn mutated_profiles_are_located_errors() {
    let example = example_text();
    let line_of = |needle: &str| example[..example.find(needle).unwrap()].lines().count() + 1;
    let mut bad_byte = example.clone().into_bytes();
    let at = example.find("teams:").expect("teams");
    bad_byte[at + 2] = 0xff;
    let cases: Vec<(Vec<u8>, String)> = vec![
        (bad_byte, format!("platform.yaml:{}:3", line_of("teams:"))),
        (
            example.replacen("teams:", "teams: [", 1).into_bytes(),
            "platform.yaml:".to_string(),
        ),
        (
            example.replacen("teams:", "teams: 7\nx:", 1).into_bytes(),
            "platform.yaml:".to_string(),
        ),
    ];
    for (bytes, place) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::write(tmp.path().join("platform.yaml"), &bytes).unwrap();
        let r = run(gpuops_in(tmp.path()).args(["render", "platform.yaml", "-o", "deploy"]));
        assert_eq!(r.code, 2, "{}", r.err);
        assert!(!tmp.path().join("deploy").exists(), "nothing is written");
        assert!(r.err.contains(&place), "{place}: {}", r.err);
        assert!(
            r.err.lines().any(|l| {
                l.contains("platform.yaml:")
                    && l.split("platform.yaml:").nth(1).is_some_and(|rest| {
                        rest.split(':')
                            .next()
                            .is_some_and(|n| n.parse::<u32>().is_ok())
                    })
            }),
            "no line in: {}",
            r.err
        );
    }
}
