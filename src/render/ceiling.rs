//! The cost ceiling of rendered output: `gpuops cost`'s NodePool total (a class's pools within
//! its GPU maximum, spot-only capacity at spot), computed on the rendered
//! objects themselves (what `gpuops cost deploy/` would say after the write), in one line.

use crate::config::Settings;
use crate::cost::{self, Total};
use crate::index::Index;
use crate::source::SourceFile;

/// The worst case of the rendered NodePools at their limits (each class's pools together at its
/// Kueue quota), at catalog prices and the default spot discount.
pub fn total(sources: &[SourceFile]) -> Total {
    let settings = Settings::default();
    let ix = Index::build(sources, &settings);
    cost::total(&cost::pools(&ix, &settings.cost))
}

/// `cost ceiling: … $/h on-demand, … $/h spot …`: the line `gpuops render` prints on stderr.
pub fn line(total: &Total) -> String {
    let discount = Settings::default().cost.spot_discount;
    let mut out = format!(
        "cost ceiling: {:.2} $/h ({:.2} $/h on-demand, {:.2} $/h spot-only), with every class at its GPU maximum (catalog prices, spot discount {:.0}%; `gpuops cost` on the output has the breakdown)",
        total.worst,
        total.on_demand,
        total.spot,
        discount * 100.0
    );
    if !total.unbounded_pools.is_empty() {
        out.push_str(&format!(
            "; not counted (unbounded): {}",
            total.unbounded_pools.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One on-demand class of 8 L40S GPUs (g6e). Its dearest fill is 8 × g6e.16xlarge (one GPU
    /// each, 7.57719 $/h): 60.61752 $/h on demand, and nothing spot-only.
    #[test]
    fn the_ceiling_is_cost_s_total_of_the_rendered_pools() {
        let text = "apiVersion: gpuops.dev/v1alpha1\nkind: Platform\ncluster:\n  name: c\n  region: us-east-1\n  zones: [us-east-1a]\n  nodeRole: r\n  amiAlias: al2023@v20250715\nclasses:\n  - name: gpu\n    type: training\n    gpus: [l40s]\n    capacity: on-demand\n    maxGpus: 8\n";
        let p = crate::render::parse_profile("p.yaml", text).unwrap();
        let files = crate::render::Renderer::new(None)
            .unwrap()
            .render(&p, "p.yaml")
            .unwrap();
        let (sources, findings) = crate::render::self_check(&files, "");
        assert!(findings.is_empty());
        let t = total(&sources);
        assert!((t.on_demand - 60.61752).abs() < 1e-6, "{}", t.on_demand);
        assert_eq!(t.spot, 0.0);
        assert_eq!(t.worst, t.on_demand);
        assert!(t.unbounded_pools.is_empty());
        let l = line(&t);
        assert!(
            l.starts_with("cost ceiling: 60.62 $/h (60.62 $/h on-demand, 0.00 $/h spot-only),"),
            "{l}"
        );
        assert!(!l.contains('\n'));
    }
}
