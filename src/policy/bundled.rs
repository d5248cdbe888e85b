//! The bundled policy pack: `policies/<id>.rego` and its tests `policies/<id>_test.rego`, compiled
//! into the binary. Every bundled policy is off until the config (or `--rule`) turns it on.

/// One bundled policy: its rule name, its module and its tests, with their repository paths.
pub struct Bundled {
    /// `policy/<id>`.
    pub name: &'static str,
    pub file: &'static str,
    pub source: &'static str,
    pub test_file: &'static str,
    pub test_source: &'static str,
}

macro_rules! pack {
    ($($id:literal),* $(,)?) => {
        &[$(Bundled {
            name: concat!("policy/", $id),
            file: concat!("policies/", $id, ".rego"),
            source: include_str!(concat!("../../policies/", $id, ".rego")),
            test_file: concat!("policies/", $id, "_test.rego"),
            test_source: include_str!(concat!("../../policies/", $id, "_test.rego")),
        }),*]
    };
}

pub static PACK: &[Bundled] = pack![
    "team-label-missing",
    "accelerator-not-allowed",
    "container-gpus-above-max",
    "gpu-quota-missing",
    "gpu-image-unapproved",
    "gpu-pdb-missing",
];

/// The bundled policy of this rule name.
pub fn find(name: &str) -> Option<&'static Bundled> {
    PACK.iter().find(|b| b.name == name)
}

/// Whether `m` is a module of the pack, word for word (a user file at the same path is not).
pub fn is_bundled(m: &super::Module) -> bool {
    PACK.iter().any(|b| {
        (b.file == m.path && b.source == m.text)
            || (b.test_file == m.path && b.test_source == m.text)
    })
}
