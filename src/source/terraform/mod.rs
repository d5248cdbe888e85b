//! Manifests that Terraform applies: the YAML heredocs of `kubectl_manifest` (`yaml_body`),
//! `kubernetes_manifest` (`manifest = yamldecode(…)`), `kubectl_file_documents` (`content`) and
//! any other `yamldecode(<<EOT … EOT)`, read from `.tf` files.
//!
//! Each heredoc is parsed where it stands: the file's text with everything outside the heredoc
//! blanked (newlines kept) parses to the same documents at the same byte offsets, lines and
//! columns, so a finding points into the `.tf` file with no mapping back. Interpolations
//! (`${module.eks.cluster_name}`) are values Terraform fills in: placeholders, never judged. A
//! heredoc with template directives (`%{ for … }`) or interpolations that insert structure
//! (`${indent(4, yamlencode(…))}`) is not YAML until Terraform renders it, and is not read.
//!
//! Manifests written in HCL (`kubernetes_manifest` with `manifest = { … }`, `yaml_body =
//! yamlencode(…)`) are evaluated where that is static ([`eval`]) and become documents whose nodes
//! point at the HCL attributes. EKS managed node groups and the `karpenter-resources` chart's
//! values define capacity the pods are scheduled on: they become NodePools read as context
//! ([`Role::Derived`]). No provider runs and nothing is executed; a file that is not valid HCL is a
//! located problem.

use super::{IoProblem, Role, SourceFile};
use crate::yaml::compat;
use crate::yaml::{Budget, Problem, ProblemKind, Span};
use hcl_edit::structure::{Body, Structure};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod charts;
pub use charts::{input_versions, local_value, variable_default};
mod eval;
mod heredoc;
mod manifest;
mod nodegroups;
mod templates;

use eval::{Eval, Origin, Scope};

/// Whether Terraform text creates an EKS cluster: the `terraform-aws-modules/eks/aws` module
/// (not one of its submodules) or an `aws_eks_cluster` resource.
pub fn builds_eks(text: &str) -> bool {
    text.contains("resource \"aws_eks_cluster\"")
        || text
            .match_indices("\"terraform-aws-modules/eks/aws")
            .any(|(i, m)| text[i + m.len()..].starts_with('"'))
}

/// Directories that hold a cluster's infrastructure code, named for the tool rather than the
/// stack: the stack is their parent (`ai-ml/bionemo/terraform/eks.tf` builds `ai-ml/bionemo`).
const INFRA_DIRS: [&str; 5] = ["terraform", "tf", "iac", "infra", "infrastructure"];

/// The directory of the stack that the file at `path` (relative, `/`-separated) builds: the
/// file's own, or its parent when the file's is one of [`INFRA_DIRS`].
pub fn stack_dir(path: &str) -> &str {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let last = dir.rsplit('/').next().unwrap_or(dir);
    if INFRA_DIRS.contains(&last.to_ascii_lowercase().as_str()) {
        dir.rsplit_once('/').map_or("", |(d, _)| d)
    } else {
        dir
    }
}

/// Whether discovery reads this file as Terraform.
pub fn is_terraform(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "tf")
}

/// Words without which a `.tf` file defines nothing the linter reads: one scan rules most files
/// out before any parse.
const WORDS: [&str; 8] = [
    "kubectl_manifest",
    "kubernetes_manifest",
    "yamldecode",
    "kubectl_file_documents",
    "eks_managed_node_groups",
    "aws_eks_node_group",
    "karpenter_resources_helm_config",
    "karpenter-resources",
];

fn relevant(text: &str) -> bool {
    WORDS.iter().any(|w| text.contains(w)) || installs_known_chart(text) || enables_autopilot(text)
}

/// Whether a file may install the Kueue or Karpenter chart (a `helm_release` naming it, or a
/// module input of that name with a `version`): the release it pins says which API versions the
/// cluster serves (see `index::installs`).
fn installs_known_chart(text: &str) -> bool {
    ["kueue", "karpenter"].iter().any(|c| {
        text.contains(c) && (text.contains("helm_release") || !input_versions(text, c).is_empty())
    })
}

/// The `.tf` files of one directory (a Terraform module: its files share locals and variables),
/// one result per path in order: the linted file (manifests it applies) and, when it defines
/// capacity or chart objects, a second file of them that is read as context (never reported on).
/// A file that defines nothing the linter reads gives none.
pub fn read_module(paths: &[PathBuf]) -> Vec<Result<Vec<SourceFile>, IoProblem>> {
    let texts: Vec<Result<Option<String>, IoProblem>> =
        paths.iter().map(|p| read_text(p)).collect();
    let dir = paths
        .first()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let names: Vec<String> = paths.iter().map(|p| super::display_path(p)).collect();
    module(&dir, &names, texts, true)
}

/// A template named for the YAML it renders, found on its own (see
/// [`crate::source::paths::is_yaml_template`]): read as the manifests it renders, with
/// interpolations as placeholders, as objects that exist in its clusters but are never reported
/// on (the template is not what is applied). One that does not read as manifests (directives that
/// insert structure, YAML it only becomes once filled in) is listed as unread: what it names is
/// then taken to exist.
pub fn read_template(path: &Path) -> Option<SourceFile> {
    let mut f = templates::read(path)?;
    f.role = crate::source::Role::Derived;
    Some(f)
}

/// Whether a module creates GKE Autopilot clusters (`enable_autopilot = true`): kept, without
/// objects, for what Autopilot's admission does to pods.
pub fn enables_autopilot(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim();
        l.starts_with("enable_autopilot")
            && l.split_once('=').is_some_and(|(_, v)| v.trim() == "true")
    })
}

/// Files of one module given as text (`render --format terraform` checks its output so): no
/// `.tfvars` is read.
pub fn read_texts(files: &[(String, String)]) -> Vec<SourceFile> {
    let names: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let texts = files.iter().map(|(_, t)| Ok(Some(t.clone()))).collect();
    module(Path::new(""), &names, texts, false)
        .into_iter()
        .flatten()
        .flatten()
        .collect()
}

fn module(
    dir: &Path,
    names: &[String],
    texts: Vec<Result<Option<String>, IoProblem>>,
    tfvars: bool,
) -> Vec<Result<Vec<SourceFile>, IoProblem>> {
    let any = texts
        .iter()
        .any(|t| matches!(t, Ok(Some(t)) if relevant(t)));
    if !any {
        return texts
            .into_iter()
            .zip(names)
            .map(|(t, path)| {
                t.map(|t| match t {
                    Some(t) if crate::source::pages::installs_release(&t) => {
                        vec![crate::source::pages::kept(path.clone(), t)]
                    }
                    _ => Vec::new(),
                })
            })
            .collect();
    }
    let bodies: Vec<Option<Result<Body, hcl_edit::parser::Error>>> = texts
        .iter()
        .map(|t| match t {
            Ok(Some(t)) => Some(parse(t)),
            _ => None,
        })
        .collect();
    let supplied = if tfvars {
        example_tfvars_names(dir)
    } else {
        Vec::new()
    };
    let tfvars = if tfvars {
        tfvars_texts(dir)
    } else {
        Vec::new()
    };
    let tfvars_bodies: Vec<Option<Body>> = tfvars.iter().map(|t| parse(t).ok()).collect();
    let mut scope = Scope::default();
    for (i, t) in texts.iter().enumerate() {
        scope.origins.push(Origin {
            text: match t {
                Ok(Some(t)) => t,
                _ => "",
            },
            dir,
        });
        if let Some(Some(Ok(b))) = bodies.get(i) {
            define(&mut scope, i, b);
        }
    }
    // A variable an example values file sets (`pools.tfvars.example`) is one the module's users
    // supply: its default is not what runs, so its value is unknown unless a real `.tfvars`
    // sets it.
    for name in &supplied {
        scope.vars.remove(name);
    }
    for (j, b) in tfvars_bodies.iter().enumerate() {
        let origin = scope.origins.len();
        scope.origins.push(Origin {
            text: &tfvars[j],
            dir,
        });
        if let Some(b) = b {
            for a in b.iter().filter_map(Structure::as_attribute) {
                scope
                    .vars
                    .insert(a.key.as_str().to_string(), (origin, &a.value));
            }
        }
    }
    let mut out = Vec::with_capacity(names.len());
    let mut seen: Vec<PathBuf> = Vec::new();
    for (i, t) in texts.iter().enumerate() {
        let path = names[i].clone();
        out.push(match (t, &bodies[i]) {
            (Err(e), _) => Err(e.clone()),
            (Ok(Some(text)), Some(Ok(body))) if relevant(text) => {
                let mut files = read_file(path, text.clone(), body, &scope, i);
                // The template files its manifests render, each read once, beside it.
                let mut referenced = Vec::new();
                templates::referenced(body, &mut Eval::new(&scope, i), &mut referenced);
                for p in referenced {
                    if !seen.contains(&p) {
                        files.extend(templates::read(&p));
                        seen.push(p);
                    }
                }
                Ok(files)
            }
            (Ok(Some(text)), Some(Err(e))) if relevant(text) => {
                Ok(vec![invalid(path, text.clone(), e)])
            }
            // A `local-exec` command that installs a release (`kubectl apply -f
            // …/kueue/releases/download/v0.15.2/…`) is read as a script is.
            (Ok(Some(text)), _) if crate::source::pages::installs_release(text) => {
                Ok(vec![crate::source::pages::kept(path, text.clone())])
            }
            _ => Ok(Vec::new()),
        });
    }
    out
}

/// The file's body, parsed as Terraform reads it. The parser refuses an object constructor that
/// names a key twice, which Terraform accepts (the later value wins, for compatibility; only
/// `for` expressions insist on unique keys): such a key is renamed in place, to a name of the
/// same length nothing refers to, and the text parsed again. Offsets stay those of the file. A
/// leading byte order mark, which Terraform skips, is read as blanks of its length.
fn parse(text: &str) -> Result<Body, hcl_edit::parser::Error> {
    let mut text = match text.strip_prefix('\u{feff}') {
        Some(rest) => std::borrow::Cow::Owned(format!("   {rest}")),
        None => std::borrow::Cow::Borrowed(text),
    };
    for round in 0..64u32 {
        let e = match hcl_edit::parser::parse_body(&text) {
            Ok(b) => return Ok(b),
            Err(e) => e,
        };
        let at = e.location().offset();
        let key_len = text.get(at..).map_or(0, |r| {
            r.bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
                .count()
        });
        if !e.message().contains("redefined object key") || key_len < 4 {
            return Err(e);
        }
        // `_d<round>` padded with `_`: an identifier, distinct per round.
        let name = format!("_d{round}");
        let Some(replacement) = (name.len() <= key_len).then(|| format!("{name:_<key_len$}"))
        else {
            return Err(e);
        };
        let mut owned = text.into_owned();
        owned.replace_range(at..at + key_len, &replacement);
        text = std::borrow::Cow::Owned(owned);
    }
    hcl_edit::parser::parse_body(&text)
}

/// Whether a file a Terraform expression names may be read: it lies inside the working
/// directory or the repository (the nearest ancestor with `.git`) of `module`. A linted
/// repository cannot make gpuops read, and print in a report, a file of the machine
/// (`file("/home/me/.ssh/id_rsa")`).
pub(crate) fn may_read(module: &Path, p: &Path) -> bool {
    let Ok(target) = std::fs::canonicalize(p) else {
        return false;
    };
    let module = if module.as_os_str().is_empty() {
        Path::new(".")
    } else {
        module
    };
    let repo = std::fs::canonicalize(module).ok().and_then(|m| {
        m.ancestors()
            .find(|a| a.join(".git").exists())
            .map(Path::to_path_buf)
    });
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|c| std::fs::canonicalize(c).ok());
    [repo, cwd]
        .into_iter()
        .flatten()
        .any(|root| target.starts_with(root))
}

/// A file's text; `None` when it is not UTF-8 text or over the size limit (not Terraform that
/// applies anything).
fn read_text(p: &Path) -> Result<Option<String>, IoProblem> {
    let io = |e: std::io::Error| IoProblem {
        path: super::display_path(p),
        message: e.to_string(),
    };
    let len = std::fs::metadata(p).map_err(io)?.len();
    if len > super::MAX_FILE_BYTES {
        return Ok(None);
    }
    let bytes = std::fs::read(p).map_err(io)?;
    Ok(String::from_utf8(bytes).ok())
}

/// `terraform.tfvars` then `*.auto.tfvars` in name order: the values Terraform itself loads
/// without being told, later ones winning.
/// The variables that example values files of the module's directory set (`*.tfvars.example`,
/// `.sample`, `.template`, `.tmpl`, `.dist`): values its users are to supply.
fn example_tfvars_names(dir: &Path) -> Vec<String> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let example = |p: &Path| {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        [".example", ".sample", ".template", ".tmpl", ".dist"]
            .iter()
            .any(|ext| name.ends_with(&format!(".tfvars{ext}")))
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| example(p))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() < 1 << 20))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter_map(|t| parse(&t).ok())
        .flat_map(|b| {
            b.iter()
                .filter_map(Structure::as_attribute)
                .map(|a| a.key.as_str().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn tfvars_texts(dir: &Path) -> Vec<String> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut auto: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".auto.tfvars"))
        .collect();
    auto.sort();
    std::iter::once(dir.join("terraform.tfvars"))
        .chain(auto)
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() < 1 << 20))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// The `locals` and `variable` defaults a file defines.
fn define<'a>(scope: &mut Scope<'a>, origin: usize, body: &'a Body) {
    for b in body.iter().filter_map(Structure::as_block) {
        match b.ident.as_str() {
            "locals" => {
                for a in b.body.iter().filter_map(Structure::as_attribute) {
                    scope
                        .locals
                        .insert(a.key.as_str().to_string(), (origin, &a.value));
                }
            }
            "variable" => {
                let (Some(name), Some(default)) = (
                    b.labels.first(),
                    b.body
                        .iter()
                        .filter_map(Structure::as_attribute)
                        .find(|a| a.key.as_str() == "default"),
                ) else {
                    continue;
                };
                scope
                    .vars
                    .entry(name.as_str().to_string())
                    .or_insert((origin, &default.value));
            }
            _ => {}
        }
    }
}

/// A `.tf` file that is not valid HCL: Terraform stops at it.
fn invalid(path: String, text: String, e: &hcl_edit::parser::Error) -> SourceFile {
    let at = e.location().offset().min(text.len());
    SourceFile {
        path,
        text: Arc::from(text),
        docs: Vec::new(),
        problems: vec![Problem {
            span: Span::at(at),
            message: format!(
                "not valid HCL: {}; Terraform cannot read this file",
                e.message()
            ),
            first: None,
            kind: ProblemKind::Hcl,
        }],
        skipped: None,
        role: Role::Linted,
        lines: Default::default(),
    }
}

/// What one parsed file defines: its manifests, then the capacity and chart objects.
fn read_file(
    path: String,
    text: String,
    body: &Body,
    scope: &Scope<'_>,
    origin: usize,
) -> Vec<SourceFile> {
    let text: Arc<str> = Arc::from(text);
    let mut docs = Vec::new();
    let mut problems: Vec<Problem> = Vec::new();
    let mut template = None;
    let mut ev = Eval::new(scope, origin);
    let mut spans = Vec::new();
    heredoc::collect(body, None, &mut spans);
    for range in spans
        .into_iter()
        .filter_map(|s| heredoc::heredoc_body(&text, s))
    {
        let blanked = heredoc::blank_outside(&text, range);
        let blanked: Arc<str> = Arc::from(heredoc::encoded_values(
            &heredoc::mask_quoting_interpolations(&blanked),
            &mut ev,
        ));
        if let Some(t) = compat::structural_template_markers(&heredoc::mask_values(&blanked)) {
            template.get_or_insert(t);
            continue;
        }
        let parsed = compat::parse_shared(&blanked, Budget::default());
        // Unparsable as written, with a template marker (a line that is only `${…}` where keys
        // go, which Terraform fills with a whole line or nothing): a template, as a YAML file
        // would be.
        if parsed
            .problems
            .iter()
            .any(|p| p.kind == crate::yaml::ProblemKind::Syntax)
            && let Some(t) = compat::template_markers(&blanked)
        {
            template.get_or_insert(t);
            continue;
        }
        // A value that interpolates locals and variables reads as Terraform renders it.
        for d in parsed.docs {
            if blanked.contains("${") {
                docs.push(
                    d.root()
                        .rewritten(&mut |t| t.contains("${").then(|| ev.interpolate(t)).flatten()),
                );
            } else {
                docs.push(d);
            }
        }
        problems.extend(parsed.problems);
    }
    docs.extend(manifest::read(body, &mut ev, &text));
    let mut derived = nodegroups::read(body, &mut ev, &text);
    derived.extend(charts::read(body, &mut ev, &text));
    let skipped = (docs.is_empty() && problems.is_empty())
        .then_some(template)
        .flatten()
        .map(|t| super::Skipped {
            reason: t.kind.to_string(),
            marker: t.marker,
            span: t.span,
            hint: None,
        });
    let mut out = Vec::new();
    if !docs.is_empty() || !problems.is_empty() || skipped.is_some() {
        out.push(SourceFile {
            path: path.clone(),
            text: text.clone(),
            docs,
            problems,
            skipped,
            role: Role::Linted,
            lines: Default::default(),
        });
    }
    // A file that only installs the Kueue or Karpenter chart is kept (without objects) for the
    // release it pins.
    if !derived.is_empty()
        || (out.is_empty() && (installs_known_chart(&text) || enables_autopilot(&text)))
    {
        out.push(SourceFile {
            path,
            text,
            docs: derived,
            problems: Vec::new(),
            skipped: None,
            role: Role::Derived,
            lines: Default::default(),
        });
    }
    out
}

/// One file read on its own (no other file of its module): for tests.
#[cfg(test)]
fn read(path: String, text: String) -> Option<SourceFile> {
    let dir = tempfile::tempdir().ok()?;
    let p = dir.path().join(path.rsplit('/').next().unwrap_or("x.tf"));
    std::fs::write(&p, &text).ok()?;
    let mut files = read_module(&[p]).pop()?.ok()?;
    files.retain(|f| f.role == Role::Linted);
    files.pop().map(|mut f| {
        f.path = path;
        f
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<String> {
        read("x.tf".into(), text.into())
            .map(|f| {
                f.docs
                    .iter()
                    .filter_map(|d| Some(d.root().get("kind")?.as_str()?.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn heredocs_that_terraform_applies_are_read() {
        let text = r#"
locals {
  queue = yamldecode(<<EOT
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: gpu
EOT
  )
}
resource "kubernetes_manifest" "flavor" {
  manifest = yamldecode(<<-EOT
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata:
      name: ${var.flavor}
  EOT
  )
}
resource "helm_release" "karpenter" {
  values = [<<-EOT
    settings:
      clusterName: x
  EOT
  ]
}
"#;
        assert_eq!(kinds(text), ["ClusterQueue", "ResourceFlavor"]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_as_terraform_does() {
        let text = "\u{feff}resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n  YAML\n}\n";
        let f = read("x.tf".into(), text.into()).unwrap();
        assert!(f.problems.is_empty(), "{:?}", f.problems);
        assert_eq!(kinds(text), ["NodePool"]);
    }

    #[test]
    fn a_finding_position_is_the_position_in_the_tf_file() {
        let text = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n  YAML\n}\n";
        let f = read("x.tf".into(), text.into()).unwrap();
        let kind = f.docs[0].root().get("kind").unwrap();
        let p = f.pos(kind.span().start());
        assert_eq!((p.line, p.col), (3, 11));
        assert_eq!(&*f.text, text);
    }

    #[test]
    fn a_known_value_jsonencoded_in_a_heredoc_is_read_as_its_json() {
        let text = "variable \"instance_types\" {\n  default = [\"g6e.2xlarge\", \"g6e.4xlarge\"]\n}\nresource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n    spec:\n      requirements:\n        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: ${jsonencode(var.instance_types)}\n  YAML\n}\n";
        let f = read("x.tf".into(), text.into()).unwrap();
        let values = f.docs[0]
            .root()
            .at(&["spec", "requirements"])
            .and_then(|r| r.items().next())
            .and_then(|r| r.get("values"))
            .unwrap();
        let got: Vec<&str> = values.items().filter_map(|v| v.as_str()).collect();
        assert_eq!(got, ["g6e.2xlarge", "g6e.4xlarge"]);
        let p = f.pos(values.span().start());
        assert_eq!((p.line, p.col), (11, 19));
        // Unknown to anything but Terraform: the heredoc is a template.
        let unknown = text.replace("var.instance_types", "module.x.types");
        let f = read("x.tf".into(), unknown).unwrap();
        assert!(f.docs.is_empty());
        assert_eq!(f.skipped.unwrap().reason, "Terraform template");
    }

    #[test]
    fn interpolated_values_are_placeholders_inserted_structure_is_a_template() {
        let value = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n    metadata:\n      name: ${var.name}\n      labels:\n        - ${local.x}\n  YAML\n}\n";
        assert_eq!(kinds(value), ["NodePool"]);
        let inserted = "resource \"kubectl_manifest\" \"p\" {\n  yaml_body = <<-YAML\n    kind: NodePool\n    spec:\n      ${indent(6, yamlencode(var.spec))}\n  YAML\n}\n";
        let f = read("x.tf".into(), inserted.into()).unwrap();
        assert!(f.docs.is_empty());
        assert_eq!(f.skipped.unwrap().reason, "Terraform template");
    }

    #[test]
    fn heredoc_values_that_interpolate_locals_read_as_rendered() {
        let text = "locals {\n  team = \"ml\"\n  gpus = 8\n}\nresource \"kubectl_manifest\" \"q\" {\n  yaml_body = <<-YAML\n    kind: LocalQueue\n    metadata:\n      name: ${local.team}-gpu\n      namespace: ${module.ns.name}\n    spec:\n      quota: ${local.gpus}\n  YAML\n}\n";
        let f = read("x.tf".into(), text.into()).unwrap();
        let root = f.docs[0].root();
        let name = root.at(&["metadata", "name"]).unwrap();
        assert_eq!(name.as_str(), Some("ml-gpu"));
        assert_eq!(f.pos(name.span().start()).line, 9);
        assert_eq!(
            root.str_at(&["metadata", "namespace"]),
            Some("${module.ns.name}")
        );
        let quota = root.at(&["spec", "quota"]).unwrap();
        assert_eq!(quota.as_str(), Some("8"));
        assert_eq!(quota.yaml11(), Some(crate::yaml::Yaml11::Int));
    }

    #[test]
    fn an_object_that_names_a_key_twice_is_valid_terraform() {
        let text = "module \"eks\" {\n  eks_managed_node_groups = {\n    gpu = {\n      instance_types = [\"g5.xlarge\"]\n      min_size = 2\n      min_size = 4\n    }\n  }\n}\n";
        assert!(parse(text).is_ok());
        // Attributes of a block named twice are an error in Terraform too.
        assert!(parse("locals {\n  a = 1\n  a = 2\n}\n").is_err());
    }

    #[test]
    fn terraform_that_applies_nothing_is_none_invalid_hcl_is_a_located_problem() {
        assert!(read("x.tf".into(), "module \"eks\" {}\n".into()).is_none());
        let f = read(
            "x.tf".into(),
            "resource \"kubectl_manifest\" \"x\" {\n  a = [\n".into(),
        )
        .unwrap();
        assert!(f.docs.is_empty());
        assert_eq!(f.problems.len(), 1);
        assert_eq!(f.problems[0].kind, ProblemKind::Hcl);
        assert!(
            f.problems[0].message.starts_with("not valid HCL: "),
            "{}",
            f.problems[0].message
        );
        assert_eq!(f.pos(f.problems[0].span.start()).line, 2);
    }
}
