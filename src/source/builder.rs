//! What every kind of built source has in common.

use super::SourceFile;
use super::remap::{Ctx, Place, Resolved};
use crate::yaml::Span;
use std::path::Path;

/// What a build's output keeps to point findings on it back at the files it was made from.
pub(super) trait Mapping: std::fmt::Debug + Send + Sync {
    /// Where the output at `span` came from.
    fn resolve(&self, cx: &Ctx, output: &SourceFile, span: Span) -> Option<Resolved>;

    /// A note for a finding moved to `file` when the file is not part of what was built itself
    /// (for a kustomization: the overlay entry that reached it).
    fn through(&self, _cx: &Ctx, _file: &Path) -> Option<(Place, String)> {
        None
    }

    /// The file document `doc` of the output was made from, when it is known.
    fn made_from(&self, output: &SourceFile, doc: usize) -> Option<&Path>;
}
