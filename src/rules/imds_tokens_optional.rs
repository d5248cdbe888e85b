use super::Ctx;
use crate::diag::Diagnostic;

declare_rule! {
    /// ## What it does
    /// Flags `spec.metadataOptions.httpTokens: optional` on an EC2NodeClass (or an older
    /// `AWSNodeTemplate`), which turns IMDSv1 back on for its nodes. A class that disables the
    /// metadata endpoint altogether (`httpEndpoint: disabled`) is not flagged.
    ///
    /// ## Why is this bad?
    /// IMDSv1 answers plain GET requests, so any pod that can reach the node's metadata service,
    /// or any SSRF bug in a notebook, model server or web UI, can read the node role's
    /// credentials. On GPU nodes that role often reaches the training data, model registry and
    /// checkpoint buckets. Karpenter's default is `httpTokens: required` (IMDSv2 only) with a hop
    /// limit of 1, which keeps pods on the pod network away from IMDS entirely.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.k8s.aws/v1
    /// kind: EC2NodeClass
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   metadataOptions:
    ///     httpTokens: optional
    /// ```
    ///
    /// ## Fix
    /// Require tokens (or drop `metadataOptions` to get the defaults). Give pods AWS access
    /// through EKS Pod Identity or IRSA instead of the node role.
    /// ```yaml
    ///   metadataOptions:
    ///     httpEndpoint: enabled
    ///     httpTokens: required
    ///     httpPutResponseHopLimit: 1
    /// ```
    name: "imds-tokens-optional",
    category: "security",
    kinds: &["EC2NodeClass", "AWSNodeTemplate"],
    severity: Warning,
    summary: "an EC2NodeClass allows IMDSv1 (httpTokens: optional)",
    check: check,
    chunked: false,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    // The classes GPU pools use, by name: read once, not once per class (and the rule is not
    // chunked: once per chunk would read every pool again for each).
    let gpu_classes = std::cell::LazyCell::new(|| {
        cx.ix
            .nodepools
            .iter()
            .enumerate()
            .filter(|(pi, _)| cx.ix.pools.capability[*pi] != crate::sched::GpuCapability::None)
            .filter_map(|(_, p)| p.node_class_ref?.get("name")?.as_str())
            .collect::<std::collections::HashSet<&str>>()
    });
    for (o, class) in cx.node_classes() {
        let Some(opts) = class.metadata_options() else {
            continue;
        };
        let Some(tokens) = opts.get("httpTokens") else {
            continue;
        };
        if tokens.as_str() != Some("optional") {
            continue;
        }
        // With the endpoint off there is no IMDS to reach, tokens or not.
        if opts.get("httpEndpoint").and_then(|n| n.as_str()) == Some("disabled") {
            continue;
        }
        let hop = opts.get("httpPutResponseHopLimit");
        let hop_limit = hop
            .and_then(|n| n.as_str())
            .and_then(|s| s.parse::<u32>().ok());
        // The role's reach matters most on GPU nodes: said only of a class a GPU pool uses.
        let gpu = o.name.is_some_and(|n| gpu_classes.contains(n));
        let aside = if gpu {
            " (on GPU nodes that role often reaches training data and model buckets)"
        } else {
            ""
        };
        let mut d = cx.on(
            o,
            tokens,
            format!(
                "{} sets `httpTokens: optional`, which allows IMDSv1: any pod or SSRF bug that reaches the metadata service can read the node role's credentials{aside}",
                o.describe()
            ),
        );
        if let (Some(h), Some(n)) = (hop, hop_limit.filter(|n| *n > 1)) {
            d = d.related(
                o.loc(h),
                format!("a hop limit of {n} lets IMDSv2 responses reach containers too"),
            );
        }
        out.push(d.help(
            "set `httpTokens: required` (IMDSv2 only, Karpenter's default) and keep `httpPutResponseHopLimit: 1` so pods on the pod network cannot reach IMDS; give pods AWS access through EKS Pod Identity or IRSA",
        ));
    }
}
