//! Words of names, images and commands: case-insensitive tests, and a shell-ish lexer.

pub(super) fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

pub(super) fn contains_ci(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    // The first byte filters the windows: the command checks ask for many needles per
    // container, and a full comparison at every position was most of their cost.
    let first = first.to_ascii_lowercase();
    hay.len() >= needle.len()
        && (0..=hay.len() - needle.len()).any(|i| {
            hay[i].to_ascii_lowercase() == first
                && hay[i + 1..i + needle.len()].eq_ignore_ascii_case(rest)
        })
}

pub(super) fn starts_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

pub(super) fn ends_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

pub(crate) enum Tok<'a> {
    Word(&'a str),
    /// `;`, `&&`, `||`, `|`, `&`, a newline: the next word starts a new command.
    Sep,
}

/// Shell-ish words: quotes keep spaces, separators split commands, `#` starts a comment.
/// Words come back without their surrounding quotes, parentheses or braces.
pub(crate) struct Lexer<'a> {
    s: &'a str,
    i: usize,
}

pub(crate) fn lex(s: &str) -> Lexer<'_> {
    Lexer { s, i: 0 }
}

fn is_sep(b: u8) -> bool {
    matches!(b, b'\n' | b';' | b'&' | b'|')
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Tok<'a>;
    fn next(&mut self) -> Option<Tok<'a>> {
        let b = self.s.as_bytes();
        loop {
            while self.i < b.len() && matches!(b[self.i], b' ' | b'\t' | b'\r') {
                self.i += 1;
            }
            if self.i + 1 < b.len() && b[self.i] == b'\\' && b[self.i + 1] == b'\n' {
                self.i += 2;
                continue;
            }
            if self.i < b.len() && b[self.i] == b'#' {
                while self.i < b.len() && b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            break;
        }
        if self.i >= b.len() {
            return None;
        }
        if is_sep(b[self.i]) {
            while self.i < b.len() && is_sep(b[self.i]) {
                self.i += 1;
            }
            return Some(Tok::Sep);
        }
        let start = self.i;
        let mut quote: Option<u8> = None;
        while self.i < b.len() {
            let c = b[self.i];
            match quote {
                Some(q) if c == b'\\' && q == b'"' => {
                    self.i += 2;
                    continue;
                }
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'\'' || c == b'"' => quote = Some(c),
                None if c == b'\\' => {
                    self.i += 2;
                    continue;
                }
                None if matches!(c, b' ' | b'\t' | b'\r') || is_sep(c) => break,
                None => {}
            }
            self.i += 1;
        }
        self.i = self.i.min(b.len());
        let raw = self.s.get(start..self.i).unwrap_or("");
        Some(Tok::Word(raw.trim_matches(|c: char| {
            matches!(c, '"' | '\'' | '`' | '(' | ')' | '{' | '}')
        })))
    }
}

/// An image reference without its tag or digest (`ghcr.io/x/trainer:1.2` → `ghcr.io/x/trainer`).
pub(crate) fn image_repository(img: &str) -> &str {
    let img = img.split_once('@').map_or(img, |(r, _)| r);
    match img.rfind(':') {
        // A colon after the last slash is a tag; before it, a registry port.
        Some(i) if !img[i..].contains('/') => &img[..i],
        _ => img,
    }
}
