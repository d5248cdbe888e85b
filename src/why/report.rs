//! What `gpuops why` reports, for the human text and `--format json`.

use serde::Serialize;

/// Why the target could not be explained.
#[derive(Debug)]
pub struct NotFound {
    pub message: String,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub objects: Vec<ObjectReport>,
}

#[derive(Debug, Serialize)]
pub struct ObjectReport {
    pub object: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub location: String,
    pub templates: Vec<TemplateReport>,
}

#[derive(Debug, Serialize)]
pub struct TemplateReport {
    pub path: String,
    pub location: String,
    pub gpus_per_pod: u64,
    /// A DRA claim asks for every matching device (or alternatives of different counts): the pod
    /// gets at least `gpus_per_pod` GPUs, how many more depends on the node.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub gpus_at_least: bool,
    pub verdict: Verdict,
    pub pools: Vec<PoolRow>,
    /// Passing pools beyond those listed.
    pub more_pools: usize,
    pub route: Option<Route>,
    pub instances: Vec<InstanceRow>,
    /// What its shared, MIG and DRA GPU requests are on the pools it lands on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sharing: Vec<SharingRow>,
}

/// One shared or MIG request on one pool (or one DRA claim): what a unit of it is there.
#[derive(Debug, Serialize)]
pub struct SharingRow {
    /// The resource asked (`nvidia.com/mig-1g.10gb`), or the claim (`ResourceClaimTemplate x`).
    pub request: String,
    pub pool: Option<String>,
    /// `a `1g.10gb` MIG instance on A100 80GB; layout `all-1g.10gb`; 7 per GPU`.
    pub what: String,
    /// Where the layout, configuration or device class is written.
    pub location: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Verdict {
    pub lands: bool,
    pub summary: String,
}

#[derive(Debug, Serialize)]
pub struct PoolRow {
    pub name: String,
    pub location: String,
    pub fits: bool,
    /// The Kueue flavor under which it fits (or was checked).
    pub flavor: Option<String>,
    pub capacity_types: Vec<String>,
    /// The most GPUs one node of the pool may have (`None`: no GPU instance).
    pub max_gpus_per_node: Option<u64>,
    pub checks: Vec<Check>,
}

/// One check of a pool: `labels`, `taints` or `gpus`.
#[derive(Debug, Serialize)]
pub struct Check {
    pub check: &'static str,
    pub ok: bool,
    pub detail: String,
    /// The pod's side of a failing check.
    pub pod: Option<String>,
    /// The flavor's side of a failing check: a label Kueue adds to the pod's nodeSelector.
    pub flavor: Option<String>,
    /// The pool's side of a failing check.
    pub pool: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Route {
    /// The `kueue.x-k8s.io/queue-name` value (`default` when Kueue defaults it).
    pub queue: String,
    pub queue_label: Option<String>,
    /// `namespace/name` of the LocalQueue the label resolves to.
    pub local_queue_name: String,
    pub local_queue: Option<String>,
    pub cluster_queue_name: Option<String>,
    pub cluster_queue: Option<String>,
    pub flavors: Vec<FlavorRow>,
    /// What blocks admission, if anything.
    pub blocked: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct FlavorRow {
    pub name: String,
    pub location: Option<String>,
    pub assignable: bool,
    pub reason: Option<String>,
    pub pod: Option<String>,
    pub flavor: Option<String>,
    /// The ClusterQueue's quota on this flavor for each GPU resource, against the workload's
    /// total request.
    pub quota: Vec<QuotaRow>,
}

/// One GPU resource of a flavor: the quota arithmetic Kueue admits by.
#[derive(Debug, Serialize)]
pub struct QuotaRow {
    pub resource: String,
    /// `nominalQuota` as written.
    pub nominal: Option<String>,
    /// `borrowingLimit` as written (only counts in a cohort).
    pub borrowing_limit: Option<String>,
    /// The cohort the ClusterQueue borrows from.
    pub cohort: Option<String>,
    /// The most the ClusterQueue may ever admit on this flavor (`None`: unknown or unbounded).
    pub max: Option<String>,
    /// What the whole workload asks for at once (every pod set), when it can be counted.
    pub request: Option<u64>,
    /// `nominal 16 + borrowing limit 8 (cohort `gpu`)`.
    pub summary: String,
    pub location: String,
}

#[derive(Debug, Serialize)]
pub struct InstanceRow {
    pub instance_type: String,
    pub gpus: u32,
    pub gpu_name: String,
    pub price_usd_hour: Option<f64>,
    pub pools: Vec<String>,
}
