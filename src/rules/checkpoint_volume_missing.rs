use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// PLACEHOLDER
    name: "checkpoint-volume-missing",
    category: "placeholder",
    severity: Warning,
    summary: "placeholder",
    check: check,
}

fn check(_cx: &Ctx, _out: &mut Vec<Diagnostic>) {}
