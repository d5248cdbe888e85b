use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use cli::cache::cache;
use cli::context::context_pull;
use cli::cost::cost;
use cli::lint::lint;
use cli::man::man;
use cli::output::print;
use cli::policy::{listing_policies, policy_test};
use cli::render::render;
use cli::rule_name::RuleName;
use cli::why::why;
use gpuops::report::{self, Format, OutputFile};
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;

// Parsing, indexing and policy input allocate millions of small values; with mimalloc a
// 10,000-file lint takes about 15 % less time than with glibc's allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "gpuops",
    version,
    about = "Lint and render GPU platform manifests for Kubernetes (Karpenter, Kueue)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lint a GitOps repository (default: the current directory). `-` reads YAML from stdin.
    Lint(LintArgs),
    /// Worst-case $/h of the GPU capacity: NodePools at their limits, ClusterQueues at their GPU
    /// quota, teams, total (on-demand and spot).
    Cost(CostArgs),
    /// Why is a pod Pending? Where an object's pods may land (NodePools, Kueue route, instance
    /// types) and what stops them.
    Why(WhyArgs),
    /// List the rules: name, category, default severity, summary (policies included).
    Rules {
        /// Print the rule reference as Markdown instead (`gpuops rules --markdown > docs/rules.md`).
        #[arg(long)]
        markdown: bool,
        /// Also list the policies in this directory (repeatable).
        #[arg(long = "policy", value_name = "DIR")]
        policy: Vec<PathBuf>,
    },
    /// Explain one rule.
    Rule {
        /// Rule name, e.g. gpu-toleration-missing or policy/team-label-missing.
        #[arg(value_parser = RuleName, hide_possible_values = true)]
        name: String,
        /// Also look among the policies in this directory (repeatable).
        #[arg(long = "policy", value_name = "DIR")]
        policy: Vec<PathBuf>,
    },
    /// Rego policies: the bundled pack and user directories.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Cluster context: the objects a cluster already has, for `lint --context`.
    Context {
        #[command(subcommand)]
        command: ContextCommand,
    },
    /// Print a commented starting platform profile (`gpuops init > platform.yaml`).
    Init,
    /// Render a platform profile into Karpenter, Kueue and Kubernetes manifests.
    Render(RenderArgs),
    /// Print a JSON schema (`gpuops schema profile > platform.schema.json`) for editors.
    Schema {
        /// Which schema.
        #[arg(value_enum)]
        what: SchemaKind,
    },
    /// Print a shell completion script, e.g. `gpuops completions zsh > ~/.zfunc/_gpuops`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The cache of built kustomizations and rendered charts (`GPUOPS_CACHE_DIR`, else the
    /// user's cache directory).
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
    /// Print the man page (`gpuops man | man -l -`), or write one page per command into DIR.
    Man {
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum PolicyCommand {
    /// Run the Rego unit tests (`test_*` rules) of the bundled pack and of policy directories
    /// (default: the config's `policies:`); exit 1 when one fails.
    Test {
        /// Policy directories (`*.rego`, tests in `*_test.rego`).
        dirs: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Print the cache directory.
    Dir,
    /// Remove every cached build.
    Clean,
}

#[derive(Subcommand)]
enum ContextCommand {
    /// Read the cluster's NodePools, node classes, Kueue objects, PriorityClasses, CRDs, Nodes
    /// and GPU operator policy (GET requests only) into one `kind: List` YAML file.
    Pull(PullArgs),
}

#[derive(clap::Args)]
struct PullArgs {
    /// Write the context into FILE, replaced whole at the end; without it, to stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    kube: KubeArgs,
}

/// Which cluster to read and how long to wait: `context pull` and `--live`.
#[derive(clap::Args, Clone, Default)]
struct KubeArgs {
    /// The kubeconfig (default: KUBECONFIG, else ~/.kube/config, else the pod's service account).
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, value_name = "NAME")]
    kube_context: Option<String>,
    /// Time limit of the whole pull, in seconds [default: 30].
    #[arg(long, value_name = "SECS", value_parser = cli::context::parse_secs)]
    timeout: Option<std::time::Duration>,
    /// Time limit of one request (connecting, each wait for an answer), in seconds [default: 10].
    #[arg(long, value_name = "SECS", value_parser = cli::context::parse_secs)]
    request_timeout: Option<std::time::Duration>,
    /// The namespace of Argo CD's cluster Secrets (their names, servers and labels are read,
    /// never their credentials) [default: argocd].
    #[arg(long, value_name = "NS")]
    argocd_namespace: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaKind {
    /// The platform profile that `gpuops render` reads.
    Profile,
}

#[derive(clap::Args)]
struct RenderArgs {
    /// The platform profile (YAML, `apiVersion: gpuops.dev/v1alpha1`, `kind: Platform`).
    profile: PathBuf,
    /// Write the manifests into this directory (`<kind-plural>/<name>.yaml`); without it, one YAML
    /// stream goes to stdout.
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Compare with DIR instead of writing: print a unified diff and exit 1 if it drifted.
    #[arg(long, requires = "output")]
    check: bool,
    /// Overwrite files that gpuops did not generate.
    #[arg(long, conflicts_with = "check")]
    force: bool,
    /// Directory of templates overriding the built-in ones by file name (e.g. nodepool.yaml.j2).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// `terraform`: each object as a `kubectl_manifest` resource in a `.tf` file (read back and
    /// linted as Terraform before anything is written).
    #[arg(long, value_enum, default_value = "yaml")]
    format: RenderFormat,
    /// Color in error reports.
    #[arg(long, value_enum, default_value = "auto")]
    color: Color,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RenderFormat {
    Yaml,
    Terraform,
}

#[derive(clap::Args)]
struct WhyArgs {
    /// The object: `file[:line]` (the object at that line; a file alone: each object with pod
    /// templates in it) or `Kind/[namespace/]name` (kind case-insensitive).
    target: String,
    /// Files or directories to read, as for lint (default: the current directory).
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: WhyFormat,
    /// Config file (default: .gpuops.yaml found upward from the first path).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Ignore any .gpuops.yaml.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
    /// The cluster is EKS (its ExtendedResourceToleration plugin adds GPU tolerations).
    #[arg(long)]
    eks: bool,
    /// Cluster context files (as for lint); repeatable.
    #[arg(long = "context", value_name = "PATH")]
    context: Vec<PathBuf>,
    /// Build every kustomization and chart again, neither reading nor writing the build cache.
    #[arg(long)]
    no_cache: bool,
    /// Read the cluster's context from the kubeconfig's cluster for this run (as
    /// `gpuops context pull` would write it).
    #[arg(long)]
    live: bool,
    #[command(flatten)]
    kube: KubeArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum WhyFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Never,
}

#[derive(Clone, Copy, ValueEnum)]
enum Color {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args)]
struct LintArgs {
    /// Files or directories to lint; `-` reads a YAML stream from stdin.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Also write the report in FORMAT to PATH (repeatable), e.g. `--output-file sarif=gpuops.sarif`.
    #[arg(long = "output-file", value_name = "FORMAT=PATH", value_parser = OutputFile::parse_spec)]
    output_files: Vec<(Format, PathBuf)>,
    /// Report only findings in these files, or whose related place is in them, still linting the
    /// whole repository for context (the config's directory, or the directories given). For
    /// pre-commit. With it, files (here or among PATHS) are what to report, directories what to lint.
    #[arg(long, value_name = "FILE", num_args = 0..)]
    changed: Option<Vec<PathBuf>>,
    /// Config file (default: .gpuops.yaml found upward from the first path).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Ignore any .gpuops.yaml.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
    /// Lowest severity that makes the run fail (exit 1); overrides the config.
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// Run only these rules (repeatable); a bundled policy named here runs even when the config
    /// leaves it off, and a rule named here also judges files in test trees.
    #[arg(long = "rule", value_name = "NAME", value_parser = RuleName, hide_possible_values = true)]
    rules: Vec<String>,
    /// A directory of Rego policies to run, beside the config's `policies:` (repeatable).
    #[arg(long = "policy", value_name = "DIR")]
    policy: Vec<PathBuf>,
    /// The cluster is EKS (its ExtendedResourceToleration plugin adds GPU tolerations).
    #[arg(long)]
    eks: bool,
    /// Report findings that `ignore.gpuops.dev/` annotations and `gpuops:ignore` comments
    /// suppress, as if they were not there (no unused-suppression findings either).
    #[arg(long)]
    no_suppressions: bool,
    /// Cluster context: YAML of objects that exist in the cluster but not in the linted files
    /// (a `kubectl get … -o yaml` dump, Terraform exports); repeatable. Indexed, never reported on.
    #[arg(long = "context", value_name = "PATH")]
    context: Vec<PathBuf>,
    /// Read the cluster's context from the kubeconfig's cluster for this run (as
    /// `gpuops context pull` would write it, GET requests only), beside any `--context`.
    #[arg(long)]
    live: bool,
    #[command(flatten)]
    kube: KubeArgs,
    /// CustomResourceDefinitions (files or directories, e.g. a chart's `crds/`): objects of their
    /// kinds are validated against the served version's schema; repeatable. Read as context.
    #[arg(long = "crd", value_name = "PATH")]
    crd: Vec<PathBuf>,
    /// Color in human output.
    #[arg(long, value_enum, default_value = "auto")]
    color: Color,
    /// Read kustomizations and charts file by file instead of building them.
    #[arg(long)]
    no_render: bool,
    /// Build every kustomization and chart again, neither reading nor writing the build cache.
    #[arg(long)]
    no_cache: bool,
    /// Print (stderr) which files were read raw, what was built with which command, and what
    /// was skipped and why.
    #[arg(long)]
    explain_sources: bool,
    /// Print (stderr) the clusters the files are linted as, which files each holds, and why.
    #[arg(long)]
    explain_clusters: bool,
}

/// The clap command, with a version line that says how many rules this build carries.
fn command() -> clap::Command {
    let version = format!(
        "{} ({} rules)",
        env!("CARGO_PKG_VERSION"),
        gpuops::rules::all().len()
    );
    // clap keeps the version for the life of the process; one small string leaked once.
    Cli::command().version(&*version.leak())
}

#[derive(Clone, Copy, ValueEnum)]
enum CostFormat {
    Human,
    Json,
    Csv,
}

#[derive(clap::Args)]
struct CostArgs {
    /// Files or directories (default: the current directory), found as `lint` finds them.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: CostFormat,
    /// Config file (default: .gpuops.yaml found upward from the first path).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Ignore any .gpuops.yaml.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
    /// Cluster context, as for lint: its NodePools and Nodes are priced too; repeatable.
    #[arg(long = "context", value_name = "PATH")]
    context: Vec<PathBuf>,
    /// Build every kustomization and chart again, neither reading nor writing the build cache.
    #[arg(long)]
    no_cache: bool,
    /// Read the cluster's context from the kubeconfig's cluster for this run.
    #[arg(long)]
    live: bool,
    #[command(flatten)]
    kube: KubeArgs,
}

fn main() -> ExitCode {
    gpuops::tune_allocator();
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Lint(args) => lint(args),
        Command::Why(args) => why(args),
        Command::Cost(args) => cost(args),
        Command::Init => {
            print(gpuops::render::INIT_PROFILE);
            ExitCode::SUCCESS
        }
        Command::Render(args) => render(args),
        Command::Schema {
            what: SchemaKind::Profile,
        } => {
            let schema = gpuops::render::profile_schema();
            match serde_json::to_string_pretty(&schema) {
                Ok(s) => {
                    print(&format!("{s}\n"));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut command(), "gpuops", &mut out);
            print(&String::from_utf8_lossy(&out));
            ExitCode::SUCCESS
        }
        Command::Man { output } => man(output),
        Command::Rules { markdown: true, .. } => {
            print(&report::rules_markdown());
            ExitCode::SUCCESS
        }
        Command::Rules {
            markdown: false,
            policy,
        } => {
            let policies = match listing_policies(&policy) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let mut out = String::new();
            // Policy ids come from the user's files: cut long ones so the padding stays sane.
            let shown = |n: &str| gpuops::text::shorten(n, gpuops::text::MAX_SHOWN).into_owned();
            let w = gpuops::rules::all()
                .iter()
                .map(|r| r.name.chars().count())
                .chain(
                    policies
                        .policies
                        .iter()
                        .map(|p| shown(p.name).chars().count()),
                )
                .max()
                .unwrap_or(0);
            for r in gpuops::rules::all() {
                let opt_in = if gpuops::rules::OPT_IN.contains(&r.name) {
                    " (off until enabled)"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "{:w$}  {:11}  {:7}  {}{opt_in}\n",
                    r.name,
                    r.category,
                    r.severity.as_str(),
                    r.summary
                ));
            }
            for p in &policies.policies {
                let opt_in = if p.default_on() {
                    ""
                } else {
                    " (off until enabled)"
                };
                out.push_str(&format!(
                    "{:w$}  {:11}  {:7}  {}{opt_in}\n",
                    shown(p.name),
                    "policy",
                    p.severity.as_str(),
                    p.summary
                ));
            }
            print(&out);
            ExitCode::SUCCESS
        }
        Command::Rule { name, policy } => {
            if let Some(r) = gpuops::rules::find(&name) {
                print(&format!(
                    "{} ({}, {} by default)\n{}\napplies to: {}\n\n{}\n",
                    r.name,
                    r.category,
                    r.severity,
                    r.summary,
                    r.kinds.join(", "),
                    r.explanation()
                ));
                return ExitCode::SUCCESS;
            }
            let policies = match listing_policies(&policy) {
                Ok(p) => p,
                Err(code) => return code,
            };
            match policies.find(&name) {
                Some(p) => {
                    let opt_in = if p.default_on() {
                        String::new()
                    } else {
                        format!("; off until enabled (`rules: {{{}: error}}`)", p.name)
                    };
                    print(&format!(
                        "{} (policy, {} by default{opt_in})\n{}\n\n{}\n\nSource: {}\n",
                        p.name,
                        p.severity,
                        p.summary,
                        p.description.trim(),
                        p.file
                    ));
                    ExitCode::SUCCESS
                }
                None => {
                    let hint = gpuops::rules::closest(&name)
                        .or_else(|| policies.closest(&name))
                        .map(|c| format!(" (did you mean `{c}`?)"))
                        .unwrap_or_default();
                    eprintln!("error: no rule named `{name}`{hint}; `gpuops rules` lists them");
                    ExitCode::from(2)
                }
            }
        }
        Command::Policy {
            command: PolicyCommand::Test { dirs },
        } => policy_test(dirs),
        Command::Cache { command } => cache(command),
        Command::Context {
            command: ContextCommand::Pull(args),
        } => context_pull(args),
    }
}
