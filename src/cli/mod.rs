//! The commands behind the clap definitions in main.rs, and what they share.

pub(crate) mod cache;
pub(crate) mod context;
pub(crate) mod cost;
pub(crate) mod lint;
pub(crate) mod man;
pub(crate) mod output;
pub(crate) mod policy;
pub(crate) mod render;
pub(crate) mod repo;
pub(crate) mod rule_name;
pub(crate) mod why;
