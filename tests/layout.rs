//! The project's shape: the layers of `src/` point one way (no top-level module reaches,
//! through `crate::` paths, a module that reaches it back; test code, from a file's first
//! `#[cfg(test)]` on, may reach anywhere), and the documentation's links lead somewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every top-level module (`src/<m>.rs` or `src/<m>/`) and the modules its code names.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut mods = BTreeSet::new();
    for e in std::fs::read_dir(src).expect("src/ is readable").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.path().is_dir() {
            mods.insert(name);
        } else if let Some(m) = name.strip_suffix(".rs")
            && m != "lib"
            && m != "main"
        {
            mods.insert(m.to_string());
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        mods.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let prefix = concat!("crate", "::");
    for f in files {
        let rel = f.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a component");
        let first = first.as_os_str().to_string_lossy();
        let top = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if !mods.contains(&top) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("source is UTF-8");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut named = BTreeSet::new();
        for (at, _) in code.match_indices(prefix) {
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}`: each path's first segment.
                let inner = &group[..group.find('}').unwrap_or(group.len())];
                named.extend(inner.split(',').map(|p| ident(p.trim())));
            } else {
                named.insert(ident(rest));
            }
        }
        let edges = graph.get_mut(&top).expect("a module");
        edges.extend(named.into_iter().filter(|m| *m != top && mods.contains(m)));
    }
    graph
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable").flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The modules reachable from `from` (not counting itself unless a path leads back).
fn reachable(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<&str> = graph[from].iter().map(String::as_str).collect();
    while let Some(m) = stack.pop() {
        if seen.insert(m.to_string()) {
            stack.extend(graph[m].iter().map(String::as_str));
        }
    }
    seen
}

#[test]
fn top_level_modules_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    let cycles: Vec<String> = graph
        .keys()
        .filter(|m| reachable(&graph, m).contains(*m))
        .map(|m| {
            let back: Vec<&String> = graph[m]
                .iter()
                .filter(|n| reachable(&graph, n).contains(m))
                .collect();
            format!("{m} -> {back:?} -> … -> {m}")
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "top-level modules that reach themselves (move what the lower layer borrows down):\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_graph_sees_the_layers_it_checks() {
    // Guards the scan itself: an empty graph would pass the cycle test vacuously.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph["rules"].contains("index"), "{:?}", graph["rules"]);
    assert!(graph["index"].contains("sched"), "{:?}", graph["index"]);
    assert!(graph["sched"].contains("model"), "{:?}", graph["sched"]);
    assert!(!graph["model"].contains("sched"), "{:?}", graph["model"]);
    assert!(!graph["config"].contains("rules"), "{:?}", graph["config"]);
}

/// GitHub's anchor for a heading: lower case, spaces to `-`, punctuation other than `-`/`_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// Relative link targets `](target)` of a Markdown text, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (at, _) in line.match_indices("](") {
            let rest = &line[at + 2..];
            if let Some(end) = rest.find(')') {
                let target = &rest[..end];
                if !target.contains("://") && !target.starts_with("mailto:") {
                    out.push(target.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn readme_and_docs_links_lead_to_files_and_headings_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
    {
        if e.path().extension().is_some_and(|x| x == "md") {
            pages.push(e.path());
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("a page");
        for link in links(&text) {
            let (file, frag) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(file)
            };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
            } else if !frag.is_empty()
                && target.extension().is_some_and(|x| x == "md")
                && !anchors(&std::fs::read_to_string(&target).unwrap_or_default()).contains(frag)
            {
                broken.push(format!("{}: {link} (no such heading)", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let linked: BTreeSet<String> = links(&readme)
        .into_iter()
        .map(|l| l.split('#').next().unwrap_or_default().to_string())
        .collect();
    for e in std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
    {
        let name = format!("docs/{}", e.file_name().to_string_lossy());
        assert!(
            linked.contains(&name),
            "{name} is not linked from README.md"
        );
    }
    assert!(
        readme.lines().count() <= 300,
        "README.md: keep it to a few screens"
    );
}
