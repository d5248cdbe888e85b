//! Built-in field knowledge, written from the published API references (Karpenter v1.14, Kueue
//! v0.19, Kubernetes core): per object, its fields with their types, enums, ranges and formats,
//! which are required, which moved between API versions, and how unknown fields are treated.

/// What a field holds.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    /// A string; a YAML 1.1 boolean or number there is a type error.
    Str,
    /// A string whose YAML 1.1 look-alikes (`true`, `0755`) `yaml-type-trap` reports: only
    /// collections are type errors here.
    Text,
    /// An integer within (min, max).
    Int(i64, i64),
    Bool,
    /// A resource quantity: an integer or a string.
    Quantity,
    /// A resource quantity under a CRD's quantity pattern: a string that does not parse as one
    /// (`256GB`) is rejected.
    QuantityPattern,
    /// A list or map (`maxItems`, `maxProperties`) with at least `.0` and at most `.1` entries.
    Count(usize, usize, &'static Ty),
    /// One of the values; the second list holds removed values another rule reports
    /// (`deprecated-api`).
    Enum(&'static [&'static str], &'static [&'static str]),
    Format(&'static Format),
    /// A map of string keys to values of this type.
    Map(&'static Ty),
    List(&'static Ty),
    Obj(&'static Obj),
    Any,
}

/// A string format the API checks with a pattern.
#[derive(Debug)]
pub struct Format {
    /// How messages name it: "a duration such as `30m`, `1h30m` or `Never`".
    pub what: &'static str,
    pub ok: fn(&str) -> bool,
}

#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
}

/// A field written at this level that belongs elsewhere in this API version.
#[derive(Clone, Copy, Debug)]
pub struct Moved {
    pub from: &'static str,
    /// The full path where it belongs now.
    pub to: &'static str,
}

/// What happens to a field the schema does not list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// A structural CRD: the API server prunes (drops) it silently.
    Pruned,
    /// A core type: dropped (strict validation rejects it).
    Dropped,
    /// A core type whose list may grow with new releases: only near-misses of known names are
    /// reported, as typos.
    Typos,
}

#[derive(Debug)]
pub struct Obj {
    pub fields: &'static [Field],
    pub unknown: Unknown,
    pub moved: &'static [Moved],
    /// Fields another rule reports (removed in this version, `deprecated-api`): left alone.
    pub ignored: &'static [&'static str],
    /// (old name among `ignored`, required field it was renamed to): with the old one written,
    /// the missing new one is the same mistake, reported by that rule.
    pub renamed: &'static [(&'static str, &'static str)],
}

const fn f(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}
const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: true,
    }
}
const fn crd(fields: &'static [Field]) -> Obj {
    Obj {
        fields,
        unknown: Unknown::Pruned,
        moved: &[],
        ignored: &[],
        renamed: &[],
    }
}
const fn core(fields: &'static [Field]) -> Obj {
    Obj {
        fields,
        unknown: Unknown::Dropped,
        moved: &[],
        ignored: &[],
        renamed: &[],
    }
}
const fn typos(fields: &'static [Field]) -> Obj {
    Obj {
        fields,
        unknown: Unknown::Typos,
        moved: &[],
        ignored: &[],
        renamed: &[],
    }
}
const fn any(name: &'static str) -> Field {
    f(name, Ty::Any)
}

mod ec2nodeclass;
mod karpenter;
mod kueue;
mod workloads;

use ec2nodeclass::EC2NODECLASS_V1;
use karpenter::{NODECLAIM_V1, NODEPOOL_V1};
use kueue::{
    ADMISSION_CHECK, CLUSTER_QUEUE_V1B1, CLUSTER_QUEUE_V1B2, COHORT, LOCAL_QUEUE,
    PROVISIONING_REQUEST_CONFIG, RESOURCE_FLAVOR, TOPOLOGY, WORKLOAD_PRIORITY_CLASS,
};

const ANY_INT: Ty = Ty::Int(i64::MIN, i64::MAX);
const NON_NEG: Ty = Ty::Int(0, i64::MAX);
const INT32: Ty = Ty::Int(i32::MIN as i64, i32::MAX as i64);
const STRINGS: Ty = Ty::List(&Ty::Str);
const TEXTS: Ty = Ty::List(&Ty::Text);
const STR_MAP: Ty = Ty::Map(&Ty::Str);
const TEXT_MAP: Ty = Ty::Map(&Ty::Text);
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

// ---------------------------------------------------------------------------------------------
// Formats (the CRDs' patterns, checked by hand: no regex engine per value)

fn units(s: &str, allowed: &[u8]) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let mut groups = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i >= b.len() || !allowed.contains(&b[i]) {
            return false;
        }
        i += 1;
        groups += 1;
    }
    groups > 0
}

/// `^([0-9]+(s|m|h))+$`
fn duration(s: &str) -> bool {
    units(s, b"smh")
}
/// `^(([0-9]+(s|m|h))+|Never)$`
fn duration_or_never(s: &str) -> bool {
    s == "Never" || duration(s)
}
/// `^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
fn budget_duration(s: &str) -> bool {
    let s = s.strip_suffix("0s").unwrap_or(s);
    let b = s.as_bytes();
    let hm: Vec<u8> = b.iter().copied().filter(|c| !c.is_ascii_digit()).collect();
    units(s, b"hm") && matches!(hm.as_slice(), b"h" | b"m" | b"hm")
}
/// `^((100|[0-9]{1,2})%|[0-9]+)$`
fn budget_nodes(s: &str) -> bool {
    match s.strip_suffix('%') {
        Some(p) => {
            (1..=3).contains(&p.len())
                && p.bytes().all(|c| c.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|v| v <= 100)
                && (p.len() < 3 || p == "100")
        }
        None => !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()),
    }
}
/// Five cron fields, or one of the macros.
fn schedule(s: &str) -> bool {
    matches!(
        s,
        "@annually" | "@yearly" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly"
    ) || s.split_whitespace().count() == 5
}
/// The EC2NodeClass volume size pattern: 1 to 59000 `Gi`, 1 to 64000 `G`, up to 64 `T`, and the
/// pattern's odd set of `Ti` (1 to 9, 10 to 17, 20 to 27, …, 50 to 57, 58; a bare `Ti` or `T`
/// too, as its empty alternative allows).
fn volume_size(s: &str) -> bool {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &s[digits.len()..];
    if digits.starts_with('0') || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let n: u32 = match (digits.is_empty(), digits.parse()) {
        (true, _) => return matches!(unit, "Ti" | "T"),
        (false, Ok(n)) => n,
        (false, Err(_)) => return false,
    };
    match unit {
        "Gi" => n <= 59_000,
        "G" => n <= 64_000,
        "T" => n <= 64,
        "Ti" => n <= 9 || n == 58 || (10..=57).contains(&n) && n % 10 <= 7,
        _ => false,
    }
}

/// A lower-case DNS-1123 subdomain of at most 253 characters: Kueue's object references.
fn dns_subdomain(s: &str) -> bool {
    super::names::dns_subdomain(s).is_none()
}
/// A DNS-1123 label of at most 63 characters.
fn dns_label(s: &str) -> bool {
    super::names::dns_label(s).is_none()
}
/// `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$` with `maxLength: 63`.
fn label_value(s: &str) -> bool {
    super::names::label_value(s).is_none()
}
/// Karpenter's requirement key pattern with `maxLength: 316`.
fn requirement_key(s: &str) -> bool {
    s.len() <= 316 && super::names::qualified_name_shape(s)
}
/// Karpenter's taint key and value pattern. An empty value stands for no value.
fn taint_value(s: &str) -> bool {
    s.is_empty() || super::names::qualified_name_shape(s)
}
/// Kueue's topology level label: the qualified-name pattern with `maxLength: 316`.
fn node_label_key(s: &str) -> bool {
    requirement_key(s)
}
/// `^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$` with `maxLength: 63`.
fn kind_name(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() <= 63
        && b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

static DNS_SUBDOMAIN: Format = Format {
    what: "a DNS subdomain (at most 253 lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit)",
    ok: dns_subdomain,
};
static DNS_LABEL: Format = Format {
    what: "a DNS label (at most 63 lower-case letters, digits and `-`, starting and ending with a letter or digit)",
    ok: dns_label,
};
static LABEL_VALUE: Format = Format {
    what: "a label value (at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit)",
    ok: label_value,
};
static REQUIREMENT_KEY: Format = Format {
    what: "a label key (`name` or `prefix/name`: a lower-case DNS prefix, a name of letters, digits, `-`, `_` and `.` starting and ending with a letter or digit)",
    ok: requirement_key,
};
static TAINT_PART: Format = Format {
    what: "a qualified name (`name` or `prefix/name`: a lower-case DNS prefix, a name of letters, digits, `-`, `_` and `.` starting and ending with a letter or digit)",
    ok: taint_value,
};
static NODE_LABEL_KEY: Format = Format {
    what: "a label key (`name` or `prefix/name`: a lower-case DNS prefix, a name of letters, digits, `-`, `_` and `.` starting and ending with a letter or digit)",
    ok: node_label_key,
};
static KIND_NAME: Format = Format {
    what: "a kind name (at most 63 letters, digits and `-`, starting with a letter)",
    ok: kind_name,
};

static DURATION: Format = Format {
    what: "a duration in s, m and h such as `30m` or `1h30m`",
    ok: duration,
};
static DURATION_OR_NEVER: Format = Format {
    what: "a duration in s, m and h such as `30m` or `1h30m`, or `Never`",
    ok: duration_or_never,
};
static BUDGET_DURATION: Format = Format {
    what: "a duration in hours and minutes such as `8h`, `30m` or `1h30m`",
    ok: budget_duration,
};
static BUDGET_NODES: Format = Format {
    what: "a node count such as `\"5\"` or a percentage such as `\"10%\"`",
    ok: budget_nodes,
};
static SCHEDULE: Format = Format {
    what: "a cron schedule with five fields or a macro such as `@daily`",
    ok: schedule,
};
static VOLUME_SIZE: Format = Format {
    what: "a whole size from 1Gi to 59000Gi (64000G, 58Ti, 64T) such as `200Gi`",
    ok: volume_size,
};

const CRD_ROOT_FIELDS: [Field; 4] = [
    any("apiVersion"),
    any("kind"),
    any("metadata"),
    any("status"),
];

// ---------------------------------------------------------------------------------------------
// Core: scheduling.k8s.io/v1 PriorityClass and the pod-spec parts gpuops reads

const TOLERATION_FIELDS: &[Field] = &[
    f("key", Ty::Str),
    f("operator", Ty::Enum(&["Equal", "Exists", ""], &[])),
    f("value", Ty::Text),
    f(
        "effect",
        Ty::Enum(&["NoSchedule", "PreferNoSchedule", "NoExecute", ""], &[]),
    ),
    f("tolerationSeconds", ANY_INT),
];
static TOLERATION: Obj = core(TOLERATION_FIELDS);
pub static PRIORITY_CLASS: Obj = core(&[
    any("apiVersion"),
    any("kind"),
    any("metadata"),
    req("value", Ty::Int(i32::MIN as i64, 1_000_000_000)),
    f("globalDefault", Ty::Bool),
    f("description", Ty::Str),
    f(
        "preemptionPolicy",
        Ty::Enum(&["PreemptLowerPriority", "Never"], &[]),
    ),
]);

static NODE_SELECTOR_REQUIREMENT: Obj = core(&[
    req("key", Ty::Str),
    req(
        "operator",
        Ty::Enum(&["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"], &[]),
    ),
    f("values", TEXTS),
]);
static NODE_SELECTOR_TERM: Obj = core(&[
    f(
        "matchExpressions",
        Ty::List(&Ty::Obj(&NODE_SELECTOR_REQUIREMENT)),
    ),
    f(
        "matchFields",
        Ty::List(&Ty::Obj(&NODE_SELECTOR_REQUIREMENT)),
    ),
]);
static NODE_SELECTOR: Obj = core(&[req(
    "nodeSelectorTerms",
    Ty::List(&Ty::Obj(&NODE_SELECTOR_TERM)),
)]);
static PREFERRED_TERM: Obj = core(&[
    req("weight", Ty::Int(1, 100)),
    req("preference", Ty::Obj(&NODE_SELECTOR_TERM)),
]);
static NODE_AFFINITY: Obj = core(&[
    f(
        "requiredDuringSchedulingIgnoredDuringExecution",
        Ty::Obj(&NODE_SELECTOR),
    ),
    f(
        "preferredDuringSchedulingIgnoredDuringExecution",
        Ty::List(&Ty::Obj(&PREFERRED_TERM)),
    ),
]);
static AFFINITY: Obj = core(&[
    f("nodeAffinity", Ty::Obj(&NODE_AFFINITY)),
    any("podAffinity"),
    any("podAntiAffinity"),
]);
static RESOURCES: Obj = core(&[
    f("limits", Ty::Map(&Ty::Quantity)),
    f("requests", Ty::Map(&Ty::Quantity)),
    any("claims"),
]);
// Both lists may grow with new releases (typos only); a field of one written in the other is
// dropped: `fsGroup` on a container, `capabilities` on the pod.
static CONTAINER_SECURITY: Obj = typos(&[
    any("allowPrivilegeEscalation"),
    any("appArmorProfile"),
    any("capabilities"),
    any("privileged"),
    any("procMount"),
    any("readOnlyRootFilesystem"),
    any("runAsGroup"),
    any("runAsNonRoot"),
    any("runAsUser"),
    any("seLinuxOptions"),
    any("seccompProfile"),
    any("windowsOptions"),
]);
static POD_SECURITY: Obj = typos(&[
    any("appArmorProfile"),
    any("fsGroup"),
    any("fsGroupChangePolicy"),
    any("runAsGroup"),
    any("runAsNonRoot"),
    any("runAsUser"),
    any("seLinuxChangePolicy"),
    any("seLinuxOptions"),
    any("seccompProfile"),
    any("supplementalGroups"),
    any("supplementalGroupsPolicy"),
    any("sysctls"),
    any("windowsOptions"),
]);
static ENV_VAR: Obj = core(&[req("name", Ty::Str), f("value", Ty::Text), any("valueFrom")]);
// A container's fields (Kubernetes 1.35) change seldom: one that is not among them (`tag:`
// beside `image:`, `labels:`) is a mistake, not a field of a newer release.
static CONTAINER: Obj = core(&[
    req("name", Ty::Str),
    f("image", Ty::Str),
    f("command", TEXTS),
    f("args", TEXTS),
    f("env", Ty::List(&Ty::Obj(&ENV_VAR))),
    f("resources", Ty::Obj(&RESOURCES)),
    any("envFrom"),
    any("imagePullPolicy"),
    any("lifecycle"),
    any("livenessProbe"),
    any("ports"),
    any("readinessProbe"),
    any("resizePolicy"),
    any("restartPolicy"),
    any("restartPolicyRules"),
    f("securityContext", Ty::Obj(&CONTAINER_SECURITY)),
    any("startupProbe"),
    any("stdin"),
    any("stdinOnce"),
    any("terminationMessagePath"),
    any("terminationMessagePolicy"),
    any("tty"),
    any("volumeDevices"),
    f("volumeMounts", Ty::List(&Ty::Any)),
    any("workingDir"),
]);
static VOLUME: Obj = typos(&[
    req("name", Ty::Str),
    any("awsElasticBlockStore"),
    any("azureDisk"),
    any("azureFile"),
    any("cephfs"),
    any("cinder"),
    any("configMap"),
    any("csi"),
    any("downwardAPI"),
    any("emptyDir"),
    any("ephemeral"),
    any("fc"),
    any("flexVolume"),
    any("flocker"),
    any("gcePersistentDisk"),
    any("gitRepo"),
    any("glusterfs"),
    any("hostPath"),
    any("image"),
    any("iscsi"),
    any("nfs"),
    any("persistentVolumeClaim"),
    any("photonPersistentDisk"),
    any("portworxVolume"),
    any("projected"),
    any("quobyte"),
    any("rbd"),
    any("scaleIO"),
    any("secret"),
    any("storageos"),
    any("vsphereVolume"),
]);
pub static POD_SPEC: Obj = typos(&[
    any("activeDeadlineSeconds"),
    f("affinity", Ty::Obj(&AFFINITY)),
    any("automountServiceAccountToken"),
    req("containers", Ty::List(&Ty::Obj(&CONTAINER))),
    any("dnsConfig"),
    any("dnsPolicy"),
    any("enableServiceLinks"),
    any("ephemeralContainers"),
    any("hostAliases"),
    any("hostIPC"),
    any("hostNetwork"),
    any("hostPID"),
    any("hostUsers"),
    any("hostname"),
    any("hostnameOverride"),
    any("imagePullSecrets"),
    f("initContainers", Ty::List(&Ty::Obj(&CONTAINER))),
    any("nodeName"),
    f("nodeSelector", TEXT_MAP),
    any("os"),
    any("overhead"),
    any("preemptionPolicy"),
    any("priority"),
    f("priorityClassName", Ty::Str),
    any("readinessGates"),
    any("resourceClaims"),
    any("resources"),
    f(
        "restartPolicy",
        Ty::Enum(&["Always", "OnFailure", "Never"], &[]),
    ),
    any("runtimeClassName"),
    any("schedulerName"),
    any("schedulingGates"),
    f("securityContext", Ty::Obj(&POD_SECURITY)),
    any("serviceAccount"),
    any("serviceAccountName"),
    any("setHostnameAsFQDN"),
    any("shareProcessNamespace"),
    any("subdomain"),
    any("terminationGracePeriodSeconds"),
    f("tolerations", Ty::List(&Ty::Obj(&TOLERATION))),
    any("topologySpreadConstraints"),
    f("volumes", Ty::List(&Ty::Obj(&VOLUME))),
    any("workloadRef"),
]);

/// A Job's own fields, which a pod spec does not have (`activeDeadlineSeconds` both have).
const JOB_FIELDS: [&str; 12] = [
    "backoffLimit",
    "backoffLimitPerIndex",
    "completionMode",
    "completions",
    "manualSelector",
    "maxFailedIndexes",
    "parallelism",
    "podFailurePolicy",
    "podReplacementPolicy",
    "successPolicy",
    "suspend",
    "ttlSecondsAfterFinished",
];

/// The fields of Deployments and StatefulSets that a pod spec does not have.
const ROLLOUT_FIELDS: [&str; 6] = [
    "minReadySeconds",
    "progressDeadlineSeconds",
    "replicas",
    "revisionHistoryLimit",
    "strategy",
    "updateStrategy",
];

/// Where a field written in a container or a pod spec (or in their `securityContext`s), and
/// unknown there, belongs instead: a pod spec field in a container (`runtimeClassName`,
/// `tolerations`), a container field in the pod spec (`image`, `env`), metadata or a Job's or
/// Deployment's field in its pod spec (`annotations`, `ttlSecondsAfterFinished`, `replicas`),
/// `fsGroup` in a container's `securityContext`. Written one level off, nothing reads it.
/// Returns what it is, what it is not, and where it goes.
pub fn misplaced_pod_field(
    obj: &Obj,
    key: &str,
) -> Option<(&'static str, &'static str, &'static str)> {
    let has = |o: &Obj| o.fields.iter().any(|f| f.name == key);
    if std::ptr::eq(obj, &CONTAINER) && has(&POD_SPEC) {
        Some(("pod spec", "container", "the pod spec, beside `containers`"))
    } else if std::ptr::eq(obj, &POD_SPEC) && has(&CONTAINER) {
        Some(("container", "pod spec", "each container that needs it"))
    } else if std::ptr::eq(obj, &CONTAINER_SECURITY) && has(&POD_SECURITY) {
        Some((
            "pod `securityContext`",
            "container `securityContext`",
            "the pod spec's `securityContext` (it applies to every container)",
        ))
    } else if std::ptr::eq(obj, &POD_SPEC) && ["annotations", "labels", "namespace"].contains(&key)
    {
        Some(("metadata", "pod spec", "the `metadata` beside this `spec`"))
    } else if std::ptr::eq(obj, &POD_SPEC) && JOB_FIELDS.contains(&key) {
        Some((
            "Job spec",
            "pod spec",
            "the Job's `spec`, beside `template`",
        ))
    } else if std::ptr::eq(obj, &POD_SPEC) && ROLLOUT_FIELDS.contains(&key) {
        Some((
            "workload spec",
            "pod spec",
            "the Deployment's or StatefulSet's `spec`, beside `template`",
        ))
    } else if std::ptr::eq(obj, &POD_SECURITY) && has(&CONTAINER_SECURITY) {
        Some((
            "container `securityContext`",
            "pod `securityContext`",
            "the `securityContext` of each container that needs it",
        ))
    } else {
        None
    }
}

/// What messages call a part of the pod spec's schema whose fields are reported unknown.
pub fn part_name(obj: &Obj) -> Option<&'static str> {
    [
        (&CONTAINER, "container"),
        (&VOLUME, "volume"),
        (&TOLERATION, "toleration"),
        (&RESOURCES, "`resources`"),
        (&CONTAINER_SECURITY, "container `securityContext`"),
        (&POD_SECURITY, "pod `securityContext`"),
    ]
    .into_iter()
    .find(|(o, _)| std::ptr::eq(*o, obj))
    .map(|(_, n)| n)
}

/// The built-in schema of an object's kind and version, with the name messages use for it.
pub fn for_kind(group: &str, version: &str, kind: &str) -> Option<(&'static Obj, &'static str)> {
    Some(match (group, version, kind) {
        ("karpenter.sh", "v1", "NodePool") => (&NODEPOOL_V1, "NodePool v1"),
        ("karpenter.sh", "v1", "NodeClaim") => (&NODECLAIM_V1, "NodeClaim v1"),
        ("karpenter.k8s.aws", "v1", "EC2NodeClass") => (&EC2NODECLASS_V1, "EC2NodeClass v1"),
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "ResourceFlavor") => {
            (&RESOURCE_FLAVOR, "ResourceFlavor")
        }
        ("kueue.x-k8s.io", "v1beta2", "ClusterQueue") => {
            (&CLUSTER_QUEUE_V1B2, "ClusterQueue v1beta2")
        }
        ("kueue.x-k8s.io", "v1beta1", "ClusterQueue") => {
            (&CLUSTER_QUEUE_V1B1, "ClusterQueue v1beta1")
        }
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "LocalQueue") => (&LOCAL_QUEUE, "LocalQueue"),
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "WorkloadPriorityClass") => {
            (&WORKLOAD_PRIORITY_CLASS, "WorkloadPriorityClass")
        }
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "Cohort") => (&COHORT, "Cohort"),
        ("kueue.x-k8s.io", "v1alpha1" | "v1beta1" | "v1beta2", "Topology") => {
            (&TOPOLOGY, "Topology")
        }
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "AdmissionCheck") => {
            (&ADMISSION_CHECK, "AdmissionCheck")
        }
        ("kueue.x-k8s.io", "v1beta1" | "v1beta2", "ProvisioningRequestConfig") => {
            (&PROVISIONING_REQUEST_CONFIG, "ProvisioningRequestConfig")
        }
        ("scheduling.k8s.io", "v1", "PriorityClass") => (&PRIORITY_CLASS, "PriorityClass"),
        ("apps", "v1", "Deployment") => (&workloads::DEPLOYMENT, "Deployment"),
        ("apps", "v1", "StatefulSet") => (&workloads::STATEFUL_SET, "StatefulSet"),
        ("apps", "v1", "DaemonSet") => (&workloads::DAEMON_SET, "DaemonSet"),
        ("apps", "v1", "ReplicaSet") => (&workloads::REPLICA_SET, "ReplicaSet"),
        ("batch", "v1", "Job") => (&workloads::JOB, "Job"),
        ("batch", "v1", "CronJob") => (&workloads::CRON_JOB, "CronJob"),
        ("", "v1", "Pod") => (&workloads::POD, "Pod"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        for ok in ["30m", "1h30m", "0s", "720h"] {
            assert!(duration(ok), "{ok}");
        }
        for bad in ["30d", "1.5h", "", "h", "Never", "30"] {
            assert!(!duration(bad), "{bad}");
        }
        assert!(duration_or_never("Never"));
        for ok in ["8h", "30m", "1h30m", "1h30m0s"] {
            assert!(budget_duration(ok), "{ok}");
        }
        for bad in ["90s", "1d", "30m1h", "1h1h"] {
            assert!(!budget_duration(bad), "{bad}");
        }
        for ok in ["0", "5", "10%", "100%", "0%"] {
            assert!(budget_nodes(ok), "{ok}");
        }
        for bad in ["101%", "five", "", "1000%", "-1"] {
            assert!(!budget_nodes(bad), "{bad}");
        }
        assert!(schedule("0 9 * * mon-fri") && schedule("@daily") && !schedule("0 9 * *"));
        for ok in [
            "200Gi", "1T", "500G", "50T", "59000Gi", "64000G", "58Ti", "17Ti", "Ti",
        ] {
            assert!(volume_size(ok), "{ok}");
        }
        for bad in [
            "200", "1.5Ti", "0", "1m", "100T", "59001Gi", "18Ti", "65T", "0Gi",
        ] {
            assert!(!volume_size(bad), "{bad}");
        }
    }
}
