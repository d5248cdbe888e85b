use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Object, PodTemplate, is_accelerator_resource};
use crate::quantity;
use crate::sched::template_pods;
use crate::yaml::Node;
use std::collections::HashMap;

declare_rule! {
    /// ## What it does
    /// Flags a GPU Deployment whose rolling update cannot start, because the namespace's
    /// ResourceQuota (`requests.nvidia.com/gpu`, or another accelerator) has no room for the extra
    /// pods a rollout starts first. The rollout starts `maxSurge` new pods (25 % of the replicas,
    /// rounded up, by default) before it stops any old one while `maxUnavailable` rounds to 0
    /// (fewer than 4 replicas by default). It is flagged when the GPUs of the namespace's
    /// Deployments and StatefulSets at their replica counts fit the quota, and adding the surge
    /// does not. A quota with `scopes` or a `scopeSelector`, a Deployment an autoscaler scales,
    /// and counts that are not written out are not judged; other workloads an autoscaler scales
    /// count at zero, so a finding never rests on a guess.
    ///
    /// ## Why is this bad?
    /// Quota admission refuses a pod whose requests exceed what is left. The new ReplicaSet never
    /// gets its pod, the old one is never scaled down, and every image or config change of the
    /// model server stalls until the Deployment's progress deadline reports it failed, while the
    /// old pods keep serving the old version.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v1
    /// kind: ResourceQuota
    /// metadata: {name: gpus, namespace: serving}
    /// spec:
    ///   hard: {requests.nvidia.com/gpu: "8"}
    /// ---
    /// apiVersion: apps/v1
    /// kind: Deployment
    /// metadata: {name: llm, namespace: serving}
    /// spec:
    ///   replicas: 1
    ///   template:
    ///     spec:
    ///       containers:
    ///         - name: vllm
    ///           resources:
    ///             limits: {nvidia.com/gpu: 8}
    /// ```
    ///
    /// ## Fix
    /// Stop an old pod before starting a new one:
    /// `strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}` (or
    /// `type: Recreate`), or leave the quota room for the surge.
    name: "gpu-rollout-exceeds-quota",
    category: "resources",
    kinds: &["Deployment", "ResourceQuota"],
    severity: Warning,
    summary: "a GPU Deployment's rolling update needs more GPUs than the namespace quota leaves",
    check: check,
}

/// A quota's cap on one accelerator in one namespace.
pub(super) struct Cap<'i, 'a> {
    pub quota: &'i Object<'a>,
    pub at: Node<'a>,
    pub hard: u64,
}

/// The tightest unscoped ResourceQuota cap per (namespace, accelerator resource). Quotas with
/// `scopes` or a `scopeSelector` apply to some pods only and are left out.
pub(super) fn quota_caps<'i, 'a>(
    ix: &'i crate::index::Index<'a>,
) -> HashMap<(&'a str, &'a str), Cap<'i, 'a>> {
    let mut caps: HashMap<(&str, &str), Cap> = HashMap::new();
    for q in ix.of_kind("ResourceQuota").filter(|o| o.group.is_empty()) {
        let (Some(ns), Some(spec)) = (q.namespace, q.spec()) else {
            continue;
        };
        if spec.get("scopes").is_some() || spec.get("scopeSelector").is_some() {
            continue;
        }
        for (key, _, v) in spec.get("hard").into_iter().flat_map(|h| h.entries()) {
            let Some(res) = key
                .strip_prefix("requests.")
                .filter(|r| is_accelerator_resource(r))
            else {
                continue;
            };
            let Some(hard) = v.as_str().and_then(whole) else {
                continue;
            };
            let tighter = caps.get(&(ns, res)).is_none_or(|c| hard < c.hard);
            if tighter {
                caps.insert(
                    (ns, res),
                    Cap {
                        quota: q,
                        at: v,
                        hard,
                    },
                );
            }
        }
    }
    caps
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    let caps = quota_caps(ix);
    if caps.is_empty() {
        return;
    }
    // The workloads an autoscaler scales, by (kind, name), with the autoscaler's namespace.
    let mut scaled: HashMap<(&str, &str), Vec<Option<&str>>> = HashMap::new();
    for s in ix
        .of_kind("HorizontalPodAutoscaler")
        .chain(ix.of_kind("ScaledObject"))
    {
        let Some(target) = s.spec().and_then(|sp| sp.get("scaleTargetRef")) else {
            continue;
        };
        let kind = target
            .get("kind")
            .and_then(Node::as_str)
            .unwrap_or("Deployment");
        if let Some(name) = target.get("name").and_then(Node::as_str) {
            scaled.entry((kind, name)).or_default().push(s.namespace);
        }
    }
    let autoscaled = |o: &Object| {
        o.name
            .and_then(|n| scaled.get(&(o.kind, n)))
            .is_some_and(|nss| nss.iter().any(|ns| ns.is_none() || *ns == o.namespace))
    };
    // What the namespace's long-running GPU workloads hold at their replica counts.
    let mut held: HashMap<(&str, &str), u64> = HashMap::new();
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let o = ix.owner(t);
        let (Some(ns), true) = (o.namespace, matches!(o.kind, "Deployment" | "StatefulSet")) else {
            continue;
        };
        if autoscaled(o) {
            continue;
        }
        let Some(pods) = template_pods(o, t) else {
            continue;
        };
        for (res, n) in per_pod(t) {
            if caps.contains_key(&(ns, res)) {
                let h = held.entry((ns, res)).or_default();
                *h = h.saturating_add(pods.saturating_mul(n));
            }
        }
    }
    for t in ix.templates.iter().filter(|t| t.requests_gpu()) {
        let o = ix.owner(t);
        let Some(ns) = o.namespace else { continue };
        if o.kind != "Deployment" || o.group != "apps" || autoscaled(o) {
            continue;
        }
        let Some(replicas) = template_pods(o, t).filter(|&r| r > 0) else {
            continue;
        };
        let strategy = o.spec().and_then(|s| s.get("strategy"));
        let Some((surge, unavailable)) = rollout(strategy, replicas) else {
            continue;
        };
        if surge == 0 || unavailable > 0 {
            continue;
        }
        for (res, n) in per_pod(t) {
            let (Some(cap), Some(&used)) = (caps.get(&(ns, res)), held.get(&(ns, res))) else {
                continue;
            };
            let extra = surge.saturating_mul(n);
            if used > cap.hard || used + extra <= cap.hard {
                continue;
            }
            let at = strategy.unwrap_or(o.anchor());
            let pods = if surge == 1 { "pod" } else { "pods" };
            out.push(
                cx.on(
                    o,
                    at,
                    format!(
                        "{} rolls out by starting {surge} new {pods} ({extra} `{res}`) before it stops an old one, but ResourceQuota `{}` allows {} `requests.{res}` in namespace `{ns}` and its GPU workloads already hold {used}: quota refuses the new {pods} and every rollout stalls",
                        o.describe(),
                        cap.quota.name_or_unnamed(),
                        cap.hard,
                    ),
                )
                .related(cap.quota.loc(cap.at), format!("the namespace's cap on `{res}`"))
                .help(format!(
                    "stop an old pod first: `strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 0, maxUnavailable: 1}}}}` (or `type: Recreate`), or raise the quota to {}",
                    used + extra
                )),
            );
        }
    }
}

/// A template's accelerators per pod: each container's request (else its limit), summed.
pub(super) fn per_pod<'a>(t: &PodTemplate<'a>) -> Vec<(&'a str, u64)> {
    let mut out: Vec<(&'a str, u64)> = Vec::new();
    for c in t.containers.iter().filter(|c| !c.init) {
        for (res, _) in c.accelerators() {
            let v = c
                .requests
                .and_then(|r| r.get(res))
                .or_else(|| c.limits.and_then(|l| l.get(res)))
                .and_then(Node::as_str)
                .and_then(whole);
            let Some(n) = v else { continue };
            match out.iter_mut().find(|(r, _)| *r == res) {
                Some((_, sum)) => *sum += n,
                None => out.push((res, n)),
            }
        }
    }
    out
}

/// The pods a rolling update adds and may take away at once, as the Deployment controller
/// resolves `maxSurge` (rounded up) and `maxUnavailable` (rounded down). `None`: `Recreate`, or
/// a value that is not written out.
pub(super) fn rollout(strategy: Option<Node<'_>>, replicas: u64) -> Option<(u64, u64)> {
    if strategy
        .and_then(|s| s.get("type"))
        .is_some_and(|t| t.as_str() != Some("RollingUpdate"))
    {
        return None;
    }
    let update = strategy.and_then(|s| s.get("rollingUpdate"));
    let resolve = |key: &str, up: bool| -> Option<u64> {
        let Some(v) = update.and_then(|u| u.get(key)) else {
            return Some(if up {
                replicas.div_ceil(4)
            } else {
                replicas / 4
            });
        };
        let s = v.as_str()?.trim();
        match s.strip_suffix('%') {
            Some(p) => {
                let p: u64 = p.parse().ok()?;
                let scaled = replicas * p;
                Some(if up {
                    scaled.div_ceil(100)
                } else {
                    scaled / 100
                })
            }
            None => s.parse().ok(),
        }
    };
    Some((
        resolve("maxSurge", true)?,
        resolve("maxUnavailable", false)?,
    ))
}

fn whole(s: &str) -> Option<u64> {
    if quantity::is_placeholder(s) {
        return None;
    }
    quantity::whole(s).and_then(|n| u64::try_from(n).ok())
}
