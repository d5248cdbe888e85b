//! `docs/rules.md`, generated from the rule explanations (`gpuops rules --markdown`). A test
//! compares the committed file with this output, so the docs never drift from the code.

use crate::rules;
use std::fmt::Write;

/// The rule reference as Markdown: an index table, then each rule's explanation.
pub fn rules_markdown() -> String {
    let all = rules::all();
    let mut out = String::new();
    out.push_str("# Rules\n\n");
    out.push_str(
        "<!-- Generated from the rule explanations by `gpuops rules --markdown > docs/rules.md` \
         (or `GPUOPS_BLESS=1 cargo test --test rules`). Do not edit by hand. -->\n\n",
    );
    let _ = writeln!(
        out,
        "gpuops has {} rules. Each one's default severity can be changed or the rule turned off in \
         `.gpuops.yaml`; `gpuops rule NAME` prints the same explanation in the terminal.\n",
        all.len()
    );
    out.push_str("| rule | category | default severity | what it flags |\n");
    out.push_str("|---|---|---|---|\n");
    for r in all {
        let _ = writeln!(
            out,
            "| [`{n}`](#{n}) | {} | {} | {} |",
            r.category,
            r.severity,
            r.summary.replace('|', "\\|"),
            n = r.name,
        );
    }
    for r in all {
        let _ = write!(
            out,
            "\n## {}\n\nCategory: {} · default severity: {} · applies to: {}\n\n{}\n",
            r.name,
            r.category,
            r.severity,
            r.kinds.join(", "),
            demote_headings(&r.explanation())
        );
    }
    out
}

/// Moves the explanation's headings (`## Why is this bad?`) one level down, under the rule's own
/// heading; `#` lines inside code blocks are YAML comments and stay.
fn demote_headings(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_move_down_and_code_comments_stay() {
        let t = "## What\ntext\n```yaml\n# comment\n```\n## Fix";
        assert_eq!(
            demote_headings(t),
            "### What\ntext\n```yaml\n# comment\n```\n### Fix"
        );
    }

    #[test]
    fn every_rule_has_a_section() {
        let md = rules_markdown();
        for r in rules::all() {
            assert!(md.contains(&format!("\n## {}\n", r.name)), "{}", r.name);
        }
    }
}
