//! Stable identities for findings, so code scanning (SARIF `partialFingerprints`) and GitLab Code
//! Quality (`fingerprint`) recognise the same finding across commits.
//!
//! A fingerprint hashes what identifies a finding and survives unrelated edits:
//! - the rule and the file path;
//! - the object (kind, namespace, name), so the same mistake in two objects of a file differs;
//! - the message with line and column numbers masked, since messages may cite other places;
//! - the offending source line, trimmed, so an edit that moves the line keeps the identity and an
//!   edit of the line itself (the fix, usually) gives a new one.
//!
//! Line numbers are left out on purpose: adding a document above a finding must not make code
//! scanning close it and open a "new" one. Findings that hash alike (the same line text twice in one
//! object) get a `:2`, `:3`… suffix in report order, as GitHub's own `primaryLocationLineHash` does.
//!
//! The hash is 64-bit FNV-1a: fixed by its definition, unlike `std`'s hasher, which may change
//! between Rust releases and would silently re-identify every finding.

use crate::diag::Diagnostic;
use crate::source::SourceFile;
use std::collections::HashMap;

/// The key under which SARIF results carry the fingerprint; bump the version if the inputs change.
pub const SARIF_KEY: &str = "gpuops/v1";

/// One fingerprint per diagnostic, in the same order: 16 hex digits, unique within the list.
pub fn fingerprints(diags: &[Diagnostic], files: &[SourceFile]) -> Vec<String> {
    let mut seen: HashMap<u64, u32> = HashMap::new();
    diags
        .iter()
        .map(|d| {
            let h = hash(d, files);
            let n = seen.entry(h).or_insert(0);
            *n += 1;
            if *n == 1 {
                format!("{h:016x}")
            } else {
                format!("{h:016x}:{n}")
            }
        })
        .collect()
}

fn hash(d: &Diagnostic, files: &[SourceFile]) -> u64 {
    let mut h = Fnv::new();
    h.field(d.rule);
    let file = files.get(d.loc.file);
    h.field(file.map_or("", |f| f.path.as_str()));
    match &d.object {
        Some(o) => {
            h.field(&o.kind);
            h.field(o.namespace.as_deref().unwrap_or(""));
            h.field(o.name.as_deref().unwrap_or(""));
        }
        None => {
            h.field("");
            h.field("");
            h.field("");
        }
    }
    h.field(&mask_numbers(&d.message));
    h.field(file.map_or("", |f| line_at(&f.text, d.loc.span.start())));
    h.finish()
}

/// The line holding byte `at`, trimmed; empty when the offset is outside the text.
fn line_at(text: &str, at: usize) -> &str {
    let Some(before) = text.get(..at) else {
        return "";
    };
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[start..];
    rest.split('\n').next().unwrap_or("").trim()
}

/// Masks the numbers that are positions: `path:12:3` and `line 12` become `path:#:#`, `line #`.
/// Other numbers (GPU counts, durations) are part of what the finding says and stay.
fn mask_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        out.push(c);
        let position = c == ':' || (c == ' ' && is_line_word(&message[..i]));
        if position && chars.peek().is_some_and(|(_, n)| n.is_ascii_digit()) {
            while chars.peek().is_some_and(|(_, n)| n.is_ascii_digit()) {
                chars.next();
            }
            out.push('#');
        }
    }
    out
}

/// Whether `before` ends with the word `line` or `lines`.
fn is_line_word(before: &str) -> bool {
    // Past the whole separator: it may be more than one byte (`×`).
    let word_start = before
        .char_indices()
        .rfind(|(_, c)| !c.is_alphanumeric())
        .map_or(0, |(i, c)| i + c.len_utf8());
    matches!(&before[word_start..], "line" | "lines")
}

/// 64-bit FNV-1a with a separator after each field, so ("ab", "c") and ("a", "bc") differ.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn field(&mut self, s: &str) {
        for &b in s.as_bytes().iter().chain(std::iter::once(&0xff)) {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Loc, ObjectRef, Severity};
    use crate::yaml::Span;

    fn file(text: &str) -> SourceFile {
        SourceFile::from_text("a.yaml".into(), text.into())
    }

    fn at(byte: u32, line: u32, message: &str) -> Diagnostic {
        let _ = line;
        Diagnostic::new(
            "gpu-limit-missing",
            Severity::Error,
            Loc {
                file: 0,
                span: Span::at(byte as usize),
            },
            message,
        )
        .object(Some(ObjectRef {
            kind: "Job".into(),
            namespace: None,
            name: Some("x".into()),
        }))
    }

    #[test]
    fn fnv_matches_the_reference_vectors() {
        let mut h = Fnv::new();
        for &b in b"foobar" {
            h.0 ^= u64::from(b);
            h.0 = h.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(h.finish(), 0x85944171f73967e8);
    }

    #[test]
    fn moving_a_finding_keeps_its_fingerprint_and_editing_its_line_changes_it() {
        let a = file("kind: Job\nx: 1\n");
        let b = file("# a comment\n\nkind: Job\nx: 1\n");
        let c = file("kind: Job\nx: 2\n");
        let fa = fingerprints(&[at(10, 2, "see a.yaml:2:1")], std::slice::from_ref(&a));
        let fb = fingerprints(&[at(23, 4, "see a.yaml:4:1")], std::slice::from_ref(&b));
        let fc = fingerprints(&[at(10, 2, "see a.yaml:2:1")], std::slice::from_ref(&c));
        assert_eq!(fa, fb);
        assert_ne!(fa, fc);
        assert_eq!(fa[0].len(), 16);
    }

    #[test]
    fn alike_findings_are_numbered() {
        let f = file("kind: Job\nx: 1\nx: 1\n");
        let fp = fingerprints(&[at(10, 2, "m"), at(15, 3, "m")], std::slice::from_ref(&f));
        assert_eq!(fp[1], format!("{}:2", fp[0]));
    }

    #[test]
    fn positions_are_masked_and_counts_kept() {
        assert_eq!(
            mask_numbers("taint at pools.yaml:70:11, unused on line 12; needs 8 GPUs"),
            "taint at pools.yaml:#:#, unused on line #; needs 8 GPUs"
        );
        assert_eq!(mask_numbers("pipeline 3 lines 4"), "pipeline 3 lines #");
        assert_eq!(mask_numbers("nvidia.com/gpu: 1"), "nvidia.com/gpu: 1");
    }

    #[test]
    fn line_at_survives_offsets_past_the_end() {
        assert_eq!(line_at("a\n  b  \nc", 3), "b");
        assert_eq!(line_at("a", 99), "");
    }

    #[test]
    fn multibyte_separator_before_a_space_does_not_panic() {
        assert_eq!(
            mask_numbers("16 pods × 8 on line 3"),
            "16 pods × 8 on line #"
        );
    }
}
