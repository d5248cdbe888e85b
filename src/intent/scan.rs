//! The command scanner: what the commands, arguments and scripts of containers say about a
//! workload (compile steps, benchmarks, smoke-test flags, training launchers and arguments, model
//! servers, idling), first cue of each sort, read word by word without allocating.

use super::signals::{key_sort, pair_signal, program_signal, script_signal};
use super::*;

/// A word (or word pair) that says something, where it stands.
#[derive(Clone, Copy)]
pub(super) struct Cue<'a> {
    pub(super) shown: &'a str,
    pub(super) node: Node<'a>,
}

/// What the commands of some containers say, first cue of each sort.
#[derive(Default)]
pub(super) struct Scan<'a> {
    pub(super) compile: Option<Cue<'a>>,
    pub(super) bench: Option<Cue<'a>>,
    /// `--smoke-test`, `--dry-run`: a trainer told not to train.
    pub(super) smoke_flag: Option<Cue<'a>>,
    /// A training launcher or trainer script.
    pub(super) launcher: Option<Cue<'a>>,
    /// An argument only training takes (`--epochs`, `--max_steps`, `trainer.*=`).
    pub(super) train_arg: Option<Cue<'a>>,
    /// An argument training takes among others (`--output_dir`, `--checkpoint*`, `--save_*`).
    pub(super) weak_arg: Option<Cue<'a>>,
    pub(super) inference: Option<Cue<'a>>,
    /// A script named for generating, sampling or evaluating with a trained model.
    pub(super) generate: Option<Cue<'a>>,
    /// Whether a script or module run is named for training (or its inline body trains).
    pub(super) trains_script: bool,
    pub(super) smoke: Option<Cue<'a>>,
    pub(super) idle: Option<Cue<'a>>,
    /// A program or script nothing is known about: real work of unknown purpose.
    pub(super) unknown: Option<Cue<'a>>,
    /// Scripts the commands write inline (here-documents): base name, and whether the body
    /// trains.
    pub(super) inline: Vec<(&'a str, bool)>,
}

#[derive(Clone, Copy)]
pub(super) enum Sort {
    Compile,
    Bench,
    SmokeFlag,
    Launcher,
    TrainArg,
    WeakArg,
    Inference,
    Generate,
    Smoke,
    Idle,
    Unknown,
}

impl<'a> Scan<'a> {
    fn note(&mut self, sort: Sort, shown: &'a str, node: Node<'a>) {
        let slot = match sort {
            Sort::Compile => &mut self.compile,
            Sort::Bench => &mut self.bench,
            Sort::SmokeFlag => &mut self.smoke_flag,
            Sort::Launcher => &mut self.launcher,
            Sort::TrainArg => &mut self.train_arg,
            Sort::WeakArg => &mut self.weak_arg,
            Sort::Inference => &mut self.inference,
            Sort::Generate => &mut self.generate,
            Sort::Smoke => &mut self.smoke,
            Sort::Idle => &mut self.idle,
            Sort::Unknown => &mut self.unknown,
        };
        if slot.is_none() {
            *slot = Some(Cue { shown, node });
        }
    }

    /// Nothing but sleeping, printing and setup.
    pub(super) fn is_quiet(&self) -> bool {
        self.unknown.is_none()
            && self.weak_arg.is_none()
            && self.train_arg.is_none()
            && self.launcher.is_none()
            && self.inference.is_none()
            && self.generate.is_none()
    }

    /// The decision the commands make on their own, if any; `who` is the sentence's subject.
    pub(super) fn decide(&self, who: &str) -> Option<Decision<'a>> {
        let runs = |c: &Cue| {
            if c.shown.starts_with('-') {
                format!("{who} passes `{}`", c.shown)
            } else {
                format!("{who} runs `{}`", c.shown)
            }
        };
        if let Some(c) = self.compile {
            return Some((
                IntentKind::Compile,
                format!("{} (ahead-of-time compilation or conversion)", runs(&c)),
                c,
            ));
        }
        if let Some(c) = self.bench {
            return Some((
                IntentKind::Benchmark,
                format!("{} (a benchmark)", runs(&c)),
                c,
            ));
        }
        if let Some(f) = self.smoke_flag {
            let reason = match self.launcher {
                Some(l) => format!("{who} runs `{}` with `{}`", l.shown, f.shown),
                None => runs(&f),
            };
            return Some((IntentKind::SmokeTest, reason, f));
        }
        // A launcher that spreads a script named for inference, generation or evaluation over the
        // GPUs runs a trained model (`torchrun generate.py --ckpt_dir …` reads its checkpoint).
        if let Some(l) = self.launcher
            && self.train_arg.is_none()
            && !self.trains_script
            && let Some(s) = self.generate.or(self.inference)
        {
            return Some((
                IntentKind::Other,
                format!(
                    "{who} runs `{}` with `{}` (inference, generation or evaluation spread over GPUs, not training)",
                    l.shown, s.shown
                ),
                s,
            ));
        }
        let arg = self.train_arg.or(self.weak_arg);
        if let Some(l) = self.launcher {
            let reason = match arg {
                Some(a) => format!("{who} runs `{}` with `{}`", l.shown, a.shown),
                None => runs(&l),
            };
            return Some((IntentKind::Training, reason, l));
        }
        if let Some(a) = self.train_arg {
            // `--epochs` or a `trainer.max_epochs=3` override: both are arguments.
            return Some((
                IntentKind::Training,
                format!("{who} passes `{}`", a.shown),
                a,
            ));
        }
        if let Some(c) = self.inference {
            return Some((
                IntentKind::Inference,
                format!("{} (a model server)", runs(&c)),
                c,
            ));
        }
        if let Some(g) = self.generate {
            return Some((
                IntentKind::Other,
                format!(
                    "{} (generation, sampling or evaluation with a trained model)",
                    runs(&g)
                ),
                g,
            ));
        }
        if let Some(s) = self.smoke
            && self.is_quiet()
        {
            let tail = if self.idle.is_some() {
                " and sleeps"
            } else {
                ""
            };
            return Some((
                IntentKind::SmokeTest,
                format!("{who} only runs `{}`{tail}", s.shown),
                s,
            ));
        }
        None
    }
}

pub(super) fn scan_container<'a>(scan: &mut Scan<'a>, c: Node<'a>) {
    let mut seg = Seg::new();
    for key in ["command", "args"] {
        for item in c.get(key).into_iter().flat_map(Node::items) {
            if let Some(text) = item.as_str() {
                feed_item(scan, text, item, &mut seg);
            }
        }
    }
}

/// What the next word of a command is, after `python -c`, `python -m` or `sh -c`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Plain,
    Code,
    Module,
    Script,
}

/// One shell command (between `;`, `&&`, `|`, newlines) as it is read.
pub(super) struct Seg<'a> {
    /// The program's base name, once seen.
    program: Option<&'a str>,
    /// The next plain word is the program (or a wrapper's program).
    at_program: bool,
    /// The previous word's base name (for pairs such as `accelerate launch`).
    prev: &'a str,
    /// The previous word was a flag that may take the next word as its value.
    expect_value: bool,
    next: Next,
    /// `echo`/`printf`: the rest is text.
    ignore_rest: bool,
}

impl Seg<'_> {
    pub(super) fn new() -> Self {
        Seg {
            program: None,
            at_program: true,
            prev: "",
            expect_value: false,
            next: Next::Plain,
            ignore_rest: false,
        }
    }
}

/// Nested `sh -c` levels worth reading.
const MAX_DEPTH: u8 = 3;

/// One exec-form item: after `python -c` or `sh -c` it is code or a script as a whole.
fn feed_item<'a>(scan: &mut Scan<'a>, text: &'a str, node: Node<'a>, seg: &mut Seg<'a>) {
    match seg.next {
        Next::Code => {
            seg.next = Next::Plain;
            seg.expect_value = false;
            code(scan, text, node);
        }
        Next::Script => {
            seg.next = Next::Plain;
            seg.expect_value = false;
            feed_str(scan, text, node, &mut Seg::new(), 1);
        }
        _ => feed_str(scan, text, node, seg, 0),
    }
}

pub(super) fn feed_str<'a>(
    scan: &mut Scan<'a>,
    text: &'a str,
    node: Node<'a>,
    seg: &mut Seg<'a>,
    depth: u8,
) {
    // A script written inline (`cat <<'EOF' > train.py … EOF`) is data, not commands: its body
    // is not read word by word, and what it does is judged by its body, not its name.
    let docs = heredocs(text);
    let mut from = 0;
    for (body, target) in docs {
        if let Some(name) = target {
            scan.inline
                .push((basename(name), trains(&text[body.clone()])));
        }
        feed_part(scan, &text[from..body.start], node, seg, depth);
        *seg = Seg::new();
        from = body.end;
    }
    feed_part(scan, &text[from..], node, seg, depth);
}

fn feed_part<'a>(scan: &mut Scan<'a>, text: &'a str, node: Node<'a>, seg: &mut Seg<'a>, depth: u8) {
    for tok in lex(text) {
        match tok {
            Tok::Sep => *seg = Seg::new(),
            Tok::Word(w) => word(scan, w, node, seg, depth),
        }
    }
}

/// The here-documents of a shell script: each body's byte range (from the line after `<<WORD`
/// to its closing line, inclusive) and the file it is redirected to (`> train.py`), if any.
fn heredocs(text: &str) -> Vec<(std::ops::Range<usize>, Option<&str>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = text[at..].find("<<") {
        let open = at + i;
        let line_end = text[open..].find('\n').map_or(text.len(), |k| open + k);
        let head = &text[open + 2..line_end];
        let head = head.strip_prefix('-').unwrap_or(head).trim_start();
        let delim: String = head
            .trim_start_matches(['\'', '"'])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if delim.is_empty() || line_end >= text.len() {
            at = open + 2;
            continue;
        }
        let target = head
            .split_once('>')
            .and_then(|(_, t)| t.split_whitespace().next())
            .map(|t| t.trim_matches(['\'', '"']));
        let body_start = line_end + 1;
        let mut pos = body_start;
        let mut end = text.len();
        while pos < text.len() {
            let next = text[pos..].find('\n').map_or(text.len(), |k| pos + k);
            if text[pos..next].trim() == delim {
                end = next;
                break;
            }
            pos = next + 1;
        }
        out.push((body_start..end, target));
        at = end;
    }
    out
}

/// Whether the source of a script shows it trains: an optimizer, a loss, gradients, epochs,
/// a trainer or checkpoints (not the word "training" in a comment, nor its file name).
fn trains(source: &str) -> bool {
    [
        "optimizer",
        "optim.",
        "optax",
        "backward(",
        "value_and_grad",
        "jax.grad",
        "loss",
        "epoch",
        "train_step",
        "trainer",
        "learning_rate",
        "checkpoint",
        ".fit(",
    ]
    .iter()
    .any(|m| contains_ci(source, m))
}

fn word<'a>(scan: &mut Scan<'a>, w: &'a str, node: Node<'a>, seg: &mut Seg<'a>, depth: u8) {
    if w.is_empty() || seg.ignore_rest {
        return;
    }
    match std::mem::replace(&mut seg.next, Next::Plain) {
        Next::Code => {
            seg.expect_value = false;
            code(scan, w, node);
            return;
        }
        Next::Script => {
            seg.expect_value = false;
            if depth < MAX_DEPTH {
                feed_str(scan, w, node, &mut Seg::new(), depth + 1);
            }
            return;
        }
        Next::Module => {
            seg.expect_value = false;
            seg.at_program = false;
            module(scan, w, node);
            seg.prev = w;
            return;
        }
        Next::Plain => {}
    }
    let is_flag = w.len() > 1
        && w.starts_with('-')
        && !w[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if is_flag {
        let name = w.split_once('=').map_or(w, |(k, _)| k);
        flag(scan, name, node);
        seg.expect_value = !w.contains('=');
        if let Some(p) = seg.program {
            if is_python(p) && w == "-c" {
                seg.next = Next::Code;
            } else if is_python(p) && w == "-m" {
                seg.next = Next::Module;
            } else if is_shell(p) && !w.starts_with("--") && w.contains('c') {
                seg.next = Next::Script;
            }
        }
        return;
    }
    if let Some((k, _)) = w.split_once('=')
        && !k.is_empty()
        && !k.contains('/')
    {
        // `NCCL_DEBUG=INFO torchrun …` before the program; `trainer.max_epochs=3` after it.
        if !(seg.at_program && is_env_name(k)) {
            override_key(scan, k, node);
        }
        seg.expect_value = false;
        return;
    }
    let was_value = std::mem::take(&mut seg.expect_value);
    let base = basename(w);
    let prev = std::mem::replace(&mut seg.prev, base);
    if let Some((sort, shown)) = pair_signal(prev, base) {
        scan.note(sort, shown, node);
        seg.at_program = false;
        return;
    }
    if let Some(sort) = program_signal(base) {
        scan.note(sort, base, node);
        if seg.at_program {
            seg.program = Some(base);
            seg.at_program = false;
        }
        return;
    }
    if is_script(base) {
        let inline = scan
            .inline
            .iter()
            .find(|(n, _)| *n == base)
            .map(|(_, t)| *t);
        let sort = match inline {
            // Written above in the same script: its body says whether it trains.
            Some(true) => Sort::Launcher,
            Some(false) => Sort::Unknown,
            None => script_signal(base).unwrap_or(Sort::Unknown),
        };
        scan.trains_script |= matches!(sort, Sort::Launcher);
        scan.note(sort, base, node);
        if seg.at_program {
            seg.program = Some(base);
            seg.at_program = false;
        }
        return;
    }
    if was_value || !seg.at_program {
        // A flag's value or a program's positional argument.
        return;
    }
    if base.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        // `timeout 3600 python …`
        return;
    }
    seg.program = Some(base);
    let lower_is = |names: &[&str]| names.iter().any(|n| base.eq_ignore_ascii_case(n));
    if lower_is(&["sleep", "tail"]) {
        scan.note(Sort::Idle, w, node);
        seg.at_program = false;
    } else if lower_is(&["echo", "printf"]) {
        seg.ignore_rest = true;
    } else if is_python(base) || is_shell(base) || lower_is(WRAPPERS) {
        // The program they run comes next.
    } else {
        seg.at_program = false;
        if !lower_is(TRIVIAL) {
            scan.note(Sort::Unknown, w, node);
        }
    }
}

/// Programs that run the next word as the program.
const WRAPPERS: &[&str] = &[
    "exec", "time", "env", "nohup", "sudo", "timeout", "numactl", "taskset", "stdbuf", "mpirun",
    "mpiexec", "srun", "while", "until", "if", "then", "else", "do", "!",
];

/// Programs that do no GPU work of their own: shell control, printing, setup.
const TRIVIAL: &[&str] = &[
    "true", "false", "exit", "set", "export", "cd", "ls", "cat", "date", "hostname", "printenv",
    "wait", "trap", ":", "for", "in", "done", "fi", "elif", "[", "[[", "test", "pip", "pip3",
    "apt-get", "apt", "yum", "dnf", "conda", "mkdir", "cp", "mv", "rm", "ln", "chmod", "chown",
    "source", ".", "git", "wget", "curl", "ulimit", "id", "whoami", "df", "free", "nproc",
];

fn is_python(base: &str) -> bool {
    starts_ci(base, "python")
}

fn is_shell(base: &str) -> bool {
    ["sh", "bash", "zsh", "dash", "ash"]
        .iter()
        .any(|s| base.eq_ignore_ascii_case(s))
}

fn is_env_name(k: &str) -> bool {
    k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !k.starts_with(|c: char| c.is_ascii_digit())
}

fn is_script(base: &str) -> bool {
    [".py", ".sh", ".bash", ".ipynb"]
        .iter()
        .any(|ext| ends_ci(base, ext))
}

fn module<'a>(scan: &mut Scan<'a>, m: &'a str, node: Node<'a>) {
    let sort = if m.eq_ignore_ascii_case("torch.distributed.run")
        || m.eq_ignore_ascii_case("torch.distributed.launch")
    {
        Sort::Launcher
    } else if ["vllm.entrypoints", "launch_server", "api_server"]
        .iter()
        .any(|s| contains_ci(m, s))
    {
        Sort::Inference
    } else if ["pip", "ensurepip", "venv", "http.server"]
        .iter()
        .any(|s| m.eq_ignore_ascii_case(s))
    {
        // Setup, not work: `python -m pip install … && nvidia-smi` is still a smoke test.
        return;
    } else {
        script_signal(m).unwrap_or(Sort::Unknown)
    };
    scan.trains_script |= matches!(sort, Sort::Launcher) && is_training_word(m);
    scan.note(sort, m, node);
}

/// Inline Python after `python -c`.
fn code<'a>(scan: &mut Scan<'a>, code: &'a str, node: Node<'a>) {
    let sort = if contains_ci(code, "torch.compile") {
        Sort::Compile
    } else if [
        "cuda.is_available",
        "device_count",
        "get_device_name",
        "nvidia-smi",
    ]
    .iter()
    .any(|s| contains_ci(code, s))
    {
        Sort::Smoke
    } else {
        Sort::Unknown
    };
    let shown = if code.len() <= 60 {
        code
    } else {
        "python -c …"
    };
    scan.note(sort, shown, node);
}

/// A `--flag` (name without its `=value`).
fn flag<'a>(scan: &mut Scan<'a>, name: &'a str, node: Node<'a>) {
    let key = name.trim_start_matches('-');
    if let Some(sort) = key_sort(key) {
        scan.note(sort, name, node);
    }
}

/// A `key=value` override after the program (Hydra, NeMo, Lightning): `trainer.max_epochs=3`.
fn override_key<'a>(scan: &mut Scan<'a>, key: &'a str, node: Node<'a>) {
    if starts_ci(key, "trainer.") {
        scan.note(Sort::TrainArg, key, node);
        return;
    }
    let last = key.rsplit('.').next().unwrap_or(key);
    if let Some(sort @ (Sort::TrainArg | Sort::WeakArg)) = key_sort(last) {
        scan.note(sort, key, node);
    }
}
