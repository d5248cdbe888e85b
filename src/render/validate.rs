//! Semantic validation of a typed profile: names, references between classes, teams and jobs,
//! quotas against ceilings, GPU kinds against the catalog. Every problem is collected.

use super::platform::{
    AmiFamily, ClassSpec, ClusterSpec, GpuSelector, JobSpec, Platform, TeamSpec,
};
use super::profile::{Class, ClassType, DevicePlugin, Job, Profile, Team, Tier};
use super::{ProfileProblem, span_of};
use crate::catalog;
use crate::yaml::Span;
use serde_saphyr::Spanned;

/// Default seconds a worker gets to checkpoint. Spot gives a 120-second notice, but the grace
/// period only starts when Karpenter has read the notice and drained the node: keep a margin.
pub const DEFAULT_GRACE_SECONDS: u32 = 90;
const SPOT_NOTICE_SECONDS: u32 = 120;

/// The least grace a pod that can land on spot may have: the lint rule's default minimum
/// (`spot-termination-grace-too-short`), so that rendered output passes the self-check.
fn spot_min_grace_seconds() -> u32 {
    let min = crate::config::Settings::default().spot_min_grace_seconds;
    u32::try_from(min).unwrap_or(SPOT_NOTICE_SECONDS)
}

struct V<'t> {
    text: &'t str,
    out: Vec<ProfileProblem>,
}

impl V<'_> {
    fn at<T>(&self, s: &Spanned<T>) -> Span {
        span_of(self.text, s)
    }
    fn err<T>(&mut self, at: &Spanned<T>, message: impl Into<String>) -> &mut ProfileProblem {
        let span = self.at(at);
        self.out.push(ProfileProblem {
            span,
            message: message.into(),
            help: None,
            related: Vec::new(),
        });
        let n = self.out.len() - 1;
        &mut self.out[n]
    }
    fn dns_label(&mut self, s: &Spanned<String>, what: &str, max: usize) -> bool {
        match dns_label_problem(&s.value, max) {
            None => true,
            Some(why) => {
                self.err(s, format!("{what} `{}` is not a valid name: it {why}", s.value)).help =
                    Some("names become Kubernetes object names and labels: lowercase letters, digits and `-`".into());
                false
            }
        }
    }
}

impl ProfileProblem {
    fn help(&mut self, h: impl Into<String>) -> &mut Self {
        self.help = Some(h.into());
        self
    }
    fn related(&mut self, span: Span, m: impl Into<String>) -> &mut Self {
        self.related.push((span, m.into()));
        self
    }
}

/// Why `s` is not a DNS label of at most `max` characters, if it is not.
pub fn dns_label_problem(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("is empty".into());
    }
    if s.len() > max {
        return Some(format!("is {} characters long; at most {max} fit", s.len()));
    }
    let ok_chars = s
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ends = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !ok_chars || !ends(s.bytes().next()) || !ends(s.bytes().last()) {
        return Some("may hold only lowercase letters, digits and `-`, and must start and end with a letter or digit".into());
    }
    None
}

fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|p| dns_label_problem(p, 63).is_none())
}

/// Karpenter durations: digits with s, m or h units, repeated (`90m`, `1h30m`).
fn is_duration(s: &str) -> bool {
    let mut digits = 0;
    let mut groups = 0;
    for c in s.chars() {
        match c {
            '0'..='9' => digits += 1,
            's' | 'm' | 'h' if digits > 0 => {
                digits = 0;
                groups += 1;
            }
            _ => return false,
        }
    }
    digits == 0 && groups > 0
}

fn is_budget(s: &str) -> bool {
    match s.strip_suffix('%') {
        Some(p) => {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|n| n <= 100)
        }
        None => !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()),
    }
}

fn is_volume_size(s: &str) -> bool {
    let num_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(num_end);
    !num.is_empty() && !num.starts_with('0') && matches!(unit, "Gi" | "G" | "Ti" | "T")
}

fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (crate::rules::edit_distance(&w, c), c))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, c)| c)
}

/// The names once each, in order.
fn unique<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n);
        }
    }
    out
}

fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    closest(word, candidates.iter().copied())
        .map(|c| format!("did you mean `{c}`? "))
        .unwrap_or_default()
}

pub(super) fn validate(p: &Profile, text: &str) -> Result<Platform, Vec<ProfileProblem>> {
    let mut v = V {
        text,
        out: Vec::new(),
    };
    let cluster = cluster(&mut v, p);
    let device_plugin = device_plugin(&mut v, p, cluster.ami_family);
    let mut classes: Vec<Option<ClassSpec>> = Vec::new();
    for (i, c) in p.classes.value.iter().enumerate() {
        let dup = p.classes.value[..i]
            .iter()
            .find(|o| o.name.value == c.name.value);
        if let Some(first) = dup {
            let first_span = v.at(&first.name);
            v.err(
                &c.name,
                format!("class `{}` is defined twice", c.name.value),
            )
            .related(first_span, "first defined here")
            .help("class names must be unique");
            classes.push(None);
            continue;
        }
        classes.push(class(&mut v, c, cluster.ami_family));
    }
    if p.classes.value.is_empty() {
        v.err(
            &p.classes,
            "`classes` is empty: a platform needs at least one workload class",
        );
    }
    let teams = teams(&mut v, p, &classes);
    let jobs = jobs(&mut v, p, &classes, &teams);
    if v.out.is_empty() {
        Ok(Platform {
            cluster,
            device_plugin,
            classes: classes.into_iter().flatten().collect(),
            teams: teams.into_iter().flatten().collect(),
            jobs,
        })
    } else {
        Err(v.out)
    }
}

fn cluster(v: &mut V, p: &Profile) -> ClusterSpec {
    let c = &p.cluster;
    if c.name.value.is_empty()
        || c.name.value.len() > 100
        || !c
            .name
            .value
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
    {
        v.err(
            &c.name,
            format!("cluster name `{}` is not an EKS cluster name", c.name.value),
        )
        .help("1 to 100 letters, digits, `-` and `_`");
    }
    let region = &c.region.value;
    let region_ok = {
        let parts: Vec<&str> = region.split('-').collect();
        parts.len() >= 3
            && parts[0].len() == 2
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
            && parts
                .last()
                .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
    };
    if !region_ok {
        v.err(&c.region, format!("`{region}` is not an AWS region"))
            .help("e.g. us-east-1, eu-west-2");
    }
    if c.zones.value.is_empty() {
        v.err(
            &c.zones,
            "`zones` is empty: list the availability zones GPU nodes may use",
        );
    }
    for (i, z) in c.zones.value.iter().enumerate() {
        if let Some(first) = c.zones.value[..i].iter().find(|o| o.value == z.value) {
            let fs = v.at(first);
            v.err(z, format!("zone `{}` is listed twice", z.value))
                .related(fs, "first listed here");
            continue;
        }
        let in_region = z
            .value
            .strip_prefix(region.as_str())
            .and_then(|rest| rest.chars().next())
            .is_some_and(|ch| ch.is_ascii_lowercase() || ch == '-');
        if region_ok && !in_region {
            v.err(z, format!("zone `{}` is not in region `{region}`", z.value))
                .help(format!("zones of {region} look like {region}a, {region}b"));
        }
    }
    let role = &c.node_role.value;
    if role.is_empty()
        || role.len() > 64
        || !role
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "+=,.@-_".contains(ch))
    {
        v.err(&c.node_role, format!("`{role}` is not an IAM role name"))
            .help("the role's name (not its ARN): up to 64 letters, digits and +=,.@-_");
    }
    let discovery_tag = match &c.discovery_tag {
        Some(t) => {
            if t.value.trim().is_empty() {
                v.err(t, "`discoveryTag` is empty");
            }
            t.value.clone()
        }
        None => c.name.value.clone(),
    };
    let alias = &c.ami_alias.value;
    let mut family = AmiFamily::Al2023;
    match alias.split_once('@') {
        Some((fam, ver)) if !ver.is_empty() => {
            match fam {
                "al2023" => family = AmiFamily::Al2023,
                "bottlerocket" => family = AmiFamily::Bottlerocket,
                _ => {
                    v.err(&c.ami_alias, format!("AMI family `{fam}` cannot run the GPU classes"))
                        .help("use al2023 or bottlerocket; Karpenter picks their NVIDIA variants for GPU instances");
                }
            }
            if ver == "latest" {
                v.err(&c.ami_alias, format!("`{alias}` is not pinned: every AMI release would drift and replace every GPU node"))
                    .help(format!("pin a version, e.g. `{fam}@v20250715` (al2023) or `bottlerocket@v1.42.0`"));
            } else if alias.len() > 30 {
                v.err(
                    &c.ami_alias,
                    format!("`{alias}` is longer than the 30 characters Karpenter accepts"),
                );
            } else if !fam.chars().all(|ch| ch.is_ascii_alphanumeric()) {
                v.err(
                    &c.ami_alias,
                    format!("`{alias}` is not a Karpenter AMI alias"),
                );
            }
        }
        _ => {
            v.err(&c.ami_alias, format!("`{alias}` is not an AMI alias"))
                .help("write family@version, e.g. `al2023@v20250715` or `bottlerocket@v1.42.0`");
        }
    }
    ClusterSpec {
        name: c.name.value.clone(),
        region: region.clone(),
        zones: c.zones.value.iter().map(|z| z.value.clone()).collect(),
        node_role: role.clone(),
        discovery_tag,
        ami_alias: alias.clone(),
        ami_family: family,
    }
}

fn device_plugin(v: &mut V, p: &Profile, family: AmiFamily) -> Option<DevicePlugin> {
    let dp = p.device_plugin.as_ref()?;
    match dp.value {
        // Two plugins registering `nvidia.com/gpu` on one kubelet replace each other's
        // registration; the host's plugin on Bottlerocket is the one to keep.
        DevicePlugin::Nvidia if family == AmiFamily::Bottlerocket => {
            let at = v.at(&p.cluster.ami_alias);
            v.err(dp, "Bottlerocket's NVIDIA variants already run the NVIDIA device plugin on the host: a DaemonSet would register `nvidia.com/gpu` a second time")
                .related(at, "Bottlerocket chosen here")
                .help("remove `devicePlugin` (it is for al2023, whose NVIDIA AMIs ship the driver but not the plugin)");
            None
        }
        d => Some(d),
    }
}

/// Longest class name: NodePools are named `<class>-on-demand` (63 characters at most).
const MAX_CLASS_NAME: usize = 63 - "-on-demand".len();

fn class(v: &mut V, c: &Class, family: AmiFamily) -> Option<ClassSpec> {
    let mut ok = v.dns_label(&c.name, "class", MAX_CLASS_NAME);
    let selector = gpu_selector(v, c);
    ok &= selector.is_some();
    if c.max_gpus.value == 0 {
        v.err(
            &c.max_gpus,
            "`maxGpus` is 0: the class could never launch a node",
        )
        .help("set the most GPUs the class may run at once");
        ok = false;
    }
    let mut text_field = |v: &mut V,
                          f: &Option<Spanned<String>>,
                          default: &str,
                          valid: fn(&str) -> bool,
                          what: &str,
                          help: &str|
     -> String {
        match f {
            Some(s) if !valid(&s.value) => {
                v.err(s, format!("`{}` is not {what}", s.value))
                    .help(help.to_string());
                ok = false;
                s.value.clone()
            }
            Some(s) => s.value.clone(),
            None => default.to_string(),
        }
    };
    let dur_or_never = |s: &str| s == "Never" || is_duration(s);
    let consolidate_after = text_field(
        v,
        &c.consolidate_after,
        if c.class_type == ClassType::Batch {
            "5m"
        } else {
            "10m"
        },
        dur_or_never,
        "a duration",
        "use s, m and h units (`30s`, `10m`, `1h30m`) or `Never`",
    );
    let expire_after = text_field(
        v,
        &c.expire_after,
        "720h",
        dur_or_never,
        "a duration",
        "use s, m and h units (`720h`) or `Never`",
    );
    let grace_default = match c.class_type {
        ClassType::Training | ClassType::Batch => "24h",
        _ => "1h",
    };
    let termination_grace_period = text_field(
        v,
        &c.termination_grace_period,
        grace_default,
        is_duration,
        "a duration",
        "use s, m and h units, e.g. `24h` (`Never` is not allowed here)",
    );
    let disruption_budget = text_field(
        v,
        &c.disruption_budget,
        "10%",
        is_budget,
        "a node count or percentage",
        "e.g. \"1\" or \"10%\"; \"0\" blocks voluntary disruption",
    );
    // Bottlerocket's root volume holds only the OS; AL2023's also holds the container images.
    let root_default = match family {
        AmiFamily::Bottlerocket => "20Gi",
        AmiFamily::Al2023 => "100Gi",
    };
    let root_volume = text_field(
        v,
        &c.root_volume,
        root_default,
        is_volume_size,
        "an EBS volume size",
        "a whole number with Gi, G, Ti or T, e.g. `100Gi`",
    );
    let data_volume = text_field(
        v,
        &c.data_volume,
        "200Gi",
        is_volume_size,
        "an EBS volume size",
        "a whole number with Gi, G, Ti or T, e.g. `500Gi`",
    );
    let (selector, instances) = selector?;
    let tier = c.priority.unwrap_or(match c.class_type {
        ClassType::Inference => Tier::Production,
        ClassType::Training => Tier::Training,
        ClassType::Development => Tier::Development,
        ClassType::Batch => Tier::BestEffort,
    });
    ok.then(|| ClassSpec {
        name: c.name.value.clone(),
        class_type: c.class_type,
        selector,
        capacity: c.capacity,
        max_gpus: c.max_gpus.value,
        tier,
        consolidate_after,
        expire_after,
        termination_grace_period,
        disruption_budget,
        root_volume,
        data_volume,
        instances,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum GpuKind {
    Name,
    Family,
    Type,
}

fn gpu_selector(v: &mut V, c: &Class) -> Option<(GpuSelector, Vec<&'static catalog::Instance>)> {
    let all = catalog::instances();
    let names = catalog::gpu_names();
    let mut families: Vec<&str> = all.iter().map(|i| i.family).collect();
    families.dedup();
    if c.gpus.value.is_empty() {
        v.err(&c.gpus, format!("class `{}` lists no GPUs", c.name.value))
            .help("list GPU names (a100, h100, l4, a10g…), instance families (p5, g6e) or instance types (p5.48xlarge)");
        return None;
    }
    let mut kinds: Vec<(GpuKind, &str)> = Vec::new();
    let mut bad = false;
    for (i, g) in c.gpus.value.iter().enumerate() {
        let s = g.value.as_str();
        if let Some(first) = c.gpus.value[..i].iter().find(|o| o.value == g.value) {
            let fs = v.at(first);
            v.err(g, format!("GPU `{s}` is listed twice"))
                .related(fs, "first listed here");
            continue;
        }
        let kind = if s.contains('.') {
            all.iter()
                .any(|i| i.instance_type == s)
                .then_some(GpuKind::Type)
        } else if names.contains(&s) {
            Some(GpuKind::Name)
        } else if families.contains(&s) {
            Some(GpuKind::Family)
        } else {
            None
        };
        match kind {
            Some(k) => kinds.push((k, s)),
            None => {
                bad = true;
                let what = if s.contains('.') {
                    "instance type"
                } else {
                    "GPU name"
                };
                let mut candidates: Vec<&str> = names.to_vec();
                candidates.extend(families.iter().copied());
                if s.contains('.') {
                    candidates = all.iter().map(|i| i.instance_type).collect();
                }
                let hint = did_you_mean(s, &candidates);
                v.err(g, format!("unknown {what} `{s}`: it is not in the GPU instance catalog"))
                    .help(format!(
                        "{hint}GPU names: {}; instance families: {}; or an instance type such as p5.48xlarge",
                        names.join(", "),
                        families.join(", ")
                    ));
            }
        }
    }
    if bad || kinds.is_empty() {
        return None;
    }
    let instances: Vec<&'static catalog::Instance> = all
        .iter()
        .filter(|i| {
            kinds.iter().any(|(k, s)| match k {
                GpuKind::Name => i.gpu_name == *s,
                GpuKind::Family => i.family == *s,
                GpuKind::Type => i.instance_type == *s,
            })
        })
        .collect();
    let first = kinds[0].0;
    let values = |k: GpuKind| {
        kinds
            .iter()
            .filter(|(kk, _)| *kk == k)
            .map(|(_, s)| s.to_string())
            .collect::<Vec<_>>()
    };
    let selector = if kinds.iter().all(|(k, _)| *k == first) {
        match first {
            GpuKind::Name => GpuSelector::Names(values(GpuKind::Name)),
            GpuKind::Family => GpuSelector::Families(values(GpuKind::Family)),
            GpuKind::Type => GpuSelector::Types(values(GpuKind::Type)),
        }
    } else {
        // Different kinds would be different requirement keys, which Karpenter ANDs: list the
        // instance types instead.
        GpuSelector::Types(
            instances
                .iter()
                .map(|i| i.instance_type.to_string())
                .collect(),
        )
    };
    Some((selector, instances))
}

fn teams(v: &mut V, p: &Profile, classes: &[Option<ClassSpec>]) -> Vec<Option<TeamSpec>> {
    let class_names: Vec<&str> = p
        .classes
        .value
        .iter()
        .map(|c| c.name.value.as_str())
        .collect();
    let listed = unique(&class_names);
    let mut out: Vec<Option<TeamSpec>> = Vec::new();
    let mut namespaces: Vec<(String, Span)> = Vec::new();
    for (i, t) in p.teams.iter().enumerate() {
        if let Some(first) = p.teams[..i].iter().find(|o| o.name.value == t.name.value) {
            let fs = v.at(&first.name);
            v.err(&t.name, format!("team `{}` is defined twice", t.name.value))
                .related(fs, "first defined here")
                .help("team names must be unique");
            out.push(None);
            continue;
        }
        let mut ok = v.dns_label(&t.name, "team", 63);
        let (namespace, ns_span) = match &t.namespace {
            Some(ns) => {
                ok &= v.dns_label(ns, "namespace", 63);
                (ns.value.clone(), v.at(ns))
            }
            None => (t.name.value.clone(), v.at(&t.name)),
        };
        if namespace.starts_with("kube-") {
            let at = t.namespace.as_ref().unwrap_or(&t.name);
            v.err(
                at,
                format!("namespace `{namespace}` is reserved for Kubernetes"),
            );
            ok = false;
        }
        if let Some((_, first)) = namespaces.iter().find(|(n, _)| *n == namespace) {
            let first = *first;
            let at = t.namespace.as_ref().unwrap_or(&t.name);
            v.err(at, format!("namespace `{namespace}` belongs to two teams"))
                .related(first, "first used here")
                .help("each team needs its own namespace: queues and quotas are per namespace");
            ok = false;
        } else {
            namespaces.push((namespace.clone(), ns_span));
        }
        if t.gpu_quota.0.is_empty() {
            v.err(
                &t.name,
                format!("team `{}` has no `gpuQuota`", t.name.value),
            )
            .help(format!(
                "list the classes it may use with their GPUs, e.g. `gpuQuota: {{{}: 8}}`",
                listed.first().unwrap_or(&"training")
            ));
            ok = false;
        }
        let mut quotas = Vec::new();
        for (k, q) in &t.gpu_quota.0 {
            let Some(ci) = class_names.iter().position(|c| *c == k.value) else {
                v.err(
                    k,
                    format!(
                        "team `{}` uses class `{}`, which is not defined",
                        t.name.value, k.value
                    ),
                )
                .help(format!(
                    "{}defined classes: {}",
                    did_you_mean(&k.value, &listed),
                    listed.join(", ")
                ));
                ok = false;
                continue;
            };
            let cq_name = format!("{}-{}", t.name.value, k.value);
            if cq_name.len() > 63 {
                v.err(&t.name, format!("team and class names together are too long: ClusterQueue `{cq_name}` would exceed 63 characters"));
                ok = false;
            }
            let class = &p.classes.value[ci];
            if q.value > class.max_gpus.value {
                let cs = v.at(&class.max_gpus);
                v.err(q, format!(
                    "quota of {} GPUs for class `{}` is above the class ceiling of {}: Kueue would admit work the node pools can never launch",
                    q.value, k.value, class.max_gpus.value
                ))
                .related(cs, "ceiling (maxGpus) set here")
                .help(format!("lower the quota to at most {} or raise the class's maxGpus", class.max_gpus.value));
                ok = false;
            }
            quotas.push((k.value.clone(), q.value));
        }
        out.push(ok.then(|| TeamSpec {
            name: t.name.value.clone(),
            namespace,
            create_namespace: t.create_namespace,
            quotas,
        }));
    }
    // The teams' guaranteed GPUs in a class must fit under its ceiling together.
    for (ci, c) in p.classes.value.iter().enumerate() {
        if classes.get(ci).is_none_or(Option::is_none) {
            continue;
        }
        let entries: Vec<(&Team, &Spanned<u32>)> = p
            .teams
            .iter()
            .flat_map(|t| {
                t.gpu_quota
                    .0
                    .iter()
                    .filter(|(k, _)| k.value == c.name.value)
                    .map(move |(_, q)| (t, q))
            })
            .collect();
        let sum: u64 = entries.iter().map(|(_, q)| u64::from(q.value)).sum();
        if entries.len() > 1
            && sum > u64::from(c.max_gpus.value)
            && entries.iter().all(|(_, q)| q.value <= c.max_gpus.value)
        {
            let related: Vec<(Span, String)> = entries
                .iter()
                .map(|(t, q)| (v.at(*q), format!("team `{}`: {}", t.name.value, q.value)))
                .collect();
            let e = v.err(&c.max_gpus, format!(
                "the teams' quotas for class `{}` add up to {sum} GPUs, above its ceiling of {}: Kueue would admit work the node pools can never launch",
                c.name.value, c.max_gpus.value
            ));
            e.help("raise maxGpus or lower the quotas; teams can still borrow each other's unused quota");
            e.related = related;
        }
    }
    out
}

fn jobs(
    v: &mut V,
    p: &Profile,
    classes: &[Option<ClassSpec>],
    teams: &[Option<TeamSpec>],
) -> Vec<JobSpec> {
    let team_names: Vec<&str> = p.teams.iter().map(|t| t.name.value.as_str()).collect();
    let class_names: Vec<&str> = p
        .classes
        .value
        .iter()
        .map(|c| c.name.value.as_str())
        .collect();
    let listed = unique(&class_names);
    let mut out = Vec::new();
    let mut seen: Vec<(String, String, Span)> = Vec::new();
    for j in &p.jobs {
        let mut ok = v.dns_label(&j.name, "job", 63);
        let team_idx = team_names.iter().position(|t| *t == j.team.value);
        let class_idx = class_names.iter().position(|c| *c == j.class.value);
        if team_idx.is_none() {
            v.err(
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
                &j.gpus_per_worker,
                "`gpusPerWorker` is 0: a training worker needs at least one GPU",
            );
            ok = false;
        }
        if let Some(w) = &j.workers {
            if w.value == 0 {
                v.err(w, "`workers` is 0: a job needs at least one worker");
                ok = false;
            }
            let index_len = (w.value.saturating_sub(1)).to_string().len();
            if w.value > 1 && j.name.value.len() + 1 + index_len > 63 {
                v.err(&j.name, format!("job name `{}` is too long for {} workers: pod host names `<job>-<index>` must fit 63 characters", j.name.value, w.value));
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
        if cohort > 0 && total > cohort {
            let at = j
                .workers
                .as_ref()
                .map_or(v.at(&j.gpus_per_worker), |w| v.at(w));
            v.out.push(ProfileProblem {
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
                let e = v.err(&j.class, format!(
                    "job `{}` runs on class `{}` of type {}, whose nodes are consolidated when underutilized: that would stop training runs",
                    j.name.value, c.name, c.class_type.as_str()
                ));
                e.help("run jobs on a training or batch class (their nodes are only removed when empty)");
                if let Some(cs) = cs {
                    e.related(cs, "class defined here");
                }
                ok = false;
            }
            let per_node = c.max_gpus_per_node();
            if gpus > per_node {
                let biggest = c
                    .instances
                    .iter()
                    .filter(|i| i.gpu_count == per_node)
                    .map(|i| i.instance_type)
                    .collect::<Vec<_>>()
                    .join(", ");
                v.err(&j.gpus_per_worker, format!(
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
                    g,
                    "a grace period of 0 seconds leaves no time to write a checkpoint",
                );
                ok = false;
            } else if uses_spot && g.value > SPOT_NOTICE_SECONDS {
                v.err(g, format!(
                    "{} seconds is longer than the 2-minute notice spot instances get: the worker is killed before it finishes checkpointing",
                    g.value
                ))
                .help(format!("use {min} to {SPOT_NOTICE_SECONDS} seconds (default {DEFAULT_GRACE_SECONDS}) on a class with spot capacity"));
                ok = false;
            } else if uses_spot && g.value < min {
                v.err(g, format!(
                    "{} seconds is too short to write a checkpoint when a spot instance is reclaimed: classes with spot capacity need at least {min}",
                    g.value
                ))
                .help(format!("use {min} to {SPOT_NOTICE_SECONDS} seconds (default {DEFAULT_GRACE_SECONDS}) on a class with spot capacity"));
                ok = false;
            }
        }
        if j.image.value.trim().is_empty() || j.image.value.chars().any(char::is_whitespace) {
            v.err(
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

/// Whether `piece` is `path` or a path inside it.
fn inside(piece: &str, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    piece == path
        || piece
            .strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn looks_like_checkpoint_flag(flag: &str) -> bool {
    let f = flag.to_ascii_lowercase();
    f.starts_with('-') && (f.contains("checkpoint") || f.contains("ckpt"))
}

fn job_checkpoint(v: &mut V, j: &Job) -> bool {
    let path = &j.checkpoint.path;
    let mut ok = true;
    let p = path.value.as_str();
    if !p.starts_with('/')
        || p == "/"
        || p.split('/').any(|seg| seg == ".." || seg == ".")
        || p.contains("//")
    {
        v.err(
            path,
            format!("checkpoint path `{p}` is not an absolute directory path"),
        )
        .help("e.g. `/checkpoints`");
        ok = false;
    }
    if !is_dns_subdomain(&j.checkpoint.claim.value) {
        v.err(
            &j.checkpoint.claim,
            format!(
                "`{}` is not a PersistentVolumeClaim name",
                j.checkpoint.claim.value
            ),
        )
        .help("lowercase letters, digits, `-` and `.`");
        ok = false;
    }
    if !ok {
        return false;
    }
    let words: Vec<&Spanned<String>> = j.command.iter().chain(&j.args).collect();
    let mut mentions = false;
    for (i, w) in words.iter().enumerate() {
        let text = w.value.as_str();
        let pieces = text.split(|c: char| c == '=' || c == ':' || c == ',' || c.is_whitespace());
        if pieces.clone().any(|piece| inside(piece, p)) {
            mentions = true;
        }
        // `--checkpoint-dir=/elsewhere` or `--checkpoint-dir /elsewhere`
        let (flag, value) = match text.split_once('=') {
            Some((f, val)) => (f, Some(val)),
            None => (text, words.get(i + 1).map(|n| n.value.as_str())),
        };
        if looks_like_checkpoint_flag(flag)
            && let Some(val) = value.filter(|val| val.starts_with('/'))
            && !inside(val, p)
        {
            let ps = v.at(path);
            let message = format!(
                "`{flag}` points at `{val}`, outside the checkpoint volume mounted at `{p}`: checkpoints there are lost with the node"
            );
            v.err(*w, message)
                .related(ps, "checkpoint volume mounted here")
                .help(format!("point it at `{p}` or below"));
            ok = false;
        }
    }
    if !mentions && ok {
        let message = format!(
            "the job's command and args never mention the checkpoint path `{p}`: the trainer would checkpoint elsewhere, and lose it on spot reclaim"
        );
        v.err(path, message).help(format!(
            "pass it to the trainer, e.g. `--checkpoint-dir={p}`"
        ));
        ok = false;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_durations_budgets_and_sizes() {
        assert!(dns_label_problem("training", 63).is_none());
        assert!(dns_label_problem("0755", 63).is_none());
        for bad in ["", "Training", "a_b", "-a", "a-", "../x", "a.b"] {
            assert!(dns_label_problem(bad, 63).is_some(), "{bad:?}");
        }
        assert!(dns_label_problem(&"a".repeat(54), MAX_CLASS_NAME).is_some());
        for ok in ["10m", "1h30m", "720h", "30s"] {
            assert!(is_duration(ok), "{ok}");
        }
        for bad in ["", "m", "10", "1d", "1.5h", "Never"] {
            assert!(!is_duration(bad), "{bad}");
        }
        for ok in ["0", "3", "10%", "100%"] {
            assert!(is_budget(ok), "{ok}");
        }
        for bad in ["", "%", "101%", "1000%", "ten"] {
            assert!(!is_budget(bad), "{bad}");
        }
        for ok in ["50Gi", "1Ti", "500G"] {
            assert!(is_volume_size(ok), "{ok}");
        }
        for bad in ["", "50", "050Gi", "1.5Ti", "50Mi", "Gi"] {
            assert!(!is_volume_size(bad), "{bad}");
        }
        assert!(inside("/checkpoints/run1", "/checkpoints/"));
        assert!(!inside("/checkpoints2", "/checkpoints"));
    }

    const BASE: &str = "apiVersion: gpuops.dev/v1alpha1\nkind: Platform\ncluster:\n  name: c\n  region: us-east-1\n  zones: [us-east-1a]\n  nodeRole: r\n  amiAlias: al2023@v20250715\nclasses:\n  - name: t\n    type: training\n    gpus: [a100, g5, p5.48xlarge]\n    capacity: spot-first\n    maxGpus: 16\n";

    #[test]
    fn mixed_gpu_kinds_become_instance_types() {
        let p = crate::render::parse_profile("p.yaml", BASE).unwrap();
        let c = &p.classes[0];
        assert_eq!(c.selector.key(), "node.kubernetes.io/instance-type");
        assert!(c.selector.values().contains(&"p4d.24xlarge".to_string()));
        assert!(c.selector.values().contains(&"g5.xlarge".to_string()));
        assert_eq!(c.max_gpus_per_node(), 8);
        assert_eq!(
            c.tiers(),
            vec![("spot", Some(100)), ("on-demand", Some(10))]
        );
        assert_eq!(c.consolidation_policy(), "WhenEmpty");
        assert_eq!(c.root_volume, "100Gi");
    }

    #[test]
    fn quotas_that_add_up_above_the_ceiling_are_reported_once_with_each_share() {
        let text = format!(
            "{BASE}teams:\n  - name: a\n    gpuQuota: {{t: 10}}\n  - name: b\n    gpuQuota: {{t: 10}}\n"
        );
        let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{:#?}", e.problems);
        assert!(
            e.problems[0]
                .message
                .contains("add up to 20 GPUs, above its ceiling of 16")
        );
        assert_eq!(e.problems[0].related.len(), 2);
        assert_eq!(e.problems[0].span.start_pos(&text).line, 14);
    }

    #[test]
    fn jobs_only_run_on_training_and_batch_classes() {
        let text = BASE.replace("type: training", "type: development")
            + "teams:\n  - name: a\n    gpuQuota: {t: 8}\njobs:\n  - name: j\n    team: a\n    class: t\n    image: x\n    args: [--checkpoint-dir=/c]\n    gpusPerWorker: 1\n    checkpoint: {claim: c, path: /c}\n";
        let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
        assert!(
            e.problems
                .iter()
                .any(|p| p.message.contains("consolidated when underutilized")),
            "{:#?}",
            e.problems
        );
    }

    #[test]
    fn a_job_larger_than_its_cohort_is_never_admitted() {
        let job = |quota_b: u32| {
            BASE.to_string()
                + &format!(
                    "teams:\n  - name: a\n    gpuQuota: {{t: 8}}\n  - name: b\n    gpuQuota: {{t: {quota_b}}}\njobs:\n  - name: j\n    team: a\n    class: t\n    image: x\n    args: [--checkpoint-dir=/c]\n    gpusPerWorker: 8\n    workers: 2\n    checkpoint: {{claim: c, path: /c}}\n"
                )
        };
        let text = job(4);
        let e = crate::render::parse_profile("p.yaml", &text).unwrap_err();
        let p = e
            .problems
            .iter()
            .find(|p| p.message.contains("never admits it"))
            .unwrap_or_else(|| panic!("{:#?}", e.problems));
        assert!(
            p.message
                .contains("16 GPUs at once (2 × 8), more than the 12")
        );
        assert_eq!(&text[p.span.range()], "2");
        // Borrowing from the other team's share is enough.
        let text = job(8);
        if let Err(e) = crate::render::parse_profile("p.yaml", &text) {
            assert!(
                !e.problems
                    .iter()
                    .any(|p| p.message.contains("never admits")),
                "{:#?}",
                e.problems
            );
        }
    }
}
