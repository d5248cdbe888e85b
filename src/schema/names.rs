//! Kubernetes' name rules (apimachinery `IsQualifiedName`, `IsValidLabelValue`,
//! `IsDNS1123Subdomain`, `IsDNS1123Label`), checked by hand: they run on every label key and value
//! of the repository. Each check gives why a value fails, in words a message can quote.

const NAME_MAX: usize = 63;
const PREFIX_MAX: usize = 253;
const LABEL_VALUE_MAX: usize = 63;

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a qualified name and a non-empty
/// label value, without the length limit.
fn name_chars(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => {
            alnum(f)
                && alnum(l)
                && b.iter()
                    .all(|&c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`: one DNS-1123 label, without the length limit.
fn dns_label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    let lower = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) => lower(f) && lower(l) && b.iter().all(|&c| lower(c) || c == b'-'),
        _ => false,
    }
}

/// Dot-separated DNS-1123 labels, without the length limit.
fn dns_subdomain_chars(s: &str) -> bool {
    s.split('.').all(dns_label_chars)
}

const SUBDOMAIN_RULE: &str =
    "lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit";

/// Why `s` is not a DNS-1123 subdomain (object names and references: at most 253 lower-case
/// letters, digits, `-` and `.`), if it is not.
pub fn dns_subdomain(s: &str) -> Option<String> {
    if s.len() > PREFIX_MAX {
        return Some(format!("it is longer than {PREFIX_MAX} characters"));
    }
    (!dns_subdomain_chars(s)).then(|| format!("it must be {SUBDOMAIN_RULE}"))
}

/// Why `s` is not a DNS-1123 label (at most 63 lower-case letters, digits and `-`), if it is not.
pub fn dns_label(s: &str) -> Option<String> {
    if s.len() > NAME_MAX {
        return Some(format!("it is longer than {NAME_MAX} characters"));
    }
    (!dns_label_chars(s)).then(|| {
        "it must be lower-case letters, digits and `-`, starting and ending with a letter or digit"
            .to_string()
    })
}

/// Why `s` is not a label value (at most 63 characters, empty allowed), if it is not.
pub fn label_value(s: &str) -> Option<String> {
    if s.len() > LABEL_VALUE_MAX {
        return Some(format!("it is longer than {LABEL_VALUE_MAX} characters"));
    }
    (!s.is_empty() && !name_chars(s)).then(|| {
        "it must be letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
            .to_string()
    })
}

/// Why `s` is not a qualified name (a label or taint key: an optional lower-case DNS subdomain
/// prefix of at most 253 characters and `/`, then a name of at most 63), if it is not.
pub fn qualified_name(s: &str) -> Option<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((_, rest)) if rest.contains('/') => {
            return Some("it holds more than one `/`".into());
        }
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return Some("its prefix before `/` is empty".into());
        }
        if p.len() > PREFIX_MAX {
            return Some(format!("its prefix is longer than {PREFIX_MAX} characters"));
        }
        if !dns_subdomain_chars(p) {
            return Some(format!(
                "its prefix `{p}` is not a DNS subdomain ({SUBDOMAIN_RULE})"
            ));
        }
    }
    if name.is_empty() {
        return Some("its name part is empty".into());
    }
    if name.len() > NAME_MAX {
        return Some(format!(
            "its name part is longer than {NAME_MAX} characters"
        ));
    }
    (!name_chars(name)).then(|| {
        format!(
            "its name part `{name}` must be letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
        )
    })
}

/// Whether `s` has the shape of a qualified name, lengths aside: the pattern Karpenter's CRD
/// puts on requirement and taint keys, which the API server checks (the length limits only
/// Karpenter's own validation checks, after apply).
pub fn qualified_name_shape(s: &str) -> bool {
    match s.split_once('/') {
        Some((p, n)) => dns_subdomain_chars(p) && name_chars(n),
        None => name_chars(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        for ok in [
            "nvidia.com/gpu",
            "gpu",
            "A_b.c-D",
            "karpenter.k8s.aws/instance-gpu-count",
            "kubernetes.io/hostname",
            "a/B",
            &format!("{}/{}", "a".repeat(253), "b".repeat(63)),
        ] {
            assert_eq!(qualified_name(ok), None, "{ok}");
            assert!(qualified_name_shape(ok), "{ok}");
        }
        for bad in [
            "/test",
            "test/",
            "test/test/test",
            "test.com.com}",
            "Test.com/test",
            "a..b/c",
            "-a",
            "a-",
            "",
            "with space",
        ] {
            assert!(qualified_name(bad).is_some(), "{bad}");
            assert!(!qualified_name_shape(bad), "{bad}");
        }
        // Too long, though shaped right: only the length rules reject these.
        for long in [
            format!("{}/b", "a".repeat(254)),
            format!("a/{}", "b".repeat(64)),
            "b".repeat(64),
        ] {
            assert!(qualified_name(&long).is_some(), "{long}");
            assert!(qualified_name_shape(&long), "{long}");
        }
    }

    #[test]
    fn label_values_and_dns_names() {
        for ok in ["", "a", "true", "A-b_c.1", &"x".repeat(63)] {
            assert_eq!(label_value(ok), None, "{ok}");
        }
        for bad in ["???", "-a", "a-", "a/b", &"x".repeat(64), "with space"] {
            assert!(label_value(bad).is_some(), "{bad}");
        }
        for ok in ["prod", "a.b-c", "0", &"a".repeat(253)] {
            assert_eq!(dns_subdomain(ok), None, "{ok}");
        }
        for bad in ["@prod", "Prod", "a..b", "a_b", "-a", "", &"a".repeat(254)] {
            assert!(dns_subdomain(bad).is_some(), "{bad}");
        }
        assert_eq!(dns_label("my-params"), None);
        assert!(dns_label("a.b").is_some() && dns_label(&"a".repeat(64)).is_some());
    }
}
