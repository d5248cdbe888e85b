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
