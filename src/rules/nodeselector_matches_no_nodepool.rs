use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::index::FlavorReject;
use crate::index::Index;
use crate::model::PodTemplate;
use crate::sched::{self, GpuCapability, LabelIssue, PodConstraints, Req};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a GPU pod template whose `nodeSelector` / required node affinity no NodePool in the
    /// repository can satisfy: it selects a label no GPU-capable NodePool puts on its nodes
    /// (`node-role: gpu` where the pools label `role: gpu`), a value the pools do not allow, a
    /// `karpenter.sh/nodepool` that does not exist, an instance label (GPU name, family) none of the
    /// pool's instance types has (also when the pool leaves its types open but its instance
    /// requirements rule out every instance type the pod pins), or more GPUs per pod than the
    /// largest instance the pool may launch (`nvidia.com/gpu`, and the whole GPUs its DRA claims
    /// of `gpu.nvidia.com` ask for; a claim of every matching device adds none; not where a device
    /// plugin configuration in the files time-slices or MPS-shares `nvidia.com/gpu`, which a node
    /// then advertises more of than it has GPUs). EKS Auto Mode
    /// pools count with their own labels (`eks.amazonaws.com/compute-type: auto`,
    /// `eks.amazonaws.com/instance-*`).
    /// It also flags a template that fits a NodePool on its own but not after Kueue adds the
    /// `nodeLabels` of every ResourceFlavor its ClusterQueue may admit it to (or whose own selectors
    /// rule out every such flavor). NodePools that cannot launch GPU instances are ignored; the rule
    /// is silent when the repository has no GPU-capable NodePool, and for a template placed on
    /// other capacity: a `nodeName`, or a selector on a node group's own label (EKS, eksctl, GKE,
    /// AKS, Fargate) or on a label whose value names the cluster autoscaler
    /// (`provisioner: cluster-autoscaler`), or queued to a ClusterQueue whose AdmissionCheck places
    /// it elsewhere: MultiKueue (`kueue.x-k8s.io/multikueue`: a worker cluster runs it) or a
    /// ProvisioningRequest (`kueue.x-k8s.io/provisioning-request`: the cluster autoscaler creates
    /// its nodes from node groups, which Karpenter does not serve). Nor a selector a shell script,
    /// Makefile or Markdown page of the repository puts on nodes by hand (`kubectl label node …
    /// key=value`, also through a variable of the same file): such nodes exist outside every
    /// NodePool. Nothing is reported where a NodePool's name is still to be filled in (a
    /// Terraform `for_each` over pools the module's users supply): it stands for pools whose
    /// labels the files do not say. Nor a `karpenter.sh/nodepool` no file defines where other
    /// workloads also select pools the files lack (a pod without GPUs does, or two names are
    /// missing): the repository then holds only some of the cluster's pools. Several selectors
    /// that the closest pool lacks make one finding, on the first, with the others marked.
    ///
    /// ## Why is this bad?
    /// Karpenter only launches a node for a pod whose constraints intersect a NodePool's labels and
    /// requirements; a custom label no pool defines is rejected with "label … does not have known
    /// values". The pods stay `Pending` forever, the training job never starts, and nothing fails
    /// loudly — the only trace is a scheduling event.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu`: spec.template.metadata.labels: {role: gpu}
    /// apiVersion: batch/v1
    /// kind: Job
    /// spec:
    ///   template:
    ///     spec:
    ///       nodeSelector:
    ///         node-role: gpu      # no NodePool sets `node-role`
    ///       containers:
    ///         - name: train
    ///           resources:
    ///             limits: {nvidia.com/gpu: 8}
    /// ```
    ///
    /// ## Fix
    /// Select a label the NodePool really sets (`role: gpu`, or `karpenter.sh/nodepool: gpu`), or
    /// add the label to the NodePool's `spec.template.metadata.labels`; for GPU counts, allow a
    /// large enough instance type or spread the GPUs over more pods.
    name: "nodeselector-matches-no-nodepool",
    category: "scheduling",
    kinds: &["pod templates"],
    severity: Error,
    summary: "a GPU pod template's nodeSelector or node affinity matches no NodePool",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    // Pools derived from Terraform or chart values alone may be only some of the cluster's.
    if !ix
        .pools
        .capability
        .iter()
        .enumerate()
        .any(|(p, c)| *c != GpuCapability::None && !ix.nodepools[p].is_derived())
    {
        return;
    }
    // A NodePool whose name is still to be filled in (a Terraform `for_each` over pools only
    // Terraform knows) stands for pools whose labels and instance types the files do not say:
    // a pod the known pools do not fit may fit one of those.
    if ix.has_slot("NodePool") {
        return;
    }
    for (ti, t) in cx.templates() {
        let owner = ix.owner(t);
        // DaemonSet pods are not provisioned for: they land on nodes that already exist.
        // Pods an admission check places elsewhere (MultiKueue, a ProvisioningRequest) never
        // land on these pools either.
        if !t.requests_gpu()
            || sched::targets_other_capacity(t)
            || owner.kind == "DaemonSet"
            || ix.elsewhere[ti].is_some()
        {
            continue;
        }
        let fits = ix.own_placement[ti].is_some_and(|p| ix.placements[p].gpu_pools() > 0);
        if !fits {
            let own = t.constraints();
            if let Some((p, mut issues)) = closest(ix, own) {
                // Where the device plugin shares whole GPUs under their own name, a node
                // advertises more `nvidia.com/gpu` than it has GPUs: the count says nothing sure.
                if ix.gpu_setup().shares_whole_gpus() {
                    issues.retain(|i| i.key != "nvidia.com/gpu");
                    if issues.is_empty() {
                        continue;
                    }
                }
                // A file that could not be read may hold the pool that sets what is selected;
                // nodes a script labels by hand exist outside every pool; a pool no file
                // defines may be one of those other workloads show to be kept elsewhere.
                if issues.iter().any(|i| {
                    unread_file_may_set(ix, own, i)
                        || labelled_by_hand(ix, own, i)
                        || (names_no_pool(ix, own, i) && ix.pools_kept_elsewhere())
                }) {
                    continue;
                }
                // One finding per template: its first selector no pool satisfies, the others
                // marked.
                if let Some((first, rest)) = issues.split_first() {
                    let mut d = template_finding(cx, t, own, p, first);
                    for issue in rest {
                        let shown = req_at(own, issue.pod).map_or_else(
                            || format!("`{}`", issue.key),
                            |r| format!("`{}`", r.describe()),
                        );
                        d = d.related(
                            issue.pod,
                            format!(
                                "also {shown}: {}",
                                about(&issue.reason, ix.nodepools[p].name, false)
                            ),
                        );
                    }
                    out.push(d);
                }
                continue;
            }
        }
        kueue_check(cx, ti, t, out);
    }
}

/// Whether the issue is a `karpenter.sh/nodepool` selector naming no NodePool of the files.
fn names_no_pool(ix: &Index, pod: &PodConstraints, issue: &LabelIssue) -> bool {
    issue.key == "karpenter.sh/nodepool"
        && req_at(pod, issue.pod)
            .is_some_and(|r| r.op == "In" && r.values.iter().all(|v| ix.nodepool(v).is_none()))
}

/// Whether a file that could not be read names what the issue says no pool sets: the selected
/// key and value (a NodePool and its name for `karpenter.sh/nodepool`).
fn unread_file_may_set(ix: &Index, pod: &PodConstraints, issue: &LabelIssue) -> bool {
    if issue.key == "nvidia.com/gpu" {
        return false;
    }
    let value = req_at(pod, issue.pod)
        .filter(|r| r.op == "In")
        .and_then(|r| r.values.first().copied());
    match value {
        Some(v) if issue.key == "karpenter.sh/nodepool" => ix.unread_file_names(&["NodePool", v]),
        Some(v) => ix.unread_file_names(&[&issue.key, v]),
        None => ix.unread_file_names(&[&issue.key]),
    }
}

/// Whether a script or page labels nodes with the selected key and value by hand.
fn labelled_by_hand(ix: &Index, pod: &PodConstraints, issue: &LabelIssue) -> bool {
    req_at(pod, issue.pod)
        .filter(|r| r.op == "In")
        .is_some_and(|r| r.values.iter().any(|v| ix.labelled_by_hand(&issue.key, v)))
}

/// The GPU pool with the fewest label issues (an explicit GPU pool wins a tie); `None` when
/// some pool fits.
fn closest(ix: &Index, pod: &PodConstraints) -> Option<(usize, Vec<LabelIssue>)> {
    ix.pools.closest(
        pod,
        &ix.nodepools,
        |p| ix.pools.capability[p] != GpuCapability::None,
        true,
    )
}

fn several_gpu_pools(ix: &Index) -> bool {
    ix.pools
        .capability
        .iter()
        .filter(|c| **c != GpuCapability::None)
        .nth(1)
        .is_some()
}

/// `Job ml/train` for a single-template workload, else with the template path.
fn describe(ix: &Index, t: &PodTemplate) -> String {
    super::describe_template(ix.owner(t), t)
}

/// A sched reason about "the pool", said about the named pool.
fn about(reason: &str, pool: &str, closest: bool) -> String {
    let name = if closest {
        format!("NodePool `{pool}` (the closest)")
    } else {
        format!("NodePool `{pool}`")
    };
    reason
        .replacen("the pool's nodes", &format!("the nodes of {name}"), 1)
        .replacen("the pool's", &format!("{name}'s"), 1)
        .replacen("the pool", &name, 1)
}

/// The pod requirement an issue is about (by where it is written).
fn req_at<'c, 'a>(pod: &'c PodConstraints<'a>, loc: Loc) -> Option<&'c Req<'a>> {
    pod.base
        .iter()
        .chain(pod.terms.iter().flatten())
        .find(|r| r.loc == loc)
}

/// The `nvidia.com/gpu` count node of the first GPU container (limit, else request), else the
/// pod's `resourceClaims` entry of its first DRA claim of whole GPUs.
fn gpu_count_node<'a>(t: &PodTemplate<'a>) -> Option<Node<'a>> {
    t.containers
        .iter()
        .find_map(|c| {
            c.limits
                .and_then(|l| l.get("nvidia.com/gpu"))
                .or_else(|| c.requests.and_then(|r| r.get("nvidia.com/gpu")))
        })
        .or_else(|| whole_gpu_claim(t).map(|g| g.entry))
}

/// The first DRA claim of whole GPUs of a known count.
fn whole_gpu_claim<'t, 'a>(t: &'t PodTemplate<'a>) -> Option<&'t crate::model::dra::DraGpu<'a>> {
    t.dra_gpus()
        .iter()
        .find(|g| crate::model::dra::whole_gpu_class(g.class) && g.count.is_some())
}

fn template_finding<'a>(
    cx: &Ctx<'_, 'a>,
    t: &PodTemplate,
    pod: &PodConstraints,
    p: usize,
    issue: &LabelIssue,
) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let pool = &ix.nodepools[p];
    let what = describe(ix, t);
    let several = several_gpu_pools(ix);
    let mut related_loc = issue.pool.unwrap_or_else(|| pool.loc(pool.anchor));
    if issue.key == "nvidia.com/gpu" {
        let loc = gpu_count_node(t).map_or(issue.pod, |n| t.loc(n));
        let mut d = cx.at(
                loc,
                format!(
                    "{what} fits no GPU NodePool: {}; Karpenter launches no node for it and its pods stay Pending",
                    about(&issue.reason, pool.name, several)
                ),
            )
            .object(Some(owner.obj_ref()))
            .related(related_loc, format!("NodePool `{}` limits its instance types here", pool.name))
            .help(format!(
                "spread the GPUs over more pods (more replicas or workers), or allow an instance type with enough GPUs in NodePool `{}`",
                pool.name
            ));
        // GPUs that come from DRA claims are counted where the claim asks for them.
        if t.dra_whole_gpus() > 0
            && let Some(g) = whole_gpu_claim(t)
        {
            let claim = &ix.objects[g.source];
            d = d.related(
                claim.loc(g.class_node),
                format!(
                    "{} asks for {} `{}` device{} per claim",
                    claim.describe(),
                    g.count.unwrap_or(0),
                    g.class,
                    if g.count == Some(1) { "" } else { "s" }
                ),
            );
        }
        return d;
    }
    let req = req_at(pod, issue.pod);
    let shown = req.map_or_else(
        || format!("`{}`", issue.key),
        |r| format!("`{}`", r.describe()),
    );
    let value = req
        .filter(|r| r.op == "In")
        .and_then(|r| r.values.first().copied());
    let mut reason = about(&issue.reason, pool.name, several);
    let mut help = None;
    let mut related_msg = if issue.pool.is_some() && issue.key != "karpenter.sh/nodepool" {
        format!("NodePool `{}` constrains `{}` here", pool.name, issue.key)
    } else if several {
        format!("closest NodePool `{}`", pool.name)
    } else {
        format!("NodePool `{}`", pool.name)
    };
    if issue.key == "karpenter.sh/nodepool"
        && let Some(v) = value
    {
        let named = ix.nodepool(v).map(|p| &ix.nodepools[p]);
        // The named pool may launch GPUs, but something else of the pod's rules it out: say what.
        let own = named
            .filter(|np| sched::gpu_capability(np) != GpuCapability::None)
            .and_then(|np| sched::label_issues(pod, np).into_iter().next());
        let named_mismatch = own.is_some();
        match (named, own) {
            (Some(_), Some(first)) => {
                reason = about(&first.reason, v, false);
                if let Some(l) = first.pool {
                    related_loc = l;
                }
                related_msg = format!("NodePool `{v}` constrains `{}` here", first.key);
            }
            (Some(np), None) => {
                reason = format!("NodePool `{v}` cannot launch GPU instances");
                let excluding = np.requirements.iter().find(|r| {
                    r.key.starts_with("karpenter.k8s.aws/instance-")
                        || r.key == "node.kubernetes.io/instance-type"
                });
                related_loc = excluding.map_or_else(|| np.loc(np.anchor), |r| np.loc(r.node));
                related_msg = format!("NodePool `{v}` rules out GPU instances");
            }
            (None, _) => reason = format!("there is no NodePool `{v}`"),
        }
        let (gpu_names, near) = ix.near_gpu_pools();
        let near = near.closest(v);
        let exists = ix.nodepool(v).is_some();
        let others: Vec<&str> = gpu_names.iter().copied().filter(|n| *n != v).collect();
        help = Some(match near {
            Some((_, n, _)) if !exists => format!("did you mean `karpenter.sh/nodepool: {n}`?"),
            _ if named_mismatch && !others.is_empty() => format!(
                "select what NodePool `{v}` may launch, or another GPU NodePool: {}",
                crate::diag::backticked_few(&others, ", ")
            ),
            _ if named_mismatch => format!("select what NodePool `{v}` may launch"),
            _ => format!(
                "select a GPU NodePool: {}",
                crate::diag::backticked_few(gpu_names, ", ")
            ),
        });
    }
    // An open pool whose instance requirements rule out every instance the pod pins.
    if issue.reason.starts_with("the pool admits no instance type") {
        related_msg = format!(
            "NodePool `{}` rules those instance types out here",
            pool.name
        );
        help.get_or_insert_with(|| {
            format!(
                "select instances NodePool `{}` may launch, or allow {shown} in a GPU NodePool",
                pool.name
            )
        });
    }
    if issue.reason.starts_with("none of the instance types") {
        related_msg = format!("NodePool `{}` limits its instance types here", pool.name);
        let mut offered: Vec<String> = sched::bounded_instances(pool)
            .unwrap_or_default()
            .iter()
            .filter_map(|i| i.label(&issue.key))
            .collect();
        offered.sort();
        offered.dedup();
        if !offered.is_empty() {
            help = Some(format!(
                "NodePool `{}` only launches instances whose `{}` is {}; select one of those, or allow instances with {shown} in a GPU NodePool",
                pool.name,
                issue.key,
                crate::diag::backticked(&offered, " or ")
            ));
        }
    }
    if help.is_none() {
        help = Some(match sched::label_hint(pool, &issue.key, value, &shown) {
            Some(hint) => hint,
            None => format!(
                "select a label NodePool `{}` sets (its `spec.template.metadata.labels`, its requirements, or `karpenter.sh/nodepool: {}`), or add the label to the pool",
                pool.name, pool.name
            ),
        });
    }
    let mut d = cx
        .at(
            issue.pod,
            format!(
                "{what} requires {shown}, which no {} NodePool can satisfy: {reason}; Karpenter launches no node for it and its pods stay Pending",
                t.accelerator_name()
            ),
        )
        .object(Some(owner.obj_ref()))
        .related(related_loc, related_msg);
    if let Some(h) = help {
        d = d.help(h);
    }
    d
}

/// The template fits a pool on its own: does it still after Kueue injects its flavor's labels?
fn kueue_check(cx: &Ctx, ti: usize, t: &PodTemplate, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    if !ix.variants[ti].iter().any(|v| v.flavor.is_some()) {
        return;
    }
    let Some(q) = ix.queues[ti] else { return };
    let owner = ix.owner(t);
    let what = describe(ix, t);
    let at = q
        .label
        .map_or_else(|| owner.loc(owner.anchor()), |n| owner.loc(n));
    let cq_name = q
        .cluster_queue
        .and_then(|c| ix.cluster_queues.get(c))
        .map_or("?", |c| c.name);
    let assignable = crate::index::assignable_variants(ix, ti);
    if assignable.is_empty() {
        // Kueue rules out every flavor; report it when the template's own selectors are the reason.
        let conflict = ix.variants[ti]
            .iter()
            .filter_map(|v| v.flavor)
            .find_map(|fi| match crate::index::flavor_reject(ix, ti, fi) {
                Some(FlavorReject::Labels { key, pod, flavor }) => Some((fi, key, pod, flavor)),
                _ => None,
            });
        let Some((fi, key, pod, flavor)) = conflict else {
            return;
        };
        let f = &ix.flavors[fi];
        let fobj = &ix.objects[f.obj];
        out.push(
            cx.at(
                at,
                format!(
                    "{what} selects nodes no ResourceFlavor of ClusterQueue `{cq_name}` offers (e.g. flavor `{}` disagrees on `{key}`): Kueue never admits it, so it waits in the queue forever",
                    f.name
                ),
            )
            .object(Some(owner.obj_ref()))
            .related(flavor.unwrap_or_else(|| fobj.loc(fobj.anchor())), format!("ResourceFlavor `{}` nodeLabels", f.name))
            .related(pod, "the template's selector")
            .help(format!(
                "make the template's nodeSelector/affinity agree with a flavor's nodeLabels (or drop the `{key}` selector and let Kueue inject it), or add a matching ResourceFlavor to ClusterQueue `{cq_name}`"
            )),
        );
        return;
    }
    let mut worst: Option<(usize, usize, Vec<LabelIssue>)> = None;
    for (v, placement) in ix.landings_of(ti) {
        let Some(fi) = v.flavor else { return };
        if placement.gpu_pools() > 0 {
            return;
        }
        match closest(ix, &v.constraints) {
            None => return,
            Some((p, issues)) => {
                if worst
                    .as_ref()
                    .is_none_or(|(_, _, w)| issues.len() < w.len())
                {
                    worst = Some((fi, p, issues));
                }
            }
        }
    }
    let Some((fi, p, issues)) = worst else { return };
    let f = &ix.flavors[fi];
    let fobj = &ix.objects[f.obj];
    let pool = &ix.nodepools[p];
    let Some(issue) = issues.first() else { return };
    let flavor_names = assignable
        .iter()
        .filter_map(|v| v.flavor)
        .map(|fi| format!("`{}`", ix.flavors[fi].name))
        .collect::<Vec<_>>()
        .join(", ");
    let injected = issue.pod.file == fobj.file
        && f.node_labels
            .iter()
            .any(|(_, _, v)| fobj.loc(*v) == issue.pod);
    let flavor_loc = if injected {
        issue.pod
    } else {
        fobj.loc(fobj.anchor())
    };
    out.push(
        cx.at(
            at,
            format!(
                "{what} fits a GPU NodePool on its own, but not with the node labels Kueue injects from the ResourceFlavors ClusterQueue `{cq_name}` may admit it to ({flavor_names}): with flavor `{}`, {}; its pods stay Pending after admission",
                f.name, about(&issue.reason, pool.name, several_gpu_pools(ix))
            ),
        )
        .object(Some(owner.obj_ref()))
        .related(flavor_loc, format!("ResourceFlavor `{}` injects this label", f.name))
        .help(format!(
            "make ResourceFlavor `{}`'s nodeLabels match labels NodePool `{}` sets (e.g. `karpenter.sh/nodepool: {}`), or send the workload to a queue whose flavors do",
            f.name, pool.name, pool.name
        )),
    );
}
