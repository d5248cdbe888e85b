//! The envelopes of the built-in workloads (`apps/v1`, `batch/v1`, `v1` Pod): their top level,
//! their spec and their pod template's own keys. The pod spec inside is walked with every pod
//! template (`POD_SPEC`); here it is `any`.
//!
//! The top level and a template hold a fixed set of keys (an unknown one is dropped); a spec may
//! grow with new releases, so only near misses of its fields are reported there.

use super::{Moved, Obj, Ty, Unknown, any, f, typos};

const TOP_MOVED: &[Moved] = &[
    Moved {
        from: "labels",
        to: "metadata.labels",
    },
    Moved {
        from: "annotations",
        to: "metadata.annotations",
    },
    Moved {
        from: "name",
        to: "metadata.name",
    },
    Moved {
        from: "namespace",
        to: "metadata.namespace",
    },
];

const fn fixed(fields: &'static [super::Field], moved: &'static [Moved]) -> Obj {
    Obj {
        fields,
        unknown: Unknown::Dropped,
        moved,
        ignored: &[],
        renamed: &[],
    }
}

macro_rules! top {
    ($spec:expr) => {
        fixed(
            &[
                any("apiVersion"),
                any("kind"),
                any("metadata"),
                f("spec", $spec),
                any("status"),
            ],
            TOP_MOVED,
        )
    };
}

/// A pod template's own level (`metadata`, `spec`); `$at` is where it sits, for the fields
/// written beside them that belong inside.
macro_rules! template {
    ($at:literal) => {
        fixed(
            &[any("metadata"), any("spec")],
            &[
                Moved {
                    from: "labels",
                    to: concat!($at, ".metadata.labels"),
                },
                Moved {
                    from: "annotations",
                    to: concat!($at, ".metadata.annotations"),
                },
                Moved {
                    from: "containers",
                    to: concat!($at, ".spec.containers"),
                },
            ],
        )
    };
}

static TEMPLATE: Obj = template!("spec.template");
static CRON_TEMPLATE: Obj = template!("spec.jobTemplate.spec.template");
const T: Ty = Ty::Obj(&TEMPLATE);

static DEPLOYMENT_SPEC: Obj = typos(&[
    any("minReadySeconds"),
    any("paused"),
    any("progressDeadlineSeconds"),
    any("replicas"),
    any("revisionHistoryLimit"),
    any("selector"),
    any("strategy"),
    f("template", T),
]);
static STATEFUL_SET_SPEC: Obj = typos(&[
    any("minReadySeconds"),
    any("ordinals"),
    any("persistentVolumeClaimRetentionPolicy"),
    any("podManagementPolicy"),
    any("replicas"),
    any("revisionHistoryLimit"),
    any("selector"),
    any("serviceName"),
    f("template", T),
    any("updateStrategy"),
    any("volumeClaimTemplates"),
]);
static DAEMON_SET_SPEC: Obj = typos(&[
    any("minReadySeconds"),
    any("revisionHistoryLimit"),
    any("selector"),
    f("template", T),
    any("updateStrategy"),
]);
static REPLICA_SET_SPEC: Obj = typos(&[
    any("minReadySeconds"),
    any("replicas"),
    any("selector"),
    f("template", T),
]);
macro_rules! job_spec {
    ($template:expr) => {
        typos(&[
            any("activeDeadlineSeconds"),
            any("backoffLimit"),
            any("backoffLimitPerIndex"),
            any("completionMode"),
            any("completions"),
            any("managedBy"),
            any("manualSelector"),
            any("maxFailedIndexes"),
            any("parallelism"),
            any("podFailurePolicy"),
            any("podReplacementPolicy"),
            any("selector"),
            any("successPolicy"),
            any("suspend"),
            f("template", $template),
            any("ttlSecondsAfterFinished"),
        ])
    };
}
static JOB_SPEC: Obj = job_spec!(T);
static CRON_JOB_SPEC_OF_JOB: Obj = job_spec!(Ty::Obj(&CRON_TEMPLATE));
static JOB_TEMPLATE: Obj = fixed(
    &[any("metadata"), f("spec", Ty::Obj(&CRON_JOB_SPEC_OF_JOB))],
    &[],
);
static CRON_JOB_SPEC: Obj = typos(&[
    any("concurrencyPolicy"),
    any("failedJobsHistoryLimit"),
    f("jobTemplate", Ty::Obj(&JOB_TEMPLATE)),
    any("schedule"),
    any("startingDeadlineSeconds"),
    any("successfulJobsHistoryLimit"),
    any("suspend"),
    any("timeZone"),
]);

pub static DEPLOYMENT: Obj = top!(Ty::Obj(&DEPLOYMENT_SPEC));
pub static STATEFUL_SET: Obj = top!(Ty::Obj(&STATEFUL_SET_SPEC));
pub static DAEMON_SET: Obj = top!(Ty::Obj(&DAEMON_SET_SPEC));
pub static REPLICA_SET: Obj = top!(Ty::Obj(&REPLICA_SET_SPEC));
pub static JOB: Obj = top!(Ty::Obj(&JOB_SPEC));
pub static CRON_JOB: Obj = top!(Ty::Obj(&CRON_JOB_SPEC));
pub static POD: Obj = top!(Ty::Any);
