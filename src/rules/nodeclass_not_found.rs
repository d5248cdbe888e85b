use super::{Ctx, usable};
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags a Karpenter NodePool whose `spec.template.spec.nodeClassRef.name` (v1 and v1beta1),
    /// or a v1alpha5 Provisioner whose `spec.providerRef.name`, names a node class that is neither
    /// in the linted files nor declared external in `.gpuops.yaml`. The kind comes from the ref's
    /// `kind` when written; otherwise it is `EC2NodeClass` for a `nodeClassRef` and
    /// `AWSNodeTemplate` for a `providerRef`. EKS Auto Mode refs (`group: eks.amazonaws.com`,
    /// `kind: NodeClass`) resolve to a NodeClass in the files or context, or to Auto Mode's
    /// built-in `default`; refs to other providers' classes (KWOK, Azure…) are not checked.
    ///
    /// ## Why is this bad?
    /// Karpenter cannot launch a node without its node class: the NodePool never becomes Ready and
    /// is skipped for scheduling, so every pod that only this pool can host (typically the GPU
    /// training jobs) stays Pending with nothing in the pod's own events to say why. A typo in the
    /// name is enough.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   template:
    ///     spec:
    ///       nodeClassRef:
    ///         group: karpenter.k8s.aws
    ///         kind: EC2NodeClass
    ///         name: gpu-clas   # the EC2NodeClass is called `gpu-class`
    /// ```
    ///
    /// ## Fix
    /// Point the ref at an existing node class. If the class is created outside the repo
    /// (Terraform, another GitOps repo), declare it so the linter knows:
    /// ```yaml
    /// # .gpuops.yaml
    /// external:
    ///   EC2NodeClass: [gpu-class]
    /// ```
    name: "nodeclass-not-found",
    category: "references",
    kinds: &["NodePool"],
    severity: Error,
    summary: "a NodePool or Provisioner references a node class that does not exist",
    check: check,
}

/// Node class kinds of the AWS provider, new and old.
const CLASS_KINDS: [&str; 2] = ["EC2NodeClass", "AWSNodeTemplate"];

/// The node class every EKS Auto Mode cluster has built in.
const AUTO_MODE_BUILT_IN: &str = "default";

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for pool in &cx.ix.nodepools {
        let Some(r) = pool.node_class_ref else {
            continue;
        };
        let Some(name_node) = r.get("name") else {
            continue;
        };
        let Some(name) = usable(name_node) else {
            continue;
        };
        let field = if pool.legacy_provisioner {
            "providerRef"
        } else {
            "nodeClassRef"
        };
        let kind = r
            .get("kind")
            .and_then(usable)
            .unwrap_or(if pool.legacy_provisioner {
                "AWSNodeTemplate"
            } else {
                "EC2NodeClass"
            });
        // v1 writes `group`; v1beta1 and Provisioner refs may carry an `apiVersion`.
        let group = r.get("group").and_then(usable).or_else(|| {
            r.get("apiVersion")
                .and_then(usable)
                .map(|a| a.split_once('/').map_or(a, |(g, _)| g))
        });
        let auto_mode = group == Some(crate::model::AUTO_MODE_GROUP);
        let aws = matches!(group, None | Some("karpenter.k8s.aws")) && CLASS_KINDS.contains(&kind);
        // Other providers' classes (KWOK, Azure, …) are not this rule's to resolve.
        if !aws && !auto_mode {
            continue;
        }
        if auto_mode && name == AUTO_MODE_BUILT_IN {
            continue;
        }
        if cx.ix.exists(kind, None, name) {
            continue;
        }
        let owner = &cx.ix.objects[pool.obj];
        let mut d = cx.on(
            owner,
            name_node,
            format!(
                "{} `{}` references {kind} `{name}` in `{field}`, but no {kind} of that name exists: Karpenter cannot launch nodes for this pool, so pods that need it stay Pending",
                owner.kind, pool.name
            ),
        );
        // The same name under the other AWS class kind: the ref's kind is the mistake.
        let other = CLASS_KINDS
            .iter()
            .filter(|k| CLASS_KINDS.contains(&kind) && **k != kind)
            .find_map(|k| cx.ix.named(k, name).into_iter().next().map(|o| (*k, o)));
        // Certain only with a likely typo or the other class kind in view.
        let mut certain = other.is_some();
        let help = if let Some((other_kind, o)) = other {
            d = d.related(
                o.loc(o.anchor()),
                format!(
                    "this is {} {other_kind}, not {} {kind}",
                    an(other_kind),
                    an(kind)
                ),
            );
            let usual = if pool.legacy_provisioner {
                "v1alpha5 Provisioners use AWSNodeTemplate"
            } else {
                "NodePools use EC2NodeClass"
            };
            format!(
                "{} {other_kind} `{name}` exists but the ref asks for {} {kind}: make the kinds agree ({usual})",
                capitalized(an(other_kind)),
                an(kind)
            )
        } else {
            let near = cx.ix.near_objects(kind, None);
            match near.closest(name).map(|(_, n, &i)| (n, &cx.ix.objects[i])) {
                Some((n, o)) => {
                    certain = true;
                    d = d.related(o.loc(o.anchor()), format!("the closest {kind}"));
                    format!(
                        "did you mean `{n}`? If `{name}` is created outside this repo (Terraform, another repo), declare it in .gpuops.yaml: `external: {{{kind}: [{name}]}}`"
                    )
                }
                None if auto_mode => format!(
                    "EKS Auto Mode has one built-in NodeClass, `{AUTO_MODE_BUILT_IN}`; use it, add a NodeClass `{name}` to the repo, or, if it is created outside this repo, declare it in .gpuops.yaml: `external: {{{kind}: [{name}]}}`"
                ),
                None => format!(
                    "fix the name, add the {kind} to the repo, or, if it is created outside this repo (Terraform, another repo), declare it in .gpuops.yaml: `external: {{{kind}: [{name}]}}`"
                ),
            }
        };
        let d = d.help(help);
        out.extend(if certain {
            Some(d)
        } else {
            cx.unresolved(d, kind)
        });
    }
}

fn an(word: &str) -> &'static str {
    if word.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn capitalized(article: &str) -> &'static str {
    if article == "an" { "An" } else { "A" }
}
