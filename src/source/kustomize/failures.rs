//! What a failed build says about itself: inputs a build step generates, forms of older
//! kustomize releases, crashes of kustomize; each certain to fail only where something in view
//! deploys the kustomization.

/// Whether kustomize failed because a file or directory it reads does not exist, or the
/// kustomization is still an empty placeholder: inputs a build step usually generates (`make`
/// writing `params.env`, a script filling a template, Terraform writing the resources).
pub(crate) fn lacks_input(raw: &str) -> bool {
    [
        "no such file",
        "evalsymlink failure",
        "not a valid directory",
        "kustomization.yaml is empty",
    ]
    .iter()
    .any(|m| raw.contains(m))
}

/// Whether kustomize found no kustomization in a directory it lists where a template of one
/// lies (`kustomization.yaml.in`, which `make` fills in): an input a build step generates. `message`
/// is kustomize's, its paths as shown (relative to the working directory).
pub(crate) fn generated_kustomization(message: &str) -> bool {
    let Some((_, rest)) = message.split_once("unable to find one of 'kustomization.yaml'") else {
        return false;
    };
    let Some((dir, _)) = rest
        .split_once("in directory '")
        .and_then(|(_, d)| d.split_once('\''))
    else {
        return false;
    };
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().to_ascii_lowercase();
            name.starts_with("kustomization.")
                && !matches!(name.as_str(), "kustomization.yaml" | "kustomization.yml")
        })
    })
}

/// The YAML and JSON files a shell script or Makefile writes through a redirection or `tee`
/// (`… | kubeseal > ${DIR}/secrets/token.yaml`), as it names them; commented lines aside.
pub(crate) fn written_files(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let targets = line
            .match_indices('>')
            .map(|(i, _)| line[i + 1..].trim_start_matches('>'))
            .chain(
                line.match_indices("tee ")
                    .map(|(i, m)| &line[i + m.len()..]),
            );
        for rest in targets {
            let word = rest
                .split_whitespace()
                .find(|w| !w.starts_with('-'))
                .unwrap_or("");
            let word = word.trim_matches(['"', '\'', ';', ')']);
            let data = [".yaml", ".yml", ".json"].iter().any(|e| word.ends_with(e));
            if data && !out.iter().any(|w| w == word) {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// The script of `outputs` (script, file it writes) that writes the file whose absence failed
/// the build (`lstat dir/secrets/token.yaml: no such file or directory`): the same file name in
/// a directory of the same name, or the same name where the script names no directory.
pub(crate) fn written_by<'o>(outputs: &'o [(String, String)], raw: &str) -> Option<&'o str> {
    let (_, rest) = raw.split_once("lstat ")?;
    let (missing, _) = rest.split_once(": no such file")?;
    let tail = |p: &str| -> Vec<String> { p.rsplit('/').take(2).map(str::to_string).collect() };
    let want = tail(missing);
    outputs.iter().find_map(|(script, written)| {
        let got = tail(written);
        let same = match got.as_slice() {
            [name] => want.first() == Some(name),
            [name, dir] if dir.contains('$') => want.first() == Some(name),
            _ => got == want,
        };
        same.then_some(script.as_str())
    })
}

/// Whether the build fails only because it reads a file outside the kustomization's directory,
/// which kustomize refuses under its default load restrictor. Such a kustomization builds with
/// `--load-restrictor LoadRestrictionsNone`, the option its author evidently uses and Argo CD
/// can be given (`kustomize.buildOptions`): like a missing input, certain to fail only where
/// something in view deploys it.
pub(crate) fn outside_root(raw: &str) -> bool {
    raw.contains("security; file") && raw.contains("is not in or below")
}

/// The form an older kustomize accepted and a current one refuses, when that is all the build
/// fails on: such a tree is built with the older release its repository was written for, so
/// like a missing input it is certain to fail only where something in view deploys it.
pub(crate) fn older_form(raw: &str) -> Option<&'static str> {
    if raw.contains("cannot unmarshal string into Go struct field Kustomization.patches") {
        // kustomize v1's `patches:` list of strategic-merge files, `patchesStrategicMerge` since.
        return Some(
            "a list of patch file names under `patches:`, which kustomize v1 and v2 read as strategic-merge patches",
        );
    }
    if raw.contains("while decoding JSON: json: unknown field \"apiGroup\"")
        || raw.contains("while decoding JSON: json: unknown field \"apiVersion\"")
    {
        // A configurations file's field spec: kustomize before v4 decoded it leniently and
        // ignored what it does not read (it reads `group` and `version`).
        return Some(
            "a field spec with `apiGroup` or `apiVersion` in a configurations file, which kustomize before v4 ignored",
        );
    }
    if raw.contains("namespace is blank for resource") {
        // Refused since kustomize v4.5; before, the blank namespace passed through.
        return Some(
            "a blank `namespace:` in a resource, which kustomize before v4.5 passed through",
        );
    }
    // `vars` or field specs that index lists by number (`containers/0/env/0/value`), which
    // kustomize v3 followed and kyaml (v4 on) reads as field names.
    let numbered = raw
        .split("considering field '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .is_some_and(|path| {
            path.split('/')
                .any(|seg| !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()))
        });
    (numbered && raw.contains("wrong node kind"))
        .then_some("a field path that indexes a list by number, which kustomize v3 followed")
}

/// Whether kustomize crashed (a Go panic) rather than reported what is wrong: a fault of
/// kustomize, which another release may not have, so not certainly the kustomization's.
pub(crate) fn crashed(raw: &str) -> bool {
    raw.contains("panic: ") && raw.contains("goroutine ")
}

/// Whether the build fails only because a `vars` entry reads the `metadata.namespace` of a
/// resource that has none: the namespace comes from whatever builds it (a parent's
/// `namespace:`, an installer), so like a missing input it is certain to fail only where
/// something in view deploys it.
pub(crate) fn namespace_from_builder(raw: &str) -> bool {
    raw.contains("field specified in var")
        && raw.contains("{metadata.namespace}")
        && raw.contains("not found in corresponding resource")
}

/// Whether a kustomization directory lies inside a Helm chart's (its own or a parent holds
/// `Chart.yaml`).
pub(crate) fn in_chart(dir: &std::path::Path) -> bool {
    dir.ancestors().any(|d| d.join("Chart.yaml").is_file())
}

/// Whether a kustomize message names the path `p` as it prints it: quoted, relative to some
/// directory above it (`'manifests/networkpolicies'`).
pub(super) fn names_path(message: &str, p: &std::path::Path) -> bool {
    let p = p.to_string_lossy();
    message.split('\'').skip(1).step_by(2).any(|quoted| {
        let q = quoted.trim_start_matches("./");
        !q.is_empty() && (p == q || p.ends_with(&format!("/{q}")))
    })
}

/// The key of the kustomization a decoding error names (`… Go struct field
/// Kustomization.patches of type types.Patch`): the field that does not read.
pub(super) fn field_named(
    k: &crate::source::tree::Kustomization,
    message: &str,
) -> Option<crate::yaml::Span> {
    let (_, rest) = message.split_once("Kustomization.")?;
    let field: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    k.root()?
        .entries()
        .find(|(key, _, _)| key.eq_ignore_ascii_case(&field))
        .map(|(_, key, _)| key.span())
}

#[cfg(test)]
mod tests {
    use super::{written_by, written_files};

    #[test]
    fn files_a_script_writes() {
        let sh = "# kubectl … > skipped.yaml\nkubectl create secret generic t -o yaml | kubeseal | yq eval -P > ${DIR}/secrets/token.yaml\nhelm template x | tee -a \"out/all.yaml\"\necho done >> log.txt\n";
        assert_eq!(
            written_files(sh),
            vec!["${DIR}/secrets/token.yaml", "out/all.yaml"]
        );
        let outputs: Vec<(String, String)> = written_files(sh)
            .into_iter()
            .map(|w| ("setup.sh".to_string(), w))
            .collect();
        let missing = |p: &str| {
            format!("evalsymlink failure on '{p}' : lstat {p}: no such file or directory")
        };
        assert_eq!(
            written_by(&outputs, &missing("apps/secrets/token.yaml")),
            Some("setup.sh")
        );
        // The same name in another directory is another file.
        assert_eq!(
            written_by(&outputs, &missing("apps/other/token.yaml")),
            None
        );
        assert_eq!(
            written_by(&outputs, &missing("apps/secrets/skipped.yaml")),
            None
        );
    }
}
