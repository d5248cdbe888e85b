use super::helm::{find_keys, values_lines};
use super::*;

use crate::yaml::test_root as root;

#[test]
fn paths_follow_list_items_by_identity() {
    let rendered =
        root("spec:\n  containers:\n  - name: b\n    image: y\n  - name: a\n    image: x\n");
    let n = rendered
        .at(&["spec", "containers"])
        .unwrap()
        .as_seq()
        .unwrap()
        .get(1)
        .unwrap()
        .get("image")
        .unwrap();
    let p = path_to(rendered, n.span());
    assert_eq!(
        p.segs,
        vec![
            Seg::Key("spec".into()),
            Seg::Key("containers".into()),
            Seg::Item {
                index: 1,
                id: Some(("name", "a".into()))
            },
            Seg::Key("image".into()),
        ]
    );
    let text = "spec:\n  containers:\n    - name: a\n      image: x\n";
    let origin = root(text);
    let f = follow(origin, &p.segs);
    assert_eq!(f.depth, 4);
    assert_eq!(f.node.span().start_pos(text).line, 4);
}

#[test]
fn key_findings_stay_on_keys() {
    let r = root("a:\n  b: 1\n");
    let (k, _) = r.get("a").unwrap().entry("b").unwrap();
    let p = path_to(r, k.span());
    assert!(p.on_key);
    assert_eq!(p.segs.len(), 2);
}

#[test]
fn keys_are_found_in_order_in_templates() {
    let t = "metadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          resources:\n            {{- toYaml .Values.resources | nindent 12 }}\n";
    let (at, len, last) = find_keys(
        t,
        &[
            "spec",
            "template",
            "spec",
            "containers",
            "name",
            "resources",
            "limits",
        ],
    )
    .unwrap();
    assert_eq!(&t[at..at + len], "resources");
    assert_eq!(Pos::of(t, at).line, 8);
    assert!(!last);
}

#[test]
fn values_lines_match_key_and_value() {
    let v = "gpu:\n  count: 2 # per pod\n  other: 2\n  \"nvidia.com/gpu\": \"2\"\n";
    let hits = values_lines(v, "count", "2");
    assert_eq!(hits.len(), 1);
    assert_eq!(&v[hits[0].0..hits[0].0 + hits[0].1], "2");
    assert_eq!(Pos::of(v, hits[0].0).line, 2);
    assert_eq!(values_lines(v, "nvidia.com/gpu", "2").len(), 1);
}

#[test]
fn json_pointer_prefixes() {
    let segs = vec![Seg::Key("spec".into()), Seg::Key("tolerations".into())];
    assert_eq!(common_prefix(&pointer("/spec/tolerations/0"), &segs), 2);
    assert_eq!(pointer("/a~1b/c~0d"), vec!["a/b", "c~d"]);
}

#[test]
fn inline_patch_spans_map_into_the_kustomization() {
    let k = "patches:\n  - patch: |-\n      kind: Job\n      spec:\n        x: 1\n";
    let r = root(k);
    let scalar = r
        .get("patches")
        .unwrap()
        .as_seq()
        .unwrap()
        .get(0)
        .unwrap()
        .get("patch")
        .unwrap();
    let text = scalar.as_str().unwrap();
    let inner = root(text);
    let x = inner.at(&["spec", "x"]).unwrap();
    let m = Inline::new(k, scalar, text).unwrap();
    let s = m.span(k, x.span());
    let p = s.start_pos(k);
    assert_eq!((p.line, p.col), (5, 12));
    assert_eq!(&k[s.range()], "1");
}

#[test]
fn image_names() {
    assert_eq!(image_name("ghcr.io/x/y:1.0"), "ghcr.io/x/y");
    assert_eq!(image_name("localhost:5000/y"), "localhost:5000/y");
    assert_eq!(image_name("y@sha256:abc"), "y");
}

#[test]
fn transformers_and_generators_point_at_the_kustomization() {
    use crate::source::tree::{Forest, identity};
    let d = tempfile::tempdir().unwrap();
    let kust = "namespace: ml\nnamePrefix: p-\nresources: [job.yaml]\nimages:\n  - name: x\n    newTag: v2\nconfigMapGenerator:\n  - name: settings\n    literals: [a=b]\n";
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: default\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          image: x:v1\n";
    std::fs::write(d.path().join("kustomization.yaml"), kust).unwrap();
    std::fs::write(d.path().join("job.yaml"), job).unwrap();
    let kpath = identity(&d.path().join("kustomization.yaml"));
    let jpath = identity(&d.path().join("job.yaml"));
    let forest = Forest::load(std::slice::from_ref(&kpath));
    let mut cache = BTreeMap::new();
    cache.insert(
        jpath.clone(),
        SourceFile::from_text("job.yaml".into(), job.into()),
    );
    let cx = Ctx {
        forest: &forest,
        cache: &cache,
    };
    let rendered = SourceFile::from_text(
            "r".into(),
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: p-j\n  namespace: ml\nspec:\n  template:\n    spec:\n      containers:\n      - image: x:v2\n        name: c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p-settings-abc\n".into(),
        );
    let origins = [
        Origin::File(jpath.clone()),
        Origin::Generated {
            kustomization: kpath.clone(),
        },
    ];
    let job_root = &rendered.docs[0].root();
    let at = |n: Node<'_>| {
        let r = kustomize(&cx, &kpath, &origins, &rendered, n.span()).unwrap();
        let text = if r.place.file == kpath { kust } else { job };
        (r.place.file == kpath, r.place.span.start_pos(text).line)
    };
    let meta = job_root.get("metadata").unwrap();
    assert_eq!(at(meta.get("namespace").unwrap()), (true, 1));
    assert_eq!(at(meta.get("name").unwrap()), (true, 2));
    let container = &job_root
        .at(&["spec", "template", "spec", "containers"])
        .unwrap()
        .as_seq()
        .unwrap()
        .get(0)
        .unwrap();
    assert_eq!(at(container.get("image").unwrap()), (true, 5));
    // Unchanged by the overlay: the base file.
    assert_eq!(at(container.get("name").unwrap()), (false, 10));
    let cm = rendered.docs[1].root().at(&["metadata", "name"]).unwrap();
    assert_eq!(at(cm), (true, 8));
}
