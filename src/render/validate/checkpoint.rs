//! Checks that a job's checkpoint volume is well-formed and is where the trainer writes.

use super::V;
use super::formats::is_dns_subdomain;
use crate::render::profile::Job;
use crate::render::wrong::Wrong;
use serde_saphyr::Spanned;

/// Whether `piece` is `path` or a path inside it.
pub(super) fn inside(piece: &str, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    piece == path
        || piece
            .strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn looks_like_checkpoint_flag(flag: &str) -> bool {
    let f = flag.to_ascii_lowercase();
    f.starts_with('-') && (f.contains("checkpoint") || f.contains("ckpt"))
}

pub(super) fn job_checkpoint(v: &mut V, j: &Job) -> bool {
    let path = &j.checkpoint.path;
    let mut ok = true;
    let p = path.value.as_str();
    if !p.starts_with('/')
        || p == "/"
        || p.split('/').any(|seg| seg == ".." || seg == ".")
        || p.contains("//")
    {
        v.err(
            Wrong::InvalidValue,
            path,
            format!("checkpoint path `{p}` is not an absolute directory path"),
        )
        .help("e.g. `/checkpoints`");
        ok = false;
    }
    if !is_dns_subdomain(&j.checkpoint.claim.value) {
        v.err(
            Wrong::InvalidName,
            &j.checkpoint.claim,
            format!(
                "`{}` is not a PersistentVolumeClaim name",
                j.checkpoint.claim.value
            ),
        )
        .help("lowercase letters, digits, `-` and `.`");
        ok = false;
    }
    if !ok {
        return false;
    }
    let words: Vec<&Spanned<String>> = j.command.iter().chain(&j.args).collect();
    let mut mentions = false;
    for (i, w) in words.iter().enumerate() {
        let text = w.value.as_str();
        let pieces = text.split(|c: char| c == '=' || c == ':' || c == ',' || c.is_whitespace());
        if pieces.clone().any(|piece| inside(piece, p)) {
            mentions = true;
        }
        // `--checkpoint-dir=/elsewhere` or `--checkpoint-dir /elsewhere`
        let (flag, value) = match text.split_once('=') {
            Some((f, val)) => (f, Some(val)),
            None => (text, words.get(i + 1).map(|n| n.value.as_str())),
        };
        if looks_like_checkpoint_flag(flag)
            && let Some(val) = value.filter(|val| val.starts_with('/'))
            && !inside(val, p)
        {
            let ps = v.at(path);
            let message = format!(
                "`{flag}` points at `{val}`, outside the checkpoint volume mounted at `{p}`: checkpoints there are lost with the node"
            );
            v.err(Wrong::Conflict, *w, message)
                .related(ps, "checkpoint volume mounted here")
                .help(format!("point it at `{p}` or below"));
            ok = false;
        }
    }
    if !mentions && ok {
        let message = format!(
            "the job's command and args never mention the checkpoint path `{p}`: the trainer would checkpoint elsewhere, and lose it on spot reclaim"
        );
        v.err(Wrong::Conflict, path, message).help(format!(
            "pass it to the trainer, e.g. `--checkpoint-dir={p}`"
        ));
        ok = false;
    }
    ok
}
