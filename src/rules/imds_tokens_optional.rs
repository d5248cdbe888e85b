use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// PLACEHOLDER
    name: "imds-tokens-optional",
    category: "placeholder",
    severity: Warning,
    summary: "placeholder",
    check: check,
}

fn check(_cx: &Ctx, _out: &mut Vec<Diagnostic>) {}
