//! Text helpers every layer may use: edit distances for "did you mean" hints, and
//! shortening names from the input for tables and messages.

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

/// The text of UTF-16 bytes that start with a byte order mark; `None` for anything else or
/// anything that does not decode.
pub fn utf16(bytes: &[u8]) -> Option<String> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let units: Vec<u16> = bytes[2..]
        .chunks_exact(2)
        .map(|c| {
            if little {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        })
        .collect();
    String::from_utf16(&units).ok()
}

/// The first line of a MIME message (`MIME-Version: 1.0`, `Content-Type: multipart/mixed; …`),
/// when the text starts with one.
pub fn mime_header(text: &str) -> Option<std::ops::Range<usize>> {
    let start = text.len() - text.trim_start().len();
    let line = text[start..].lines().next()?;
    let is = |p: &str| {
        line.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    (is("MIME-Version:") || is("Content-Type: multipart/"))
        .then(|| start..start + line.trim_end().len())
}

/// The tool that encrypted a file committed encrypted, by its header: git-crypt, Plural's
/// crypto filter, Ansible Vault.
pub fn encrypted_by(bytes: &[u8]) -> Option<&'static str> {
    [
        (&b"\0GITCRYPT\0"[..], "git-crypt"),
        (b"CHARTMART-ENCRYPTED", "plural crypto"),
        (b"$ANSIBLE_VAULT;", "ansible-vault"),
    ]
    .into_iter()
    .find(|(header, _)| bytes.starts_with(header))
    .map(|(_, tool)| tool)
}

mod typo;
pub use typo::{Near, NearNames, close_enough, closest, edit_distance, edit_distance_within};

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
