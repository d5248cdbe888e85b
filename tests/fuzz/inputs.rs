//! Inputs: the project's own YAML mutated, and Kubernetes-, Karpenter-, Kueue- and
//! profile-shaped documents with odd values, themselves mutated now and then.

/// splitmix64: enough randomness for a fuzzer, and runs stay reproducible from one seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// A size that is usually small and sometimes up to `max`.
    pub fn size(&mut self, max: usize) -> usize {
        match self.below(4) {
            0 => self.below(8),
            1 => self.below(200),
            2 => self.below(max.min(5_000) + 1),
            _ => self.below(max + 1),
        }
    }
}

const INDICATORS: &[&str] = &[
    "-",
    ":",
    "?",
    "|",
    ">",
    "&",
    "*",
    "!",
    "%",
    "@",
    "`",
    "{",
    "}",
    "[",
    "]",
    "#",
    ",",
    "'",
    "\"",
    "- ",
    ": ",
    "? ",
    "|-\n",
    ">+\n",
    "&a ",
    "*a",
    "!!str ",
    "!!binary ",
    "!local ",
    "%YAML 1.2\n",
    "%TAG ! tag:x,2000:\n",
    "<<: *a\n",
    "{a: [b, {c: d}]}",
    "[[[",
    "}}}",
    "\"\\u00",
    "'",
    "---\n",
    "...\n",
    "--- |\n",
    "#",
    " #",
    "\\",
    "\\\n",
];

const UNICODE: &[&str] = &[
    "\u{feff}",
    "\u{200b}",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{a0}",
    "\u{fffd}",
    "é",
    "e\u{301}",
    "𝔘𝔫𝔦",
    "😀",
    "\u{202e}",
    "\u{0}",
    "\u{7}",
    "\u{7f}",
    "\u{1b}[31m",
    "\u{3000}",
    "ｎｖｉｄｉａ",
    "\u{10ffff}",
    "ǅ",
    "İ",
    "ß",
];

/// Scalars that have tripped parsers of quantities, integers and booleans elsewhere.
pub const ODD_SCALARS: &[&str] = &[
    "-1",
    "0",
    "-0",
    "1.5",
    "0.5",
    "1e3",
    "1E3",
    "1e-3",
    "1e308",
    "1e309",
    "-1e309",
    ".inf",
    "-.inf",
    ".nan",
    "NaN",
    "99999999999999999999999",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "-9223372036854775809",
    "4294967296",
    "0x10",
    "0o17",
    "017",
    "1_000",
    "1Ei",
    "8Ei",
    "9Ei",
    "1000000Ei",
    "1m",
    "1k",
    "1Ki",
    "1.5Gi",
    "0.000000001",
    "1n",
    "1u",
    "+1",
    "+.5",
    ".5",
    "5.",
    "1e",
    "e3",
    "--1",
    "1-",
    "",
    "''",
    "\"\"",
    "~",
    "null",
    "Null",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "true",
    "True",
    "[]",
    "{}",
    "[1]",
    "\"8\"",
    "'8'",
    "*a",
    "&a 8",
    "!!int 8",
    "!!float 8",
    "!!str 8",
    "1:00",
    "190:20:30",
    "1h",
    "-1h",
    "0s",
    "720h",
    "999999999999h",
    "1.5h",
    "Never",
    "never",
    "1d",
    "P1D",
    "1h30m10s",
];

const NAMES: &[&str] = &[
    "a",
    "gpu",
    "training",
    "default",
    "x",
    "research",
    "team-a",
    "",
    "GPU",
    "a.b",
    "a/b",
    "spot",
    "kube-system",
    "ÿ",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

const GPU_RESOURCES: &[&str] = &[
    "nvidia.com/gpu",
    "amd.com/gpu",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "vpc.amazonaws.com/efa",
    "nvidia.com/mig-1g.5gb",
    "cpu",
    "memory",
    "ephemeral-storage",
    "nvidia.com/",
    "nvidia.com/gpu.shared",
];

fn name(rng: &mut Rng) -> String {
    rng.pick(NAMES).to_string()
}

fn scalar(rng: &mut Rng) -> String {
    if rng.chance(1, 3) {
        rng.below(20).to_string()
    } else {
        rng.pick(ODD_SCALARS).to_string()
    }
}

/// A valid char boundary at or before `i`.
fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn at_random(rng: &mut Rng, s: &str) -> usize {
    floor(s, rng.below(s.len() + 1))
}

fn billion_laughs(rng: &mut Rng) -> String {
    let levels = 2 + rng.below(9);
    let width = 2 + rng.below(9);
    let mut out = String::from("a0: &a0 [\"lol\", \"lol\"]\n");
    for l in 1..levels {
        let refs = vec![format!("*a{}", l - 1); width].join(", ");
        out.push_str(&format!("a{l}: &a{l} [{refs}]\n"));
    }
    // Aliases that feed places the rules read: labels, resources, requirements.
    if rng.chance(1, 2) {
        out.push_str(&format!(
            "spec:\n  template:\n    spec:\n      containers: *a{0}\n      tolerations: *a{0}\n",
            levels - 1
        ));
    }
    out
}

fn deep(rng: &mut Rng, max: usize) -> String {
    let depth = 1 + rng.size(max.min(20_000));
    match rng.below(3) {
        0 => format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        1 => format!("{}1{}", "{a: ".repeat(depth), "}".repeat(depth)),
        _ => {
            let depth = depth.min(2_000);
            let mut s = String::new();
            for d in 0..depth {
                s.push_str(&" ".repeat(d));
                s.push_str(if d % 2 == 0 { "a:\n" } else { "- " });
                if d % 2 == 1 {
                    s.push('\n');
                }
            }
            s
        }
    }
}

/// One random change to `text`; `seeds` are other texts to splice from, `max` the largest
/// value or nesting to make.
pub fn mutate_once(rng: &mut Rng, text: &str, seeds: &[String], max: usize) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let n = lines.len();
    match rng.below(16) {
        0 => {
            let at = at_random(rng, text);
            format!("{}{}{}", &text[..at], rng.pick(INDICATORS), &text[at..])
        }
        1 => {
            let at = at_random(rng, text);
            format!("{}{}{}", &text[..at], rng.pick(UNICODE), &text[at..])
        }
        2 => {
            // An anchor on one value, aliases of it elsewhere; or a whole laughs document.
            if rng.chance(1, 3) {
                let laughs = billion_laughs(rng);
                if rng.chance(1, 2) {
                    format!("{laughs}---\n{text}")
                } else {
                    format!("{text}\n---\n{laughs}")
                }
            } else {
                let i = rng.below(n);
                if let Some(c) = lines[i].find(": ") {
                    lines[i].insert_str(c + 2, "&x ");
                }
                for _ in 0..1 + rng.below(4) {
                    let j = rng.below(n);
                    if let Some(c) = lines[j].find(": ") {
                        lines[j].truncate(c + 2);
                        lines[j].push_str(if rng.chance(1, 4) { "*y" } else { "*x" });
                    } else if rng.chance(1, 2) {
                        lines[j] = format!("{}<<: *x", indent_of(&lines[j]));
                    }
                }
                lines.join("\n")
            }
        }
        3 => {
            let i = rng.below(n);
            let ind = indent_of(&lines[i]).len();
            let body = lines[i][ind..].to_string();
            let new = match rng.below(4) {
                0 => ind + 1 + rng.below(4),
                1 => ind.saturating_sub(1 + rng.below(4)),
                2 => 0,
                _ => ind + 2,
            };
            lines[i] = if rng.chance(1, 5) {
                format!("{}{body}", "\t".repeat(1 + new / 4))
            } else {
                format!("{}{body}", " ".repeat(new))
            };
            lines.join("\n")
        }
        4 => {
            let i = rng.below(n);
            let l = lines[i].clone();
            for _ in 0..1 + rng.below(3) {
                lines.insert(i, l.clone());
            }
            lines.join("\n")
        }
        5 => {
            let i = rng.below(n);
            let len = 1 + rng.below(4);
            lines.drain(i..(i + len).min(n));
            lines.join("\n")
        }
        6 => {
            let (i, j) = (rng.below(n), rng.below(n));
            lines.swap(i, j);
            lines.join("\n")
        }
        7 => {
            // A very long value or key.
            let len = rng.size(max);
            let fill: String = match rng.below(4) {
                0 => "a".repeat(len),
                1 => "9".repeat(len),
                2 => "é".repeat(len / 2),
                _ => "ab cd".repeat(len / 5),
            };
            let i = rng.below(n);
            if rng.chance(1, 2) {
                if let Some(c) = lines[i].find(": ") {
                    lines[i].truncate(c + 2);
                }
                lines[i].push_str(&fill);
            } else {
                let ind = indent_of(&lines[i]);
                lines.insert(i, format!("{ind}{fill}: 1"));
            }
            lines.join("\n")
        }
        8 => {
            let i = rng.below(n);
            let ind = indent_of(&lines[i]);
            let d = deep(rng, max);
            let d = d
                .lines()
                .map(|l| format!("{ind}  {l}"))
                .collect::<Vec<_>>()
                .join("\n");
            lines.insert(i, format!("{ind}deep:\n{d}"));
            lines.join("\n")
        }
        9 => {
            if rng.chance(1, 2) {
                text.replace('\n', "\r\n")
            } else {
                let i = rng.below(n);
                lines[i].push('\r');
                lines.join("\n")
            }
        }
        10 => {
            let i = rng.below(n);
            lines[i] = lines[i].replacen("  ", "\t", 1 + rng.below(3));
            if rng.chance(1, 3) {
                lines[i].push('\t');
            }
            lines.join("\n")
        }
        11 => text[..at_random(rng, text)].to_string(),
        12 => {
            let other = rng.pick(seeds);
            let a = at_line(rng, text);
            let b = at_line(rng, other);
            format!("{}{}", &text[..a], &other[b..])
        }
        13 => {
            // Replace a value with an odd scalar.
            let i = rng.below(n);
            if let Some(c) = lines[i].find(": ") {
                lines[i].truncate(c + 2);
                lines[i].push_str(&scalar(rng));
            } else if let Some(d) = lines[i].find("- ") {
                lines[i].truncate(d + 2);
                lines[i].push_str(&scalar(rng));
            }
            lines.join("\n")
        }
        14 => {
            let i = rng.below(n + 1);
            lines.insert(
                i,
                rng.pick(&["---", "...", "--- !!map", "--- >", "---\t#"])
                    .to_string(),
            );
            lines.join("\n")
        }
        _ => {
            // A line of a generated document dropped in.
            let doc = generate(rng, max);
            let gl: Vec<&str> = doc.lines().collect();
            let take = gl[rng.below(gl.len())..].iter().take(1 + rng.below(6));
            let i = rng.below(n + 1);
            let ind = if i < n {
                indent_of(&lines[i])
            } else {
                String::new()
            };
            let chunk: Vec<String> = take.map(|l| format!("{ind}{l}")).collect();
            lines.splice(i..i, chunk);
            lines.join("\n")
        }
    }
}

fn indent_of(line: &str) -> String {
    line.chars().take_while(|c| *c == ' ').collect()
}

fn at_line(rng: &mut Rng, s: &str) -> usize {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(s.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    *rng.pick(&starts)
}

/// 1 to 4 mutations, keeping the result under about `4 * max` bytes.
pub fn mutate(rng: &mut Rng, text: &str, seeds: &[String], max: usize) -> String {
    let mut t = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let next = mutate_once(rng, &t, seeds, max);
        if next.len() <= 4 * max.max(1_000) + text.len() {
            t = next;
        }
    }
    t
}

fn resources(rng: &mut Rng) -> String {
    let mut s = String::new();
    for section in ["limits", "requests"] {
        if rng.chance(1, 5) {
            continue;
        }
        s.push_str(&format!("          {section}:\n"));
        for _ in 0..1 + rng.below(3) {
            s.push_str(&format!(
                "            {}: {}\n",
                rng.pick(GPU_RESOURCES),
                scalar(rng)
            ));
        }
    }
    if s.is_empty() {
        String::new()
    } else {
        format!("        resources:\n{s}")
    }
}

fn tolerations(rng: &mut Rng, ind: &str) -> String {
    let mut s = format!("{ind}tolerations:\n");
    for _ in 0..rng.below(4) {
        s.push_str(&format!(
            "{ind}  - key: {}\n{ind}    operator: {}\n",
            rng.pick(&[
                "nvidia.com/gpu",
                "",
                "*",
                "karpenter.sh/capacity-type",
                "gpu"
            ]),
            rng.pick(&["Exists", "Equal", "exists", "In", ""]),
        ));
        if rng.chance(1, 2) {
            s.push_str(&format!("{ind}    value: {}\n", scalar(rng)));
        }
        if rng.chance(2, 3) {
            s.push_str(&format!(
                "{ind}    effect: {}\n",
                rng.pick(&[
                    "NoSchedule",
                    "NoExecute",
                    "PreferNoSchedule",
                    "",
                    "noschedule"
                ])
            ));
        }
        if rng.chance(1, 4) {
            s.push_str(&format!("{ind}    tolerationSeconds: {}\n", scalar(rng)));
        }
    }
    s
}

fn requirements(rng: &mut Rng, ind: &str) -> String {
    let keys = [
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-family",
        "node.kubernetes.io/instance-type",
        "karpenter.sh/capacity-type",
        "topology.kubernetes.io/zone",
        "kubernetes.io/arch",
        "karpenter.k8s.aws/instance-gpu-memory",
        "karpenter.k8s.aws/instance-category",
        "x",
    ];
    let vals = [
        "a100",
        "h100",
        "g5",
        "p4d.24xlarge",
        "spot",
        "on-demand",
        "1",
        "8",
        "-1",
        "0",
        "1e3",
        "99999999999999999999",
        "",
        "amd64",
        "us-east-1a",
    ];
    let mut s = String::new();
    for _ in 0..rng.below(5) {
        s.push_str(&format!(
            "{ind}- key: {}\n{ind}  operator: {}\n",
            rng.pick(&keys),
            rng.pick(&[
                "In",
                "NotIn",
                "Exists",
                "DoesNotExist",
                "Gt",
                "Lt",
                "Gte",
                "in",
                ""
            ])
        ));
        if rng.chance(3, 4) {
            let k = rng.below(4);
            let v: Vec<&str> = (0..k).map(|_| *rng.pick(&vals)).collect();
            s.push_str(&format!("{ind}  values: [{}]\n", v.join(", ")));
        }
        if rng.chance(1, 5) {
            s.push_str(&format!("{ind}  minValues: {}\n", scalar(rng)));
        }
    }
    s
}

fn pod_template(rng: &mut Rng) -> String {
    let (api, kind, prefix) = rng
        .pick(&[
            ("apps/v1", "Deployment", "spec:\n  template:\n"),
            ("batch/v1", "Job", "spec:\n  template:\n"),
            ("apps/v1", "StatefulSet", "spec:\n  template:\n"),
            ("apps/v1", "DaemonSet", "spec:\n  template:\n"),
            (
                "batch/v1",
                "CronJob",
                "spec:\n  jobTemplate:\n    spec:\n      template:\n",
            ),
            (
                "kubeflow.org/v1",
                "PyTorchJob",
                "spec:\n  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n",
            ),
            (
                "jobset.x-k8s.io/v1alpha2",
                "JobSet",
                "spec:\n  replicatedJobs:\n    - name: w\n      template:\n        spec:\n          template:\n",
            ),
            (
                "ray.io/v1",
                "RayCluster",
                "spec:\n  workerGroupSpecs:\n    - groupName: w\n      template:\n",
            ),
            ("v1", "Pod", ""),
        ])
        .to_owned();
    // Re-indent the fixed pod spec under the prefix's last line.
    let depth = prefix.lines().last().map_or(0, |l| indent_of(l).len() + 2);
    let mut spec = String::new();
    spec.push_str(&format!(
        "metadata:\n  labels:\n    {}: {}\n  annotations:\n    karpenter.sh/do-not-disrupt: {}\n    kueue.x-k8s.io/queue-name: {}\n",
        rng.pick(&["workload-type", "kueue.x-k8s.io/queue-name", "team", "app"]),
        rng.pick(&["training", "inference", "\"true\"", "x", ""]),
        rng.pick(&["\"true\"", "true", "\"false\"", "yes", ""]),
        name(rng),
    ));
    spec.push_str("spec:\n");
    if rng.chance(1, 2) {
        spec.push_str(&format!("  priorityClassName: {}\n", name(rng)));
    }
    if rng.chance(1, 2) {
        spec.push_str(&format!(
            "  nodeSelector:\n    {}: {}\n",
            rng.pick(&[
                "karpenter.sh/nodepool",
                "karpenter.k8s.aws/instance-gpu-name",
                "x"
            ]),
            name(rng)
        ));
    }
    if rng.chance(1, 3) {
        spec.push_str("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n          - matchExpressions:\n");
        spec.push_str(&requirements(rng, "              "));
    }
    if rng.chance(1, 3) {
        spec.push_str(&format!(
            "  terminationGracePeriodSeconds: {}\n",
            scalar(rng)
        ));
    }
    spec.push_str(&tolerations(rng, "  "));
    spec.push_str("  containers:\n");
    for i in 0..rng.below(3) {
        spec.push_str(&format!(
            "    - name: c{i}\n      image: {}\n      command: [torchrun, --nproc-per-node={}]\n",
            rng.pick(&["nvcr.io/nvidia/pytorch:24.01", "x", "", "a:b@sha256:00"]),
            scalar(rng)
        ));
        let r = resources(rng);
        spec.push_str(
            &r.replace("\n        ", "\n      ")
                .replacen("        ", "      ", 1),
        );
    }
    if rng.chance(1, 3) {
        spec.push_str(
            "  volumes:\n    - name: ckpt\n      persistentVolumeClaim:\n        claimName: x\n",
        );
    }
    let body: String = spec
        .lines()
        .map(|l| format!("{}{l}\n", " ".repeat(depth)))
        .collect();
    let mut meta = format!("metadata:\n  name: {}\n", name(rng));
    if rng.chance(2, 3) {
        meta.push_str(&format!("  namespace: {}\n", name(rng)));
    }
    if rng.chance(1, 3) {
        meta.push_str(&format!(
            "  labels:\n    kueue.x-k8s.io/queue-name: {}\n",
            name(rng)
        ));
    }
    if kind == "Pod" {
        return format!("apiVersion: {api}\nkind: {kind}\n{meta}{body}");
    }
    format!("apiVersion: {api}\nkind: {kind}\n{meta}{prefix}{body}")
}

fn nodepool(rng: &mut Rng) -> String {
    let mut s = format!(
        "apiVersion: {}\nkind: NodePool\nmetadata:\n  name: {}\nspec:\n",
        rng.pick(&[
            "karpenter.sh/v1",
            "karpenter.sh/v1beta1",
            "karpenter.sh/v1alpha5"
        ]),
        name(rng)
    );
    if rng.chance(3, 4) {
        s.push_str("  limits:\n");
        for _ in 0..rng.below(3) {
            s.push_str(&format!(
                "    {}: {}\n",
                rng.pick(GPU_RESOURCES),
                scalar(rng)
            ));
        }
    }
    if rng.chance(2, 3) {
        s.push_str(&format!(
            "  disruption:\n    consolidationPolicy: {}\n    consolidateAfter: {}\n    budgets:\n      - nodes: {}\n",
            rng.pick(&["WhenEmpty", "WhenEmptyOrUnderutilized", "WhenUnderutilized", ""]),
            scalar(rng),
            rng.pick(&["\"10%\"", "0", "-1", "\"150%\"", "\"%\"", "abc"])
        ));
    }
    if rng.chance(1, 3) {
        s.push_str(&format!("  weight: {}\n", scalar(rng)));
    }
    s.push_str(&format!(
        "  template:\n    metadata:\n      labels:\n        {}: {}\n    spec:\n      expireAfter: {}\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: {}\n",
        rng.pick(&["workload-type", "gpu", "karpenter.sh/nodepool"]),
        name(rng),
        scalar(rng),
        name(rng)
    ));
    if rng.chance(3, 4) {
        s.push_str("      taints:\n");
        for _ in 0..rng.below(3) {
            s.push_str(&format!(
                "        - key: {}\n          effect: {}\n",
                rng.pick(&["nvidia.com/gpu", "", "gpu", "karpenter.sh/disrupted"]),
                rng.pick(&["NoSchedule", "NoExecute", "", "x"])
            ));
            if rng.chance(1, 2) {
                s.push_str(&format!("          value: {}\n", scalar(rng)));
            }
        }
    }
    s.push_str("      requirements:\n");
    s.push_str(&requirements(rng, "        "));
    s
}

fn nodeclass(rng: &mut Rng) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: {}\nspec:\n  amiSelectorTerms:\n    - alias: {}\n  metadataOptions:\n    httpTokens: {}\n  blockDeviceMappings:\n    - deviceName: /dev/xvda\n      ebs:\n        volumeSize: {}\n        encrypted: {}\n",
        name(rng),
        rng.pick(&[
            "al2023@latest",
            "al2023@v20250715",
            "bottlerocket@",
            "@",
            "",
            "x@y@z"
        ]),
        rng.pick(&["required", "optional", "", "Required"]),
        scalar(rng),
        scalar(rng),
    )
}

fn kueue(rng: &mut Rng) -> String {
    let a = name(rng);
    let b = name(rng);
    let mut s = String::new();
    match rng.below(5) {
        0 => {
            s.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: {a}\nspec:\n  nodeLabels:\n    {}: {}\n",
                rng.pick(&["karpenter.sh/nodepool", "karpenter.k8s.aws/instance-gpu-name", "x"]),
                name(rng)
            ));
            s.push_str(&tolerations(rng, "  "));
        }
        1 => {
            s.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: {a}\nspec:\n  cohort: {}\n  namespaceSelector: {{}}\n  resourceGroups:\n",
                if rng.chance(1, 2) { a.clone() } else { b.clone() }
            ));
            for _ in 0..rng.below(3) {
                s.push_str(&format!(
                    "    - coveredResources: [{}]\n      flavors:\n",
                    rng.pick(GPU_RESOURCES)
                ));
                for _ in 0..rng.below(3) {
                    s.push_str(&format!(
                        "        - name: {}\n          resources:\n            - name: {}\n              nominalQuota: {}\n              borrowingLimit: {}\n              lendingLimit: {}\n",
                        name(rng),
                        rng.pick(GPU_RESOURCES),
                        scalar(rng),
                        scalar(rng),
                        scalar(rng)
                    ));
                }
            }
        }
        2 => {
            // Cohorts that are their own parent, or a cycle of two.
            s.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: {a}\nspec:\n  parent: {}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: {b}\nspec:\n  parent: {a}\n  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n      flavors:\n        - name: {a}\n          resources:\n            - name: nvidia.com/gpu\n              nominalQuota: {}\n",
                if rng.chance(1, 2) { a.clone() } else { b.clone() },
                scalar(rng)
            ));
        }
        3 => {
            s.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: {a}\n  namespace: {}\nspec:\n  clusterQueue: {b}\n",
                name(rng)
            ));
        }
        _ => {
            s.push_str(&format!(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: {a}\nvalue: {}\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {b}\nvalue: {}\n",
                scalar(rng),
                scalar(rng)
            ));
        }
    }
    s
}

fn other(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {}\n  - ../{}\n  - https://example.com/x?ref={}\npatches:\n  - path: {}\n    target:\n      kind: {}\nnamespace: {}\n",
            name(rng),
            name(rng),
            scalar(rng),
            name(rng),
            rng.pick(&["NodePool", "", "*"]),
            name(rng)
        ),
        1 => format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: {}\nmetadata:\n  name: {}\n  namespace: argocd\nspec:\n  destination:\n    server: {}\n    name: {}\n    namespace: {}\n  source:\n    repoURL: {}\n    path: {}\n    targetRevision: {}\n    helm:\n      valueFiles: [{}]\n",
            rng.pick(&["Application", "ApplicationSet"]),
            name(rng),
            rng.pick(&["https://kubernetes.default.svc", "", "x"]),
            name(rng),
            name(rng),
            rng.pick(&["https://github.com/a/b", ".", "", "git@x:y"]),
            rng.pick(&[".", "..", "/", "a/../../b", "", "clusters/a"]),
            scalar(rng),
            name(rng)
        ),
        2 => format!(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {}\nspec:\n  minAvailable: {}\n  selector:\n    matchLabels:\n      app: {}\n",
            name(rng),
            scalar(rng),
            name(rng)
        ),
        _ => format!(
            "# gpuops:ignore {} reason\napiVersion: v1\nkind: {}\nmetadata:\n  name: {}\n",
            rng.pick(&["gpu-limit-missing", "*", "", "x"]),
            rng.pick(&["ConfigMap", "", "Namespace", "List"]),
            name(rng)
        ),
    }
}

/// A stream of 1 to 5 generated documents.
pub fn generate(rng: &mut Rng, _max: usize) -> String {
    let mut docs = Vec::new();
    for _ in 0..1 + rng.below(5) {
        docs.push(match rng.below(6) {
            0 | 1 => pod_template(rng),
            2 => nodepool(rng),
            3 => nodeclass(rng),
            4 => kueue(rng),
            _ => other(rng),
        });
    }
    docs.join("---\n")
}

/// A platform profile with odd values: unknown GPUs, classes teams do not have, quotas over
/// ceilings, names that collide.
pub fn profile(rng: &mut Rng) -> String {
    let classes = ["training", "inference", "development", "batch", "gpu", ""];
    let mut s = format!(
        "apiVersion: gpuops.dev/v1alpha1\nkind: Platform\ncluster:\n  name: {}\n  region: {}\n  zones: [{}]\n  nodeRole: {}\n  amiAlias: {}\n",
        name(rng),
        rng.pick(&["us-west-2", "eu-west-1", "", "mars-1"]),
        rng.pick(&["us-west-2a", "", "us-west-2a, us-west-2a", "eu-west-1a"]),
        name(rng),
        rng.pick(&[
            "al2023@v20250715",
            "bottlerocket@v1.42.0",
            "al2023@latest",
            "x",
            ""
        ]),
    );
    if rng.chance(1, 2) {
        s.push_str(&format!(
            "devicePlugin: {}\n",
            rng.pick(&["nvidia", "none", "", "x"])
        ));
    }
    s.push_str("classes:\n");
    for _ in 0..rng.below(4) {
        s.push_str(&format!(
            "  - name: {}\n    type: {}\n    gpus: [{}]\n    capacity: {}\n    maxGpus: {}\n",
            rng.pick(&classes),
            rng.pick(&["training", "inference", "development", "batch", "x"]),
            rng.pick(&[
                "a100",
                "h100, a100",
                "l40s",
                "g6e.xlarge",
                "g5",
                "x",
                "",
                "trn1",
                "inf2"
            ]),
            rng.pick(&["spot", "on-demand", "spot-first", "x"]),
            scalar(rng),
        ));
        for (k, on) in [
            ("consolidateAfter", rng.chance(1, 2)),
            ("expireAfter", rng.chance(1, 3)),
            ("terminationGracePeriod", rng.chance(1, 3)),
            ("disruptionBudget", rng.chance(1, 3)),
            ("rootVolume", rng.chance(1, 3)),
            ("dataVolume", rng.chance(1, 3)),
        ] {
            if on {
                s.push_str(&format!("    {k}: {}\n", scalar(rng)));
            }
        }
    }
    s.push_str("teams:\n");
    for _ in 0..rng.below(3) {
        s.push_str(&format!(
            "  - name: {}\n    namespace: {}\n    gpuQuota:\n      {}: {}\n",
            name(rng),
            name(rng),
            rng.pick(&classes),
            scalar(rng)
        ));
    }
    if rng.chance(1, 2) {
        s.push_str(&format!(
            "jobs:\n  - name: {}\n    team: {}\n    class: {}\n    image: x\n    command: [torchrun]\n    args: [--nnodes={}, --nproc-per-node={}]\n    gpus: {}\n",
            name(rng),
            name(rng),
            rng.pick(&classes),
            scalar(rng),
            scalar(rng),
            scalar(rng)
        ));
    }
    s
}
