//! Likely typos: edit distances, and an index that finds the names close to a missing one among
//! tens of thousands without comparing each.

use std::hash::Hasher;

/// Whether an edit distance makes a likely typo of `name`.
pub fn close_enough(name: &str, dist: usize) -> bool {
    dist > 0 && dist <= 3 && dist * 3 <= name.chars().count().max(3)
}

/// The candidate closest to a mistyped name, at most three edits away (ties: the smaller name).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n)
}

pub fn edit_distance(a: &str, b: &str) -> usize {
    rapidfuzz::distance::levenshtein::distance(a.chars(), b.chars())
}

/// The edit distance when it is at most `max`, found without filling the whole table (thousands
/// of names are compared per missing reference in a large repository).
pub fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    use rapidfuzz::distance::levenshtein::{Args, distance_with_args};
    distance_with_args(a.chars(), b.chars(), &Args::default().score_cutoff(max))
}

/// Names close to one name (likely typos of it), compared against thousands of candidates: the
/// name's pattern is prepared once, and a candidate whose length alone puts it too far is ruled out
/// without a comparison. Missing references grow with a repository, and so do the names each is
/// compared with.
pub struct Near {
    cmp: rapidfuzz::distance::levenshtein::BatchComparator<char>,
    chars: usize,
    max: usize,
}

impl Near {
    /// Candidates at most `max` edits from `name`.
    pub fn new(name: &str, max: usize) -> Near {
        Near {
            cmp: rapidfuzz::distance::levenshtein::BatchComparator::new(name.chars()),
            chars: name.chars().count(),
            max,
        }
    }

    /// The edit distance to `other` when it is at most the maximum.
    pub fn distance(&self, other: &str) -> Option<usize> {
        use rapidfuzz::distance::levenshtein::Args;
        if other.chars().count().abs_diff(self.chars) > self.max {
            return None;
        }
        self.cmp
            .distance_with_args(other.chars(), &Args::default().score_cutoff(self.max))
    }
}

/// Names of one kind, prepared for "did you mean" searches. Missing references and the names they
/// are compared with both grow with a repository; comparing every pair is quadratic (a 100,000-file
/// platform repository spent seconds in it). Up to [`NearNames::EXHAUSTIVE`] names, every name is
/// compared, as [`Near`] alone would. Past that, the candidates are the names that share the
/// missing name's one-character deletions (every name one edit away, and transpositions, found
/// exactly) and the [`NearNames::WINDOW`] names next to it in sorted and in reverse-sorted order
/// (a typo keeps the start or the end of a name): bounded work per missing name.
pub struct NearNames<'a, T> {
    /// By name, one entry per name (its first item).
    entries: Vec<(&'a str, T)>,
    /// Entry indices in the order of their reversed names.
    reversed: Vec<u32>,
    /// Hashes of each name and of its one-character deletions, with the entry index; sorted.
    deletions: Vec<(u64, u32)>,
}

impl<'a, T> NearNames<'a, T> {
    /// Kinds with at most this many names are searched in full.
    pub const EXHAUSTIVE: usize = 512;
    /// Neighbours taken on each side in sorted and in reverse-sorted order.
    pub const WINDOW: usize = 32;

    /// The index of `items`; of several items of one name, the first is kept.
    pub fn new(items: impl IntoIterator<Item = (&'a str, T)>) -> Self {
        let mut entries: Vec<(&'a str, T)> = items.into_iter().collect();
        // Stable: the first item of a name stays first, and dedup keeps it.
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.dedup_by(|b, a| a.0 == b.0);
        let (mut reversed, mut deletions) = (Vec::new(), Vec::new());
        if entries.len() > Self::EXHAUSTIVE {
            let keys: Vec<String> = entries
                .iter()
                .map(|(n, _)| n.chars().rev().collect())
                .collect();
            reversed = (0..entries.len() as u32).collect();
            reversed.sort_by(|a, b| keys[*a as usize].cmp(&keys[*b as usize]));
            for (i, (name, _)) in entries.iter().enumerate() {
                deletion_hashes(name, |h| deletions.push((h, i as u32)));
            }
            deletions.sort_unstable();
        }
        NearNames {
            entries,
            reversed,
            deletions,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The name closest to `name` that makes a likely typo of it ([`close_enough`]), with its
    /// distance and item; ties go to the smaller name.
    pub fn closest(&self, name: &str) -> Option<(usize, &'a str, &T)> {
        let near = Near::new(name, 3);
        let judge = |i: usize| {
            let (n, item) = &self.entries[i];
            let d = near.distance(n)?;
            close_enough(name, d).then_some((d, *n, item))
        };
        if self.entries.len() <= Self::EXHAUSTIVE {
            return (0..self.entries.len())
                .filter_map(judge)
                .min_by_key(|(d, n, _)| (*d, *n));
        }
        let mut ids: Vec<usize> = Vec::new();
        deletion_hashes(name, |h| {
            let from = self.deletions.partition_point(|(x, _)| *x < h);
            ids.extend(
                self.deletions[from..]
                    .iter()
                    .take_while(|(x, _)| *x == h)
                    .map(|(_, i)| *i as usize),
            );
        });
        let at = self.entries.partition_point(|(n, _)| *n < name);
        let window = |at: usize| {
            at.saturating_sub(Self::WINDOW)..(at + Self::WINDOW).min(self.entries.len())
        };
        ids.extend(window(at));
        let rev: String = name.chars().rev().collect();
        let at = self
            .reversed
            .partition_point(|i| self.entries[*i as usize].0.chars().rev().lt(rev.chars()));
        ids.extend(window(at).map(|k| self.reversed[k] as usize));
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter_map(judge)
            .min_by_key(|(d, n, _)| (*d, *n))
    }
}

/// Calls `f` with the hash of `name` and of each string made by deleting one of its characters:
/// two names one edit apart (or a transposition apart) share one of these.
fn deletion_hashes(name: &str, mut f: impl FnMut(u64)) {
    let hash = |parts: [&str; 2]| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // One stream for both halves: "ab" + "c" and "a" + "bc" hash alike.
        for b in parts.iter().flat_map(|p| p.bytes()) {
            h.write_u8(b);
        }
        h.finish()
    };
    f(hash([name, ""]));
    for (i, c) in name.char_indices() {
        f(hash([&name[..i], &name[i + c.len_utf8()..]]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names shaped like a large platform repository's: teams numbered, one suffix per kind.
    fn many() -> Vec<String> {
        (0..2000)
            .flat_map(|t| ["gpu", "cpu", "training"].map(|s| format!("team-{t:04}-{s}")))
            .collect()
    }

    #[test]
    fn the_index_agrees_with_comparing_every_name_on_edits_at_the_ends_and_single_edits() {
        let names = many();
        let ix = NearNames::new(names.iter().map(|n| (n.as_str(), ())));
        let all = |q: &str| {
            names
                .iter()
                .filter_map(|n| Some((edit_distance_within(q, n, 3)?, n.as_str())))
                .filter(|(d, _)| close_enough(q, *d))
                .min()
        };
        for q in [
            "team-0042-trainng", // one deletion
            "team-0042-gpu-v2",  // three insertions at the end
            "tean-0042-cpu",     // a substitution at the start
            "taem-1999-gpu",     // a transposition
            "team-00042-gpu",    // an insertion in the middle
            "v2-team-0007-cpu",  // three insertions at the start
            "team-0042-h100",    // nothing close
            "x",
            "",
        ] {
            assert_eq!(ix.closest(q).map(|(d, n, _)| (d, n)), all(q), "{q}");
        }
    }

    #[test]
    fn the_first_item_of_a_name_is_kept_and_small_sets_are_searched_in_full() {
        let ix = NearNames::new([("gpu-a", 1), ("gpu-b", 2), ("gpu-a", 3)]);
        assert_eq!(
            ix.closest("gpu-c").map(|(d, n, i)| (d, n, *i)),
            Some((1, "gpu-a", 1))
        );
    }

    #[test]
    fn near_names_agree_with_the_edit_distance() {
        let names = [
            "gpu-class",
            "gpu-clas",
            "team-0001",
            "team-0234",
            "é",
            "e",
            "",
            "abcdef",
        ];
        for a in names {
            let near = Near::new(a, 3);
            for b in names {
                assert_eq!(near.distance(b), edit_distance_within(a, b, 3), "{a} / {b}");
            }
        }
    }

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("gpu-class", "gpu-clas"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
        assert_eq!(edit_distance_within("trainig", "training", 3), Some(1));
        assert_eq!(edit_distance_within("team-0001", "team-0234", 2), None);
        assert_eq!(edit_distance_within("a", "abcdef", 3), None);
    }
}
