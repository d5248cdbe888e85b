//! Walks an object's tree once against a built-in [`Obj`] table, then the cross-field rules the
//! CRDs' CEL expressions and the webhooks enforce. Paths are kept as a stack of borrowed segments
//! and only formatted when something is reported.

use super::builtin::{Field, Obj, Ty, Unknown};
use super::non_string_reading;
use crate::quantity::is_placeholder;
use crate::text::{close_enough, edit_distance_within};
use crate::yaml::{Node, Value, Yaml11};

/// One thing the API server (or an admission webhook) would refuse or drop.
#[derive(Debug)]
pub struct Violation<'a> {
    pub node: Node<'a>,
    pub message: String,
    pub help: Option<String>,
    /// A field the schema does not have: dropped (or pruned) where validation is not strict,
    /// never rejected.
    pub unknown: bool,
}

#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Idx(usize),
}

struct Walker<'a, 'o> {
    /// Where the walked node stands in its object (`spec.template.spec` for a Job's pod spec).
    base: &'o str,
    /// How messages name the schema: `NodePool v1`, `pod spec`.
    what: &'o str,
    /// The object's kind, for "the API server rejects the …".
    kind: &'o str,
    path: Vec<Seg<'a>>,
    out: &'o mut Vec<Violation<'a>>,
    /// The walked node is a fragment merged into a whole later: its own required fields may be
    /// missing (nested ones may not).
    partial: bool,
}

/// Checks `node` (at `base` in an object of `kind`) against `schema`.
pub fn walk<'a>(
    node: Node<'a>,
    schema: &'static Obj,
    base: &str,
    what: &str,
    kind: &str,
    out: &mut Vec<Violation<'a>>,
) {
    walk_with(node, schema, base, what, kind, out, false);
}

/// Like [`walk`], for a fragment that a program merges into a whole before anything applies it
/// (a Spark or Flink pod template file): the fields it must have at its top are not required.
pub fn walk_fragment<'a>(
    node: Node<'a>,
    schema: &'static Obj,
    base: &str,
    what: &str,
    kind: &str,
    out: &mut Vec<Violation<'a>>,
) {
    walk_with(node, schema, base, what, kind, out, true);
}

fn walk_with<'a>(
    node: Node<'a>,
    schema: &'static Obj,
    base: &str,
    what: &str,
    kind: &str,
    out: &mut Vec<Violation<'a>>,
    partial: bool,
) {
    let mut w = Walker {
        base,
        what,
        kind,
        path: Vec::with_capacity(16),
        out,
        partial,
    };
    w.value(node, None, &Ty::Obj(schema));
}

fn path_string(base: &str, segs: &[Seg]) -> String {
    let mut s = String::from(base);
    for seg in segs {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Idx(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
    s
}

/// The closest of `names` to `word`, when close enough to be a typo.
pub fn did_you_mean<'n>(word: &str, names: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let lower = word.to_ascii_lowercase();
    names
        .filter_map(|n| {
            if n.to_ascii_lowercase() == lower {
                return Some((0, n));
            }
            let d = edit_distance_within(word, n, 3)?;
            close_enough(n, d).then_some((d, n))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// An unquoted `{{ .Values.x }}` (a Helm template not rendered): YAML reads it as a map whose key
/// is itself a map, which no Kubernetes object holds.
fn template_slot(n: Node<'_>) -> bool {
    n.as_map()
        .is_some_and(|m| m.iter().any(|(k, _)| k.is_map()))
}

/// The CRDs' quantity pattern, `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`.
pub(super) fn quantity_pattern(s: &str) -> bool {
    fn number(s: &str) -> Option<&str> {
        let int = s.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &s[int..];
        match rest.strip_prefix('.') {
            Some(r) => {
                let frac = r.bytes().take_while(u8::is_ascii_digit).count();
                (int + frac > 0).then(|| &r[frac..])
            }
            None => (int > 0).then_some(rest),
        }
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let Some(suffix) = number(unsigned) else {
        return false;
    };
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        _ => suffix
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .and_then(number)
            .is_some_and(str::is_empty),
    }
}

fn describe(n: Node<'_>) -> String {
    match n.value() {
        Value::Map(_) => "a map".into(),
        Value::Seq(_) => "a list".into(),
        Value::Scalar { text, .. } => {
            non_string_reading(n).unwrap_or_else(|| format!("the string `{text}`"))
        }
    }
}

fn expected(ty: &Ty) -> &'static str {
    match ty {
        Ty::Str | Ty::Text | Ty::Enum(..) | Ty::Format(_) => "a string",
        Ty::Int(..) => "an integer",
        Ty::Bool => "a boolean",
        Ty::Quantity | Ty::QuantityPattern => "a quantity (a number or a string)",
        Ty::Count(_, _, inner) => expected(inner),
        Ty::Map(_) | Ty::Obj(_) => "a map",
        Ty::List(_) => "a list",
        Ty::Any => "anything",
    }
}

impl<'a> Walker<'a, '_> {
    /// How messages name the fields of `obj`: its own name where the schema has several parts
    /// (`container`), else the schema's.
    fn name(&self, obj: &Obj) -> &str {
        super::builtin::part_name(obj).unwrap_or(self.what)
    }

    fn path(&self) -> String {
        path_string(self.base, &self.path)
    }

    fn push(&mut self, node: Node<'a>, message: String, help: Option<String>) {
        self.out.push(Violation {
            node,
            message,
            help,
            unknown: false,
        });
    }

    fn push_unknown(&mut self, node: Node<'a>, message: String, help: String) {
        self.out.push(Violation {
            node,
            message,
            help: Some(help),
            unknown: true,
        });
    }

    fn type_error(&mut self, n: Node<'a>, ty: &Ty) {
        if n.is_null() || n.as_str().is_some_and(is_placeholder) || n.is_brace_slot() {
            return;
        }
        let msg = format!(
            "`{}` must be {}, not {}: the API server rejects the {}",
            self.path(),
            expected(ty),
            describe(n),
            self.kind
        );
        self.push(n, msg, None);
    }

    /// `key` is the node naming the value (for required-field findings inside it). A null, a
    /// placeholder or a template slot stands for a value the linter cannot judge: it is looked
    /// for only where a finding would be made (every scalar of the repository comes here).
    /// A quantity written as a string the API server cannot parse (`256GB`, `1000,`).
    fn quantity_text(&mut self, n: Node<'a>, s: &str) {
        // `3 * 16` (CPUs per GPU times GPUs): arithmetic of a document's pseudo-manifest, a
        // value someone works out before anything is applied.
        if is_placeholder(s) || quantity_pattern(s) || s.contains('*') {
            return;
        }
        let msg = format!(
            "`{}` is `{s}`, not a quantity such as `8`, `500m`, `64Gi` or `1.5T`: the API server rejects the {}",
            self.path(),
            self.kind
        );
        // `4GB`: Kubernetes writes `4G` (10⁹) or `4Gi` (2³⁰).
        let help = ["KB", "MB", "GB", "TB"].iter().find_map(|u| {
            let n = s.strip_suffix(u)?;
            let unit = if *u == "KB" { "k" } else { &u[..1] };
            quantity_pattern(n)
                .then(|| format!("write `{n}{}i` (binary) or `{n}{unit}` (decimal)", &u[..1]))
        });
        self.push(n, msg, help);
    }

    fn value(&mut self, n: Node<'a>, key: Option<Node<'a>>, ty: &Ty) {
        if matches!(ty, Ty::Any) || template_slot(n) {
            return;
        }
        let scalar = n.as_str();
        match ty {
            Ty::Any => {}
            Ty::Str | Ty::Text => {
                let bad = match n.yaml11() {
                    None => true,
                    Some(Yaml11::Str) => false,
                    Some(_) => matches!(ty, Ty::Str),
                };
                if bad {
                    self.type_error(n, ty);
                }
            }
            Ty::Int(min, max) => match n.yaml11() {
                Some(Yaml11::Int) => {
                    let v = scalar.and_then(|s| s.replace('_', "").parse::<i64>().ok());
                    if let Some(v) = v
                        && (v < *min || v > *max)
                    {
                        let range = match (*min, *max) {
                            (lo, i64::MAX) => format!("at least {lo}"),
                            (lo, hi) if lo == i32::MIN as i64 => format!("at most {hi}"),
                            (lo, hi) => format!("between {lo} and {hi}"),
                        };
                        let msg = format!(
                            "`{}` is {v}, but it must be {range}: the API server rejects the {}",
                            self.path(),
                            self.kind
                        );
                        self.push(n, msg, None);
                    }
                }
                _ => self.type_error(n, ty),
            },
            Ty::Bool => {
                if n.yaml11() != Some(Yaml11::Bool) {
                    self.type_error(n, ty);
                }
            }
            Ty::Quantity => match n.yaml11() {
                Some(Yaml11::Int | Yaml11::Float) => {}
                // The API server parses it (`1000,` is refused); an accelerator's count is
                // `gpu-quantity-invalid`'s, an empty value a slot a template fills.
                Some(Yaml11::Str) => {
                    let accelerator = key
                        .and_then(|k| k.as_str())
                        .is_some_and(crate::model::is_accelerator_resource);
                    if let Some(s) = scalar
                        && !s.is_empty()
                        && !accelerator
                    {
                        self.quantity_text(n, s);
                    }
                }
                _ => self.type_error(n, ty),
            },
            Ty::QuantityPattern => match n.yaml11() {
                Some(Yaml11::Int) => {}
                // The CRD says integer or string: a JSON number with a fraction is neither.
                Some(Yaml11::Float) => {
                    if let Some(s) = scalar
                        && s.replace('_', "")
                            .parse::<f64>()
                            .is_ok_and(|v| !v.is_finite() || v.fract() != 0.0)
                    {
                        let msg = format!(
                            "`{}` is the number {s}, but the CRD takes an integer or a quantity string here: the API server rejects the {}",
                            self.path(),
                            self.kind
                        );
                        self.push(n, msg, Some(format!("quote it: `\"{s}\"`")));
                    }
                }
                Some(Yaml11::Str) => {
                    if let Some(s) = scalar {
                        self.quantity_text(n, s);
                    }
                }
                _ => self.type_error(n, ty),
            },
            Ty::Count(min, max, inner) => {
                let count = match n.value() {
                    Value::Seq(_) => n.items().count(),
                    Value::Map(_) => n.entries().count(),
                    Value::Scalar { .. } => {
                        self.value(n, key, inner);
                        return;
                    }
                };
                let what = if n.as_seq().is_some() {
                    "items"
                } else {
                    "entries"
                };
                let problem = if count < *min {
                    Some(format!("needs at least {min}"))
                } else if count > *max {
                    Some(format!("allows at most {max}"))
                } else {
                    None
                };
                if let Some(p) = problem {
                    let msg = format!(
                        "`{}` has {count} {what}, but the schema {p}: the API server rejects the {}",
                        self.path(),
                        self.kind
                    );
                    // The key names the list better than its (possibly long) body.
                    self.push(key.unwrap_or(n), msg, None);
                }
                self.value(n, key, inner);
            }
            Ty::Enum(values, legacy) => {
                let Some(s) = scalar.filter(|_| n.yaml11() == Some(Yaml11::Str)) else {
                    self.type_error(n, ty);
                    return;
                };
                if values.contains(&s) || legacy.contains(&s) || is_placeholder(s) {
                    return;
                }
                let shown: Vec<&str> = values.iter().copied().filter(|v| !v.is_empty()).collect();
                let msg = format!(
                    "`{}` is `{s}`, not one of {}: the API server rejects the {}",
                    self.path(),
                    crate::diag::backticked(&shown, ", "),
                    self.kind
                );
                let help =
                    did_you_mean(s, shown.iter().copied()).map(|m| format!("did you mean `{m}`?"));
                self.push(n, msg, help);
            }
            Ty::Format(fmt) => {
                let Some(s) = scalar.filter(|_| n.yaml11() == Some(Yaml11::Str)) else {
                    self.type_error(n, ty);
                    return;
                };
                if !(fmt.ok)(s) && !is_placeholder(s) {
                    let is = if s.is_empty() {
                        "is empty".to_string()
                    } else {
                        format!("is `{s}`")
                    };
                    let msg = format!(
                        "`{}` {is}, not {}: the API server rejects the {}",
                        self.path(),
                        fmt.what,
                        self.kind
                    );
                    self.push(n, msg, None);
                }
            }
            Ty::Map(inner) => {
                if n.as_map().is_none() {
                    self.type_error(n, ty);
                    return;
                }
                for (k, kn, v) in n.entries() {
                    self.path.push(Seg::Key(k));
                    self.value(v, Some(kn), inner);
                    self.path.pop();
                }
            }
            Ty::List(inner) => {
                let Some(items) = n.as_seq() else {
                    self.type_error(n, ty);
                    return;
                };
                for (i, item) in items.iter().enumerate() {
                    self.path.push(Seg::Idx(i));
                    self.value(item, None, inner);
                    self.path.pop();
                }
            }
            Ty::Obj(obj) => {
                if n.as_map().is_none() {
                    self.type_error(n, ty);
                    return;
                }
                self.object(n, key, obj);
            }
        }
    }

    fn object(&mut self, n: Node<'a>, key: Option<Node<'a>>, obj: &'static Obj) {
        let mut plain = Vec::new();
        for (k, kn, v) in n.entries() {
            if let Some(field) = obj.fields.iter().find(|f| f.name == k) {
                self.path.push(Seg::Key(k));
                self.value(v, Some(kn), &field.ty);
                self.path.pop();
                continue;
            }
            // A strategic-merge directive (`$patch: delete`) in a kustomize patch of a built-in
            // kind, or a key a template fills in.
            if obj.ignored.contains(&k)
                || (obj.unknown != Unknown::Pruned && (k.starts_with('$') || is_placeholder(k)))
            {
                continue;
            }
            if self.unknown(kn, k, obj) {
                plain.push((kn, k));
            }
        }
        self.plain_unknowns(&mut plain, obj);
        let top = self.partial && self.path.is_empty();
        for field in obj.fields.iter().filter(|f| f.required && !top) {
            let renamed_from_written = obj
                .renamed
                .iter()
                .any(|(old, new)| *new == field.name && n.get(old).is_some());
            if n.get(field.name).is_none() && !renamed_from_written {
                self.missing(n, key, field);
            }
        }
    }

    /// Reports an unknown field that has a better name or place; `true` for one that is merely
    /// unknown, reported with the others of its object by [`Self::plain_unknowns`].
    fn unknown(&mut self, kn: Node<'a>, k: &'a str, obj: &'static Obj) -> bool {
        self.path.push(Seg::Key(k));
        let path = self.path();
        self.path.pop();
        let fate = match obj.unknown {
            Unknown::Pruned => {
                "the API server prunes (drops) it, and strict `kubectl apply` validation rejects it"
            }
            Unknown::Dropped | Unknown::Typos => {
                "the API server drops it, and strict `kubectl apply` validation rejects it"
            }
        };
        if let Some(m) = obj.moved.iter().find(|m| m.from == k) {
            let msg = match self.what.rsplit(' ').next().filter(|v| v.starts_with('v')) {
                Some(version) => format!(
                    "`{path}` is not a {} field; in {version} it is `{}`: {fate}",
                    self.what, m.to
                ),
                None => format!(
                    "`{path}` is not a {} field; it belongs at `{}`: {fate}",
                    self.what, m.to
                ),
            };
            let help = format!("move it to `{}`", m.to);
            self.push_unknown(kn, msg, help);
            return false;
        }
        if let Some((is, not, place)) = super::builtin::misplaced_pod_field(obj, k) {
            let msg = format!("`{path}` is a {is} field, not a {not} one: {fate}");
            let help = format!("move it to {place}: where it is, nothing reads it");
            self.push_unknown(kn, msg, help);
            return false;
        }
        let suggestion = did_you_mean(k, obj.fields.iter().map(|f| f.name));
        match suggestion {
            Some(s) => {
                let msg = format!("`{path}` is not a {} field: {fate}", self.name(obj));
                self.push_unknown(kn, msg, format!("did you mean `{s}`?"));
                false
            }
            None => obj.unknown != Unknown::Typos,
        }
    }

    /// The fields of one object that are merely unknown: one finding for them all (a block
    /// indented one level off leaves several at once), marked at each.
    fn plain_unknowns(&mut self, plain: &mut [(Node<'a>, &'a str)], obj: &'static Obj) {
        // In the order they are written: the finding points at the first.
        plain.sort_by_key(|(kn, _)| kn.span().start());
        let [(kn, k), rest @ ..] = &*plain else {
            return;
        };
        let (it, them) = match obj.unknown {
            Unknown::Pruned => (
                "the API server prunes (drops) ",
                "strict `kubectl apply` validation rejects ",
            ),
            Unknown::Dropped | Unknown::Typos => (
                "the API server drops ",
                "strict `kubectl apply` validation rejects ",
            ),
        };
        if rest.is_empty() {
            self.path.push(Seg::Key(k));
            let path = self.path();
            self.path.pop();
            let msg = format!(
                "`{path}` is not a {} field: {it}it, and {them}it",
                self.name(obj)
            );
            let in_taint = matches!(self.path.last(), Some(Seg::Idx(_)))
                && matches!(
                    self.path.iter().rev().nth(1),
                    Some(Seg::Key("taints" | "startupTaints"))
                );
            // Written as if it were a toleration.
            let help = if in_taint && *k == "operator" {
                "drop `operator`: a taint has only `key`, `value` and `effect`, and `operator` belongs to the pods' tolerations".to_string()
            } else {
                format!("remove `{k}`, or check its indentation: nothing at this place reads it")
            };
            self.push_unknown(*kn, msg, help);
            return;
        }
        self.path.push(Seg::Key(k));
        let first = self.path();
        self.path.pop();
        let mut names = format!("`{first}`");
        for (i, (_, k)) in rest.iter().enumerate() {
            names.push_str(if i + 1 == rest.len() { " and " } else { ", " });
            names.push_str(&format!("`{k}`"));
        }
        let msg = format!(
            "{names} are not {} fields: {it}them, and {them}them",
            self.name(obj)
        );
        for (kn, _) in plain {
            self.push_unknown(
                *kn,
                msg.clone(),
                "remove them, or check their indentation: nothing at this place reads them"
                    .to_string(),
            );
        }
    }

    fn missing(&mut self, n: Node<'a>, key: Option<Node<'a>>, field: &Field) {
        let parent = self.path();
        let full = if parent.is_empty() {
            field.name.to_string()
        } else {
            format!("{parent}.{}", field.name)
        };
        // Written with nothing after it (`spec:`, null, pruned): point at it. Else at the key
        // naming the block, else at the block's first key.
        let written = n.entry(field.name).map(|(k, _)| k);
        let at = written
            .or(key)
            .or_else(|| n.as_map().and_then(|m| m.first()).map(|(k, _)| k))
            .unwrap_or(n);
        let msg = format!(
            "`{full}` is required: the API server rejects the {}",
            self.kind
        );
        let place = if parent.is_empty() {
            "at the top level".to_string()
        } else {
            format!("under `{parent}`")
        };
        let help = match written {
            Some(_) => format!(
                "give `{}` a value: written empty it is null, which the API server drops",
                field.name
            ),
            None => format!("add `{}` {place}", field.name),
        };
        self.push(at, msg, Some(help));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantity_pattern_is_the_crds() {
        for ok in [
            "8", "-1", "+2", "500m", "64Gi", "1.5T", ".5", "5.", "1e3", "1E-3", "2.5e+2",
        ] {
            assert!(quantity_pattern(ok), "{ok}");
        }
        for bad in [
            "256GB", "", "1 Gi", "Gi", "1.2.3", "1e", "e3", "--1", "1ki", ".",
        ] {
            assert!(!quantity_pattern(bad), "{bad}");
        }
    }

    #[test]
    fn did_you_mean_finds_typos_and_case() {
        let names = ["tolerations", "nodeSelector", "containers"];
        assert_eq!(
            did_you_mean("toleration", names.iter().copied()),
            Some("tolerations")
        );
        assert_eq!(
            did_you_mean("nodeselector", names.iter().copied()),
            Some("nodeSelector")
        );
        assert_eq!(did_you_mean("volumes", names.iter().copied()), None);
    }
}
