//! The named MIG layouts of the NVIDIA GPU operator's default MIG manager configuration
//! (`default-mig-parted-config`, `assets/state-mig-manager/0400_configmap.yaml` in
//! NVIDIA/gpu-operator), which a node's `nvidia.com/mig.config` label picks:
//! - `all-disabled`: MIG off; `all-enabled`: MIG on with no instance made;
//! - `all-<profile>` (`all-1g.10gb`) and `all-<profile>.me` (`all-1g.10gb.me` for
//!   `1g.10gb+me`): every GPU cut into as many instances of that one profile as fit;
//! - `all-balanced`: per model two 1g, one 2g and one 3g instance (`1g.10gb` ×2, `2g.20gb`,
//!   `3g.40gb` on an 80 GB A100 or H100).
//!
//! A layout the model has no such profile for fails to apply (the MIG manager sets
//! `nvidia.com/mig.config.state=failed`) and the node advertises no MIG device.

use super::mig::MigGpu;

/// What a layout makes of each GPU of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout<'n> {
    /// MIG off: whole GPUs.
    Disabled,
    /// MIG on, no instances: nothing to advertise.
    Enabled,
    /// As many instances of one profile as fit: `1g.10gb`, or with `media` its `+me` variant
    /// (one per GPU).
    Uniform { profile: &'n str, media: bool },
    /// Two 1g, one 2g and one 3g instance of the model's smallest memory size.
    Balanced,
}

/// The default layout of this name, if the GPU operator's default configuration has it.
pub fn default_layout(name: &str) -> Option<Layout<'_>> {
    match name {
        "all-disabled" => Some(Layout::Disabled),
        "all-enabled" => Some(Layout::Enabled),
        "all-balanced" => Some(Layout::Balanced),
        _ => {
            let profile = name.strip_prefix("all-")?;
            let (base, media) = match profile.strip_suffix(".me") {
                Some(b) => (b, true),
                None => (profile, false),
            };
            let known = super::MIG_GPUS.iter().any(|m| match media {
                true => m
                    .profiles
                    .iter()
                    .any(|p| p.name.strip_suffix("+me") == Some(base)),
                false => m.profile(base).is_some(),
            });
            known.then_some(Layout::Uniform {
                profile: base,
                media,
            })
        }
    }
}

impl Layout<'_> {
    /// The MIG devices one GPU of `gpu` gets, as (advertised profile, count); `None` when the
    /// layout cannot apply to that model (no such profile), and empty when MIG is off or holds
    /// no instance.
    pub fn devices(&self, gpu: &MigGpu) -> Option<Vec<(&'static str, u32)>> {
        match *self {
            Layout::Disabled | Layout::Enabled => Some(Vec::new()),
            Layout::Uniform { profile, media } => {
                let p = match media {
                    true => gpu.profile(&format!("{profile}+me"))?,
                    false => gpu.profile(profile)?,
                };
                Some(vec![(p.resource_profile(), p.max)])
            }
            Layout::Balanced => {
                // The smallest-memory profile of each compute size 1, 2 and 3.
                let of = |slices: u32| {
                    gpu.profiles
                        .iter()
                        .find(|p| p.slices() == slices && !p.name.ends_with("+me"))
                        .map(|p| p.name)
                };
                Some(vec![(of(1)?, 2), (of(2)?, 1), (of(3)?, 1)])
            }
        }
    }
    /// Whether the layout turns MIG on (whole GPUs are then no longer advertised).
    pub fn enables_mig(&self) -> bool {
        !matches!(self, Layout::Disabled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::mig::MIG_GPUS;

    fn model(name: &str) -> &'static MigGpu {
        MIG_GPUS.iter().find(|m| m.model == name).unwrap()
    }

    #[test]
    fn uniform_layouts_fill_each_gpu() {
        let l = default_layout("all-1g.10gb").unwrap();
        assert_eq!(l.devices(model("H100 80GB")), Some(vec![("1g.10gb", 7)]));
        assert_eq!(l.devices(model("A100 40GB")), Some(vec![("1g.10gb", 4)]));
        assert_eq!(l.devices(model("H200 141GB")), None);
        let me = default_layout("all-1g.10gb.me").unwrap();
        assert_eq!(me.devices(model("A100 80GB")), Some(vec![("1g.10gb", 1)]));
        assert_eq!(default_layout("all-1g.11gb"), None);
        assert_eq!(default_layout("custom"), None);
    }

    #[test]
    fn balanced_layouts_follow_the_operator() {
        let b = default_layout("all-balanced").unwrap();
        let devices = |m: &str| b.devices(model(m)).unwrap();
        assert_eq!(
            devices("A100 40GB"),
            [("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1)]
        );
        assert_eq!(
            devices("H100 80GB"),
            [("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)]
        );
        assert_eq!(
            devices("H200 141GB"),
            [("1g.18gb", 2), ("2g.35gb", 1), ("3g.71gb", 1)]
        );
        assert_eq!(
            devices("B200 180GB"),
            [("1g.23gb", 2), ("2g.45gb", 1), ("3g.90gb", 1)]
        );
        assert_eq!(
            devices("GH200 96GB"),
            [("1g.12gb", 2), ("2g.24gb", 1), ("3g.48gb", 1)]
        );
        assert!(!default_layout("all-disabled").unwrap().enables_mig());
    }
}
