use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::is_accelerator_resource;
use crate::quantity;

declare_rule! {
    /// ## What it does
    /// Flags an accelerator or device quantity (`nvidia.com/gpu`, `amd.com/gpu`,
    /// `aws.amazon.com/neuron*`, `vpc.amazonaws.com/efa`, …) in requests or limits that is not a
    /// positive whole number: `0.5`, `1.5`, `500m`, `-1`, `abc`. Zero is a warning. Template
    /// placeholders (`${GPUS}`, `{{ .Values.gpus }}`, `<GPU_COUNT>`, `PLACEHOLDER_NUM_GPUS`,
    /// `NUM_GPUS`) and empty values (`nvidia.com/gpu: ""`, a slot a template fills) are left alone.
    /// Any other extended resource (named with a domain outside `kubernetes.io`: a GPU-sharing
    /// system's `tensor-fusion.ai/gpu`, a device plugin's) with a fractional or negative
    /// quantity is flagged too: the API server counts every extended resource in whole units.
    ///
    /// ## Why is this bad?
    /// Devices are handed out whole. The API server rejects fractional or negative counts
    /// ("must be an integer"), so the workload never gets a pod. GPU sharing (MIG, time-slicing)
    /// shows up as other resource names, never as a fraction. A count of zero is valid and says
    /// the container takes no device (a Ray head kept off the GPU, `vpc.amazonaws.com/efa: 0`): it
    /// is not flagged.
    ///
    /// ## Example
    /// ```yaml
    /// resources:
    ///   limits:
    ///     nvidia.com/gpu: 0.5
    /// ```
    ///
    /// ## Fix
    /// Use a whole number of devices, or a MIG profile resource (`nvidia.com/mig-1g.10gb: 1`) for
    /// a slice of a GPU.
    name: "gpu-quantity-invalid",
    category: "resources",
    kinds: &["pod templates"],
    severity: Error,
    summary: "an accelerator quantity that is not a positive whole number",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, t) in cx.templates() {
        let owner = cx.ix.owner(t);
        for c in &t.containers {
            let cname = c.name.unwrap_or("<unnamed>");
            for (field, map) in [("limits", c.limits), ("requests", c.requests)] {
                for (res, _, v) in map.into_iter().flat_map(|m| m.entries()) {
                    let device = is_accelerator_resource(res);
                    if !device && !is_extended(res) {
                        continue;
                    }
                    if is_template_slot(cx, owner.file, v) {
                        continue;
                    }
                    let Some(text) = v.as_str() else {
                        out.push(
                            cx.on(
                                owner,
                                v,
                                format!(
                                    "`{res}` in `{field}` of container `{cname}` is not a quantity"
                                ),
                            )
                            .help("use a whole number, e.g. `1`"),
                        );
                        continue;
                    };
                    let msg = match quantity::parse(text) {
                        None => format!(
                            "`{res}: {text}` in `{field}` of container `{cname}` is not a valid quantity: the API server rejects the pod"
                        ),
                        Some(m) if m.0 % 1000 != 0 && device => format!(
                            "`{res}: {text}` in `{field}` of container `{cname}` is not a whole number: devices are allocated whole and the API server rejects the pod"
                        ),
                        Some(m) if m.0 % 1000 != 0 => format!(
                            "`{res}: {text}` in `{field}` of container `{cname}` is not a whole number: an extended resource (a device plugin's, a GPU-sharing system's) is counted in whole units, and the API server rejects the pod (`must be an integer`)"
                        ),
                        Some(m) if m.0 < 0 => format!(
                            "`{res}: {text}` in `{field}` of container `{cname}` is negative: the API server rejects the pod"
                        ),
                        Some(_) => continue,
                    };
                    let help = match device {
                        true => {
                            "use a positive whole number of devices; for a slice of a GPU request a MIG profile such as `nvidia.com/mig-1g.10gb: 1`"
                        }
                        false => {
                            "use a whole number: a share of a device is asked for in the units its plugin advertises (a percentage, MiB of memory), or through an annotation the sharing system reads"
                        }
                    };
                    out.push(cx.on(owner, v, msg).help(help));
                }
            }
        }
    }
}

/// Whether the API server counts resource `name` in whole units: an extended resource, named
/// with a domain outside `kubernetes.io` (`tensor-fusion.ai/gpu`, `example.com/dongle`).
fn is_extended(name: &str) -> bool {
    name.split_once('/').is_some_and(|(domain, _)| {
        domain != "kubernetes.io"
            && !domain.ends_with(".kubernetes.io")
            && !name.starts_with("requests.")
    })
}

/// A value that something fills in before the API server sees it: a placeholder, an empty
/// value, or an unquoted `{{ … }}` that YAML read as a flow mapping.
fn is_template_slot(cx: &Ctx, file: crate::diag::FileId, v: crate::yaml::Node<'_>) -> bool {
    if v.is_null() {
        return true;
    }
    match v.as_str() {
        Some(text) => text.trim().is_empty() || quantity::is_placeholder(text),
        None => cx
            .ix
            .files
            .get(file)
            .and_then(|f| f.text.get(v.span().start()..))
            .is_some_and(|t| t.starts_with("{{")),
    }
}
