//! Helpers more than one rule reads the index through.

pub mod shared_gpu;
