//! `gpuops why`: where one workload's pods may land, and what stops them.
//!
//! Per pod template: a verdict, the NodePools that pass (and the closest that fail) with the
//! deciding YAML on both sides, the Kueue route, and the instance types Karpenter could pick.
//! The answers come from the same scheduling model the rules use ([`crate::sched`]).

use crate::catalog::Instance;
use crate::config::Settings;
use crate::diag::Loc;
use crate::index::Index;
use crate::model::Object;
use crate::sched::{self, GpuCapability, PodConstraints};
use crate::source::SourceFile;
use std::fmt::Write;

mod report;
mod route;
mod sharing;
mod text;

use route::route;

pub use report::*;
pub use text::human;

/// Passing pools listed before "and N more".
const MAX_PASSING: usize = 20;
/// Failing pools listed (the closest ones).
const MAX_FAILING: usize = 5;
/// Instance types listed.
const MAX_INSTANCES: usize = 5;

/// What the user asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file, optionally a line in it (the object whose document holds that line).
    File { path: String, line: Option<u32> },
    /// `Kind/name` or `Kind/namespace/name`; the kind is case-insensitive.
    Name {
        kind: String,
        namespace: Option<String>,
        name: String,
    },
}

impl Target {
    /// Reads `file[:line]` or `Kind/[namespace/]name`; `is_file` says whether a path exists.
    pub fn parse(s: &str, is_file: impl Fn(&str) -> bool) -> Target {
        let file = |path: &str, line| Target::File {
            path: crate::source::display_path(std::path::Path::new(path)),
            line,
        };
        if is_file(s) {
            return file(s, None);
        }
        if let Some((p, l)) = s.rsplit_once(':')
            && let Ok(n) = l.parse::<u32>()
            && is_file(p)
        {
            return file(p, Some(n));
        }
        // A kind is one word; anything else (`dir/file.yaml`, `a.yaml:3`) is a path.
        let parts: Vec<&str> = s.split('/').collect();
        let kind = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric());
        let pathlike = s.contains(':') || [".yaml", ".yml", ".json"].iter().any(|e| s.ends_with(e));
        if pathlike {
            return file(s.split(':').next().unwrap_or(s), None);
        }
        match parts.as_slice() {
            [k, n] if kind(k) => Target::Name {
                kind: k.to_string(),
                namespace: None,
                name: n.to_string(),
            },
            [k, ns, n] if kind(k) => Target::Name {
                kind: k.to_string(),
                namespace: Some(ns.to_string()),
                name: n.to_string(),
            },
            _ => file(s, None),
        }
    }
}

fn at(ix: &Index, loc: Loc) -> String {
    let p = ix.files[loc.file].pos(loc.span.start());
    format!("{}:{}:{}", ix.path(loc), p.line, p.col)
}

/// Explains the target: every matching object of the first cluster that has one.
pub fn explain(
    files: &[SourceFile],
    settings: &Settings,
    target: &Target,
) -> Result<Report, NotFound> {
    let mut names: Vec<String> = Vec::new();
    for scope in crate::clusters(files, settings) {
        let ix = Index::build_for(files, scope.files.clone(), &scope.settings);
        let chosen = select(&ix, target);
        if !chosen.is_empty() {
            let objects = chosen.into_iter().map(|oi| object(&ix, oi)).collect();
            return Ok(Report { objects });
        }
        names.extend(
            (0..ix.objects.len())
                .filter(|&oi| !ix.templates_of(oi).is_empty())
                .map(|oi| reference(&ix.objects[oi])),
        );
    }
    Err(not_found(target, files, &names))
}

/// `Kind/namespace/name` (or `Kind/name`).
fn reference(o: &Object) -> String {
    match o.namespace {
        Some(ns) => format!("{}/{ns}/{}", o.kind, o.name_or_unnamed()),
        None => format!("{}/{}", o.kind, o.name_or_unnamed()),
    }
}

fn not_found(target: &Target, files: &[SourceFile], names: &[String]) -> NotFound {
    let closest = |asked: &str, among: &mut dyn Iterator<Item = String>| {
        among
            .map(|n| {
                (
                    crate::text::edit_distance(&asked.to_lowercase(), &n.to_lowercase()),
                    n,
                )
            })
            .filter(|(d, n)| *d <= n.len() / 3 + 2)
            .min()
            .map(|(_, n)| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default()
    };
    let message = match target {
        Target::Name {
            kind,
            namespace,
            name,
        } => {
            let asked = match namespace {
                Some(ns) => format!("{kind}/{ns}/{name}"),
                None => format!("{kind}/{name}"),
            };
            // Names matter more than kinds and namespaces: compare names, suggest references.
            let by_name = names
                .iter()
                .map(|n| {
                    (
                        crate::text::edit_distance(name, n.rsplit('/').next().unwrap_or(n)),
                        n,
                    )
                })
                .filter(|(d, _)| *d <= name.len() / 3 + 1)
                .min()
                .map(|(_, n)| format!(" (did you mean `{n}`?)"));
            let hint = by_name.unwrap_or_else(|| closest(&asked, &mut names.iter().cloned()));
            format!("no object with pod templates named `{asked}`{hint}")
        }
        Target::File { path, line } => {
            let known = files.iter().any(|f| f.path == *path);
            let what = match line {
                Some(l) => format!("{path}:{l}"),
                None => path.clone(),
            };
            if known {
                format!("no object with pod templates at `{what}`")
            } else {
                let hint = closest(path, &mut files.iter().map(|f| f.path.clone()));
                format!("`{path}` is not among the files read{hint}")
            }
        }
    };
    NotFound { message }
}

/// The objects (with pod templates) the target names.
fn select(ix: &Index, target: &Target) -> Vec<usize> {
    let with_templates = |oi: &usize| !ix.templates_of(*oi).is_empty();
    match target {
        Target::Name {
            kind,
            namespace,
            name,
        } => (0..ix.objects.len())
            .filter(|&oi| {
                let o = &ix.objects[oi];
                o.kind.eq_ignore_ascii_case(kind)
                    && o.name == Some(name.as_str())
                    && namespace
                        .as_deref()
                        .is_none_or(|ns| o.namespace.is_none_or(|on| on == ns))
            })
            .filter(with_templates)
            .collect(),
        Target::File { path, line } => {
            let in_file: Vec<usize> = (0..ix.objects.len())
                .filter(|&oi| ix.files[ix.objects[oi].file].path == *path)
                .collect();
            match line {
                None => in_file.into_iter().filter(with_templates).collect(),
                // Objects come in document order: the last one starting at or before the line
                // holds it (a `---` or comment line belongs to the one above).
                Some(l) => in_file
                    .into_iter()
                    .rfind(|&oi| {
                        let o = &ix.objects[oi];
                        ix.files[o.file].pos(o.root.span().start()).line <= *l
                    })
                    .filter(with_templates)
                    .into_iter()
                    .collect(),
            }
        }
    }
}

fn object(ix: &Index, oi: usize) -> ObjectReport {
    let o = &ix.objects[oi];
    let first = ix.templates.iter().position(|t| t.owner == oi).unwrap_or(0);
    let templates = (first..first + ix.templates_of(oi).len())
        .map(|ti| template(ix, ti))
        .collect();
    ObjectReport {
        object: reference(o),
        kind: o.kind.to_string(),
        namespace: o.namespace.map(str::to_string),
        name: o.name_or_unnamed().to_string(),
        location: at(ix, o.loc(o.anchor())),
        templates,
    }
}

/// One variant's view of a pool: the verdict and the flavor it runs under.
struct Seen<'a> {
    pool: usize,
    flavor: Option<usize>,
    verdict: sched::Verdict<'a>,
    constraints: std::sync::Arc<PodConstraints<'a>>,
}

fn template(ix: &Index, ti: usize) -> TemplateReport {
    let t = &ix.templates[ti];
    // GPUs of DRA claims too: they come from the pod's node. A claim of unknown count gives at
    // least one device, and the total is shown as "at least".
    let dra: u64 = t.dra_gpus().iter().map(|g| g.count.unwrap_or(1)).sum();
    let gpus = t.gpus_per_pod() + dra;
    let wants_gpu = t.requests_gpu();
    let eks = ix.settings.eks;
    // The ways the pod may run: the flavors Kueue may assign; with none, its own constraints
    // (the pool table then shows what would happen were it admitted).
    let mut ways: Vec<(Option<usize>, std::sync::Arc<PodConstraints>)> =
        crate::index::assignable_variants(ix, ti)
            .into_iter()
            .map(|v| (v.flavor, v.constraints.clone()))
            .collect();
    if ways.is_empty() {
        ways.push((None, t.shared_constraints()));
    }
    let usable = |p: usize| !wants_gpu || ix.pools.capability[p] != GpuCapability::None;

    // Passing pools, each with the first way that fits it.
    let mut passing: Vec<Seen> = Vec::new();
    // Pools whose labels fit but whose taints do not: the closest failures.
    let mut tainted: Vec<Seen> = Vec::new();
    for (flavor, c) in &ways {
        for p in ix.pools.label_fits(c, &ix.nodepools) {
            let p = p as usize;
            if !usable(p) || passing.iter().any(|s| s.pool == p) {
                continue;
            }
            let verdict = sched::fit(c, &ix.nodepools[p], eks);
            let seen = Seen {
                pool: p,
                flavor: *flavor,
                verdict,
                constraints: c.clone(),
            };
            if seen.verdict.fits() {
                tainted.retain(|s| s.pool != p);
                passing.push(seen);
            } else if !tainted.iter().any(|s| s.pool == p) {
                tainted.push(seen);
            }
        }
    }
    passing.sort_by_key(|s| s.pool);
    let mut failing: Vec<Seen> = tainted.into_iter().take(MAX_FAILING).collect();
    // Then the pools with the fewest label issues, under the first way.
    if let Some((flavor, c)) = ways.first() {
        while failing.len() < MAX_FAILING {
            let taken = |p: usize| {
                passing.iter().any(|s| s.pool == p) || failing.iter().any(|s| s.pool == p)
            };
            let Some((p, _)) = ix
                .pools
                .closest(c, &ix.nodepools, |p| usable(p) && !taken(p), true)
            else {
                break;
            };
            failing.push(Seen {
                pool: p,
                flavor: *flavor,
                verdict: sched::fit(c, &ix.nodepools[p], eks),
                constraints: c.clone(),
            });
        }
    }

    let route = route(ix, ti);
    let instances = instances(ix, &passing, pod_needs(&ix.templates[ti]));
    let verdict = match ix.elsewhere.get(ti).copied().flatten() {
        // The queue's admission check decides where its pods run: the pools below only show
        // what this cluster would do.
        Some(gate) if route.as_ref().is_none_or(|r| r.blocked.is_none()) => Verdict {
            lands: true,
            summary: format!(
                "runs on {}: its ClusterQueue's admission check places it, not this cluster's NodePools",
                gate.what()
            ),
        },
        _ => verdict(ix, route.as_ref(), &passing, failing.first(), &instances),
    };
    let more_pools = passing.len().saturating_sub(MAX_PASSING);
    // The pod's side of a taint check: its tolerations, or the pod spec that has none.
    let tolerations = at(
        ix,
        t.spec
            .get("tolerations")
            .map_or(t.loc(t.spec), |n| t.loc(n)),
    );
    let pools = passing
        .iter()
        .take(MAX_PASSING)
        .chain(&failing)
        .map(|s| pool_row(ix, s, gpus, &tolerations))
        .collect();
    let landing: Vec<usize> = passing.iter().take(MAX_PASSING).map(|s| s.pool).collect();
    let sharing = sharing::rows(ix, t, &landing);
    TemplateReport {
        path: t.path.to_string(),
        location: at(ix, t.loc(t.spec)),
        gpus_per_pod: gpus,
        gpus_at_least: t.dra_devices() == Some(crate::model::dra::Devices::Unknown),
        verdict,
        pools,
        more_pools,
        route,
        instances,
        sharing,
    }
}

fn flavor_name(ix: &Index, f: Option<usize>) -> Option<String> {
    f.and_then(|f| ix.flavors.get(f))
        .map(|f| f.name.to_string())
}

fn verdict(
    ix: &Index,
    route: Option<&Route>,
    passing: &[Seen],
    closest: Option<&Seen>,
    instances: &[InstanceRow],
) -> Verdict {
    if let Some(blocked) = route.and_then(|r| r.blocked.as_ref()) {
        return Verdict {
            lands: false,
            summary: format!("Kueue: {blocked}"),
        };
    }
    if let Some(first) = passing.first() {
        let mut s = format!("lands on NodePool `{}`", ix.nodepools[first.pool].name);
        if passing.len() > 1 {
            let _ = write!(s, " (or {} more)", passing.len() - 1);
        }
        if let Some(f) = flavor_name(ix, first.flavor) {
            let _ = write!(s, " via flavor `{f}`");
        }
        match instances.first() {
            Some(InstanceRow {
                instance_type,
                price_usd_hour: Some(p),
                ..
            }) => {
                let _ = write!(
                    s,
                    "; cheapest instance {instance_type} (${p:.2}/h on demand)"
                );
            }
            Some(i) => {
                let _ = write!(
                    s,
                    "; cheapest instance {} (no price known)",
                    i.instance_type
                );
            }
            None => {}
        }
        return Verdict {
            lands: true,
            summary: s,
        };
    }
    let summary = match closest {
        None if ix.nodepools.is_empty() => "no NodePool in the files read".to_string(),
        None => "no NodePool can launch a GPU node for it".to_string(),
        Some(s) => {
            let pool = ix.nodepools[s.pool].name;
            if let Some(issue) = s.verdict.labels.first() {
                let req = s
                    .constraints
                    .base
                    .iter()
                    .chain(s.constraints.terms.iter().flatten())
                    .find(|r| r.loc == issue.pod)
                    .map_or_else(|| issue.key.clone(), |r| r.describe());
                let sets_key = |p: &crate::model::NodePool| {
                    p.labels.iter().any(|(k, _, _)| *k == issue.key)
                        || p.requirements.iter().any(|r| r.key == issue.key)
                };
                let gpu_pools = (0..ix.nodepools.len())
                    .filter(|&p| ix.pools.capability[p] != GpuCapability::None);
                if issue.pool.is_none() && !gpu_pools.clone().any(|p| sets_key(&ix.nodepools[p])) {
                    format!("no NodePool: `{req}` is a label no GPU pool sets (closest: `{pool}`)")
                } else {
                    format!("no NodePool: `{req}`: {} (closest: `{pool}`)", issue.reason)
                }
            } else if let Some(t) = s.verdict.untolerated.first() {
                format!("does not tolerate `{}` of `{pool}`", t.display())
            } else {
                format!("no NodePool fits (closest: `{pool}`)")
            }
        }
    };
    Verdict {
        lands: false,
        summary,
    }
}

fn pool_row(ix: &Index, s: &Seen, gpus: u64, tolerations: &str) -> PoolRow {
    let pool = &ix.nodepools[s.pool];
    let pool_obj = &ix.objects[pool.obj];
    let mut checks = label_checks(ix, s);
    let eks_note = if s.verdict.eks_only.is_empty() {
        String::new()
    } else {
        let ts: Vec<String> = s.verdict.eks_only.iter().map(|t| t.display()).collect();
        format!(
            " (tolerated by the ExtendedResourceToleration admission plugin: {})",
            ts.join(", ")
        )
    };
    if s.verdict.untolerated.is_empty() {
        checks.push(Check {
            check: "taints",
            ok: true,
            detail: format!("ok{eks_note}"),
            pod: None,
            flavor: None,
            pool: None,
        });
    } else {
        checks.extend(s.verdict.untolerated.iter().map(|t| Check {
            check: "taints",
            ok: false,
            detail: format!("untolerated `{}`{eks_note}", t.display()),
            pod: Some(tolerations.to_string()),
            flavor: None,
            pool: Some(at(ix, pool_obj.loc(t.node))),
        }));
    }
    // Another provider's pool: the catalog does not know its instances, so nothing is judged.
    let known = pool.uses_aws_catalog();
    let max = known.then(|| sched::max_gpus_per_node(pool)).flatten();
    let gpus_ok = gpus == 0 || !known || max.is_some_and(|m| m >= gpus);
    checks.push(Check {
        check: "gpus",
        ok: gpus_ok,
        detail: match max {
            Some(m) => format!("{gpus}/{m}"),
            None if !known => format!("{gpus}/unknown"),
            None => format!("{gpus}/none"),
        },
        pod: None,
        flavor: None,
        pool: None,
    });
    PoolRow {
        name: pool.name.to_string(),
        location: at(ix, pool.loc(pool.anchor)),
        fits: s.verdict.fits(),
        flavor: flavor_name(ix, s.flavor),
        capacity_types: pool
            .capacity_types()
            .into_iter()
            .map(str::to_string)
            .collect(),
        max_gpus_per_node: max,
        checks,
    }
}

/// The label checks of a pool: one row per problem. The same requirement from the pod's
/// selector and from the flavor Kueue injects is one row with both places, each named for what
/// it is.
fn label_checks(ix: &Index, s: &Seen) -> Vec<Check> {
    let pool = &ix.nodepools[s.pool];
    if s.verdict.labels.is_empty() {
        return vec![Check {
            check: "labels",
            ok: true,
            detail: "ok".into(),
            pod: None,
            flavor: None,
            pool: None,
        }];
    }
    let flavor_obj = s
        .flavor
        .and_then(|f| ix.flavors.get(f))
        .map(|f| &ix.objects[f.obj]);
    let in_flavor = |l: Loc| {
        flavor_obj.is_some_and(|o| {
            let span = o.root.span();
            l.file == o.file && span.start() <= l.span.start() && l.span.end() <= span.end()
        })
    };
    let mut checks: Vec<Check> = Vec::new();
    for i in &s.verdict.labels {
        let detail = format!("`{}`: {}", i.key, i.reason);
        // A label the pool never sets has no field of its own: point at the pool.
        let pool_side = Some(at(ix, i.pool.unwrap_or_else(|| pool.loc(pool.anchor))));
        let side = Some(at(ix, i.pod));
        let from_flavor = in_flavor(i.pod);
        let same = checks.iter_mut().find(|c| {
            c.detail == detail
                && c.pool == pool_side
                && if from_flavor {
                    c.flavor.is_none()
                } else {
                    c.pod.is_none()
                }
        });
        match same {
            Some(c) if from_flavor => c.flavor = side,
            Some(c) => c.pod = side,
            None => checks.push(Check {
                check: "labels",
                ok: false,
                detail,
                pod: if from_flavor { None } else { side.clone() },
                flavor: if from_flavor { side } else { None },
                pool: pool_side,
            }),
        }
    }
    checks
}

/// The CPU (in thousandths of a core) and memory (in thousandths of a byte) one pod asks for:
/// its containers' requests (a limit where no request is written) added up, or its largest
/// init container's if that is more. Values that do not parse count as nothing.
fn pod_needs(t: &crate::model::PodTemplate<'_>) -> (i128, i128) {
    let of = |c: crate::yaml::Node<'_>, r: &str| {
        let res = c.get("resources");
        res.and_then(|x| x.at(&["requests", r]))
            .or_else(|| res.and_then(|x| x.at(&["limits", r])))
            .and_then(|q| q.as_str())
            .and_then(crate::quantity::parse)
            .map_or(0, |m| m.0.max(0))
    };
    let list = |key: &str| t.spec.get(key).into_iter().flat_map(|l| l.items());
    let mut need = (0, 0);
    for c in list("containers") {
        need.0 += of(c, "cpu");
        need.1 += of(c, "memory");
    }
    for c in list("initContainers") {
        need.0 = need.0.max(of(c, "cpu"));
        need.1 = need.1.max(of(c, "memory"));
    }
    need
}

/// Instance types the passing pools may launch for the pod, cheapest first: those with the
/// CPUs and memory the pod asks for (what the node keeps for itself is not known here).
fn instances(ix: &Index, passing: &[Seen], (cpu, memory): (i128, i128)) -> Vec<InstanceRow> {
    let fits = |i: &Instance| {
        i128::from(i.vcpu) * 1000 >= cpu && i128::from(i.memory_mib) * 1024 * 1024 * 1000 >= memory
    };
    let mut found: Vec<(&'static Instance, Vec<String>)> = Vec::new();
    for s in passing {
        let pool = &ix.nodepools[s.pool];
        for i in sched::candidate_instances(&s.constraints, pool)
            .into_iter()
            .filter(|i| fits(i))
        {
            match found
                .iter_mut()
                .find(|(f, _)| f.instance_type == i.instance_type)
            {
                Some((_, pools)) => {
                    if !pools.iter().any(|p| p == pool.name) {
                        pools.push(pool.name.to_string());
                    }
                }
                None => found.push((i, vec![pool.name.to_string()])),
            }
        }
    }
    // Unknown prices last; then by name so the order is stable.
    found.sort_by(|(a, _), (b, _)| {
        let price = |i: &Instance| i.price_usd_hour.unwrap_or(f64::INFINITY);
        price(a)
            .total_cmp(&price(b))
            .then_with(|| a.instance_type.cmp(b.instance_type))
    });
    found
        .into_iter()
        .take(MAX_INSTANCES)
        .map(|(i, pools)| InstanceRow {
            instance_type: i.instance_type.to_string(),
            gpus: i.gpu_count,
            gpu_name: i.gpu_name.to_string(),
            price_usd_hour: i.price_usd_hour,
            pools,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn targets_are_files_or_references() {
        let none = |_: &str| false;
        assert_eq!(
            Target::parse("job/ml/train", none),
            Target::Name {
                kind: "job".into(),
                namespace: Some("ml".into()),
                name: "train".into()
            }
        );
        assert!(matches!(
            Target::parse("deploy/x.yaml", none),
            Target::File { line: None, .. }
        ));
        let yes = |p: &str| p == "a/b.yaml";
        assert_eq!(
            Target::parse("a/b.yaml:12", yes),
            Target::File {
                path: "a/b.yaml".into(),
                line: Some(12)
            }
        );
    }
}
