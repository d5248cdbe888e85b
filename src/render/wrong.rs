//! What is wrong with a profile value: each problem's label, under the value and as its code,
//! so a report of several problems says at a glance which is which.

/// The kind of a profile problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrong {
    /// Not UTF-8, not YAML, more than one document, or nothing at all.
    Yaml,
    UnknownKey,
    MissingKey,
    WrongType,
    /// A value outside the allowed set.
    NotAllowed,
    /// A number, count or list outside its bounds (a 0, an empty list).
    OutOfRange,
    /// Not a valid Kubernetes or AWS name.
    InvalidName,
    /// Not what the field holds: a region, a zone, an AMI alias, an image, a path.
    InvalidValue,
    Duplicate,
    /// A class or team that is not defined.
    Undefined,
    /// GPUs above a class's `maxGpus` or its teams' quotas.
    OverCeiling,
    /// A worker that no instance or quota can ever take.
    Unschedulable,
    /// Settings that work against each other.
    Conflict,
}

impl Wrong {
    pub fn code(self) -> &'static str {
        match self {
            Wrong::Yaml => "invalid-yaml",
            Wrong::UnknownKey => "unknown-key",
            Wrong::MissingKey => "missing-key",
            Wrong::WrongType => "wrong-type",
            Wrong::NotAllowed => "not-allowed",
            Wrong::OutOfRange => "out-of-range",
            Wrong::InvalidName => "invalid-name",
            Wrong::InvalidValue => "invalid-value",
            Wrong::Duplicate => "duplicate",
            Wrong::Undefined => "undefined",
            Wrong::OverCeiling => "over-ceiling",
            Wrong::Unschedulable => "unschedulable",
            Wrong::Conflict => "conflict",
        }
    }
}
