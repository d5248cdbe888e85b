use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags an in-source suppression (annotation `ignore.gpuops.dev/<rule>`, comment
    /// `# gpuops:ignore[<rule>]` or `# gpuops:ignore-file[<rule>]`) that matched no finding of its
    /// rule. Only rules that ran count: a rule turned off in `.gpuops.yaml` or left out by `--rule`
    /// never makes its suppressions unused. `--no-suppressions` reports every finding and no unused
    /// suppression.
    ///
    /// ## Why is this bad?
    /// A suppression outlives the finding it was written for: the Job got its GPU limit, the line
    /// moved, the NodePool was renamed. Left in place it silently hides the next real finding of
    /// that rule at that place — a toleration removed later from a workload that still carries an
    /// old `ignore.gpuops.dev/gpu-toleration-missing` annotation ships pods that stay Pending, and
    /// the linter says nothing.
    ///
    /// ## Example
    /// ```yaml
    /// resources:
    ///   limits:
    ///     nvidia.com/gpu: 1   # gpuops:ignore[gpu-limit-missing] webhook adds limits
    /// ```
    /// The limit is there, so `gpu-limit-missing` has nothing to report on this line.
    ///
    /// ## Fix
    /// Remove the suppression. If the finding moved, put the suppression where it is now reported.
    name: "unused-suppression",
    category: "suppression",
    kinds: &["suppressions"],
    severity: Warning,
    summary: "a suppression that matched no finding of a rule that ran",
    check: check,
}

/// Findings come from the suppression pass, which runs after every rule.
fn check(_: &Ctx, _: &mut Vec<Diagnostic>) {}
