use super::Ctx;
use crate::diag::{Diagnostic, Loc, Severity};
use crate::model::dra::{self, Devices};
use crate::model::kinds::{Family, family};
use crate::model::{Container, Object, PodTemplate, is_gpu_resource};
use crate::yaml::Node;

mod command;
use command::{
    Server, backgrounds, commands, describe, entrypoint_server, placed_elsewhere, server_in,
};

declare_rule! {
    /// ## What it does
    /// Flags a vLLM or SGLang model server whose parallel sizes ask for a different number of
    /// GPUs than its container has. Read from the container's command and arguments (`sh -c`
    /// scripts included): `vllm serve`, `python -m vllm.entrypoints.openai.api_server` (and the
    /// `vllm/vllm-openai` image, whose entrypoint is the server), `python -m sglang.launch_server`
    /// and `sglang serve`, with `--tensor-parallel-size`/`-tp`, `--pipeline-parallel-size`/`-pp`
    /// and `--data-parallel-size`/`-dp` (SGLang also `--tp-size`/`--tp`, `--pp-size`,
    /// `--dp-size`/`--dp`; with `--enable-dp-attention` its data-parallel ranks share the
    /// tensor-parallel GPUs). The server needs tensor × pipeline × data parallel GPUs; the
    /// container has its `nvidia.com/gpu` limit, or the devices of the DRA claims it uses
    /// (`resources.claims`; a request's `count`, 1 by default; not judged when a claim asks
    /// `allocationMode: All` or the container also has GPU resources).
    ///
    /// Only what is certain is judged: nothing when a size is a variable, a placeholder or a
    /// template, when arguments may come from a variable (`$EXTRA_ARGS`, `"$@"`) or a
    /// `--config` file, when a flag is one the rule does not know the effect of (context or
    /// expert parallel sizes, abbreviations), when the script runs more than one server or
    /// anything in the background, or when it picks GPUs itself (`CUDA_VISIBLE_DEVICES`,
    /// `--base-gpu-id`). Multi-node servers legitimately span more GPUs than one pod has and are
    /// left alone: LeaderWorkerSet and Ray workloads, anything mentioning Ray
    /// (`--distributed-executor-backend ray`, `ray start`, `RAY_ADDRESS`), `--nnodes` other than
    /// 1, `--node-rank` other than 0, `--headless`, `--dist-init-addr` and vLLM's multi-node
    /// data-parallel flags. Nor is an `nvidia.com/gpu` limit that may count replicas of a shared
    /// GPU: the device plugin time-slices or MPS-shares GPUs under that name (a configuration in
    /// a ConfigMap, the GPU operator's or the plugin chart's values, a values file of the plugin
    /// chart) on a pool the server lands on, or anywhere when it lands on no pool in view.
    ///
    /// ## Why is this bad?
    /// Each rank drives one GPU. A server with more ranks than GPUs cannot place them and fails
    /// at start (an error, unless the container may see more GPUs than its limit: `envFrom`, a
    /// privileged container); with fewer ranks than GPUs the rest sit idle and are paid for as
    /// long as it runs: `--tensor-parallel-size 4` on 8 GPUs of a p5.48xlarge wastes half of it.
    ///
    /// ## Example
    /// ```yaml
    /// containers:
    ///   - name: vllm
    ///     image: vllm/vllm-openai:v0.9.0
    ///     args: [--model, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "4"]
    ///     resources:
    ///       limits: {nvidia.com/gpu: 8}
    /// ```
    ///
    /// ## Fix
    /// Make them agree: set the GPU limit to tensor × pipeline × data parallel sizes, or the
    /// sizes to the GPUs (`--data-parallel-size 2` runs a second copy of the model on the idle
    /// half). A model too large for one node's GPUs needs a multi-node server (LeaderWorkerSet,
    /// Ray).
    name: "gpu-count-mismatch-parallelism",
    category: "resources",
    kinds: &["pod templates"],
    severity: Warning,
    summary: "a vLLM or SGLang server's parallel sizes differ from the GPUs its container has",
    check: check,
    chunked: true,
}

/// The GPU resource the sizes are compared with.
const GPU: &str = "nvidia.com/gpu";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    Vllm,
    Sglang,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Vllm => "vLLM",
            Engine::Sglang => "SGLang",
        }
    }
    /// The flags that set the tensor and data parallel sizes, for advice.
    fn flags(self) -> (&'static str, &'static str) {
        match self {
            Engine::Vllm => ("--tensor-parallel-size", "--data-parallel-size"),
            Engine::Sglang => ("--tp-size", "--dp-size"),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Size {
    Tensor,
    Pipeline,
    Data,
}

/// What a server flag does to the GPU count.
enum Class {
    Size(Size),
    /// SGLang `--enable-dp-attention`: data-parallel ranks run within the tensor-parallel ones.
    DpAttention,
    /// vLLM `--distributed-executor-backend`: one process per rank on this node (`mp`, `uni`) or
    /// Ray, which may place ranks on other nodes.
    Backend,
    /// `--nnodes`: 1 is one node, more span nodes.
    Nodes,
    /// `--node-rank`: 0 alone is one node.
    NodeRank,
    /// Changes the count in ways not judged here, spans nodes, or may be an abbreviation.
    Unknown,
    /// Nothing to do with the count.
    Other,
}

/// Long flags whose abbreviations argparse accepts: a word that is a strict prefix of one is
/// read as it.
const ABBREVIATED: &[&str] = &[
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--data-parallel-size",
    "--decode-context-parallel-size",
    "--prefill-context-parallel-size",
    "--distributed-executor-backend",
    "--tp-size",
    "--pp-size",
    "--dp-size",
    "--nnodes",
    "--node-rank",
    "--config",
];

/// Whether a flag name (dashes alike) speaks of parallelism or placement: parallel sizes and
/// groups not judged here, Ray.
fn speaks_of_parallelism(name: &str) -> bool {
    name.contains("parallel")
        || name.trim_start_matches('-').split(['-', '_']).any(|t| {
            matches!(
                t,
                "tp" | "pp" | "dp" | "cp" | "dcp" | "pcp" | "ep" | "sp" | "ray" | "nnodes"
            )
        })
}

fn classify(engine: Engine, name: &str) -> Class {
    if name.contains(['$', '{', '`']) {
        return Class::Unknown;
    }
    if !name.starts_with("--") {
        let short = &name[1..];
        return match (engine, short) {
            (Engine::Vllm, "tp") => Class::Size(Size::Tensor),
            (Engine::Vllm, "pp") => Class::Size(Size::Pipeline),
            (Engine::Vllm, "dp") => Class::Size(Size::Data),
            (Engine::Vllm, "n") => Class::Nodes,
            (Engine::Vllm, "r") => Class::NodeRank,
            (Engine::Vllm, "ep") => Class::Other,
            // `-dpl`, `-pcp`, `-t` (an abbreviation of `-tp`), …
            _ if short.starts_with(['t', 'p', 'd', 'c', 'n', 'r']) => Class::Unknown,
            _ => Class::Other,
        };
    }
    // vLLM reads `--tensor_parallel_size` as `--tensor-parallel-size`; argparse in SGLang does
    // not, and stops.
    let normal = name.replace('_', "-");
    let name = match engine {
        Engine::Vllm => normal.as_str(),
        Engine::Sglang if normal != name && speaks_of_parallelism(&normal) => {
            return Class::Unknown;
        }
        Engine::Sglang => name,
    };
    let known = match (engine, name) {
        (_, "--tensor-parallel-size") => Some(Class::Size(Size::Tensor)),
        (_, "--pipeline-parallel-size") => Some(Class::Size(Size::Pipeline)),
        (_, "--data-parallel-size") => Some(Class::Size(Size::Data)),
        (_, "--nnodes") => Some(Class::Nodes),
        (_, "--node-rank") => Some(Class::NodeRank),
        (_, "--config" | "--headless" | "--master-addr" | "--master-port") => Some(Class::Unknown),
        (Engine::Vllm, "--distributed-executor-backend") => Some(Class::Backend),
        (Engine::Vllm, "--enable-expert-parallel" | "--max-parallel-loading-workers") => {
            Some(Class::Other)
        }
        (Engine::Vllm, n) if n.starts_with("--data-parallel-") => Some(Class::Unknown),
        // vLLM-Omni: a stage config places each stage of the model on devices of its own.
        (Engine::Vllm, "--omni" | "--stage-configs-path") => Some(Class::Unknown),
        (Engine::Sglang, "--tp-size" | "--tp") => Some(Class::Size(Size::Tensor)),
        (Engine::Sglang, "--pp-size") => Some(Class::Size(Size::Pipeline)),
        (Engine::Sglang, "--dp-size" | "--dp") => Some(Class::Size(Size::Data)),
        (Engine::Sglang, "--enable-dp-attention") => Some(Class::DpAttention),
        (
            Engine::Sglang,
            "--dist-init-addr" | "--nccl-init-addr" | "--base-gpu-id" | "--gpu-id-step",
        ) => Some(Class::Unknown),
        _ => None,
    };
    if let Some(k) = known {
        return k;
    }
    if speaks_of_parallelism(name)
        || ABBREVIATED
            .iter()
            .any(|full| full.len() > name.len() && full.starts_with(name))
    {
        return Class::Unknown;
    }
    Class::Other
}

/// A parallel size and where it is written.
struct Claim<'a> {
    size: Size,
    n: u64,
    /// The flag as written.
    flag: &'a str,
    loc: Loc,
}

/// What a server's arguments say, when everything that bears on its GPU count is certain.
struct Sizes<'a> {
    claims: Vec<Claim<'a>>,
    dp_attention: bool,
}

impl Sizes<'_> {
    fn claim(&self, size: Size) -> Option<&Claim<'_>> {
        // argparse keeps the last value given.
        self.claims.iter().rev().find(|c| c.size == size)
    }
    fn of(&self, size: Size) -> u64 {
        self.claim(size).map_or(1, |c| c.n)
    }
    /// Whether a size multiplies the GPUs.
    fn counts(&self, engine: Engine, size: Size) -> bool {
        !(engine == Engine::Sglang && size == Size::Data && self.dp_attention)
    }
    fn ranks(&self, engine: Engine) -> u64 {
        [Size::Tensor, Size::Pipeline, Size::Data]
            .into_iter()
            .filter(|&s| self.counts(engine, s))
            .map(|s| self.of(s))
            .fold(1, u64::saturating_mul)
    }
}

/// A value that is not literal: a variable, a command substitution, a template.
fn is_dynamic(w: &str) -> bool {
    w.contains(['$', '`']) || w.contains("{{")
}

/// A variable that likely holds several arguments (`$EXTRA_ARGS`, `"$@"`).
fn holds_arguments(w: &str) -> bool {
    let upper = w.to_ascii_uppercase();
    w.contains("$@")
        || w.contains("$*")
        || ["ARGS", "OPTS", "OPTIONS", "FLAGS", "PARAMS", "EXTRA"]
            .iter()
            .any(|n| upper.contains(n))
}

fn unquote(v: &str) -> &str {
    v.trim_matches(|c| c == '"' || c == '\'')
}

fn read_sizes<'a>(cx: &Ctx, t: &PodTemplate, server: &Server<'a>) -> Option<Sizes<'a>> {
    let args = &server.args;
    let mut sizes = Sizes {
        claims: Vec::new(),
        dp_attention: false,
    };
    let mut i = 0;
    // Whether the previous word was a flag that may take the next word as its value.
    let mut open_flag = false;
    while let Some(&w) = args.get(i) {
        i += 1;
        let text = w.text;
        if text.contains("{{") {
            return None;
        }
        let is_flag = text.len() > 1
            && text.starts_with('-')
            && !text[1..].starts_with(|c: char| c.is_ascii_digit());
        if !is_flag {
            // A variable is a flag's value or the model right after `serve`; anywhere else it
            // may hold flags.
            if is_dynamic(text) && (holds_arguments(text) || !(open_flag || i == 1)) {
                return None;
            }
            open_flag = false;
            continue;
        }
        // An exec-form item is one argument: a flag with a space in it is no flag argparse
        // knows, and the server stops on it.
        if !w.script && text.contains(char::is_whitespace) {
            return None;
        }
        let (name, inline) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        let class = classify(server.engine, name);
        if matches!(class, Class::Other) {
            open_flag = inline.is_none();
            continue;
        }
        open_flag = false;
        if matches!(class, Class::Unknown) {
            return None;
        }
        if matches!(class, Class::DpAttention) {
            sizes.dp_attention = true;
            continue;
        }
        // The value: after `=`, else the next word.
        let (value, vword) = match inline {
            Some(v) => (v, w),
            None => {
                let next = *args.get(i)?;
                i += 1;
                (next.text, next)
            }
        };
        // Look for the value after its flag when both are in one scalar.
        let after = (inline.is_some() || w.script).then_some(name);
        let v = unquote(value);
        match class {
            Class::Backend if matches!(v, "mp" | "uni") => {}
            Class::Nodes if v == "1" => {}
            Class::NodeRank if v == "0" => {}
            Class::Size(size) => {
                let n = v.parse::<u64>().ok().filter(|&n| n > 0)?;
                sizes.claims.push(Claim {
                    size,
                    n,
                    flag: name,
                    loc: cx.within(t.file, vword.node, v, after),
                });
            }
            _ => return None,
        }
    }
    Some(sizes)
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    let ix = cx.ix;
    for (ti, t) in cx.templates() {
        if !t.requests_gpu() {
            continue;
        }
        let owner = ix.owner(t);
        // Multi-node servers: one pod holds part of the ranks.
        if matches!(family(owner), Some(Family::LeaderWorkerSet | Family::Ray)) {
            continue;
        }
        for c in t
            .containers
            .iter()
            .filter(|c| !c.init && (c.requests_gpu() || !t.container_dra_gpus(c).is_empty()))
        {
            if let Some(d) = judge(cx, owner, ti, t, c) {
                out.push(d);
            }
        }
    }
}

/// Whether the template's `nvidia.com/gpu` may be replicas of a shared GPU: a pool it lands on
/// shares GPUs under that name, or, where it lands on no pool in view, some configuration does.
fn shared(cx: &Ctx, ti: usize) -> bool {
    let setup = cx.ix.gpu_setup();
    if !setup.shares_whole_gpus() {
        return false;
    }
    let pools = cx.ix.landing_pools(ti);
    pools.is_empty()
        || pools.iter().any(|&p| {
            setup
                .per_gpu(&cx.ix.nodepools[p], GPU)
                .is_some_and(|n| n > 1)
        })
}

/// A container's GPUs and where they are set: its `nvidia.com/gpu` limit, or the DRA claims it
/// uses (when those are all it has).
struct Gpus {
    n: u64,
    loc: Loc,
    /// `8 \`nvidia.com/gpu\``, `8 GPUs from its DRA claims`.
    shown: String,
    /// What to change to fix the count.
    setting: String,
    /// The note at `loc`.
    note: String,
}

/// The one vLLM or SGLang server a container runs and its parallel sizes, when both are certain
/// and its ranks run in this container alone.
fn server_of<'a>(cx: &Ctx, t: &PodTemplate, c: &Container<'a>) -> Option<(Server<'a>, Sizes<'a>)> {
    let env_names: Vec<&str> = c
        .get("env")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|e| e.get("name").and_then(Node::as_str))
        .collect();
    if env_names.iter().any(|n| placed_elsewhere(n)) {
        return None;
    }
    let (cmds, script) = commands(c);
    if cmds.iter().flatten().any(|w| placed_elsewhere(w.text)) || script.is_some_and(backgrounds) {
        return None;
    }
    let mut servers = cmds.iter().filter_map(|cmd| server_in(cmd));
    let server = match (servers.next(), servers.next()) {
        (Some(s), None) => s,
        (None, _) => entrypoint_server(c, &cmds[0])?,
        (Some(_), Some(_)) => return None,
    };
    let sizes = read_sizes(cx, t, &server)?;
    Some((server, sizes))
}

/// A server's ranks in one container, for rules about what many ranks need.
pub(super) struct LocalRanks {
    pub(super) engine: &'static str,
    pub(super) ranks: u64,
    /// The sizes that make the ranks, as written (`` `--tensor-parallel-size 4` ``).
    pub(super) formula: String,
    /// Where the first of them is written, else where the server is named.
    pub(super) at: Loc,
}

/// The ranks of the vLLM or SGLang server a container runs, when certain.
pub(super) fn local_ranks(cx: &Ctx, t: &PodTemplate, c: &Container) -> Option<LocalRanks> {
    let (server, sizes) = server_of(cx, t, c)?;
    let engine = server.engine;
    let counted: Vec<&Claim> = [Size::Tensor, Size::Pipeline, Size::Data]
        .into_iter()
        .filter(|&s| sizes.counts(engine, s))
        .filter_map(|s| sizes.claim(s))
        .collect();
    Some(LocalRanks {
        engine: engine.name(),
        ranks: sizes.ranks(engine),
        formula: counted
            .iter()
            .map(|c| format!("`{} {}`", c.flag, c.n))
            .collect::<Vec<_>>()
            .join(" × "),
        at: match counted.first() {
            Some(first) => first.loc,
            None => cx.within(t.file, server.named, server.shown, server.after),
        },
    })
}

fn gpus_of(cx: &Ctx, ti: usize, t: &PodTemplate, c: &Container) -> Option<Gpus> {
    let claims = t.container_dra_gpus(c);
    if claims.is_empty() {
        let (limit, n) = c.whole_limit(GPU)?;
        if c.accelerators()
            .iter()
            .any(|(name, _)| is_gpu_resource(name) && *name != GPU)
        {
            return None;
        }
        // Time-sliced or MPS-shared GPUs advertised as `nvidia.com/gpu`: the limit counts
        // replicas, and several of one GPU is a way to keep other pods off it.
        if shared(cx, ti) {
            return None;
        }
        return Some(Gpus {
            n,
            loc: t.loc(limit),
            shown: format!("{n} `{GPU}`"),
            setting: format!("the `{GPU}` limit"),
            note: format!("its `{GPU}` limit: {n}"),
        });
    }
    // GPUs from claims and from resources together, or of unknown count: not judged.
    if c.requests_gpu() {
        return None;
    }
    let Some(Devices::Known(n)) = dra::devices(claims.iter().copied()) else {
        return None;
    };
    let first = claims.first()?;
    let claim = cx.ix.objects.get(first.source)?;
    Some(Gpus {
        n,
        loc: claim.loc(first.class_node),
        shown: format!(
            "{n} GPU{} from its DRA claims",
            if n == 1 { "" } else { "s" }
        ),
        setting: if claims.len() == 1 {
            format!("the `count` of the request in {}", claim.describe())
        } else {
            "the `count` of the requests in its claims".to_string()
        },
        note: format!(
            "{} gives it {} `{}` device{}",
            claim.describe(),
            first.count.unwrap_or(0),
            first.class,
            if first.count == Some(1) { "" } else { "s" }
        ),
    })
}

fn judge(
    cx: &Ctx,
    owner: &Object,
    ti: usize,
    t: &PodTemplate,
    c: &Container,
) -> Option<Diagnostic> {
    let source = gpus_of(cx, ti, t, c)?;
    let gpus = source.n;
    let (server, sizes) = server_of(cx, t, c)?;
    let engine = server.engine;
    let ranks = sizes.ranks(engine);
    if ranks == gpus {
        return None;
    }
    let counted: Vec<&Claim> = [Size::Tensor, Size::Pipeline, Size::Data]
        .into_iter()
        .filter(|&s| sizes.counts(engine, s))
        .filter_map(|s| sizes.claim(s))
        .collect();
    let mut formula = if counted.is_empty() {
        "no parallel size is set".to_string()
    } else {
        counted
            .iter()
            .map(|c| format!("`{} {}`", c.flag, c.n))
            .collect::<Vec<_>>()
            .join(" × ")
    };
    if !sizes.counts(engine, Size::Data)
        && let Some(dp) = sizes.claim(Size::Data)
    {
        formula.push_str(&format!(
            "; with `--enable-dp-attention` its `{} {}` ranks share them",
            dp.flag, dp.n
        ));
    }
    let name = c.name.unwrap_or("<unnamed>");
    let of = describe(owner, t);
    let s = |n: u64| if n == 1 { "" } else { "s" };
    let (tp_flag, dp_flag) = engine.flags();
    let (message, help, severity) = if ranks < gpus {
        let idle = gpus - ranks;
        (
            format!(
                "{} runs on {ranks} GPU{} ({formula}) but container `{name}` of {of} has {}: {idle} {} idle, paid for as long as it runs",
                engine.name(),
                s(ranks),
                source.shown,
                if idle == 1 { "GPU sits" } else { "GPUs sit" },
            ),
            format!(
                "set {} to {ranks}, or make the parallel sizes come to {gpus} (`{tp_flag}`{})",
                source.setting,
                if sizes.counts(engine, Size::Data) {
                    format!(", or `{dp_flag}` for more copies of the model")
                } else {
                    String::new()
                }
            ),
            Severity::Warning,
        )
    } else {
        // The container may see more GPUs than its limit: through variables `envFrom` may set
        // (`NVIDIA_VISIBLE_DEVICES`), or as a privileged container.
        let privileged = c
            .get("securityContext")
            .and_then(|s| s.get("privileged"))
            .and_then(Node::as_str)
            == Some("true");
        let unless = if privileged {
            ", unless it sees the node's GPUs as a privileged container"
        } else if c.get("envFrom").is_some() {
            ", unless its `envFrom` makes more GPUs visible to it"
        } else {
            ""
        };
        (
            format!(
                "{} runs {ranks} ranks of one GPU each ({formula}) but container `{name}` of {of} has {}: it cannot place them on the GPU{} it sees and fails at start{unless}",
                engine.name(),
                source.shown,
                s(gpus),
            ),
            format!(
                "set {} to {ranks} (on an instance type with that many GPUs), or make the parallel sizes come to {gpus}; a model too large for one node's GPUs needs a multi-node server (LeaderWorkerSet, Ray)",
                source.setting
            ),
            if unless.is_empty() {
                Severity::Error
            } else {
                Severity::Warning
            },
        )
    };
    let at = match counted.first() {
        Some(first) => first.loc,
        None => cx.within(t.file, server.named, server.shown, server.after),
    };
    let mut d = cx
        .at(at, message)
        .with_severity(severity)
        .object(Some(owner.obj_ref()))
        .help(help);
    for other in counted.iter().skip(1) {
        d = d.related(other.loc, format!("`{}` {}", other.flag, other.n));
    }
    Some(d.related(source.loc, source.note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_jobs_are_told_from_and_lists_and_redirections() {
        assert!(backgrounds("python3 embedder.py & vllm serve m"));
        assert!(backgrounds("vllm serve m &\nwait"));
        for s in ["a && b", "a 2>&1 | tee log", "a &> log", "a >& log"] {
            assert!(!backgrounds(s), "{s}");
        }
    }

    #[test]
    fn flags_whose_effect_is_not_judged() {
        use Engine::{Sglang, Vllm};
        for (engine, flag) in [
            (Vllm, "--tensor-parallel"),
            (Vllm, "--tp"),
            (Vllm, "-t"),
            (Vllm, "-dpl"),
            (Vllm, "--data-parallel-size-local"),
            (Vllm, "--decode-context-parallel-size"),
            (Vllm, "--omni"),
            (Vllm, "--stage-configs-path"),
            (Vllm, "--$(FLAG)"),
            (Sglang, "--pp"),
            (Sglang, "--tp_size"),
            (Sglang, "--ep-size"),
            (Sglang, "--dist-init-addr"),
        ] {
            assert!(matches!(classify(engine, flag), Class::Unknown), "{flag}");
        }
        assert!(matches!(
            classify(Vllm, "--tensor_parallel_size"),
            Class::Size(Size::Tensor)
        ));
        assert!(matches!(
            classify(Sglang, "--tp"),
            Class::Size(Size::Tensor)
        ));
        for flag in [
            "--max-model-len",
            "--enable-expert-parallel",
            "-q",
            "--gpu-memory-utilization",
        ] {
            assert!(matches!(classify(Vllm, flag), Class::Other), "{flag}");
        }
    }
}
