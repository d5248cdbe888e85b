//! Rego values from YAML nodes, read the way Kubernetes reads them, and the interning that
//! lets the input document share its strings.

use super::paths::{Seg, path_to, resolve};
use crate::yaml::{Node, Value as Y, Yaml11};
use foldhash::HashMap;
use regorus::Value;
use std::collections::BTreeMap;

/// A Rego object of fixed field names (shared key values) and their values.
///
/// Facts are built tens of thousands of times with the same fields. Each field list gets a
/// frozen prototype once per thread (keys sorted, values null); an object is a copy of it with
/// the values put in place, instead of a sorted map built and then frozen.
pub(super) fn obj(entries: Vec<(&'static str, Value)>) -> Value {
    thread_local! {
        static SHAPES: std::cell::RefCell<HashMap<(usize, usize), Shape>> = Default::default();
    }
    let (Some(first), Some(last)) = (entries.first(), entries.last()) else {
        return Value::new_object();
    };
    let id = (first.0.as_ptr() as usize, last.0.as_ptr() as usize);
    SHAPES.with(|shapes| {
        let mut shapes = shapes.borrow_mut();
        let shape = shapes.entry(id).or_insert_with(|| Shape::new(&entries));
        // Two lists may start and end with the same names.
        if !shape.fits(&entries) {
            *shape = Shape::new(&entries);
        }
        shape.fill(entries)
    })
}

struct Shape {
    names: Vec<&'static str>,
    /// The key `Value` of each field, in the order the fields are given.
    keys: Vec<Value>,
    proto: Value,
}

impl Shape {
    fn new(entries: &[(&'static str, Value)]) -> Shape {
        let keys: Vec<Value> = entries.iter().map(|(k, _)| key(k)).collect();
        let proto = Value::from(
            keys.iter()
                .map(|k| (k.clone(), Value::Null))
                .collect::<BTreeMap<Value, Value>>(),
        );
        Shape {
            names: entries.iter().map(|(k, _)| *k).collect(),
            keys,
            proto,
        }
    }

    fn fits(&self, entries: &[(&'static str, Value)]) -> bool {
        self.names.len() == entries.len()
            && self
                .names
                .iter()
                .zip(entries)
                .all(|(a, (b, _))| std::ptr::eq(*a, *b) || a == b)
    }

    fn fill(&self, entries: Vec<(&'static str, Value)>) -> Value {
        let mut out = self.proto.clone();
        let Ok(o) = out.as_object_mut() else {
            return out;
        };
        for ((_, v), k) in entries.into_iter().zip(&self.keys) {
            // A field the prototype has: the value changes in place, the object stays frozen.
            if let Some(slot) = o.get_mut(k) {
                *slot = v;
            }
        }
        out
    }
}

/// The `Value` of a field name, one per thread: every fact repeats the same dozen keys, and a
/// shared string is a reference count instead of an allocation to make and to free.
fn key(k: &'static str) -> Value {
    thread_local! {
        static KEYS: std::cell::RefCell<HashMap<&'static str, Value>> = Default::default();
    }
    KEYS.with(|keys| {
        keys.borrow_mut()
            .entry(k)
            .or_insert_with(|| Value::from(k))
            .clone()
    })
}

pub(super) fn opt_str(s: Option<&str>) -> Value {
    s.map_or(Value::Null, Value::from)
}

pub(super) fn strings<'s>(items: impl IntoIterator<Item = &'s str>) -> Value {
    Value::from(items.into_iter().map(Value::from).collect::<Vec<_>>())
}

/// A YAML node as Kubernetes would read it (go-yaml v2, YAML 1.1 plain scalars).
pub fn node_value(n: Node<'_>) -> Value {
    Strings::default().node(n)
}

/// Converts nodes and builds facts, sharing one `Value` per distinct short string: manifests
/// repeat the same keys, values and path segments (`name`, `resources`, `nvidia.com/gpu`,
/// `spec`) thousands of times, and a shared string is one allocation to make and to free
/// instead of thousands. One per worker while the document is built; dropped with it.
#[derive(Default)]
pub struct Strings {
    seen: HashMap<Box<str>, Value>,
    /// Field paths, which repeat as often: every Deployment's pod template is at
    /// `spec.template`, its first container at `spec.template.spec.containers[0]`.
    paths: HashMap<Box<[Seg]>, Value>,
    /// Parsed image references: a repository runs the same images in many containers.
    images: HashMap<Box<str>, Value>,
    /// Pod spec paths by the template's path text: every Deployment's is `spec.template.spec`.
    spec_paths: HashMap<Box<str>, (Vec<Seg>, SpecPath)>,
    /// Container paths by (their pod spec's path value, list, index), and resource paths by
    /// (their container's path value, `limits`/`requests`, resource): the thousands of
    /// containers at `spec.template.spec.containers[0]` share one value, found without building
    /// and hashing the segments. A path value's address names it: each is kept here as long.
    containers: HashMap<(usize, &'static str, usize), Value>,
    resources: HashMap<(usize, &'static str), Vec<Named>>,
}

/// A value by a name (a resource's).
type Named = (Box<str>, Value);

/// A pod spec's path inside its object, and its pod template's (the spec's parent; a bare Pod
/// is its own template), as Rego values.
#[derive(Clone)]
pub(super) struct SpecPath {
    pub template: Value,
    pub spec: Value,
}

/// The address of an array value: the name of a path value kept in [`Strings`].
fn addr(v: &Value) -> usize {
    match v {
        Value::Array(a) => &**a as *const _ as usize,
        _ => 0,
    }
}

/// `base` with `more` appended.
fn extend(base: &Value, more: impl IntoIterator<Item = Value>) -> Value {
    let mut items: Vec<Value> = match base {
        Value::Array(a) => a.iter().cloned().collect(),
        _ => Vec::new(),
    };
    items.extend(more);
    Value::from(items)
}

impl Strings {
    pub fn get(&mut self, s: &str) -> Value {
        if s.len() > 48 {
            return Value::from(s);
        }
        if let Some(v) = self.seen.get(s) {
            return v.clone();
        }
        let v = Value::from(s);
        self.seen.insert(s.into(), v.clone());
        v
    }

    pub fn node(&mut self, n: Node<'_>) -> Value {
        match n.value() {
            Y::Scalar { text, .. } => match n.yaml11() {
                Some(Yaml11::Str) | None => self.get(text),
                kind => scalar(text, kind),
            },
            Y::Seq(items) => Value::from(items.iter().map(|i| self.node(i)).collect::<Vec<_>>()),
            Y::Map(entries) => Value::from(
                entries
                    .iter()
                    .filter_map(|(k, v)| Some((self.get(k.as_str()?), self.node(v))))
                    .collect::<BTreeMap<Value, Value>>(),
            ),
        }
    }

    /// A map node's value, or `{}` when there is none (labels, annotations, a node selector).
    pub(super) fn map(&mut self, n: Option<Node<'_>>) -> Value {
        n.map_or(Value::new_object(), |n| self.node(n))
    }

    pub(super) fn opt(&mut self, s: Option<&str>) -> Value {
        s.map_or(Value::Null, |s| self.get(s))
    }

    pub(super) fn list<'s>(&mut self, items: impl IntoIterator<Item = &'s str>) -> Value {
        Value::from(items.into_iter().map(|s| self.get(s)).collect::<Vec<_>>())
    }

    /// The value of `image` built once per image (`build` runs on the first sight).
    pub(super) fn image(&mut self, image: &str, build: impl FnOnce(&mut Self) -> Value) -> Value {
        if let Some(v) = self.images.get(image) {
            return v.clone();
        }
        let v = build(self);
        self.images.insert(image.into(), v.clone());
        v
    }

    /// The path of `spec` inside `root` (see [`path_to`]). The path another template with the
    /// same path text had is tried first and kept only when it leads to this very node, which
    /// spares the walk for all but the first of each shape.
    pub(super) fn spec_path(&mut self, root: Node<'_>, spec: Node<'_>, text: &str) -> SpecPath {
        if let Some((p, v)) = self.spec_paths.get(text) {
            let (node, steps) = resolve(root, p);
            if steps == p.len() && node.is(spec) {
                return v.clone();
            }
        }
        let p = path_to(root, spec).unwrap_or_default();
        let v = SpecPath {
            template: self.path(&p[..p.len().saturating_sub(1)]),
            spec: self.path(&p),
        };
        self.spec_paths.insert(text.into(), (p, v.clone()));
        v
    }

    /// The path of a container: `spec` (a pod spec's path from [`Strings::spec_path`]), `list`
    /// (`containers` or `initContainers`), `index`. `spec` must be a value this `Strings` made:
    /// it is known by its address, which only a value kept here cannot pass to another.
    pub(super) fn container_path(
        &mut self,
        spec: &Value,
        list: &'static str,
        index: usize,
    ) -> Value {
        let key = (addr(spec), list, index);
        if let Some(v) = self.containers.get(&key) {
            return v.clone();
        }
        let v = extend(spec, [self.get(list), Value::from(index as u64)]);
        self.containers.insert(key, v.clone());
        v
    }

    /// The path of a container's resource: `container` (from [`Strings::container_path`] of this
    /// `Strings`), `resources`, `which` (`limits` or `requests`), `name`.
    pub(super) fn resource_path(
        &mut self,
        container: &Value,
        which: &'static str,
        name: &str,
    ) -> Value {
        let key = (addr(container), which);
        if let Some((_, v)) = self
            .resources
            .get(&key)
            .and_then(|known| known.iter().find(|(n, _)| &**n == name))
        {
            return v.clone();
        }
        let v = extend(
            container,
            [self.get("resources"), self.get(which), self.get(name)],
        );
        self.resources
            .entry(key)
            .or_default()
            .push((name.into(), v.clone()));
        v
    }

    pub(super) fn path(&mut self, path: &[Seg]) -> Value {
        if let Some(v) = self.paths.get(path) {
            return v.clone();
        }
        let v = Value::from(
            path.iter()
                .map(|seg| match seg {
                    Seg::Key(k) => self.get(k),
                    Seg::Index(i) => Value::from(*i as u64),
                })
                .collect::<Vec<_>>(),
        );
        self.paths.insert(path.into(), v.clone());
        v
    }
}

fn scalar(text: &str, kind: Option<Yaml11>) -> Value {
    match kind {
        Some(Yaml11::Null) => Value::Null,
        Some(Yaml11::Bool) => Value::from(matches!(
            text,
            "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON"
        )),
        Some(Yaml11::Int) => int(text).map_or_else(|| Value::from(text), Value::from),
        Some(Yaml11::Float) => {
            let clean = text.replace('_', "");
            match clean.parse::<f64>() {
                Ok(f) if f.is_finite() => Value::from(f),
                // Rego has no infinities or NaN: keep the text.
                _ => Value::from(text),
            }
        }
        _ => Value::from(text),
    }
}

/// A YAML 1.1 integer: decimal, `0x` hex, leading-zero octal, `_` separators.
fn int(text: &str) -> Option<i64> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let body = body.replace('_', "");
    let v = if let Some(hex) = body.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse::<i64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// YAML as JSON, typed the same way (for `policy-data:` in the config).
pub fn node_json(n: Node<'_>) -> serde_json::Value {
    crate::yaml::to_json(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::yaml::test_root as doc;

    #[test]
    fn objects_of_one_field_list_share_a_shape_and_keep_their_values() {
        let a = obj(vec![
            ("name", Value::from("a")),
            ("gpus", Value::from(2u64)),
        ]);
        let b = obj(vec![
            ("name", Value::from("b")),
            ("gpus", Value::from(4u64)),
        ]);
        assert_eq!(a["name"], Value::from("a"));
        assert_eq!(b["name"], Value::from("b"));
        assert_eq!(a["gpus"], Value::from(2u64));
        assert_eq!(b["gpus"], Value::from(4u64));
        // Same first and last names, other fields: a shape of its own.
        let c = obj(vec![
            ("name", Value::from("c")),
            ("kind", Value::from("Job")),
            ("gpus", Value::from(1u64)),
        ]);
        assert_eq!(c["kind"], Value::from("Job"));
        assert_eq!(c["gpus"], Value::from(1u64));
        let keys: Vec<String> = c
            .as_object()
            .map(|o| o.keys().map(ToString::to_string).collect())
            .unwrap_or_default();
        assert_eq!(keys, ["\"gpus\"", "\"kind\"", "\"name\""]);
        assert_eq!(a.as_object().map(|o| o.len()).ok(), Some(2));
        assert_eq!(obj(Vec::new()), Value::new_object());
    }

    #[test]
    fn scalars_read_as_kubernetes_reads_them() {
        let n = doc("a: 8\nb: \"8\"\nc: yes\nd: 0755\ne: 1.5\nf: ~\ng: 0x1F\nh: .inf\n");
        let v = node_value(n);
        assert_eq!(v["a"], Value::from(8u64));
        assert_eq!(v["b"], Value::from("8"));
        assert_eq!(v["c"], Value::from(true));
        assert_eq!(v["d"], Value::from(493u64));
        assert_eq!(v["e"], Value::from(1.5f64));
        assert_eq!(v["f"], Value::Null);
        assert_eq!(v["g"], Value::from(31u64));
        assert_eq!(v["h"], Value::from(".inf"));
    }

    #[test]
    fn a_remembered_spec_path_is_used_only_where_it_leads_to_the_spec() {
        let k = |s: &str| Seg::Key(s.into());
        let mut strings = Strings::default();
        let a = doc("spec:\n  template:\n    spec: {containers: []}\n");
        let spec = a.at(&["spec", "template", "spec"]).expect("spec");
        let want = strings.path(&[k("spec"), k("template"), k("spec")]);
        let found = strings.spec_path(a, spec, "spec.template");
        assert_eq!(found.spec, want);
        assert_eq!(found.template, strings.path(&[k("spec"), k("template")]));
        // The same text, the same shape: the remembered path.
        let b = doc("kind: Job\nspec:\n  template:\n    spec: {containers: [{name: x}]}\n");
        let spec = b.at(&["spec", "template", "spec"]).expect("spec");
        assert_eq!(strings.spec_path(b, spec, "spec.template").spec, want);
        // The same text, elsewhere (the remembered path leads to another node): searched.
        let c = doc("spec:\n  template:\n    spec: {a: 1}\n  other:\n    spec: {b: 2}\n");
        let spec = c.at(&["spec", "other", "spec"]).expect("spec");
        assert_eq!(
            strings.spec_path(c, spec, "spec.template").spec,
            strings.path(&[k("spec"), k("other"), k("spec")])
        );
    }

    #[test]
    fn container_and_resource_paths_are_the_spec_path_extended() {
        let k = |s: &str| Seg::Key(s.into());
        let mut strings = Strings::default();
        let spec = strings.path(&[k("spec"), k("template"), k("spec")]);
        let other = strings.path(&[k("spec"), k("jobTemplate"), k("spec")]);
        let c = strings.container_path(&spec, "containers", 1);
        // `spec.template.spec.containers[1]`, then `resources.limits.<name>` when named.
        let expected = |resource: Option<&str>| {
            let mut p = vec![k("spec"), k("template"), k("spec")];
            p.extend([k("containers"), Seg::Index(1)]);
            if let Some(name) = resource {
                p.extend([k("resources"), k("limits"), k(name)]);
            }
            p
        };
        assert_eq!(c, strings.path(&expected(None)));
        // Shared, and told apart by spec, list and index.
        assert_eq!(strings.container_path(&spec, "containers", 1), c);
        assert_ne!(strings.container_path(&spec, "containers", 0), c);
        assert_ne!(strings.container_path(&spec, "initContainers", 1), c);
        assert_ne!(strings.container_path(&other, "containers", 1), c);
        let r = strings.resource_path(&c, "limits", "nvidia.com/gpu");
        assert_eq!(r, strings.path(&expected(Some("nvidia.com/gpu"))));
        assert_eq!(strings.resource_path(&c, "limits", "nvidia.com/gpu"), r);
        let amd = strings.resource_path(&c, "limits", "amd.com/gpu");
        assert_eq!(amd, strings.path(&expected(Some("amd.com/gpu"))));
        assert_ne!(strings.resource_path(&c, "requests", "nvidia.com/gpu"), r);
    }
}
