use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Object, is_accelerator_resource};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a HorizontalPodAutoscaler (`autoscaling/v2`, `v2beta2` or `v2beta1`) with a
    /// `Resource` or `ContainerResource` metric on a GPU or other accelerator resource
    /// (`nvidia.com/gpu`, `amd.com/gpu`, `google.com/tpu`, `aws.amazon.com/neuron`…).
    ///
    /// ## Why is this bad?
    /// `Resource` metrics come from the resource metrics API (`metrics.k8s.io`), which
    /// metrics-server, and the adapters that replace it, fill with `cpu` and `memory` only: no
    /// pod ever has a GPU usage there. The HPA reports `FailedGetResourceMetric` for that metric.
    /// When it is the only metric the HPA never scales; beside others, the HPA still scales up
    /// on those, but skips every scale-down while one metric is missing, so the GPU replicas a
    /// peak added stay, paid for, until someone removes them.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: autoscaling/v2
    /// kind: HorizontalPodAutoscaler
    /// spec:
    ///   scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: triton}
    ///   minReplicas: 1
    ///   maxReplicas: 4
    ///   metrics:
    ///     - type: Resource
    ///       resource:
    ///         name: nvidia.com/gpu
    ///         target: {type: Utilization, averageUtilization: 80}
    /// ```
    ///
    /// ## Fix
    /// Scale on GPU utilization through a `Pods` or `External` metric that an adapter serves
    /// (the DCGM exporter's `DCGM_FI_DEV_GPU_UTIL` through prometheus-adapter, or a KEDA
    /// `prometheus` trigger), or on the server's own queue length; or remove the metric.
    name: "hpa-gpu-resource-metric",
    category: "availability",
    kinds: &["HorizontalPodAutoscaler"],
    severity: Warning,
    summary: "an HPA scales on a GPU `Resource` metric, which the resource metrics API never serves",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (_, obj) in cx.objects() {
        if !obj.is("autoscaling", "HorizontalPodAutoscaler") {
            continue;
        }
        let Some(metrics) = obj.spec().and_then(|s| s.get("metrics")) else {
            continue;
        };
        let metrics: Vec<Node> = metrics.items().collect();
        let gpu: Vec<(Node, &str)> = metrics.iter().filter_map(|m| gpu_metric(*m)).collect();
        if gpu.is_empty() {
            continue;
        }
        let others = metrics.len() - gpu.len();
        let hpa = obj.describe();
        let effect = if others == 0 {
            "with no other metric it never scales".to_string()
        } else {
            format!(
                "it scales up on its {} but, while one metric is missing, skips every scale-down: the GPU replicas a peak adds stay, paid for, until someone removes them",
                if others == 1 {
                    "other metric".to_string()
                } else {
                    format!("{others} other metrics")
                }
            )
        };
        let target = scale_target(cx, obj);
        for (name, resource) in gpu {
            let mut d = cx
                .at(
                    obj.loc(name),
                    format!(
                        "{hpa} scales on the resource metric `{resource}`, which the resource metrics API never serves (metrics-server reports only `cpu` and `memory`): the HPA reports `FailedGetResourceMetric`, and {effect}"
                    ),
                )
                .object(Some(obj.obj_ref()))
                .help(
                    "scale on GPU utilization through a `Pods` or `External` metric an adapter serves (the DCGM exporter's `DCGM_FI_DEV_GPU_UTIL` through prometheus-adapter, or a KEDA `prometheus` trigger), or remove this metric",
                );
            if let Some(t) = target {
                d = d.related(t.loc(t.anchor()), format!("the {} it scales", t.kind));
            }
            out.push(d);
        }
    }
}

/// The name node and resource of a `Resource` or `ContainerResource` metric on an accelerator.
fn gpu_metric(m: Node<'_>) -> Option<(Node<'_>, &str)> {
    let key = match m.get("type").and_then(Node::as_str)? {
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        _ => return None,
    };
    let name = m.get(key)?.get("name")?;
    let resource = name.as_str()?.trim();
    is_accelerator_resource(resource).then_some((name, resource))
}

/// The object the HPA scales, when the files hold it (only looked up for a finding).
fn scale_target<'i, 'a>(cx: &Ctx<'i, 'a>, hpa: &Object<'_>) -> Option<&'i Object<'a>> {
    let target = hpa.spec()?.get("scaleTargetRef")?;
    let kind = target.get("kind").and_then(Node::as_str)?;
    let name = target.get("name").and_then(Node::as_str)?;
    cx.ix
        .named(kind, name)
        .into_iter()
        .find(|o| o.namespace.is_none() || hpa.namespace.is_none() || o.namespace == hpa.namespace)
}
