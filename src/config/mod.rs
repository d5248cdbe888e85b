//! The configuration: `.gpuops.yaml` read and validated ([`file`]), into the plain
//! [`Settings`] every later step reads ([`settings`]); the sources settings in [`sources`].

mod file;
mod settings;
pub mod sources;

pub use file::*;
pub use settings::*;
