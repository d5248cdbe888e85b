//! Go templates as Argo CD renders ApplicationSets with `goTemplate: true`: a subset of Go's
//! `text/template` written for this (no Go runs, and minijinja is Jinja, not Go).
//!
//! What is evaluated: text and actions with trim markers and comments; fields of maps
//! (`.path.basename`, `$.name`, `(index .a 0).b`); variables (`$x := …`, `$x = …`); pipelines;
//! string, raw string, character, number, `true`/`false`/`nil` literals; `if`/`else if`/`else`,
//! `with`, `range` (lists, maps, integers; `$i, $v :=`; `break`, `continue`); the `missingkey`
//! option (`default`, `zero`, `error`); Go's builtins ([`funcs`]) and the Sprig and Argo CD
//! functions of [`sprig`]. Values print as Go prints them (`float64` parameters: `42`, `1e+06`).
//!
//! What is not: named templates (`define`, `template`, `block`), method calls, and the Sprig
//! functions [`sprig`] does not implement: those are [`Error::Unsupported`] (gpuops cannot say
//! what Argo CD makes of the template). A template Argo CD itself cannot render (a syntax error,
//! a missing key under `missingkey=error`, `lower` of a number, an unknown function) is
//! [`Error::Failed`] with Go's reason.

mod eval;
mod fmt;
mod funcs;
mod lex;
mod parse;
mod sprig;
mod value;

pub use sprig::sanitize_name;
pub use value::{Elem, Value, go_float};

/// Why a template gives no text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Outside what is evaluated here.
    Unsupported(String),
    /// Argo CD fails to render it too.
    Failed(String),
}

/// `missingkey=…` of `goTemplateOptions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Missing {
    /// `default`/`invalid`: a missing key is "no value" (`<no value>` when printed).
    #[default]
    Default,
    /// `zero`: the zero value of the map's element type.
    Zero,
    /// `error`: rendering fails.
    Error,
}

impl Missing {
    /// Reads `goTemplateOptions`; `Err`: an option Go rejects (Argo CD fails on it).
    pub fn from_options<'a>(options: impl IntoIterator<Item = &'a str>) -> Result<Missing, String> {
        let mut m = Missing::Default;
        for o in options {
            m = match o.strip_prefix("missingkey=") {
                Some("default" | "invalid") => Missing::Default,
                Some("zero") => Missing::Zero,
                Some("error") => Missing::Error,
                _ => return Err(format!("unrecognized goTemplateOptions option `{o}`")),
            };
        }
        Ok(m)
    }
}

/// Renders `src` with `data` as dot (and `$`).
pub fn render(src: &str, data: &Value, missing: Missing) -> Result<String, Error> {
    if !src.contains("{{") {
        return Ok(src.to_string());
    }
    let items = parse::parse(src)?;
    let mut state = eval::State::new(data.clone(), missing);
    state.run(&items)?;
    Ok(state.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Value {
        let mut v = Value::from_json(&serde_json::json!({
            "name": "prod-eks",
            "path": {"path": "apps/train", "basename": "train", "segments": ["apps", "train"]},
            "replicas": 3,
            "big": 1000000,
            "values": {"tier": "gold"},
            "empty": "",
            "nothing": null,
        }));
        if let Value::Map(m, _) = &mut v {
            let labels = [("environment".to_string(), "production".to_string())];
            let mut meta = std::collections::BTreeMap::new();
            meta.insert(
                "labels".to_string(),
                Value::str_map(labels.iter().map(|(k, v)| (k, v))),
            );
            m.insert("metadata".into(), Value::map(meta));
        }
        v
    }

    fn r(src: &str) -> Result<String, Error> {
        render(src, &data(), Missing::Default)
    }

    #[test]
    fn fields_functions_and_pipelines() {
        assert_eq!(
            r(r#"{{ .path.path }}/overlays/{{ index .metadata.labels "environment" }}"#).unwrap(),
            "apps/train/overlays/production"
        );
        assert_eq!(
            r("{{.name | upper}}-{{ .replicas }}-{{ .big }}").unwrap(),
            "PROD-EKS-3-1e+06"
        );
        assert_eq!(r(r#"{{ trimSuffix "-eks" .name }}"#).unwrap(), "prod");
        assert_eq!(r(r#"{{ index .path.segments 1 }}"#).unwrap(), "train");
        assert_eq!(r(r#"{{ .empty | default "none" }}"#).unwrap(), "none");
        assert_eq!(
            r(r#"{{ printf "%s-%v" .name .replicas }}"#).unwrap(),
            "prod-eks-3"
        );
        assert_eq!(r("{{ .missing }}").unwrap(), "<no value>");
        assert_eq!(r(r#"{{ splitList "-" .name | last }}"#).unwrap(), "eks");
        assert_eq!(r("{{ $.values.tier }}").unwrap(), "gold");
    }

    #[test]
    fn control_flow_and_variables() {
        assert_eq!(
            r(r#"{{ if eq .values.tier "gold" }}big{{ else }}small{{ end }}"#).unwrap(),
            "big"
        );
        assert_eq!(r("{{ with .values }}{{ .tier }}{{ end }}").unwrap(), "gold");
        assert_eq!(
            r("{{ range $i, $s := .path.segments }}{{ if $i }}/{{ end }}{{ $s }}{{ end }}")
                .unwrap(),
            "apps/train"
        );
        assert_eq!(
            r("{{ $x := .name }}{{ $x = upper $x }}{{ $x }}").unwrap(),
            "PROD-EKS"
        );
        assert_eq!(r("a  {{- /* note */ -}}  b").unwrap(), "ab");
        assert_eq!(
            r("{{ range .nothing }}x{{ else }}none{{ end }}").unwrap(),
            "none"
        );
    }

    #[test]
    fn missing_keys_follow_the_option() {
        let d = data();
        let err = render("{{ .missing }}", &d, Missing::Error).unwrap_err();
        assert_eq!(
            err,
            Error::Failed("map has no entry for key \"missing\"".into())
        );
        assert_eq!(
            render("{{ .missing }}", &d, Missing::Zero).unwrap(),
            "<no value>"
        );
        // Argo CD's own cluster has no metadata: a label of it fails either way.
        let local = Value::from_json(&serde_json::json!({"name": "in-cluster"}));
        for m in [Missing::Default, Missing::Error] {
            assert!(matches!(
                render(r#"{{ index .metadata.labels "environment" }}"#, &local, m),
                Err(Error::Failed(_))
            ));
        }
        assert!(matches!(
            render("{{ .nothing.x }}", &d, Missing::Default),
            Err(Error::Failed(_))
        ));
        assert_eq!(
            Missing::from_options(["missingkey=error"]).unwrap(),
            Missing::Error
        );
        assert!(Missing::from_options(["nope"]).is_err());
    }

    #[test]
    fn what_is_not_evaluated_says_so() {
        assert!(matches!(
            r("{{ sha256sum .name }}"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(r("{{ nosuch .name }}"), Err(Error::Failed(_))));
        assert!(matches!(r("{{ .name "), Err(Error::Failed(_))));
        assert!(matches!(r("{{ lower .replicas }}"), Err(Error::Failed(_))));
        assert!(matches!(
            r("{{ range 1000000 }}x{{ end }}"),
            Err(Error::Unsupported(_))
        ));
        assert_eq!(r("plain").unwrap(), "plain");
    }
}
