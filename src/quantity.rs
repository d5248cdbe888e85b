//! Kubernetes resource quantities (`1`, `500m`, `2Ki`, `1e3`), exact to the milli-unit.

/// A parsed quantity in thousandths of a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Milli(pub i128);

/// Parses a quantity the way the API server does; `None` when it is not one.
pub fn parse(s: &str) -> Option<Milli> {
    let s = s.trim();
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, suffix) = body.split_at(num_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return None;
    }
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    if int_part.len() + frac_part.len() > 30 {
        return None;
    }
    // value = digits * 10^(-frac_len) * multiplier, scaled by 1000.
    // At most 30 digits (checked above): an i128 holds them. Read in place, not joined into a
    // string first: every resource quantity of the repository comes through here.
    let digits: i128 = int_part
        .bytes()
        .chain(frac_part.bytes())
        .fold(0, |n, d| n * 10 + i128::from(d - b'0'));
    let mut scale_exp10: i32 = 3 - frac_part.len() as i32;
    let mut factor: i128 = 1;
    match suffix {
        "" => {}
        "m" => scale_exp10 -= 3,
        "k" => scale_exp10 += 3,
        "M" => scale_exp10 += 6,
        "G" => scale_exp10 += 9,
        "T" => scale_exp10 += 12,
        "P" => scale_exp10 += 15,
        "E" => scale_exp10 += 18,
        "Ki" => factor = 1 << 10,
        "Mi" => factor = 1 << 20,
        "Gi" => factor = 1 << 30,
        "Ti" => factor = 1 << 40,
        "Pi" => factor = 1 << 50,
        "Ei" => factor = 1 << 60,
        _ => {
            let exp = suffix.strip_prefix(['e', 'E'])?;
            let e: i32 = exp.parse().ok()?;
            if !(-30..=30).contains(&e) {
                return None;
            }
            scale_exp10 += e;
        }
    }
    let mut v = digits.checked_mul(factor)?;
    if scale_exp10 >= 0 {
        v = v.checked_mul(10i128.checked_pow(scale_exp10 as u32)?)?;
    } else {
        let d = 10i128.checked_pow((-scale_exp10) as u32)?;
        // Kubernetes rounds sub-milli values up; keep it exact enough to tell whole from not.
        v = if v % d == 0 { v / d } else { v / d + 1 };
    }
    Some(Milli(if neg { -v } else { v }))
}

/// The quantity as a whole number, if it is one.
pub fn whole(s: &str) -> Option<i128> {
    let m = parse(s)?;
    (m.0 % 1000 == 0).then_some(m.0 / 1000)
}

/// Whether a value is a slot that envsubst, Helm, Kustomize or a pipeline fills in later, so the
/// linter cannot judge it: `${GPUS}`, `$GPUS`, `$(GPUS)`, `{{ .Values.gpus }}`, `<GPU_COUNT>`,
/// `__GPUS__`, `PLACEHOLDER_NUM_GPUS`, ALL_CAPS names with an underscore (`NUM_GPUS`), and
/// Chainsaw bindings (`($gpus)`).
/// The one notion of placeholder for every rule and the scheduling model.
pub fn is_placeholder(s: &str) -> bool {
    let s = s.trim();
    // Every template marker has a `$` or a `{`: one pass over the bytes rules all three out for
    // nearly every value (this runs for each label value and quantity the index reads).
    let marked = s.bytes().any(|b| b == b'$' || b == b'{');
    if marked
        && (s.contains("${")
            || s.contains("{{")
            || s.contains("$(")
            || (s.starts_with('$') && s.len() > 1)
            || shell_variable_inside(s)
            // A Chainsaw / Kyverno binding (`($node_gpus)`), filled in before the apply.
            || (s.starts_with("($") && s.ends_with(')')))
    {
        return true;
    }
    let inner = |open: &str, close: &str| {
        s.strip_prefix(open)
            .and_then(|r| r.strip_suffix(close))
            .is_some_and(|r| !r.is_empty() && !r.contains(char::is_whitespace))
    };
    if inner("<", ">") || inner("__", "__") || s.starts_with("PLACEHOLDER") {
        return true;
    }
    // Conventional substitution names: no real quantity, label value or name is spelled so,
    // whole or as one part of a host or path (`juice-shop.REPLACE_ME`).
    let named = |s: &str| {
        s.len() >= 2
            && s.contains('_')
            && s.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && s.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    };
    // A `__NAME__` marker `sed` fills in may also stand between dashes (`lq-__GPU__`).
    let dunder = |p: &str| p.len() > 4 && p.starts_with("__") && p.ends_with("__") && named(p);
    named(s)
        || (s.contains('_') && s.split(['.', '/', ':', '@']).any(named))
        || (s.contains("__") && s.split(['.', '/', ':', '@', '-']).any(dunder))
}

/// A shell variable inside a value (`gke-disk-$IMAGE_NAME`, `gpu-pod-$i`): no label, name or
/// quantity holds a `$`, so the value is filled in (envsubst, `sed`, a loop) before it is applied.
fn shell_variable_inside(s: &str) -> bool {
    s.match_indices('$')
        .any(|(i, _)| s[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wholes_and_fractions() {
        assert_eq!(whole("1"), Some(1));
        assert_eq!(whole("8"), Some(8));
        assert_eq!(whole("1k"), Some(1000));
        assert_eq!(whole("2000m"), Some(2));
        assert_eq!(whole("1e1"), Some(10));
        assert_eq!(whole("0.5"), None);
        assert_eq!(whole("1.5"), None);
        assert_eq!(whole("500m"), None);
        assert_eq!(whole("-1"), Some(-1));
        assert_eq!(parse("abc"), None);
        assert_eq!(parse("1x"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("1Gi"), Some(Milli(1000 * (1 << 30))));
    }

    #[test]
    fn placeholders() {
        for p in [
            "${GPUS}",
            "$GPUS",
            "$(GPUS)",
            "{{ .Values.gpus }}",
            "{{ x }}",
            // A marker inside a value, not at its start.
            "train-${RUN}",
            "v{{ .Chart.Version }}",
            "gpu-$(POOL)",
            "gke-secondary-boot-disk-$VLLM_DISK_IMAGE_NAME",
            "CONTAINER_IMAGE_CACHE.$PROJECT_ID",
            "gpu-pod-$i",
            "<GPU_COUNT>",
            "<gpus>",
            "__GPUS__",
            "PLACEHOLDER_NUM_GPUS",
            "PLACEHOLDER",
            "NUM_GPUS",
            "($node_gpus)",
            "($victim.name)",
            "GPU_COUNT_2",
            "_X",
            // One part of a host or path.
            "juice-shop.REPLACE_ME",
            "registry/MY_ORG/app",
            // Between dashes, filled in by `sed`.
            "lq-__GPU__",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for v in [
            "1",
            "1.5",
            "-1",
            "abc",
            "ABC",
            "A",
            "_",
            "500m",
            "",
            "<",
            "<>",
            "a_b",
            "Gpu_Count",
            "p4d.24xlarge",
            "NoSchedule",
            "1_000",
            "team-__-a",
            // A `$` or `{` that opens no marker.
            "$",
            "{a}",
            "a$1",
            "a$-b",
            "api.example_site.com",
            "s3://bucket/ckpt_1",
        ] {
            assert!(!is_placeholder(v), "{v}");
        }
    }
}
