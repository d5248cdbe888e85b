//! The minijinja environment: embedded templates (overridable by file name), strict undefined
//! values, no auto-escaping, and a `toyaml` filter that quotes what YAML 1.1 would misread.

use super::plan::{self, ObjKind, Object};
use super::platform::Platform;
use super::{RenderError, RenderedFile, header};
use crate::yaml::{self, Budget, Yaml11};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use std::path::Path;

/// The templates compiled into the binary, by file name.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "clusterqueue.yaml.j2",
        include_str!("../../templates/clusterqueue.yaml.j2"),
    ),
    (
        "ec2nodeclass.yaml.j2",
        include_str!("../../templates/ec2nodeclass.yaml.j2"),
    ),
    (
        "deviceplugin.yaml.j2",
        include_str!("../../templates/deviceplugin.yaml.j2"),
    ),
    (
        "devicepluginconfig.yaml.j2",
        include_str!("../../templates/devicepluginconfig.yaml.j2"),
    ),
    ("job.yaml.j2", include_str!("../../templates/job.yaml.j2")),
    (
        "limitrange.yaml.j2",
        include_str!("../../templates/limitrange.yaml.j2"),
    ),
    (
        "localqueue.yaml.j2",
        include_str!("../../templates/localqueue.yaml.j2"),
    ),
    (
        "namespace.yaml.j2",
        include_str!("../../templates/namespace.yaml.j2"),
    ),
    (
        "nodeoverlay.yaml.j2",
        include_str!("../../templates/nodeoverlay.yaml.j2"),
    ),
    (
        "nodepool.yaml.j2",
        include_str!("../../templates/nodepool.yaml.j2"),
    ),
    (
        "priorityclass.yaml.j2",
        include_str!("../../templates/priorityclass.yaml.j2"),
    ),
    (
        "resourceflavor.yaml.j2",
        include_str!("../../templates/resourceflavor.yaml.j2"),
    ),
    (
        "resourcequota.yaml.j2",
        include_str!("../../templates/resourcequota.yaml.j2"),
    ),
    (
        "service.yaml.j2",
        include_str!("../../templates/service.yaml.j2"),
    ),
    (
        "workloadpriorityclass.yaml.j2",
        include_str!("../../templates/workloadpriorityclass.yaml.j2"),
    ),
];

/// Instruction budget per template render: ample for these templates, a stop for runaway loops
/// in user overrides.
const FUEL: u64 = 5_000_000;

/// Serializes a value as YAML (block style for maps and lists), quoting every string a YAML 1.1
/// reader would take for something else (`on`, `yes`, `0755`, `1_000`, `1e3`, `null`…).
pub fn to_yaml(value: &Value) -> Result<String, minijinja::Error> {
    let mut opts = serde_saphyr::SerializerOptions::default();
    // Multi-line strings as escaped double-quoted scalars: they stay correct at any indentation.
    opts.prefer_block_scalars = false;
    let s = serde_saphyr::to_string_with_options(value, opts).map_err(|e| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("toyaml: {e}"),
        )
    })?;
    Ok(s.trim_end_matches('\n').to_string())
}

/// Renders objects into files.
pub struct Renderer {
    env: Environment<'static>,
    /// Template names replaced from `--templates`.
    pub overridden: Vec<String>,
}

impl Renderer {
    /// The embedded templates, with any file of the same name in `overrides` taking their place.
    pub fn new(overrides: Option<&Path>) -> Result<Self, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_fuel(Some(FUEL));
        let syntax = SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .map_err(|e| RenderError::Template {
                name: "<syntax>".into(),
                detail: e.to_string(),
            })?;
        env.set_syntax(syntax);
        env.add_filter("toyaml", |v: Value| to_yaml(&v));
        let mut sources: Vec<(String, String)> = EMBEDDED
            .iter()
            .map(|(n, s)| ((*n).to_string(), (*s).to_string()))
            .collect();
        let mut overridden = Vec::new();
        if let Some(dir) = overrides {
            let bad = |detail: String| RenderError::TemplateDir {
                dir: dir.to_path_buf(),
                detail,
            };
            let entries = std::fs::read_dir(dir).map_err(|e| bad(e.to_string()))?;
            let mut names = Vec::new();
            for entry in entries {
                let entry = entry.map_err(|e| bad(e.to_string()))?;
                let name = entry.file_name().to_string_lossy().to_string();
                if name.ends_with(".j2") {
                    names.push((name, entry.path()));
                }
            }
            names.sort();
            for (name, path) in names {
                let Some(slot) = sources.iter_mut().find(|(n, _)| *n == name) else {
                    let known: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
                    return Err(bad(format!(
                        "`{name}` replaces no template (templates: {})",
                        known.join(", ")
                    )));
                };
                slot.1 = std::fs::read_to_string(&path).map_err(|e| bad(format!("{name}: {e}")))?;
                overridden.push(name);
            }
        }
        for (name, src) in sources {
            env.add_template_owned(name.clone(), src)
                .map_err(|e| RenderError::Template {
                    name,
                    detail: format!("{e:#}"),
                })?;
        }
        Ok(Renderer { env, overridden })
    }

    /// Renders one object: template output, checked to be the object planned.
    pub fn render_object(&self, o: &Object) -> Result<String, RenderError> {
        let name = o.kind.template();
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| RenderError::Template {
                name: name.to_string(),
                detail: format!("{e:#}"),
            })?;
        let mut body =
            tmpl.render(Value::from(Serde(&o.ctx)))
                .map_err(|e| RenderError::Template {
                    name: name.to_string(),
                    detail: format!("{e:#}"),
                })?;
        while body.ends_with("\n\n") {
            body.pop();
        }
        if !body.ends_with('\n') {
            body.push('\n');
        }
        check_identity(name, o, &body)?;
        Ok(body)
    }

    /// Renders the whole platform, sorted by output path. `profile` is the path shown in headers.
    pub fn render(
        &self,
        platform: &Platform,
        profile: &str,
    ) -> Result<Vec<RenderedFile>, RenderError> {
        let head = header(profile);
        plan::objects(platform)
            .iter()
            .map(|o| {
                let body = self.render_object(o)?;
                Ok(RenderedFile {
                    path: o.path(),
                    text: format!("{head}{body}"),
                })
            })
            .collect()
    }
}

/// The rendered text must be one YAML document with the planned apiVersion, kind, name and
/// namespace (a broken or mistaken override is caught here, not in the cluster).
fn check_identity(template: &str, o: &Object, body: &str) -> Result<(), RenderError> {
    let parsed = yaml::parse(body, Budget::default());
    let mismatch = |found: String| RenderError::TemplateOutput {
        name: template.to_string(),
        found,
        expected: describe(o.kind, o.namespace.as_deref(), &o.name),
    };
    if let Some(p) = parsed.problems.first() {
        return Err(mismatch(format!(
            "invalid YAML ({} at line {})",
            p.message,
            p.span.start_pos(body).line
        )));
    }
    if parsed.docs.len() != 1 {
        return Err(mismatch(format!("{} documents", parsed.docs.len())));
    }
    let root = &parsed.docs[0].root();
    let text = |path: &[&str]| root.at(path).and_then(|n| n.as_str()).unwrap_or("");
    let found = describe_found(
        text(&["apiVersion"]),
        text(&["kind"]),
        root.at(&["metadata", "namespace"]).and_then(|n| n.as_str()),
        text(&["metadata", "name"]),
    );
    let same = text(&["apiVersion"]) == o.kind.api_version()
        && text(&["kind"]) == o.kind.kind()
        && text(&["metadata", "name"]) == o.name
        && root.at(&["metadata", "namespace"]).and_then(|n| n.as_str()) == o.namespace.as_deref();
    if !same {
        return Err(mismatch(found));
    }
    for path in [&["metadata", "name"][..], &["metadata", "namespace"][..]] {
        if let Some(n) = root.at(path)
            && n.yaml11() != Some(Yaml11::Str)
        {
            return Err(mismatch(format!(
                "an unquoted `{}` at {} that Kubernetes reads as a {:?}; pipe it through `toyaml`",
                n.as_str().unwrap_or_default(),
                path.join("."),
                n.yaml11()
            )));
        }
    }
    Ok(())
}

fn describe(kind: ObjKind, ns: Option<&str>, name: &str) -> String {
    describe_found(kind.api_version(), kind.kind(), ns, name)
}

fn describe_found(api: &str, kind: &str, ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{api} {kind} {ns}/{name}"),
        None => format!("{api} {kind} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toyaml_quotes_what_yaml_1_1_misreads() {
        for s in [
            "true", "on", "yes", "y", "n", "No", "off", "0755", "1_000", "1e3", "null", "~", "",
            "12:30", "0x1F", "1.0",
        ] {
            let out = to_yaml(&Value::from(s)).unwrap();
            assert!(
                out.starts_with('"') || out.starts_with('\''),
                "{s:?} came out bare: {out}"
            );
        }
        assert_eq!(to_yaml(&Value::from("plain")).unwrap(), "plain");
        assert_eq!(to_yaml(&Value::from(3)).unwrap(), "3");
        let multi = to_yaml(&Value::from("a\nb")).unwrap();
        assert!(!multi.contains('\n'), "{multi}");
    }

    #[test]
    fn every_kind_has_an_embedded_template() {
        for k in ObjKind::ALL {
            assert!(EMBEDDED.iter().any(|(n, _)| *n == k.template()), "{:?}", k);
        }
    }
}
