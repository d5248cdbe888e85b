//! Checks of one workload class: its name, GPU ceiling and Karpenter lifecycle fields.

use super::V;
use super::formats::{is_budget, is_duration, is_volume_size};
use super::gpus::gpu_selector;
use crate::render::platform::{AmiFamily, ClassSpec};
use crate::render::profile::{Class, ClassType, Tier};
use crate::render::wrong::Wrong;
use serde_saphyr::Spanned;

/// Longest class name: NodePools are named `<class>-on-demand` (63 characters at most).
pub(super) const MAX_CLASS_NAME: usize = 63 - "-on-demand".len();

pub(super) fn class(v: &mut V, c: &Class, family: AmiFamily) -> Option<ClassSpec> {
    let mut ok = v.dns_label(&c.name, "class", MAX_CLASS_NAME);
    let selector = gpu_selector(v, c);
    ok &= selector.is_some();
    if c.max_gpus.value == 0 {
        v.err(
            Wrong::OutOfRange,
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
                v.err(
                    Wrong::InvalidValue,
                    s,
                    format!("`{}` is not {what}", s.value),
                )
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
    let (sharing, selector, instances) = super::sharing::sharing(v, c, selector, instances)?;
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
        sharing,
    })
}
