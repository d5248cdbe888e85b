//! AWS GPU instance facts (from Karpenter's generated instance-type tables), compiled in.

use std::sync::OnceLock;

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
}

impl Instance {
    /// The value Karpenter gives this instance for a well-known label, if the label is one the
    /// catalog knows.
    pub fn label(&self, key: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
