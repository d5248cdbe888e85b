//! Flow collections whose content stands at or left of the column of their key.

use super::*;

#[test]
fn flow_seq_content_at_key_indent() {
    let src = "command: [\n\"sh\", \"-c\",\n\"sleep 10\"]\nimage: ubuntu\n";
    let p = quirk(src);
    let root = p.docs[0].root();
    let cmd = root.get("command").unwrap();
    assert_eq!(strs(cmd), ["sh", "-c", "sleep 10"]);
    // Spans still point into the original text.
    let last = cmd.items().nth(2).unwrap();
    assert_eq!(at(src, last), (3, 1, "\"sleep 10\""));
    assert_eq!(root.str_at(&["image"]), Some("ubuntu"));
}

#[test]
fn flow_seq_content_with_a_quoted_scalar_continued_at_key_indent() {
    let src = "spec:\n  command: [\n  \"sh\", \"-c\", # run it\n  \"sleep 10 &&\n  exit 1\"]\n  image: ubuntu\n";
    let p = quirk(src);
    let spec = p.docs[0].root().get("spec").unwrap();
    let cmd = strs(spec.get("command").unwrap());
    assert_eq!(cmd[..2], ["sh", "-c"]);
    // The words stay; only the blanks between the lines differ from go-yaml's single space.
    assert_eq!(
        cmd[2].split_whitespace().collect::<Vec<_>>(),
        ["sleep", "10", "&&", "exit", "1"]
    );
    assert_eq!(spec.str_at(&["image"]), Some("ubuntu"));
}
