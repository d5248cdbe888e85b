use super::Ctx;
use crate::diag::Diagnostic;
use crate::quantity::is_placeholder;
use crate::yaml::Yaml11;

declare_rule! {
    /// ## What it does
    /// Flags an explicit EBS volume in an EC2NodeClass (or an older `AWSNodeTemplate`)
    /// `spec.blockDeviceMappings[].ebs` that is not encrypted: `encrypted: false`, a quoted
    /// `"false"`, or a `kmsKeyID` without `encrypted: true`. A volume with no `encrypted` field
    /// (and no key) takes the account's EBS encryption default, which the repository does not
    /// show, and is not flagged; nor is one restored from a snapshot (`snapshotID`), which takes
    /// the snapshot's encryption.
    ///
    /// ## Why is this bad?
    /// The volumes Karpenter creates when `blockDeviceMappings` is omitted are encrypted, but an
    /// explicit mapping replaces those defaults and `encrypted` defaults to false. Node disks then
    /// hold container images, model weights, datasets, checkpoints and `emptyDir` contents in the
    /// clear, which fails most compliance baselines (unless the account enforces EBS encryption
    /// by default). A quoted `"false"` is not even a boolean: the API server rejects the class.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: karpenter.k8s.aws/v1
    /// kind: EC2NodeClass
    /// metadata:
    ///   name: gpu
    /// spec:
    ///   blockDeviceMappings:
    ///     - deviceName: /dev/xvda
    ///       ebs:
    ///         volumeSize: 200Gi
    ///         volumeType: gp3
    ///         # no `encrypted: true`
    /// ```
    ///
    /// ## Fix
    /// Set `encrypted: true` on every explicit volume (add `kmsKeyID` for a customer-managed key):
    /// ```yaml
    ///       ebs:
    ///         volumeSize: 200Gi
    ///         volumeType: gp3
    ///         encrypted: true
    /// ```
    name: "ebs-unencrypted",
    category: "security",
    kinds: &["EC2NodeClass", "AWSNodeTemplate"],
    severity: Warning,
    summary: "an explicit EC2NodeClass EBS volume that is not encrypted",
    check: check,
    chunked: true,
}

fn check(cx: &Ctx, out: &mut Vec<Diagnostic>) {
    for (o, class) in cx.node_classes() {
        for m in class.block_device_mappings() {
            let Some((ebs_key, ebs)) = m.entry("ebs") else {
                continue;
            };
            if ebs.as_map().is_none() {
                continue;
            }
            let device = m
                .get("deviceName")
                .and_then(|n| n.as_str())
                .map_or_else(|| "an EBS volume".to_string(), |d| format!("volume `{d}`"));
            let kms = ebs.get("kmsKeyID").is_some_and(|n| !n.is_null());
            // Without `encrypted` the volume takes the account's EBS encryption default, which no
            // file here shows: only a `kmsKeyID` says encryption was meant and is not on.
            let (node, why) = match ebs.entry("encrypted") {
                None if ebs.get("snapshotID").is_some_and(|n| !n.is_null()) => continue,
                None if !kms => continue,
                None => (
                    ebs_key,
                    "names a `kmsKeyID` but has no `encrypted: true` (the key alone does not turn encryption on, and `encrypted` defaults to false unless the account turns on EBS encryption by default)".to_string(),
                ),
                Some((_, v)) if v.is_null() && !kms => continue,
                // `encrypted:` with nothing after it: the key is the visible place.
                Some((k, v)) if v.is_null() => {
                    let at = if v.span().is_empty() { k } else { v };
                    (
                        at,
                        "leaves `encrypted` empty (it defaults to false unless the account turns on EBS encryption by default)".to_string(),
                    )
                }
                Some((_, v)) => {
                    let Some(text) = v.as_str() else { continue };
                    if is_placeholder(text) {
                        continue;
                    }
                    match v.yaml11() {
                        Some(Yaml11::Bool) if is_false(text) => {
                            (v, format!("sets `encrypted: {text}`"))
                        }
                        Some(Yaml11::Str) if is_false(text) => (
                            v,
                            format!(
                                "sets `encrypted` to the string {text:?}, which the API server rejects (the field is a boolean) and which would not encrypt anyway"
                            ),
                        ),
                        _ => continue,
                    }
                }
            };
            let help = if kms {
                "set `encrypted: true` next to `kmsKeyID` (the key alone does not turn encryption on)"
            } else {
                "set `encrypted: true` on the `ebs` block (and `kmsKeyID` for a customer-managed key)"
            };
            out.push(
                cx.on(
                    o,
                    node,
                    format!(
                        "{device} of {} {why}: the node's disk (container images, model weights, checkpoints, emptyDir data) sits on EBS unencrypted",
                        o.describe()
                    ),
                )
                .help(help),
            );
        }
    }
}

/// Whether a scalar's text is a YAML 1.1 false (`false`, `no`, `off`, …).
fn is_false(text: &str) -> bool {
    matches!(
        text,
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "n" | "N" | "off" | "Off" | "OFF"
    )
}
