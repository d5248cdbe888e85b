use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::dra::DraGpu;
use crate::yaml::Span;
use foldhash::HashMap;

declare_rule! {
    /// ## What it does
    /// When Kueue's configuration in the files maps DRA device classes to quota resources
    /// (`resources.deviceClassMappings`, in a `Configuration` object, the `kueue-manager-config`
    /// ConfigMap or the `kueue` chart's values), flags a GPU claim of a workload Kueue admits (a
    /// `kueue.x-k8s.io/queue-name` label, or its namespace's `default` LocalQueue) whose device
    /// class no mapping names. Only ResourceClaimTemplates are judged, the claims Kueue charges
    /// to quota; for a request with alternatives (`firstAvailable`), the first one's class. One
    /// finding per claim request, with the workloads that use it.
    ///
    /// ## Why is this bad?
    /// Kueue charges a DRA device to quota through the resource name its mapping gives the device
    /// class. With Kueue's DRA integration on (the `DynamicResourceAllocation` feature gate, what
    /// the mappings are for), a Workload whose ResourceClaimTemplate asks for a class no mapping
    /// names gets no quota at all: Kueue marks it inadmissible (`DeviceClass … not found`) and the
    /// job stays suspended; nothing else fails. With the gate off the devices are charged to no
    /// quota, so the queue does not limit the GPUs it hands out.
    ///
    /// ## Example
    /// ```yaml
    /// # kueue-manager-config: deviceClassMappings: [{name: example.com/gpu, deviceClassNames: [gpu.nvidia.com]}]
    /// apiVersion: resource.k8s.io/v1
    /// kind: ResourceClaimTemplate
    /// metadata: {name: mig-slice, namespace: ml}
    /// spec:
    ///   spec:
    ///     devices:
    ///       requests:
    ///         - name: slice
    ///           exactly: {deviceClassName: mig.nvidia.com}   # in no mapping
    /// ```
    ///
    /// ## Fix
    /// Add the class to a mapping's `deviceClassNames` (and that resource to the ClusterQueue's
    /// quota), or ask for a class a mapping names.
    name: "dra-class-unmapped",
    category: "kueue",
    kinds: &["ResourceClaimTemplate"],
    severity: Warning,
    summary: "a workload admitted through Kueue claims GPUs of a device class no deviceClassMappings entry names",
    check: check,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let Some(first_mapping) = ix.kueue_dra.first() else {
        return;
    };
    // Per claim request: the claim and the workloads that use it (owner object, template).
    let mut found: Vec<(&DraGpu, Vec<(usize, usize)>)> = Vec::new();
    let mut at: HashMap<(usize, Span), usize> = HashMap::default();
    for (ti, t) in cx.templates() {
        if ix.queues.get(ti).is_none_or(Option::is_none) {
            continue;
        }
        for g in t.dra_gpus().iter().filter(|g| g.per_pod) {
            if ix
                .kueue_dra
                .iter()
                .any(|m| m.device_classes.iter().any(|c| c == g.class))
            {
                continue;
            }
            let key = (g.source, g.class_node.span());
            match at.get(&key) {
                Some(&i) => {
                    if !found[i].1.iter().any(|(o, _)| *o == t.owner) {
                        found[i].1.push((t.owner, ti));
                    }
                }
                None => {
                    at.insert(key, found.len());
                    found.push((g, vec![(t.owner, ti)]));
                }
            }
        }
    }
    let mapped: Vec<String> = ix
        .kueue_dra
        .iter()
        .flat_map(|m| m.device_classes.iter().map(|c| format!("`{c}`")))
        .collect();
    for (g, owners) in found {
        let Some(claim) = ix.objects.get(g.source) else {
            continue;
        };
        let first = &ix.objects[owners[0].0];
        let users = if owners.len() == 1 {
            first.describe()
        } else {
            format!("{} and {} more", first.describe(), owners.len() - 1)
        };
        let mut d = cx
            .on(
                claim,
                g.class_node,
                format!(
                    "{users} {} admitted through Kueue, but {} asks for `{}` devices, a class no entry of Kueue's `deviceClassMappings` names: with Kueue's DRA integration on, Kueue finds no quota resource for it, marks the Workload inadmissible and the job stays suspended (with it off, the GPUs are charged to no quota)",
                    if owners.len() == 1 { "is" } else { "are" },
                    claim.describe(),
                    g.class
                ),
            )
            .related(
                cx.within_loc(first_mapping.at, crate::model::kueue_config::MARKER, None),
                format!(
                    "Kueue's deviceClassMappings name {}",
                    if mapped.is_empty() {
                        "no device class".to_string()
                    } else {
                        mapped.join(", ")
                    }
                ),
            )
            .help(format!(
                "add `{}` to the `deviceClassNames` of a mapping (`{}` or one of its own, with quota for it in the ClusterQueue), or ask for a class a mapping names",
                g.class, first_mapping.name
            ));
        for &(o, ti) in owners.iter().take(3) {
            let owner = &ix.objects[o];
            if let Some(label) = ix.queues.get(ti).and_then(|q| q.as_ref()?.label) {
                d = d.related(
                    owner.loc(label),
                    format!("{} is submitted to Kueue here", owner.describe()),
                );
            }
        }
        out.push(d);
    }
}
