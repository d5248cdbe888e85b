use super::{Ctx, close_enough, edit_distance_within};
use crate::diag::{Diagnostic, Loc};
use crate::index::flavor_pools;
use crate::model::{Flavor, Taint, Toleration, is_accelerator_resource};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a Kueue ResourceFlavor whose `tolerations` are meant for a taint of its nodes but do
    /// not tolerate it. Kueue appends the flavor's `tolerations` to every pod it admits to the
    /// flavor, so they must match the `NoSchedule` / `NoExecute` taints of the NodePools its
    /// `nodeLabels` select. Only flavors that declare `tolerations` are judged (without them, pods
    /// bring their own and other rules check those), and only two cases count:
    /// - a toleration aimed at a taint that misses it: the same key (or a near miss of it) with
    ///   another value, effect or operator, against a hard taint of the flavor's own `nodeTaints`,
    ///   or of the pools behind the flavor when none of them is fully tolerated;
    /// - tolerations that tolerate no hard taint of any pool behind the flavor, while every one of
    ///   those pools has a hard taint they leave open.
    ///
    /// A pool taint that the flavor mirrors in its `nodeTaints` counts as tolerated (Kueue only
    /// admits pods that tolerate those), and so does, on EKS (`eks: true`, or a pool whose node
    /// class is AWS's), a `NoSchedule` taint on a device resource (the ExtendedResourceToleration
    /// admission plugin adds it). A flavor whose
    /// `nodeTaints` are left for the workloads to tolerate — Kueue's way to keep a flavor for the
    /// workloads that opt in — is fine as long as its tolerations are not aimed at those taints.
    ///
    /// ## Why is this bad?
    /// Platform teams put tolerations on the flavor so that workloads need not: the workloads
    /// trust the flavor. When its tolerations miss the pool's taint, Kueue admits the workload,
    /// charges its quota and unsuspends it, and its pods stay Pending — Karpenter will not launch
    /// a node for pods that do not tolerate the pool's taints. A toleration that misses the
    /// flavor's own `nodeTaints` keeps every workload without its own toleration from ever being
    /// admitted to the flavor.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu` taints its nodes dedicated=gpu:NoSchedule
    /// apiVersion: kueue.x-k8s.io/v1beta2
    /// kind: ResourceFlavor
    /// metadata:
    ///   name: a100
    /// spec:
    ///   nodeLabels:
    ///     karpenter.sh/nodepool: gpu
    ///   tolerations:
    ///     - key: dedicated
    ///       value: "yes"          # the taint's value is "gpu"
    ///       effect: NoSchedule
    /// ```
    ///
    /// ## Fix
    /// Tolerate the taint as the pools write it — `operator: Exists` matches any value:
    /// ```yaml
    /// tolerations:
    ///   - key: dedicated
    ///     operator: Exists
    ///     effect: NoSchedule
    /// ```
    name: "flavor-toleration-mismatch",
    category: "kueue",
    kinds: &["ResourceFlavor"],
    severity: Warning,
    summary: "a ResourceFlavor's tolerations miss the taints of its nodes",
    check: check,
}

/// Why a toleration aimed at a taint misses it, and the field that decides it; `None` when it is
/// not aimed at the taint (or tolerates it).
fn aimed_miss<'a>(tol: &Toleration<'a>, taint: &Taint) -> Option<(Node<'a>, String)> {
    if tol.tolerates(taint) || tol.key.is_empty() {
        return None;
    }
    let field = |k: &str| tol.node.get(k).unwrap_or(tol.node);
    if tol.key != taint.key {
        let d = edit_distance_within(tol.key, taint.key, 3)?;
        return close_enough(taint.key, d).then(|| {
            (
                field("key"),
                format!("its key `{}` is not the taint's `{}`", tol.key, taint.key),
            )
        });
    }
    if !tol.effect.is_empty() && tol.effect != taint.effect {
        return Some((
            field("effect"),
            format!(
                "its effect `{}` is not the taint's `{}`",
                tol.effect, taint.effect
            ),
        ));
    }
    let decisive = tol.node.get("value").or(tol.node.get("operator"));
    let why = match tol.operator {
        "Equal" | "" if tol.value.is_empty() => format!(
            "without `operator: Exists` it matches only an empty value, and the taint's value is `{}`",
            taint.value
        ),
        "Equal" | "" if taint.value.is_empty() => format!(
            "it matches value `{}`, and the taint has no value",
            tol.value
        ),
        "Equal" | "" => format!(
            "it matches value `{}`, and the taint's value is `{}`",
            tol.value, taint.value
        ),
        op => format!("operator `{op}` is neither `Exists` nor `Equal`"),
    };
    Some((decisive.unwrap_or(tol.node), why))
}

fn toleration_yaml(t: &Taint) -> String {
    format!(
        "  - key: {}\n    operator: Exists\n    effect: {}",
        t.key, t.effect
    )
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let eks = ix.settings.eks;
    for (fi, f) in ix.flavors.iter().enumerate() {
        if f.tolerations.is_empty() {
            continue;
        }
        let fobj = &ix.objects[f.obj];
        let node_taints = Flavor::hard_node_taints(fobj);
        let mut reported = false;
        // Its own nodeTaints.
        for t in &node_taints {
            if f.tolerations.iter().any(|x| x.tolerates(t)) {
                continue;
            }
            if let Some((node, why)) = f.tolerations.iter().find_map(|x| aimed_miss(x, t)) {
                reported = true;
                out.push(
                    cx.on(
                        fobj,
                        node,
                        format!(
                            "ResourceFlavor `{}` has a toleration for its own nodeTaint `{}` that does not tolerate it ({why}): Kueue admits to the flavor only workloads that tolerate the taint themselves",
                            f.name,
                            t.display()
                        ),
                    )
                    .related(fobj.loc(t.node), format!("nodeTaint `{}`", t.display()))
                    .help(format!(
                        "tolerate the taint as written:\n{}",
                        toleration_yaml(t)
                    )),
                );
            }
        }
        // The pools its nodeLabels select.
        let pools = flavor_pools(ix, fi);
        if pools.is_empty() {
            continue;
        }
        // A pool of AWS's node classes is on EKS, where the admission plugin always runs.
        let covered = |t: &Taint, on_eks: bool| {
            f.tolerations.iter().any(|x| x.tolerates(t))
                || node_taints
                    .iter()
                    .any(|n| n.key == t.key && n.value == t.value && n.effect == t.effect)
                || (on_eks && t.effect == "NoSchedule" && is_accelerator_resource(t.key))
        };
        let open: Vec<(usize, Vec<&Taint>)> = pools
            .iter()
            .map(|&p| {
                let pool = &ix.nodepools[p];
                let left: Vec<&Taint> = pool
                    .taints
                    .iter()
                    .filter(|t| {
                        t.is_hard() && !covered(t, eks || pool.admission_tolerates_resources())
                    })
                    .collect();
                (p, left)
            })
            .collect();
        // Some pool takes the flavor's pods as they are.
        if open.iter().any(|(_, left)| left.is_empty()) {
            continue;
        }
        let several = pools.len() > 1;
        // One finding per toleration and taint, however many pools carry that taint.
        let mut misses: Vec<(Node<'_>, &Taint, String, Vec<usize>)> = Vec::new();
        for (p, left) in &open {
            for t in left {
                let Some((node, why)) = f.tolerations.iter().find_map(|x| aimed_miss(x, t)) else {
                    continue;
                };
                let same = |m: &&mut (Node<'_>, &Taint, String, Vec<usize>)| {
                    m.0.is(node) && (m.1.key, m.1.value, m.1.effect) == (t.key, t.value, t.effect)
                };
                match misses.iter_mut().find(same) {
                    Some(m) => m.3.push(*p),
                    None => misses.push((node, t, why, vec![*p])),
                }
            }
        }
        let aimed = !misses.is_empty();
        for (node, t, why, on) in misses {
            let mut pools = pool_phrase(ix.nodepools[on[0]].name, several && on.len() == 1);
            if on.len() > 1 {
                pools = format!(
                    "NodePools {}",
                    crate::diag::backticked(
                        &on.iter().map(|&p| ix.nodepools[p].name).collect::<Vec<_>>(),
                        ", "
                    )
                );
            }
            let what = format!(
                "has a toleration for taint `{}` of {pools} that does not tolerate it ({why})",
                t.display(),
            );
            out.push(pool_finding(cx, f, node, on[0], t, &what));
        }
        if aimed || reported {
            continue;
        }
        let tolerates_any = pools.iter().any(|&p| {
            ix.nodepools[p]
                .taints
                .iter()
                .filter(|t| t.is_hard())
                .any(|t| f.tolerations.iter().any(|x| x.tolerates(t)))
        });
        if tolerates_any {
            continue;
        }
        let (p, left) = &open[0];
        let Some(t) = left.first() else { continue };
        let key = fobj
            .spec()
            .and_then(|s| s.entry("tolerations"))
            .map_or(fobj.anchor(), |(k, _)| k);
        let what = format!(
            "tolerates none of the taints of the NodePools its nodeLabels select, and leaves taint `{}` of {} open",
            t.display(),
            pool_phrase(ix.nodepools[*p].name, several)
        );
        out.push(pool_finding(cx, f, key, *p, t, &what));
    }
}

fn pool_phrase(pool: &str, several: bool) -> String {
    if several {
        format!("NodePool `{pool}` (one of the pools its nodeLabels select)")
    } else {
        format!("NodePool `{pool}`")
    }
}

fn pool_finding(
    cx: &Ctx,
    f: &Flavor,
    node: Node<'_>,
    p: usize,
    t: &Taint,
    what: &str,
) -> Diagnostic {
    let ix = cx.ix;
    let fobj = &ix.objects[f.obj];
    let pool = &ix.nodepools[p];
    cx.on(
        fobj,
        node,
        format!(
            "ResourceFlavor `{}` {what}: Kueue adds the flavor's tolerations to the pods it admits, and they stay Pending unless they tolerate the taint themselves",
            f.name
        ),
    )
    .related(
        Loc {
            file: pool.file,
            span: t.node.span(),
        },
        format!("NodePool `{}` taint `{}`", pool.name, t.display()),
    )
    .help(format!(
        "tolerate the taint as the pool writes it:\n{}",
        toleration_yaml(t)
    ))
}
