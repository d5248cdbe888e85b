use super::Ctx;
use crate::cost;
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Compares each GPU NodePool's worst-case hourly cost at its `spec.limits` with the budget in
    /// the config (`cost: {budget: {nodepools: {<pool>: <$/h>}, total: <$/h>}}`) and flags a pool
    /// over its own budget, and the most expensive pool when the pools together exceed the total.
    /// The worst case is the most expensive instance type the pool allows, launched as many times
    /// as the limits let it (min over limited resources of limit ÷ per-node amount), at the
    /// catalog's on-demand price (spot for a spot-only pool, with `cost.spot-discount`); a pool
    /// with no limits that bound its nodes is over any budget. Against the total, the pools one
    /// Kueue flavor alone selects (a spot pool and its on-demand fallback) count once, within the
    /// GPUs its ClusterQueues' quotas add up to. `cost.prices` overrides prices per instance type
    /// or family. Silent without a configured budget. `gpuops cost` prints the figures.
    ///
    /// ## Why is this bad?
    /// `spec.limits` is what caps the bill when a burst of pending pods or a runaway job makes
    /// Karpenter scale out. Limits written in GPUs or gibibytes hide what they allow in dollars: a
    /// limit of 64 GPUs on a pool that may launch p5.48xlarge is over $500 an hour.
    ///
    /// ## Example
    /// ```yaml
    /// # .gpuops.yaml: cost: {budget: {nodepools: {gpu-training: 100}}}
    /// apiVersion: karpenter.sh/v1
    /// kind: NodePool
    /// metadata:
    ///   name: gpu-training
    /// spec:
    ///   template:
    ///     spec:
    ///       requirements:
    ///         - key: node.kubernetes.io/instance-type
    ///           operator: In
    ///           values: [p5.48xlarge]
    ///   limits:
    ///     nvidia.com/gpu: 64   # 8 nodes, worst case far over $100/h
    /// ```
    ///
    /// ## Fix
    /// Lower the pool's limits (or narrow its instance types) until the worst case fits, or raise
    /// the budget if the spend is intended.
    name: "nodepool-cost-exceeds-budget",
    category: "cost",
    kinds: &["NodePool"],
    severity: Error,
    summary: "a NodePool's worst-case $/h at its limits exceeds the configured budget",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let cs = &ix.settings.cost;
    if cs.budget_total.is_none() && cs.budget_pools.is_empty() {
        return;
    }
    // (pool index, its figure), GPU pools only; a flavor's quota caps its pools together.
    let costs = cost::pool_costs(ix, cs);
    let at_limits = |i: usize| {
        let pool = &ix.nodepools[i];
        let node = pool.spec.entry("limits").map_or(pool.anchor, |(k, _)| k);
        (&ix.objects[pool.obj], node)
    };
    let figure = |c: &cost::PoolCost| match (&c.worst, c.worst_usd()) {
        (Some(w), Some(usd)) => format!(
            "costs at worst ${usd:.2}/h at its limits ({} × {}{})",
            w.nodes,
            w.instance_type,
            if c.spot_only { " at spot" } else { "" }
        ),
        _ => format!(
            "has no bounded worst case ({})",
            c.unbounded.as_deref().unwrap_or("no figure")
        ),
    };
    for (i, c) in &costs {
        let Some(budget) = cs.budget_pools.get(&c.name) else {
            continue;
        };
        if c.worst_usd().is_some_and(|w| w <= *budget) {
            continue;
        }
        let (obj, node) = at_limits(*i);
        out.push(
            cx.on(
                obj,
                node,
                format!(
                    "NodePool `{}` {}, over its budget of ${budget:.2}/h",
                    c.name,
                    figure(c)
                ),
            )
            .help("lower `spec.limits` or narrow the instance types until the worst case fits, or raise `cost.budget.nodepools` in the config"),
        );
    }
    let Some(total_budget) = cs.budget_total else {
        return;
    };
    let pools: Vec<cost::PoolCost> = costs.iter().map(|(_, c)| c.clone()).collect();
    let total = cost::total(&pools);
    // What the pools pay at worst: spot-only ones at spot, a flavor's pools within its quota.
    let spend = total.worst;
    let over = !total.unbounded_pools.is_empty() || spend > total_budget;
    // The finding goes to the pool that weighs most: an unbounded one, else the dearest.
    let culprit = costs.iter().max_by(|(_, a), (_, b)| {
        let w = |c: &cost::PoolCost| c.counted.unwrap_or(f64::INFINITY);
        w(a).total_cmp(&w(b))
    });
    if let (true, Some((i, c))) = (over, culprit) {
        let sum = if total.unbounded_pools.is_empty() {
            format!("cost at worst ${spend:.2}/h at their limits")
        } else {
            format!(
                "have no bounded worst case ({} without a bounding limit)",
                crate::diag::backticked(&total.unbounded_pools, ", ")
            )
        };
        let (obj, node) = at_limits(*i);
        out.push(
            cx.on(
                obj,
                node,
                format!(
                    "the NodePools together {sum}, over the total budget of ${total_budget:.2}/h; NodePool `{}` weighs most: it {}",
                    c.name,
                    figure(c)
                ),
            )
            .help("lower the pools' `spec.limits`, or raise `cost.budget.total` in the config"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Settings;
    use crate::source::SourceFile;

    fn lint(text: &str, cost: crate::cost::CostSettings) -> Vec<String> {
        let files = vec![SourceFile::from_text("t.yaml".into(), text.into())];
        let settings = Settings {
            only: Some(vec![super::RULE.name.to_string()]),
            cost,
            ..Settings::default()
        };
        crate::lint(&files, &settings)
            .diagnostics
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: node.kubernetes.io/instance-type, operator: In, values: [p4d.24xlarge]}\n  limits:\n    nvidia.com/gpu: 16\n";

    #[test]
    fn total_budget_on_bounded_pools() {
        // 2 × p4d.24xlarge at $21.957642/h = $43.92/h.
        let mut cs = crate::cost::CostSettings {
            budget_total: Some(40.0),
            ..Default::default()
        };
        let found = lint(POOL, cs.clone());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("$43.92/h"), "{found:?}");
        cs.budget_total = Some(50.0);
        assert!(lint(POOL, cs).is_empty());
    }

    #[test]
    fn silent_without_budget() {
        assert!(lint(POOL, crate::cost::CostSettings::default()).is_empty());
    }
}
