use super::Ctx;
use crate::diag::{Diagnostic, Loc};
use crate::model::dra::{self, Devices, DraGpu};
use crate::model::{Container, PodTemplate};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a GPU container whose launcher starts a different number of processes per node
    /// than the GPUs the container asks for. Read from its command and arguments (`sh -c`
    /// scripts included) and environment: `torchrun` / `torch.distributed.run`
    /// `--nproc_per_node` (or `--nproc-per-node`), DeepSpeed `--num_gpus`, `NPROC_PER_NODE` and
    /// `PET_NPROC_PER_NODE`, a PyTorchJob's `spec.nprocPerNode`, and, on pods classified as
    /// training, Lightning's `--gpus` and `trainer.devices=` (not `--gpus 0`, which elsewhere
    /// names device 0). The container's GPUs are its GPU resources (not HAMi's `gpumem` and
    /// `gpucores`, how much of each GPU) and the devices of the DRA claims it uses (`resources.claims`; a request's
    /// `count`, 1 by default); a claim asking `allocationMode: All` leaves them unknown and the
    /// container is not judged. Only whole numbers are compared
    /// (`auto`, `gpu` and placeholders are not), and only against GPUs and NeuronCores: a Neuron
    /// device has two to eight cores (one process each), and JAX runs one process per TPU host.
    ///
    /// ## Why is this bad?
    /// Each process drives one GPU. More processes than GPUs crash at start (`invalid device
    /// ordinal`) or share a device and run out of memory; fewer leave paid GPUs idle: a pod with
    /// 8 GPUs and `--nproc_per_node 4` wastes half a p5.48xlarge for the whole run.
    ///
    /// ## Example
    /// ```yaml
    /// containers:
    ///   - name: trainer
    ///     command: [torchrun, --nproc_per_node=4, train.py]
    ///     resources:
    ///       limits: {nvidia.com/gpu: 8}
    /// ```
    ///
    /// ## Fix
    /// Make them agree, or let the launcher count: `--nproc_per_node=gpu` (torchrun) uses every
    /// GPU the container sees.
    name: "gpu-count-mismatch-processes",
    category: "resources",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a launcher's processes per node differ from the GPUs the pod asks for",
    check: check,
    chunked: true,
}

/// A process count and where it is written.
pub(super) struct Claim {
    pub(super) what: String,
    pub(super) n: u64,
    pub(super) loc: Loc,
}

/// Flags whose value is the number of processes per node. `training_only`: ambiguous enough
/// outside training to skip.
const FLAGS: [(&str, bool); 5] = [
    ("--nproc_per_node", false),
    ("--nproc-per-node", false),
    ("--num_gpus", false),
    ("--gpus", true),
    ("trainer.devices", true),
];

/// Claims in the command and arguments of a container: each string item split into words, so a
/// `sh -c` script is read too; a flag's value is the rest of its word after `=`, or the next word.
pub(super) fn command_claims(
    cx: &Ctx,
    t: &PodTemplate,
    c: &Container,
    training: bool,
) -> Vec<Claim> {
    let mut words: Vec<(Node<'_>, &str)> = Vec::new();
    for key in ["command", "args"] {
        for item in c.get(key).into_iter().flat_map(|n| n.items()) {
            if let Some(s) = item.as_str() {
                // A script's comment lines (`#torchrun …` kept for later) run nothing.
                let lines = s.lines().filter(|l| !l.trim_start().starts_with('#'));
                words.extend(lines.flat_map(str::split_whitespace).map(|w| (item, w)));
            }
        }
    }
    let mut out = Vec::new();
    for (i, &(node, w)) in words.iter().enumerate() {
        for (flag, training_only) in FLAGS {
            if training_only && !training {
                continue;
            }
            let value = match w.strip_prefix(flag) {
                Some(rest) if rest.starts_with('=') => Some((node, &rest[1..])),
                // `trainer.devices` is Hydra/Lightning `key=value` only.
                Some("") if !flag.starts_with("trainer") => words.get(i + 1).copied(),
                _ => None,
            };
            let Some((vnode, v)) = value else { continue };
            let v = v.trim_matches(|ch| ch == '"' || ch == '\'');
            // `--gpus 0` is no count of processes: device 0 (MXNet's list of device ids), or none.
            if let Ok(n) = v.parse::<u64>()
                && n > 0
            {
                out.push(Claim {
                    what: format!("`{flag}`"),
                    n,
                    loc: cx.within(
                        t.file,
                        vnode,
                        v,
                        if vnode.is(node) { Some(flag) } else { None },
                    ),
                });
            }
        }
    }
    out
}

/// Whether the command gives torchrun its process count (`--nproc_per_node=1`, `=gpu`, ...).
fn names_nproc(c: &Container) -> bool {
    ["command", "args"].iter().any(|key| {
        c.get(key).into_iter().flat_map(|n| n.items()).any(|item| {
            item.as_str().is_some_and(|s| {
                s.split_whitespace()
                    .any(|w| w.starts_with("--nproc_per_node") || w.starts_with("--nproc-per-node"))
            })
        })
    })
}

fn env_claims(t: &PodTemplate, c: &Container) -> Vec<Claim> {
    c.get("env")
        .into_iter()
        .flat_map(|n| n.items())
        .filter_map(|e| {
            let name = e.get("name").and_then(Node::as_str)?;
            if !matches!(name, "NPROC_PER_NODE" | "PET_NPROC_PER_NODE") {
                return None;
            }
            let v = e.get("value")?;
            let n = v.as_str()?.trim().parse::<u64>().ok()?;
            Some(Claim {
                what: format!("`{name}`"),
                n,
                loc: t.loc(v),
            })
        })
        .collect()
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let training = ix.classes.get(ti).is_some_and(|c| c.is_training());
        let owner = ix.owner(t);
        // A PyTorchJob's `nprocPerNode` applies to every replica that has GPUs.
        let job_level = owner
            .is("kubeflow.org", "PyTorchJob")
            .then(|| owner.spec().and_then(|s| s.get("nprocPerNode")))
            .flatten()
            .and_then(|v| {
                let n = v.as_str()?.trim().parse::<u64>().ok()?;
                Some(Claim {
                    what: "`nprocPerNode`".to_string(),
                    n,
                    loc: owner.loc(v),
                })
            });
        // Containers asking GPUs as a resource or using GPU claims (DRA), with those claims.
        let gpu_containers: Vec<(&Container, Vec<&DraGpu>)> = t
            .containers
            .iter()
            .filter(|c| !c.init)
            .map(|c| (c, t.container_dra_gpus(c)))
            .filter(|(c, claims)| c.requests_gpu() || !claims.is_empty())
            .collect();
        for (i, (c, claims)) in gpu_containers.iter().enumerate() {
            let via = if claims.is_empty() {
                ""
            } else {
                " (counting the devices of its DRA claims)"
            };
            // A claim of unknown count (`allocationMode: All`) leaves the GPUs unknown.
            let gpus = match dra::devices(claims.iter().copied()) {
                None => c.gpu_count(),
                Some(Devices::Known(n)) => c.gpu_count().saturating_add(n),
                Some(Devices::Unknown) => continue,
            };
            if gpus == 0 || !one_process_per_device(c) {
                continue;
            }
            let mut claims = command_claims(cx, t, c, training);
            // torchrun's own flag wins over the defaults it reads from `PET_NPROC_PER_NODE`, which
            // is how the operator passes a PyTorchJob's `nprocPerNode`.
            let explicit = names_nproc(c);
            claims.extend(
                env_claims(t, c)
                    .into_iter()
                    .filter(|cl| !(explicit && cl.what == "`PET_NPROC_PER_NODE`")),
            );
            // The job-level count is judged against the first GPU container only.
            if i == 0
                && !explicit
                && let Some(j) = &job_level
            {
                claims.push(Claim {
                    what: j.what.clone(),
                    n: j.n,
                    loc: j.loc,
                });
            }
            // Several places that start the same count are one defect: one finding at the first,
            // the others as its other side.
            let wrong: Vec<&Claim> = claims.iter().filter(|cl| cl.n != gpus).collect();
            for (i, claim) in wrong.iter().enumerate() {
                if wrong[..i].iter().any(|earlier| earlier.n == claim.n) {
                    continue;
                }
                let effect = if claim.n > gpus {
                    "the extra processes find no GPU of their own and crash or share one"
                } else {
                    "the remaining GPUs sit idle for the whole run"
                };
                let name = c.name.unwrap_or("<unnamed>");
                let mut d = cx
                    .at(
                        claim.loc,
                        format!(
                            "{} starts {} processes per node but container `{name}` of `{}` asks for {gpus} GPU{}{via}: {effect}",
                            claim.what,
                            claim.n,
                            t.path,
                            if gpus == 1 { "" } else { "s" }
                        ),
                    )
                    .object(Some(owner.obj_ref()))
                    .help(format!(
                        "make them agree: ask for {} GPU{} or start {gpus} processes (with torchrun, `--nproc_per_node=gpu` starts one per GPU the container has)",
                        claim.n,
                        if claim.n == 1 { "" } else { "s" }
                    ));
                for same in wrong[i + 1..].iter().filter(|later| later.n == claim.n) {
                    d = d.related(same.loc, format!("{} also starts {}", same.what, same.n));
                }
                out.push(d);
            }
        }
    }
}

/// Whether launchers start one process per device of this container's accelerators: GPUs and
/// NeuronCores. Not Neuron devices (two to eight cores each, one process per core) nor TPU chips
/// (JAX runs one process per host).
fn one_process_per_device(c: &Container) -> bool {
    c.accelerators()
        .iter()
        .filter(|(n, _)| crate::model::is_gpu_resource(n))
        .all(|(n, _)| {
            !n.starts_with("google.com/tpu")
                && (!n.starts_with("aws.amazon.com/neuron") || *n == "aws.amazon.com/neuroncore")
        })
}
