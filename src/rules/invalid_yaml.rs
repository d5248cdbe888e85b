use super::Ctx;
use crate::diag::{Diagnostic, Loc};

declare_rule! {
    /// ## What it does
    /// Flags a file that does not parse as YAML, a mapping with the same key twice, and content
    /// that cannot be read as YAML text at all (binary, not UTF-8, too large, alias bombs, nesting
    /// too deep). The finding points at the place the parser stopped. YAML that go-yaml (kubectl,
    /// ArgoCD) reads is accepted, e.g. a flow list closed at its key's indentation. A Go/Helm or
    /// Jinja template (`{{- if .Values.x }}`, `{% if %}`) that does not parse is not reported: it
    /// is not YAML until rendered, and `gpuops lint` lists it as skipped.
    ///
    /// ## Why is this bad?
    /// ArgoCD cannot apply a file that does not parse, so every object in it is silently missing
    /// from the cluster (the rest of the sync may still go through). A duplicate key is rejected by
    /// `kubectl` and the API server's strict decoding, and where it is accepted the two values
    /// disagree about which one wins. Nothing else in such a file is linted after the error.
    ///
    /// ## Example
    /// ```yaml
    /// resources:
    ///   limits:
    ///     nvidia.com/gpu: 1
    ///   limits:            # duplicate key
    ///     nvidia.com/gpu: 2
    /// ```
    ///
    /// ## Fix
    /// Correct the syntax at the reported line; keep one of the duplicate keys.
    name: "invalid-yaml",
    category: "yaml",
    kinds: &["files"],
    severity: Error,
    summary: "a file that does not parse, duplicate keys, unreadable content",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for &fid in &cx.ix.file_ids {
        let Some(f) = cx.ix.files.get(fid) else {
            continue;
        };
        for p in f
            .problems
            .iter()
            .filter(|p| p.kind != crate::yaml::ProblemKind::Build)
        {
            let mut d = cx.at(
                Loc {
                    file: fid,
                    span: p.span,
                },
                p.message.clone(),
            );
            if let Some(first) = p.first {
                d = d
                    .related(
                        Loc {
                            file: fid,
                            span: first,
                        },
                        "first defined here",
                    )
                    .help("keep one of the two keys");
            } else if crate::yaml::compat::is_syntax_error(p) {
                d = d.help("fix the syntax here; nothing after it in this file is linted");
            }
            out.push(d);
        }
    }
}
