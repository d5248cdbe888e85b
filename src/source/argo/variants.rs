//! Overlays applied one at a time: Applications that nothing in the repository deploys (each is
//! applied by hand), sending sibling overlays of one base to the same destination namespace of
//! the same cluster. Deploying two of them would make every object of their shared base a
//! repeated resource, so they are variants to choose from (`kraft` or `zookeeper`, a small or a
//! large model), not parts of one cluster. Applications with different destination namespaces
//! are meant to run side by side, and what an app of apps or an ApplicationSet deploys is
//! deployed together: neither is a variant.

use super::sync::{Outcome, Record};
use crate::diag::FileId;
use crate::source::tree::{Forest, identity};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// An Application whose only source is one kustomization: its destination namespace (empty when
/// unset) and the kustomization file.
pub(super) type Overlay = (String, PathBuf);

/// For each file reached by exactly one variant Application: (its group, the Application's
/// record). Two files of one group with different records never reach one cluster together.
pub(super) fn of_files(
    forest: &Forest,
    records: &[Record],
    overlays: &BTreeMap<usize, Overlay>,
    reached: &BTreeMap<FileId, BTreeSet<usize>>,
) -> BTreeMap<FileId, (u32, u32)> {
    let groups = groups(forest, records, overlays);
    let mut out = BTreeMap::new();
    for (&fid, by) in reached {
        let mut by = by.iter();
        if let (Some(r), None) = (by.next(), by.next())
            && let Some(&g) = groups.get(r)
        {
            out.insert(fid, (g, *r as u32));
        }
    }
    out
}

/// Record → group, for the records of groups of two or more.
fn groups(
    forest: &Forest,
    records: &[Record],
    overlays: &BTreeMap<usize, Overlay>,
) -> BTreeMap<usize, u32> {
    // Hand-applied Applications by (clusters, destination namespace).
    let mut alike: BTreeMap<(&[String], &str), Vec<usize>> = BTreeMap::new();
    for (&idx, (ns, _)) in overlays {
        let Some(r) = records.get(idx) else { continue };
        let Outcome::Synced { clusters, .. } = &r.outcome else {
            continue;
        };
        if r.via.is_none() && r.generated.is_none() {
            alike
                .entry((clusters.as_slice(), ns.as_str()))
                .or_default()
                .push(idx);
        }
    }
    let mut out = BTreeMap::new();
    let mut next = 0u32;
    for members in alike.into_values().filter(|m| m.len() > 1) {
        // The kustomizations each build reads besides its own.
        let bases: Vec<BTreeSet<&PathBuf>> = members
            .iter()
            .map(|i| {
                let top = identity(&overlays[i].1);
                forest
                    .chain(&top)
                    .into_iter()
                    .map(|k| &k.path)
                    .filter(|p| **p != top)
                    .collect()
            })
            .collect();
        // Connected by a shared base; a member sharing none with the others stays out.
        let mut group: Vec<usize> = (0..members.len()).collect();
        for a in 0..members.len() {
            for b in a + 1..members.len() {
                if !bases[a].is_disjoint(&bases[b]) {
                    let (ga, gb) = (group[a], group[b]);
                    for g in group.iter_mut().filter(|g| **g == gb) {
                        *g = ga;
                    }
                }
            }
        }
        for g in group.iter().copied().collect::<BTreeSet<_>>() {
            let of: Vec<usize> = (0..members.len()).filter(|&m| group[m] == g).collect();
            if of.len() > 1 {
                for m in of {
                    out.insert(members[m], next);
                }
                next += 1;
            }
        }
    }
    out
}
