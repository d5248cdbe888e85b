use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// PLACEHOLDER
    name: "resourceflavor-not-found",
    category: "placeholder",
    severity: Warning,
    summary: "placeholder",
    check: check,
}

fn check(_cx: &Ctx, _out: &mut Vec<Diagnostic>) {}
