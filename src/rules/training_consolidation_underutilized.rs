use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// PLACEHOLDER
    name: "training-consolidation-underutilized",
    category: "placeholder",
    severity: Warning,
    summary: "placeholder",
    check: check,
}

fn check(_cx: &Ctx, _out: &mut Vec<Diagnostic>) {}
