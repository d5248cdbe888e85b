use super::{Ctx, describe_template, template_anchor};
use crate::diag::Diagnostic;
use crate::intent::Basis;
use crate::model::{Container, PodTemplate};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a training run written as a bare Pod, or as a task of a Volcano Job, whose
    /// `restartPolicy` is `Always`, written or left to the default (a Pod's default is
    /// `Always`; Volcano copies the task's pod spec as it is). Only where the pod's own command
    /// (or a configured training label) says it trains, as `training-do-not-disrupt-missing`
    /// reads it, and the command runs to its end: a script that ends in `sleep infinity`,
    /// `tail -f` or an endless loop keeps its container running on purpose. Jobs, Kubeflow
    /// jobs, JobSets and RayJobs set the restart policy of their pods themselves (a Job
    /// rejects `Always`) and are not judged.
    ///
    /// ## Why is this bad?
    /// With `Always`, the kubelet restarts a container whatever its exit code: when training
    /// finishes, it starts again from the beginning (or from the last checkpoint, overwriting
    /// the results), over and over, and the pod keeps its GPUs until someone deletes it. A
    /// Volcano task's pods never reach `Succeeded`, so the task never completes, the Job stays
    /// `Running`, and its `TaskCompleted` policies never fire.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: Pod
    /// metadata: {name: finetune}
    /// spec:
    ///   containers:
    ///     - name: train
    ///       image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
    ///       command: [torchrun, --nproc_per_node=1, train.py, --epochs, "3"]
    ///       resources:
    ///         limits: {nvidia.com/gpu: 1}
    /// ```
    ///
    /// ## Fix
    /// Set `restartPolicy: OnFailure` (or `Never`) in the pod spec, or run the pod as a `Job`,
    /// which also retries failures up to its `backoffLimit` and records completion.
    name: "training-restart-always",
    category: "cost",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a training Pod or Volcano task whose restartPolicy is Always: it trains again and again",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let owner = cx.ix.owner(t);
        let volcano = owner.group == "batch.volcano.sh" && owner.kind == "Job";
        if !(volcano || owner.kind == "Pod" && owner.group.is_empty()) {
            continue;
        }
        let Some(intent) = cx.ix.classes.get(ti) else {
            continue;
        };
        if !intent.is_training() || !matches!(intent.basis, Basis::Command | Basis::Config) {
            continue;
        }
        let policy = t.spec.get("restartPolicy");
        if policy.is_some_and(|p| p.as_str() != Some("Always")) {
            continue;
        }
        if t.containers.iter().filter(|c| !c.init).any(keeps_running) {
            continue;
        }
        // Where `restartPolicy` is or would be written: beside `containers`.
        let containers = t
            .spec
            .entries()
            .find_map(|(k, kn, _)| (k == "containers").then_some(kn));
        let Some(at) = policy.or(containers).or_else(|| template_anchor(owner, t)) else {
            continue;
        };
        let gpus: u64 = t.containers.iter().map(Container::gpu_count).sum();
        let hold = match gpus {
            0 => "its GPUs".to_string(),
            1 => "its GPU".to_string(),
            n => format!("its {n} GPUs"),
        };
        let written = if policy.is_some() {
            "`restartPolicy: Always`"
        } else {
            "no `restartPolicy`, so `Always`"
        };
        let after = if volcano {
            format!(
                "its pods never complete: training starts again each time it ends, the task and the Volcano Job never finish, and each pod keeps {hold}"
            )
        } else {
            format!(
                "when training ends, the kubelet starts it again from the beginning, again and again, and the pod keeps {hold} until it is deleted"
            )
        };
        let mut d = cx
            .on(
                owner,
                at,
                format!(
                    "{} has {written}: {after} ({})",
                    if volcano {
                        format!("Volcano {} (`{}`)", owner.describe(), t.path)
                    } else {
                        describe_template(owner, t)
                    },
                    intent.evidence
                ),
            )
            .help(format!(
                "set `restartPolicy: OnFailure` (or `Never`) in `{}`{}",
                spec_path(t),
                if volcano {
                    ""
                } else {
                    ", or run it as a Job, which retries failures and records completion"
                }
            ));
        if let Some(loc) = cx.evidence_loc(t, intent) {
            d = d.related(loc, "classified as training from this");
        }
        out.push(d);
    }
}

/// Where the pod spec sits: `spec` for a Pod, `spec.tasks[worker].template.spec` for a task.
fn spec_path(t: &PodTemplate<'_>) -> String {
    if t.path == "spec" {
        "spec".to_string()
    } else {
        format!("{}.spec", t.path)
    }
}

/// Whether the container's command keeps it running after its work (`…; sleep infinity`,
/// `tail -f /dev/null`, `while true`): such a pod is kept alive on purpose, and restarting it
/// never happens.
fn keeps_running(c: &Container<'_>) -> bool {
    // The command and its arguments as one line: `[sleep, "86400"]` is `sleep 86400`.
    let mut line = String::new();
    for n in ["command", "args"].into_iter().filter_map(|k| c.get(k)) {
        let items: Vec<Node<'_>> = n.items().collect();
        for s in if items.is_empty() { vec![n] } else { items }
            .into_iter()
            .filter_map(Node::as_str)
        {
            line.push_str(&s.to_ascii_lowercase());
            line.push(' ');
        }
    }
    [
        "infinity",
        "sleep inf",
        "tail -f",
        "while true",
        "while :",
        "while [ 1 ]",
    ]
    .iter()
    .any(|w| line.contains(w))
        || long_sleep(&line)
}

/// `sleep 86400`, `sleep 1d`, `sleep 10h`: an hour or more.
fn long_sleep(s: &str) -> bool {
    s.match_indices("sleep ").any(|(i, m)| {
        let arg = s[i + m.len()..].split_whitespace().next().unwrap_or("");
        let arg = arg.trim_end_matches([';', '&', ')', '"', '\'']);
        if let Some(n) = arg.strip_suffix(['d', 'h']) {
            return n.parse::<f64>().is_ok();
        }
        arg.trim_end_matches('s')
            .parse::<f64>()
            .is_ok_and(|n| n >= 3600.0)
    })
}
