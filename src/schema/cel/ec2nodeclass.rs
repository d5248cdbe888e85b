//! The EC2NodeClass CRD's CEL rules (Karpenter's AWS provider, v1), checked by hand: role or
//! instance profile, AMI, subnet, security group and capacity reservation selector terms,
//! restricted tags, block device mappings, network interfaces, connection tracking, the kubelet
//! settings and the placement group selector.

use super::*;

mod kubelet;

const KIND: &str = "EC2NodeClass";

fn rule<'a>(out: &mut Vec<Violation<'a>>, at: Node<'a>, what: String, message: &str) {
    helped(out, at, what, message, None);
}

fn helped<'a>(
    out: &mut Vec<Violation<'a>>,
    at: Node<'a>,
    what: String,
    message: &str,
    help: Option<&str>,
) {
    push(
        out,
        at,
        format!("{what}: {}", cel_layer(KIND, message)),
        help,
    );
}

/// Whether an object sets a field (a `null` is pruned before the rules run).
fn has(n: Node<'_>, field: &str) -> bool {
    n.get(field).is_some_and(|v| !v.is_null())
}

pub fn ec2nodeclass<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    role(spec, out);
    ami_terms(spec, out);
    for (field, fields, exclusive) in TERMS {
        selector_terms(spec, field, fields, exclusive, out);
    }
    tags(spec, out);
    block_devices(spec, out);
    network_interfaces(spec, out);
    kubelet::kubelet(spec, out);
    kubelet::placement_group(spec, out);
    if let Some((ck, c)) = spec.entry("connectionTracking")
        && c.as_map().is_some()
        && !["tcpEstablishedTimeout", "udpStreamTimeout", "udpTimeout"]
            .iter()
            .any(|f| has(c, f))
    {
        rule(
            out,
            ck,
            "`spec.connectionTracking` sets no timeout".into(),
            "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
        );
    }
}

/// Exactly one of `role` and `instanceProfile`, and neither empty.
fn role<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    const ONE: &str = "must specify exactly one of ['role', 'instanceProfile']";
    match (has(spec, "role"), spec.entry("instanceProfile")) {
        (true, Some((ipk, ip))) if !ip.is_null() => helped(
            out,
            ipk,
            "`spec.role` and `spec.instanceProfile` are both set".into(),
            ONE,
            Some("keep one of them"),
        ),
        (false, None) => {
            if let Some((k, _)) = spec.as_map().and_then(|m| m.first()) {
                helped(
                    out,
                    k,
                    "`spec` has neither `role` nor `instanceProfile`".into(),
                    ONE,
                    Some("set `role` to the node IAM role name"),
                );
            }
        }
        _ => {}
    }
    for field in ["role", "instanceProfile"] {
        if let Some(v) = spec.get(field)
            && v.as_str() == Some("")
            && v.yaml11().is_some()
        {
            rule(
                out,
                v,
                format!("`spec.{field}` is empty"),
                &format!("{field} cannot be empty"),
            );
        }
    }
}

const FAMILIES: [(&str, &str); 6] = [
    ("al2", "AL2"),
    ("al2023", "AL2023"),
    ("bottlerocket", "Bottlerocket"),
    ("windows2019", "Windows2019"),
    ("windows2022", "Windows2022"),
    ("windows2025", "Windows2025"),
];

/// AMI selector terms: each selects by something, an alias alone (in its term and in the list),
/// an `id` alone in its term, the alias `family@version` of a known family, and `amiFamily`
/// matching the alias (or `Custom`), or set when there is no alias.
fn ami_terms<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some((tk, list)) = spec.entry("amiSelectorTerms") else {
        return;
    };
    let terms: Vec<Node<'_>> = list.items().collect();
    if terms.iter().any(|t| {
        !["tags", "id", "name", "alias", "ssmParameter"]
            .iter()
            .any(|f| has(*t, f))
    }) {
        rule(
            out,
            tk,
            "an `amiSelectorTerms` entry selects by nothing".into(),
            "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
        );
    }
    let mut alias_family = None;
    for (i, t) in terms.iter().enumerate() {
        tag_map(*t, &format!("spec.amiSelectorTerms[{i}].tags"), out);
        let others = |fields: &[&str]| fields.iter().any(|f| has(*t, f));
        if has(*t, "id") && others(&["alias", "tags", "name", "owner"]) {
            rule(
                out,
                tk,
                format!("`spec.amiSelectorTerms[{i}]` has `id` and other fields"),
                "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
            );
        }
        let Some((ak, av)) = t.entry("alias").filter(|(_, v)| !v.is_null()) else {
            continue;
        };
        if others(&["id", "tags", "name", "owner"]) {
            rule(
                out,
                ak,
                format!("`spec.amiSelectorTerms[{i}].alias` is set with other fields"),
                "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
            );
        } else if terms.len() > 1 {
            rule(
                out,
                ak,
                format!("`spec.amiSelectorTerms[{i}].alias` is not the only term"),
                "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
            );
        }
        let Some(alias) = text(Some(av)) else {
            alias_family = Some(None);
            continue;
        };
        let (fam, ver) = alias.split_once('@').unwrap_or((alias, ""));
        let known = FAMILIES.iter().find(|(f, _)| *f == fam);
        alias_family = Some(known.map(|(_, name)| *name));
        let shaped =
            !fam.is_empty() && fam.bytes().all(|b| b.is_ascii_alphanumeric()) && !ver.is_empty();
        if !shaped {
            helped(
                out,
                av,
                format!("alias `{alias}` is not `family@version`"),
                "'alias' is improperly formatted, must match the format 'family@version'",
                Some("e.g. `al2023@v20250117` or `bottlerocket@v1.30.0`"),
            );
        } else if known.is_none() {
            rule(
                out,
                av,
                format!("alias `{alias}` names an unknown family"),
                "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
            );
        } else if fam.starts_with("windows") && ver != "latest" {
            rule(
                out,
                av,
                format!("alias `{alias}` pins a Windows version"),
                "windows families may only specify version 'latest'",
            );
        }
    }
    match (alias_family, spec.get("amiFamily").filter(|f| !f.is_null())) {
        (None, None) if !terms.is_empty() => helped(
            out,
            tk,
            "`spec.amiFamily` is required when no `amiSelectorTerms` entry is an `alias`".into(),
            "must specify amiFamily if amiSelectorTerms does not contain an alias",
            Some("set `amiFamily` (e.g. `AL2023`), or select the AMI with an alias"),
        ),
        (Some(Some(name)), Some(f)) => {
            if let Some(family) = text(Some(f))
                && family != name
                && family != "Custom"
            {
                rule(
                    out,
                    f,
                    format!("`spec.amiFamily` is `{family}` but the alias is {name}'s"),
                    &format!(
                        "if set, amiFamily must be '{name}' or 'Custom' when using {} {name} alias",
                        if name.starts_with('A') { "an" } else { "a" }
                    ),
                );
            }
        }
        _ => {}
    }
}

/// Subnet, security group and capacity reservation terms: the fields a term may select by, and
/// which of them the CRD makes exclusive (a rule over *all* terms, as the CRD writes it).
type Terms = (&'static str, &'static [&'static str], &'static [Exclusive]);
/// A field, the fields it may not share a term with, and the rule's message.
type Exclusive = (&'static str, &'static [&'static str], &'static str);

const TERMS: [Terms; 3] = [
    (
        "subnetSelectorTerms",
        &["tags", "id"],
        &[(
            "id",
            &["tags"],
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a subnet selector term",
        )],
    ),
    (
        "securityGroupSelectorTerms",
        &["tags", "id", "name"],
        &[
            (
                "id",
                &["tags", "name"],
                "'id' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
            ),
            (
                "name",
                &["tags", "id"],
                "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group selector term",
            ),
        ],
    ),
    (
        "capacityReservationSelectorTerms",
        &["tags", "id", "instanceMatchCriteria"],
        &[(
            "id",
            &["tags", "ownerID", "instanceMatchCriteria"],
            "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
        )],
    ),
];

fn selector_terms<'a>(
    spec: Node<'a>,
    field: &str,
    fields: &[&str],
    exclusive: &[Exclusive],
    out: &mut Vec<Violation<'a>>,
) {
    let Some((tk, list)) = spec.entry(field) else {
        return;
    };
    let Some(terms) = list.as_seq() else {
        return;
    };
    if terms.is_empty() {
        // Capacity reservations may be an empty list; the others may not.
        if field != "capacityReservationSelectorTerms" {
            rule(
                out,
                tk,
                format!("`spec.{field}` is empty"),
                &format!("{field} cannot be empty"),
            );
        }
        return;
    }
    if terms.iter().any(|t| !fields.iter().any(|f| has(t, f))) {
        let names: Vec<String> = fields.iter().map(|f| format!("'{f}'")).collect();
        rule(
            out,
            tk,
            format!("a `spec.{field}` entry selects by nothing"),
            &format!("expected at least one, got none, [{}]", names.join(", ")),
        );
    }
    for (i, t) in terms.iter().enumerate() {
        tag_map(t, &format!("spec.{field}[{i}].tags"), out);
    }
    for (one, with, message) in exclusive {
        if terms
            .iter()
            .all(|t| has(t, one) && with.iter().any(|w| has(t, w)))
        {
            rule(
                out,
                tk,
                format!("`spec.{field}` sets `{one}` with other fields"),
                message,
            );
        }
    }
}

/// A selector term's tags: no empty key, no empty value.
fn tag_map<'a>(term: Node<'a>, at: &str, out: &mut Vec<Violation<'a>>) {
    let Some((tk, tags)) = term.entry("tags") else {
        return;
    };
    if tags
        .entries()
        .any(|(k, _, v)| k.is_empty() || v.as_str() == Some(""))
    {
        rule(
            out,
            tk,
            format!("`{at}` has an empty key or value"),
            "empty tag keys or values aren't supported",
        );
    }
}

/// `spec.tags`: no empty key, none Karpenter or EKS sets itself.
fn tags<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    for (k, kn, _) in spec.get("tags").into_iter().flat_map(Node::entries) {
        let message = match k {
            "" => "empty tag keys aren't supported",
            "eks:eks-cluster-name" => "tag contains a restricted tag matching eks:eks-cluster-name",
            k if k.starts_with("kubernetes.io/cluster") => {
                "tag contains a restricted tag matching kubernetes.io/cluster/"
            }
            "karpenter.sh/nodepool" => {
                "tag contains a restricted tag matching karpenter.sh/nodepool"
            }
            "karpenter.sh/nodeclaim" => {
                "tag contains a restricted tag matching karpenter.sh/nodeclaim"
            }
            "karpenter.k8s.aws/ec2nodeclass" => {
                "tag contains a restricted tag matching karpenter.k8s.aws/ec2nodeclass"
            }
            _ => continue,
        };
        rule(
            out,
            kn,
            format!("`spec.tags` key `{k}` is restricted"),
            message,
        );
    }
}

/// Block device mappings: one root volume at most; an EBS volume with a size or a snapshot, and
/// an initialization rate only with a snapshot.
fn block_devices<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some((bk, list)) = spec.entry("blockDeviceMappings") else {
        return;
    };
    let roots = list
        .items()
        .filter(|m| m.get("rootVolume").and_then(Node::as_str) == Some("true"))
        .count();
    if roots > 1 {
        rule(
            out,
            bk,
            format!("`spec.blockDeviceMappings` has {roots} root volumes"),
            "must have only one blockDeviceMappings with rootVolume",
        );
    }
    for (i, m) in list.items().enumerate() {
        let Some((ek, ebs)) = m.entry("ebs").filter(|(_, e)| e.as_map().is_some()) else {
            continue;
        };
        if !has(ebs, "snapshotID") && !has(ebs, "volumeSize") {
            rule(
                out,
                ek,
                format!(
                    "`spec.blockDeviceMappings[{i}].ebs` has neither `snapshotID` nor `volumeSize`"
                ),
                "snapshotID or volumeSize must be defined",
            );
        }
        if has(ebs, "volumeInitializationRate")
            && ebs
                .get("snapshotID")
                .is_none_or(|s| s.is_null() || s.as_str() == Some(""))
        {
            rule(
                out,
                ek,
                format!(
                    "`spec.blockDeviceMappings[{i}].ebs` sets `volumeInitializationRate` without `snapshotID`"
                ),
                "snapshotID must be set when volumeInitializationRate is set",
            );
        }
    }
}

/// Network interfaces: a primary ENA interface (card 0, device 0), each card and device pair
/// once, at most one EFA-only device per card.
fn network_interfaces<'a>(spec: Node<'a>, out: &mut Vec<Violation<'a>>) {
    let Some((nk, list)) = spec.entry("networkInterfaces") else {
        return;
    };
    let mut nics = Vec::new();
    for n in list.items() {
        let int = |f: &str| n.get(f).and_then(Node::as_str)?.parse::<i64>().ok();
        let ty = n.get("interfaceType").and_then(Node::as_str);
        match (int("networkCardIndex"), int("deviceIndex"), ty) {
            (Some(c), Some(d), Some(t))
                if c >= 0 && d >= 0 && matches!(t, "interface" | "efa-only") =>
            {
                nics.push((c, d, t))
            }
            // A field the schema rejects, or one the linter cannot read: the rules cannot run.
            _ => return,
        }
    }
    if nics.is_empty() {
        return;
    }
    if !nics
        .iter()
        .any(|&(c, d, t)| c == 0 && d == 0 && t == "interface")
    {
        rule(
            out,
            nk,
            "`spec.networkInterfaces` has no primary interface (card 0, device 0, `interface`)"
                .into(),
            "networkInterfaces must include a primary interface with interfaceType='interface'",
        );
    }
    let clash = nics.iter().any(|&(c, d, t)| {
        nics.iter()
            .filter(|&&(c2, d2, _)| (c2, d2) == (c, d))
            .count()
            != 1
            || (t == "efa-only"
                && nics
                    .iter()
                    .filter(|&&(c2, _, t2)| c2 == c && t2 == "efa-only")
                    .count()
                    != 1)
    });
    if clash {
        rule(
            out,
            nk,
            "`spec.networkInterfaces` repeats a card and device pair, or has two EFA-only devices on a card".into(),
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card",
        );
    }
}
