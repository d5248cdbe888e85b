//! Syntax of single values: DNS names, Karpenter durations and budgets, EBS volume sizes.

/// Why `s` is not a DNS label of at most `max` characters, if it is not.
pub fn dns_label_problem(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("is empty".into());
    }
    if s.len() > max {
        return Some(format!("is {} characters long; at most {max} fit", s.len()));
    }
    let ok_chars = s
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ends = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if !ok_chars || !ends(s.bytes().next()) || !ends(s.bytes().last()) {
        return Some("may hold only lowercase letters, digits and `-`, and must start and end with a letter or digit".into());
    }
    None
}

pub(super) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(|p| dns_label_problem(p, 63).is_none())
}

/// Karpenter durations: digits with s, m or h units, repeated (`90m`, `1h30m`).
pub(super) fn is_duration(s: &str) -> bool {
    let mut digits = 0;
    let mut groups = 0;
    for c in s.chars() {
        match c {
            '0'..='9' => digits += 1,
            's' | 'm' | 'h' if digits > 0 => {
                digits = 0;
                groups += 1;
            }
            _ => return false,
        }
    }
    digits == 0 && groups > 0
}

pub(super) fn is_budget(s: &str) -> bool {
    match s.strip_suffix('%') {
        Some(p) => {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|n| n <= 100)
        }
        None => !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()),
    }
}

pub(super) fn is_volume_size(s: &str) -> bool {
    let num_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(num_end);
    !num.is_empty() && !num.starts_with('0') && matches!(unit, "Gi" | "G" | "Ti" | "T")
}
