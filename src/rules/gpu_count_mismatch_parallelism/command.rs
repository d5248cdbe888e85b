//! The server a container's command line starts: its words (exec form and `sh -c` scripts,
//! nested), the program they run and, for vLLM and SGLang, where its arguments begin.

use super::Engine;
use crate::intent::{Tok, image_repository, lex};
use crate::model::{Container, Object, PodTemplate};
use crate::yaml::Node;

/// A word of a container's command line and the scalar it is written in.
#[derive(Clone, Copy)]
pub(super) struct Word<'a> {
    pub(super) text: &'a str,
    pub(super) node: Node<'a>,
    /// Read from a `sh -c` script, not an exec-form item.
    pub(super) script: bool,
}

/// Nested `sh -c` levels worth reading.
const MAX_DEPTH: u8 = 3;

/// The commands a container runs: its exec form (command, then args) as one, and each command
/// of a `sh -c` script in it as one more; and that script.
pub(super) fn commands<'a>(c: &Container<'a>) -> (Vec<Vec<Word<'a>>>, Option<&'a str>) {
    let mut out = vec![Vec::new()];
    let mut script_next = false;
    for key in ["command", "args"] {
        for item in c.get(key).into_iter().flat_map(Node::items) {
            let Some(text) = item.as_str() else { continue };
            if script_next {
                script(text, item, 1, &mut out);
                // What follows the script is its `$0`, `$1`…, not a command.
                return (out, Some(text));
            }
            out[0].push(Word {
                text,
                node: item,
                script: false,
            });
            script_next = runs_script(&out[0]);
        }
    }
    (out, None)
}

/// Splits a shell script into its commands (into `out`), reading `sh -c` scripts within.
fn script<'a>(text: &'a str, node: Node<'a>, depth: u8, out: &mut Vec<Vec<Word<'a>>>) {
    let mut cur: Vec<Word<'a>> = Vec::new();
    let mut script_next = false;
    for tok in lex(text) {
        match tok {
            Tok::Sep => {
                out.push(std::mem::take(&mut cur));
                script_next = false;
            }
            Tok::Word("") => {}
            Tok::Word(w) => {
                if std::mem::take(&mut script_next) && depth < MAX_DEPTH {
                    script(w, node, depth + 1, out);
                    continue;
                }
                cur.push(Word {
                    text: w,
                    node,
                    script: true,
                });
                script_next = runs_script(&cur);
            }
        }
    }
    out.push(cur);
}

pub(super) fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

fn is_env_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Programs that run the words after them (and their own options) as the command.
const WRAPPERS: &[&str] = &[
    "exec", "env", "nohup", "time", "timeout", "stdbuf", "numactl", "taskset",
];

/// Where the program of a command stands: past environment assignments and wrappers with
/// their options.
pub(super) fn program_at(cmd: &[Word<'_>]) -> usize {
    let mut i = 0;
    let mut wrapped = false;
    while let Some(w) = cmd.get(i) {
        let t = w.text;
        let wrapper_option = wrapped
            && (t.starts_with('-')
                || t.bytes()
                    .all(|b| b.is_ascii_digit() || b".,-smh".contains(&b)));
        if WRAPPERS.contains(&basename(t)) {
            wrapped = true;
        } else if !is_env_assignment(t) && !wrapper_option {
            break;
        }
        i += 1;
    }
    i
}

/// Whether a command so far is a shell told to run its next word as a script (`sh -c`,
/// `bash -lc`).
fn runs_script(cmd: &[Word<'_>]) -> bool {
    let p = program_at(cmd);
    let Some(program) = cmd.get(p) else {
        return false;
    };
    let shell = ["sh", "bash", "zsh", "dash", "ash"].contains(&basename(program.text));
    let opts = &cmd[p + 1..];
    shell
        && opts.iter().all(|w| w.text.starts_with('-'))
        && opts.last().is_some_and(|w| {
            !w.text.starts_with("--") && w.text.len() > 1 && w.text[1..].contains('c')
        })
}

/// A model server invocation: its engine, where it is named, and its arguments.
pub(super) struct Server<'a> {
    pub(super) engine: Engine,
    /// The word that names it (`serve`, the module), or the image for an entrypoint.
    pub(super) named: Node<'a>,
    /// What to point at in `named`, and what stands before it there.
    pub(super) shown: &'a str,
    pub(super) after: Option<&'a str>,
    pub(super) args: Vec<Word<'a>>,
}

/// The server a command runs, if it runs one.
pub(super) fn server_in<'a>(cmd: &[Word<'a>]) -> Option<Server<'a>> {
    let p = program_at(cmd);
    let program = cmd.get(p)?;
    let base = basename(program.text);
    let next = cmd.get(p + 1);
    let found = |engine, named: &Word<'a>, after: Option<&'a str>, from: usize| Server {
        engine,
        named: named.node,
        shown: named.text,
        after,
        args: cmd.get(from..).unwrap_or_default().to_vec(),
    };
    if let Some(n) = next.filter(|n| n.text == "serve") {
        return match base {
            "vllm" => Some(found(Engine::Vllm, n, Some(program.text), p + 2)),
            "sglang" => Some(found(Engine::Sglang, n, Some(program.text), p + 2)),
            _ => None,
        };
    }
    if !base.starts_with("python") {
        return None;
    }
    // Interpreter options, then `-m module`.
    let mut i = p + 1;
    while let Some(w) = cmd.get(i) {
        match w.text {
            "-m" => break,
            "-W" | "-X" => i += 2,
            t if t.starts_with('-') && t.len() > 1 && !t.starts_with("--") => i += 1,
            _ => return None,
        }
    }
    let module = cmd.get(i + 1)?;
    let engine = match module.text {
        "vllm.entrypoints.openai.api_server" | "vllm.entrypoints.api_server" => Engine::Vllm,
        "sglang.launch_server" => Engine::Sglang,
        _ => return None,
    };
    Some(found(engine, module, None, i + 2))
}

/// The `vllm/vllm-openai` image runs the vLLM server as its entrypoint: a container of it with
/// no command of its own serves with its arguments.
pub(super) fn entrypoint_server<'a>(c: &Container<'a>, exec: &[Word<'a>]) -> Option<Server<'a>> {
    if c.get("command").is_some() {
        return None;
    }
    let image = c.get("image")?;
    let repo = image_repository(image.as_str()?.trim());
    if repo != "vllm/vllm-openai" && !repo.ends_with("/vllm/vllm-openai") {
        return None;
    }
    Some(Server {
        engine: Engine::Vllm,
        named: image,
        shown: image.as_str()?,
        after: None,
        args: exec.to_vec(),
    })
}

/// Whether a script runs something in the background (`cmd &`), which may use GPUs too.
pub(super) fn backgrounds(script: &str) -> bool {
    let b = script.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'&'
            && !(i > 0 && matches!(b[i - 1], b'&' | b'>' | b'<'))
            && !matches!(b.get(i + 1), Some(b'&' | b'>'))
    })
}

/// Signs that ranks may run elsewhere or on other GPUs than the container's own: Ray, a
/// multi-node script, LeaderWorkerSet variables, GPUs picked by hand.
pub(super) fn placed_elsewhere(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|t| t == "ray")
        || [
            "multi-node",
            "multinode",
            "multi_node",
            "lws_",
            "visible_devices",
        ]
        .iter()
        .any(|s| lower.contains(s))
}

/// `Deployment serving/chat` for a kind with one pod template, else with the template's path.
pub(super) fn describe(owner: &Object, t: &PodTemplate) -> String {
    match owner.kind {
        "Pod" | "Job" | "Deployment" | "StatefulSet" | "ReplicaSet" | "CronJob" | "DaemonSet" => {
            owner.describe()
        }
        _ => format!("{} (`{}`)", owner.describe(), t.path),
    }
}
