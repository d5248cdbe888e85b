use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::yaml::{ProblemKind, Span};

declare_rule! {
    /// ## What it does
    /// Flags a file that does not parse as YAML, a mapping with the same key twice, and content
    /// that cannot be read as YAML text at all (binary, not UTF-8, too large, alias bombs, nesting
    /// too deep). The finding points at the place the parser stopped, or at the first line of an
    /// unresolved merge conflict (`<<<<<<< HEAD`) when that is why. Keys written twice in one
    /// mapping (a list item that lost its `- `) are one finding, and keys written twice in a file
    /// that does not parse anyway are not another. YAML that go-yaml (kubectl,
    /// ArgoCD) reads is accepted, e.g. a flow list closed at its key's indentation. A Go/Helm or
    /// Jinja template (`{{- if .Values.x }}`, `{% if %}`), a Terraform `templatefile()` source, a
    /// printf format or an `envsubst`, `sed` or script template that parses once its `${NAME}`,
    /// `%NAME%`, `@NAME@`, `@@NAME@@` or Sphinx `|name|` placeholders are filled in is not reported: it is not YAML until rendered, and `gpuops lint` lists it as
    /// skipped. Neither are EC2 user data in MIME multipart form and a test's assertions about the
    /// cluster (kuttl `NN-assert.yaml`, what a chainsaw test asserts or expects refused, a
    /// Kyverno CLI test's inputs), which are never applied, and a `.yaml` file that is a shell
    /// script (its first line a command). Nor is YAML that is no Kubernetes manifest (it names no `apiVersion` and `kind`,
    /// or it is CI configuration under `.github/`, or a kubeconfig): a values file, a workflow or
    /// a client's credentials are another tool's to read. Nor is a file whose name says it is broken on purpose (`invalid.yaml`,
    /// `malformed-job.yaml`): a negative sample kept to show a rejection (unless the rule is
    /// selected with `--rule`).
    ///
    /// ## Why is this bad?
    /// ArgoCD cannot apply a file that does not parse, so every object in it is silently missing
    /// from the cluster (the rest of the sync may still go through). A duplicate key with two
    /// different values (a warning) makes kustomize and strict YAML parsers refuse the file, and
    /// readers that accept it keep only the last value (gpuops reads it the same way), so the
    /// first is silently lost; the
    /// same key and value written twice is not reported (it reads the same either way, and a
    /// kustomize build that refuses it is). Nothing else in such a file is linted after a syntax
    /// error.
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

/// Whether a file is meant to be applied to a cluster: it names an object (`apiVersion` and
/// `kind`, written anywhere: a broken file may have lost its structure) and is no CI
/// configuration.
fn is_manifest(path: &str, text: &str) -> bool {
    let ci = path.starts_with(".github/") || path.contains("/.github/");
    !ci && text.contains("apiVersion")
        && text.contains("kind")
        && !is_script(text)
        && !is_kubeconfig(text)
}

/// Whether a file is a kubeconfig (`kind: Config` with its `clusters:`, `contexts:` or
/// `users:`): credentials a client reads, never an object applied to a cluster.
fn is_kubeconfig(text: &str) -> bool {
    // A fast scan first: every manifest of the repository comes through here.
    if !(text.starts_with("kind: Config") || text.contains("\nkind: Config")) {
        return false;
    }
    let top = |key: &str| text.lines().any(|l| l.trim_end() == key);
    top("kind: Config") && (top("clusters:") || top("contexts:") || top("users:"))
}

/// Whether a file is a shell script under a YAML name (`kubectl create secret …`, then
/// `echo "<manifest>" | kubectl apply -f -`): its first line is a command, not YAML.
fn is_script(text: &str) -> bool {
    if text.starts_with("#!") {
        return true;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && *l != "---");
    first.is_some_and(|l| {
        let word = l.split_whitespace().next().unwrap_or("");
        matches!(
            word,
            "kubectl" | "oc" | "helm" | "echo" | "cat" | "export" | "curl" | "kustomize" | "sudo"
        ) && l.contains(' ')
            && !l.contains(": ")
            && !l.ends_with(':')
    })
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // A file named as broken on purpose (`invalid.yaml`) is a negative sample, unless the rule
    // is selected by name.
    let selected = cx.ix.settings.selected(RULE.name);
    for &fid in &cx.ix.file_ids {
        let Some(f) = cx.ix.files.get(fid) else {
            continue;
        };
        let manifest =
            is_manifest(&f.path, &f.text) && (selected || !crate::source::named_invalid(&f.path));
        let broken = f.problems.iter().any(crate::yaml::compat::is_syntax_error);
        let (joined, mut folded) = missing_separators(f);
        let merged = one_mapping(f, &mut folded);
        if manifest {
            for (span, keys) in &joined {
                out.push(
                    cx.at(Loc { file: fid, span: *span }, format!(
                        "a second object starts here with no `---` above it: YAML reads both as one mapping with duplicate keys ({}), so kustomize and strict parsers refuse the file, and readers that accept it keep only the last values: the object above is lost",
                        crate::diag::backticked(keys, ", ")
                    ))
                    .help("add a line `---` above this one")
                    .with_severity(crate::diag::Severity::Warning),
                );
            }
        }
        for (pi, p) in f.problems.iter().enumerate().filter(|(_, p)| match p.kind {
            ProblemKind::Build
            | ProblemKind::MissingInput
            | ProblemKind::Sync
            | ProblemKind::Hcl => false,
            // Syntax and duplicate keys matter where the file is applied; the rest (binary
            // content, alias bombs, nesting) is worth a word wherever it stands.
            ProblemKind::Syntax => manifest,
            ProblemKind::Content => manifest || p.first.is_none(),
        }) {
            if manifest && folded.contains(&pi) {
                continue;
            }
            // A file that does not parse is reported where it breaks; keys written twice before
            // that (often the same mistake: pasted diff markers, a broken indentation) are not
            // another finding.
            if p.first.is_some() && broken {
                continue;
            }
            // Keys written twice in one mapping (a list item that lost its `- `): one finding.
            if let Some(keys) = merged.get(&pi) {
                let name = |k: usize| f.text.get(f.problems[k].span.range()).unwrap_or("");
                let mut distinct = std::collections::HashSet::new();
                let mut names: Vec<&str> = Vec::new();
                for &k in keys {
                    if distinct.insert(name(k)) && names.len() < MAX_MARKED {
                        names.push(name(k));
                    }
                }
                let times = if distinct.len() < keys.len() {
                    "more than once"
                } else {
                    "twice"
                };
                let mut d = cx
                    .at(
                        Loc { file: fid, span: p.span },
                        format!(
                            "keys {} are each written {times} in one mapping: YAML forbids it, so kustomize and strict parsers refuse the file, and readers that accept it keep only the last of the values; a list item that lost its `- ` reads so",
                            crate::diag::backticked(&names, ", ")
                        ),
                    )
                    .help("keep one of each key, or start each further item with `- `")
                    .with_severity(crate::diag::Severity::Warning);
                let mut firsts: Vec<Span> = Vec::new();
                // The places of the first few keys: a generated file may repeat thousands.
                for &k in keys.iter().take(MAX_MARKED) {
                    if let Some(first) = f.problems[k].first
                        && !firsts.contains(&first)
                    {
                        firsts.push(first);
                        let at = Loc {
                            file: fid,
                            span: first,
                        };
                        d = d.related(at, "first defined here");
                    }
                    if k != pi {
                        let at = Loc {
                            file: fid,
                            span: f.problems[k].span,
                        };
                        d = d.related(at, format!("also written again: `{}`", name(k)));
                    }
                }
                out.push(d);
                continue;
            }
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
                    .help("keep one of the two keys")
                    // kustomize refuses the file, but a lenient reader keeps one value: not
                    // certain to fail.
                    .with_severity(crate::diag::Severity::Warning);
            } else if crate::yaml::compat::is_syntax_error(p)
                && let Some(marker) = conflict_marker(&f.text)
            {
                // An unfinished merge: the parser's complaint about the line after it says
                // nothing of what happened.
                let line = f.text[marker..].lines().next().unwrap_or("");
                d = cx
                    .at(
                        Loc {
                            file: fid,
                            span: Span::new(marker, marker + line.len()),
                        },
                        format!(
                            "an unresolved git merge conflict (`{}`): the file is no YAML until the conflict is resolved, so applying it fails",
                            line.trim_end()
                        ),
                    )
                    .related(
                        Loc {
                            file: fid,
                            span: p.span,
                        },
                        "where the parser stops",
                    )
                    .help("resolve the conflict: keep one side, delete the `<<<<<<<`, `=======` and `>>>>>>>` lines");
            } else if crate::yaml::compat::is_syntax_error(p) {
                // A Terraform file's heredocs are read one by one: only this one is lost.
                let rest = if f.path.ends_with(".tf") {
                    "nothing after it in this manifest is linted"
                } else {
                    "nothing after it in this file is linted"
                };
                d = d.help(format!("fix the syntax here; {rest}"));
            }
            out.push(d);
        }
    }
}

/// Duplicate keys of a document's top level that a missing `---` makes: a document with a
/// second top-level `apiVersion` holds an object written onto the one above, and the top-level
/// duplicates after that line (`metadata`, `spec`; an identical `apiVersion` or `kind` is no
/// problem of its own) are one mistake. Returns, per such line (its span), the duplicated keys,
/// and the problems folded into it.
fn missing_separators(
    f: &crate::source::SourceFile,
) -> (Vec<(Span, Vec<String>)>, std::collections::HashSet<usize>) {
    let mut starts: Vec<Span> = Vec::new();
    let mut seen_in_doc = false;
    let mut offset = 0usize;
    for line in f.text.split_inclusive('\n') {
        if line.starts_with("---") {
            seen_in_doc = false;
        } else if line.starts_with("apiVersion:") {
            if seen_in_doc {
                starts.push(Span::new(offset, offset + "apiVersion".len()));
            }
            seen_in_doc = true;
        }
        offset += line.len();
    }
    let mut groups: Vec<(Span, Vec<String>)> = Vec::new();
    let mut folded = std::collections::HashSet::new();
    for (i, p) in f.problems.iter().enumerate() {
        if p.first.is_none() {
            continue;
        }
        let (start, end) = (p.span.start(), p.span.end());
        let top = start == 0 || f.text.as_bytes().get(start - 1) == Some(&b'\n');
        // The joined object this key belongs to: the last `apiVersion` line above it, with no
        // separator in between.
        let Some(lead) = starts.iter().rev().find(|s| s.start() <= start).copied() else {
            continue;
        };
        if !top
            || f.text
                .get(lead.start()..start)
                .is_some_and(|t| t.contains("\n---"))
        {
            continue;
        }
        folded.insert(i);
        let key = f.text.get(start..end).unwrap_or("").to_string();
        match groups.iter_mut().find(|(s, _)| *s == lead) {
            Some((_, keys)) => keys.push(key),
            None => groups.push((lead, vec![key])),
        }
    }
    (groups, folded)
}

/// How many repeated keys of one mapping are named and marked on its finding.
const MAX_MARKED: usize = 20;

/// Where the first line of an unresolved merge conflict starts (`<<<<<<< HEAD`).
fn conflict_marker(text: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("<<<<<<< ") || line.trim_end() == "<<<<<<<" {
            // Only with its other markers below: not a heredoc's or a table's row.
            let rest = &text[at..];
            return (rest.contains("\n=======") && rest.contains("\n>>>>>>>")).then_some(at);
        }
        at += line.len();
    }
    None
}

/// Duplicate keys of one mapping, written at one column with nothing less indented between one
/// duplicate and the next: per group of two or more, the first
/// duplicate's problem with every member (the others are folded into it). Linear in the file:
/// each stretch of text is looked at once, and only the latest group of a column is joined.
fn one_mapping(
    f: &crate::source::SourceFile,
    folded: &mut std::collections::HashSet<usize>,
) -> std::collections::HashMap<usize, Vec<usize>> {
    use std::collections::HashMap;
    let col = |at: usize| at - f.line_start(at);
    // Every line after the first of `from..to` that holds something sits at `c` or deeper.
    let within = |from: usize, to: usize, c: usize| {
        from >= to
            || f.text.get(from..to).is_some_and(|t| {
                t.split('\n').skip(1).all(|l| {
                    let body = l.trim_start();
                    body.is_empty() || body.starts_with('#') || l.len() - body.len() >= c
                })
            })
    };
    struct Group {
        /// How far the text is known to stay inside the mapping.
        checked: usize,
        members: Vec<usize>,
    }
    let mut order: Vec<usize> = (0..f.problems.len())
        .filter(|&i| f.problems[i].first.is_some() && !folded.contains(&i))
        .collect();
    order.sort_by_key(|&i| f.problems[i].span.start());
    let mut groups: Vec<Group> = Vec::new();
    let mut latest: HashMap<usize, usize> = HashMap::new();
    for i in order {
        let p = &f.problems[i];
        let (at, c) = (p.span.start(), col(p.span.start()));
        let joined = latest
            .get(&c)
            .copied()
            .filter(|&g| within(groups[g].checked, at, c));
        match joined {
            Some(g) => {
                groups[g].checked = at;
                groups[g].members.push(i);
            }
            None => {
                latest.insert(c, groups.len());
                groups.push(Group {
                    // Between its first definition and here the parser found one mapping.
                    checked: at,
                    members: vec![i],
                });
            }
        }
    }
    let mut out = HashMap::new();
    for g in groups.into_iter().filter(|g| g.members.len() > 1) {
        folded.extend(g.members[1..].iter().copied());
        out.insert(g.members[0], g.members);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::is_manifest;

    #[test]
    fn manifests_name_an_object_and_are_no_ci_configuration() {
        assert!(is_manifest(
            "deploy/job.yaml",
            "apiVersion: batch/v1\nkind: Job\n"
        ));
        assert!(!is_manifest("charts/x/values.yaml", "image: x\nimage: y\n"));
        let workflow =
            "on: push\njobs:\n  k:\n    steps:\n      - run: echo 'apiVersion: v1 kind: X'\n";
        assert!(!is_manifest(".github/workflows/ci.yml", workflow));
        assert!(!is_manifest("sub/.github/workflows/ci.yml", workflow));
    }
}
