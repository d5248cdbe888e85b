//! The EC2NodeClass CRD's CEL rules on `spec.kubelet` and `spec.placementGroupSelector`.

use super::*;

/// The eviction signals the kubelet rules allow as keys.
const SIGNALS: &[&str] = &[
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
];
/// The resources `kubeReserved` and `systemReserved` may reserve.
const RESERVABLE: &[&str] = &["cpu", "memory", "ephemeral-storage", "pid"];

/// The CRD's rule message listing the keys allowed in `field`.
fn valid_keys(field: &str, keys: &[&str]) -> String {
    let listed: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    format!("valid keys for {field} are [{}]", listed.join(","))
}

/// Keys of a map the rule `self.all(x, x in [...])` confines.
fn keys_in<'a>(kubelet: Node<'a>, field: &str, allowed: &[&str], out: &mut Vec<Violation<'a>>) {
    for (k, kn, _) in kubelet.get(field).into_iter().flat_map(Node::entries) {
        if !allowed.contains(&k) && !is_placeholder(k) {
            rule(
                out,
                kn,
                format!("`spec.kubelet.{field}` has the key `{k}`"),
                &valid_keys(field, allowed),
            );
        }
    }
}

pub(super) fn kubelet<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some(kubelet) = spec.get("kubelet").filter(|k| k.as_map().is_some()) else {
        return;
    };
    for field in ["evictionHard", "evictionSoft", "evictionSoftGracePeriod"] {
        keys_in(kubelet, field, SIGNALS, out);
    }
    for field in ["kubeReserved", "systemReserved"] {
        keys_in(kubelet, field, RESERVABLE, out);
        for (k, _, v) in kubelet.get(field).into_iter().flat_map(Node::entries) {
            if judged(v).is_some_and(|s| s.starts_with('-')) {
                rule(
                    out,
                    v,
                    format!("`spec.kubelet.{field}.{k}` is negative"),
                    &format!("{field} value cannot be a negative resource quantity"),
                );
            }
        }
    }
    let percent = |f: &str| {
        kubelet
            .get(f)
            .and_then(|n| Some((n, n.as_str()?.parse::<i64>().ok()?)))
    };
    if let (Some((high, h)), Some((_, l))) = (
        percent("imageGCHighThresholdPercent"),
        percent("imageGCLowThresholdPercent"),
    ) && h <= l
    {
        rule(
            out,
            high,
            format!(
                "`spec.kubelet.imageGCHighThresholdPercent` is {h}, not above the low threshold {l}"
            ),
            "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
        );
    }
    matched(kubelet, "evictionSoft", "evictionSoftGracePeriod", out);
    matched(kubelet, "evictionSoftGracePeriod", "evictionSoft", out);
}

/// Each key of `field` must be a key of `other` (a soft threshold and its grace period come
/// together). The CRD's rule fails to evaluate when `other` is absent, which rejects too.
fn matched<'a>(kubelet: Node<'a>, field: &str, other: &str, out: &mut Vec<Violation<'a>>) {
    let theirs = kubelet.get(other).filter(|o| !o.is_null());
    if theirs.is_some_and(|o| o.as_map().is_none()) {
        return;
    }
    for (k, kn, _) in kubelet.get(field).into_iter().flat_map(Node::entries) {
        if is_placeholder(k) || theirs.is_some_and(|o| o.get(k).is_some()) {
            continue;
        }
        let owner = if field == "evictionSoft" {
            "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod"
        } else {
            "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft"
        };
        rule(
            out,
            kn,
            format!("`spec.kubelet.{field}.{k}` has no `{other}` entry"),
            owner,
        );
    }
}

/// `placementGroupSelector`: by `name` or by `id`, not both.
pub(super) fn placement_group<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some((pk, p)) = spec
        .entry("placementGroupSelector")
        .filter(|(_, p)| p.as_map().is_some())
    else {
        return;
    };
    match (has(p, "name"), has(p, "id")) {
        (false, false) => rule(
            out,
            pk,
            "`spec.placementGroupSelector` selects by neither `name` nor `id`".into(),
            "expected at least one, got none, ['name', 'id']",
        ),
        (true, true) => rule(
            out,
            pk,
            "`spec.placementGroupSelector` sets both `name` and `id`".into(),
            "'name' and 'id' are mutually exclusive",
        ),
        _ => {}
    }
}
