//! Shell scripts, Makefiles and Markdown pages (and Helm's `Chart.yaml`). None is linted, but two things in them speak for
//! the cluster: the controller releases a script installs (read by `index::installs`), and the
//! objects a page or script shows being applied or already there — a heredoc piped to
//! `kubectl apply -f -`, a fenced YAML block the reader is told to apply, `kubectl get -o yaml`
//! output. Such objects exist in the cluster although no manifest holds them.

use crate::yaml::{self, Budget, Node};
use std::path::Path;

/// A shell script, Makefile, Markdown page or environment file (`env`, `.env`, `x.env`,
/// `karpenter.conf`).
pub fn is_page(p: &Path) -> bool {
    p.extension()
        .is_some_and(|e| e == "sh" || e == "bash" || e == "md" || e == "env" || e == "conf")
        || p.file_name()
            .is_some_and(|n| n == "Makefile" || n == "env" || n == ".env" || n == ".envrc")
}

/// A Helm chart's `Chart.yaml`: the chart itself is rendered or skipped as a whole, but its name
/// and `appVersion` say which controller release a vendored chart installs.
pub fn is_chart_manifest(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "Chart.yaml")
}

/// A page kept without objects, for the releases it installs and the objects it shows.
pub fn kept(path: String, text: String) -> crate::source::SourceFile {
    crate::source::SourceFile {
        path,
        text: text.into(),
        docs: Vec::new(),
        problems: Vec::new(),
        skipped: None,
        role: crate::source::Role::Derived,
        lines: Default::default(),
    }
}

/// Whether a page (or `Chart.yaml`) is worth keeping: it may install a release, show an
/// object, label nodes or create a GKE Autopilot cluster.
pub fn worth_keeping(p: &Path, text: &str) -> bool {
    if is_chart_manifest(p) {
        return text.contains("kueue") || text.contains("karpenter");
    }
    installs_release(text)
        || (text.contains("kind:") && text.contains("metadata:"))
        || text.contains(" label ")
        || text.contains("clusters create-auto")
}

/// Whether a page's text may install a Kueue or Karpenter release (a release manifest, the
/// image, the chart on a `helm` command line, or the Kueue operator's OLM Subscription):
/// `index::installs` reads which.
pub fn installs_release(text: &str) -> bool {
    let helm =
        |chart: &str| text.contains("helm ") && text.contains(chart) && text.contains("--version");
    text.contains("kueue/releases/download/")
        || text.contains("kueue/kueue:")
        || text.contains("kueue/charts/kueue")
        || helm("kueue")
        || (text.contains("kind: Subscription") && text.contains("kueue-operator"))
        || text.contains("openshift-kueue-operator")
        || text.contains("Red Hat build of Kueue")
        || names_openshift_ai(text)
        || ((text.contains("DataScienceCluster") || text.contains("datasciencecluster"))
            && text.contains("kueue"))
        || text.contains("karpenter/controller:")
        || text.contains("raw.githubusercontent.com/aws/karpenter")
        || helm("karpenter")
        || text.contains("KARPENTER_VERSION=")
        || text.contains("KUEUE_VERSION=")
        || !prose_versions(text, "kueue").is_empty()
}

/// The releases of `product` (lower case) a README's prose says it uses: a `0.N` version within
/// a few words after the product's name on one line ("Kueue v0.6.2", "la versione di Kueue
/// utilizzata è la `v0.6.2`"). Only `0.` releases: a larger number after the name is another
/// product's (Kubernetes 1.29) or the vendor's own build.
pub fn prose_versions(text: &str, product: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.len() < 400) {
        let lower = line.to_ascii_lowercase();
        for (i, _) in lower.match_indices(product) {
            let after = &lower[i + product.len()..];
            let mut end = after.len().min(40);
            while !after.is_char_boundary(end) {
                end -= 1;
            }
            let window = &after[..end];
            let found = window.char_indices().find_map(|(j, c)| {
                let starts = j == 0 || !window.as_bytes()[j - 1].is_ascii_alphanumeric();
                if !starts || !(c == 'v' || c == '0') {
                    return None;
                }
                let v = window[j..].strip_prefix('v').unwrap_or(&window[j..]);
                let minor = v.strip_prefix("0.")?;
                let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
                Some((0, digits.parse().ok()?))
            });
            if let Some(v) = found
                && !out.contains(&v)
            {
                out.push(v);
            }
        }
    }
    out
}

/// Whether the text sets its Kueue objects on OpenShift AI 2 (its documentation's address, or
/// "OpenShift AI 2.9"), which runs a Kueue build of its own that serves only `v1beta1`;
/// OpenShift AI 3 works with the Red Hat build of Kueue, whose release the text does not name.
pub fn names_openshift_ai(text: &str) -> bool {
    let two = |marker: &str| {
        text.match_indices(marker).any(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.starts_with('2') && !rest[1..].starts_with(|c: char| c.is_ascii_digit())
        })
    };
    (two("openshift_ai_self-managed/")
        || two("openshift_ai_cloud_service/")
        || two("OpenShift AI "))
        && (text.contains("kueue") || text.contains("Kueue"))
}

/// An object a page shows: kind, namespace (when written) and name.
pub type Shown = (String, Option<String>, String);

/// Every object a page shows being applied or already there: the YAML of its heredocs
/// (`<<EOF` … `EOF`) and fenced code blocks, each parsed on its own, `List`s included, on a
/// page that applies manifests (`kubectl apply`, `oc create`), or exported from a live cluster
/// (`kubectl get -o yaml`, with the `uid` or `creationTimestamp` only the API server sets). A
/// guide that only shows what an object could look like shows nothing; so does a block that
/// does not parse, or a name still to be filled in (`${NAME}`, `<name>`).
pub fn shown_objects(text: &str) -> Vec<Shown> {
    let applies = text.lines().any(|l| {
        (l.contains("kubectl") || l.contains("oc "))
            && (l.contains(" apply") || l.contains(" create"))
    });
    let mut out = Vec::new();
    for block in blocks(text) {
        if !(block.contains("kind:") && block.contains("metadata:")) {
            continue;
        }
        for doc in yaml::parse(&block, Budget::default()).docs {
            objects(doc.root(), applies, &mut out);
        }
    }
    out
}

fn objects(n: Node, applies: bool, out: &mut Vec<Shown>) {
    let meta = n.get("metadata");
    let live = meta.is_some_and(|m| m.get("uid").is_some() || m.get("creationTimestamp").is_some());
    if let (Some(kind), Some(name)) = (n.str_at(&["kind"]), n.str_at(&["metadata", "name"]))
        && (applies || live)
        && !name.is_empty()
        && !name.contains(['$', '{', '<', '%', ' '])
    {
        let namespace = n.str_at(&["metadata", "namespace"]).map(str::to_string);
        out.push((kind.to_string(), namespace, name.to_string()));
    }
    for item in n.get("items").into_iter().flat_map(|i| i.items()) {
        objects(item, applies, out);
    }
}

/// The labels a page or script puts on nodes by hand (`kubectl label node <name> key=value`,
/// `oc label nodes …`), as `key=value` pairs: nodes that exist outside any NodePool carry them.
/// A word that is a shell variable (`"${LABEL_GPU}"`) is read through a plain assignment of the
/// same page (`LABEL_GPU="gpu=a100"`); a word still holding a `$` after that says nothing.
pub fn node_labels(text: &str) -> Vec<(String, String)> {
    // Continued lines (`\` at the end) are one command.
    let joined = text.replace("\\\n", " ");
    let unquote = |w: &str| w.trim_matches(|c| c == '"' || c == '\'').to_string();
    let vars: std::collections::HashMap<String, String> = joined
        .lines()
        .filter_map(|l| {
            let l = l
                .trim()
                .trim_start_matches("export ")
                .trim_start_matches("readonly ");
            let (name, value) = l.split_once('=')?;
            let plain = !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !value.starts_with(char::is_whitespace);
            plain.then(|| (name.to_string(), unquote(value.trim())))
        })
        .collect();
    let mut out = Vec::new();
    for line in joined.lines() {
        let words: Vec<String> = line.split_whitespace().map(unquote).collect();
        let Some(at) = words
            .windows(2)
            .position(|w| matches!(w[0].as_str(), "kubectl" | "oc") && w[1] == "label")
        else {
            continue;
        };
        let rest = &words[at + 2..];
        let on_nodes = rest
            .iter()
            .find(|w| !w.starts_with('-'))
            .is_some_and(|w| matches!(w.split('/').next(), Some("node" | "nodes" | "no")));
        if !on_nodes {
            continue;
        }
        for w in rest {
            let name = w
                .strip_prefix("${")
                .and_then(|v| v.strip_suffix('}'))
                .or_else(|| w.strip_prefix('$'));
            let expanded = match name.and_then(|n| vars.get(n)) {
                Some(v) => v.as_str(),
                None => w.as_str(),
            };
            for w in expanded.split_whitespace() {
                if w.starts_with('-') || w.contains('$') {
                    continue;
                }
                if let Some((k, v)) = w.split_once('=')
                    && !k.is_empty()
                {
                    out.push((k.to_string(), v.to_string()));
                }
            }
        }
    }
    out
}

/// The bodies of a page's heredocs and fenced code blocks, dedented as written.
fn blocks(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let end = if let Some(word) = heredoc_word(line) {
            lines[i + 1..]
                .iter()
                .position(|l| l.trim() == word)
                .map(|n| i + 1 + n)
        } else if let Some(fence) = fence(line) {
            lines[i + 1..]
                .iter()
                .position(|l| l.trim_start().starts_with(fence))
                .map(|n| i + 1 + n)
        } else {
            None
        };
        match end {
            Some(end) => {
                out.push(dedent(&lines[i + 1..end]));
                // A fenced block's heredocs are blocks of their own.
                if fence(line).is_some() {
                    out.extend(blocks(&lines[i + 1..end].join("\n")));
                }
                i = end + 1;
            }
            None => i += 1,
        }
    }
    out
}

/// Where a file's first shell heredoc command stands (`cat <<EOF | envsubst | kubectl apply -f
/// -`): a `.yaml` file that does not parse and holds one is shell notes, run by hand, not a
/// manifest.
pub fn shell_heredoc(text: &str) -> Option<std::ops::Range<usize>> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        // A command before the `<<`, not a YAML key (`key: a << B`).
        let before = l.split_once("<<").map_or("", |(b, _)| b.trim());
        // At the top level: an indented one is inside a YAML block scalar (a Job's script).
        let shell = l.starts_with(|c: char| c.is_ascii_alphabetic())
            && before.starts_with(|c: char| c.is_ascii_alphabetic())
            && !before.contains(": ")
            && !before.ends_with(':');
        if shell && !l.trim_start().starts_with('#') && heredoc_word(l).is_some() {
            let start = at + (l.len() - l.trim_start().len());
            return Some(start..at + l.len());
        }
        at += line.len();
    }
    None
}

/// The delimiter of a heredoc a line opens (`cat <<EOF | kubectl apply -f -`, `<<-'YAML'`).
fn heredoc_word(line: &str) -> Option<&str> {
    let (_, rest) = line.split_once("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let rest = rest.trim_start_matches(['\'', '"']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let word = &rest[..end];
    (!word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')).then_some(word)
}

/// The fence a Markdown code block opens with (three or more backticks or tildes).
fn fence(line: &str) -> Option<&str> {
    let t = line.trim_start();
    ["```", "~~~"].into_iter().find(|f| t.starts_with(f))
}

/// The lines without the indentation they all share (a block inside a Markdown list).
fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut s = String::new();
    for l in lines {
        s.push_str(l.get(indent..).unwrap_or(l.trim_start()));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Vec<(String, String)> {
        shown_objects(text)
            .into_iter()
            .map(|(k, _, n)| (k, n))
            .collect()
    }

    #[test]
    fn releases_named_in_prose() {
        let it = "La versione di Kueue utilizzata è la `v0.6.2`.\n";
        assert_eq!(prose_versions(it, "kueue"), [(0, 6)]);
        assert!(installs_release(it));
        assert_eq!(
            prose_versions("Tested with Kueue 0.9.1 and Kueue v0.10.\n", "kueue"),
            [(0, 9), (0, 10)]
        );
        // Another product's release, a vendor build, a version far from the name: none.
        for no in [
            "Kueue on Kubernetes 1.29\n",
            "Red Hat build of Kueue 1.1\n",
            "Install Kueue first. Then, after the queues are ready, run the job with v0.3 of the tool.\n",
            "kueue-v0x\n",
        ] {
            assert_eq!(prose_versions(no, "kueue"), [], "{no}");
        }
    }

    #[test]
    fn heredoc_piped_to_kubectl() {
        let sh = "#!/bin/bash\ncat <<EOF | kubectl apply -f -\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  role: \"KarpenterNodeRole-${CLUSTER_NAME}\"\nEOF\necho done\n";
        assert_eq!(shown(sh), [("EC2NodeClass".into(), "default".into())]);
    }

    #[test]
    fn fenced_blocks_lists_and_nested_heredocs() {
        let md = "# Lab\n\n1. Look:\n   ```yaml\n   apiVersion: v1\n   kind: List\n   items:\n   - apiVersion: karpenter.k8s.aws/v1\n     kind: EC2NodeClass\n     metadata:\n       name: default\n       uid: 8d1c\n   ```\n\n```bash\nkubectl apply -f - <<'EOF'\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cluster-queue\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: ${QUEUE}\nEOF\n```\n";
        assert_eq!(
            shown(md),
            [
                ("EC2NodeClass".into(), "default".into()),
                ("ClusterQueue".into(), "cluster-queue".into())
            ]
        );
    }

    #[test]
    fn a_guide_that_applies_nothing_shows_nothing() {
        let guide = "```yaml\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: gpu\n```\n";
        assert!(shown(guide).is_empty());
        let applied = format!("{guide}\nThen `oc apply -f class.yaml`.\n");
        assert_eq!(shown(&applied), [("EC2NodeClass".into(), "gpu".into())]);
    }

    #[test]
    fn shell_notes_are_found_by_their_heredoc_command() {
        let notes =
            "# create the pool\ncat <<EOF | envsubst | kubectl apply -f -\napiVersion: v1\nEOF\n";
        assert_eq!(shell_heredoc(notes), Some(18..59));
        assert!(
            shell_heredoc("eksctl create cluster -f - <<EOF\nkind: ClusterConfig\nEOF\n").is_some()
        );
        assert!(shell_heredoc("apiVersion: v1\nkind: ConfigMap\ndata:\n  x: a <<EOF\n").is_none());
        // A heredoc inside a Job's script block is the Job's.
        assert!(
            shell_heredoc("spec:\n  args:\n    - |\n      psql <<EOF\nGRANT x;\nEOF\n").is_none()
        );
    }

    #[test]
    fn openshift_ai_2_is_named() {
        assert!(names_openshift_ai(
            "See https://docs.redhat.com/en/documentation/red_hat_openshift_ai_self-managed/2.9/html/x for Kueue."
        ));
        assert!(names_openshift_ai(
            "Tested on OpenShift AI 2.19 with kueue."
        ));
        assert!(!names_openshift_ai(
            "Tested on OpenShift AI 3.4 with kueue."
        ));
        assert!(!names_openshift_ai(
            "Runs on OpenShift AI; the Kueue objects are below."
        ));
    }

    #[test]
    fn prose_and_broken_blocks_show_nothing() {
        assert!(shown("The `default` EC2NodeClass is created for you.\n").is_empty());
        assert!(shown("```yaml\nkind: [\nmetadata:\n  name: x\n```\n").is_empty());
        // An unterminated heredoc or fence is not a block.
        assert!(shown("cat <<EOF\nkind: ClusterQueue\nmetadata:\n  name: q\n").is_empty());
        assert!(heredoc_word("if [ $# -lt 2 ]; then x << 2; fi").is_none());
    }

    #[test]
    fn labels_put_on_nodes_by_hand() {
        let script = "LABEL_NODE_TYPE=\"node-type=onprem-gpu\"\nexport LABEL_GPU='gpu=l40s zone=lab'\nkubectl label node \"${node}\" \\\n    \"${LABEL_NODE_TYPE}\" \\\n    $LABEL_GPU --overwrite\nkubectl label pod web tier=front\noc label nodes worker-1 accelerator=a100 old-\nkubectl label node n1 owner=$USER\n";
        assert_eq!(
            node_labels(script),
            [
                ("node-type", "onprem-gpu"),
                ("gpu", "l40s"),
                ("zone", "lab"),
                ("accelerator", "a100"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
    }
}
