//! Values that are a placeholder by their shape alone: a printf verb, a format field, a
//! `[[NAME]]` token, a list of choices, a Terraform expression.

/// The end of a `[[NAME]]` token standing as a whole value (`pods: [[NODES]]`, `- [[CPU]]`): a
/// script's placeholder, which YAML reads as a list holding a list of one upper-case word, a
/// shape no manifest writes for a value.
pub(super) fn bracket_token(line: &str, at: usize) -> Option<usize> {
    let before = line[..at].trim_end();
    if !(before.ends_with(':') || before.ends_with('-')) {
        return None;
    }
    let rest = line[at..].strip_prefix("[[")?;
    let n = rest
        .bytes()
        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
        .count();
    let tail = rest[n..].strip_prefix("]]")?;
    let tail = tail.trim_start();
    (n >= 2
        && rest.as_bytes()[0].is_ascii_uppercase()
        && (tail.is_empty() || tail.starts_with('#')))
    .then_some(at + 2 + n + 2)
}

/// The end of a Python/shell format field standing in a value. In a file that fails to parse:
/// `{name}` glued to more text (`image: {username}/serve:1`), which no YAML flow mapping is. In
/// any file: `{name}` as a whole value (`name: {name}`, `- {paths}`), which YAML reads as a
/// mapping of one key to nothing, a shape no manifest writes for a value.
pub(super) fn format_field(
    line: &str,
    at: usize,
    close: Option<usize>,
    quoted: bool,
) -> Option<usize> {
    let rest = &line[at + 1..];
    let close = close?.checked_sub(at + 1)?;
    let name = &rest[..close];
    let is_name = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let before = line[..at].trim_end();
    let tail = &rest[close + 1..];
    let whole = tail.trim().is_empty() || tail.starts_with(" #");
    if is_name && whole && (before.ends_with(':') || before.ends_with('-')) {
        return Some(at + close + 2);
    }
    let after = tail.chars().next()?;
    let glued = !matches!(after, ' ' | '\t' | ',' | ']' | '}' | '#');
    (quoted && is_name && glued && before.ends_with(':')).then_some(at + close + 2)
}

/// Whether `${…}` holds a Terraform expression (a function call, a conditional, a reference
/// into a variable or resource), not an envsubst name (`${GPU_COUNT}`), which stays a value.
pub(super) fn is_terraform_expression(inner: &str) -> bool {
    let inner = inner.trim().trim_start_matches('~').trim();
    let word_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    let rest = inner[word_end..].trim_start();
    word_end > 0
        && (rest.starts_with('(')
            || rest.starts_with('?')
            || (rest.starts_with('.')
                && matches!(
                    &inner[..word_end],
                    "var" | "local" | "each" | "module" | "data"
                )))
}

/// Whether the unquoted value starting at `at` is only a printf verb (`name: %s`, `- %d`): a
/// format string filled in by code before anything reads it as YAML.
pub(super) fn is_printf_value(line: &str, at: usize) -> bool {
    let before = line[..at].trim_end();
    if !(before.ends_with(':') || before.ends_with('-')) {
        return false;
    }
    // The verb, then nothing but blanks or a comment: read up to the verb's end and the blanks
    // after it, never the rest of the line (which made a line of `- %` quadratic).
    let value = &line[at + 1..];
    ["s", "d", "v", "q", "f", "t", "x", "+v", "#v"]
        .iter()
        .any(|verb| match value.strip_prefix(verb) {
            None => false,
            Some(rest) => {
                let tail = rest.trim_start();
                tail.is_empty()
                    || (tail.starts_with('#') && rest[..rest.len() - tail.len()].ends_with(' '))
            }
        })
}

/// The end of a list of choices standing as a whole value (`restartPolicy: [Always | Never |
/// OnFailure]`): a field reference's "one of these", which YAML reads as a list of one string. A
/// manifest never writes a one-item flow list of words separated by ` | `.
pub(super) fn choice_list(line: &str, at: usize) -> Option<usize> {
    let before = line[..at].trim_end();
    if !before.ends_with(':') {
        return None;
    }
    let inner_end = line[at..].find(']')?;
    let inner = &line[at + 1..at + inner_end];
    let tail = line[at + inner_end + 1..].trim_start();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return None;
    }
    let choices: Vec<&str> = inner.split(" | ").map(str::trim).collect();
    let word = |w: &str| {
        w.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    (choices.len() >= 2
        && choices.iter().all(|c| word(c))
        && choices.iter().any(|c| c.as_bytes()[0].is_ascii_uppercase()))
    .then_some(at + inner_end + 1)
}
