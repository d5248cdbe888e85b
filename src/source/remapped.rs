//! Moving findings on rendered output back to the files that produced them.

use super::{Build, Sources, remap, tree};
use crate::diag::{Diagnostic, FileId, Loc, Related};
use crate::source::SourceFile;
use crate::yaml::Span;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

impl Sources {
    /// What remapping reads besides the run's files.
    fn cx(&self) -> remap::Ctx<'_> {
        remap::Ctx {
            forest: &self.forest,
            cache: &self.cache,
        }
    }

    /// Where a location of a finding goes.
    fn resolve(&self, files: &[SourceFile], loc: Loc) -> Option<(remap::Resolved, &Build)> {
        let b = self.builds.iter().find(|b| b.fid == loc.file)?;
        let f = files.get(loc.file)?;
        Some((b.map.resolve(&self.cx(), f, loc.span)?, b))
    }

    /// Every location of a finding, moved: the finding's own, then its related places, then
    /// notes the remapping adds (a removing patch, the overlay it came through).
    fn move_one(&self, files: &[SourceFile], d: &Diagnostic) -> Moved {
        let mut notes = Vec::new();
        let mut primary = None;
        let at = match self.resolve(files, d.loc) {
            Some((r, b)) => {
                primary = Some(b.fid);
                for (p, m) in r.notes {
                    notes.push(Note::at(Dest::Path(p.file), p.span, m));
                }
                if let Some((p, m)) = b.map.through(&self.cx(), &r.place.file) {
                    notes.push(Note::at(Dest::Path(p.file), p.span, m));
                }
                Note::at(Dest::Path(r.place.file), r.place.span, String::new())
            }
            None => Note::at(Dest::Fid(d.loc.file), d.loc.span, String::new()),
        };
        let mut related: Vec<Note> = Vec::with_capacity(d.related.len());
        for r in &d.related {
            match self.resolve(files, r.loc) {
                Some((res, b)) => {
                    // From another build, the other side may come from the same file as the
                    // finding (one base, two overlays): the overlay it came through tells them
                    // apart.
                    let through = (primary != Some(b.fid))
                        .then(|| b.map.through(&self.cx(), &res.place.file))
                        .flatten();
                    related.push(Note::at(
                        Dest::Path(res.place.file),
                        res.place.span,
                        r.message.clone(),
                    ));
                    if let Some((p, m)) = through {
                        let m = format!("{}, {m}", r.message);
                        related.push(Note::at(Dest::Path(p.file), p.span, m));
                    }
                }
                None => related.push(Note::at(
                    Dest::Fid(r.loc.file),
                    r.loc.span,
                    r.message.clone(),
                )),
            }
        }
        related.extend(notes);
        Moved { at, related }
    }

    /// Moves findings on rendered output to the files that produced them, collapses identical
    /// findings, and returns the files to report with (rendered files no finding is left on are
    /// dropped, the files builds read are added) and notes for the human report.
    pub fn remap(
        self,
        diags: &mut Vec<Diagnostic>,
        files: Vec<SourceFile>,
    ) -> (Vec<SourceFile>, Vec<String>) {
        if self.builds.is_empty() && self.cache.is_empty() && self.forest.by_path.is_empty() {
            return (files, self.notes);
        }
        let moved: Vec<Moved> = diags.iter().map(|d| self.move_one(&files, d)).collect();
        let rendered: BTreeSet<FileId> = self.builds.iter().map(|b| b.fid).collect();
        let used: BTreeSet<FileId> = moved
            .iter()
            .flat_map(|m| std::iter::once(&m.at).chain(&m.related))
            .filter_map(|n| match n.dest {
                Dest::Fid(i) => Some(i),
                Dest::Path(_) => None,
            })
            .collect();
        let read: Vec<(PathBuf, SourceFile)> = self
            .forest
            .by_path
            .into_iter()
            .map(|(p, k)| (p, k.file))
            .chain(self.cache)
            .collect();
        let list = FileList::build(files, &rendered, &used, read);
        for (d, m) in diags.iter_mut().zip(moved) {
            let old = d.loc;
            d.loc = list.loc(&m.at).unwrap_or(Loc {
                file: list.new_index.get(old.file).copied().flatten().unwrap_or(0),
                span: old.span,
            });
            d.related = m
                .related
                .into_iter()
                .filter_map(|n| {
                    let loc = list.loc(&n)?;
                    (loc != d.loc).then_some(Related {
                        loc,
                        message: n.message,
                    })
                })
                .collect();
            d.related.dedup();
        }
        let out = list.files;
        diags.sort_by(|a, b| {
            (
                &out[a.loc.file].path,
                a.loc.span.start(),
                a.rule,
                &a.message,
            )
                .cmp(&(
                    &out[b.loc.file].path,
                    b.loc.span.start(),
                    b.rule,
                    &b.message,
                ))
        });
        // The same finding reached through several overlays, at the same place: once, with the
        // notes of each (which overlays it came through).
        let mut kept: Vec<Diagnostic> = Vec::with_capacity(diags.len());
        for d in diags.drain(..) {
            match kept.last_mut() {
                Some(k) if k.loc == d.loc && k.rule == d.rule && k.message == d.message => {
                    for r in d.related {
                        if !k.related.contains(&r) {
                            k.related.push(r);
                        }
                    }
                }
                _ => kept.push(d),
            }
        }
        *diags = kept;
        (out, self.notes)
    }
}

/// Where a moved location lives: a file of the run, or a file a build read (identity).
#[derive(Clone, Debug)]
enum Dest {
    Fid(FileId),
    Path(PathBuf),
}

#[derive(Clone, Debug)]
struct Note {
    dest: Dest,
    span: Span,
    message: String,
}

impl Note {
    fn at(dest: Dest, span: Span, message: String) -> Note {
        Note {
            dest,
            span,
            message,
        }
    }
}

/// A finding's locations after remapping.
struct Moved {
    at: Note,
    related: Vec<Note>,
}

/// The files reported with: the run's files (rendered ones only while a finding is on them, one
/// entry per path), then every file a build read.
struct FileList {
    files: Vec<SourceFile>,
    new_index: Vec<Option<FileId>>,
    by_identity: HashMap<PathBuf, FileId>,
}

impl FileList {
    fn build(
        files: Vec<SourceFile>,
        rendered: &BTreeSet<FileId>,
        used: &BTreeSet<FileId>,
        mut read: Vec<(PathBuf, SourceFile)>,
    ) -> FileList {
        let mut new_index: Vec<Option<FileId>> = vec![None; files.len()];
        let mut by_identity: HashMap<PathBuf, FileId> = HashMap::new();
        let mut by_path: HashMap<String, FileId> = HashMap::new();
        let mut out: Vec<SourceFile> = Vec::with_capacity(files.len() + read.len());
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let mut canonical = tree::canonicalize_all(&paths).into_iter();
        for (i, f) in files.into_iter().enumerate() {
            let canonical = canonical.next().flatten();
            let is_rendered = rendered.contains(&i);
            if is_rendered && !used.contains(&i) {
                continue;
            }
            if !is_rendered && let Some(&j) = by_path.get(&f.path) {
                new_index[i] = Some(j);
                continue;
            }
            let j = out.len();
            if !is_rendered {
                by_path.insert(f.path.clone(), j);
                if let Some(id) = canonical {
                    by_identity.insert(id, j);
                }
            }
            new_index[i] = Some(j);
            out.push(f);
        }
        read.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        for (p, f) in read {
            if by_identity.contains_key(&p) {
                continue;
            }
            if let Some(&j) = by_path.get(&f.path) {
                by_identity.insert(p, j);
                continue;
            }
            by_identity.insert(p, out.len());
            by_path.insert(f.path.clone(), out.len());
            out.push(f);
        }
        FileList {
            files: out,
            new_index,
            by_identity,
        }
    }

    fn loc(&self, n: &Note) -> Option<Loc> {
        let file = match &n.dest {
            Dest::Fid(i) => self.new_index.get(*i).copied().flatten(),
            Dest::Path(p) => self.by_identity.get(p).copied(),
        }?;
        Some(Loc { file, span: n.span })
    }
}
