use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags an in-source suppression that cannot take effect: one without a reason, one naming a
    /// rule that does not exist (with the closest rule name), a `gpuops:ignore` comment without a
    /// `[rule]` list, a `gpuops:ignore-file` comment below the comments that open the file, and a
    /// suppression of `suppression-invalid` or `unused-suppression` themselves.
    ///
    /// Suppressions are written as an annotation `ignore.gpuops.dev/<rule>: "<reason>"` on an
    /// object or a pod template, a comment `# gpuops:ignore[<rule>] <reason>` at the end of the
    /// offending line or alone on the line above, or `# gpuops:ignore-file[<rule>] <reason>` at the
    /// top of a file. Such a suppression is not applied: the finding it meant to hide is reported.
    ///
    /// ## Why is this bad?
    /// A suppression hides a risk: a Job that the API server will reject, pods that stay Pending, a
    /// training run that consolidation may kill. Without a reason nobody can tell later whether that
    /// risk was weighed or just silenced, so gpuops does not accept one. A misspelt rule name
    /// suppresses nothing while the next reader believes the finding was reviewed.
    ///
    /// ## Example
    /// ```yaml
    /// metadata:
    ///   name: finetune
    ///   annotations:
    ///     ignore.gpuops.dev/gpu-limit-missing: ""   # no reason
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: trainer   # gpuops:ignore[gpu-limt-missing] limits come from a webhook
    /// ```
    ///
    /// ## Fix
    /// Say why the finding does not apply, as the annotation value or after the brackets, and use
    /// a rule name from `gpuops rules`:
    /// ```yaml
    ///     ignore.gpuops.dev/gpu-limit-missing: "limits are set by the admission webhook (PLAT-311)"
    /// ```
    name: "suppression-invalid",
    category: "suppression",
    kinds: &["suppressions"],
    severity: Warning,
    summary: "a suppression without a reason, naming an unknown rule, or written where it cannot apply",
    check: check,
}

/// Findings come from the suppression pass, which runs after every rule.
fn check(_: &Ctx, _: &mut Vec<Diagnostic>) {}
