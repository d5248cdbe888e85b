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
