//! Built-in field knowledge of the AWS provider's EC2NodeClass (`karpenter.k8s.aws/v1`), from
//! the CRD of Karpenter v1.14.

use super::*;

// ---------------------------------------------------------------------------------------------
// Karpenter EC2NodeClass karpenter.k8s.aws/v1

static AMI_TERM: Obj = crd(&[
    f("alias", Ty::Str),
    f("id", Ty::Str),
    f("name", Ty::Str),
    f("owner", Ty::Str),
    f("ssmParameter", Ty::Str),
    f("tags", STR_MAP),
]);
static ID_TAGS_TERM: Obj = crd(&[f("id", Ty::Str), f("tags", STR_MAP)]);
static SG_TERM: Obj = crd(&[f("id", Ty::Str), f("name", Ty::Str), f("tags", STR_MAP)]);
/// A capacity reservation id: `^cr-[0-9a-z]+$`.
fn reservation_id(s: &str) -> bool {
    id_after(s, "cr-")
}
/// An AWS account id: `^[0-9]{12}$`.
fn account_id(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}
/// `prefix` and then at least one lower-case letter or digit.
fn id_after(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|r| {
        !r.is_empty()
            && r.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}
static RESERVATION_ID: Format = Format {
    what: "a capacity reservation id (`cr-` and lower-case letters and digits)",
    ok: reservation_id,
};
static ACCOUNT_ID: Format = Format {
    what: "an AWS account id (12 digits)",
    ok: account_id,
};
static CR_TERM: Obj = crd(&[
    f("id", Ty::Format(&RESERVATION_ID)),
    f(
        "instanceMatchCriteria",
        Ty::Enum(&["open", "targeted"], &[]),
    ),
    f("ownerID", Ty::Format(&ACCOUNT_ID)),
    f("tags", Ty::Count(0, 20, &STR_MAP)),
]);
static EBS: Obj = crd(&[
    f("deleteOnTermination", Ty::Bool),
    f("encrypted", Ty::Bool),
    f("iops", ANY_INT),
    f("kmsKeyID", Ty::Str),
    f("snapshotID", Ty::Str),
    f("throughput", ANY_INT),
    f("volumeInitializationRate", Ty::Int(100, 300)),
    f("volumeSize", Ty::Format(&VOLUME_SIZE)),
    f(
        "volumeType",
        Ty::Enum(&["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"], &[]),
    ),
]);
static BLOCK_DEVICE: Obj = crd(&[
    f("deviceName", Ty::Str),
    f("ebs", Ty::Obj(&EBS)),
    f("rootVolume", Ty::Bool),
]);
/// A `kubeReserved` or `systemReserved` value: a quantity, as a string.
fn reserved(s: &str) -> bool {
    crate::schema::check::quantity_pattern(s)
}
/// An eviction threshold: a percentage up to `100%` with at most two decimals, a quantity, or
/// empty (the CRD's pattern has an empty alternative).
fn eviction(s: &str) -> bool {
    let Some(p) = s.strip_suffix('%') else {
        return s.is_empty() || reserved(s);
    };
    let digits =
        |t: &str, max: usize| (1..=max).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
    let (int, frac) = match p.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (p, None),
    };
    if int == "100" {
        return frac.is_none_or(|f| digits(f, 2) && f.bytes().all(|b| b == b'0'));
    }
    digits(int, 2) && frac.is_none_or(|f| digits(f, 2))
}
/// A placement group id: `^pg-[0-9a-z]+$`.
fn placement_group_id(s: &str) -> bool {
    s.strip_prefix("pg-").is_some_and(|r| {
        !r.is_empty()
            && r.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}
fn non_empty(s: &str) -> bool {
    !s.is_empty()
}
static RESERVED: Format = Format {
    what: "a quantity such as `100m`, `1Gi` or `10`",
    ok: reserved,
};
static EVICTION: Format = Format {
    what: "a percentage up to `100%` (two decimals at most) or a quantity such as `500Mi`",
    ok: eviction,
};
static PLACEMENT_GROUP_ID: Format = Format {
    what: "a placement group id (`pg-` and lower-case letters and digits)",
    ok: placement_group_id,
};
static NON_EMPTY: Format = Format {
    what: "a name (at least one character)",
    ok: non_empty,
};
const INT32_NON_NEG: Ty = Ty::Int(0, i32::MAX as i64);
static KUBELET: Obj = crd(&[
    f("clusterDNS", STRINGS),
    f("cpuCFSQuota", Ty::Bool),
    f("evictionHard", Ty::Map(&Ty::Format(&EVICTION))),
    f("evictionMaxPodGracePeriod", INT32),
    f("evictionSoft", Ty::Map(&Ty::Format(&EVICTION))),
    f("evictionSoftGracePeriod", STR_MAP),
    f("imageGCHighThresholdPercent", Ty::Int(0, 100)),
    f("imageGCLowThresholdPercent", Ty::Int(0, 100)),
    f("kubeReserved", Ty::Map(&Ty::Format(&RESERVED))),
    f("maxPods", INT32_NON_NEG),
    f("podsPerCore", INT32_NON_NEG),
    f("systemReserved", Ty::Map(&Ty::Format(&RESERVED))),
]);
const ON_OFF: Ty = Ty::Enum(&["enabled", "disabled"], &[]);
static METADATA_OPTIONS: Obj = crd(&[
    f("httpEndpoint", ON_OFF),
    f("httpProtocolIPv6", ON_OFF),
    f("httpPutResponseHopLimit", Ty::Int(1, 64)),
    f("httpTokens", Ty::Enum(&["required", "optional"], &[])),
]);
static NETWORK_INTERFACE: Obj = crd(&[
    req("networkCardIndex", NON_NEG),
    req("deviceIndex", NON_NEG),
    req("interfaceType", Ty::Enum(&["interface", "efa-only"], &[])),
]);
static CONNECTION_TRACKING: Obj = crd(&[
    f("tcpEstablishedTimeout", Ty::Int(60, 432_000)),
    f("udpStreamTimeout", Ty::Int(60, 180)),
    f("udpTimeout", Ty::Int(30, 60)),
]);
static CPU_OPTIONS: Obj = crd(&[f("nestedVirtualization", ON_OFF)]);
static PLACEMENT_GROUP: Obj = crd(&[
    f("id", Ty::Format(&PLACEMENT_GROUP_ID)),
    f("name", Ty::Format(&NON_EMPTY)),
]);
static EC2NC_SPEC: Obj = Obj {
    moved: &[
        Moved {
            from: "amiSelector",
            to: "spec.amiSelectorTerms",
        },
        Moved {
            from: "subnetSelector",
            to: "spec.subnetSelectorTerms",
        },
        Moved {
            from: "securityGroupSelector",
            to: "spec.securityGroupSelectorTerms",
        },
    ],
    ..crd(&[
        f(
            "amiFamily",
            Ty::Enum(
                &[
                    "AL2",
                    "AL2023",
                    "Bottlerocket",
                    "Custom",
                    "Windows2019",
                    "Windows2022",
                    "Windows2025",
                ],
                &[],
            ),
        ),
        req("amiSelectorTerms", Ty::List(&Ty::Obj(&AMI_TERM))),
        f("associatePublicIPAddress", Ty::Bool),
        f("blockDeviceMappings", Ty::List(&Ty::Obj(&BLOCK_DEVICE))),
        f(
            "capacityReservationSelectorTerms",
            Ty::Count(0, 30, &Ty::List(&Ty::Obj(&CR_TERM))),
        ),
        f("connectionTracking", Ty::Obj(&CONNECTION_TRACKING)),
        f("context", Ty::Str),
        f("cpuOptions", Ty::Obj(&CPU_OPTIONS)),
        f("detailedMonitoring", Ty::Bool),
        f("instanceProfile", Ty::Str),
        f("instanceStorePolicy", Ty::Enum(&["RAID0"], &[])),
        f("ipPrefixCount", NON_NEG),
        f("kubelet", Ty::Obj(&KUBELET)),
        f("metadataOptions", Ty::Obj(&METADATA_OPTIONS)),
        f("networkInterfaces", Ty::List(&Ty::Obj(&NETWORK_INTERFACE))),
        f("placementGroupSelector", Ty::Obj(&PLACEMENT_GROUP)),
        f("role", Ty::Str),
        req("securityGroupSelectorTerms", Ty::List(&Ty::Obj(&SG_TERM))),
        req("subnetSelectorTerms", Ty::List(&Ty::Obj(&ID_TAGS_TERM))),
        f("tags", STR_MAP),
        f("userData", Ty::Str),
    ])
};
pub static EC2NODECLASS_V1: Obj = crd(&[
    CRD_ROOT_FIELDS[0],
    CRD_ROOT_FIELDS[1],
    CRD_ROOT_FIELDS[2],
    CRD_ROOT_FIELDS[3],
    req("spec", Ty::Obj(&EC2NC_SPEC)),
]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_thresholds_and_placement_groups() {
        for ok in [
            "5%", "10.5%", "99.99%", "100%", "100.00%", "0%", "500Mi", "1.5Gi", "",
        ] {
            assert!(eviction(ok), "{ok}");
        }
        for bad in [
            "5%3", "110%", "100.5%", "1.234%", "%", "110GB", ".5%", "5%%",
        ] {
            assert!(!eviction(bad), "{bad}");
        }
        assert!(
            placement_group_id("pg-0123abc")
                && !placement_group_id("pg-")
                && !placement_group_id("pg-ABC")
        );
    }
}
