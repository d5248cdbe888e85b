//! The training program a container runs, when the files hold its text: a Python script
//! mounted from a ConfigMap of the repository (`torchrun /scripts/main.py`), or the code of
//! `python -c`. A program that never saves anything writes no checkpoint to lose.

use crate::index::Index;
use crate::model::{Container, Object, PodTemplate};
use crate::yaml::Node;

/// Whether the program the container runs is in view and saves nothing: no word of it names a
/// save, a checkpoint, an output or a trainer that checkpoints by default.
pub(super) fn saves_nothing(ix: &Index, owner: &Object, t: &PodTemplate, c: &Container) -> bool {
    program_text(ix, owner, t, c).is_some_and(|text| !mentions_saving(&text))
}

/// Words of a program that may write something worth keeping. Trainers of Hugging Face,
/// Lightning and Keras save checkpoints unless told not to, and a script that writes any file
/// (`open(…, "w")`) or names an output directory may write one; a model's `output` tensor is
/// no file.
const SAVING: [&str; 20] = [
    "save",
    "checkpoint",
    "ckpt",
    "dump",
    "write",
    "export",
    "upload",
    "persist",
    "output_dir",
    "output_path",
    "out_dir",
    "model_dir",
    "trainer",
    "fit(",
    "state_dict",
    "safetensors",
    "pickle",
    "open(",
    "to_disk",
    "mlflow",
];

fn mentions_saving(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    SAVING.iter().any(|w| lower.contains(w))
}

/// The program's text: `python -c CODE`, else the one `.py` file the command names, read from
/// the ConfigMap mounted over it.
fn program_text(ix: &Index, owner: &Object, t: &PodTemplate, c: &Container) -> Option<String> {
    let args: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| c.get(k).into_iter().flat_map(|n| n.items()))
        .filter_map(Node::as_str)
        .collect();
    if let Some(i) = args.iter().position(|a| *a == "-c")
        && i > 0
        && is_python(args[i - 1])
    {
        return args.get(i + 1).map(|s| s.to_string());
    }
    // Scripts named anywhere in the command, shell lines included: exactly one, or none judged.
    let mut scripts = args
        .iter()
        .flat_map(|a| a.split(|ch: char| ch.is_whitespace() || matches!(ch, ';' | '"' | '\'')))
        .filter(|w| w.ends_with(".py") && w.starts_with('/'));
    let script = scripts.next()?;
    if scripts.any(|s| s != script) {
        return None;
    }
    configmap_file(ix, owner, t, c, script)
}

fn is_python(cmd: &str) -> bool {
    let base = cmd.rsplit('/').next().unwrap_or(cmd);
    base == "python" || base.starts_with("python3")
}

/// The text of file `path` in the container, when a ConfigMap of the files is mounted over it.
fn configmap_file(
    ix: &Index,
    owner: &Object,
    t: &PodTemplate,
    c: &Container,
    path: &str,
) -> Option<String> {
    let volumes: Vec<Node> = t
        .spec
        .get("volumes")
        .into_iter()
        .flat_map(Node::items)
        .collect();
    for m in c.get("volumeMounts").into_iter().flat_map(Node::items) {
        let (Some(mount), Some(name)) = (
            m.get("mountPath").and_then(Node::as_str),
            m.get("name").and_then(Node::as_str),
        ) else {
            continue;
        };
        let Some(rest) = path
            .strip_prefix(mount.trim_end_matches('/'))
            .and_then(|r| r.strip_prefix('/'))
        else {
            continue;
        };
        let Some(cm) = volumes
            .iter()
            .find(|v| v.get("name").and_then(Node::as_str) == Some(name))
            .and_then(|v| v.get("configMap"))
        else {
            continue;
        };
        // `subPath` mounts one key at the mountPath itself: not this shape.
        if m.get("subPath").is_some() {
            return None;
        }
        // `items` maps keys to paths; without it each key is a file of its name.
        let key = match cm.get("items") {
            Some(items) => items.items().find_map(|it| {
                (it.get("path").and_then(Node::as_str) == Some(rest))
                    .then(|| it.get("key").and_then(Node::as_str))
                    .flatten()
            })?,
            None => rest,
        };
        let cm_name = cm.get("name").and_then(Node::as_str)?;
        let map = ix.named("ConfigMap", cm_name).into_iter().find(|o| {
            o.namespace.is_none() || owner.namespace.is_none() || o.namespace == owner.namespace
        })?;
        return map
            .root
            .get("data")
            .and_then(|d| d.get(key))
            .and_then(Node::as_str)
            .map(str::to_string);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saving_words() {
        assert!(!mentions_saving(
            "for epoch in range(8):\n    loss.backward()\n    logging.info(loss)\n"
        ));
        for text in [
            "torch.save(model.state_dict(), path)",
            "trainer = Trainer(model=m, args=a)",
            "with open('/data/x', 'w') as f:",
            "model.save_pretrained(out)",
            "pl.Trainer(max_epochs=3).fit(model)",
        ] {
            assert!(mentions_saving(text), "{text}");
        }
    }
}
