use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::yaml::ProblemKind;

declare_rule! {
    /// ## What it does
    /// Flags a Terraform file (`.tf`) that gpuops reads for the cluster objects it defines
    /// (`kubectl_manifest`, `kubernetes_manifest`, EKS managed node groups, `karpenter-resources`
    /// values) and that is not valid HCL. The finding points at the place the parser stopped. A
    /// file that is itself a template (`{{ … }}`, `{% … %}`) is not reported.
    ///
    /// ## Why is this bad?
    /// `terraform plan` stops at the file: nothing the module defines is applied, neither the
    /// NodePools and queues written in it nor the rest of the cluster it builds. gpuops cannot
    /// read what it defines either, so pods are checked without those pools.
    ///
    /// ## Example
    /// ```yaml
    /// # karpenter.tf
    /// resource "kubectl_manifest" "gpu" {
    ///   yaml_body = <<-YAML
    ///     kind: NodePool
    ///   YAM                 # the heredoc is never closed
    /// }
    /// ```
    ///
    /// ## Fix
    /// Correct the syntax at the reported place (`terraform validate` says the same).
    name: "invalid-hcl",
    category: "sources",
    kinds: &["files"],
    severity: Error,
    summary: "a Terraform file that defines cluster objects and is not valid HCL",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for &fid in &cx.ix.file_ids {
        let Some(f) = cx.ix.files.get(fid) else {
            continue;
        };
        let template = f.text.contains("{{") || f.text.contains("{%");
        for p in f.problems.iter().filter(|p| p.kind == ProblemKind::Hcl) {
            if template {
                continue;
            }
            out.push(
                cx.at(
                    Loc {
                        file: fid,
                        span: p.span,
                    },
                    p.message.clone(),
                )
                .help("nothing in this file is applied or linted until it parses"),
            );
        }
    }
}
