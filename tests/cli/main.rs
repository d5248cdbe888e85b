//! The tests that run the `gpuops` binary, one test target (one binary to link), a module per
//! part of the command line; the harness they share is `tests/common`. A module's tests run
//! alone with `cargo test --test cli <module>::`.
//!
//! - `appsets`: Argo CD ApplicationSets fanned out over the clusters Argo CD knows, each
//!   Application linted in its own cluster.
//! - `cache`: the build cache of kustomizations and charts, and `gpuops cache`.
//! - `formats`: SARIF and JUnit as CI systems check them (schema, failures, stable names).
//! - `inference`: what a run infers from the repository alone: examples judged on their own,
//!   capacity outside Karpenter and of other providers, manifests Terraform fills in.
//! - `lint`: `gpuops lint` on temporary repositories (exit codes, stdin, configuration,
//!   suppressions, clusters, output formats, `--changed`, policies, user CRDs), the other
//!   commands (`rules`, `rule`, `cost`, `policy test`, completions, the man page) and the files
//!   CI systems read (pre-commit hooks, the GitHub Action and workflows).
//! - `render`: `gpuops render`, `init` and `schema`; `render_sharing`: classes that share their
//!   GPUs (MIG, time-slicing, MPS).
//! - `sources`: kustomize overlays, Helm charts and Argo CD Applications, built and linted.
//! - `test_data`: what a repository holds besides what it applies: templates other tools
//!   render, objects still to be named, test trees.
//! - `why`: `gpuops why`.
//!
//! Snapshots are in `tests/cli/snapshots/`, named `cli__<module>__<name>.snap`.

#[path = "../common/mod.rs"]
mod common;

mod appsets;
mod cache;
mod formats;
mod inference;
mod lint;
mod render;
mod render_sharing;
mod sources;
mod test_data;
mod why;
