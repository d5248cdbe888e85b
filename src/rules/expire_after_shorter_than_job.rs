use super::{Ctx, template_anchor};
use crate::diag::{Diagnostic, Loc};
use crate::index::is_training_kind;
use crate::intent::Basis;
use crate::model::kinds::{Family, family};
use crate::model::{NodePool, Object, PodTemplate};
use crate::sched::GpuCapability;
use crate::yaml::Node;

const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";
/// A training run without a deadline is taken to run at least this long: a pool that replaces
/// its nodes sooner cuts most real runs.
const LONG_RUN_SECS: u64 = 24 * 3600;

declare_rule! {
    /// ## What it does
    /// Flags a GPU training pod template whose run outlasts the nodes of every NodePool it lands
    /// on:
    /// - it has an `activeDeadlineSeconds` (on the pod, the Job, a JobSet's replicated Job, a
    ///   CronJob's job template, a Kubeflow job's `runPolicy`, a RayJob) longer than the pools'
    ///   node lifetime, so a run allowed that long is cut before its deadline; or
    /// - it has no deadline, is training by strong evidence (a training operator's kind, or its
    ///   command, image, labels or name), and the pools replace their nodes in under 24 hours.
    ///
    /// A node's lifetime is the pool's `spec.template.spec.expireAfter` (720h when unset;
    /// `Never` never expires). Expiry is forceful in Karpenter v1: the node is drained when it
    /// expires, and a pod without `karpenter.sh/do-not-disrupt: "true"` is evicted then. With the
    /// annotation the drain waits for the pod, but only until the pool's `terminationGracePeriod`
    /// runs out: such a pod is cut at `expireAfter` + `terminationGracePeriod`, and never when the
    /// pool sets no `terminationGracePeriod`. A pod the annotation protects for a duration
    /// (`"30m"`) at least as long as its deadline counts as protected. When one pool the template
    /// lands on would let it finish, it is not flagged.
    ///
    /// ## Why is this bad?
    /// A node that expires under a training run takes the run with it: every rank of the gang
    /// restarts, and all the GPU time since the last checkpoint is lost. A deadline longer than
    /// the node lifetime says the run is expected to take that long, so it is not a rare event
    /// but the planned outcome; a pool that expires its nodes every few hours does the same to
    /// any real training run.
    ///
    /// ## Example
    /// ```yaml
    /// # NodePool `gpu-training`: expireAfter: 72h
    /// apiVersion: batch/v1
    /// kind: Job
    /// spec:
    ///   activeDeadlineSeconds: 432000   # 5 days: the node is replaced after 3
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: train
    ///           command: [torchrun, --nproc_per_node=8, train.py]
    ///           resources:
    ///             limits: {nvidia.com/gpu: 8}
    /// ```
    ///
    /// ## Fix
    /// Give the training pool a lifetime longer than its longest run (`expireAfter: 720h`, or
    /// `Never` with node rotation done between runs), or run long jobs on a pool of their own;
    /// with `karpenter.sh/do-not-disrupt: "true"` on the pods, a `terminationGracePeriod` longer
    /// than the run also lets it finish. Otherwise shorten the deadline and resume from
    /// checkpoints.
    name: "expire-after-shorter-than-job",
    category: "disruption",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a training job whose deadline or expected run outlasts the `expireAfter` of the NodePools it lands on",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        let Some(intent) = ix.classes.get(ti) else {
            continue;
        };
        if !t.requests_gpu() || !intent.is_training() {
            continue;
        }
        let owner = ix.owner(t);
        let deadline = deadline(owner, t);
        let strong = is_training_kind(owner) || intent.basis != Basis::Kind;
        if deadline.is_none() && !strong {
            continue;
        }
        let pools: Vec<usize> = ix
            .landing_pools(ti)
            .into_iter()
            .filter(|&p| ix.pools.capability[p] != GpuCapability::None)
            .collect();
        if pools.is_empty() {
            continue;
        }
        let run = deadline.map_or(LONG_RUN_SECS, |(s, _)| s);
        let protection = protection(t, run);
        // The pool that keeps the pod longest decides: flag only when even it cuts the run.
        let mut longest: Option<(usize, Lifetime)> = None;
        let mut finishes = false;
        for &p in &pools {
            match lifetime(&ix.nodepools[p], protection) {
                None => {
                    finishes = true;
                    break;
                }
                Some(l) => {
                    if l.secs >= run {
                        finishes = true;
                        break;
                    }
                    if longest.as_ref().is_none_or(|(_, b)| l.secs > b.secs) {
                        longest = Some((p, l));
                    }
                }
            }
        }
        if finishes {
            continue;
        }
        let Some((p, life)) = longest else {
            continue;
        };
        out.push(finding(
            cx,
            (ti, t),
            deadline,
            &ix.nodepools[p],
            &life,
            pools.len(),
        ));
    }
}

/// Whether `karpenter.sh/do-not-disrupt` holds expiry's drain back for the whole run.
#[derive(Clone, Copy, PartialEq)]
enum Protection {
    None,
    /// `"true"`, or a duration covering the whole run.
    Whole,
}

fn protection(t: &PodTemplate, run: u64) -> Protection {
    let Some((_, v)) = t.annotation(DO_NOT_DISRUPT) else {
        return Protection::None;
    };
    // A boolean `true` is rejected by the API server; other values protect nothing.
    match v.as_str().map(str::trim) {
        Some("true") if !matches!(v.yaml11(), Some(crate::yaml::Yaml11::Bool)) => Protection::Whole,
        Some(d) => match go_duration_secs(d) {
            // A duration protects the pod for that long after it starts: the whole run when it
            // lasts at least as long as the run can.
            Some(s) if s >= run => Protection::Whole,
            _ => Protection::None,
        },
        None => Protection::None,
    }
}

/// What bounds a node of the pool under a pod: its expiry, plus the grace Karpenter gives a
/// protected pod before deleting it.
struct Lifetime<'a> {
    secs: u64,
    expire: Option<Node<'a>>,
    expire_secs: u64,
    grace: Option<(Node<'a>, u64)>,
}

/// `None`: the pool never cuts the pod (no expiry, or a protected pod and no grace limit), or
/// its settings cannot be read (placeholders).
fn lifetime<'a>(pool: &NodePool<'a>, protection: Protection) -> Option<Lifetime<'a>> {
    let (expire_secs, expire) = expiry(pool)?;
    let grace = if protection == Protection::Whole {
        let node = pool
            .spec
            .at(&["template", "spec", "terminationGracePeriod"])?;
        let secs = go_duration_secs(node.as_str()?)?;
        Some((node, secs))
    } else {
        None
    };
    Some(Lifetime {
        secs: expire_secs.saturating_add(grace.map_or(0, |(_, s)| s)),
        expire,
        expire_secs,
        grace,
    })
}

/// The pool's node expiry in seconds and where it is written (`None` node: the default).
/// `None`: the nodes never expire, or the value cannot be read.
fn expiry<'a>(pool: &NodePool<'a>) -> Option<(u64, Option<Node<'a>>)> {
    let (after, node) = pool.expire_after()?;
    Some((go_duration_secs(&after)?, node))
}

/// Seconds in a Karpenter duration (`720h`, `1h30m`, `90s`; only h, m and s units).
fn go_duration_secs(s: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = match rest.as_bytes().first()? {
            b'h' => 3600,
            b'm' => 60,
            b's' => 1,
            _ => return None,
        };
        rest = &rest[1..];
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    Some(total)
}

/// The shortest `activeDeadlineSeconds` that bounds the template's pods, and its value node.
fn deadline<'a>(owner: &Object<'a>, t: &PodTemplate<'a>) -> Option<(u64, Node<'a>)> {
    let spec = owner.spec();
    let mut nodes: Vec<Node<'a>> = Vec::new();
    nodes.extend(t.spec.get("activeDeadlineSeconds"));
    match family(owner) {
        Some(Family::Job) => nodes.extend(spec.and_then(|s| s.get("activeDeadlineSeconds"))),
        Some(Family::Ray) if owner.kind == "RayJob" => {
            nodes.extend(spec.and_then(|s| s.get("activeDeadlineSeconds")))
        }
        Some(Family::CronJob) => {
            nodes.extend(spec.and_then(|s| s.at(&["jobTemplate", "spec", "activeDeadlineSeconds"])))
        }
        Some(Family::Kubeflow) => {
            nodes.extend(spec.and_then(|s| s.at(&["runPolicy", "activeDeadlineSeconds"])))
        }
        Some(Family::JobSet) => {
            // The replicated Job that holds this pod template.
            let job = spec
                .and_then(|s| s.get("replicatedJobs"))
                .into_iter()
                .flat_map(|n| n.items())
                .filter_map(|rj| rj.at(&["template", "spec"]))
                .find(|js| js.at(&["template", "spec"]).is_some_and(|ps| ps.is(t.spec)));
            nodes.extend(job.and_then(|js| js.get("activeDeadlineSeconds")));
        }
        _ => {}
    }
    nodes
        .into_iter()
        .filter_map(|n| {
            let v = n.as_str()?.trim();
            let secs: u64 = v.parse().ok()?;
            (secs > 0).then_some((secs, n))
        })
        .min_by_key(|(s, _)| *s)
}

/// `3456000` seconds as `960h`, `5400` as `1h30m`.
fn human(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

fn finding<'a>(
    cx: &Ctx<'_, 'a>,
    (ti, t): (usize, &PodTemplate<'a>),
    deadline: Option<(u64, Node<'_>)>,
    pool: &NodePool,
    life: &Lifetime,
    landing: usize,
) -> Diagnostic {
    let ix = cx.ix;
    let owner = ix.owner(t);
    let expires = match life.expire {
        Some(n) => format!("`{}: {}`", key_name(pool), n.as_str().unwrap_or_default()),
        None => format!("`expireAfter` defaults to {}", human(life.expire_secs)),
    };
    let pools = if landing > 1 {
        format!(
            "NodePool `{}` (the longest-lived of the {landing} it lands on)",
            pool.name
        )
    } else {
        format!("NodePool `{}`", pool.name)
    };
    let cut = match life.grace {
        Some((_, g)) => format!(
            "{pools} deletes its pods {} into a node's life: its nodes expire after {} ({expires}) and `karpenter.sh/do-not-disrupt` holds the drain back only for the pool's `terminationGracePeriod` ({})",
            human(life.secs),
            human(life.expire_secs),
            human(g)
        ),
        None => format!(
            "the nodes of {pools} expire after {} ({expires}), and expiry evicts pods that do not carry `karpenter.sh/do-not-disrupt: \"true\"`",
            human(life.expire_secs)
        ),
    };
    let intent = &ix.classes[ti];
    let evidence = &intent.evidence;
    let (loc, message) = match deadline {
        Some((secs, node)) => (
            t.loc(node),
            format!(
                "{} may run for {} (`activeDeadlineSeconds: {secs}`), but {cut}: the run is killed before its deadline ({evidence})",
                owner.describe(),
                human(secs),
            ),
        ),
        None => {
            let at = cx
                .evidence_loc(t, intent)
                .or_else(|| template_anchor(owner, t).map(|n| t.loc(n)))
                .unwrap_or_else(|| owner.loc(owner.anchor()));
            (
                at,
                format!(
                    "{} trains with no deadline, but {cut}: a run longer than {} restarts from its last checkpoint every time ({evidence})",
                    owner.describe(),
                    human(life.secs),
                ),
            )
        }
    };
    let mut d = cx
        .at(loc, message)
        .object(Some(owner.obj_ref()))
        .related(
            pool_loc(pool, life.expire),
            match life.expire {
                Some(_) => format!("NodePool `{}` expires its nodes here", pool.name),
                None => format!(
                    "NodePool `{}` sets no `expireAfter`: its nodes expire after 720h",
                    pool.name
                ),
            },
        )
        .help(format!(
            "give NodePool `{}` an `expireAfter` longer than the run (or `Never`), or run this job on a pool whose nodes outlive it; otherwise shorten the run and resume from checkpoints",
            pool.name
        ));
    if let Some((g, _)) = life.grace {
        d = d.related(
            pool.loc(g),
            format!(
                "NodePool `{}` deletes protected pods after this grace period",
                pool.name
            ),
        );
    }
    d
}

/// The field that expires the pool's nodes (a v1alpha5 Provisioner's is a number of seconds).
fn key_name(pool: &NodePool) -> &'static str {
    if pool.legacy_provisioner {
        "ttlSecondsUntilExpired"
    } else {
        "expireAfter"
    }
}

fn pool_loc(pool: &NodePool, node: Option<Node<'_>>) -> Loc {
    pool.loc(node.unwrap_or(pool.anchor))
}
