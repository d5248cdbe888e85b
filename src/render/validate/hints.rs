//! Help-text helpers: "did you mean" suggestions and defined names listed once each.

fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (crate::text::edit_distance(&w, c), c))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, c)| c)
}

/// The names once each, in order.
pub(super) fn unique<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n);
        }
    }
    out
}

pub(super) fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    closest(word, candidates.iter().copied())
        .map(|c| format!("did you mean `{c}`? "))
        .unwrap_or_default()
}
