//! The human text of a `gpuops why` report: per template a verdict, the NodePools table, the
//! Kueue route and the instance types.

use super::*;

/// The human report: a verdict per template, then the pools, the Kueue route and instances.
pub fn human(report: &Report) -> String {
    let mut out = String::new();
    for o in &report.objects {
        let _ = writeln!(out, "{} ({})", o.object, o.location);
        for t in &o.templates {
            let mark = if t.verdict.lands { "✓" } else { "✗" };
            let s = if t.gpus_per_pod == 1 { "" } else { "s" };
            let least = if t.gpus_at_least { "at least " } else { "" };
            let _ = writeln!(
                out,
                "\n{} ({}, {least}{} GPU{s} per pod)",
                t.path, t.location, t.gpus_per_pod
            );
            let _ = writeln!(out, "  {mark} {}", t.verdict.summary);
            pools_table(&mut out, t);
            route_text(&mut out, t.route.as_ref());
            sharing_text(&mut out, &t.sharing);
            instances_text(&mut out, &t.instances);
        }
    }
    out
}

/// What the shared, MIG and DRA requests are on the pools the pod lands on.
fn sharing_text(out: &mut String, rows: &[SharingRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n  Shared GPUs:");
    for r in rows {
        let on = r
            .pool
            .as_ref()
            .map_or(String::new(), |p| format!(" on {p}"));
        let _ = writeln!(out, "    {}{on}: {}", r.request, r.what);
        if let Some(l) = &r.location {
            let _ = writeln!(out, "      {l}");
        }
    }
}

fn pools_table(out: &mut String, t: &TemplateReport) {
    if t.pools.is_empty() {
        let _ = writeln!(out, "\n  NodePools: none in the files read");
        return;
    }
    let short = |c: &Check| -> String {
        if c.ok {
            return c.detail.clone();
        }
        match c.check {
            "labels" => c
                .detail
                .split_once(':')
                .map_or(c.detail.clone(), |(k, _)| format!("✗ {k}")),
            _ => format!("✗ {}", c.detail),
        }
    };
    let rows: Vec<[String; 6]> = t
        .pools
        .iter()
        .map(|p| {
            let get = |name: &str| -> String {
                let cs: Vec<String> = p
                    .checks
                    .iter()
                    .filter(|c| c.check == name)
                    .map(&short)
                    .collect();
                cs.join(", ")
            };
            let name = match &p.flavor {
                Some(f) => format!("{} [{f}]", p.name),
                None => p.name.clone(),
            };
            [
                name,
                if p.fits { "yes" } else { "no" }.to_string(),
                get("labels"),
                get("taints"),
                get("gpus"),
                p.capacity_types.join(","),
            ]
        })
        .collect();
    let head = [
        "NodePool [flavor]",
        "fits",
        "labels/requirements",
        "taints",
        "GPUs pod/node",
        "capacity",
    ];
    let mut w = head.map(|h| h.chars().count());
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[&str]| -> String {
        let mut s = String::from("  ");
        for (i, c) in cells.iter().enumerate() {
            s.push_str(c);
            if i + 1 < cells.len() {
                let pad = w[i] - c.chars().count() + 2;
                s.push_str(&" ".repeat(pad));
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "\n{}", line(&head));
    for r in &rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        let _ = writeln!(out, "{}", line(&cells));
    }
    if t.more_pools > 0 {
        let _ = writeln!(out, "  … and {} more passing pools", t.more_pools);
    }
    // Where each failing check is decided, on both sides.
    let mut first = true;
    for p in t.pools.iter().filter(|p| !p.fits) {
        for c in p.checks.iter().filter(|c| !c.ok && c.check != "gpus") {
            if first {
                let _ = writeln!(out, "\n  Why not:");
                first = false;
            }
            let _ = writeln!(out, "    {}: {}", p.name, c.detail);
            for (side, l) in [("pod", &c.pod), ("flavor", &c.flavor), ("pool", &c.pool)] {
                if let Some(l) = l {
                    let _ = writeln!(out, "      {side:<6}  {l}");
                }
            }
        }
    }
}

fn route_text(out: &mut String, route: Option<&Route>) {
    let Some(r) = route else {
        let _ = writeln!(
            out,
            "\n  Kueue: not queued (no `kueue.x-k8s.io/queue-name` label)"
        );
        return;
    };
    let _ = writeln!(out, "\n  Kueue route:");
    let label = r.queue_label.as_deref().unwrap_or("defaulted");
    let _ = writeln!(out, "    queue-name    {}  ({label})", r.queue);
    let _ = writeln!(
        out,
        "    LocalQueue    {}  ({})",
        r.local_queue_name,
        r.local_queue.as_deref().unwrap_or("missing")
    );
    if r.local_queue.is_some() {
        let cq = r.cluster_queue_name.as_deref().unwrap_or("?");
        let _ = writeln!(
            out,
            "    ClusterQueue  {cq}  ({})",
            r.cluster_queue.as_deref().unwrap_or("missing")
        );
    }
    for f in &r.flavors {
        let state = if f.assignable {
            "assignable".to_string()
        } else {
            format!("not assignable: {}", f.reason.as_deref().unwrap_or("?"))
        };
        let _ = writeln!(
            out,
            "    flavor {}  {state}  ({})",
            f.name,
            f.location.as_deref().unwrap_or("?")
        );
        for q in &f.quota {
            let max = q.max.as_deref().and_then(|m| m.parse::<u64>().ok());
            let line = match (q.request, max, &q.max) {
                (Some(r), Some(m), Some(ms)) => format!(
                    "{} workload needs {r}, queue admits at most {ms}",
                    if r > m { "✗" } else { "✓" }
                ),
                (Some(r), _, Some(ms)) => format!("workload needs {r}, queue admits at most {ms}"),
                (Some(r), _, None) => format!("workload needs {r}, queue has no fixed ceiling"),
                (None, _, Some(ms)) => format!("queue admits at most {ms}"),
                (None, _, None) => "queue has no fixed ceiling".to_string(),
            };
            let _ = writeln!(
                out,
                "      {}  {line} ({})  ({})",
                q.resource, q.summary, q.location
            );
        }
        if let Some(l) = &f.pod {
            let _ = writeln!(out, "      pod     {l}");
        }
        if let Some(l) = &f.flavor {
            let _ = writeln!(out, "      flavor  {l}");
        }
    }
    if let Some(b) = &r.blocked {
        let _ = writeln!(out, "    ✗ {b}");
    }
    let _ = writeln!(
        out,
        "    (quota: the most the ClusterQueue may ever admit; current usage is not known)"
    );
}

fn instances_text(out: &mut String, instances: &[InstanceRow]) {
    if instances.is_empty() {
        let _ = writeln!(out, "\n  Instance types: none (no passing pool)");
        return;
    }
    let _ = writeln!(
        out,
        "\n  Instance types Karpenter could pick (cheapest first):"
    );
    for i in instances {
        let price = i
            .price_usd_hour
            .map_or_else(|| "price unknown".to_string(), |p| format!("${p:.2}/h"));
        let _ = writeln!(
            out,
            "    {:<16} {} × {:<6} {:>10} on demand  ({})",
            i.instance_type,
            i.gpus,
            i.gpu_name,
            price,
            i.pools.join(", ")
        );
    }
}
