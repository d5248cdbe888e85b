//! What the repository's scripts, Makefiles, Markdown pages and Terraform say about the cluster
//! beside its manifests: objects they apply, labels they put on nodes, the kind of cluster they
//! create; and what the workloads show of NodePools kept elsewhere.

use super::Index;

impl<'a> Index<'a> {
    /// The repository's scripts, Makefiles and Markdown pages ([`crate::source::pages`]).
    pub(super) fn pages(&self) -> impl Iterator<Item = &crate::source::SourceFile> {
        self.files
            .iter()
            .filter(|f| crate::source::pages::is_page(std::path::Path::new(&f.path)))
    }

    /// Whether a script or Markdown page of the repository shows the object being applied or
    /// already there ([`crate::source::pages`]): it exists although no manifest holds it.
    pub(super) fn shown(&self, kind: &str, name: &str, namespace: Option<&str>) -> bool {
        self.shown
            .get_or_init(|| {
                self.pages()
                    .flat_map(|f| crate::source::pages::shown_objects(&f.text))
                    .collect()
            })
            .iter()
            .any(|(k, ns, n)| {
                k == kind
                    && n == name
                    && (namespace.is_none() || ns.is_none() || ns.as_deref() == namespace)
            })
    }

    /// Whether a script or page of the repository labels nodes `key=value` by hand
    /// (`kubectl label node`): such nodes exist outside every NodePool.
    pub fn labelled_by_hand(&self, key: &str, value: &str) -> bool {
        self.labelled
            .get_or_init(|| {
                self.pages()
                    .flat_map(|f| crate::source::pages::node_labels(&f.text))
                    .collect()
            })
            .iter()
            .any(|(k, v)| k == key && v == value)
    }

    /// Whether the repository creates GKE Autopilot clusters (`gcloud container clusters
    /// create-auto`, Terraform's `enable_autopilot = true`): Autopilot's admission fills in what
    /// a pod leaves out (limits from requests) before the API server validates it.
    pub fn autopilot(&self) -> bool {
        *self.autopilot.get_or_init(|| {
            self.pages()
                .any(|f| f.text.contains("clusters create-auto"))
                || self.files.iter().any(|f| {
                    f.path.ends_with(".tf") && crate::source::terraform::enables_autopilot(&f.text)
                })
        })
    }

    /// The directories that hold a kustomization (or a template of one,
    /// `kustomization.yaml.in`). Built once: every chunk of a chunked rule asks.
    pub fn kustomize_dirs(&self) -> &foldhash::HashSet<&'a str> {
        self.kustomize_dirs.get_or_init(|| {
            self.files
                .iter()
                .filter_map(|f| {
                    let (dir, name) = f.path.rsplit_once('/').unwrap_or(("", f.path.as_str()));
                    name.get(..13)
                        .is_some_and(|p| p.eq_ignore_ascii_case("kustomization"))
                        .then_some(dir)
                })
                .collect()
        })
    }

    /// Whether the workloads select NodePools by name (`karpenter.sh/nodepool`) that no file
    /// defines, beyond what one GPU pod's mistake explains: a pod without GPUs selects one, or
    /// two names are missing. The files then hold only some of the cluster's pools (the others
    /// live in the cluster, or in another repository), and a GPU pool they lack may be among
    /// those. Built once.
    pub fn pools_kept_elsewhere(&self) -> bool {
        *self.pools_elsewhere.get_or_init(|| {
            let mut missing: Vec<&str> = Vec::new();
            for t in &self.templates {
                let c = t.constraints();
                for r in c.base.iter().chain(c.terms.iter().flatten()) {
                    if r.key != "karpenter.sh/nodepool" || r.op != "In" {
                        continue;
                    }
                    for v in r.values.iter() {
                        if self.nodepool(v).is_some() || crate::sched::is_placeholder(v) {
                            continue;
                        }
                        if !t.requests_gpu() {
                            return true;
                        }
                        if !missing.contains(v) {
                            missing.push(v);
                        }
                        if missing.len() >= 2 {
                            return true;
                        }
                    }
                }
            }
            false
        })
    }
}
