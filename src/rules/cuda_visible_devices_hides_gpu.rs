use super::Ctx;
use crate::diag::Diagnostic;
use crate::model::{Container, PodTemplate};
use crate::yaml::Node;

declare_rule! {
    /// ## What it does
    /// Flags a container that asks for `nvidia.com/gpu` and sets `CUDA_VISIBLE_DEVICES` in its
    /// `env` so that CUDA cannot see some or all of those GPUs: `-1` or an empty value (no GPU),
    /// or indices the container does not have. The device plugin hands a container exactly its
    /// GPUs, numbered from 0: with a limit of 1 the only index is `0`, whatever the GPU's
    /// number on the node.
    ///
    /// Not flagged: values that are not literal (variables, templates), UUIDs and words;
    /// containers whose command sets the variable itself, that set `NVIDIA_VISIBLE_DEVICES`,
    /// or that are privileged (they see the node's GPUs). Where GPUs may be shared (a
    /// time-slicing or MPS configuration in view), only the values that hide every GPU are.
    ///
    /// ## Why is this bad?
    /// CUDA enumerates the devices the variable names, up to the first index that does not
    /// exist. A container that hides its GPUs holds them, paid for and kept from other pods,
    /// while its framework finds none and runs on the CPU or fails; one that names fewer than
    /// its limit leaves the rest idle. The usual cause is a value copied from a machine where
    /// the process picked a GPU of the host, or a CPU base that a GPU overlay patches without
    /// removing it.
    ///
    /// ## Example
    /// ```yaml
    /// containers:
    ///   - name: ollama
    ///     image: ollama/ollama:0.6.0
    ///     env:
    ///       - {name: CUDA_VISIBLE_DEVICES, value: "-1"}
    ///     resources:
    ///       limits: {nvidia.com/gpu: 1}
    /// ```
    ///
    /// ## Fix
    /// Remove `CUDA_VISIBLE_DEVICES`: the container already sees exactly its GPUs. If the
    /// workload is meant to run on the CPU, drop the GPU request instead.
    name: "cuda-visible-devices-hides-gpu",
    category: "resources",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "CUDA_VISIBLE_DEVICES hides GPUs the container asks for",
    check: check,
    chunked: true,
}

const GPU: &str = "nvidia.com/gpu";
const VAR: &str = "CUDA_VISIBLE_DEVICES";

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let shared = cx.ix.gpu_setup().shares_whole_gpus();
    for (_, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        for c in t.containers.iter() {
            if let Some(d) = judge(cx, t, c, shared) {
                out.push(d);
            }
        }
    }
}

/// What the value lets CUDA see of `n` GPUs numbered from 0.
#[derive(Debug, PartialEq)]
enum Seen {
    /// No GPU.
    None,
    /// The first `k` indices named are GPUs of the container; `k` below `n`.
    Some(usize),
    /// All of them, or a value not judged.
    All,
}

fn seen(value: &str, n: u64) -> Seen {
    let v = value.trim();
    if v.is_empty() {
        return Seen::None;
    }
    let mut valid = Vec::new();
    for tok in v.split(',') {
        let tok = tok.trim();
        if tok.starts_with('-') && tok[1..].bytes().all(|b| b.is_ascii_digit()) && tok.len() > 1 {
            break;
        }
        let Ok(i) = tok.parse::<u64>() else {
            // UUIDs, MIG names, words, placeholders: CUDA's reading of them is not judged.
            return Seen::All;
        };
        if i >= n || valid.contains(&i) {
            break;
        }
        valid.push(i);
    }
    match valid.len() {
        0 => Seen::None,
        k if (k as u64) < n => Seen::Some(k),
        _ => Seen::All,
    }
}

fn judge(cx: &Ctx, t: &PodTemplate, c: &Container, shared: bool) -> Option<Diagnostic> {
    let (limit, n) = c.whole_limit(GPU)?;
    let env: Vec<Node> = c.get("env").into_iter().flat_map(Node::items).collect();
    let named = |name: &str| {
        env.iter()
            .rfind(|e| e.get("name").and_then(Node::as_str) == Some(name))
    };
    // The last entry of a name is the one the container gets.
    let entry = named(VAR)?;
    let value = entry.get("value")?;
    let text = value.as_str()?;
    if text.contains(['$', '{', '%', '<']) || named("NVIDIA_VISIBLE_DEVICES").is_some() {
        return None;
    }
    let privileged = c
        .get("securityContext")
        .and_then(|s| s.get("privileged"))
        .and_then(Node::as_str)
        == Some("true");
    let sets_itself = ["command", "args"]
        .into_iter()
        .flat_map(|k| c.get(k))
        .flat_map(|n| {
            let items: Vec<Node> = n.items().collect();
            if items.is_empty() { vec![n] } else { items }
        })
        .filter_map(Node::as_str)
        .any(|s| s.contains(VAR));
    if privileged || sets_itself {
        return None;
    }
    let name = c.name.unwrap_or("<unnamed>");
    let owner = cx.ix.owner(t);
    let of = owner.describe();
    let gpus = if n == 1 {
        "1 GPU".to_string()
    } else {
        format!("{n} GPUs")
    };
    let numbered = if n == 1 {
        "`0`".to_string()
    } else {
        format!("`0` to `{}`", n - 1)
    };
    let message = match seen(text, n) {
        Seen::None => format!(
            "`{VAR}: \"{text}\"` in container `{name}` of {of} hides every GPU from CUDA, but the container asks for {gpus} (`{GPU}`), numbered {numbered} inside it: the GPU is held, kept from other pods and paid for, while the workload finds none and runs on the CPU or fails"
        ),
        Seen::Some(k) if !shared => format!(
            "`{VAR}: \"{text}\"` in container `{name}` of {of} lets CUDA see {k} of the {gpus} the container asks for (`{GPU}`, numbered {numbered} inside it): {} idle, paid for as long as it runs",
            if n - k as u64 == 1 {
                "1 GPU sits".to_string()
            } else {
                format!("{} GPUs sit", n - k as u64)
            }
        ),
        _ => return None,
    };
    Some(
        cx.at(t.loc(value), message)
            .object(Some(owner.obj_ref()))
            .related(t.loc(limit), format!("{gpus} asked for"))
            .help(format!(
                "remove `{VAR}`: the device plugin gives the container exactly its GPUs, numbered from 0; if it is meant to run on the CPU, drop the `{GPU}` request instead"
            )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_cuda_sees() {
        assert_eq!(seen("-1", 1), Seen::None);
        assert_eq!(seen("", 2), Seen::None);
        assert_eq!(seen("1", 1), Seen::None);
        assert_eq!(seen("0", 1), Seen::All);
        assert_eq!(seen("0,1", 2), Seen::All);
        assert_eq!(seen("1,0", 2), Seen::All);
        assert_eq!(seen("0", 2), Seen::Some(1));
        assert_eq!(seen("0,2,1", 4), Seen::Some(3));
        assert_eq!(seen("0,5,1", 4), Seen::Some(1));
        assert_eq!(seen("0,0", 2), Seen::Some(1));
        assert_eq!(seen("0,1,2,3", 2), Seen::All);
        for v in ["GPU-8e2c5a", "all", "none", "MIG-1"] {
            assert_eq!(seen(v, 1), Seen::All, "{v}");
        }
    }
}
