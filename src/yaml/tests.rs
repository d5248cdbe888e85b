use super::*;

#[test]
fn nodes_stay_small() {
    // Millions of nodes in a large repository: their size is the memory bill.
    assert_eq!(std::mem::size_of::<Span>(), 8);
    assert_eq!(std::mem::size_of::<Raw>(), 16);
    // A handle: the stored node and its document.
    assert_eq!(std::mem::size_of::<Node>(), 16);
}

#[test]
fn scalars_read_from_the_text_or_the_pool() {
    let src = "plain: a b\nsq: 'it''s'\ndq: \"x\\ty\"\nq: \"same\"\nfold: >\n  one\n  two\nlong: abcdefgh\n";
    let p = parse(src, Budget::default());
    let r = p.docs[0].root();
    assert_eq!(r.str_at(&["plain"]), Some("a b"));
    assert_eq!(r.str_at(&["sq"]), Some("it's"));
    assert_eq!(r.str_at(&["dq"]), Some("x\ty"));
    assert_eq!(r.str_at(&["q"]), Some("same"));
    assert_eq!(r.str_at(&["fold"]), Some("one two\n"));
    assert_eq!(r.str_at(&["long"]), Some("abcdefgh"));
    // Written as read: no copy. Escapes, doubled quotes and folding: a copy in the pool.
    let pooled = |k: &str| r.get(k).unwrap().raw.pooled();
    assert!(!pooled("plain") && !pooled("q") && !pooled("long"));
    assert!(pooled("sq") && pooled("dq") && pooled("fold"));
}

#[test]
fn keys_match_by_length_prefix_and_text() {
    let src = "spek: 1\nspec: 2\nmetaname: 3\nmetadata: 4\n\"kind\": 5\n\"k\\u0069nd2\": 6\n";
    let p = parse(src, Budget::default());
    let r = p.docs[0].root();
    assert_eq!(r.str_at(&["spec"]), Some("2"));
    assert_eq!(r.str_at(&["metadata"]), Some("4"));
    assert_eq!(r.str_at(&["kind"]), Some("5"));
    assert_eq!(r.str_at(&["kind2"]), Some("6"));
    assert!(r.get("spe").is_none());
    assert!(r.get("metadat").is_none());
    assert!(r.get("").is_none());
}

#[test]
fn an_alias_shares_its_anchors_nodes_at_its_own_place() {
    let src = "a: &x {k: v}\nb: *x\n";
    let p = parse(src, Budget::default());
    let r = p.docs[0].root();
    let (a, b) = (r.get("a").unwrap(), r.get("b").unwrap());
    assert_eq!(&src[b.span().range()], "*x");
    assert!(!a.is(b));
    assert!(a.get("k").unwrap().is(b.get("k").unwrap()));
    assert_eq!(b.str_at(&["k"]), Some("v"));
    // A scalar alias reads its anchor's text, short or long, at its own place.
    let src = "a: &s a long scalar text\nb: *s\nc: &t 'hi'\nd: *t\ne: [*s]\n";
    let p = parse(src, Budget::default());
    let r = p.docs[0].root();
    let b = r.get("b").unwrap();
    assert_eq!(b.as_str(), Some("a long scalar text"));
    assert_eq!(&src[b.span().range()], "*s");
    assert_eq!(r.str_at(&["d"]), Some("hi"));
    assert_eq!(r.get("d").unwrap().style(), Some(Style::SingleQuoted));
    assert_eq!(
        r.get("e").unwrap().items().next().unwrap().as_str(),
        Some("a long scalar text")
    );
}

#[test]
fn rewritten_fills_scalars_and_keeps_spans() {
    let src = "name: app-{{x}}\n\"{{x}}\": 1\nlist: [a, \"b\\n\"]\n";
    let p = parse(src, Budget::default());
    let r = p.docs[0].root();
    let d = r.rewritten(&mut |t| t.contains("{{").then(|| t.replace("{{x}}", "gpu")));
    let n = d.root();
    assert_eq!(n.str_at(&["name"]), Some("app-gpu"));
    assert_eq!(n.str_at(&["gpu"]), Some("1"));
    let list: Vec<_> = n.get("list").unwrap().items().map(|i| i.as_str()).collect();
    assert_eq!(list, [Some("a"), Some("b\n")]);
    assert_eq!(n.get("name").unwrap().span(), r.get("name").unwrap().span());
    assert_eq!(n.get("name").unwrap().style(), Some(Style::Plain));
}

#[test]
fn styles_ride_in_the_span_and_do_not_change_its_range() {
    let src = "a: 'x'\nb: \"y\"\nc: |\n  z\nd: w\n";
    let p = parse(src, Budget::default());
    let root = &p.docs[0].root();
    let style = |k: &str| root.get(k).unwrap().style().unwrap();
    assert_eq!(style("a"), Style::SingleQuoted);
    assert_eq!(style("b"), Style::DoubleQuoted);
    assert_eq!(style("c"), Style::Literal);
    assert_eq!(style("d"), Style::Plain);
    let b = root.get("b").unwrap().span();
    assert_eq!(&src[b.range()], "\"y\"");
    assert_eq!(b, Span::new(b.start(), b.end()));
    assert_eq!(root.get("a").unwrap().yaml11(), Some(Yaml11::Str));
}

#[test]
fn positions_count_lines_and_characters() {
    let src = "é: 1\nb: 2\n";
    assert_eq!(
        Pos::of(src, 0),
        Pos {
            byte: 0,
            line: 1,
            col: 1
        }
    );
    assert_eq!(Pos::of(src, 4).col, 4);
    assert_eq!(
        Pos::of(src, 6),
        Pos {
            byte: 6,
            line: 2,
            col: 1
        }
    );
    // Inside a character: its start.
    assert_eq!(Pos::of(src, 1).byte, 0);
    assert_eq!(Pos::offset_of(src, 2, 2), 7);
    assert_eq!(Pos::offset_of(src, 9, 1), src.len());
}

#[test]
fn spans_are_bytes_lines_and_columns() {
    let src = "a: 1\nb:\n  c: \"é\"\n  d: x\n";
    let p = parse(src, Budget::default());
    assert!(p.problems.is_empty());
    let root = &p.docs[0].root();
    let d = root.at(&["b", "d"]).unwrap();
    assert_eq!(d.as_str(), Some("x"));
    let at = d.span().start_pos(src);
    assert_eq!((at.line, at.col), (4, 6));
    assert_eq!(&src[d.span().range()], "x");
    let c = root.at(&["b", "c"]).unwrap();
    assert_eq!(&src[c.span().range()], "\"é\"");
}

#[test]
fn multi_document_and_empty_documents() {
    let p = parse("a: 1\n---\n---\nb: 2\n", Budget::default());
    assert_eq!(p.docs.len(), 3);
    assert!(p.docs[1].root().is_null());
}

#[test]
fn duplicate_key_is_a_problem_and_the_last_value_wins() {
    // go-yaml's maps behind kubectl (sigs.k8s.io/yaml) keep the last value.
    let src = "a: 1\nb: 2\na: 3\n";
    let p = parse(src, Budget::default());
    assert_eq!(p.problems.len(), 1);
    assert_eq!(p.problems[0].span.start_pos(src).line, 3);
    assert_eq!(p.problems[0].first.unwrap().start_pos(src).line, 1);
    assert_eq!(p.docs[0].root().get("a").unwrap().as_str(), Some("3"));
}

#[test]
fn the_same_block_value_twice_at_another_indentation_is_no_problem() {
    // The same list under the same key, written at two indentations: it reads the same.
    let src = "spec:\n  tolerations:\n      - key: a\n        operator: Exists\n  containers: []\n  tolerations:\n    - key: a\n      operator: Exists\n";
    let p = parse(src, Budget::default());
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    // Blanks left after the first copy change nothing either.
    let trailing = "spec:\n  tolerations:\n   - operator: Exists     \n  affinity: {}\n  tolerations:\n  - operator: Exists\n";
    let p = parse(trailing, Budget::default());
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    // Another value is still a problem, also when only its nesting differs.
    let other = "spec:\n  t:\n    - a: 1\n      b: 2\n  t:\n    - a: 1\n    - b: 2\n";
    assert_eq!(parse(other, Budget::default()).problems.len(), 1);
}

#[test]
fn syntax_error_stops_with_location() {
    let p = parse("a: 1\n---\nb: [1, 2\nc: 3\n", Budget::default());
    assert_eq!(p.docs.len(), 1);
    assert_eq!(p.problems.len(), 1);
    assert!(p.problems[0].message.starts_with("YAML syntax error"));
}

#[test]
fn alias_bomb_is_stopped() {
    let mut s = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    let mut prev = 'a';
    for c in 'b'..='k' {
        s.push_str(&format!(
            "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
        prev = c;
    }
    let p = parse(&s, Budget::default());
    assert_eq!(p.problems.len(), 1);
    assert!(p.problems[0].message.contains("alias"));
}

#[test]
fn deep_nesting_is_stopped() {
    // Flow nesting trips the scanner's own recursion limit; block nesting ours.
    let s = "[".repeat(10_000);
    let p = parse(&s, Budget::default());
    assert_eq!(p.problems.len(), 1);
    assert!(p.problems[0].message.contains("recursion limit"));
    let block: String = (0..300)
        .map(|i| format!("{}- \n", "  ".repeat(i)))
        .collect();
    let p = parse(&block, Budget::default());
    assert_eq!(p.problems.len(), 1, "{:?}", p.problems);
    assert!(p.problems[0].message.contains("nesting"));
}

#[test]
fn merge_keys_apply_without_overriding() {
    let p = parse(
        "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n",
        Budget::default(),
    );
    let m = p.docs[0].root().get("m").unwrap();
    assert_eq!(m.get("x").unwrap().as_str(), Some("1"));
    assert_eq!(m.get("y").unwrap().as_str(), Some("3"));
}

#[test]
fn quoted_scalar_span_stops_at_its_quote() {
    let src = "a: \"x\" # note\nb: 'it''s' # c\n";
    let p = parse(src, Budget::default());
    let a = p.docs[0].root().get("a").unwrap();
    assert_eq!(&src[a.span().range()], "\"x\"");
    assert_eq!(
        (a.span().end_pos(src).line, a.span().end_pos(src).col),
        (1, 7)
    );
    let b = p.docs[0].root().get("b").unwrap();
    assert_eq!(&src[b.span().range()], "'it''s'");
}

#[test]
fn yaml11_types() {
    let p = parse(
        "a: yes\nb: \"yes\"\nc: 0755\nd: 1_000\ne: 1.5\nf: ${VAR}\ng: 1e3\nh: 1.2.3\ni: e3\nj: .5\n",
        Budget::default(),
    );
    let r = &p.docs[0].root();
    assert_eq!(r.get("a").unwrap().yaml11(), Some(Yaml11::Bool));
    assert_eq!(r.get("b").unwrap().yaml11(), Some(Yaml11::Str));
    assert_eq!(r.get("c").unwrap().yaml11(), Some(Yaml11::Int));
    assert_eq!(r.get("d").unwrap().yaml11(), Some(Yaml11::Int));
    assert_eq!(r.get("e").unwrap().yaml11(), Some(Yaml11::Float));
    assert_eq!(r.get("f").unwrap().yaml11(), Some(Yaml11::Str));
    assert_eq!(r.get("g").unwrap().yaml11(), Some(Yaml11::Float));
    assert_eq!(r.get("h").unwrap().yaml11(), Some(Yaml11::Str));
    assert_eq!(r.get("i").unwrap().yaml11(), Some(Yaml11::Str));
    assert_eq!(r.get("j").unwrap().yaml11(), Some(Yaml11::Float));
}

#[test]
fn yaml11_plain_scalars_by_their_first_characters() {
    let cases = [
        ("_1", Yaml11::Int),
        ("-_1_0", Yaml11::Int),
        ("+12", Yaml11::Int),
        ("0x1F", Yaml11::Int),
        ("-0x1F", Yaml11::Int),
        ("+.5", Yaml11::Float),
        ("._5", Yaml11::Float),
        ("-.inf", Yaml11::Float),
        ("1_0.5e-3", Yaml11::Float),
        // Past float64, go-yaml's ParseFloat fails and the text stays a string.
        ("1e308", Yaml11::Float),
        ("1e309", Yaml11::Str),
        ("2e70684", Yaml11::Str),
        ("_", Yaml11::Str),
        ("_x1", Yaml11::Str),
        ("x_1", Yaml11::Str),
        ("-abc", Yaml11::Str),
        ("nvcr.io/nvidia/pytorch:24.05-py3", Yaml11::Str),
        ("12345678901234567890a", Yaml11::Str),
        ("123456789012", Yaml11::Int),
        ("~", Yaml11::Null),
        ("Off", Yaml11::Bool),
    ];
    for (text, want) in cases {
        let p = parse(&format!("k: {text}\n"), Budget::default());
        let got = p.docs[0].root().get("k").and_then(|n| n.yaml11());
        assert_eq!(got, Some(want), "{text}");
    }
    // Quoted and block scalars are strings, whatever they hold.
    let p = parse("a: '12'\nb: |\n  12\nc: [1]\n", Budget::default());
    let r = p.docs[0].root();
    assert_eq!(r.get("a").and_then(|n| n.yaml11()), Some(Yaml11::Str));
    assert_eq!(r.get("b").and_then(|n| n.yaml11()), Some(Yaml11::Str));
    assert_eq!(r.get("c").and_then(|n| n.yaml11()), None);
}
