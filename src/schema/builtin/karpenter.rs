//! Built-in field knowledge of Karpenter's `karpenter.sh/v1` kinds (NodePool, NodeClaim), from
//! the CRDs of Karpenter v1.14.

use super::*;

// ---------------------------------------------------------------------------------------------
// Karpenter NodePool karpenter.sh/v1

static TAINT: Obj = crd(&[
    req("key", Ty::Format(&TAINT_PART)),
    f("value", Ty::Format(&TAINT_PART)),
    req("effect", Ty::Enum(EFFECTS, &[])),
    f("timeAdded", Ty::Str),
]);
static NP_REQUIREMENT: Obj = crd(&[
    req("key", Ty::Format(&REQUIREMENT_KEY)),
    req(
        "operator",
        Ty::Enum(
            &[
                "In",
                "NotIn",
                "Exists",
                "DoesNotExist",
                "Gt",
                "Lt",
                "Gte",
                "Lte",
            ],
            &[],
        ),
    ),
    f("values", TEXTS),
    f("minValues", Ty::Int(1, 50)),
]);
/// The CRDs' `^[^/]*$`: a group, not a group and version.
fn api_group(s: &str) -> bool {
    !s.contains('/')
}
static API_GROUP: Format = Format {
    what: "an API group without a version (no `/`), such as `karpenter.k8s.aws`",
    ok: api_group,
};
static NODE_CLASS_REF: Obj = Obj {
    ignored: &["apiVersion"],
    renamed: &[("apiVersion", "group")],
    ..crd(&[
        req("group", Ty::Format(&API_GROUP)),
        req("kind", Ty::Str),
        req("name", Ty::Str),
    ])
};
static NC_RESOURCES: Obj = crd(&[f("requests", Ty::Map(&Ty::QuantityPattern))]);
/// The fields of a NodeClaim's spec; all but the last (`resources`) are a NodePool template's.
static NODE_SPEC: [Field; 7] = [
    req("nodeClassRef", Ty::Obj(&NODE_CLASS_REF)),
    req(
        "requirements",
        Ty::Count(0, 100, &Ty::List(&Ty::Obj(&NP_REQUIREMENT))),
    ),
    f("taints", Ty::List(&Ty::Obj(&TAINT))),
    f("startupTaints", Ty::List(&Ty::Obj(&TAINT))),
    f("expireAfter", Ty::Format(&DURATION_OR_NEVER)),
    f("terminationGracePeriod", Ty::Format(&DURATION)),
    f("resources", Ty::Obj(&NC_RESOURCES)),
];
static NP_TEMPLATE_SPEC: Obj = Obj {
    moved: &[
        Moved {
            from: "consolidationPolicy",
            to: "spec.disruption.consolidationPolicy",
        },
        Moved {
            from: "labels",
            to: "spec.template.metadata.labels",
        },
    ],
    ignored: &["kubelet"],
    ..crd(NODE_SPEC.split_at(6).0)
};
static NP_TEMPLATE_META: Obj = crd(&[
    f(
        "labels",
        Ty::Count(0, 100, &Ty::Map(&Ty::Format(&LABEL_VALUE))),
    ),
    f("annotations", TEXT_MAP),
]);
static NP_TEMPLATE: Obj = crd(&[
    f("metadata", Ty::Obj(&NP_TEMPLATE_META)),
    req("spec", Ty::Obj(&NP_TEMPLATE_SPEC)),
]);
static BUDGET: Obj = crd(&[
    req("nodes", Ty::Format(&BUDGET_NODES)),
    f("schedule", Ty::Format(&SCHEDULE)),
    f("duration", Ty::Format(&BUDGET_DURATION)),
    f(
        "reasons",
        Ty::List(&Ty::Enum(&["Underutilized", "Empty", "Drifted"], &[])),
    ),
]);
static NP_DISRUPTION: Obj = Obj {
    ignored: &["expireAfter"],
    ..crd(&[
        f(
            "consolidationPolicy",
            Ty::Enum(
                &["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"],
                &["WhenUnderutilized"],
            ),
        ),
        req("consolidateAfter", Ty::Format(&DURATION_OR_NEVER)),
        f("budgets", Ty::Count(0, 50, &Ty::List(&Ty::Obj(&BUDGET)))),
    ])
};
static NP_SPEC: Obj = Obj {
    moved: &[
        Moved {
            from: "consolidationPolicy",
            to: "spec.disruption.consolidationPolicy",
        },
        Moved {
            from: "consolidateAfter",
            to: "spec.disruption.consolidateAfter",
        },
        Moved {
            from: "consolidation",
            to: "spec.disruption.consolidationPolicy",
        },
        Moved {
            from: "ttlSecondsAfterEmpty",
            to: "spec.disruption.consolidateAfter",
        },
        Moved {
            from: "expireAfter",
            to: "spec.template.spec.expireAfter",
        },
        Moved {
            from: "ttlSecondsUntilExpired",
            to: "spec.template.spec.expireAfter",
        },
        Moved {
            from: "terminationGracePeriod",
            to: "spec.template.spec.terminationGracePeriod",
        },
        Moved {
            from: "requirements",
            to: "spec.template.spec.requirements",
        },
        Moved {
            from: "taints",
            to: "spec.template.spec.taints",
        },
        Moved {
            from: "startupTaints",
            to: "spec.template.spec.startupTaints",
        },
        Moved {
            from: "nodeClassRef",
            to: "spec.template.spec.nodeClassRef",
        },
        Moved {
            from: "providerRef",
            to: "spec.template.spec.nodeClassRef",
        },
        Moved {
            from: "labels",
            to: "spec.template.metadata.labels",
        },
        Moved {
            from: "annotations",
            to: "spec.template.metadata.annotations",
        },
        Moved {
            from: "kubeletConfiguration",
            to: "EC2NodeClass `spec.kubelet`",
        },
    ],
    ..crd(&[
        req("template", Ty::Obj(&NP_TEMPLATE)),
        f("disruption", Ty::Obj(&NP_DISRUPTION)),
        f("limits", Ty::Map(&Ty::QuantityPattern)),
        f("weight", Ty::Int(1, 100)),
        f("replicas", NON_NEG),
    ])
};

pub static NODEPOOL_V1: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    req("spec", Ty::Obj(&NP_SPEC)),
]);

// ---------------------------------------------------------------------------------------------
// Karpenter NodeClaim karpenter.sh/v1: a NodePool template's spec, with resource requests

static NC_SPEC: Obj = Obj {
    ignored: &["kubelet"],
    ..crd(&NODE_SPEC)
};
pub static NODECLAIM_V1: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    req("spec", Ty::Obj(&NC_SPEC)),
]);
