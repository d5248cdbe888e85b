//! What a kustomization build depends on, and its output as a cache entry.
//!
//! kustomize reads a kustomization's directory and those of every kustomization it builds
//! through, and, with its default load restrictor, nothing outside them; an entry may name more
//! than the graph sees (a patch file a transformer's config names), so the key holds each of
//! those directories whole rather than the files the graph knows. Paths in the key and in the
//! stored origins are relative to the built kustomization's directory: kustomize's output does
//! not depend on where the checkout is.

use super::{
    Built, Kustomize, Origin, Unit,
    inputs::{oversized, template_resource},
};
use crate::cache::codec::{Reader, Writer};
use crate::source::Sources;
use crate::source::cached::{Cached, Inputs};
use crate::source::tree::{Forest, Target, identity, kustomization_in, normalize, relative};
use std::path::{Path, PathBuf};

impl Cached for Kustomize {
    const KIND: &'static str = "kustomize";

    fn key(&self, s: &Sources, unit: &Unit, inputs: &mut Inputs) -> Option<()> {
        let tool = s.tool.as_ref()?;
        let top = s.forest.get(&unit.top)?;
        let chain = s.forest.chain(&unit.top);
        // What would be skipped is not built, so not cached either.
        let skipped = chain.iter().any(|c| {
            c.helm_charts.is_some()
                || oversized(c).is_some()
                || template_resource(c).is_some()
                || c.refs.iter().any(|r| r.target == Target::Remote)
        });
        if skipped {
            return None;
        }
        inputs.program(&tool.program)?;
        inputs.str(tool.subcommand).str(&unit.wrap.fields);
        let mut dirs: Vec<PathBuf> = chain.iter().map(|c| c.dir.clone()).collect();
        // An Application's components are built through too, with what they build through.
        for c in &unit.wrap.components {
            inputs.path(&relative(&top.dir, c));
            let file = identity(&kustomization_in(c)?);
            let forest = Forest::load(std::slice::from_ref(&file));
            let theirs = forest.chain(&file);
            if theirs.is_empty() {
                return None;
            }
            dirs.extend(theirs.iter().map(|k| k.dir.clone()));
        }
        dirs.sort();
        dirs.dedup();
        for d in &dirs {
            inputs.path(&relative(&top.dir, d));
            inputs.tree(d)?;
        }
        // Files named outside those directories (kustomize refuses most, but says so only
        // when it runs).
        for f in s.forest.files_read(&unit.top) {
            if !dirs.iter().any(|d| f.starts_with(d)) {
                inputs.path(&relative(&top.dir, &f));
                inputs.file(&f)?;
            }
        }
        Some(())
    }

    fn encode(&self, unit: &Unit, b: &Built) -> Option<Vec<u8>> {
        let dir = unit.top.parent()?;
        let rel = |p: &Path| relative(dir, p).to_str().map(str::to_string);
        let mut w = Writer::default();
        w.str(&b.command).str(&b.text).u64(b.origins.len() as u64);
        for o in &b.origins {
            match o {
                Origin::File(p) => w.u64(0).str(&rel(p)?),
                Origin::Generated { kustomization } => w.u64(1).str(&rel(kustomization)?),
                Origin::Remote => w.u64(2),
                Origin::Unknown => w.u64(3),
            };
        }
        Some(w.into_bytes())
    }

    fn decode(&self, unit: &Unit, payload: &[u8]) -> Option<Built> {
        let dir = unit.top.parent()?;
        let mut r = Reader::new(payload);
        let command = r.str()?.to_string();
        let text = r.str()?.to_string();
        let n = r.u64()?;
        let mut origins = Vec::new();
        for _ in 0..n {
            origins.push(match r.u64()? {
                0 => Origin::File(normalize(&dir.join(r.str()?))),
                1 => Origin::Generated {
                    kustomization: normalize(&dir.join(r.str()?)),
                },
                2 => Origin::Remote,
                3 => Origin::Unknown,
                _ => return None,
            });
        }
        r.is_done().then_some(Built {
            text,
            origins,
            command,
        })
    }
}
