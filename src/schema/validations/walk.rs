//! Rules run on an object: each at the schema node that declares it, with `self` as the API
//! server hands it, and what a failing rule is reported as.

use super::*;

impl Rules {
    /// Violations of the rules by the object `root`, each at the node its rule is declared on
    /// (or its `fieldPath`).
    /// Rules that cannot be evaluated on it are counted in `skips`.
    /// A rule whose evaluation fails on the object's own data (a missing field, a value
    /// `int()` cannot convert) is reported as the API server reports it, unless `as_written` is
    /// false: a mutating webhook fills fields of this kind before validation, so a missing one
    /// may not be missing at the API server.
    pub fn validate<'a>(
        &self,
        root: Node<'a>,
        kind: &str,
        as_written: bool,
        skips: &Skips,
        out: &mut Vec<Violation<'a>>,
    ) {
        let mut w = Walk {
            what: &self.what,
            kind,
            as_written,
            skips,
            path: Vec::new(),
            out,
        };
        w.node(&self.root, root, None, true);
    }
}

#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Idx(usize),
}

struct Walk<'a, 'o> {
    what: &'o str,
    kind: &'o str,
    /// Whether the object is what the API server validates (no webhook of its kind fills it).
    as_written: bool,
    skips: &'o Skips,
    path: Vec<Seg<'a>>,
    out: &'o mut Vec<Violation<'a>>,
}

fn path_string(segs: impl Iterator<Item = String>) -> String {
    let mut s = String::new();
    for seg in segs {
        if !seg.starts_with('[') && !s.is_empty() {
            s.push('.');
        }
        s.push_str(&seg);
    }
    s
}

fn size(n: Node<'_>) -> usize {
    match n.value() {
        YValue::Map(m) => 1 + m.iter().map(|(_, v)| size(v)).sum::<usize>(),
        YValue::Seq(s) => 1 + s.iter().map(size).sum::<usize>(),
        YValue::Scalar { .. } => 1,
    }
}

impl<'a> Walk<'a, '_> {
    fn node(&mut self, s: &Shape, n: Node<'a>, key: Option<Node<'a>>, root: bool) {
        if !s.has_rules || n.is_null() {
            return;
        }
        if !s.rules.is_empty() && !n.as_str().is_some_and(is_placeholder) {
            self.run(s, n, key, root);
        }
        match n.value() {
            YValue::Map(_) => {
                for (k, kn, v) in n.entries() {
                    let sub = match s.props.iter().find(|(p, _, _)| p == k) {
                        Some((_, _, sub)) => Some(sub),
                        None => s.additional.as_deref(),
                    };
                    if let Some(sub) = sub.filter(|sub| sub.has_rules) {
                        self.path.push(Seg::Key(k));
                        self.node(sub, v, Some(kn), false);
                        self.path.pop();
                    }
                }
            }
            YValue::Seq(items) => {
                if let Some(sub) = s.items.as_deref().filter(|sub| sub.has_rules) {
                    for (i, item) in items.iter().enumerate() {
                        self.path.push(Seg::Idx(i));
                        self.node(sub, item, None, false);
                        self.path.pop();
                    }
                }
            }
            YValue::Scalar { .. } => {}
        }
    }

    fn run(&mut self, s: &Shape, n: Node<'a>, key: Option<Node<'a>>, root: bool) {
        let nodes = size(n) as f64;
        let value = to_cel(n, Some(s), root);
        let Ok(val) = Box::<dyn Val>::try_from(value) else {
            return;
        };
        let mut ctx = Context::with_env(Arc::clone(env()));
        ctx.add_variable_as_val("self", val);
        for rule in &s.rules {
            if nodes.powi(rule.loops as i32) > MAX_COST {
                self.skips.note(self.what, &rule.text, Skip::Cost);
                continue;
            }
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                rule.program.execute(&ctx)
            }));
            let Ok(result) = result else {
                self.skips.note(self.what, &rule.text, Skip::Runtime);
                continue;
            };
            match result {
                Ok(Value::Bool(true)) => {}
                Ok(Value::Bool(false)) => self.report(rule, &ctx, n, key),
                Ok(_) => self.skips.note(self.what, &rule.text, Skip::Runtime),
                Err(e) => match faults::object_fault(&e, rule, s, n).filter(|_| self.as_written) {
                    Some(why) => self.report_error(rule, n, key, &why),
                    None => self.skips.note(self.what, &rule.text, skip_of(&e)),
                },
            }
        }
    }

    fn report(&mut self, rule: &Rule, ctx: &Context, n: Node<'a>, key: Option<Node<'a>>) {
        let message = rule
            .message_expression
            .as_ref()
            .and_then(|p| match p.execute(ctx) {
                Ok(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
                _ => None,
            })
            .or_else(|| rule.message.clone())
            .unwrap_or_else(|| format!("failed rule: {}", rule.text));
        // Without a `fieldPath`, a field the message names under this node (`spec.replicas
        // cannot be set when …` on `spec`) is where to point.
        let named = rule
            .field_path
            .is_none()
            .then(|| self.named_field(&message, n))
            .flatten();
        let fp = rule
            .field_path
            .as_ref()
            .map(|(_, fp)| fp)
            .or(named.as_ref());
        let (at, shown) = self.place(fp, n, key);
        let reason = rule
            .reason
            .filter(|r| *r != "Invalid value")
            .map(|r| format!("{r}: "))
            .unwrap_or_default();
        self.out.push(Violation {
            node: at,
            message: format!(
                "{shown}: {reason}{message} (a CEL rule of the {} CRD): the API server rejects the {}",
                self.what, self.kind
            ),
            help: Some(format!("the rule: `{}`", shorten(&rule.text, 160))),
            unknown: false,
        });
    }

    /// A rule whose evaluation failed on the object's data: the API server answers such a
    /// failure with a rejection at the rule's node (never its `fieldPath`).
    fn report_error(&mut self, rule: &Rule, n: Node<'a>, key: Option<Node<'a>>, why: &str) {
        let (at, shown) = self.place(None, n, key);
        let message = rule
            .message
            .as_deref()
            .map(|m| format!(" (its message when it fails: {m})"))
            .unwrap_or_default();
        self.out.push(Violation {
            node: at,
            message: format!(
                "{shown}: a CEL rule of the {} CRD cannot be evaluated on this object ({why}): the API server rejects the {}, as it does any object a rule fails to evaluate on",
                self.what, self.kind
            ),
            help: Some(format!(
                "the rule: `{}`{message}",
                shorten(&rule.text, 160)
            )),
            unknown: false,
        });
    }

    /// The node a finding of the rule at `n` (key `key`) goes to, and its path as shown: the
    /// rule's node, or the node its `fieldPath` names.
    /// The first field a message names by its path from the object's root that stands under
    /// `n` (its path relative to `n`), if any.
    fn named_field(&self, message: &str, n: Node<'a>) -> Option<Vec<super::PathSeg>> {
        if self.path.iter().any(|s| matches!(s, Seg::Idx(_))) {
            return None;
        }
        let here: Vec<&str> = self
            .path
            .iter()
            .filter_map(|s| match s {
                Seg::Key(k) => Some(*k),
                Seg::Idx(_) => None,
            })
            .collect();
        let prefix = format!("{}.", here.join("."));
        message
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .filter_map(|w| w.strip_prefix(prefix.as_str()))
            .find_map(|rest| {
                let mut cur = n;
                let mut segs = Vec::new();
                for k in rest.trim_end_matches('.').split('.') {
                    cur = cur.get(k)?;
                    segs.push(super::PathSeg::Key(k.to_string()));
                }
                (!segs.is_empty()).then_some(segs)
            })
    }

    fn place(
        &self,
        field_path: Option<&Vec<PathSeg>>,
        n: Node<'a>,
        key: Option<Node<'a>>,
    ) -> (Node<'a>, String) {
        let mut segs: Vec<String> = self
            .path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => k.to_string(),
                Seg::Idx(i) => format!("[{i}]"),
            })
            .collect();
        // Scalars are shown at their value; blocks at the key that names them.
        let mut at = if n.as_str().is_some() {
            n
        } else {
            key.unwrap_or(n)
        };
        if let Some(fp) = field_path {
            let mut cur = Some(n);
            for seg in fp {
                let (next, shown) = match seg {
                    PathSeg::Key(k) => {
                        let e = cur.and_then(|c| c.entry(k));
                        (e, k.clone())
                    }
                    PathSeg::Idx(i) => (
                        cur.and_then(|c| c.as_seq())
                            .and_then(|s| s.get(*i))
                            .map(|v| (v, v)),
                        format!("[{i}]"),
                    ),
                };
                segs.push(shown);
                cur = next.map(|(_, v)| v);
                if let Some((kn, v)) = next {
                    at = if v.as_str().is_some() { v } else { kn };
                }
            }
        }
        let path = path_string(segs.into_iter());
        let shown = if path.is_empty() {
            "the object".to_string()
        } else {
            format!("`{path}`")
        };
        (at, shown)
    }
}

fn shorten(s: &str, max: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}
