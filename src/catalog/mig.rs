//! MIG (Multi-Instance GPU) facts per GPU model: which models can be partitioned, into which
//! profiles, and how many instances of each fit on one GPU.
//!
//! Profile names are those the NVIDIA device plugin advertises under the `mixed` strategy as
//! `nvidia.com/mig-<profile>` (`nvidia.com/mig-1g.10gb`). Sources:
//! - NVIDIA MIG User Guide, "Supported GPUs" (every model below partitions into at most 7
//!   instances; A30 into 4) and "Supported MIG Profiles" (the A100-SXM4-40GB table: 1g.5gb ×7,
//!   1g.5gb+me ×1, 1g.10gb ×4, 2g.10gb ×3, 3g.20gb ×2, 4g.20gb ×1, 7g.40gb ×1; A100-80GB with
//!   doubled memory names), docs.nvidia.com/datacenter/tesla/mig-user-guide/.
//! - The NVIDIA GPU operator's default MIG manager configuration (`default-mig-parted-config`,
//!   `assets/state-mig-manager/0400_configmap.yaml` in NVIDIA/gpu-operator): one `all-<profile>`
//!   layout per profile with the most instances that fit, commented per model, for the H100,
//!   H100 NVL, H200, GH200 and B200 rows. The stored copy of the user guide's profile page ends
//!   within the A100 table, so those rows rest on the operator's configuration; AWS's
//!   sagemaker-hyperpod-cli lists the same names for p4d, p4de, p5, p5e, p5en and p6-b200.
//! - `+me` profiles (one instance per GPU that owns the media engines): the device plugin
//!   declares `nvidia.com/mig-<profile>.me` (`+` made `.`, `internal/rm/rm.go`), but it matches
//!   profiles unanchored, so such an instance is counted as one more of the plain name
//!   (NVIDIA/k8s-device-plugin issue 1462, October 2025). gpuops takes the plain name for them
//!   and judges no `.me` request.
//!
//! Unsure: the memory part of a name is computed by the driver from the memory the GPU reports
//! and has varied (an A100 80GB once reported `7g.79gb`, NVIDIA/gpu-operator issue 351); the
//! 94 GB H100 (NVL) and the GH200s are in no AWS instance type of the catalog, kept so a profile
//! of theirs is known to exist.

use super::Instance;

/// A MIG profile of one GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// `1g.10gb`: compute slices, then memory; `+me` for the media-engine variant.
    pub name: &'static str,
    /// Most instances of it one GPU holds.
    pub max: u32,
}

impl Profile {
    /// The name the device plugin advertises it under (`1g.10gb` for `1g.10gb+me`).
    pub fn resource_profile(&self) -> &'static str {
        self.name.strip_suffix("+me").unwrap_or(self.name)
    }
    /// Its compute slices out of 7 (the `1` of `1g.10gb`).
    pub fn slices(&self) -> u32 {
        self.name
            .split_once('g')
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or(0)
    }
}

/// A GPU model that MIG partitions.
#[derive(Debug, PartialEq, Eq)]
pub struct MigGpu {
    /// How NVIDIA names it (`A100 40GB`).
    pub model: &'static str,
    /// Karpenter's `karpenter.k8s.aws/instance-gpu-name` for it (`a100`).
    pub gpu_name: &'static str,
    /// Memory per GPU in GiB, as the full-GPU profile names it (40 for `7g.40gb`).
    pub memory_gib: u64,
    /// Smallest first.
    pub profiles: &'static [Profile],
}

const fn p(name: &'static str, max: u32) -> Profile {
    Profile { name, max }
}

/// The 80 GB A100's and H100's profiles: the same memory, the same names.
const PROFILES_80GB: [Profile; 7] = [
    p("1g.10gb", 7),
    p("1g.10gb+me", 1),
    p("1g.20gb", 4),
    p("2g.20gb", 3),
    p("3g.40gb", 2),
    p("4g.40gb", 1),
    p("7g.80gb", 1),
];

/// Every MIG-capable model gpuops knows; a GPU name absent here (t4, a10g, l4, l40s, v100) has
/// no MIG.
pub const MIG_GPUS: [MigGpu; 8] = [
    MigGpu {
        model: "A100 40GB",
        gpu_name: "a100",
        memory_gib: 40,
        profiles: &[
            p("1g.5gb", 7),
            p("1g.5gb+me", 1),
            p("1g.10gb", 4),
            p("2g.10gb", 3),
            p("3g.20gb", 2),
            p("4g.20gb", 1),
            p("7g.40gb", 1),
        ],
    },
    MigGpu {
        model: "A100 80GB",
        gpu_name: "a100",
        memory_gib: 80,
        profiles: &PROFILES_80GB,
    },
    MigGpu {
        model: "H100 80GB",
        gpu_name: "h100",
        memory_gib: 80,
        profiles: &PROFILES_80GB,
    },
    MigGpu {
        model: "H100 94GB",
        gpu_name: "h100",
        memory_gib: 94,
        profiles: &[
            p("1g.12gb", 7),
            p("1g.12gb+me", 1),
            p("1g.24gb", 4),
            p("2g.24gb", 3),
            p("3g.47gb", 2),
            p("4g.47gb", 1),
            p("7g.94gb", 1),
        ],
    },
    MigGpu {
        model: "GH200 96GB",
        gpu_name: "gh200",
        memory_gib: 96,
        profiles: &[
            p("1g.12gb", 7),
            p("1g.12gb+me", 1),
            p("1g.24gb", 4),
            p("2g.24gb", 3),
            p("3g.48gb", 2),
            p("4g.48gb", 1),
            p("7g.96gb", 1),
        ],
    },
    MigGpu {
        model: "H200 141GB",
        gpu_name: "h200",
        memory_gib: 141,
        profiles: &[
            p("1g.18gb", 7),
            p("1g.18gb+me", 1),
            p("1g.35gb", 4),
            p("2g.35gb", 3),
            p("3g.71gb", 2),
            p("4g.71gb", 1),
            p("7g.141gb", 1),
        ],
    },
    MigGpu {
        model: "GH200 144GB",
        gpu_name: "gh200",
        memory_gib: 144,
        profiles: &[
            p("1g.18gb", 7),
            p("1g.18gb+me", 1),
            p("1g.36gb", 4),
            p("2g.36gb", 3),
            p("3g.72gb", 2),
            p("4g.72gb", 1),
            p("7g.144gb", 1),
        ],
    },
    MigGpu {
        model: "B200 180GB",
        gpu_name: "b200",
        memory_gib: 180,
        profiles: &[
            p("1g.23gb", 7),
            p("1g.23gb+me", 1),
            p("1g.45gb", 4),
            p("2g.45gb", 3),
            p("3g.90gb", 2),
            p("4g.90gb", 1),
            p("7g.180gb", 1),
        ],
    },
];

impl MigGpu {
    /// The profiles its GPUs may be advertised under, each once, smallest first.
    pub fn resource_profiles(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for p in self.profiles {
            let name = p.resource_profile();
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }
    /// Whether a GPU of this model can be advertised as `nvidia.com/mig-<profile>`.
    pub fn offers(&self, profile: &str) -> bool {
        self.profiles
            .iter()
            .any(|p| p.resource_profile() == profile)
    }
    /// The profile of this name (`1g.10gb`, `1g.10gb+me`).
    pub fn profile(&self, name: &str) -> Option<&'static Profile> {
        self.profiles.iter().find(|p| p.name == name)
    }
}

/// The MIG model of a GPU the catalog names (`a100` with 40960 MiB per GPU), told apart by the
/// memory nearest to the model's; `None` for a GPU without MIG.
pub fn mig_gpu(gpu_name: &str, memory_mib: u64) -> Option<&'static MigGpu> {
    let gib = memory_mib / 1024;
    MIG_GPUS
        .iter()
        .filter(|m| m.gpu_name == gpu_name)
        .min_by_key(|m| m.memory_gib.abs_diff(gib))
}

/// Whether some MIG model has a profile advertised under this name.
pub fn is_known_profile(profile: &str) -> bool {
    MIG_GPUS.iter().any(|m| m.offers(profile))
}

/// Every profile name any MIG model is advertised under, each once, in table order.
pub fn all_resource_profiles() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for m in &MIG_GPUS {
        for p in m.resource_profiles() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The MIG profile a resource name asks for: `1g.10gb` of `nvidia.com/mig-1g.10gb` (and of the
/// time-sliced `nvidia.com/mig-1g.10gb.shared`); `None` for other names and for names not of
/// the `<n>g.<m>gb` form.
pub fn requested_profile(resource: &str) -> Option<&str> {
    let rest = resource.strip_prefix("nvidia.com/mig-")?;
    let profile = rest.strip_suffix(".shared").unwrap_or(rest);
    let (g, mem) = profile.split_once("g.")?;
    let gb = mem.strip_suffix("gb")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(g) && digits(gb)).then_some(profile)
}

impl Instance {
    /// The MIG model of this instance type's GPUs, if they have MIG.
    pub fn mig(&self) -> Option<&'static MigGpu> {
        mig_gpu(self.gpu_name, self.gpu_memory_mib)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(t: &str) -> &'static Instance {
        super::super::instances()
            .iter()
            .find(|i| i.instance_type == t)
            .unwrap()
    }

    #[test]
    fn instance_types_map_to_their_mig_model() {
        let model = |t: &str| instance(t).mig().map(|m| m.model);
        assert_eq!(model("p4d.24xlarge"), Some("A100 40GB"));
        assert_eq!(model("p4de.24xlarge"), Some("A100 80GB"));
        assert_eq!(model("p5.4xlarge"), Some("H100 80GB"));
        assert_eq!(model("p5.48xlarge"), Some("H100 80GB"));
        assert_eq!(model("p5e.48xlarge"), Some("H200 141GB"));
        assert_eq!(model("p5en.48xlarge"), Some("H200 141GB"));
        assert_eq!(model("p6-b200.48xlarge"), Some("B200 180GB"));
        for t in [
            "g4dn.xlarge",
            "g5.xlarge",
            "g6.xlarge",
            "g6e.xlarge",
            "p3.2xlarge",
        ] {
            assert_eq!(model(t), None, "{t}");
        }
    }

    #[test]
    fn profiles_follow_the_memory_of_the_model() {
        let a100_40 = instance("p4d.24xlarge").mig().unwrap();
        // 1g.10gb exists on the 40 GB A100 too (4 of them: two memory slices each).
        assert!(a100_40.offers("1g.10gb") && a100_40.offers("1g.5gb"));
        assert!(!a100_40.offers("1g.20gb") && !a100_40.offers("3g.40gb"));
        let h100 = instance("p5.48xlarge").mig().unwrap();
        assert!(h100.offers("3g.40gb") && !h100.offers("1g.5gb"));
        assert_eq!(
            h100.resource_profiles(),
            [
                "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"
            ]
        );
        assert!(!h100.offers("1g.10gb+me"));
        assert_eq!(h100.profile("1g.10gb").map(|p| p.max), Some(7));
        assert_eq!(h100.profile("3g.40gb").map(|p| p.slices()), Some(3));
    }

    #[test]
    fn every_model_fills_at_most_seven_slices() {
        for m in &MIG_GPUS {
            for p in m.profiles {
                assert!(p.slices() * p.max <= 7, "{} {}", m.model, p.name);
                assert!(
                    requested_profile(&format!("nvidia.com/mig-{}", p.resource_profile()))
                        .is_some()
                );
            }
            assert_eq!(m.profiles.last().map(|p| p.max), Some(1));
        }
    }

    #[test]
    fn requested_profiles_are_read_from_resource_names() {
        assert_eq!(requested_profile("nvidia.com/mig-1g.10gb"), Some("1g.10gb"));
        assert_eq!(
            requested_profile("nvidia.com/mig-3g.40gb.shared"),
            Some("3g.40gb")
        );
        assert_eq!(requested_profile("nvidia.com/gpu"), None);
        assert_eq!(requested_profile("nvidia.com/mig-big"), None);
        assert!(is_known_profile("1g.5gb") && !is_known_profile("1g.6gb"));
    }
}
