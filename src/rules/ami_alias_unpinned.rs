use super::Ctx;
use crate::diag::{Diagnostic, FileId};
use crate::model::Object;
use crate::sched::{GpuCapability, gpu_capability};

declare_rule! {
    /// ## What it does
    /// Flags an EC2NodeClass `spec.amiSelectorTerms[].alias` that ends in `@latest`
    /// (`al2023@latest`, `bottlerocket@latest`, `al2@latest`). Windows families are exempt: their
    /// aliases accept only `@latest`. Only classes a GPU or Neuron NodePool uses (one whose
    /// requirements select accelerator instances) are judged: not one only CPU or general pools
    /// use, nor one no pool in view uses. Where several classes share a name (examples side by
    /// side), a pool uses the one in its own file, else the one nearest to it in the tree, and
    /// none when several are equally near. Auto Mode pools name an EKS NodeClass, not an
    /// EC2NodeClass.
    ///
    /// Off by default: pinning is a release-management choice that samples, labs and teams that
    /// track the latest AMI on purpose rightly skip. Turn it on with
    /// `rules: {ami-alias-unpinned: warning}` in `.gpuops.yaml`, or `--rule ami-alias-unpinned`.
    ///
    /// ## Why is this bad?
    /// An `@latest` alias resolves to a new AMI every time AWS publishes one. Each release drifts
    /// every node of the class, and Karpenter replaces them all, GPU nodes included, on AWS's
    /// schedule rather than yours: long training runs are interrupted mid-epoch, inference
    /// capacity churns, and a new AMI (driver, kernel, CUDA) reaches production untested.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.k8s.aws/v1
    /// kind: EC2NodeClass
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   amiSelectorTerms:
    ///     - alias: al2023@latest
    /// ```
    ///
    /// ## Fix
    /// Pin a release and roll it forward deliberately (test it on a canary class first):
    /// ```yaml
    ///   amiSelectorTerms:
    ///     - alias: al2023@v20250505        # AL2023: vYYYYMMDD
    ///     # - alias: bottlerocket@v1.39.1  # Bottlerocket: vX.Y.Z
    /// ```
    name: "ami-alias-unpinned",
    category: "disruption",
    kinds: &["EC2NodeClass"],
    severity: Warning,
    summary: "an EC2NodeClass AMI alias on @latest drifts and replaces nodes on every AMI release",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (o, class) in cx.node_classes() {
        if class.legacy {
            continue;
        }
        for term in class.ami_selector_terms() {
            let Some(node) = term.get("alias") else {
                continue;
            };
            let Some(alias) = node.as_str() else { continue };
            let Some((family, version)) = alias.trim().split_once('@') else {
                continue;
            };
            if version != "latest" || family.is_empty() {
                continue;
            }
            let family = family.to_ascii_lowercase();
            // Windows AMI families (windows2019/2022/2025) accept only `@latest`: there is no
            // version to pin, so flagging them would ask for the impossible.
            if family.starts_with("windows") {
                continue;
            }
            let pin = match family.as_str() {
                "bottlerocket" => "`bottlerocket@vX.Y.Z` (e.g. `bottlerocket@v1.39.1`)".to_string(),
                f => format!("`{f}@vYYYYMMDD` (e.g. `{f}@v20250505`)"),
            };
            // The pools that use this class: with several classes of one name (examples side by
            // side in one repository), a pool uses the one nearest to it in the tree.
            let twins = o.name.map_or(Vec::new(), |n| cx.ix.named(o.kind, n));
            let users: Vec<usize> = o
                .name
                .map_or(&[][..], |n| cx.ix.pools_using_class(n))
                .iter()
                .copied()
                .filter(|&p| {
                    twins.len() < 2
                        || nearest(cx, cx.ix.nodepools[p].file, &twins)
                            .is_some_and(|t| std::ptr::eq(t, o))
                })
                .collect();
            // Only GPU (or Neuron) capacity is this linter's to judge: a class no pool in view
            // uses, or only pools that do not set out to launch accelerators (CPU pools for
            // Spark, Flink or system pods; general pools that could, but only by chance), is
            // left alone.
            if users
                .iter()
                .all(|&p| gpu_capability(&cx.ix.nodepools[p]) != GpuCapability::Explicit)
            {
                continue;
            }
            // GPU pools using this class: their nodes are the expensive ones to churn.
            let gpu_pools: Vec<_> = users
                .iter()
                .map(|&p| &cx.ix.nodepools[p])
                .filter(|p| !p.legacy_provisioner && gpu_capability(p) == GpuCapability::Explicit)
                .filter_map(|p| Some((p, p.node_class_ref?.get("name")?)))
                .collect();
            let whose = match gpu_pools.as_slice() {
                [] => String::new(),
                [(p, _)] => format!(", including the GPU nodes of NodePool `{}`", p.name),
                _ => ", including the GPU nodes of the NodePools that use it".to_string(),
            };
            let mut d = cx.on(
                o,
                node,
                format!(
                    "{} selects its AMI with `{alias}`: every new AMI release drifts its nodes and Karpenter replaces them{whose}, interrupting long training runs that are not protected from disruption",
                    o.describe()
                ),
            );
            for (p, n) in gpu_pools {
                d = d.related(
                    p.loc(n),
                    format!("GPU NodePool `{}` uses this class", p.name),
                );
            }
            out.push(d.help(format!(
                "pin a release, {pin}, and roll it forward deliberately after testing it on a canary class"
            )));
        }
    }
}

/// Of objects that share a name, the one in `from` itself, else the one whose file shares the
/// longest directory prefix with `from`; `None` when several are equally near (side-by-side
/// examples that each define it: which one a pool uses cannot be told).
fn nearest<'o, 'a>(cx: &Ctx, from: FileId, objects: &[&'o Object<'a>]) -> Option<&'o Object<'a>> {
    let dir = |f: FileId| {
        cx.ix
            .files
            .get(f)
            .map_or("", |f| f.path.rsplit_once('/').map_or("", |(d, _)| d))
    };
    let here: Vec<&str> = dir(from).split('/').collect();
    let nearness = |o: &Object| {
        let there = dir(o.file).split('/');
        let shared = here.iter().zip(there).take_while(|(a, b)| *a == b).count();
        (o.file == from, shared)
    };
    let best = objects.iter().map(|o| nearness(o)).max()?;
    let mut nearest = objects.iter().copied().filter(|o| nearness(o) == best);
    let one = nearest.next()?;
    nearest.next().is_none().then_some(one)
}
