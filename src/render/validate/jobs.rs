//! Checks of the `jobs` section: references, GPU sizes against quotas and classes, spot grace.

use super::checkpoint::job_checkpoint;
use super::hints::{did_you_mean, unique};
use super::{DEFAULT_GRACE_SECONDS, SPOT_NOTICE_SECONDS, V, class_names, spot_min_grace_seconds};
use crate::render::ProfileProblem;
use crate::render::platform::{ClassSpec, JobSpec, SharingSpec, TeamSpec};
use crate::render::profile::{ClassType, Profile};
use crate::render::wrong::Wrong;
use crate::yaml::Span;

/// A job on a class that shares its GPUs: only MIG instances (isolated), one per worker (a CUDA
/// process uses one MIG instance), one worker.
fn shared_class_job(
    v: &mut V,
    j: &crate::render::profile::Job,
    c: &ClassSpec,
    workers: u32,
) -> bool {
    let Some(sharing) = &c.sharing else {
        return true;
    };
    match sharing {
        SharingSpec::Mig { profile, .. } => {
            let mut ok = true;
            if j.gpus_per_worker.value != 1 {
                v.err(Wrong::Conflict, &j.gpus_per_worker, format!(
                    "class `{}` cuts its GPUs into `{profile}` MIG instances, and a CUDA process uses one: a worker asks for one",
                    c.name
                ))
                .help("set `gpusPerWorker: 1`, or run the job on a class of whole GPUs");
                ok = false;
            }
            if workers > 1
                && let Some(w) = &j.workers
            {
                v.err(Wrong::Conflict, w, format!(
                    "class `{}` cuts its GPUs into MIG instances, which gpuops does not train across: one worker per job",
                    c.name
                ))
                .help("run distributed training on a class of whole GPUs");
                ok = false;
            }
            ok
        }
        SharingSpec::TimeSlicing { .. } | SharingSpec::Mps { .. } => {
            v.err(Wrong::Conflict, &j.class, format!(
                "class `{}` shares its GPUs ({}) without isolation: jobs run on whole GPUs or MIG instances",
                c.name,
                sharing.name()
            ))
            .help("run the job on a class without `sharing`, or one with `sharing: {mig: …}`");
            false
        }
    }
}

pub(super) fn jobs(
    v: &mut V,
    p: &Profile,
    classes: &[Option<ClassSpec>],
    teams: &[Option<TeamSpec>],
) -> Vec<JobSpec> {
    let team_names: Vec<&str> = p.teams.iter().map(|t| t.name.value.as_str()).collect();
    let class_names = class_names(p);
    let listed = unique(&class_names);
    let mut out = Vec::new();
    let mut seen: Vec<(String, String, Span)> = Vec::new();
    for j in &p.jobs {
        let mut ok = v.dns_label(&j.name, "job", 63);
        let team_idx = team_names.iter().position(|t| *t == j.team.value);
        let class_idx = class_names.iter().position(|c| *c == j.class.value);
        if team_idx.is_none() {
            v.err(
                Wrong::Undefined,
                &j.team,
                format!(
                    "job `{}` names team `{}`, which is not defined",
                    j.name.value, j.team.value
                ),
            )
            .help(format!(
                "{}defined teams: {}",
                did_you_mean(&j.team.value, &team_names),
                if team_names.is_empty() {
                    "none".to_string()
                } else {
                    team_names.join(", ")
                }
            ));
            ok = false;
        }
        if class_idx.is_none() {
            v.err(
                Wrong::Undefined,
                &j.class,
                format!(
                    "job `{}` names class `{}`, which is not defined",
                    j.name.value, j.class.value
                ),
            )
            .help(format!(
                "{}defined classes: {}",
                did_you_mean(&j.class.value, &listed),
                listed.join(", ")
            ));
            ok = false;
        }
        let team = team_idx.map(|i| &p.teams[i]);
        let namespace = team.map(|t| {
            t.namespace
                .as_ref()
                .map_or(t.name.value.clone(), |n| n.value.clone())
        });
        if let Some(ns) = &namespace {
            if let Some((_, _, first)) = seen
                .iter()
                .find(|(n, name, _)| n == ns && *name == j.name.value)
            {
                let first = *first;
                v.err(
                    Wrong::Duplicate,
                    &j.name,
                    format!(
                        "job `{}` is defined twice in namespace `{ns}`",
                        j.name.value
                    ),
                )
                .related(first, "first defined here");
                ok = false;
            } else {
                seen.push((ns.clone(), j.name.value.clone(), v.at(&j.name)));
            }
        }
        if let (Some(t), Some(_)) = (team, class_idx)
            && !t.gpu_quota.0.iter().any(|(k, _)| k.value == j.class.value)
        {
            let allowed: Vec<&str> = t
                .gpu_quota
                .0
                .iter()
                .map(|(k, _)| k.value.as_str())
                .collect();
            let ts = v.at(&t.name);
            v.err(
                Wrong::Undefined,
                &j.class,
                format!(
                    "team `{}` may not use class `{}`: it has no gpuQuota for it",
                    t.name.value, j.class.value
                ),
            )
            .related(ts, "team defined here")
            .help(format!(
                "add `{}: <GPUs>` to the team's gpuQuota, or use one of: {}",
                j.class.value,
                allowed.join(", ")
            ));
            ok = false;
        }
        let class = class_idx
            .and_then(|i| classes.get(i))
            .and_then(Option::as_ref);
        let gpus = j.gpus_per_worker.value;
        let workers = j.workers.as_ref().map_or(1, |w| w.value);
        if gpus == 0 {
            v.err(
                Wrong::OutOfRange,
                &j.gpus_per_worker,
                "`gpusPerWorker` is 0: a training worker needs at least one GPU",
            );
            ok = false;
        }
        if let Some(w) = &j.workers {
            if w.value == 0 {
                v.err(
                    Wrong::OutOfRange,
                    w,
                    "`workers` is 0: a job needs at least one worker",
                );
                ok = false;
            }
            let index_len = (w.value.saturating_sub(1)).to_string().len();
            if w.value > 1 && j.name.value.len() + 1 + index_len > 63 {
                v.err(Wrong::OutOfRange, &j.name, format!("job name `{}` is too long for {} workers: pod host names `<job>-<index>` must fit 63 characters", j.name.value, w.value));
                ok = false;
            }
        }
        // Teams sharing a class form one cohort without borrowing limits: a job is admitted only
        // if it fits what the whole cohort holds for the class, else it waits forever.
        let cohort: u64 = p
            .teams
            .iter()
            .flat_map(|t| &t.gpu_quota.0)
            .filter(|(k, _)| k.value == j.class.value)
            .map(|(_, q)| u64::from(q.value))
            .sum();
        let total = u64::from(gpus) * u64::from(workers);
        // A team without quota for the class is told above; one whose quota (and its cohort's)
        // is 0 can never be admitted either.
        let has_quota_entry =
            team.is_some_and(|t| t.gpu_quota.0.iter().any(|(k, _)| k.value == j.class.value));
        if (cohort > 0 || has_quota_entry) && total > cohort {
            let at = j
                .workers
                .as_ref()
                .map_or(v.at(&j.gpus_per_worker), |w| v.at(w));
            v.out.push(ProfileProblem {
                wrong: Wrong::OverCeiling,
                span: at,
                message: format!(
                    "job `{}` needs {total} GPUs at once ({workers} × {gpus}), more than the {cohort} all teams' queues hold for class `{}`: Kueue never admits it",
                    j.name.value, j.class.value
                ),
                help: Some(format!(
                    "raise the teams' gpuQuota for `{}` to {total} in all, or run fewer or smaller workers",
                    j.class.value
                )),
                related: Vec::new(),
            });
            ok = false;
        }
        if let Some(c) = class {
            if !matches!(c.class_type, ClassType::Training | ClassType::Batch) {
                let cs = p
                    .classes
                    .value
                    .iter()
                    .find(|pc| pc.name.value == c.name)
                    .map(|pc| v.at(&pc.name));
                let e = v.err(Wrong::Conflict, &j.class, format!(
                    "job `{}` runs on class `{}` of type {}, whose nodes are consolidated when underutilized: that would stop training runs",
                    j.name.value, c.name, c.class_type.as_str()
                ));
                e.help("run jobs on a training or batch class (their nodes are only removed when empty)");
                if let Some(cs) = cs {
                    e.related(cs, "class defined here");
                }
                ok = false;
            }
            ok &= shared_class_job(v, j, c, workers);
            let per_node = c.max_gpus_per_node();
            if gpus > per_node {
                let biggest = c
                    .instances
                    .iter()
                    .filter(|i| i.gpu_count == per_node)
                    .map(|i| i.instance_type)
                    .collect::<Vec<_>>()
                    .join(", ");
                v.err(Wrong::Unschedulable, &j.gpus_per_worker, format!(
                    "no instance of class `{}` has {gpus} GPUs: the largest ({biggest}) have {per_node}, so the worker could never be scheduled",
                    c.name
                ))
                .help(format!("use at most {per_node} GPUs per worker and add workers instead"));
                ok = false;
            }
            let total = u64::from(gpus) * u64::from(workers);
            if gpus > 0 && gpus <= per_node && total > u64::from(c.max_gpus) {
                let at = j
                    .workers
                    .as_ref()
                    .map_or_else(|| v.at(&j.gpus_per_worker), |w| v.at(w));
                v.out.push(ProfileProblem {
                    wrong: Wrong::OverCeiling,
                    span: at,
                    message: format!(
                        "job `{}` needs {total} GPUs ({workers} × {gpus}), above the {} ceiling of class `{}`: Kueue can never admit it",
                        j.name.value, c.max_gpus, c.name
                    ),
                    help: Some("use fewer workers or GPUs, or raise the class's maxGpus".into()),
                    related: Vec::new(),
                });
                ok = false;
            }
        }
        if gpus > 0 {
            ok &= processes_match_gpus(v, j, gpus);
        }
        ok &= job_checkpoint(v, j);
        let uses_spot = class.is_some_and(|c| c.capacity.uses_spot());
        let grace = j
            .termination_grace_period_seconds
            .as_ref()
            .map_or(DEFAULT_GRACE_SECONDS, |g| g.value);
        if let Some(g) = &j.termination_grace_period_seconds {
            let min = spot_min_grace_seconds();
            if g.value == 0 {
                v.err(
                    Wrong::OutOfRange,
                    g,
                    "a grace period of 0 seconds leaves no time to write a checkpoint",
                );
                ok = false;
            } else if uses_spot && g.value > SPOT_NOTICE_SECONDS {
                v.err(Wrong::OutOfRange, g, format!(
                    "{} seconds is longer than the 2-minute notice spot instances get: the worker is killed before it finishes checkpointing",
                    g.value
                ))
                .help(format!("use {min} to {SPOT_NOTICE_SECONDS} seconds (default {DEFAULT_GRACE_SECONDS}) on a class with spot capacity"));
                ok = false;
            } else if uses_spot && g.value < min {
                v.err(Wrong::OutOfRange, g, format!(
                    "{} seconds is too short to write a checkpoint when a spot instance is reclaimed: classes with spot capacity need at least {min}",
                    g.value
                ))
                .help(format!("use {min} to {SPOT_NOTICE_SECONDS} seconds (default {DEFAULT_GRACE_SECONDS}) on a class with spot capacity"));
                ok = false;
            }
        }
        if j.image.value.trim().is_empty() || j.image.value.chars().any(char::is_whitespace) {
            v.err(
                Wrong::InvalidValue,
                &j.image,
                format!("`{}` is not a container image reference", j.image.value),
            );
            ok = false;
        }
        let mut env = Vec::new();
        for (k, val) in &j.env.0 {
            let valid = !k.value.is_empty()
                && !k.value.starts_with(|c: char| c.is_ascii_digit())
                && k.value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
            if !valid {
                v.err(
                    Wrong::InvalidName,
                    k,
                    format!("`{}` is not an environment variable name", k.value),
                )
                .help("letters, digits, `_`, `-` and `.`, not starting with a digit");
                ok = false;
            }
            env.push((k.value.clone(), val.value.clone()));
        }
        if ok
            && let (Some(c), Some(ns), Some(_)) = (
                class,
                namespace,
                teams
                    .get(team_idx.unwrap_or(usize::MAX))
                    .and_then(Option::as_ref),
            )
        {
            out.push(JobSpec {
                name: j.name.value.clone(),
                team: j.team.value.clone(),
                namespace: ns,
                class: c.name.clone(),
                image: j.image.value.clone(),
                command: j.command.iter().map(|s| s.value.clone()).collect(),
                args: j.args.iter().map(|s| s.value.clone()).collect(),
                env,
                gpus_per_worker: gpus,
                workers,
                checkpoint_claim: j.checkpoint.claim.value.clone(),
                checkpoint_path: j.checkpoint.path.value.clone(),
                termination_grace_period_seconds: grace,
                backoff_limit: j.backoff_limit.unwrap_or(3),
            });
        }
    }
    out
}

/// Flags whose value is the number of processes a launcher starts per node, as
/// `gpu-count-mismatch-processes` reads them: a job whose count differs from its GPUs would
/// render manifests that fail that rule.
const PROCESS_FLAGS: [&str; 5] = [
    "--nproc_per_node",
    "--nproc-per-node",
    "--num_gpus",
    "--gpus",
    "trainer.devices",
];

/// Each process count in the job's command, arguments and `NPROC_PER_NODE` environment agrees
/// with `gpusPerWorker`; false (and a problem at the count) when one does not.
fn processes_match_gpus(v: &mut V, j: &crate::render::profile::Job, gpus: u32) -> bool {
    let words: Vec<(&serde_saphyr::Spanned<String>, &str)> = j
        .command
        .iter()
        .chain(&j.args)
        .flat_map(|s| s.value.split_whitespace().map(move |w| (s, w)))
        .collect();
    let mut claims: Vec<(&serde_saphyr::Spanned<String>, String, u64)> = Vec::new();
    for (i, &(node, w)) in words.iter().enumerate() {
        for flag in PROCESS_FLAGS {
            let value = match w.strip_prefix(flag) {
                Some(rest) if rest.starts_with('=') => Some((node, &rest[1..])),
                Some("") if !flag.starts_with("trainer") => words.get(i + 1).copied(),
                _ => None,
            };
            if let Some((at, value)) = value
                && let Ok(n) = value.trim_matches(['"', '\'']).parse::<u64>()
            {
                claims.push((at, format!("`{flag}`"), n));
            }
        }
    }
    for (k, val) in &j.env.0 {
        if matches!(k.value.as_str(), "NPROC_PER_NODE" | "PET_NPROC_PER_NODE")
            && let Ok(n) = val.value.trim().parse::<u64>()
        {
            claims.push((val, format!("`{}`", k.value), n));
        }
    }
    let mut ok = true;
    for (at, what, n) in claims {
        if n != u64::from(gpus) {
            v.err(Wrong::Conflict,
                at,
                format!(
                    "job `{}` starts {n} processes per node ({what}) but each worker gets {gpus} GPUs: they would not find one GPU each",
                    j.name.value
                ),
            )
            .help(format!(
                "make them agree ({gpus}), or let torchrun count with `--nproc_per_node=gpu`"
            ));
            ok = false;
        }
    }
    ok
}
