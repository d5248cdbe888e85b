use super::*;
use crate::config::Settings;
use crate::source::SourceFile;

fn report_of(yaml: &str) -> Report {
    let files = vec![SourceFile::from_text("t.yaml".into(), yaml.into())];
    let settings = Settings::default();
    let ix = Index::build(&files, &settings);
    report(&ix, &settings.cost)
}

fn pool(name: &str, types: &str, limits: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      requirements:\n        - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}\n{limits}"
    )
}

#[test]
fn gpu_limit_on_p4d() {
    // p4d.24xlarge: 8 A100s at $21.957642/h; 16 GPUs → 2 nodes.
    let r = report_of(&pool(
        "train",
        "p4d.24xlarge",
        "  limits:\n    nvidia.com/gpu: 16\n",
    ));
    let w = r.nodepools[0].worst.clone().expect("bounded");
    assert_eq!((w.instance_type.as_str(), w.nodes), ("p4d.24xlarge", 2));
    assert!((w.on_demand - 2.0 * 21.957642).abs() < 1e-9);
    assert!((w.spot - 2.0 * 21.957642 * 0.35).abs() < 1e-9);
    assert_eq!(r.nodepools[0].best, Some(w));
    assert!((r.total.on_demand - 43.915284).abs() < 1e-9);
}

#[test]
fn memory_limit_picks_worst_and_best() {
    // 2Ti = 2048 GiB: g5.48xlarge (768 GiB, $16.288) → 2 nodes; g5.xlarge (16 GiB, $1.006)
    // → 128 nodes = $128.768; the GPU limit (64) caps g5.xlarge at 64 nodes = $64.384.
    let r = report_of(&pool(
        "inf",
        "g5.xlarge, g5.48xlarge",
        "  limits:\n    memory: 2Ti\n    nvidia.com/gpu: \"64\"\n",
    ));
    let p = &r.nodepools[0];
    let w = p.worst.as_ref().expect("bounded");
    let b = p.best.as_ref().expect("bounded");
    assert_eq!((w.instance_type.as_str(), w.nodes), ("g5.xlarge", 64));
    assert!((w.on_demand - 64.0 * 1.006).abs() < 1e-9);
    assert_eq!((b.instance_type.as_str(), b.nodes), ("g5.48xlarge", 2));
    assert!((b.on_demand - 2.0 * 16.288).abs() < 1e-9);
}

#[test]
fn cpu_only_limit_still_bounds() {
    // g6.xlarge has 4 vCPUs: cpu 2k → 500 nodes.
    let r = report_of(&pool("cpu", "g6.xlarge", "  limits:\n    cpu: 2k\n"));
    let w = r.nodepools[0].worst.as_ref().expect("bounded");
    assert_eq!(w.nodes, 500);
}

#[test]
fn open_pool_prices_every_allowed_catalog_instance() {
    // No bounded set of types: every catalog `g` instance with 8 GPUs, 2 nodes each.
    let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: open}\nspec:\n  template:\n    spec:\n      requirements:\n        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [g]}\n        - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"8\"]}\n  limits:\n    nvidia.com/gpu: 16\n";
    let r = report_of(yaml);
    let p = &r.nodepools[0];
    assert!(p.open_instance_set);
    let dearest = catalog::instances()
        .iter()
        .filter(|i| i.category == "g" && i.gpu_count == 8)
        .filter_map(|i| i.price_usd_hour)
        .fold(0.0, f64::max);
    let w = p.worst.as_ref().expect("bounded");
    assert_eq!(w.nodes, 2);
    assert!((w.on_demand - 2.0 * dearest).abs() < 1e-9);
}

#[test]
fn no_limits_is_unbounded() {
    let r = report_of(&pool("open", "p5.48xlarge", ""));
    let p = &r.nodepools[0];
    assert_eq!(p.unbounded.as_deref(), Some("no `spec.limits`"));
    assert!(p.worst.is_none());
    assert_eq!(r.total.unbounded_pools, vec!["open".to_string()]);
    assert_eq!(r.total.on_demand, 0.0);
}

#[test]
fn price_overrides_by_type_then_family() {
    let mut cs = CostSettings::default();
    cs.prices.insert("g6".into(), 0.9);
    cs.prices.insert("g6.xlarge".into(), 0.5);
    let find = |t: &str| {
        catalog::instances()
            .iter()
            .find(|i| i.instance_type == t)
            .expect("in the catalog")
    };
    assert_eq!(cs.price(find("g6.xlarge")), Some(0.5));
    assert_eq!(cs.price(find("g6.2xlarge")), Some(0.9));
    assert_eq!(cs.price(find("g5.xlarge")), catalog_price("g5.xlarge"));
}

#[test]
fn queue_quota_and_shared_team() {
    let yaml = format!(
        "{}---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {{name: a100}}\nspec:\n  nodeLabels: {{karpenter.sh/nodepool: train}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: research}}\nspec:\n  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n      flavors:\n        - name: a100\n          resources:\n            - {{name: nvidia.com/gpu, nominalQuota: 8}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: q, namespace: ml}}\nspec: {{clusterQueue: research}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {{name: q, namespace: vision}}\nspec: {{clusterQueue: research}}\n",
        pool(
            "train",
            "p4d.24xlarge",
            "  limits:\n    nvidia.com/gpu: 16\n"
        )
    );
    let r = report_of(&yaml);
    let q = &r.cluster_queues[0];
    assert_eq!(q.flavors[0].pools, vec!["train".to_string()]);
    // 8 GPUs × $21.957642 / 8 per GPU-hour.
    assert!((q.worst - 21.957642).abs() < 1e-9);
    assert_eq!(r.teams.len(), 2);
    assert!(r.teams.iter().all(|t| t.queues[0].shared));
}
