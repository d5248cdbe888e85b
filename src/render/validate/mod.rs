//! Semantic validation of a typed profile: names, references between classes, teams and jobs,
//! quotas against ceilings, GPU kinds against the catalog. Every problem is collected.

mod checkpoint;
mod class;
mod cluster;
mod formats;
mod gpus;
mod hints;
mod jobs;
mod sharing;
mod teams;
#[cfg(test)]
mod tests;

use super::platform::{ClassSpec, Platform};
use super::profile::Profile;
use super::{ProfileProblem, span_of};
use crate::render::wrong::Wrong;
use crate::yaml::Span;
use class::class;
use cluster::{cluster, device_plugin};
use jobs::jobs;
use serde_saphyr::Spanned;
use teams::teams;

pub use formats::dns_label_problem;

/// Default seconds a worker gets to checkpoint. Spot gives a 120-second notice, but the grace
/// period only starts when Karpenter has read the notice and drained the node: keep a margin.
pub const DEFAULT_GRACE_SECONDS: u32 = 90;
const SPOT_NOTICE_SECONDS: u32 = 120;

/// The least grace a pod that can land on spot may have: the lint rule's default minimum
/// (`spot-termination-grace-too-short`), so that rendered output passes the self-check.
fn spot_min_grace_seconds() -> u32 {
    let min = crate::config::Settings::default().spot_min_grace_seconds;
    u32::try_from(min).unwrap_or(SPOT_NOTICE_SECONDS)
}

/// The profile's class names, in order (duplicates kept: they are reported on their own).
fn class_names(p: &Profile) -> Vec<&str> {
    p.classes
        .value
        .iter()
        .map(|c| c.name.value.as_str())
        .collect()
}

struct V<'t> {
    text: &'t str,
    out: Vec<ProfileProblem>,
}

impl V<'_> {
    fn at<T>(&self, s: &Spanned<T>) -> Span {
        span_of(self.text, s)
    }
    fn err<T>(
        &mut self,
        wrong: Wrong,
        at: &Spanned<T>,
        message: impl Into<String>,
    ) -> &mut ProfileProblem {
        let span = self.at(at);
        self.out.push(ProfileProblem {
            wrong,
            span,
            message: message.into(),
            help: None,
            related: Vec::new(),
        });
        let n = self.out.len() - 1;
        &mut self.out[n]
    }
    fn dns_label(&mut self, s: &Spanned<String>, what: &str, max: usize) -> bool {
        match dns_label_problem(&s.value, max) {
            None => true,
            Some(why) => {
                self.err(Wrong::InvalidName, s, format!("{what} `{}` is not a valid name: it {why}", s.value)).help =
                    Some("names become Kubernetes object names and labels: lowercase letters, digits and `-`".into());
                false
            }
        }
    }
}

impl ProfileProblem {
    fn help(&mut self, h: impl Into<String>) -> &mut Self {
        self.help = Some(h.into());
        self
    }
    fn related(&mut self, span: Span, m: impl Into<String>) -> &mut Self {
        self.related.push((span, m.into()));
        self
    }
}

pub(super) fn validate(p: &Profile, text: &str) -> Result<Platform, Vec<ProfileProblem>> {
    let mut v = V {
        text,
        out: Vec::new(),
    };
    let cluster = cluster(&mut v, p);
    let device_plugin = device_plugin(&mut v, p, cluster.ami_family);
    let mut classes: Vec<Option<ClassSpec>> = Vec::new();
    for (i, c) in p.classes.value.iter().enumerate() {
        let dup = p.classes.value[..i]
            .iter()
            .find(|o| o.name.value == c.name.value);
        if let Some(first) = dup {
            let first_span = v.at(&first.name);
            v.err(
                Wrong::Duplicate,
                &c.name,
                format!("class `{}` is defined twice", c.name.value),
            )
            .related(first_span, "first defined here")
            .help("class names must be unique");
            classes.push(None);
            continue;
        }
        classes.push(class(&mut v, c, cluster.ami_family));
    }
    if p.classes.value.is_empty() {
        v.err(
            Wrong::OutOfRange,
            &p.classes,
            "`classes` is empty: a platform needs at least one workload class",
        );
    }
    sharing::cluster_needs(&mut v, p, cluster.ami_family);
    let teams = teams(&mut v, p, &classes);
    let jobs = jobs(&mut v, p, &classes, &teams);
    if v.out.is_empty() {
        Ok(Platform {
            cluster,
            device_plugin,
            classes: classes.into_iter().flatten().collect(),
            teams: teams.into_iter().flatten().collect(),
            jobs,
        })
    } else {
        Err(v.out)
    }
}
