use super::*;
use crate::diag::Severity;

fn found(text: &str) -> Found {
    scan(0, &SourceFile::from_text("t.yaml".into(), text.into()))
}

/// (rule, kind, scope line or 0, reason) of each entry.
fn entries(text: &str) -> Vec<(&'static str, SuppressionKind, u32, String)> {
    found(text)
        .entries
        .into_iter()
        .map(|e| {
            let line = match e.scope {
                Scope::Line(l) => l,
                _ => 0,
            };
            (e.rule, e.kind, line, e.reason)
        })
        .collect()
}

fn invalid(text: &str) -> Vec<String> {
    found(text).invalid.into_iter().map(|i| i.message).collect()
}

const GLM: &str = "gpu-limit-missing";

#[test]
fn end_of_line_and_line_above() {
    let e = entries(
        "a: 1 # gpuops:ignore[gpu-limit-missing] set by the webhook\n# gpuops:ignore[deprecated-api] old cluster\nb: 2\n",
    );
    assert_eq!(
        e,
        vec![
            (
                GLM,
                SuppressionKind::Comment,
                1,
                "set by the webhook".into()
            ),
            (
                "deprecated-api",
                SuppressionKind::Comment,
                3,
                "old cluster".into()
            ),
        ]
    );
}

#[test]
fn stacked_comments_cover_the_next_content_line_but_a_blank_line_ends_them() {
    let e = entries(
        "# gpuops:ignore[gpu-limit-missing] r1\n# why: see PLAT-1\n# gpuops:ignore[deprecated-api] r2\nb: 2\n# gpuops:ignore[ebs-unencrypted] r3\n\nc: 3\n",
    );
    let lines: Vec<u32> = e.iter().map(|x| x.2).collect();
    assert_eq!(lines, vec![4, 4, 6]);
}

#[test]
fn several_rules_in_one_comment_point_at_each_name() {
    let text = "x: 1 # gpuops:ignore[gpu-limit-missing, deprecated-api] both reviewed\n";
    let f = found(text);
    let names: Vec<(&str, u32, u32)> = f
        .entries
        .iter()
        .map(|e| {
            (
                e.rule,
                e.loc.span.start_pos(text).col,
                e.loc.span.end_pos(text).col,
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![("gpu-limit-missing", 22, 39), ("deprecated-api", 41, 55)]
    );
    assert!(f.entries.iter().all(|e| e.reason == "both reviewed"));
}

#[test]
fn hash_inside_quotes_or_plain_scalars_is_not_a_comment() {
    for text in [
        "a: \"x # gpuops:ignore[gpu-limit-missing] r\"\n",
        "a: 'it''s # gpuops:ignore[gpu-limit-missing] r'\n",
        "a: \"multi\n  line # gpuops:ignore[gpu-limit-missing] r\"\n",
        "url: http://x#gpuops:ignore[gpu-limit-missing]\n",
        "a: b#gpuops:ignore[gpu-limit-missing] r\n",
        "\"k # gpuops:ignore[gpu-limit-missing] r\": 1\n",
        "script: |\n  # gpuops:ignore[gpu-limit-missing] r\n  echo\n",
        "script: >\n  x # gpuops:ignore[gpu-limit-missing] r\n",
    ] {
        let f = found(text);
        assert!(
            f.entries.is_empty() && f.invalid.is_empty(),
            "{text:?}: {f:?}"
        );
    }
    // After an apostrophe inside a plain scalar the comment is still a comment.
    assert_eq!(
        entries("a: don't # gpuops:ignore[gpu-limit-missing] r\n").len(),
        1
    );
    // Quoted values followed by a real comment (escaped quotes do not end them).
    for text in [
        "a: \"x # y\" # gpuops:ignore[gpu-limit-missing] r\n",
        "a: \"x \\\" # y\"   # gpuops:ignore[gpu-limit-missing] r\n",
        "a: 'it''s # y' # gpuops:ignore[gpu-limit-missing] r\n",
        "\"k # y\": 1 # gpuops:ignore[gpu-limit-missing] r\n",
        "script: | # gpuops:ignore[gpu-limit-missing] r\n  echo\n",
    ] {
        assert_eq!(entries(text).len(), 1, "{text:?}");
    }
}

#[test]
fn only_a_comment_that_starts_with_the_directive_counts() {
    assert!(entries("a: 1 # see gpuops:ignore[gpu-limit-missing] in the docs\n").is_empty());
    assert_eq!(
        entries("a: 1 # keep (ADR-12) # gpuops:ignore[gpu-limit-missing] see #12\n")[0].3,
        "see #12"
    );
    assert_eq!(
        entries("a: 1 #gpuops:ignore[gpu-limit-missing] r\n").len(),
        1
    );
}

#[test]
fn reason_separators_are_not_the_reason() {
    for text in [
        "a: 1 # gpuops:ignore[gpu-limit-missing]: ok\n",
        "a: 1 # gpuops:ignore[gpu-limit-missing] -- ok\n",
        "a: 1 # gpuops:ignore[gpu-limit-missing] — ok\n",
    ] {
        assert_eq!(entries(text)[0].3, "ok", "{text}");
    }
    assert!(invalid("a: 1 # gpuops:ignore[gpu-limit-missing] --\n")[0].contains("no reason"));
}

#[test]
fn crlf_lines() {
    let text = "a: 1\r\n# gpuops:ignore[gpu-limit-missing] webhook\r\nb: 2 # gpuops:ignore[deprecated-api] old\r\n";
    let f = found(text);
    let got: Vec<(u32, &str)> = f
        .entries
        .iter()
        .map(|e| match e.scope {
            Scope::Line(l) => (l, e.reason.as_str()),
            _ => (0, ""),
        })
        .collect();
    assert_eq!(got, vec![(3, "webhook"), (3, "old")]);
    let e = &f.entries[1];
    assert_eq!(&text[e.loc.span.range()], "deprecated-api");
}

#[test]
fn file_comments_only_in_the_leading_block() {
    let e = entries(
        "# Generated by hand.\n\n# gpuops:ignore-file[gpu-nodepool-unbounded] quota caps it\napiVersion: v1\n",
    );
    assert_eq!(e[0].1, SuppressionKind::File);
    for text in [
        "---\n# gpuops:ignore-file[gpu-nodepool-unbounded] r\na: 1\n",
        "a: 1\n---\n# gpuops:ignore-file[gpu-nodepool-unbounded] r\nb: 1\n",
        "a: 1 # gpuops:ignore-file[gpu-nodepool-unbounded] r\n",
    ] {
        let f = found(text);
        assert!(f.entries.is_empty(), "{text}");
        assert!(f.invalid[0].message.contains("top of the file"), "{text}");
    }
}

#[test]
fn malformed_unknown_and_reasonless_comments_are_invalid() {
    assert!(invalid("a: 1 # gpuops:ignore reason\n")[0].contains("names no rule"));
    assert!(
        invalid("a: 1 # gpuops:ignore[gpu-limit-missing reason\n")[0].contains("names no rule")
    );
    assert!(invalid("a: 1 # gpuops:ignore[gpu-limit-missing,] r\n")[0].contains("names no rule"));
    let m = invalid("a: 1 # gpuops:ignore[gpu-limit-mising] r\n");
    assert!(m[0].contains("did you mean `gpu-limit-missing`"), "{m:?}");
    let m = invalid("a: 1 # gpuops:ignore[gpu-limit-missing]\n");
    assert!(m[0].contains("gives no reason"), "{m:?}");
    let m = invalid("a: 1 # gpuops:ignore[unused-suppression] noisy\n");
    assert!(m[0].contains("cannot be suppressed"), "{m:?}");
    // The known rule of a mixed list still applies.
    let f = found("a: 1 # gpuops:ignore[gpu-limit-missing,nope] r\n");
    assert_eq!((f.entries.len(), f.invalid.len()), (1, 1));
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
ANNOTATIONS
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: x
          resources:
            requests:
              nvidia.com/gpu: 1
";

fn lint(text: &str, settings: &Settings) -> Vec<Diagnostic> {
    let files = vec![SourceFile::from_text("t.yaml".into(), text.into())];
    crate::lint(&files, settings).diagnostics
}

fn glm_only() -> Settings {
    Settings {
        only: Some(vec![
            GLM.into(),
            "suppression-invalid".into(),
            "unused-suppression".into(),
        ]),
        ..Settings::default()
    }
}

fn summary(ds: &[Diagnostic]) -> Vec<(&'static str, Option<SuppressionKind>)> {
    ds.iter()
        .map(|d| (d.rule, d.suppressed.as_ref().map(|s| s.kind)))
        .collect()
}

#[test]
fn object_annotation_suppresses_and_is_kept_with_its_reason() {
    let text = JOB.replace(
        "ANNOTATIONS",
        "  annotations:\n    ignore.gpuops.dev/gpu-limit-missing: \"limits come from the webhook\"",
    );
    let ds = lint(&text, &glm_only());
    assert_eq!(summary(&ds), vec![(GLM, Some(SuppressionKind::Annotation))]);
    let s = ds[0]
        .suppressed
        .as_ref()
        .map(|s| (s.reason.as_str(), s.loc.span.start_pos(&text).line));
    assert_eq!(s, Some(("limits come from the webhook", 7)));
    assert_eq!(ds[0].severity, Severity::Error);
}

#[test]
fn template_annotation_covers_only_its_template() {
    let text = "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - {name: m, image: x, resources: {requests: {nvidia.com/gpu: 1}}}
    Worker:
      template:
        metadata:
          annotations:
            ignore.gpuops.dev/gpu-limit-missing: workers get limits from the webhook
        spec:
          containers:
            - {name: w, image: x, resources: {requests: {nvidia.com/gpu: 1}}}
";
    let ds = lint(text, &glm_only());
    assert_eq!(
        summary(&ds),
        vec![(GLM, None), (GLM, Some(SuppressionKind::Annotation))]
    );
    assert_eq!(ds[0].loc.span.start_pos(text).line, 10);
}

#[test]
fn the_most_specific_suppression_is_shown_and_none_is_unused() {
    let text = format!(
        "# gpuops:ignore-file[gpu-limit-missing] lab cluster\n{}",
        JOB.replace("ANNOTATIONS", "").replace(
            "nvidia.com/gpu: 1",
            "nvidia.com/gpu: 1 # gpuops:ignore[gpu-limit-missing] webhook"
        )
    );
    let ds = lint(&text, &glm_only());
    assert_eq!(summary(&ds), vec![(GLM, Some(SuppressionKind::Comment))]);
}

#[test]
fn unused_only_for_rules_that_ran() {
    let text = "# gpuops:ignore-file[gpu-nodepool-unbounded] quota caps it\n# gpuops:ignore-file[deprecated-api] old cluster\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
    let ds = lint(text, &glm_only());
    assert!(ds.is_empty(), "{ds:?}");
    let ds = lint(text, &Settings::default());
    assert_eq!(summary(&ds), vec![("unused-suppression", None); 2]);
    let mut off = Settings::default();
    off.rules
        .insert("deprecated-api".into(), crate::config::Level::Off);
    assert_eq!(lint(text, &off).len(), 1);
}

#[test]
fn without_suppressions_everything_shows_and_nothing_is_unused() {
    let text = format!(
        "# gpuops:ignore-file[gpu-limit-missing] lab\n# gpuops:ignore-file[deprecated-api] old\n# gpuops:ignore-file[ebs-unencrypted]\n{}",
        JOB.replace("ANNOTATIONS", "")
    );
    let settings = Settings {
        suppressions: false,
        ..Settings::default()
    };
    // (The Job is a GPU training Job without a checkpoint volume: that finding is not ours.)
    let rules: Vec<&str> = lint(&text, &settings)
        .iter()
        .map(|d| d.rule)
        .filter(|r| *r != "checkpoint-volume-missing")
        .collect();
    // The reason-less one is still malformed.
    assert_eq!(rules, vec!["suppression-invalid", GLM]);
}

#[test]
fn files_without_the_marker_are_not_parsed_for_comments() {
    let f = found("# gpuops renders this\na: 1 # gpuops:ignore-nothing\n");
    assert_eq!(f.invalid.len(), 1);
    assert!(found("a: 1 # nothing here\n").invalid.is_empty());
}
