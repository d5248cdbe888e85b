//! gpuops: lint and render GPU platform manifests (Karpenter, Kueue, Kubernetes).

pub mod cache;
pub mod catalog;
pub mod config;
pub mod context;
pub mod cost;
pub mod diag;
pub mod index;
pub mod intent;
pub mod model;
pub mod one_or_many;
pub mod policy;
pub mod quantity;
pub mod render;
pub mod report;
pub mod rules;
pub mod run;
pub mod sched;
pub mod schema;
pub mod source;
pub mod suppress;
pub mod text;
pub mod why;
pub mod yaml;

pub use run::{ClusterScope, Outcome, check, clusters, finish, lint, lint_with};

/// mimalloc v3's `mi_option_purge_delay` (its place in `mi_option_e`, mimalloc.h; the -sys
/// crate names no constant for it).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Tunes the allocator the binary and the benchmark install (mimalloc): freed pages go back to
/// the OS after 100 ms instead of a second. Parsing frees scanner buffers while the trees grow,
/// and at 10,000 files this keeps about 30 MiB off the peak for no measurable time; purging at
/// once costs far more (every purge is a TLB shootdown on the other core: +75 % CPU with the
/// policy pack). Call it first in `main`, before any thread starts.
pub fn tune_allocator() {
    // `MIMALLOC_PURGE_DELAY` in the environment wins, as mimalloc documents for its options.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain store into mimalloc's option table; `mi_option_set` is not
        // thread-safe, so it runs before any other thread exists.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 100) }
    }
}

/// Whether a rule (built-in or policy) runs under these settings ([`policy::enabled`]).
pub fn rule_enabled(settings: &config::Settings, name: &str) -> bool {
    policy::enabled(settings, name)
}

/// Says that the process exits right after its lint (the CLI): the policy input document is
/// left to the exit instead of being freed one value at a time (about 0.1 s at 10,000 files).
/// The index is freed: the report that follows reuses its memory, which keeps the peak 20 MB
/// lower at 10,000 files, at no measurable cost in time. Others (tests, embedders) free both.
pub fn exit_after_lint() {
    policy::keep_inputs_until_exit();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purge_delay_is_the_option_tune_allocator_sets() {
        // mimalloc v3 purges after 1000 ms by default: a wrong option index would read another.
        let v = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(v, 1000);
    }
}
