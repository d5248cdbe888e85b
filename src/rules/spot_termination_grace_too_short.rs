use super::{Ctx, template_anchor};
use crate::diag::Diagnostic;
use crate::yaml::Node;

/// EC2 gives two minutes' notice before it reclaims a spot instance.
const SPOT_NOTICE_SECONDS: u64 = 120;

declare_rule! {
    /// ## What it does
    /// Flags a GPU training pod template that can land on spot capacity (some NodePool it lands
    /// on allows `spot` and its own selector or Kueue flavor does not rule it out) whose
    /// `terminationGracePeriodSeconds` is over 120 seconds, or under a minimum (default 30 s,
    /// the Kubernetes default; `spot: {min-termination-grace: N}` in the config changes it). A
    /// template without the field gets Kubernetes' 30 s.
    ///
    /// ## Why is this bad?
    /// EC2 reclaims a spot instance two minutes after its interruption notice; Karpenter drains
    /// the node when the notice arrives. A grace period longer than the notice is a promise the
    /// instance cannot keep: the pod is killed mid-checkpoint when the instance goes away, and
    /// the half-written checkpoint may be the one the job resumes from. A grace period too
    /// short leaves no time to save at all.
    ///
    /// ## Example
    /// ```yaml
    /// spec:
    ///   template:
    ///     spec:
    ///       terminationGracePeriodSeconds: 600   # the instance is gone after 120 s
    ///       nodeSelector:
    ///         karpenter.sh/capacity-type: spot
    /// ```
    ///
    /// ## Fix
    /// Save within the notice: catch SIGTERM, write a checkpoint (or flush the last one) in well
    /// under two minutes, and set the grace period to fit, e.g.
    /// `terminationGracePeriodSeconds: 110`. Runs whose checkpoint takes longer belong on
    /// on-demand capacity.
    name: "spot-termination-grace-too-short",
    category: "disruption",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a GPU training pod that can land on spot whose termination grace does not fit the 2-minute notice",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let min = ix.settings.spot_min_grace_seconds;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() || !ix.classes.get(ti).is_some_and(|c| c.is_training()) {
            continue;
        }
        let field = t.spec.get("terminationGracePeriodSeconds");
        let secs = match field.and_then(Node::as_str) {
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) => n,
                // A placeholder or an invalid value: nothing to judge.
                Err(_) => continue,
            },
            None => 30,
        };
        if (min..=SPOT_NOTICE_SECONDS).contains(&secs) {
            continue;
        }
        let cap = crate::index::landing_capacity(ix, ti);
        let Some(&spot_pool) = cap
            .pools
            .iter()
            .find(|&&p| cap.types_on(ix, p).contains(&"spot"))
        else {
            continue;
        };
        let owner = ix.owner(t);
        let pool = &ix.nodepools[spot_pool];
        let (problem, help) = if secs > SPOT_NOTICE_SECONDS {
            (
                format!(
                    "`terminationGracePeriodSeconds: {secs}` is longer than the 120 s spot notice: the instance is reclaimed while the pod still saves its state, so a checkpoint may be cut half-written"
                ),
                "save within the notice and set `terminationGracePeriodSeconds` to at most 120 (e.g. 110), or keep this workload off spot capacity".to_string(),
            )
        } else {
            let written = if field.is_some() {
                format!("`terminationGracePeriodSeconds: {secs}`")
            } else {
                format!("the default grace period of {secs} s")
            };
            (
                format!(
                    "{written} is under the minimum of {min} s (`spot.min-termination-grace`): on a spot interruption the pod has no time to save a checkpoint"
                ),
                format!(
                    "set `terminationGracePeriodSeconds` between {min} and 120 under `{}.spec`",
                    t.path
                ),
            )
        };
        let at = field
            .or_else(|| template_anchor(owner, t))
            .unwrap_or(owner.anchor());
        let mut d = cx
            .on(
                owner,
                at,
                format!(
                    "training pods of `{}` can land on spot capacity (NodePool `{}`); {problem} ({})",
                    t.path, pool.name, ix.classes[ti].evidence
                ),
            )
            .help(help);
        if let Some(r) = pool
            .requirements
            .iter()
            .find(|r| r.key == crate::index::CAPACITY_TYPE)
        {
            d = d.related(
                pool.loc(r.node),
                format!("NodePool `{}` allows spot here", pool.name),
            );
        }
        out.push(d);
    }
}
