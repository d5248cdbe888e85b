//! `gpuops render`: a platform profile into manifests, checked by lint before anything is written.

use super::output::print;
use crate::{Color, RenderArgs};
use gpuops::report::{self, HumanOptions};
use gpuops::source;
use std::io::IsTerminal;
use std::process::ExitCode;

pub(crate) fn render(args: RenderArgs) -> ExitCode {
    use gpuops::render::{self, RenderError};
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let shown = source::display_path(&args.profile);
    let fail = |e: &RenderError| {
        match e {
            RenderError::Profile(p) => {
                eprintln!("error: {p}");
                eprint!("{}", p.report(color));
            }
            other => eprintln!("error: {other}"),
        }
        ExitCode::from(2)
    };
    let platform = match render::load_profile(&args.profile, &shown) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let renderer = match render::Renderer::new(args.templates.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let files = match renderer.render(&platform, &shown) {
        Ok(f) => f,
        Err(e) => return fail(&e),
    };

    // Self-check: render's output must lint clean with every rule.
    let prefix = args
        .output
        .as_ref()
        .map(|d| format!("{}/", source::display_path(d).trim_end_matches('/')))
        .filter(|p| p != "/" && p != "./")
        .unwrap_or_default();
    let (sources, findings) = render::self_check(&files, &prefix);
    if !findings.is_empty() {
        let overridden = if renderer.overridden.is_empty() {
            "this is a bug in gpuops render; please report it with the profile".to_string()
        } else {
            format!(
                "check the overriding templates ({})",
                renderer.overridden.join(", ")
            )
        };
        return refuse(
            "the rendered manifests fail lint",
            &overridden,
            &findings,
            &sources,
            color,
        );
    }
    // On stderr, so the stream on stdout stays pipeable into kubectl.
    eprintln!(
        "{}",
        render::ceiling::line(&render::ceiling::total(&sources))
    );
    let files = if args.format == crate::RenderFormat::Terraform {
        let tf = render::terraform::files(&files);
        if let Err((sources, findings)) = render::self_check_terraform(&tf, &prefix, files.len()) {
            return refuse(
                "the Terraform form of the manifests does not read back clean",
                "this is a bug in gpuops render; please report it with the profile",
                &findings,
                &sources,
                color,
            );
        }
        tf
    } else {
        files
    };

    let Some(dir) = args.output else {
        match args.format {
            crate::RenderFormat::Yaml => print(&render::stream(&files)),
            crate::RenderFormat::Terraform => print(
                &files
                    .iter()
                    .map(|f| f.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        }
        return ExitCode::SUCCESS;
    };
    let dir_shown = source::display_path(&dir);
    if args.check {
        return match render::output::check(&dir, &files) {
            Ok(r) if r.drift.is_empty() => {
                println!("{dir_shown} is up to date with {shown} ({} files)", r.clean);
                ExitCode::SUCCESS
            }
            Ok(r) => {
                let mut out = String::new();
                for d in &r.drift {
                    out.push_str(d.diff());
                }
                print(&out);
                let count =
                    |f: fn(&render::output::Drift) -> bool| r.drift.iter().filter(|d| f(d)).count();
                eprintln!(
                    "error: {dir_shown} drifted from {shown}: {} changed, {} missing, {} stale; run `gpuops render {shown} -o {dir_shown}`",
                    count(|d| matches!(d, render::output::Drift::Changed { .. })),
                    count(|d| matches!(d, render::output::Drift::Missing { .. })),
                    count(|d| matches!(d, render::output::Drift::Stale { .. })),
                );
                ExitCode::from(1)
            }
            Err(e) => fail(&e.into()),
        };
    }
    match render::output::write(&dir, &files, args.force) {
        Ok(r) => {
            let mut out = String::new();
            for p in &r.written {
                out.push_str(&format!("wrote   {p}\n"));
            }
            for p in &r.removed {
                out.push_str(&format!("removed {p} (no longer in the profile)\n"));
            }
            out.push_str(&format!(
                "{} files in {dir_shown}: {} written, {} unchanged, {} removed\n",
                files.len(),
                r.written.len(),
                r.unchanged.len(),
                r.removed.len()
            ));
            print(&out);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e.into()),
    }
}

/// A self-check that failed: what, why nothing was written, and the findings (exit 2).
fn refuse(
    what: &str,
    advice: &str,
    findings: &[gpuops::diag::Diagnostic],
    sources: &[source::SourceFile],
    color: bool,
) -> ExitCode {
    eprintln!(
        "error: {what} ({} finding{}); nothing was written: {advice}",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" }
    );
    eprint!(
        "{}",
        report::human(findings, sources, HumanOptions { color, width: 100 })
    );
    ExitCode::from(2)
}
