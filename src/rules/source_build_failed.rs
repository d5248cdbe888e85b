use super::Ctx;
use crate::diag::{Diagnostic, Loc, Severity};
use crate::yaml::ProblemKind;

declare_rule! {
    /// ## What it does
    /// Flags a kustomization that `kustomize build` (or `kubectl kustomize`) cannot build, a
    /// chart that `helm template` cannot render, and an Argo CD Application whose source in this
    /// repository cannot be synced (its `path` does not exist, a values file is missing). The
    /// finding carries the tool's message and points at the kustomization entry it names (a
    /// missing resource or patch file), at the template line helm names, at the Application's
    /// field, or else at the kustomization file or `Chart.yaml`. Nothing of a source that does not
    /// build is linted; the rest of the repository is. It is an error where the source is
    /// certainly built: an Argo CD Application deploys it, or the cluster is declared complete
    /// (`cluster: {complete: true}`); elsewhere a warning, since a folder nothing in view deploys
    /// may be an example, or wait for an input a build step generates (`make` writing `params.env`).
    ///
    /// ## Why is this bad?
    /// ArgoCD builds the same overlay or chart before it syncs: when the build fails, the
    /// Application goes `ComparisonError` / `Unknown` and nothing in it is applied, so every
    /// workload, queue and NodePool it holds is missing from the cluster (and changes to them stop
    /// rolling out) until someone reads the controller's logs.
    ///
    /// ## Example
    /// ```yaml
    /// # overlays/prod/kustomization.yaml
    /// resources:
    ///   - ../../base
    ///   - gpu-quota.yaml        # the file was renamed to quota.yaml
    /// ```
    ///
    /// ## Fix
    /// Run `kustomize build <dir>` (or `helm template <chart>`) and fix what it reports: a path
    /// that moved, a patch whose target no longer exists, a template error. Remote bases and
    /// chart dependencies are never fetched by gpuops; such sources are listed as skipped.
    name: "source-build-failed",
    category: "sources",
    kinds: &["files"],
    severity: Error,
    summary: "a kustomization, Helm chart or Argo CD source that does not build",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (fid, f) in cx.ix.files.iter().enumerate() {
        for p in f
            .problems
            .iter()
            .filter(|p| matches!(p.kind, ProblemKind::Build | ProblemKind::Sync))
        {
            let mut d = cx.at(
                Loc {
                    file: fid,
                    span: p.span,
                },
                p.message.clone(),
            )
            .help("nothing from this source is linted until it builds; `gpuops lint --explain-sources` shows the command");
            // Certain to fail only where something deploys it: an Argo CD Application, or a
            // cluster the config declares complete. A folder nothing in view deploys may be an
            // example, or wait for an input a build step generates.
            if p.kind == ProblemKind::Build && !cx.ix.settings.complete {
                d.severity = Severity::Warning;
            }
            out.push(d);
        }
    }
}
