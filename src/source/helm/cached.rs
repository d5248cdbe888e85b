//! What a chart render depends on, and its output as a cache entry: the chart's directory
//! whole (templates, subcharts under `charts/`, `.helmignore`), the values files' content, and
//! what it is rendered with. helm's output does not depend on where the chart is.

use super::{Helm, Unit, builder::Rendered};
use crate::cache::codec::{Reader, Writer};
use crate::source::Sources;
use crate::source::cached::{Cached, Inputs};
use crate::source::exec;

impl Cached for Helm {
    const KIND: &'static str = "helm";

    fn key(&self, s: &Sources, unit: &Unit, inputs: &mut Inputs) -> Option<()> {
        let r = unit.render.as_ref().ok()?;
        // What would be skipped is not built, so not cached either.
        if !s.config.helm || !unit.chart.missing_dependencies().is_empty() {
            return None;
        }
        let helm = self.program.get_or_init(|| exec::which("helm")).as_ref()?;
        inputs.program(helm)?;
        inputs.tree(&unit.chart.dir)?;
        inputs.str(&r.release);
        inputs.strs(r.namespace.iter());
        inputs.count(r.values.len());
        for v in &r.values {
            inputs.file(v)?;
        }
        inputs.strs(r.inline.iter());
        inputs.strs(r.set.iter()).strs(r.set_string.iter());
        inputs.count(usize::from(r.skip_crds));
        Some(())
    }

    fn encode(&self, _unit: &Unit, r: &Rendered) -> Option<Vec<u8>> {
        let mut w = Writer::default();
        w.str(&r.text);
        Some(w.into_bytes())
    }

    fn decode(&self, unit: &Unit, payload: &[u8]) -> Option<Rendered> {
        let mut r = Reader::new(payload);
        let text = r.str()?.to_string();
        let helm = self.program.get()?.as_ref()?;
        let command = super::command(helm, &unit.chart, unit.render.as_ref().ok()?);
        r.is_done().then_some(Rendered { text, command })
    }
}
