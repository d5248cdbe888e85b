//! Which parts of the input document a set of Rego modules can read.
//!
//! Converting every object of a 50,000-object repository into Rego values costs more than the
//! policies themselves, and most policies read a handful of derived facts. The modules' text is
//! scanned for `input.<key>` (and `input["<key>"]`); `by_kind` accessed with a literal kind
//! (`input.by_kind.Deployment`, `input.by_kind["Deployment"]`,
//! `object.get(input.by_kind, "Deployment", …)`) needs only that kind. Any other use of `input`
//! (passed whole, indexed by a variable, imported) needs everything, so a policy never sees a
//! document that lacks what it reads.
//!
//! The fields of template and container facts are narrowed only for modules known to name every
//! field they read (the bundled pack, [`Needs::of_module_by_name`]): a user module may count,
//! print or iterate a whole fact, and then sees every field.

use std::collections::BTreeSet;

/// The parts of the input document to build.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Every key, every object.
    pub all: bool,
    /// Top-level keys read.
    pub keys: BTreeSet<String>,
    /// Kinds read through `by_kind` with a literal name, unless `all_kinds`.
    pub kinds: BTreeSet<String>,
    pub all_kinds: bool,
    /// Fields of template and container facts read, unless `all_fields`.
    pub fields: BTreeSet<String>,
    pub all_fields: bool,
}

impl Needs {
    pub fn everything() -> Self {
        Needs {
            all: true,
            all_kinds: true,
            all_fields: true,
            ..Needs::default()
        }
    }

    pub fn key(&self, k: &str) -> bool {
        self.all || self.keys.contains(k)
    }

    /// Whether `by_kind` must hold objects of `kind`.
    pub fn kind(&self, kind: &str) -> bool {
        self.all || self.all_kinds || self.kinds.contains(kind)
    }

    /// Whether template and container facts must hold `field`.
    pub fn field(&self, field: &str) -> bool {
        self.all || self.all_fields || self.fields.contains(field)
    }

    pub fn merge(&mut self, other: &Needs) {
        self.all |= other.all;
        self.all_kinds |= other.all_kinds;
        self.all_fields |= other.all_fields;
        self.keys.extend(other.keys.iter().cloned());
        self.kinds.extend(other.kinds.iter().cloned());
        self.fields.extend(other.fields.iter().cloned());
    }

    /// What `text`, one Rego module, reads of `input`, every field of every fact included when
    /// it reads any (a module that never names `input` sees facts only through one that does).
    pub fn of_module(text: &str) -> Needs {
        let mut out = Needs::of_input(text);
        out.all_fields = out.all || !out.keys.is_empty();
        out
    }

    /// What `text` reads, for a module that names every field it reads: `t.labels`,
    /// `t["labels"]` or a string literal (`object.get(t, "pdbs", [])`). Every such name counts,
    /// whatever it is read from, so the set is too large rather than too small.
    pub fn of_module_by_name(text: &str) -> Needs {
        let mut out = Needs::of_input(text);
        match names(&blank_comments(text)) {
            Some(fields) => out.fields = fields,
            None => out.all_fields = true,
        }
        out
    }

    fn of_input(text: &str) -> Needs {
        let code = blank_comments(text);
        let b = code.as_bytes();
        let mut out = Needs::default();
        let mut i = 0;
        while let Some(off) = code[i..].find("input") {
            let at = i + off;
            i = at + "input".len();
            let before = at.checked_sub(1).map(|p| b[p]);
            let after = b.get(i).copied();
            if before.is_some_and(|c| is_ident(c) || c == b'.') || after.is_some_and(is_ident) {
                // Part of another name (`my_input`, `data.input`, `inputs`).
                continue;
            }
            if in_string(&code, at) {
                continue;
            }
            let Some((key, end)) = accessor(&code, i) else {
                out.all = true;
                continue;
            };
            if key == "by_kind" {
                match kind_of(&code, at, end) {
                    Some(k) => {
                        out.kinds.insert(k);
                    }
                    None => out.all_kinds = true,
                }
            }
            out.keys.insert(key);
        }
        out
    }
}

/// Every `.name` outside string literals and every string literal's value; `None` when a
/// literal cannot be read (an unterminated or malformed one may hide any name).
fn names(code: &str) -> Option<BTreeSet<String>> {
    let b = code.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' | b'"' => {
                let (value, len) = string_literal(&code[i..])?;
                out.insert(value);
                i += len;
            }
            b'.' => {
                let n = b[i + 1..].iter().take_while(|&&c| is_ident(c)).count();
                out.insert(code[i + 1..i + 1 + n].to_string());
                i += 1 + n;
            }
            _ => i += 1,
        }
    }
    Some(out)
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `.name` or `["name"]` at `i`: the name and where the accessor ends.
fn accessor(code: &str, i: usize) -> Option<(String, usize)> {
    let rest = &code[i..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(|&c| is_ident(c)).count();
        return (n > 0).then(|| (r[..n].to_string(), i + 1 + n));
    }
    let r = rest.strip_prefix('[')?.trim_start();
    let (s, len) = string_literal(r)?;
    let skipped = rest.len() - 1 - r.len();
    let tail = r[len..].trim_start();
    tail.starts_with(']')
        .then(|| (s, i + 1 + skipped + len + (r.len() - len - tail.len()) + 1))
}

/// A double-quoted or raw string literal at the start of `s`: its value and length in `s`.
fn string_literal(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    match b.first()? {
        b'`' => {
            let end = 1 + s[1..].find('`')?;
            Some((s[1..end].to_string(), end + 1))
        }
        b'"' => {
            let mut j = 1;
            while *b.get(j)? != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            // Rego's double-quoted strings escape as JSON's do.
            let value = serde_json::from_str::<String>(&s[..=j]).ok()?;
            Some((value, j + 1))
        }
        _ => None,
    }
}

/// The literal kind `input.by_kind` (from `at` to `end`) is read with, if it is one.
fn kind_of(code: &str, at: usize, end: usize) -> Option<String> {
    if let Some((k, _)) = accessor(code, end) {
        return Some(k);
    }
    // `object.get(input.by_kind, "Kind", default)`.
    let before = code[..at].trim_end();
    let before = before.strip_suffix('(')?.trim_end();
    if !before.ends_with("object.get") {
        return None;
    }
    let after = code[end..].trim_start().strip_prefix(',')?.trim_start();
    string_literal(after).map(|(s, _)| s)
}

/// Whether byte `at` of `code` (comments already blanked) sits inside a string literal.
fn in_string(code: &str, at: usize) -> bool {
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &c in &code.as_bytes()[..at] {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == b'\\' && q == b'"' {
                    escaped = true;
                } else if c == q || (c == b'\n' && q == b'"') {
                    quote = None;
                }
            }
            None if c == b'"' || c == b'`' => quote = Some(c),
            None => {}
        }
    }
    quote.is_some()
}

/// `text` with every `#` comment replaced by spaces (strings kept), so offsets stay the same.
fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut comment = false;
    for c in text.chars() {
        if comment {
            if c == '\n' {
                comment = false;
                out.push(c);
            } else {
                out.extend(std::iter::repeat_n(' ', c.len_utf8()));
            }
            continue;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q || (c == '\n' && q == '"') {
                    quote = None;
                }
                out.push(c);
            }
            None if c == '#' => {
                comment = true;
                out.push(' ');
            }
            None => {
                if c == '"' || c == '`' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: &Needs) -> Vec<&str> {
        n.keys.iter().map(String::as_str).collect()
    }

    #[test]
    fn reads_keys_and_literal_kinds() {
        let n = Needs::of_module(
            r#"package x
# input.objects in a comment is no read
deny contains f if {
    some t in input.gpu_templates
    some q in object.get(input.by_kind, "ResourceQuota", [])
    p := input.by_kind.PodDisruptionBudget
    s := input["namespaces"]
    m := "input.objects in a string"
}"#,
        );
        assert!(!n.all && !n.all_kinds, "{n:?}");
        assert_eq!(keys(&n), ["by_kind", "gpu_templates", "namespaces"]);
        assert_eq!(
            n.kinds.iter().map(String::as_str).collect::<Vec<_>>(),
            ["PodDisruptionBudget", "ResourceQuota"]
        );
        assert!(n.kind("ResourceQuota") && !n.kind("Deployment"));
        // Escapes read as JSON's: the kind is still a literal one.
        let n = Needs::of_module(r#"q := object.get(input.by_kind, "Resource\u0051uota", [])"#);
        assert!(!n.all_kinds && n.kind("ResourceQuota") && !n.kind("Deployment"));
    }

    #[test]
    fn any_other_use_needs_everything() {
        for text in [
            "x := input",
            "x := input[k]",
            "x := walk(input)",
            "import input",
            "x := input. objects",
        ] {
            assert!(Needs::of_module(text).all, "{text}");
        }
        let n = Needs::of_module("some k, v in input.by_kind");
        assert!(!n.all && n.all_kinds);
        let n = Needs::of_module("x := input.by_kind[k]");
        assert!(n.all_kinds);
        // Other names that contain the word.
        let n = Needs::of_module("my_input := data.input.x\ninputs := 1");
        assert_eq!(n, Needs::default());
    }

    #[test]
    fn field_names_are_read_only_from_modules_that_name_them() {
        let text = r#"package x
# t.annotations in a comment is no read
deny contains f if {
    some t in input.gpu_templates
    t.labels.team
    x := t["spec_path"]
    n := object.get(t, "pdbs", [])
    m := "quoted \"obj\u0065ct\""
    r := `raw`
}"#;
        let n = Needs::of_module_by_name(text);
        assert!(!n.all_fields, "{n:?}");
        for f in [
            "labels",
            "team",
            "spec_path",
            "pdbs",
            "raw",
            "gpu_templates",
        ] {
            assert!(n.field(f), "{f}");
        }
        assert!(
            n.fields.contains("quoted \"object\""),
            "escapes decoded: {n:?}"
        );
        assert!(!n.field("annotations") && !n.field("containers"));
        // Any module may count, print or iterate a whole fact: every field.
        assert!(Needs::of_module(text).field("annotations"));
        assert!(!Needs::of_module("x := data.y").field("annotations"));
        // A literal that cannot be read may hide any name.
        assert!(Needs::of_module_by_name("x := \"open").all_fields);
        assert!(Needs::of_module_by_name("x := \"bad \\q escape\"").all_fields);
        let mut merged = Needs::of_module_by_name(text);
        merged.merge(&Needs::of_module("x := count(input.gpu_templates[0])"));
        assert!(merged.field("annotations"));
    }
}
