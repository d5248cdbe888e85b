//! AWS GPU instance facts (from Karpenter's generated instance-type tables), compiled in.
//!
//! `aws-gpu-instances.csv`, one row per instance type (44: every size Karpenter knows of g4dn, g5,
//! g6, g6e, gr6, p3, p3dn, p4d, p4de, p5, p5e, p5en, p6-b200). Sources, all in the
//! aws/karpenter-provider-aws repository:
//! - GPUs, GPU name, manufacturer and memory, vCPU, memory and `vpc.amazonaws.com/efa`
//!   (EC2 `MaximumEfaInterfaces`): the generated instance-type reference,
//!   `website/content/en/v1.14/reference/instance-types.md` (last changed 2026-07-11); the three p3
//!   rows from the v1.12 copy (2026-04-25), the types having left the newer tables.
//! - On-demand price (Linux, us-east-1, USD/hour): Karpenter's generated price table
//!   `pkg/providers/pricing/zz_generated.pricing_aws.go`, generated 2026-07-20. List prices, not
//!   spot; p5e.48xlarge has no entry there and so no price here.
//! - Neuron devices (`aws.amazon.com/neuron`, `aws.amazon.com/neurondevice`) and cores
//!   (`aws.amazon.com/neuroncore`): 0 on every row, as none of these types carries an Inferentia or
//!   Trainium chip. Inf1/Inf2/Trn1/Trn2 have no rows: the source catalog does not hold them, so a
//!   pool limited to them has an unknown instance set and is never judged by count.
//!
//! MIG profiles per GPU model ([`mig`]) and the GPU operator's named MIG layouts
//! ([`mig_layouts`]) are tables of gpuops' own, their sources named there; an instance type's
//! GPU name and memory pick its model ([`Instance::mig`]).

use std::sync::OnceLock;

pub mod mig;
pub mod mig_layouts;
pub mod pricing;
pub use mig::{MIG_GPUS, MigGpu};
pub use pricing::CostSettings;

#[derive(Debug, Clone)]
pub struct Instance {
    pub instance_type: &'static str,
    pub family: &'static str,
    pub category: &'static str,
    pub generation: &'static str,
    pub size: &'static str,
    pub gpu_count: u32,
    pub gpu_name: &'static str,
    pub gpu_manufacturer: &'static str,
    pub gpu_memory_mib: u64,
    pub vcpu: u32,
    pub memory_mib: u64,
    pub efa: u32,
    pub price_usd_hour: Option<f64>,
    /// Neuron devices (Inferentia/Trainium chips).
    pub neuron_devices: u32,
    pub neuron_cores: u32,
}

/// The Karpenter label an EKS Auto Mode instance label stands for: Auto Mode writes the
/// instance's category, family, generation, size, vCPUs and GPUs under `eks.amazonaws.com/`
/// with the values Karpenter writes under `karpenter.k8s.aws/`. Any other key is returned as is
/// (the memory labels too: their values are not judged).
pub fn karpenter_key(key: &str) -> &str {
    match key {
        "eks.amazonaws.com/instance-category" => "karpenter.k8s.aws/instance-category",
        "eks.amazonaws.com/instance-family" => "karpenter.k8s.aws/instance-family",
        "eks.amazonaws.com/instance-generation" => "karpenter.k8s.aws/instance-generation",
        "eks.amazonaws.com/instance-size" => "karpenter.k8s.aws/instance-size",
        "eks.amazonaws.com/instance-cpu" => "karpenter.k8s.aws/instance-cpu",
        "eks.amazonaws.com/instance-gpu-count" => "karpenter.k8s.aws/instance-gpu-count",
        "eks.amazonaws.com/instance-gpu-name" => "karpenter.k8s.aws/instance-gpu-name",
        "eks.amazonaws.com/instance-gpu-manufacturer" => {
            "karpenter.k8s.aws/instance-gpu-manufacturer"
        }
        k => k,
    }
}

impl Instance {
    /// The value Karpenter (or EKS Auto Mode, see [`karpenter_key`]) gives this instance for a
    /// well-known label, if the label is one the catalog knows.
    pub fn label(&self, key: &str) -> Option<String> {
        let key = karpenter_key(key);
        let k = key.strip_prefix("karpenter.k8s.aws/");
        Some(match (key, k) {
            ("node.kubernetes.io/instance-type", _) => self.instance_type.to_string(),
            (_, Some("instance-family")) => self.family.to_string(),
            (_, Some("instance-category")) => self.category.to_string(),
            (_, Some("instance-generation")) => self.generation.to_string(),
            (_, Some("instance-size")) => self.size.to_string(),
            (_, Some("instance-gpu-count")) => self.gpu_count.to_string(),
            (_, Some("instance-gpu-name")) => self.gpu_name.to_string(),
            (_, Some("instance-gpu-manufacturer")) => self.gpu_manufacturer.to_string(),
            (_, Some("instance-gpu-memory")) => self.gpu_memory_mib.to_string(),
            (_, Some("instance-cpu")) => self.vcpu.to_string(),
            (_, Some("instance-memory")) => self.memory_mib.to_string(),
            ("kubernetes.io/arch", _) => "amd64".to_string(),
            _ => return None,
        })
    }

    /// How many of a device resource one node of this type offers, for the device resources the
    /// catalog counts (`None`: a resource it does not know).
    pub fn device_capacity(&self, resource: &str) -> Option<u64> {
        Some(u64::from(match resource {
            "nvidia.com/gpu" => self.gpu_count,
            "vpc.amazonaws.com/efa" => self.efa,
            "aws.amazon.com/neuron" | "aws.amazon.com/neurondevice" => self.neuron_devices,
            "aws.amazon.com/neuroncore" => self.neuron_cores,
            _ => return None,
        }))
    }
}

const CSV: &str = include_str!("aws-gpu-instances.csv");

/// Every GPU instance type in the catalog.
pub fn instances() -> &'static [Instance] {
    static CELL: OnceLock<Vec<Instance>> = OnceLock::new();
    CELL.get_or_init(|| {
        CSV.lines()
            .skip(1)
            .filter_map(|line| {
                let f: Vec<&'static str> = line.split(',').collect();
                if f.len() < 10 {
                    return None;
                }
                let (family, size) = f[0].split_once('.')?;
                let category_len = family
                    .find(|c: char| !c.is_ascii_lowercase())
                    .unwrap_or(family.len());
                let rest = &family[category_len..];
                let gen_len = rest
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                Some(Instance {
                    instance_type: f[0],
                    family: f[1],
                    category: &family[..category_len],
                    generation: &rest[..gen_len],
                    size,
                    gpu_count: f[2].parse().ok()?,
                    gpu_name: f[3],
                    gpu_manufacturer: f[4],
                    gpu_memory_mib: f[5].parse().ok()?,
                    vcpu: f[6].parse().ok()?,
                    memory_mib: f[7].parse::<u64>().ok()? * 1024,
                    efa: f[8].parse().ok()?,
                    price_usd_hour: f[9].parse().ok(),
                    neuron_devices: f.get(10).and_then(|v| v.parse().ok()).unwrap_or(0),
                    neuron_cores: f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0),
                })
            })
            .collect()
    })
}

/// GPU names the catalog knows (`a100`, `h100`, …), sorted.
pub fn gpu_names() -> &'static [&'static str] {
    static CELL: OnceLock<Vec<&'static str>> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut v: Vec<&str> = instances().iter().map(|i| i.gpu_name).collect();
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// Whether the catalog can tell a label's value for each instance (see [`Instance::label`]).
pub fn is_instance_label(key: &str) -> bool {
    let key = karpenter_key(key);
    matches!(
        key,
        "node.kubernetes.io/instance-type" | "kubernetes.io/arch"
    ) || key.strip_prefix("karpenter.k8s.aws/").is_some_and(|k| {
        matches!(
            k,
            "instance-family"
                | "instance-category"
                | "instance-generation"
                | "instance-size"
                | "instance-gpu-count"
                | "instance-gpu-name"
                | "instance-gpu-manufacturer"
                | "instance-gpu-memory"
                | "instance-cpu"
                | "instance-memory"
        )
    })
}

/// Instance families that carry accelerators, including those the catalog has no rows for
/// (fractional, arm64, AMD, Neuron, newer NVIDIA generations).
pub fn is_accelerator_family(family: &str) -> bool {
    const OTHER: [&str; 14] = [
        "g6f",
        "gr6f",
        "g5g",
        "g4ad",
        "g7",
        "g7e",
        "p6-b300",
        "p6e-gb200",
        "inf1",
        "inf2",
        "trn1",
        "trn1n",
        "trn2",
        "dl1",
    ];
    instances().iter().any(|i| i.family == family) || OTHER.contains(&family)
}

/// Accelerator instance categories (`g`, `p`, `gr`, `inf`, `trn`, `dl`).
pub fn is_accelerator_category(category: &str) -> bool {
    matches!(category, "g" | "p" | "gr" | "inf" | "trn" | "dl")
}

/// Resources that put a pod on a GPU (or Neuron/Gaudi) node: what makes a workload a GPU workload.
pub fn is_gpu_resource(name: &str) -> bool {
    name == "nvidia.com/gpu"
        || name.starts_with("nvidia.com/mig-")
        || (name.starts_with("nvidia.com/gpu") && !is_share_attribute(name))
        || name == "amd.com/gpu"
        || name.starts_with("aws.amazon.com/neuron")
        || name == "habana.ai/gaudi"
        || name.starts_with("google.com/tpu")
        || name.starts_with("gpu.intel.com/")
}

/// HAMi's per-GPU attributes: how much memory (MiB, or a percentage) and compute of each GPU a
/// container gets, not how many GPUs (`nvidia.com/gpu` says that). `gpumem: 64k` is 64,000 MiB.
fn is_share_attribute(name: &str) -> bool {
    matches!(
        name,
        "nvidia.com/gpumem" | "nvidia.com/gpumem-percentage" | "nvidia.com/gpucores"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hami_attributes_are_no_gpus() {
        assert!(is_gpu_resource("nvidia.com/gpu") && is_gpu_resource("nvidia.com/gpu.shared"));
        for a in [
            "nvidia.com/gpumem",
            "nvidia.com/gpumem-percentage",
            "nvidia.com/gpucores",
        ] {
            assert!(!is_gpu_resource(a), "{a}");
        }
    }

    #[test]
    fn catalog_rows_and_derived_labels() {
        let all = instances();
        assert_eq!(all.len(), 44);
        let p5 = all
            .iter()
            .find(|i| i.instance_type == "p5.48xlarge")
            .unwrap();
        assert_eq!(
            (p5.category, p5.generation, p5.size),
            ("p", "5", "48xlarge")
        );
        assert_eq!(p5.gpu_count, 8);
        assert_eq!(
            p5.label("karpenter.k8s.aws/instance-gpu-name").as_deref(),
            Some("h100")
        );
        let b200 = all.iter().find(|i| i.family == "p6-b200").unwrap();
        assert_eq!((b200.category, b200.generation), ("p", "6"));
        let gr6 = all.iter().find(|i| i.family == "gr6").unwrap();
        assert_eq!(gr6.category, "gr");
        assert!(gpu_names().contains(&"a10g"));
        assert!(is_accelerator_family("g6f") && !is_accelerator_family("m5"));
    }

    #[test]
    fn every_row_has_a_price_and_device_counts() {
        for i in instances() {
            // The source price table has no p5e.48xlarge entry.
            assert_eq!(
                i.price_usd_hour.is_some(),
                i.instance_type != "p5e.48xlarge",
                "{}",
                i.instance_type
            );
            assert_eq!((i.neuron_devices, i.neuron_cores), (0, 0));
        }
        let p5 = instances()
            .iter()
            .find(|i| i.instance_type == "p5.48xlarge")
            .unwrap();
        assert_eq!(p5.device_capacity("vpc.amazonaws.com/efa"), Some(32));
        assert_eq!(p5.device_capacity("aws.amazon.com/neuroncore"), Some(0));
        assert_eq!(p5.device_capacity("amd.com/gpu"), None);
        assert_eq!(CSV.lines().next().map(|h| h.split(',').count()), Some(12));
        assert!(CSV.lines().skip(1).all(|l| l.split(',').count() == 12));
    }
}
