//! Reading and parsing the files discovery found, each once, in parallel.

use super::files::{IoProblem, MAX_FILE_BYTES, Role, SourceFile, display_path, from_bytes};
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Reads and parses files in parallel. Unreadable content (binary, not UTF-8, too large) becomes a
/// located problem of the file; an I/O failure is returned separately. The `.tf` files of a
/// directory are read together (a Terraform module's files share its locals and variables).
pub fn load(paths: &[PathBuf]) -> (Vec<SourceFile>, Vec<IoProblem>) {
    let mut modules: std::collections::BTreeMap<&Path, Vec<usize>> = Default::default();
    let mut jobs: Vec<Vec<usize>> = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        if super::terraform::is_terraform(p) {
            modules
                .entry(p.parent().unwrap_or(Path::new("")))
                .or_default()
                .push(i);
        } else {
            jobs.push(vec![i]);
        }
    }
    jobs.extend(modules.into_values());
    let tests_only = super::testsuites::not_applied(paths);
    let mut results: Vec<(usize, Result<Vec<SourceFile>, IoProblem>)> = jobs
        .par_iter()
        .flat_map_iter(|job| -> Vec<(usize, Result<Vec<SourceFile>, IoProblem>)> {
            if job.len() == 1 && !super::terraform::is_terraform(&paths[job[0]]) {
                let i = job[0];
                // What a tool's test compares, expects refused, or evaluates offline.
                if super::testsuites::contains(&tests_only, &paths[i]) {
                    return vec![(i, Ok(Vec::new()))];
                }
                return vec![(i, load_one(&paths[i]).map(|f| f.into_iter().collect()))];
            }
            let module: Vec<PathBuf> = job.iter().map(|&i| paths[i].clone()).collect();
            job.iter()
                .copied()
                .zip(super::terraform::read_module(&module))
                .collect()
        })
        .collect();
    // In the order of the paths, as one file per path would be.
    results.sort_by_key(|(i, _)| *i);
    let mut files: Vec<SourceFile> = Vec::with_capacity(results.len());
    let mut problems = Vec::new();
    for (_, r) in results {
        match r {
            Ok(f) => files.extend(f),
            Err(p) => problems.push(p),
        }
    }
    // A template that Terraform renders is read with its module, as linted manifests: the copy
    // discovery read of it on its own goes.
    let linted: std::collections::HashSet<String> = files
        .iter()
        .filter(|f| f.role == Role::Linted && super::paths::is_yaml_template(Path::new(&f.path)))
        .map(|f| f.path.clone())
        .collect();
    if !linted.is_empty() {
        files.retain(|f| f.role != Role::Derived || !linted.contains(&f.path));
    }
    (files, problems)
}

/// `None`: a file of another language that holds no manifest.
fn load_one(p: &Path) -> Result<Option<SourceFile>, IoProblem> {
    let path = display_path(p);
    let io = |e: std::io::Error| IoProblem {
        path: path.clone(),
        message: e.to_string(),
    };
    if super::paths::is_yaml_template(p) {
        return Ok(super::terraform::read_template(p));
    }
    if super::files::is_quadlet(p) {
        return Ok(None);
    }
    // A test's assertion about the cluster (kuttl, chainsaw) is compared, never applied.
    if super::paths::named_assertion(p) {
        return Ok(None);
    }
    if super::paths::expected_output(&path) {
        let skipped = super::files::Skipped {
            reason: "a test's expected output".into(),
            marker: path.rsplit('/').next().unwrap_or(&path).to_string(),
            span: crate::yaml::Span::at(0),
            hint: Some("what a test compares a render with, never applied itself".into()),
        };
        return Ok(Some(SourceFile::skipped_whole(path, "".into(), skipped)));
    }
    if let Some(dir) = super::paths::proposal_dir(&path) {
        let skipped = super::files::Skipped {
            reason: "design proposal".into(),
            marker: format!("{dir}/"),
            span: crate::yaml::Span::at(0),
            hint: Some("an illustration of a design, never applied as it stands".into()),
        };
        return Ok(Some(SourceFile::skipped_whole(path, "".into(), skipped)));
    }
    if super::pages::is_page(p) || super::pages::is_chart_manifest(p) {
        // Kept (without objects) only for the releases it installs and the objects it shows.
        let text = match std::fs::metadata(p) {
            Ok(m) if m.len() <= MAX_FILE_BYTES => std::fs::read_to_string(p).unwrap_or_default(),
            _ => String::new(),
        };
        return Ok(super::pages::worth_keeping(p, &text).then(|| super::pages::kept(path, text)));
    }
    let file = std::fs::File::open(p).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Ok(Some(SourceFile::unreadable(
            path.clone(),
            format!("file is {len} bytes, over the {MAX_FILE_BYTES}-byte limit; not linted"),
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if let Ok(text) = std::str::from_utf8(&bytes)
        && let Some(chart) = super::paths::chart_render_sample(p, text)
    {
        let skipped = super::files::Skipped {
            reason: format!("a render of the chart `{chart}` kept in its directory"),
            marker: format!("# Source: {chart}/templates/"),
            span: crate::yaml::Span::at(0),
            hint: Some(
                "a sample of what the chart renders, never applied itself: lint the chart's render where it is deployed"
                    .into(),
            ),
        };
        return Ok(Some(SourceFile::skipped_whole(path, "".into(), skipped)));
    }
    Ok(Some(from_bytes(path, bytes)))
}
