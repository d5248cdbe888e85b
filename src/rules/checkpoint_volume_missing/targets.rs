//! Where a container is told to write checkpoints: flags, shell variables and config overrides
//! in its command and arguments, and its environment.

use crate::model::Container;
use crate::yaml::Node;

/// A place the container is told to write checkpoints to.
pub(super) struct Target<'a> {
    /// How it is given: `--checkpoint_dir` or `env CHECKPOINT_DIR`.
    pub(super) what: String,
    pub(super) value: String,
    pub(super) node: Node<'a>,
    /// The flag (or variable name) text to find the value after, inside the node's source.
    pub(super) after: Option<String>,
}

/// Whether a flag or variable name names a checkpoint or output directory.
fn is_checkpoint_name(raw: &str) -> bool {
    let bare = raw.trim_start_matches('-');
    let last = bare.rsplit('.').next().unwrap_or(bare);
    let n = last.to_ascii_lowercase().replace('-', "_");
    if matches!(
        n.as_str(),
        "ckpt" | "checkpoint" | "checkpoints" | "output_dir" | "save_dir"
    ) {
        return true;
    }
    let stem = ["ckpt", "checkpoint", "checkpoints"]
        .iter()
        .any(|p| n.starts_with(p));
    let tail = [
        "_dir",
        "_path",
        "_root",
        "_directory",
        "_folder",
        "_location",
        "_uri",
        "_url",
    ]
    .iter()
    .any(|s| n.ends_with(s));
    stem && tail
}

/// Whether a value could be a path or URI (not a number, a boolean or empty).
fn path_like(v: &str) -> bool {
    !v.is_empty()
        && !v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "none" | "null"
        )
}

/// Splits a command string into shell-ish words, dropping quotes and separators, and a
/// script's comments (`#python … --output_dir x` kept for later runs nothing).
fn words(s: &str) -> Vec<&str> {
    s.lines()
        .map(|l| {
            let l = if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            };
            l.find(" #")
                .or_else(|| l.find("\t#"))
                .map_or(l, |i| &l[..i])
        })
        .flat_map(|l| l.split(|ch: char| ch.is_whitespace() || ch == ';'))
        .map(|w| w.trim_matches(|ch: char| matches!(ch, '"' | '\'' | '`' | '\\' | '(' | ')')))
        .filter(|w| !w.is_empty() && !matches!(*w, "&&" | "||" | "|"))
        .collect()
}

/// Whether the container's command turns checkpoints off: Hugging Face's
/// `save_strategy="no"` (`--save_strategy no`, or a keyword argument of an inline script), or a
/// checkpoint interval beyond the steps it runs.
/// Its output directory then holds no checkpoint, and a restart from the start is by design.
pub(super) fn saves_no_checkpoint(c: &Container<'_>) -> bool {
    let toks: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| c.get(k).into_iter().flat_map(|n| n.items()))
        .filter_map(|n| n.as_str())
        .flat_map(words)
        .collect();
    let no = |v: &str| v.trim_matches(|ch| matches!(ch, '"' | '\'' | ',')) == "no";
    if interval_beyond_steps(&toks) {
        return true;
    }
    toks.iter().enumerate().any(|(i, t)| {
        let name = t.trim_start_matches('-');
        match name.split_once('=') {
            Some((k, v)) => k.trim() == "save_strategy" && no(v),
            None => {
                name == "save_strategy"
                    && t.starts_with("--")
                    && toks.get(i + 1).is_some_and(|v| no(v))
            }
        }
    })
}

/// Whether the run ends before its first checkpoint: a checkpoint interval in steps
/// (`--checkpoint_freq=999`) beyond the steps it runs (`--max_steps=50`), as profiling and
/// smoke runs of a training script set them, and nothing tells it to resume from checkpoints.
fn interval_beyond_steps(toks: &[&str]) -> bool {
    let number = |name: &[&str]| {
        toks.iter().enumerate().find_map(|(i, t)| {
            let flag = t.strip_prefix("--")?;
            let (k, v) = match flag.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (flag, toks.get(i + 1).copied()),
            };
            let k = k.to_ascii_lowercase().replace('-', "_");
            if !name.contains(&k.as_str()) {
                return None;
            }
            v?.trim_matches(|ch| matches!(ch, '"' | '\'' | ','))
                .parse::<u64>()
                .ok()
        })
    };
    let steps = number(&[
        "max_steps",
        "num_steps",
        "total_steps",
        "train_steps",
        "max_iters",
        "train_iters",
    ]);
    let interval = number(&[
        "checkpoint_freq",
        "checkpoint_frequency",
        "checkpoint_interval",
        "checkpoint_every",
        "checkpoint_steps",
        "ckpt_freq",
        "ckpt_every",
        "ckpt_interval",
    ]);
    // A run told to resume from its checkpoints is meant to run longer than this.
    let resumes = toks
        .iter()
        .any(|t| t.to_ascii_lowercase().contains("resume"));
    matches!((steps, interval), (Some(s), Some(i)) if i > s) && !resumes
}

/// Checkpoint destinations given in `command`/`args` and `env`.
pub(super) fn targets_of<'a>(c: &Container<'a>) -> Vec<Target<'a>> {
    let mut out = Vec::new();
    let mut toks: Vec<(&'a str, Node<'a>)> = Vec::new();
    for key in ["command", "args"] {
        for item in c.get(key).into_iter().flat_map(|n| n.items()) {
            if let Some(s) = item.as_str() {
                for w in words(s) {
                    toks.push((w, item));
                }
            }
        }
    }
    let mut i = 0;
    while i < toks.len() {
        let (tok, node) = toks[i];
        i += 1;
        let (name, inline) = match tok.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (tok, None),
        };
        if !is_checkpoint_name(name) {
            continue;
        }
        let is_flag = name.starts_with('-');
        let (value, vnode) = match inline {
            // Also a keyword argument of an inline script: `output_dir='/tmp/out',`.
            Some(v) => (v.trim_matches(|ch| matches!(ch, '"' | '\'' | ',')), node),
            // `--checkpoint_dir /ckpt`; a bare NAME without `=` is not an assignment.
            None if is_flag => match toks.get(i) {
                Some((next, n)) if !next.starts_with('-') => {
                    i += 1;
                    (*next, *n)
                }
                _ => continue,
            },
            None => continue,
        };
        if !is_flag
            && !name
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.')
        {
            // Only flags, shell variables (`CKPT_DIR=/x`) and config overrides (`trainer.output_dir=/x`).
            continue;
        }
        if !path_like(value) {
            continue;
        }
        out.push(Target {
            what: format!("`{name}`"),
            value: value.to_string(),
            node: vnode,
            after: Some(name.to_string()),
        });
    }
    for e in c.get("env").into_iter().flat_map(|n| n.items()) {
        let Some(name) = e.get("name").and_then(Node::as_str) else {
            continue;
        };
        if !is_checkpoint_name(name) {
            continue;
        }
        let Some(v) = e.get("value") else { continue };
        let Some(value) = v.as_str() else { continue };
        if !path_like(value) {
            continue;
        }
        out.push(Target {
            what: format!("env `{name}`"),
            value: value.to_string(),
            node: v,
            after: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_names() {
        for ok in [
            "--checkpoint_dir",
            "--checkpoint-dir",
            "--ckpt",
            "--ckpt_path",
            "--output_dir",
            "--output-dir",
            "--save_dir",
            "--save-dir",
            "--checkpoint-path",
            "CHECKPOINT_DIR",
            "CKPT_DIR",
            "OUTPUT_DIR",
            "SAVE_DIR",
        ] {
            assert!(is_checkpoint_name(ok), "{ok}");
        }
        for bad in [
            "--checkpoint_interval",
            "--checkpoint-every",
            "--data_dir",
            "--ckpt_steps",
            "HOME",
        ] {
            assert!(!is_checkpoint_name(bad), "{bad}");
        }
    }

    #[test]
    fn script_words() {
        assert_eq!(
            words("python train.py --ckpt_dir=/ckpt && echo 'done';"),
            vec!["python", "train.py", "--ckpt_dir=/ckpt", "echo", "done"]
        );
        // A script's comments run nothing.
        assert_eq!(
            words("#python prep.py --output_dir x\npython run.py --ckpt /c  # --output_dir y"),
            vec!["python", "run.py", "--ckpt", "/c"]
        );
    }
}
