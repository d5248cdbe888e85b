use super::*;
use crate::source::remap::Seg;
use std::collections::BTreeMap;

use crate::yaml::test_root as root;

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
        let r = resolve(&cx, &kpath, &origins, &rendered, n.span()).unwrap();
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
