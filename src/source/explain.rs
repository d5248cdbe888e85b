//! The text of `--explain-sources`.

use super::{Line, Sources};

impl Sources {
    /// `--explain-sources`: what was read raw, built (with what command), skipped, and why.
    pub fn explain(&self) -> String {
        let count = |w: &str| self.lines.iter().filter(|l| l.what == w).count();
        let terraform = match count("terraform") {
            0 => String::new(),
            n => format!(", {n} Terraform"),
        };
        let cached = match count("cached") {
            0 => String::new(),
            n => format!(" ({n} from the cache)"),
        };
        let mut out = format!(
            "sources: {} read raw{terraform}, {} built{cached}, {} failed, {} skipped\n",
            count("raw"),
            count("build") + count("cached"),
            count("failed"),
            count("skipped")
        );
        if let Some(a) = &self.argo_summary {
            out.push_str(a);
            out.push('\n');
        }
        let width = self.lines.iter().map(|l| l.what.len()).max().unwrap_or(0);
        const ORDER: [&str; 15] = [
            "off",
            "raw",
            "terraform",
            "values",
            "build",
            "cached",
            "through",
            "unused",
            "failed",
            "skipped",
            "unknown",
            "cluster",
            "appset",
            "app",
            "unlinted",
        ];
        let mut lines: Vec<&Line> = self.lines.iter().collect();
        lines.sort_by_key(|l| ORDER.iter().position(|o| *o == l.what));
        for l in lines {
            if l.detail.is_empty() {
                out.push_str(&format!("  {:width$}  {}\n", l.what, l.path));
            } else {
                out.push_str(&format!("  {:width$}  {}: {}\n", l.what, l.path, l.detail));
            }
        }
        out
    }
}

impl Sources {
    /// Once the files are read: what each Terraform file gave (manifests, the capacity and chart
    /// objects read as context, the template files it renders) and which values only Terraform
    /// knows, kept as placeholders.
    pub fn describe_terraform(&mut self, files: &[super::SourceFile]) {
        for l in self.lines.iter_mut().filter(|l| l.what == "terraform") {
            let mine: Vec<&super::SourceFile> = files.iter().filter(|f| f.path == l.path).collect();
            let count = |derived: bool| -> usize {
                mine.iter()
                    .filter(|f| (f.role == super::Role::Derived) == derived)
                    .map(|f| f.docs.len())
                    .sum()
            };
            let (manifests, context) = (count(false), count(true));
            if manifests + context == 0 {
                let typed = std::fs::read_to_string(&l.path)
                    .map(|t| typed_resources(&t))
                    .unwrap_or_default();
                l.detail = if typed.is_empty() {
                    "nothing read from it directly (its locals and variables are; template files it renders are read as files of their own)".into()
                } else {
                    let more = typed.len().saturating_sub(4);
                    format!(
                        "nothing read from it directly: {}{} {} the Kubernetes provider's typed resources, which are not read (its locals and variables are)",
                        typed[..typed.len().min(4)].join(", "),
                        if more > 0 {
                            format!(" and {more} more")
                        } else {
                            String::new()
                        },
                        if typed.len() == 1 { "is one of" } else { "are" },
                    )
                };
                continue;
            }
            let mut unknown: Vec<String> = Vec::new();
            for f in &mine {
                for d in &f.docs {
                    placeholders(d.root(), &mut unknown);
                }
            }
            let mut parts = vec![plural(manifests, "manifest")];
            if context > 0 {
                parts.push(format!(
                    "{} read as context (node group and chart pools, node classes)",
                    plural(context, "object")
                ));
            }
            let mut detail = parts.join(", ");
            if !unknown.is_empty() {
                let shown: Vec<&str> = unknown.iter().take(4).map(String::as_str).collect();
                let more = unknown.len().saturating_sub(shown.len());
                detail.push_str(&format!(
                    "; known only to Terraform, kept as placeholders: {}{}",
                    shown.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ));
            }
            l.detail = detail;
        }
    }
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Distinct `${…}` scalars under `n`, in document order.
fn placeholders(n: crate::yaml::Node<'_>, out: &mut Vec<String>) {
    match n.value() {
        crate::yaml::Value::Map(m) => {
            for (_, v) in m.iter() {
                placeholders(v, out);
            }
        }
        crate::yaml::Value::Seq(s) => s.iter().for_each(|i| placeholders(i, out)),
        crate::yaml::Value::Scalar { text } => {
            if let Some(inner) = text
                .trim()
                .strip_prefix("${")
                .and_then(|t| t.strip_suffix('}'))
                && !out.iter().any(|o| o == inner)
            {
                out.push(inner.to_string());
            }
        }
    }
}

/// The Kubernetes objects a Terraform file writes as the provider's typed resources
/// (`resource "kubernetes_deployment_v1" "worker"`: `kubernetes_deployment_v1.worker`), which
/// are not read; `kubernetes_manifest` is.
fn typed_resources(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("resource")?.trim_start();
            let mut words = rest.split('"').filter(|w| !w.trim().is_empty());
            let (kind, name) = (words.next()?, words.next()?);
            let typed = kind.starts_with("kubernetes_") && kind != "kubernetes_manifest";
            typed.then(|| format!("{kind}.{name}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn typed_resources_are_named() {
        let tf = "resource \"kubernetes_deployment_v1\" \"worker\" {\n  metadata { name = \"w\" }\n}\nresource \"kubernetes_manifest\" \"pool\" {}\nresource \"google_container_node_pool\" \"gpu\" {}\n";
        assert_eq!(
            super::typed_resources(tf),
            vec!["kubernetes_deployment_v1.worker".to_string()]
        );
    }
}
