//! Candidate lookup: which NodePools a pod's constraints can possibly meet, without checking
//! every pool.
//!
//! Pools are indexed once by what selects them: per label key, the values an `In`-only key takes
//! (postings), the pools that constrain the key some other way (always candidates), and the pools
//! that do not mention it (candidates only for well-known keys, which every node carries). A pod
//! requirement `key In [v…]` then costs a few posting lookups, and a template's candidates are the
//! intersection over its requirements. The lookup is a superset: every candidate is still checked
//! in full ([`label_issues`]), so the verdicts are exactly those of checking all pools.
//!
//! Templates with the same label constraints share one [`Placement`] (see [`label_signature`]);
//! pools with the same hard taints share one taint class, so tolerations are checked once per
//! class, not once per pool.

use super::instances::{GpuCapability, gpu_capability};
use super::is_placeholder;
use super::requirements::{LabelIssue, PoolReqs, is_well_known, label_issues, normalize_key};
use crate::model::NodePool;
use crate::model::constraints::{PodConstraints, Req};
use fixedbitset::FixedBitSet;
use foldhash::{HashMap, HashMapExt};
use rayon::prelude::*;

/// One label key across all pools.
struct KeyIndex<'a> {
    /// Pools that constrain the key at all.
    defined: FixedBitSet,
    /// Pools whose constraints on the key are not plain `In` lists.
    complex: FixedBitSet,
    /// Value → pools whose `In` lists on the key contain it.
    postings: HashMap<&'a str, Postings>,
}

/// The pools of one value: a list while few, a bitset once a value is common (a capacity type
/// or architecture thousands of pools share), so a lookup never walks thousands of entries.
enum Postings {
    Few(Vec<u32>),
    Many(FixedBitSet),
}

impl Postings {
    fn add(&mut self, p: usize, len: usize) {
        match self {
            Postings::Few(list) => {
                if list.last() == Some(&(p as u32)) {
                    return;
                }
                list.push(p as u32);
                if list.len() > 64 {
                    let mut set = FixedBitSet::with_capacity(len);
                    set.extend(list.iter().map(|&q| q as usize));
                    *self = Postings::Many(set);
                }
            }
            Postings::Many(set) => set.insert(p),
        }
    }

    fn union_into(&self, set: &mut FixedBitSet) {
        match self {
            Postings::Few(list) => list.iter().for_each(|&p| set.insert(p as usize)),
            Postings::Many(s) => set.union_with(s),
        }
    }
}

/// One resource of each maker [`super::offers`] tells apart.
const NVIDIA: &str = "nvidia.com/gpu";
const NEURON: &str = "aws.amazon.com/neuron";

/// The pools of one index, looked up by what selects them.
pub struct PoolIndex<'a> {
    len: usize,
    keys: HashMap<&'a str, KeyIndex<'a>>,
    /// Per pool: whether it can launch GPU instances.
    pub capability: Vec<GpuCapability>,
    /// Per pool: its hard-taint class; pools whose hard taints are the same (in order) share one.
    pub taint_class: Vec<u32>,
    /// Per pool: whether it may offer NVIDIA and Neuron resources ([`super::offers`], which
    /// only tells those makers apart), asked for every template that may land on it.
    makers: Vec<[bool; 2]>,
}

impl<'a> PoolIndex<'a> {
    pub fn build(pools: &[NodePool<'a>]) -> Self {
        type Shapes<'a> = Vec<(&'a str, Option<Vec<&'a str>>)>;
        type Taints<'a> = Vec<(&'a str, &'a str, &'a str)>;
        let len = pools.len();
        // What each pool contributes is read on every core; only filling the tables is serial.
        let per_pool: Vec<(Shapes<'a>, Taints<'a>, GpuCapability, [bool; 2])> = pools
            .par_iter()
            .map(|pool| {
                let hard = pool
                    .taints
                    .iter()
                    .filter(|t| t.is_hard())
                    .map(|t| (t.key, t.value, t.effect))
                    .collect();
                (
                    PoolReqs::of(pool).shapes().collect(),
                    hard,
                    gpu_capability(pool),
                    [NVIDIA, NEURON].map(|r| super::offers(pool, r)),
                )
            })
            .collect();
        let mut keys: HashMap<&'a str, KeyIndex<'a>> = HashMap::new();
        let mut classes: HashMap<Taints<'a>, u32> = HashMap::new();
        let mut taint_class = Vec::with_capacity(len);
        let mut capability = Vec::with_capacity(len);
        let mut makers = Vec::with_capacity(len);
        for (p, (shapes, hard, cap, offered)) in per_pool.into_iter().enumerate() {
            for (key, values) in shapes {
                let k = keys.entry(key).or_insert_with(|| KeyIndex {
                    defined: FixedBitSet::with_capacity(len),
                    complex: FixedBitSet::with_capacity(len),
                    postings: HashMap::new(),
                });
                k.defined.insert(p);
                match values {
                    Some(vs) => {
                        for v in vs {
                            k.postings
                                .entry(v)
                                .or_insert_with(|| Postings::Few(Vec::new()))
                                .add(p, len);
                        }
                    }
                    None => k.complex.insert(p),
                }
            }
            let next = classes.len() as u32;
            taint_class.push(*classes.entry(hard).or_insert(next));
            capability.push(cap);
            makers.push(offered);
        }
        PoolIndex {
            len,
            keys,
            capability,
            taint_class,
            makers,
        }
    }

    /// [`super::offers`] for pool `p`.
    pub fn offers(&self, p: usize, resource: &str) -> bool {
        let maker = if resource.starts_with("nvidia.com/") {
            0
        } else if resource.starts_with("aws.amazon.com/neuron") {
            1
        } else {
            return true;
        };
        self.makers.get(p).is_none_or(|m| m[maker])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn all(&self) -> FixedBitSet {
        let mut s = FixedBitSet::with_capacity(self.len);
        s.insert_range(..);
        s
    }

    /// Pools that may satisfy one pod requirement; `None`: no cheap filter applies.
    fn req_candidates(&self, r: &Req<'_>) -> Option<FixedBitSet> {
        if r.op != "In" || r.values.iter().any(|v| is_placeholder(v)) {
            return None;
        }
        let key = normalize_key(r.key);
        let Some(k) = self.keys.get(key) else {
            // No pool constrains the key: well-known keys are on every node, custom ones on none.
            return Some(if is_well_known(key) {
                self.all()
            } else {
                FixedBitSet::with_capacity(self.len)
            });
        };
        let mut set = k.complex.clone();
        if is_well_known(key) {
            let mut open = k.defined.clone();
            open.toggle_range(..);
            set.union_with(&open);
        }
        for v in &r.values {
            if let Some(ps) = k.postings.get(v) {
                ps.union_into(&mut set);
            }
        }
        Some(set)
    }

    /// A superset of the pools whose labels fit the constraints.
    pub fn candidates(&self, pod: &PodConstraints<'_>) -> FixedBitSet {
        let intersect = |reqs: &mut dyn Iterator<Item = &Req<'_>>| {
            let mut acc: Option<FixedBitSet> = None;
            for r in reqs {
                if let Some(c) = self.req_candidates(r) {
                    match &mut acc {
                        Some(a) => a.intersect_with(&c),
                        None => acc = Some(c),
                    }
                }
            }
            acc.unwrap_or_else(|| self.all())
        };
        if pod.terms.is_empty() {
            return intersect(&mut pod.base.iter());
        }
        let mut out = FixedBitSet::with_capacity(self.len);
        for term in &pod.terms {
            out.union_with(&intersect(&mut pod.base.iter().chain(term.iter())));
        }
        out
    }

    /// The pools whose labels and requirements fit the constraints, checked in full.
    pub fn label_fits(&self, pod: &PodConstraints<'_>, pools: &[NodePool<'_>]) -> Vec<u32> {
        self.candidates(pod)
            .ones()
            .filter(|&p| label_issues(pod, &pools[p]).is_empty())
            .map(|p| p as u32)
            .collect()
    }

    /// Where the constraints land, for everything that shares their label signature.
    pub fn placement(&self, pod: &PodConstraints<'_>, pools: &[NodePool<'_>]) -> Placement {
        let fits = self.label_fits(pod, pools);
        let mut gpu_classes: Vec<ClassPools> = Vec::new();
        for &p in &fits {
            if self.capability[p as usize] == GpuCapability::None {
                continue;
            }
            let class = self.taint_class[p as usize];
            match gpu_classes.iter_mut().find(|c| c.class == class) {
                Some(c) => c.pools.push(p),
                None => gpu_classes.push(ClassPools {
                    class,
                    pools: vec![p],
                }),
            }
        }
        // Kept for the run, one per label signature (tens of thousands in a large repository).
        let mut fits = fits;
        fits.shrink_to_fit();
        gpu_classes.shrink_to_fit();
        Placement { fits, gpu_classes }
    }

    /// The pool among those `keep` accepts with the fewest label issues (first by index on ties;
    /// with `prefer_explicit`, an explicit GPU pool wins a tie). `None` when one of them fits.
    ///
    /// Pools are tried best-first by how many of the pod's plain `In` requirements they may meet;
    /// each unmet one is an issue, so the search stops once no remaining pool can beat the best.
    pub fn closest(
        &self,
        pod: &PodConstraints<'_>,
        pools: &[NodePool<'_>],
        keep: impl Fn(usize) -> bool,
        prefer_explicit: bool,
    ) -> Option<(usize, Vec<LabelIssue>)> {
        // Most constraints fit some pool: the candidates say so without ranking every pool.
        let fits = self
            .candidates(pod)
            .ones()
            .any(|p| keep(p) && label_issues(pod, &pools[p]).is_empty());
        if fits {
            return None;
        }
        let sets: Vec<FixedBitSet> = pod
            .base
            .iter()
            .filter_map(|r| self.req_candidates(r))
            .collect();
        // Pools by lower bound (unmet plain requirements), each bound in pool order.
        let order = by_unmet(&sets, self.len).filter(|&(_, p)| keep(p));
        let rank = |p: usize, n: usize| {
            let explicit = prefer_explicit && self.capability[p] == GpuCapability::Explicit;
            (n, !explicit, p)
        };
        let mut best: Option<(usize, Vec<LabelIssue>)> = None;
        for (bound, p) in order {
            if best.as_ref().is_some_and(|(_, b)| bound > b.len()) {
                break;
            }
            let issues = label_issues(pod, &pools[p]);
            if issues.is_empty() {
                return None;
            }
            let better = best
                .as_ref()
                .is_none_or(|(bp, b)| rank(p, issues.len()) < rank(*bp, b.len()));
            if better {
                best = Some((p, issues));
            }
        }
        best
    }
}

/// Pools `0..len` with how many of `sets` each is not in, fewest first and ascending within one
/// count. Counted a word of pools at a time, and one count at a time as the caller asks: a search
/// that stops after the first counts never looks at the other pools one by one (it runs once per
/// pod that fits no pool, and pools number in the tens of thousands).
fn by_unmet(sets: &[FixedBitSet], len: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
    const BITS: usize = usize::BITS as usize;
    let words = len.div_ceil(BITS);
    // planes[i][w]: bit i of the count of sets each pool of word w is in (a ripple-carry adder).
    let planes_n = (usize::BITS - sets.len().leading_zeros()) as usize;
    let mut planes = vec![vec![0usize; words]; planes_n];
    for set in sets {
        for (w, &block) in set.as_slice().iter().enumerate().take(words) {
            let mut carry = block;
            for plane in planes.iter_mut() {
                let sum = plane[w] ^ carry;
                carry &= plane[w];
                plane[w] = sum;
                if carry == 0 {
                    break;
                }
            }
        }
    }
    let planes = std::rc::Rc::new(planes);
    (0..=sets.len()).flat_map(move |bound| {
        let met = sets.len() - bound;
        let planes = std::rc::Rc::clone(&planes);
        (0..words).flat_map(move |w| {
            let tail = len - w * BITS;
            let mut m = if tail >= BITS {
                !0
            } else {
                (1usize << tail) - 1
            };
            for (i, plane) in planes.iter().enumerate() {
                m &= if met >> i & 1 == 1 {
                    plane[w]
                } else {
                    !plane[w]
                };
            }
            std::iter::successors((m != 0).then_some(m), |m| {
                let next = m & (m - 1);
                (next != 0).then_some(next)
            })
            .map(move |m| (bound, w * BITS + m.trailing_zeros() as usize))
        })
    })
}

/// Where constraints with one label signature may land.
#[derive(Debug, Default)]
pub struct Placement {
    /// Pools whose labels and requirements fit, ascending.
    pub fits: Vec<u32>,
    /// The GPU-capable ones among them, grouped by taint class in order of their first pool.
    pub gpu_classes: Vec<ClassPools>,
}

/// GPU pools of one taint class that a placement fits.
#[derive(Debug)]
pub struct ClassPools {
    pub class: u32,
    /// Ascending; the first is the class's representative.
    pub pools: Vec<u32>,
}

impl Placement {
    /// How many GPU-capable pools the labels fit.
    pub fn gpu_pools(&self) -> usize {
        self.gpu_classes.iter().map(|c| c.pools.len()).sum()
    }
}

/// What decides label placement, as a key: requirements (without locations), affinity terms and
/// GPUs per pod. Templates with equal signatures land on the same pools.
pub fn label_signature(pod: &PodConstraints<'_>) -> String {
    // Pushed piece by piece, not formatted: there is one per GPU template variant, and the
    // formatter cost more than the copying.
    let reqs = pod.base.iter().chain(pod.terms.iter().flatten());
    let len: usize = reqs
        .map(|r| r.key.len() + r.op.len() + r.values.iter().map(|v| v.len() + 1).sum::<usize>() + 2)
        .sum();
    let mut s = String::with_capacity(len + pod.terms.len() + 21);
    let req = |s: &mut String, r: &Req<'_>| {
        s.push_str(r.key);
        s.push('\u{1f}');
        s.push_str(r.op);
        for v in &r.values {
            s.push('\u{1f}');
            s.push_str(v);
        }
        s.push('\u{1e}');
    };
    for r in &pod.base {
        req(&mut s, r);
    }
    for term in &pod.terms {
        s.push('\u{1d}');
        for r in term {
            req(&mut s, r);
        }
    }
    s.push('\u{1c}');
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = pod.nvidia_gpus;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    s.extend(digits[at..].iter().map(|&d| char::from(d)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Object, pod_templates};
    use crate::yaml::{Budget, parse};

    const POOLS: &str = r#"
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  template:
    metadata: {labels: {team: a, role: gpu}}
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d, p5]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: b}
spec:
  template:
    metadata: {labels: {team: b}}
    spec:
      requirements:
        - {key: role, operator: NotIn, values: [cpu]}
        - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [l4]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: c}
spec:
  template:
    spec:
      requirements:
        - {key: team, operator: In, values: ["${TEAM}"]}
        - {key: zone-class, operator: Exists}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: d}
spec:
  template:
    metadata: {labels: {team: d, karpenter.sh/capacity-type: on-demand}}
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: e}
spec:
  template:
    metadata: {labels: {team: a}}
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ["2"]}
        - {key: beta.kubernetes.io/arch, operator: In, values: [arm64]}
"#;

    const SELECTORS: &[&str] = &[
        "",
        "nodeSelector: {team: a}",
        "nodeSelector: {team: b, role: gpu}",
        "nodeSelector: {team: c}",
        "nodeSelector: {team: zz}",
        "nodeSelector: {node-role: gpu}",
        "nodeSelector: {karpenter.sh/nodepool: d}",
        "nodeSelector: {karpenter.sh/capacity-type: on-demand}",
        "nodeSelector: {karpenter.sh/capacity-type: spot, team: a}",
        "nodeSelector: {kubernetes.io/arch: arm64}",
        "nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}",
        "nodeSelector: {team: \"${T}\"}",
        "nodeSelector: {zone-class: x}",
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: In, values: [b, d]}]}, {matchExpressions: [{key: role, operator: Exists}]}]}}}",
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: NotIn, values: [a]}]}]}}}",
        "nodeSelector: {team: a}\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}]}]}}}",
    ];

    /// The pools of `POOLS` and their index.
    fn with_pools(f: impl FnOnce(&[NodePool], &PoolIndex)) {
        let p = parse(POOLS, Budget::default());
        let objs: Vec<Object> = p
            .docs
            .iter()
            .filter_map(|d| Object::from_node(0, d.root()))
            .collect();
        let pools: Vec<NodePool> = objs
            .iter()
            .enumerate()
            .filter_map(|(i, o)| NodePool::from_object(i, o))
            .collect();
        let ix = PoolIndex::build(&pools);
        f(&pools, &ix);
    }

    /// The candidate index must give exactly what checking every pool gives.
    #[test]
    fn index_agrees_with_checking_every_pool() {
        with_pools(check_every_selector);
    }

    fn check_every_selector(pools: &[NodePool], ix: &PoolIndex) {
        for sel in SELECTORS {
            for gpus in [1, 8] {
                let y = format!(
                    "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {sel}\n  containers:\n    - name: c\n      resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
                );
                let q = parse(&y, Budget::default());
                let o = Object::from_node(1, q.docs[0].root()).expect("pod");
                let t = pod_templates(0, &o).pop().expect("template");
                let pod = PodConstraints::from_template(&t);
                let brute: Vec<u32> = (0..pools.len())
                    .filter(|&p| label_issues(&pod, &pools[p]).is_empty())
                    .map(|p| p as u32)
                    .collect();
                assert_eq!(ix.label_fits(&pod, pools), brute, "{sel} ({gpus} GPUs)");
                for prefer in [false, true] {
                    let mut best: Option<(usize, usize)> = None;
                    for (p, pool) in pools.iter().enumerate() {
                        let n = label_issues(&pod, pool).len();
                        let explicit = prefer && ix.capability[p] == GpuCapability::Explicit;
                        let better = best.is_none_or(|(bp, bn)| {
                            n < bn
                                || (n == bn
                                    && explicit
                                    && !(prefer && ix.capability[bp] == GpuCapability::Explicit))
                        });
                        if better {
                            best = Some((p, n));
                        }
                    }
                    let want = if brute.is_empty() {
                        best.map(|(p, _)| p)
                    } else {
                        None
                    };
                    let got = ix.closest(&pod, pools, |_| true, prefer).map(|(p, _)| p);
                    assert_eq!(got, want, "closest for {sel} ({gpus} GPUs)");
                }
            }
        }
    }

    /// Counting a word of pools at a time gives the order counting pool by pool gives, across
    /// word boundaries and for any number of sets.
    #[test]
    fn pools_by_unmet_requirements_agree_with_counting_each() {
        let len = 200;
        for k in 0..6 {
            let sets: Vec<FixedBitSet> = (0..k)
                .map(|i| {
                    let mut s = FixedBitSet::with_capacity(len);
                    (0..len)
                        .filter(|p| (p * 7 + i * 13) % (i + 2) == 0)
                        .for_each(|p| s.insert(p));
                    s
                })
                .collect();
            let mut want: Vec<(usize, usize)> = (0..len)
                .map(|p| (k - sets.iter().filter(|s| s.contains(p)).count(), p))
                .collect();
            want.sort();
            assert_eq!(by_unmet(&sets, len).collect::<Vec<_>>(), want, "{k} sets");
        }
    }

    #[test]
    fn pools_with_the_same_taints_share_a_class() {
        with_pools(|_, ix| {
            assert_ne!(ix.taint_class[0], ix.taint_class[1]);
            assert_eq!(ix.taint_class[1], ix.taint_class[2]);
        });
    }
}
