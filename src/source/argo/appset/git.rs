//! The `git` generator over this repository's own tree (the working tree stands in for the
//! revision Argo CD would check out).
//!
//! `directories`: every directory but hidden ones, matched with Go's `path.Match` (`*` stays
//! within one path segment; `**` is no different); an `exclude: true` entry removes what it
//! matches. `files`: the tracked files (all files outside a git checkout), matched as
//! `git ls-files` matches a pathspec (`*` crosses `/`); each file is read as JSON or YAML, one
//! object or a list of objects, each a parameter set with its keys (flattened to `a.b` for
//! fasttemplate) and `path` (the file's directory), `path.basename`, `path.filename`,
//! `path.segments`/`path[N]` and their normalized forms, under `pathParamPrefix` when set.

use super::super::gotmpl::{Value, sanitize_name};
use super::GenError;
use super::params::{Params, Set, Style, flatten};
use crate::yaml::Node;
use std::collections::BTreeMap;
use std::path::Path;

/// Files larger than this are not read as parameters.
const MAX_FILE: u64 = 4 << 20;
/// Directories or files listed, at most.
const MAX_ENTRIES: usize = 200_000;

/// `path.Match`: `*` any run of non-`/`, `?` one non-`/`, `[…]` a class, `\` escapes.
pub(super) fn path_match(pattern: &str, name: &str) -> bool {
    wildmatch(pattern.as_bytes(), name.as_bytes(), true)
}

/// A git pathspec (without magic): a glob whose `*` also matches `/`, or a leading directory.
pub(super) fn pathspec_match(pattern: &str, path: &str) -> bool {
    let p = pattern.trim_start_matches("./").trim_start_matches('/');
    if !p.contains(['*', '?', '[']) {
        let dir = p.trim_end_matches('/');
        return path == dir || path.starts_with(&format!("{dir}/"));
    }
    wildmatch(p.as_bytes(), path.as_bytes(), false)
}

fn wildmatch(p: &[u8], s: &[u8], slash_special: bool) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        let step = match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some(b'?') if !(slash_special && s[si] == b'/') => Some(1),
            Some(b'[') => class(&p[pi..], s[si]).filter(|_| !(slash_special && s[si] == b'/')),
            Some(b'\\') if p.get(pi + 1) == Some(&s[si]) => Some(2),
            Some(&c) if c == s[si] && c != b'\\' => Some(1),
            _ => None,
        };
        match step {
            Some(n) => {
                pi += n;
                si += 1;
            }
            None => match star {
                // Backtrack: the last `*` takes one more byte (never a `/` in path.Match).
                Some((sp, ss)) if !(slash_special && s[ss] == b'/') => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                _ => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Matches a `[…]` class at the start of `p` against `c`: the class's length when it matches.
fn class(p: &[u8], c: u8) -> Option<usize> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'^' | b'!'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while let Some(&b) = p.get(i) {
        if b == b']' && !first {
            return (matched != negate).then_some(i + 1);
        }
        first = false;
        let lo = if b == b'\\' {
            i += 1;
            *p.get(i)?
        } else {
            b
        };
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&h| h != b']') {
            let hi = p[i + 2];
            matched |= lo <= c && c <= hi;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
    None
}

/// Directories of the repository (relative, `/`-separated, sorted), hidden ones left out as
/// Argo CD leaves them out.
fn directories(root: &Path) -> Vec<String> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .follow_links(false)
        .build();
    let mut out: Vec<String> = walker
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(root).ok()?;
            let s = rel.to_string_lossy().replace('\\', "/");
            (!s.is_empty()).then_some(s)
        })
        .take(MAX_ENTRIES)
        .collect();
    out.sort();
    out
}

/// The files of the repository (relative, sorted): those git tracks, else every file.
fn files(root: &Path) -> Vec<String> {
    let mut paths = crate::source::git::tracked_under(root);
    if paths.is_empty() {
        paths = ignore::WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.into_path())
            .take(MAX_ENTRIES)
            .collect();
    }
    let mut out: Vec<String> = paths
        .iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(root).ok()?;
            Some(rel.to_string_lossy().replace('\\', "/"))
        })
        .collect();
    out.sort();
    out
}

/// The `path` parameters of a directory (and of a file in it).
fn path_params(dir: &str, file: Option<&str>, style: Style, prefix: Option<&str>) -> Params {
    let segments: Vec<&str> = dir.split('/').collect();
    let base = segments.last().copied().unwrap_or_default();
    if style.go {
        let mut p = BTreeMap::from([
            ("path".to_string(), Value::Str(dir.into())),
            ("basename".into(), Value::Str(base.into())),
            ("basenameNormalized".into(), Value::Str(sanitize_name(base))),
            (
                "segments".into(),
                Value::List(segments.iter().map(|s| Value::Str((*s).into())).collect()),
            ),
        ]);
        if let Some(f) = file {
            p.insert("filename".into(), Value::Str(f.into()));
            p.insert("filenameNormalized".into(), Value::Str(sanitize_name(f)));
        }
        let path = Value::map(p);
        let top = match prefix {
            Some(pre) => (
                pre.to_string(),
                Value::map(BTreeMap::from([("path".to_string(), path)])),
            ),
            None => ("path".to_string(), path),
        };
        return Params::Go(BTreeMap::from([top]));
    }
    let name = match prefix {
        Some(pre) => format!("{pre}.path"),
        None => "path".into(),
    };
    let mut m = BTreeMap::from([
        (name.clone(), dir.to_string()),
        (format!("{name}.basename"), base.to_string()),
        (format!("{name}.basenameNormalized"), sanitize_name(base)),
    ]);
    if let Some(f) = file {
        m.insert(format!("{name}.filename"), f.to_string());
        m.insert(format!("{name}.filenameNormalized"), sanitize_name(f));
    }
    for (i, s) in segments.iter().enumerate().filter(|(_, s)| !s.is_empty()) {
        m.insert(format!("{name}[{i}]"), (*s).to_string());
    }
    Params::Flat(m)
}

/// The generator's path patterns: (include, exclude).
fn patterns(items: Node<'_>) -> (Vec<String>, Vec<String>) {
    let mut include = Vec::new();
    let mut exclude = Vec::new();
    for d in items.items() {
        let Some(p) = d.get("path").and_then(Node::as_str) else {
            continue;
        };
        let excluded = d
            .get("exclude")
            .and_then(Node::as_str)
            .is_some_and(|e| e == "true");
        if excluded {
            exclude.push(p.to_string());
        } else {
            include.push(p.to_string());
        }
    }
    (include, exclude)
}

pub(super) fn directory_sets(
    dirs: Node<'_>,
    root: &Path,
    style: Style,
    prefix: Option<&str>,
) -> Vec<Set> {
    let (include, exclude) = patterns(dirs);
    directories(root)
        .into_iter()
        .filter(|d| {
            include.iter().any(|p| path_match(p, d)) && !exclude.iter().any(|p| path_match(p, d))
        })
        .map(|d| Set {
            params: path_params(&d, None, style, prefix),
            label: format!("git directory {d}"),
            cluster: None,
        })
        .collect()
}

/// A file's parameter sets; `Err`: Argo CD cannot read it either.
fn file_sets(
    rel: &str,
    text: &str,
    style: Style,
    prefix: Option<&str>,
) -> Result<Vec<Set>, String> {
    let parsed = crate::yaml::parse(text, crate::yaml::Budget::default());
    if let Some(p) = parsed.problems.first() {
        return Err(format!("unable to parse file {rel}: {}", p.message));
    }
    let value = parsed
        .docs
        .first()
        .map_or(serde_json::Value::Object(Default::default()), |d| {
            crate::yaml::to_json(d.root())
        });
    let objects: Vec<serde_json::Value> = match value {
        serde_json::Value::Null => vec![serde_json::Value::Object(Default::default())],
        o @ serde_json::Value::Object(_) => vec![o],
        serde_json::Value::Array(a) if a.iter().all(serde_json::Value::is_object) => a,
        _ => {
            return Err(format!(
                "unable to parse file {rel}: not an object or a list of objects"
            ));
        }
    };
    let (dir, file) = match rel.rsplit_once('/') {
        Some((d, f)) => (d, f),
        None => (".", rel),
    };
    let many = objects.len() > 1;
    Ok(objects
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let own = Value::from_json(o);
            let mut params = path_params(dir, Some(file), style, prefix);
            match &mut params {
                Params::Go(m) => {
                    if let Value::Map(fields, _) = own {
                        for (k, v) in fields {
                            m.entry(k).or_insert(v);
                        }
                    }
                }
                Params::Flat(m) => {
                    let mut flat = BTreeMap::new();
                    flatten("", &own, &mut flat);
                    for (k, v) in flat {
                        m.entry(k).or_insert(v);
                    }
                }
            }
            let label = if many {
                format!("git file {rel} item {}", i + 1)
            } else {
                format!("git file {rel}")
            };
            Set {
                params,
                label,
                cluster: None,
            }
        })
        .collect())
}

pub(super) fn file_sets_of(
    list: Node<'_>,
    root: &Path,
    style: Style,
    prefix: Option<&str>,
) -> Result<Vec<Set>, GenError> {
    let (include, exclude) = patterns(list);
    let mut out = Vec::new();
    for rel in files(root) {
        if !include.iter().any(|p| pathspec_match(p, &rel))
            || exclude.iter().any(|p| pathspec_match(p, &rel))
        {
            continue;
        }
        let path = root.join(&rel);
        let too_big = std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_FILE);
        if too_big {
            return Err(GenError::NotEvaluated(format!(
                "the `git` generator's file {rel} is over {} MiB",
                MAX_FILE >> 20
            )));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| {
            GenError::NotEvaluated(format!("the `git` generator's file {rel}: {e}"))
        })?;
        out.extend(file_sets(&rel, &text, style, prefix).map_err(GenError::Failed)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::argo::gotmpl::Missing;

    #[test]
    fn path_match_stays_in_one_segment_and_pathspecs_do_not() {
        assert!(path_match("apps/*", "apps/train"));
        assert!(!path_match("apps/*", "apps/train/sub"));
        assert!(!path_match("apps/**", "apps/train/sub"));
        assert!(path_match("apps/[a-t]*", "apps/serve"));
        assert!(!path_match("apps/[!a-t]*", "apps/serve"));
        assert!(path_match("apps/?erve", "apps/serve"));
        assert!(pathspec_match(
            "teams/*/config.json",
            "teams/a/b/config.json"
        ));
        assert!(pathspec_match(
            "teams/**/config.json",
            "teams/a/config.json"
        ));
        assert!(pathspec_match("teams", "teams/a/config.json"));
        assert!(!pathspec_match("teams/*.yaml", "teams/a.json"));
    }

    #[test]
    fn a_file_gives_a_set_per_object_with_its_path() {
        let fast = Style {
            go: false,
            missing: Missing::Default,
        };
        let sets = file_sets(
            "teams/vision/config.yaml",
            "team: vision\ncluster: {name: prod}\nreplicas: 2\n",
            fast,
            None,
        )
        .unwrap();
        let Params::Flat(m) = &sets[0].params else {
            unreachable!()
        };
        assert_eq!(m["cluster.name"], "prod");
        assert_eq!(m["replicas"], "2");
        assert_eq!(m["path"], "teams/vision");
        assert_eq!(m["path.filename"], "config.yaml");
        assert_eq!(m["path[1]"], "vision");
        let go = Style {
            go: true,
            missing: Missing::Error,
        };
        let sets = file_sets("a.json", "[{\"x\": 1}, {\"x\": 2}]", go, Some("cfg")).unwrap();
        assert_eq!(sets.len(), 2);
        assert_eq!(
            sets[1].label,
            "a.json item 2".replace("a.json", "git file a.json")
        );
        let Params::Go(m) = &sets[0].params else {
            unreachable!()
        };
        assert_eq!(m["x"], Value::Float(1.0));
        assert!(matches!(&m["cfg"], Value::Map(..)));
        assert!(file_sets("a.json", "[1, 2]", go, None).is_err());
    }
}
