//! CustomResourceDefinitions the user has (in the linted repository, in context paths, or given
//! with `--crd` / `crds:`): objects of their kinds are validated against the served version's
//! `openAPIV3Schema` with the `jsonschema` crate, and against its `x-kubernetes-validations`
//! (CEL rules, see [`super::validations`]).

use super::check::Violation;
use super::validations::{Rules, SkipSet, Skips};
use crate::model::Object;
use crate::yaml::{Node, Value as YValue};
use serde_json::{Value, json};

struct Entry {
    group: String,
    kind: String,
    version: String,
    validator: jsonschema::Validator,
    /// The schema as the CRD writes it: its defaults and `nullable`s, applied before validating.
    written: Value,
    /// Compiled once per CRD version; `None` when it declares no CEL rule.
    rules: Option<Rules>,
    /// How surely the cluster serves this copy (see [`rank`]).
    rank: Rank,
    /// The version has the status subresource: the API server drops `status` from what is
    /// created or applied, so it is never validated.
    status_subresource: bool,
    /// A copy in a vendored tree (`upstream/`, `vendor/`) that nothing deploys: another
    /// project's release as it was copied, which judges that tree's objects only.
    vendored: bool,
}

/// How surely the cluster serves a copy of a CRD, from where the copy is: only the copies of
/// the highest rank in view judge objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// In a test or fixture directory (`test/`, `testdata/`, `e2e/`, …): data for a test.
    Fixture,
    /// A file of the repository that nothing shows is deployed.
    Kept,
    /// Deployed: the output of a kustomization or chart, or synced by an Argo CD Application.
    Deployed,
    /// Given as what the cluster has (`--crd`, `crds:`, `context:`).
    Given,
}

fn rank(f: &crate::source::SourceFile) -> Rank {
    if f.is_context() {
        return Rank::Given;
    }
    if f.synced_to().is_some() || crate::source::is_build_output(&f.path) {
        return Rank::Deployed;
    }
    if crate::source::in_test_tree(&f.path) {
        Rank::Fixture
    } else {
        Rank::Kept
    }
}

/// The validators of every served version of the CRDs found among the objects.
#[derive(Default)]
pub struct UserCrds {
    entries: Vec<Entry>,
    /// Copies whose schema does not compile, or that keep unknown fields (`v1beta1` ones):
    /// (group, kind, version, rank, vendored). Such a copy judges nothing, and no copy of a lower
    /// rank judges in its place.
    unbuilt: Vec<(String, String, String, Rank, bool)>,
    /// CEL rules of these CRDs that were not checked, and why.
    skips: Skips,
    /// (group, kind) of the CRDs a mutating webhook in view intercepts on create (see
    /// [`mutated_on_create`]).
    mutated: Vec<(String, String)>,
    /// Per file: whether it lies in a vendored tree, whose copies of CRDs judge it.
    vendored_files: Vec<bool>,
}

impl UserCrds {
    /// The CRDs among `objects`, and the kinds of theirs the `webhooks` (mutating webhook
    /// configurations) intercept.
    pub fn from_objects<'s, 'a: 's>(
        objects: impl Iterator<Item = &'s Object<'a>>,
        webhooks: impl Iterator<Item = &'s Object<'a>>,
        files: &[crate::source::SourceFile],
    ) -> Self {
        let mut entries = Vec::new();
        let mut unbuilt = Vec::new();
        let skips = Skips::default();
        // (group, plural, kind) of every CRD, for the webhooks' resource names.
        let mut names: Vec<(&str, &str, &str)> = Vec::new();
        for o in objects {
            if !(o.group == "apiextensions.k8s.io" && o.kind == "CustomResourceDefinition") {
                continue;
            }
            let Some(spec) = o.spec() else { continue };
            let rank = files.get(o.file).map_or(Rank::Kept, rank);
            let vendored = rank <= Rank::Kept
                && files
                    .get(o.file)
                    .is_some_and(|f| crate::source::in_vendored_tree(&f.path));
            let group = spec.get("group").and_then(Node::as_str).unwrap_or("");
            let kind = spec
                .at(&["names", "kind"])
                .and_then(Node::as_str)
                .unwrap_or("");
            if group.is_empty() || kind.is_empty() {
                continue;
            }
            if let Some(plural) = spec.at(&["names", "plural"]).and_then(Node::as_str) {
                names.push((group, plural, kind));
            }
            // An `apiextensions.k8s.io/v1beta1` copy keeps the fields its schema does not know
            // unless it says `preserveUnknownFields: false`, and may have no schema at all: a
            // cluster that serves it accepts what a newer copy would prune.
            let lenient = o.version == "v1beta1"
                && spec.get("preserveUnknownFields").and_then(Node::as_str) != Some("false");
            if o.version == "v1beta1"
                && let Some(name) = spec.get("version").and_then(Node::as_str)
                && spec.get("versions").is_none()
            {
                unbuilt.push((group.into(), kind.into(), name.into(), rank, vendored));
            }
            for v in spec.get("versions").into_iter().flat_map(Node::items) {
                let served = v.get("served").and_then(Node::as_str) != Some("false");
                let name = v.get("name").and_then(Node::as_str).unwrap_or("");
                if !served || name.is_empty() {
                    continue;
                }
                let schema = v.at(&["schema", "openAPIV3Schema"]);
                let Some(schema) = schema.filter(|_| !lenient) else {
                    if o.version == "v1beta1" {
                        unbuilt.push((group.into(), kind.into(), name.into(), rank, vendored));
                    }
                    continue;
                };
                let written = to_json(schema);
                // Copies of one CRD version (release bundles, a chart's copy, test data) are kept
                // apart when their schemas differ: the cluster serves one of them.
                if let Some(same) = entries.iter_mut().find(|e: &&mut Entry| {
                    e.group == group && e.kind == kind && e.version == name && e.written == written
                }) {
                    same.rank = same.rank.max(rank);
                    same.vendored &= vendored;
                    continue;
                }
                let rules = Rules::compile(schema, kind, name, &skips);
                let mut schema = written.clone();
                with_object_meta(&mut schema);
                normalize(&mut schema);
                let built = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft4)
                    .with_pattern_options(jsonschema::PatternOptions::regex())
                    .build(&schema);
                // A schema that does not compile validates nothing rather than failing the run.
                match built {
                    Ok(validator) => entries.push(Entry {
                        group: group.to_string(),
                        kind: kind.to_string(),
                        version: name.to_string(),
                        validator,
                        written,
                        rules,
                        rank,
                        status_subresource: v.at(&["subresources", "status"]).is_some(),
                        vendored,
                    }),
                    Err(_) => unbuilt.push((
                        group.to_string(),
                        kind.to_string(),
                        name.to_string(),
                        rank,
                        vendored,
                    )),
                }
            }
        }
        UserCrds {
            entries,
            unbuilt,
            skips,
            mutated: mutated_on_create(webhooks, &names),
            vendored_files: files
                .iter()
                .map(|f| crate::source::in_vendored_tree(&f.path))
                .collect(),
        }
    }

    /// Whether a mutating webhook in view intercepts the object's kind when it is created.
    fn mutated(&self, obj: &Object) -> bool {
        self.mutated
            .iter()
            .any(|(g, k)| g == obj.group && k == obj.kind)
    }

    /// The CEL rules skipped so far (not compiled, or not evaluated on some object); clears them.
    pub fn take_skips(&self) -> SkipSet {
        self.skips.take()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, obj: &Object) -> Option<&Entry> {
        self.copies(obj).next()
    }

    /// The copies of the object's CRD that judge it: those the cluster most surely serves, of
    /// the ones that may (a vendored copy only for its own tree's objects).
    fn copies<'s>(&'s self, obj: &Object) -> impl Iterator<Item = &'s Entry> {
        let (group, version, kind) = (obj.group, obj.version, obj.kind);
        let inside = self.vendored_files.get(obj.file).copied().unwrap_or(false);
        let all: Vec<&Entry> = self
            .entries
            .iter()
            .filter(move |e| {
                e.group == group
                    && e.kind == kind
                    && e.version == version
                    && (inside || !e.vendored)
            })
            .collect();
        let top = all.iter().map(|e| e.rank).max();
        // A copy of that rank or higher that does not compile may be the one the cluster serves.
        let blocked = self.unbuilt.iter().any(|(g, k, v, r, vendored)| {
            g == group && k == kind && v == version && (inside || !vendored) && Some(*r) >= top
        });
        all.into_iter()
            .filter(move |e| !blocked && Some(e.rank) == top)
    }

    /// Whether a user CRD covers this kind and version (it then replaces the built-in schema).
    pub fn covers(&self, obj: &Object) -> bool {
        self.find(obj).is_some()
    }

    /// Whether the object's CRD was given as what the cluster has (`--crd`, `crds:`, context).
    pub fn given(&self, obj: &Object) -> bool {
        self.find(obj).is_some_and(|e| e.rank == Rank::Given)
    }

    /// Violations of the object against its CRD, each at the node its instance path names. With
    /// several copies of the CRD in view, the copies the cluster most surely serves judge (one
    /// given as context over one a kustomization, chart or Application deploys, over a file
    /// nothing deploys, over test data); when several of those disagree (an old release bundle
    /// beside the current one) gpuops cannot tell which the cluster serves: the object is judged
    /// by the copy that knows the most of its fields, then by the one that rejects the least.
    pub fn validate<'a>(&self, obj: &Object<'a>, out: &mut Vec<Violation<'a>>) {
        // (fields the copy does not know, violations): a copy without fields the object uses is
        // an older one than the object was written for.
        let mut best: Option<((usize, usize), Vec<Violation<'a>>)> = None;
        for e in self.copies(obj) {
            let mut found = Vec::new();
            let unknown = self.validate_with(e, obj, &mut found);
            let score = (unknown, found.len());
            if best.as_ref().is_none_or(|(b, _)| score < *b) {
                best = Some((score, found));
            }
            if best.as_ref().is_some_and(|(_, f)| f.is_empty()) {
                break;
            }
        }
        out.extend(best.map(|(_, f)| f).unwrap_or_default());
    }

    /// Validates `obj` with one copy; returns how many of its fields that copy does not know.
    fn validate_with<'a>(
        &self,
        e: &Entry,
        obj: &Object<'a>,
        out: &mut Vec<Violation<'a>>,
    ) -> usize {
        // As the API server sees it: nulls pruned, defaults applied.
        let mut instance = to_json(obj.root);
        if e.status_subresource
            && let Some(m) = instance.as_object_mut()
        {
            m.remove("status");
        }
        super::admit::admit(&mut instance, &e.written);
        super::admit::webhook_defaults(obj.group, obj.kind, &mut instance);
        // Required properties missing from one mapping are one mistake (a flat spec where the
        // CRD nests it): one finding that names them all.
        let mut required: Vec<(Node<'a>, String, Vec<String>)> = Vec::new();
        // Unknown fields of a mapping: (the mapping, where its finding is in `out`, the names).
        let mut unknown: Vec<(Node<'a>, usize, Vec<String>)> = Vec::new();
        for err in e.validator.iter_errors(&instance) {
            let segs: Vec<String> = err.instance_path().iter().map(|s| s.to_string()).collect();
            let node = node_at(obj.root, &segs);
            let shown = shown_path(&segs);
            let is_unknown = matches!(
                err.kind(),
                jsonschema::error::ValidationErrorKind::AdditionalProperties { .. }
            );
            let (at, message) = match err.kind() {
                jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                    // Point at the first unknown key itself.
                    let key = unexpected
                        .first()
                        .and_then(|u| node.entry(u).map(|(k, _)| k))
                        .unwrap_or(node);
                    unknown.push((node, out.len(), unexpected.clone()));
                    (
                        key,
                        format!(
                            "{} in {shown} {} not in the {} {} CRD schema: the API server prunes (drops) {it}, and strict `kubectl apply` validation rejects {it}",
                            crate::diag::backticked(unexpected, ", "),
                            if unexpected.len() == 1 { "is" } else { "are" },
                            e.kind,
                            e.version,
                            it = if unexpected.len() == 1 { "it" } else { "them" },
                        ),
                    )
                }
                jsonschema::error::ValidationErrorKind::Required { property } => {
                    let name = property
                        .as_str()
                        .map_or_else(|| property.to_string(), str::to_string);
                    match required
                        .iter_mut()
                        .find(|(n, _, _)| n.span() == node.span())
                    {
                        Some((_, _, names)) => names.push(name),
                        None => required.push((node, shown, vec![name])),
                    }
                    continue;
                }
                // A slot filled in before apply (`${GPU_QUOTA}`) is judged by no pattern or
                // format: what replaces it is unknown.
                _ if node.as_str().is_some_and(crate::quantity::is_placeholder)
                    || node.is_brace_slot() =>
                {
                    continue;
                }
                _ => (
                    node,
                    format!(
                        "{shown}: {err} (the {} {} CRD schema): the API server rejects the {}",
                        e.kind, e.version, e.kind
                    ),
                ),
            };
            // A field written one level off is the usual cause (probes under a volume).
            let help = is_unknown.then(|| {
                let it = if message.contains(" are not in the ") {
                    "them, or check their"
                } else {
                    "it, or check its"
                };
                format!("remove {it} indentation: nothing at this place reads it")
            });
            out.push(Violation {
                node: at,
                message,
                help,
                unknown: is_unknown,
            });
        }
        // An object whose name is still to be filled in is a template: its empty fields are slots
        // the tool that renders it fills, not nulls the API server prunes.
        let template = obj.name.is_some_and(crate::quantity::is_placeholder);
        // A mutating webhook of the repository's own runs before validation and may fill in
        // what is left out (a typed defaulter writes every field back): a missing required field
        // alone is not certain to be rejected.
        let mutated = self.mutated(obj);
        for (node, shown, mut names) in required {
            // Unless the mapping has fields the schema lacks too: written for another shape.
            if mutated && !unknown.iter().any(|(m, _, _)| m.span() == node.span()) {
                continue;
            }
            if template {
                names.retain(|n| node.get(n).is_none_or(|v| !v.is_null()));
                if names.is_empty() {
                    continue;
                }
            }
            let one = names.len() == 1;
            // Fields the schema lacks where required ones are missing, in one mapping: one
            // mistake (the object written for another shape or version of the CRD), one finding.
            if let Some((_, at, extra)) = unknown.iter().find(|(m, _, _)| m.span() == node.span())
                && let Some(v) = out.get_mut(*at)
            {
                *v = Violation {
                    node,
                    message: format!(
                        "{shown} does not have the shape of the {} {} CRD schema: {} {} required, and {} {} not in it: the API server rejects the {} (is it written for another version of the CRD?)",
                        e.kind,
                        e.version,
                        crate::diag::backticked(&names, ", "),
                        if one { "is" } else { "are" },
                        crate::diag::backticked(extra, ", "),
                        if extra.len() == 1 { "is" } else { "are" },
                        e.kind
                    ),
                    help: None,
                    unknown: false,
                };
                continue;
            }
            // Written with nothing after it (`spec:`): null, dropped before validation. The
            // finding points at it.
            let empty = names
                .first()
                .filter(|_| one)
                .and_then(|n| node.entry(n))
                .filter(|(_, v)| v.is_null())
                .map(|(k, _)| k);
            out.push(Violation {
                node: empty.unwrap_or(node),
                message: format!(
                    "{shown}: {} {} required (the {} {} CRD schema): the API server rejects the {}",
                    crate::diag::backticked(&names, ", "),
                    if one { "is" } else { "are" },
                    e.kind,
                    e.version,
                    e.kind
                ),
                help: empty.map(|k| {
                    format!(
                        "give `{}` a value: written empty it is null, which the API server drops",
                        k.as_str().unwrap_or_default()
                    )
                }),
                unknown: false,
            });
        }
        for r in super::listtype::repeats(&e.written, &instance) {
            let declared = if r.keys.is_empty() {
                "a set".to_string()
            } else {
                format!("a map keyed by {}", crate::diag::backticked(&r.keys, ", "))
            };
            out.push(Violation {
                node: node_at(obj.root, &r.path),
                message: format!(
                    "{}: Duplicate value: {} is already in this list, which the {} {} CRD declares {declared} (`x-kubernetes-list-type`): the API server rejects the {}",
                    shown_path(&r.path),
                    r.what,
                    e.kind,
                    e.version,
                    e.kind
                ),
                help: Some("list each item once".into()),
                unknown: false,
            });
        }
        if let Some(rules) = &e.rules {
            // What a webhook fills in is not in the object as written: a rule failing on a
            // missing field of such a kind is skipped rather than reported.
            let as_written =
                !super::admit::has_webhook_defaults(obj.group, obj.kind) && !self.mutated(obj);
            rules.validate(obj.root, obj.kind, as_written, &self.skips, out);
        }
        unknown.iter().map(|(_, _, names)| names.len()).sum()
    }
}

pub use crate::yaml::to_json;

/// (group, kind) of the CRDs (`names`: group, plural, kind) whose objects a mutating webhook
/// intercepts on `CREATE`: a rule of a `MutatingWebhookConfiguration` (any version) naming the
/// group (or `*`) and the plural (or `*`). Its selectors are not read: they only narrow it.
fn mutated_on_create<'s, 'a: 's>(
    webhooks: impl Iterator<Item = &'s Object<'a>>,
    names: &[(&str, &str, &str)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let strs = |n: Option<Node<'_>>| -> Vec<String> {
        n.into_iter()
            .flat_map(Node::items)
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect()
    };
    for w in webhooks {
        if !(w.group == "admissionregistration.k8s.io" && w.kind == "MutatingWebhookConfiguration")
        {
            continue;
        }
        let rules = w
            .root
            .get("webhooks")
            .into_iter()
            .flat_map(Node::items)
            .flat_map(|h| h.get("rules").into_iter().flat_map(Node::items));
        for r in rules {
            let ops = strs(r.get("operations"));
            if !ops.iter().any(|o| o == "CREATE" || o == "*") {
                continue;
            }
            let groups = strs(r.get("apiGroups"));
            // A subresource (`workspaces/status`) is never what is created.
            let resources = strs(r.get("resources"));
            for &(g, plural, kind) in names {
                let group = groups.iter().any(|x| x == g || x == "*");
                let resource = resources
                    .iter()
                    .any(|x| x == plural || x == "*" || x == "*/*");
                if group && resource && !out.iter().any(|(og, ok)| og == g && ok == kind) {
                    out.push((g.to_string(), kind.to_string()));
                }
            }
        }
    }
    out
}

/// The node an instance path (keys and indices) names, or the deepest one the object has.
fn node_at<'a>(root: Node<'a>, segs: &[String]) -> Node<'a> {
    let mut node = root;
    for s in segs {
        let next = match node.value() {
            YValue::Map(_) => node.get(s),
            YValue::Seq(items) => s.parse::<usize>().ok().and_then(|i| items.get(i)),
            YValue::Scalar { .. } => None,
        };
        match next {
            Some(v) => node = v,
            None => break,
        }
    }
    node
}

/// An instance path as messages show it: `` `spec.list[0].key` ``, or "the object".
fn shown_path(segs: &[String]) -> String {
    let path = segs.iter().fold(String::new(), |mut acc, s| {
        if s.parse::<usize>().is_ok() {
            acc.push_str(&format!("[{s}]"));
        } else {
            if !acc.is_empty() {
                acc.push('.');
            }
            acc.push_str(s);
        }
        acc
    });
    if path.is_empty() {
        "the object".to_string()
    } else {
        format!("`{path}`")
    }
}

/// Every custom object has `apiVersion`, `kind` and `metadata`, whether or not its CRD's schema
/// lists them (minimal schemas often describe `spec` only): the API server validates those itself.
fn with_object_meta(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    let Value::Object(props) = m
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
    else {
        return;
    };
    for (key, shape) in [
        ("apiVersion", json!({"type": "string"})),
        ("kind", json!({"type": "string"})),
        (
            "metadata",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        ),
    ] {
        props.entry(key).or_insert(shape);
    }
    // The API server keeps every field of an object's metadata, whatever the schema says of it:
    // a schema may only constrain `name` and `generateName` there.
    if let Some(Value::Object(meta)) = props.get_mut("metadata") {
        meta.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
        meta.remove("required");
        meta.remove("additionalProperties");
        if let Some(Value::Object(fields)) = meta.get_mut("properties") {
            fields.retain(|k, _| k == "name" || k == "generateName");
        }
    }
}

/// Kubernetes OpenAPI v3 → plain JSON schema: `nullable` → also null, int-or-string → integer
/// or string, `x-kubernetes-*` dropped (CEL rules run separately), and unknown fields reported where
/// the schema lists properties and does not preserve unknown fields (the API server prunes
/// them).
pub fn normalize(schema: &mut Value) {
    normalize_in(schema, true);
}

/// `closed`: outside `anyOf`, `allOf`, `oneOf` and `not`, whose branches only constrain values:
/// what a branch's `properties` do not list is pruned (or kept) by the schema around it.
fn normalize_in(schema: &mut Value, closed: bool) {
    let Value::Object(m) = schema else { return };
    let int_or_string = m.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
        || m.get("format").and_then(Value::as_str) == Some("int-or-string");
    let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    let nullable = m.remove("nullable") == Some(Value::Bool(true));
    // An embedded object (a pod template written as a whole Pod) has `apiVersion`, `kind` and
    // `metadata` whether or not its properties list them.
    let embedded = m.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true))
        && m.contains_key("properties");
    m.retain(|k, _| !k.starts_with("x-kubernetes-"));
    if embedded {
        with_object_meta(schema);
    }
    let Value::Object(m) = schema else { return };
    if int_or_string {
        m.remove("type");
        m.remove("format");
        m.entry("anyOf")
            .or_insert_with(|| json!([{ "type": "integer" }, { "type": "string" }]));
    }
    if nullable && let Some(Value::String(t)) = m.get("type").cloned() {
        m.insert("type".into(), json!([t, "null"]));
    }
    if let Some(Value::String(p)) = m.get_mut("pattern")
        && let Some(go) = go_octal(p)
    {
        *p = go;
    }
    if closed
        && m.contains_key("properties")
        && !m.contains_key("additionalProperties")
        && !preserve
    {
        m.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for v in props.values_mut() {
            normalize_in(v, closed);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = m.get_mut(key)
            && v.is_object()
        {
            normalize_in(v, closed);
        }
    }
    if let Some(v) = m.get_mut("not")
        && v.is_object()
    {
        normalize_in(v, false);
    }
    for key in ["anyOf", "allOf", "oneOf"] {
        if let Some(Value::Array(alts)) = m.get_mut(key) {
            for a in alts {
                normalize_in(a, false);
            }
        }
    }
}

/// A pattern as Go's RE2 reads it, where `\0` (up to three octal digits) is a character code; the
/// `regex` crate reads it as a backreference and refuses the whole schema. `None`: no such escape.
fn go_octal(pattern: &str) -> Option<String> {
    if !pattern.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(pattern.len());
    let mut changed = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some(d) if ('0'..='7').contains(d) => {
                let mut code = 0u32;
                for _ in 0..3 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(v) => {
                            code = code * 8 + v;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push_str(&format!("\\x{code:02x}"));
                changed = true;
            }
            Some(_) => {
                out.push(c);
                out.extend(chars.next());
            }
            None => out.push(c),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn go_octal_escapes_become_hex() {
        assert_eq!(
            super::go_octal(r"^(/[^/\0]+)*(/)?$").as_deref(),
            Some(r"^(/[^/\x00]+)*(/)?$")
        );
        assert_eq!(super::go_octal(r"\101\\0").as_deref(), Some(r"\x41\\0"));
        assert_eq!(super::go_octal(r"^[a-z]+\.[0-9]$"), None);
    }
}
