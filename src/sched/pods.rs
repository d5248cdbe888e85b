//! How many pods a template runs at once, and what a whole workload asks for: the arithmetic
//! behind quota and multi-node checks.

use crate::model::kinds::{Family, family};
use crate::model::{Object, PodTemplate, is_gpu_resource};
use crate::yaml::Node;

/// A whole-number field (`replicas: 4`, `"4"`); `None` when absent, a placeholder or not a count.
fn count(n: Option<Node<'_>>) -> Option<Option<u64>> {
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Some(None);
    };
    // Present but unreadable (`${REPLICAS}`): the count is unknown.
    n.as_str()
        .map(str::trim)
        .and_then(|s| s.parse::<u64>().ok())
        .map(Some)
}

/// A count with its default; `None` when written but unreadable.
fn count_or(n: Option<Node<'_>>, default: u64) -> Option<u64> {
    count(n).map(|v| v.unwrap_or(default))
}

/// Pods of a batch/v1 Job spec that run at once: `parallelism` (default 1), never more than
/// `completions` when that is set.
fn job_pods(job_spec: Option<Node<'_>>) -> Option<u64> {
    let p = count_or(job_spec.and_then(|s| s.get("parallelism")), 1)?;
    match count(job_spec.and_then(|s| s.get("completions")))? {
        Some(c) => Some(p.min(c)),
        None => Some(p),
    }
}

/// How many pods of template `t` (of `obj`) run at the same time, as the manifest writes it
/// (an autoscaler may change a Deployment's count). `None` when the kind has no fixed count
/// (DaemonSet) or the count is a placeholder.
pub fn template_pods(obj: &Object<'_>, t: &PodTemplate<'_>) -> Option<u64> {
    let spec = obj.spec()?;
    let holds = |tpl: Option<Node<'_>>| {
        tpl.and_then(|n| n.get("spec"))
            .is_some_and(|s| s.is(t.spec))
    };
    match family(obj)? {
        Family::Pod => Some(1),
        Family::Job => job_pods(Some(spec)),
        Family::CronJob => job_pods(spec.at(&["jobTemplate", "spec"])),
        Family::Replicated => count_or(spec.get("replicas"), 1),
        Family::DaemonSet | Family::PodTemplate | Family::Opaque => None,
        Family::JobSet => spec
            .get("replicatedJobs")
            .into_iter()
            .flat_map(|n| n.items())
            .find(|rj| holds(rj.at(&["template", "spec", "template"])))
            .and_then(|rj| {
                let jobs = count_or(rj.get("replicas"), 1)?;
                Some(jobs * job_pods(rj.at(&["template", "spec"]))?)
            }),
        Family::Kubeflow => spec
            .entries()
            .filter(|(k, _, _)| k.ends_with("ReplicaSpecs"))
            .flat_map(|(_, _, rs)| rs.entries())
            .find(|(_, _, rs)| holds(rs.get("template")))
            .and_then(|(_, _, rs)| count_or(rs.get("replicas"), 1)),
        Family::Tasks => spec
            .get("tasks")
            .into_iter()
            .flat_map(|n| n.items())
            .find(|task| holds(task.get("template")))
            .and_then(|task| count_or(task.get("replicas"), 1)),
        Family::Ray => {
            let cluster = match obj.kind {
                "RayJob" => spec.get("rayClusterSpec")?,
                "RayService" => spec.get("rayClusterConfig")?,
                _ => spec,
            };
            if holds(cluster.at(&["headGroupSpec", "template"])) {
                return Some(1);
            }
            let g = cluster
                .get("workerGroupSpecs")
                .into_iter()
                .flat_map(|n| n.items())
                .find(|g| holds(g.get("template")))?;
            let replicas = match count(g.get("replicas"))? {
                Some(r) => r,
                None => count_or(g.get("minReplicas"), 0)?,
            };
            Some(replicas * count_or(g.get("numOfHosts"), 1)?)
        }
        Family::LeaderWorkerSet => {
            let groups = count_or(spec.get("replicas"), 1)?;
            let lwt = spec.get("leaderWorkerTemplate")?;
            if holds(lwt.get("leaderTemplate")) {
                return Some(groups);
            }
            let size = count_or(lwt.get("size"), 1)?;
            // Without a leader template the worker template runs the leader too.
            let per_group = if lwt.get("leaderTemplate").is_some() {
                size.saturating_sub(1)
            } else {
                size
            };
            Some(groups * per_group)
        }
    }
}

/// What one pod of a template asks for of an accelerator resource: the sum over app containers,
/// or the largest init container (limits, else requests; whole numbers only).
pub fn pod_request(t: &PodTemplate<'_>, resource: &str) -> u64 {
    let of = |c: &crate::model::Container| {
        c.limits
            .and_then(|l| l.get(resource))
            .or_else(|| c.requests.and_then(|r| r.get(resource)))
            .and_then(Node::as_str)
            .and_then(crate::quantity::whole)
            .map_or(0, |q| q.max(0) as u64)
    };
    let app: u64 = t.containers.iter().filter(|c| !c.init).map(of).sum();
    let init = t
        .containers
        .iter()
        .filter(|c| c.init)
        .map(of)
        .max()
        .unwrap_or(0);
    app.max(init)
}

/// The GPU resource names a template asks for (`nvidia.com/gpu`, MIG profiles, Neuron…).
pub fn gpu_resources<'a>(t: &PodTemplate<'a>) -> Vec<&'a str> {
    let mut out: Vec<&'a str> = Vec::new();
    for (name, _) in t.containers.iter().flat_map(|c| c.accelerators()) {
        if is_gpu_resource(name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod_templates;
    use crate::yaml::{Budget, parse};

    fn pods(yaml: &str) -> Vec<Option<u64>> {
        let p = parse(yaml, Budget::default());
        let o = Object::from_node(0, p.docs[0].root()).expect("object");
        pod_templates(0, &o)
            .iter()
            .map(|t| template_pods(&o, t))
            .collect()
    }

    #[test]
    fn counts_per_kind() {
        let c = "containers: [{name: c}]";
        assert_eq!(
            pods(&format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  parallelism: 4\n  completions: 2\n  template: {{spec: {{{c}}}}}\n"
            )),
            vec![Some(2)]
        );
        assert_eq!(
            pods(&format!(
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: p}}\nspec:\n  pytorchReplicaSpecs:\n    Master: {{replicas: 1, template: {{spec: {{{c}}}}}}}\n    Worker: {{replicas: 3, template: {{spec: {{{c}}}}}}}\n"
            )),
            vec![Some(1), Some(3)]
        );
        assert_eq!(
            pods(&format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: s}}\nspec:\n  replicatedJobs:\n    - name: w\n      replicas: 2\n      template: {{spec: {{parallelism: 4, completions: 4, template: {{spec: {{{c}}}}}}}}}\n"
            )),
            vec![Some(8)]
        );
        assert_eq!(
            pods(&format!(
                "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: r}}\nspec:\n  headGroupSpec: {{template: {{spec: {{{c}}}}}}}\n  workerGroupSpecs:\n    - {{groupName: g, replicas: 2, numOfHosts: 2, template: {{spec: {{{c}}}}}}}\n"
            )),
            vec![Some(1), Some(4)]
        );
        assert_eq!(
            pods(&format!(
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec:\n  tasks:\n    - {{name: ps, template: {{spec: {{{c}}}}}}}\n    - {{name: worker, replicas: 4, template: {{spec: {{{c}}}}}}}\n"
            )),
            vec![Some(1), Some(4)]
        );
        assert_eq!(
            pods(&format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  replicas: \"${{N}}\"\n  template: {{spec: {{{c}}}}}\n"
            )),
            vec![None]
        );
    }
}
