//! Text helpers every layer may use: edit distances for "did you mean" hints, and shortening
//! names from the input for tables and messages.

use std::borrow::Cow;

/// Characters of a name or value shown in a table column or a message; longer ones are cut with
/// an ellipsis. Names come from the input and may be any length, and `{:width$}` panics past
/// 65,535.
pub const MAX_SHOWN: usize = 100;

/// `s` cut to `max` characters, the last one `…`, when it is longer.
pub fn shorten(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
            Cow::Owned(format!("{}…", &s[..end]))
        }
    }
}

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

/// A repository URL reduced to host and path, so that the forms Argo CD accepts for one
/// repository compare equal: `git@github.com:o/r.git`, `ssh://git@github.com:22/o/r`,
/// `https://GitHub.com/o/r/` all give `github.com/o/r`.
pub fn normalize_repo(url: &str) -> String {
    let mut s = url.trim().to_ascii_lowercase();
    if let Some(i) = s.find("://") {
        s.drain(..i + 3);
    } else if let Some(colon) = s.find(':')
        && s.find('/').is_none_or(|slash| colon < slash)
    {
        // scp-like `user@host:path`.
        s.replace_range(colon..=colon, "/");
    }
    let host_end = s.find('/').unwrap_or(s.len());
    if let Some(at) = s[..host_end].rfind('@') {
        s.drain(..=at);
    }
    let host_end = s.find('/').unwrap_or(s.len());
    if let Some(colon) = s[..host_end].find(':')
        && s[colon + 1..host_end].bytes().all(|b| b.is_ascii_digit())
    {
        s.replace_range(colon..host_end, "");
    }
    let mut s = s.trim_end_matches('/').to_string();
    if let Some(stripped) = s.strip_suffix(".git") {
        s = stripped.trim_end_matches('/').to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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

#[cfg(test)]
mod shorten_tests {
    use super::shorten;

    #[test]
    fn long_names_end_in_an_ellipsis() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "ab…");
        assert_eq!(shorten("ééééé", 4), "ééé…");
        assert_eq!(shorten(&"x".repeat(100_000), 10).chars().count(), 10);
    }
}
