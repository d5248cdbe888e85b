//! The value of `gpuops rule NAME` and `lint --rule NAME`: any string (a user policy is only
//! known once its directory is read), with the built-in rules and the bundled policies offered
//! as the possible values shell completions list.

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use std::ffi::OsStr;

#[derive(Clone, Copy)]
pub(crate) struct RuleName;

impl TypedValueParser for RuleName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let rules = gpuops::rules::all()
            .iter()
            .map(|r| PossibleValue::new(r.name).help(r.summary));
        let policies = gpuops::policy::bundled::PACK
            .iter()
            .map(|b| PossibleValue::new(b.name).help("bundled policy, off until enabled"));
        Some(Box::new(rules.chain(policies)))
    }
}
