use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Object, job_template_metadata};
use crate::schema::non_string_reading;
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags unquoted values that Kubernetes' YAML 1.1 reader turns into booleans or numbers where
    /// the API wants a string: label and annotation values (objects, pod templates, Job templates,
    /// NodePool node templates), taint and toleration values, `nodeSelector` values, node
    /// affinity and NodePool requirement values, Kueue ResourceFlavor `nodeLabels`, container
    /// `env` values, `command` and `args`, and ConfigMap `data` / Secret `stringData`.
    /// `true`, `yes`, `on`, `off`, `y`, `n`, `0755` (octal 493), `1_000` (1000), `1e3` (1000),
    /// `1.10` (1.1) are the usual suspects; a number past the largest float64 (`2e70684`, a
    /// commit hash) stays a string, as go-yaml reads it. Objects under a `testdata`,
    /// `test-data` or `fixtures` directory (a program's test inputs) are judged only when the
    /// rule is selected with `--rule`.
    ///
    /// ## Why is this bad?
    /// YAML 1.2 tools and editors show `on` or `0755` as text, but `kubectl`, Argo CD and Flux
    /// read YAML 1.1: the value reaches the API server as a boolean or a number, and a string
    /// field refuses it (`cannot unmarshal bool into Go struct field … of type string`, or
    /// `must be of type string` for a CRD). The whole object is rejected and the sync fails; a
    /// GPU taint `value: true` keeps the NodePool from ever existing.
    ///
    /// ## Example
    /// ```yaml
    /// taints:
    ///   - key: nvidia.com/gpu
    ///     value: true
    ///     effect: NoSchedule
    /// ```
    ///
    /// ## Fix
    /// Quote the value: `value: "true"`.
    name: "yaml-type-trap",
    category: "schema",
    kinds: &["any object"],
    severity: Error,
    summary: "an unquoted YAML 1.1 boolean or number where Kubernetes expects a string",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // A program's test inputs are read by its tests, never applied (as for `schema-violation`).
    let input = |obj: &crate::model::Object| {
        !cx.ix.settings.selected(RULE.name)
            && crate::source::in_test_input_dir(
                cx.ix.files.get(obj.file).map_or("", |f| f.path.as_str()),
            )
    };
    for (_, obj) in cx.objects() {
        if input(obj) {
            continue;
        }
        let mut f = Finder { cx, obj, out };
        f.metadata(obj.metadata());
        for jt in job_template_metadata(obj) {
            f.metadata(Some(jt.metadata));
        }
        let spec = obj.spec();
        match (obj.group, obj.kind) {
            ("", "ConfigMap") => f.map_values(obj.root.get("data"), "ConfigMap data"),
            ("", "Secret") => f.map_values(obj.root.get("stringData"), "Secret stringData"),
            ("karpenter.sh", "NodePool") => {
                let tmpl = spec.and_then(|s| s.get("template"));
                f.metadata(tmpl.and_then(|t| t.get("metadata")));
                let tspec = tmpl.and_then(|t| t.get("spec"));
                for key in ["taints", "startupTaints"] {
                    f.item_values(tspec.and_then(|s| s.get(key)), "taint");
                }
                f.expressions(tspec.and_then(|s| s.get("requirements")), "requirement");
            }
            ("kueue.x-k8s.io", "ResourceFlavor") => {
                f.map_values(spec.and_then(|s| s.get("nodeLabels")), "nodeLabels");
                f.item_values(spec.and_then(|s| s.get("nodeTaints")), "taint");
                f.item_values(spec.and_then(|s| s.get("tolerations")), "toleration");
            }
            _ => {}
        }
    }
    for (_, t) in cx.templates() {
        let obj = cx.ix.owner(t);
        if input(obj) {
            continue;
        }
        let mut f = Finder { cx, obj, out };
        // A bare Pod's template metadata is the object's own, already read above.
        if !same(t.metadata, obj.metadata()) {
            f.metadata(t.metadata);
        }
        let spec = t.spec;
        f.map_values(spec.get("nodeSelector"), "nodeSelector");
        f.item_values(spec.get("tolerations"), "toleration");
        let node_affinity = spec.at(&["affinity", "nodeAffinity"]);
        for term in node_affinity
            .and_then(|a| {
                a.at(&[
                    "requiredDuringSchedulingIgnoredDuringExecution",
                    "nodeSelectorTerms",
                ])
            })
            .into_iter()
            .flat_map(Node::items)
        {
            f.expressions(term.get("matchExpressions"), "node affinity");
        }
        for pref in node_affinity
            .and_then(|a| a.get("preferredDuringSchedulingIgnoredDuringExecution"))
            .into_iter()
            .flat_map(Node::items)
        {
            f.expressions(
                pref.at(&["preference", "matchExpressions"]),
                "node affinity",
            );
        }
        for c in &t.containers {
            for env in c.node.get("env").into_iter().flat_map(Node::items) {
                if let Some(v) = env.get("value") {
                    let name = env.get("name").and_then(Node::as_str).unwrap_or("?");
                    f.report(v, || format!("env `{name}` value"));
                }
            }
            for key in ["command", "args"] {
                for item in c.node.get(key).into_iter().flat_map(Node::items) {
                    f.report(item, || format!("`{key}` item"));
                }
            }
        }
    }
}

fn same(a: Option<Node<'_>>, b: Option<Node<'_>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.is(b),
        _ => false,
    }
}

struct Finder<'c, 'i, 'a, 'o> {
    cx: &'c Ctx<'i, 'a>,
    obj: &'c Object<'a>,
    out: &'o mut Vec<Diagnostic>,
}

impl Finder<'_, '_, '_, '_> {
    fn metadata(&mut self, meta: Option<Node<'_>>) {
        self.map_values(meta.and_then(|m| m.get("labels")), "label");
        self.map_values(meta.and_then(|m| m.get("annotations")), "annotation");
    }

    fn map_values(&mut self, map: Option<Node<'_>>, what: &str) {
        for (k, _, v) in map.into_iter().flat_map(Node::entries) {
            self.report(v, || format!("{what} `{k}` value"));
        }
    }

    fn item_values(&mut self, list: Option<Node<'_>>, what: &str) {
        for item in list.into_iter().flat_map(Node::items) {
            if let Some(v) = item.get("value") {
                self.report(v, || format!("{what} value"));
            }
        }
    }

    fn expressions(&mut self, list: Option<Node<'_>>, what: &str) {
        for e in list.into_iter().flat_map(Node::items) {
            let key = e.get("key").and_then(Node::as_str).unwrap_or("?");
            for v in e.get("values").into_iter().flat_map(Node::items) {
                self.report(v, || format!("{what} `{key}` value"));
            }
        }
    }

    /// `what` names the value; it is built only for a finding (most values are fine).
    fn report(&mut self, v: Node<'_>, what: impl FnOnce() -> String) {
        let Some(reading) = non_string_reading(v) else {
            return;
        };
        let what = what();
        let text = v.as_str().unwrap_or_default();
        let kind = self.obj.kind;
        self.out.push(
            self.cx
                .on(
                    self.obj,
                    v,
                    format!(
                        "{what} `{text}` is {reading} to Kubernetes (YAML 1.1), not a string: the API server rejects the {kind}"
                    ),
                )
                .help(format!("quote it: \"{text}\"")),
        );
    }
}
