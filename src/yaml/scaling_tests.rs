//! Every per-node, per-key and per-line step of reading a file is linear: each construct is read
//! at n and 8n, and the time may grow by a bounded factor, never by 64. Times are compared, never
//! asserted absolutely (debug builds, busy machines).

use crate::yaml::{Budget, Parsed, compat};
use std::time::{Duration, Instant};

/// What reading a file does with its text (as `SourceFile::from_text`): parse, with the go-yaml
/// rewrite, then look for template markers.
fn read(text: &str) -> Parsed {
    let parsed = compat::parse(text, Budget::default());
    let template = match compat::syntax_error(&parsed) {
        Some(_) => compat::template_markers(text),
        None => compat::structural_template_markers(text),
    };
    std::hint::black_box(template);
    parsed
}

/// The best of three readings of the whole path a file takes: parse, go-yaml rewrite,
/// template detection.
fn time(text: &str) -> Duration {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(read(text));
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn assert_linear(name: &str, n: usize, make: impl Fn(usize) -> String) {
    let (small, big) = (make(n), make(8 * n));
    let (t1, t8) = (time(&small), time(&big));
    // 8× the input may take 8× the time; 24× leaves room for noise (other tests run at the same
    // time), not for a square (64×). The constant absorbs timer noise when both are tiny.
    assert!(
        t8 <= t1 * 24 + Duration::from_millis(30),
        "{name}: {} bytes took {t1:?}, {} bytes took {t8:?}",
        small.len(),
        big.len()
    );
}

#[test]
fn many_keys() {
    assert_linear("block keys", 2000, |n| {
        (0..n).map(|i| format!("k{i}: v\n")).collect()
    });
    assert_linear("flow keys", 2000, |n| {
        let keys: Vec<String> = (0..n).map(|i| format!("k{i}: 1")).collect();
        format!("{{{}}}\n", keys.join(", "))
    });
    assert_linear("duplicate keys", 2000, |n| "a: 1\n".repeat(n));
}

#[test]
fn merge_keys_and_aliases() {
    assert_linear("merge keys", 1500, |n| {
        let keys: Vec<String> = (0..n).map(|i| format!("k{i}: 1")).collect();
        format!(
            "a: &a {{{}}}\nb:\n  <<: [*a, *a]\n  k0: 2\n",
            keys.join(", ")
        )
    });
    assert_linear("aliases", 2000, |n| {
        format!("a: &a x\nb: [{}]\n", "*a, ".repeat(n))
    });
}

#[test]
fn flow_brackets() {
    assert_linear("unclosed braces", 10000, |n| "{".repeat(n));
    assert_linear("braces", 10000, |n| {
        format!("{}{}", "{".repeat(n), "}".repeat(n))
    });
    assert_linear("brackets", 10000, |n| {
        format!("{}{}", "[".repeat(n), "]".repeat(n))
    });
    assert_linear("spaced braces", 5000, |n| format!("a: {}", "{ ".repeat(n)));
    assert_linear("closer lines", 1500, |n| {
        format!("k: [\n  x\n{}]\n", ",\n".repeat(n))
    });
    assert_linear("closers under an item", 1000, |n| {
        format!("k: [\n  x\n{}", "]\n".repeat(n))
    });
}

#[test]
fn template_markers() {
    assert_linear("actions", 2500, |n| format!("a: {}", "{{a ".repeat(n)));
    assert_linear("closed actions", 2500, |n| {
        format!("a: x{}}}}}\n", "{{a ".repeat(n))
    });
    assert_linear("brace run", 5000, |n| {
        format!("a: x{}{}}}}}\n", "{".repeat(n), "a".repeat(n))
    });
    assert_linear("jinja", 2500, |n| format!("a: {}", "{% {# ".repeat(n)));
    assert_linear("terraform", 2500, |n| format!("a: {}", "${ %{ ".repeat(n)));
    assert_linear("printf", 2500, |n| format!("- {}\n", "% - ".repeat(n)));
    assert_linear("quoted helm", 2500, |n| {
        format!("a: \"{}\"\n", "{{ x ".repeat(n))
    });
}

/// Nesting is bounded in block and flow context alike, with a located error.
#[test]
fn deep_nesting_is_a_located_error() {
    let block: String = (0..300).map(|d| format!("{}a:\n", " ".repeat(d))).collect();
    let flow = format!("a: {}", "[".repeat(300));
    for text in [block, flow] {
        let f = read(&text);
        let p = f
            .problems
            .iter()
            // Ours, or saphyr's own limit in flow context: located either way.
            .find(|p| {
                p.message.contains("nesting deeper than") || p.message.contains("recursion limit")
            })
            .unwrap_or_else(|| panic!("{:?}", f.problems));
        assert!(p.span.start() > 0);
    }
}
