use super::Ctx;
use super::support::shared_gpu::shared;
use crate::diag::Diagnostic;
use crate::model::is_gpu_resource;

declare_rule! {
    /// ## What it does
    /// Flags a training pod template whose GPUs are shared with other pods by the NVIDIA device
    /// plugin's time-slicing or MPS: it asks for a resource the plugin advertises in replicas
    /// (`sharing.timeSlicing` or `sharing.mps` with `replicas` above 1) on the nodes of every
    /// NodePool it can land on, read from the device plugin configuration those nodes get (their
    /// `nvidia.com/device-plugin.config` label, else the configured default), or a resource whose
    /// name says it is shared (`nvidia.com/gpu.shared`, what `renameByDefault: true` advertises).
    ///
    /// Training is decided from evidence as for `training-do-not-disrupt-missing`; each finding
    /// says which. MIG instances are isolated and never flagged.
    ///
    /// ## Why is this bad?
    /// Time-slicing gives every pod on a GPU the whole GPU in turns: no memory limit and no fault
    /// isolation, so another pod's allocation can make the training step run out of memory, one
    /// crash can take every pod on the GPU down, and the step time depends on the neighbours.
    /// MPS splits memory and compute evenly, so a training run gets a fraction of the GPU it was
    /// sized for. Either way hours of training are slower and less reliable than on the whole
    /// GPU the pod appears to have.
    ///
    /// ## Example
    /// ```yaml
    /// # device plugin configuration `any`: timeSlicing, nvidia.com/gpu, replicas: 4
    /// apiVersion: batch/v1
    /// kind: Job
    /// spec:
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: train
    ///           command: [torchrun, --nproc_per_node=1, train.py]
    ///           resources:
    ///             limits:
    ///               nvidia.com/gpu: 1    # a quarter of a turn on a shared GPU
    /// ```
    ///
    /// ## Fix
    /// Run training on a pool whose nodes get a configuration without sharing (label the shared
    /// pool and keep training off it), or on MIG instances when a slice of a GPU is enough. Keep
    /// time-slicing for notebooks, development and light inference.
    name: "shared-gpu-for-training",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a training pod on time-sliced or MPS-shared GPUs",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let Some(intent) = ix.classes.get(ti).filter(|i| i.is_training()) else {
            continue;
        };
        let found = t
            .gpu_containers()
            .flat_map(|c| c.accelerators())
            .filter(|(n, _)| is_gpu_resource(n))
            .find_map(|(n, at)| Some((n, at, shared(ix, ti, n)?)));
        let Some((resource, at, how)) = found else {
            continue;
        };
        let owner = ix.owner(t);
        let mut d = cx
            .on(
                owner,
                at,
                format!(
                    "{} is training ({}), but its `{resource}` GPUs are {}: the pods on a GPU share its memory and compute without isolation, so the run is slower than sized and another pod's crash or allocation can kill it",
                    super::describe_template(owner, t),
                    intent.evidence,
                    how.describe(),
                ),
            )
            .help("run training on a pool whose nodes get a device plugin configuration without sharing, or on MIG instances when a slice of a GPU is enough");
        if let Some((loc, source)) = &how.config {
            d = d.related(
                cx.within_loc(*loc, "replicas", None),
                format!("the GPUs are shared here ({source})"),
            );
        }
        if let Some(loc) = cx.evidence_loc(t, intent) {
            d = d.related(loc, "classified as training from this");
        }
        out.push(d);
    }
}
