//! Built-in field knowledge of Kueue's kinds (`kueue.x-k8s.io` v1beta1 and v1beta2), from the
//! CRDs of Kueue v0.19.

use super::*;

// Kueue kueue.x-k8s.io/v1beta1 and v1beta2 (list bounds are the CRDs' `maxItems`, `minItems`
// and `maxProperties`; names and references their DNS-subdomain pattern)

const STOP_POLICY: Ty = Ty::Enum(&["None", "Hold", "HoldAndDrain"], &[]);
const KUEUE_NAME: Ty = Ty::Format(&DNS_SUBDOMAIN);
static FAIR_SHARING: Obj = crd(&[f("weight", Ty::QuantityPattern)]);
static KUEUE_TAINT: Obj = crd(&[
    req("key", Ty::Str),
    f("value", Ty::Text),
    // A plain string in the CRD: its CEL rule checks the value (`cel`).
    req("effect", Ty::Str),
    f("timeAdded", Ty::Str),
]);
// Operators and effects are plain strings in the CRD: its CEL rules check them (`cel`).
static KUEUE_TOLERATION: Obj = crd(&[
    f("key", Ty::Str),
    f("operator", Ty::Str),
    f("value", Ty::Text),
    f("effect", Ty::Str),
    f("tolerationSeconds", ANY_INT),
]);
static RF_SPEC: Obj = crd(&[
    f("nodeLabels", Ty::Count(0, 8, &TEXT_MAP)),
    f(
        "nodeTaints",
        Ty::Count(0, 8, &Ty::List(&Ty::Obj(&KUEUE_TAINT))),
    ),
    f(
        "tolerations",
        Ty::Count(0, 8, &Ty::List(&Ty::Obj(&KUEUE_TOLERATION))),
    ),
    f("topologyName", KUEUE_NAME),
]);
pub static RESOURCE_FLAVOR: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    f("spec", Ty::Obj(&RF_SPEC)),
]);
static RESOURCE_QUOTA: Obj = crd(&[
    req("name", Ty::Str),
    req("nominalQuota", Ty::QuantityPattern),
    f("borrowingLimit", Ty::QuantityPattern),
    f("lendingLimit", Ty::QuantityPattern),
]);
static FLAVOR_QUOTAS: Obj = crd(&[
    req("name", KUEUE_NAME),
    req(
        "resources",
        Ty::Count(1, 64, &Ty::List(&Ty::Obj(&RESOURCE_QUOTA))),
    ),
]);
static RESOURCE_GROUP: Obj = crd(&[
    req("coveredResources", Ty::Count(1, 64, &STRINGS)),
    req(
        "flavors",
        Ty::Count(1, 64, &Ty::List(&Ty::Obj(&FLAVOR_QUOTAS))),
    ),
]);
const RESOURCE_GROUPS: Ty = Ty::Count(0, 16, &Ty::List(&Ty::Obj(&RESOURCE_GROUP)));
static ADMISSION_CHECK_V1B2: Obj = crd(&[
    req("name", Ty::Str),
    f("onFlavors", Ty::Count(0, 64, &Ty::List(&KUEUE_NAME))),
]);
static ADMISSION_CHECK_V1B1: Obj =
    crd(&[req("name", Ty::Str), f("onFlavors", Ty::List(&KUEUE_NAME))]);
static ADMISSION_CHECKS_STRATEGY_V1B2: Obj = crd(&[req(
    "admissionChecks",
    Ty::Count(1, 64, &Ty::List(&Ty::Obj(&ADMISSION_CHECK_V1B2))),
)]);
static ADMISSION_CHECKS_STRATEGY_V1B1: Obj = crd(&[req(
    "admissionChecks",
    Ty::List(&Ty::Obj(&ADMISSION_CHECK_V1B1)),
)]);
static BORROW_WITHIN_COHORT: Obj = crd(&[
    f("maxPriorityThreshold", INT32),
    f("policy", Ty::Enum(&["Never", "LowerPriority"], &[])),
]);
static PREEMPTION: Obj = crd(&[
    f("borrowWithinCohort", Ty::Obj(&BORROW_WITHIN_COHORT)),
    f(
        "reclaimWithinCohort",
        Ty::Enum(&["Never", "LowerPriority", "Any"], &[]),
    ),
    f(
        "withinClusterQueue",
        Ty::Enum(
            &["Never", "LowerPriority", "LowerOrNewerEqualPriority"],
            &[],
        ),
    ),
]);
const PREFERENCE: Field = f(
    "preference",
    Ty::Enum(&["BorrowingOverPreemption", "PreemptionOverBorrowing"], &[]),
);
// v1beta1 still serves `Borrow` and `Preempt` (`deprecated-api` reports them); v1beta2 dropped
// them from its enums.
static FUNGIBILITY_V1B1: Obj = crd(&[
    PREFERENCE,
    f(
        "whenCanBorrow",
        Ty::Enum(&["MayStopSearch", "TryNextFlavor"], &["Borrow"]),
    ),
    f(
        "whenCanPreempt",
        Ty::Enum(&["MayStopSearch", "TryNextFlavor"], &["Preempt"]),
    ),
]);
static FUNGIBILITY_V1B2: Obj = crd(&[
    PREFERENCE,
    f(
        "whenCanBorrow",
        Ty::Enum(&["MayStopSearch", "TryNextFlavor"], &[]),
    ),
    f(
        "whenCanPreempt",
        Ty::Enum(&["MayStopSearch", "TryNextFlavor"], &[]),
    ),
]);
static ADMISSION_SCOPE_V1B2: Obj = crd(&[req(
    "admissionMode",
    Ty::Enum(
        &["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"],
        &[],
    ),
)]);
static ADMISSION_SCOPE_V1B1: Obj = crd(&[req("admissionMode", Ty::Str)]);
const CQ_COMMON: [Field; 5] = [
    f("fairSharing", Ty::Obj(&FAIR_SHARING)),
    // A LabelSelector: its own shape; Kueue's webhook checks its operators (`cel`).
    any("namespaceSelector"),
    f("preemption", Ty::Obj(&PREEMPTION)),
    f(
        "queueingStrategy",
        Ty::Enum(&["StrictFIFO", "BestEffortFIFO"], &[]),
    ),
    f("stopPolicy", STOP_POLICY),
];
static CQ_SPEC_V1B2: Obj = Obj {
    moved: &[
        Moved {
            from: "cohort",
            to: "spec.cohortName",
        },
        Moved {
            from: "admissionChecks",
            to: "spec.admissionChecksStrategy.admissionChecks",
        },
    ],
    ..crd(&[
        CQ_COMMON[0],
        CQ_COMMON[1],
        CQ_COMMON[2],
        CQ_COMMON[3],
        CQ_COMMON[4],
        f("resourceGroups", RESOURCE_GROUPS),
        f("flavorFungibility", Ty::Obj(&FUNGIBILITY_V1B2)),
        f("cohortName", KUEUE_NAME),
        f(
            "admissionChecksStrategy",
            Ty::Obj(&ADMISSION_CHECKS_STRATEGY_V1B2),
        ),
        f("admissionScope", Ty::Obj(&ADMISSION_SCOPE_V1B2)),
        any("concurrentAdmissionPolicy"),
    ])
};
static CQ_SPEC_V1B1: Obj = Obj {
    moved: &[Moved {
        from: "cohortName",
        to: "spec.cohort",
    }],
    ..crd(&[
        CQ_COMMON[0],
        CQ_COMMON[1],
        CQ_COMMON[2],
        CQ_COMMON[3],
        CQ_COMMON[4],
        f("resourceGroups", RESOURCE_GROUPS),
        f("flavorFungibility", Ty::Obj(&FUNGIBILITY_V1B1)),
        f("cohort", KUEUE_NAME),
        f("admissionChecks", STRINGS),
        f(
            "admissionChecksStrategy",
            Ty::Obj(&ADMISSION_CHECKS_STRATEGY_V1B1),
        ),
        f("admissionScope", Ty::Obj(&ADMISSION_SCOPE_V1B1)),
    ])
};
pub static CLUSTER_QUEUE_V1B2: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    f("spec", Ty::Obj(&CQ_SPEC_V1B2)),
]);
pub static CLUSTER_QUEUE_V1B1: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    f("spec", Ty::Obj(&CQ_SPEC_V1B1)),
]);
static COHORT_SPEC: Obj = Obj {
    // `deprecated-api` reports v1alpha1's `parent`.
    ignored: &["parent"],
    ..crd(&[
        f("parentName", KUEUE_NAME),
        f("resourceGroups", RESOURCE_GROUPS),
        f("fairSharing", Ty::Obj(&FAIR_SHARING)),
    ])
};
pub static COHORT: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    f("spec", Ty::Obj(&COHORT_SPEC)),
]);
static LQ_SPEC: Obj = crd(&[
    f("clusterQueue", KUEUE_NAME),
    f("fairSharing", Ty::Obj(&FAIR_SHARING)),
    f("stopPolicy", STOP_POLICY),
]);
pub static LOCAL_QUEUE: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    f("spec", Ty::Obj(&LQ_SPEC)),
]);
// `value` is required; a `spec` holding it is common enough to be reported as one finding at
// `spec.value` (`cel::workload_priority_class`), so both are judged there.
pub static WORKLOAD_PRIORITY_CLASS: Obj = Obj {
    ignored: &["spec"],
    ..crd(&[
        CRD_ROOT_FIELDS[0],
        CRD_ROOT_FIELDS[1],
        CRD_ROOT_FIELDS[2],
        f("value", INT32),
        f("description", Ty::Str),
    ])
};
// Topology and AdmissionCheck gained fields across releases: only near-misses of the known
// names are reported, never a field a newer CRD may hold.
static TOPOLOGY_LEVEL: Obj = typos(&[req("nodeLabel", Ty::Format(&NODE_LABEL_KEY))]);
static TOPOLOGY_SPEC: Obj = typos(&[req(
    "levels",
    Ty::Count(1, 16, &Ty::List(&Ty::Obj(&TOPOLOGY_LEVEL))),
)]);
pub static TOPOLOGY: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    req("spec", Ty::Obj(&TOPOLOGY_SPEC)),
]);
static AC_PARAMETERS: Obj = typos(&[
    req("apiGroup", KUEUE_NAME),
    req("kind", Ty::Format(&KIND_NAME)),
    req("name", Ty::Format(&DNS_LABEL)),
]);
static AC_SPEC: Obj = typos(&[
    req("controllerName", Ty::Str),
    f("parameters", Ty::Obj(&AC_PARAMETERS)),
    f("retryDelayMinutes", ANY_INT),
]);
pub static ADMISSION_CHECK: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    req("spec", Ty::Obj(&AC_SPEC)),
]);

// ProvisioningRequestConfig: its fields grew across releases (`podSetUpdates`,
// `podSetMergePolicy`), so only near-misses of the known names are reported.

/// A `parameters` value: `maxLength: 255`.
fn parameter(s: &str) -> bool {
    s.chars().count() <= 255
}
/// A `podSetUpdates.nodeSelector` key: the qualified-name pattern with `maxLength: 317`.
fn selector_key(s: &str) -> bool {
    s.len() <= 317 && crate::schema::names::qualified_name_shape(s)
}
/// `valueFromProvisioningClassDetail`: `minLength: 1`, `maxLength: 32768`.
fn class_detail(s: &str) -> bool {
    !s.is_empty() && s.chars().count() <= 32_768
}
static PARAMETER: Format = Format {
    what: "a value of at most 255 characters",
    ok: parameter,
};
static SELECTOR_KEY: Format = Format {
    what: "a label key (`name` or `prefix/name`: a lower-case DNS prefix, a name of letters, digits, `-`, `_` and `.` starting and ending with a letter or digit)",
    ok: selector_key,
};
static CLASS_DETAIL: Format = Format {
    what: "a key of the ProvisioningRequest's `provisioningClassDetails` (1 to 32768 characters)",
    ok: class_detail,
};
static PRC_SELECTOR: Obj = typos(&[
    req("key", Ty::Format(&SELECTOR_KEY)),
    req(
        "valueFromProvisioningClassDetail",
        Ty::Format(&CLASS_DETAIL),
    ),
]);
static PRC_POD_SET_UPDATES: Obj = typos(&[f(
    "nodeSelector",
    Ty::Count(0, 8, &Ty::List(&Ty::Obj(&PRC_SELECTOR))),
)]);
static PRC_RETRY: Obj = typos(&[
    f("backoffLimitCount", INT32),
    f("backoffBaseSeconds", INT32),
    f("backoffMaxSeconds", INT32),
]);
static PRC_SPEC: Obj = typos(&[
    req("provisioningClassName", KUEUE_NAME),
    f(
        "parameters",
        Ty::Count(0, 100, &Ty::Map(&Ty::Format(&PARAMETER))),
    ),
    f("managedResources", Ty::Count(0, 100, &STRINGS)),
    f("retryStrategy", Ty::Obj(&PRC_RETRY)),
    f("podSetUpdates", Ty::Obj(&PRC_POD_SET_UPDATES)),
    f(
        "podSetMergePolicy",
        Ty::Enum(
            &[
                "IdenticalPodTemplates",
                "IdenticalWorkloadSchedulingRequirements",
            ],
            &[],
        ),
    ),
]);
// No `status`: the kind has none.
pub static PROVISIONING_REQUEST_CONFIG: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    f("spec", Ty::Obj(&PRC_SPEC)),
]);
