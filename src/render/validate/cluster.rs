//! Checks of the `cluster` section, and of the device plugin its AMI family allows.

use super::V;
use crate::render::platform::{AmiFamily, ClusterSpec};
use crate::render::profile::{DevicePlugin, Profile};
use crate::render::wrong::Wrong;

pub(super) fn cluster(v: &mut V, p: &Profile) -> ClusterSpec {
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
            Wrong::InvalidName,
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
        v.err(
            Wrong::InvalidValue,
            &c.region,
            format!("`{region}` is not an AWS region"),
        )
        .help("e.g. us-east-1, eu-west-2");
    }
    if c.zones.value.is_empty() {
        v.err(
            Wrong::OutOfRange,
            &c.zones,
            "`zones` is empty: list the availability zones GPU nodes may use",
        );
    }
    for (i, z) in c.zones.value.iter().enumerate() {
        if let Some(first) = c.zones.value[..i].iter().find(|o| o.value == z.value) {
            let fs = v.at(first);
            v.err(
                Wrong::Duplicate,
                z,
                format!("zone `{}` is listed twice", z.value),
            )
            .related(fs, "first listed here");
            continue;
        }
        let in_region = z
            .value
            .strip_prefix(region.as_str())
            .and_then(|rest| rest.chars().next())
            .is_some_and(|ch| ch.is_ascii_lowercase() || ch == '-');
        if region_ok && !in_region {
            v.err(
                Wrong::InvalidValue,
                z,
                format!("zone `{}` is not in region `{region}`", z.value),
            )
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
        v.err(
            Wrong::InvalidName,
            &c.node_role,
            format!("`{role}` is not an IAM role name"),
        )
        .help("the role's name (not its ARN): up to 64 letters, digits and +=,.@-_");
    }
    let discovery_tag = match &c.discovery_tag {
        Some(t) => {
            if t.value.trim().is_empty() {
                v.err(Wrong::OutOfRange, t, "`discoveryTag` is empty");
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
                    v.err(Wrong::NotAllowed, &c.ami_alias, format!("AMI family `{fam}` cannot run the GPU classes"))
                        .help("use al2023 or bottlerocket; Karpenter picks their NVIDIA variants for GPU instances");
                }
            }
            if ver == "latest" {
                v.err(Wrong::InvalidValue, &c.ami_alias, format!("`{alias}` is not pinned: every AMI release would drift and replace every GPU node"))
                    .help(format!("pin a version, e.g. `{fam}@v20250715` (al2023) or `bottlerocket@v1.42.0`"));
            } else if alias.len() > 30 {
                v.err(
                    Wrong::OutOfRange,
                    &c.ami_alias,
                    format!("`{alias}` is longer than the 30 characters Karpenter accepts"),
                );
            } else if !fam.chars().all(|ch| ch.is_ascii_alphanumeric()) {
                v.err(
                    Wrong::InvalidValue,
                    &c.ami_alias,
                    format!("`{alias}` is not a Karpenter AMI alias"),
                );
            }
        }
        _ => {
            v.err(
                Wrong::InvalidValue,
                &c.ami_alias,
                format!("`{alias}` is not an AMI alias"),
            )
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

pub(super) fn device_plugin(v: &mut V, p: &Profile, family: AmiFamily) -> Option<DevicePlugin> {
    let dp = p.device_plugin.as_ref()?;
    match dp.value {
        // Two plugins registering `nvidia.com/gpu` on one kubelet replace each other's
        // registration; the host's plugin on Bottlerocket is the one to keep.
        DevicePlugin::Nvidia if family == AmiFamily::Bottlerocket => {
            let at = v.at(&p.cluster.ami_alias);
            v.err(Wrong::Conflict, dp, "Bottlerocket's NVIDIA variants already run the NVIDIA device plugin on the host: a DaemonSet would register `nvidia.com/gpu` a second time")
                .related(at, "Bottlerocket chosen here")
                .help("remove `devicePlugin` (it is for al2023, whose NVIDIA AMIs ship the driver but not the plugin)");
            None
        }
        d => Some(d),
    }
}
