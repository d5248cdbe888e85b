use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::is_accelerator_resource;

declare_rule! {
    /// ## What it does
    /// Flags a ResourceQuota whose `spec.hard` caps a GPU or other accelerator resource under its
    /// bare name (`nvidia.com/gpu`) or as `limits.<name>`, without the `requests.<name>` entry
    /// for the same resource.
    ///
    /// ## Why is this bad?
    /// Kubernetes quota counts an extended resource only as `requests.<name>`: GPUs cannot be
    /// overcommitted, so their requests and limits are equal, and the quota controller tracks no
    /// other form. The API server accepts `nvidia.com/gpu: "8"` (a name with a `/` passes
    /// validation), but nothing ever counts against it: `kubectl describe quota` shows no usage
    /// for it, and the namespace may take every GPU the cluster launches.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: ResourceQuota
    /// metadata:
    ///   name: gpu-quota
    ///   namespace: research
    /// spec:
    ///   hard:
    ///     nvidia.com/gpu: "8"      # never enforced
    /// ```
    ///
    /// ## Fix
    /// ```yaml
    /// spec:
    ///   hard:
    ///     requests.nvidia.com/gpu: "8"
    /// ```
    name: "gpu-quota-unenforced",
    category: "cost",
    kinds: &["ResourceQuota"],
    severity: Warning,
    summary: "a ResourceQuota caps a GPU under a name quota never counts",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, obj) in cx.objects() {
        if !obj.is("", "ResourceQuota") {
            continue;
        }
        let Some(hard) = obj.spec().and_then(|s| s.get("hard")) else {
            continue;
        };
        let names: Vec<&str> = hard.entries().map(|(k, _, _)| k).collect();
        for (k, key, value) in hard.entries() {
            let resource = k.strip_prefix("limits.").unwrap_or(k);
            if k.starts_with("requests.") || !is_accelerator_resource(resource) {
                continue;
            }
            let counted = format!("requests.{resource}");
            // The counted form is there too: this entry is only redundant.
            if names.contains(&counted.as_str()) {
                continue;
            }
            let shown = value
                .as_str()
                .map(|v| format!(" \"{v}\""))
                .unwrap_or_default();
            out.push(
                cx.on(
                    obj,
                    key,
                    format!(
                        "`{k}` in {} is never enforced: quota counts an extended resource such as `{resource}` only as `{counted}`, so this caps nothing and the namespace may take every `{resource}` the cluster has",
                        obj.describe()
                    ),
                )
                .help(format!(
                    "write it as `{counted}:{shown}` (an extended resource is never overcommitted: its requests equal its limits)"
                )),
            );
        }
    }
}
