//! summary.json's `state`: what `rdbscope merge` needs to merge runs done apart (one per
//! shard, on different machines) into the report one run over all their dumps gives. It
//! holds the settings the runs must share, the per-file rows, every aggregate whole and the
//! per-key lint rules' summaries: bounded whatever the dump's size (at most `2.5 m` names
//! per heavy-hitter table, the top-N candidates, the worst findings up to the cap; no
//! per-key data), and written on one line inside the indented document.

use crate::aggregates::prefixes::MAX_DEPTH;
use crate::aggregates::{AggregateConfig, Aggregates};
use crate::lint::keys::{KeyRules, KeyRulesState};
use crate::lint::{LintConfig, Linted};
use crate::pass::analysis::{Analysis, FileOutcome};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::sync::Arc;

/// What shapes a run's aggregates beyond its dumps: runs merge only when theirs are equal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// `--top`, `--delimiter`, `--depth`, `--max-prefixes`, `--under`.
    pub aggregates: AggregateConfig,
    /// The lint thresholds, the rules left out, `--max-findings`.
    pub lint: LintConfig,
    /// Whether a filter was given, and the filter flags as given.
    pub filtered: bool,
    pub filters: Vec<String>,
    /// The server-model flags: `--redis-version`, `--allocator`, and the configuration
    /// directives of `--config` and `--config-set`.
    pub model: Vec<String>,
}

/// The flag a setting (its path in [`RunSettings`]' JSON) comes from.
fn flag_of(path: &str) -> String {
    let fixed = match path {
        "aggregates.top_n" => "--top",
        "aggregates.prefixes.delimiter" | "lint.delimiter" => "--delimiter",
        "aggregates.prefixes.depth" => "--depth",
        "aggregates.prefixes.cap" | "lint.group_cap" => "--max-prefixes",
        "aggregates.prefixes.under" => "--under",
        "lint.disabled" => "--disable / --profile (the rules left out)",
        "lint.max_findings" => "--max-findings",
        "lint.thresholds.idle_cold_seconds" => "--idle-cold-days (in seconds)",
        "filtered" | "filters" => {
            "the filters (--db, --type, --match, --regex, --not-match, --min-memory, --no-expired)"
        }
        "model" => "the server model (--redis-version, --allocator, --config, --config-set)",
        _ => "",
    };
    match path.strip_prefix("lint.thresholds.") {
        Some(threshold) if fixed.is_empty() => format!("--{}", threshold.replace('_', "-")),
        _ if fixed.is_empty() => path.to_string(),
        _ => fixed.to_string(),
    }
}

/// Where `a` and `b` differ: `(path, a's value, b's value)`, objects compared field by field.
fn leaf_differences(path: &str, a: &Value, b: &Value, out: &mut Vec<(String, String, String)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (field, value) in x {
                let inner = if path.is_empty() {
                    field.clone()
                } else {
                    format!("{path}.{field}")
                };
                leaf_differences(&inner, value, y.get(field).unwrap_or(&Value::Null), out);
            }
        }
        _ if a != b => out.push((path.to_string(), a.to_string(), b.to_string())),
        _ => {}
    }
}

impl RunSettings {
    /// Each setting that differs between `self` (of run `here`) and `other` (of run
    /// `there`), as a phrase naming the flag and both values.
    pub fn differences(&self, here: &str, other: &RunSettings, there: &str) -> Vec<String> {
        let json = |s: &RunSettings| serde_json::to_value(s).unwrap_or_default();
        let mut leaves = Vec::new();
        leaf_differences("", &json(self), &json(other), &mut leaves);
        let mut phrases: Vec<String> = Vec::new();
        for (path, a, b) in leaves {
            // `--cluster` tells the cluster rules a lone shard is one; runs merged are
            // several dumps, which the rules take as a cluster's shards anyway.
            if path == "lint.cluster" {
                continue;
            }
            let phrase = format!("{}: {a} in {here}, {b} in {there}", flag_of(&path));
            if !phrases.iter().any(|p| p.starts_with(&flag_of(&path))) {
                phrases.push(phrase);
            }
        }
        phrases
    }
}

/// The state of a run, as [`write`] puts it in summary.json.
pub fn write(settings: &RunSettings, a: &Analysis<Linted>) -> serde_json::Result<Box<RawValue>> {
    #[derive(Serialize)]
    struct Written<'a> {
        settings: &'a RunSettings,
        files: &'a [FileOutcome],
        aggregates: &'a Aggregates,
        lint: &'a KeyRules,
    }
    let text = serde_json::to_string(&Written {
        settings,
        files: &a.files,
        aggregates: &a.merged.aggregates,
        lint: &a.merged.keys,
    })?;
    RawValue::from_string(text)
}

/// A run read back from its summary.json's state.
#[derive(Deserialize)]
pub struct RunState {
    pub settings: RunSettings,
    pub files: Vec<FileOutcome>,
    aggregates: Aggregates,
    lint: KeyRulesState,
}

impl RunState {
    /// The state of summary.json `text` (`origin` names it in errors): refused with a
    /// clear message when it is not a summary.json, or one without state.
    pub fn read(text: &str, origin: &str) -> Result<RunState, String> {
        #[derive(Deserialize)]
        struct Document {
            schema_version: Option<Value>,
            state: Option<Box<RawValue>>,
        }
        let document: Document = serde_json::from_str(text)
            .map_err(|e| format!("{origin}: not a summary.json ({e})"))?;
        let version = document
            .schema_version
            .ok_or_else(|| format!("{origin}: no schema_version: not a summary.json"))?;
        let current = super::summary::SCHEMA_VERSION;
        match version.as_u64() {
            Some(v) if v == u64::from(current) => {}
            Some(2) => {
                return Err(format!(
                    "{origin}: summary.json schema_version 2 counts a string's length as its \
                     elements (version {current} counts collections' only): run rdbscope report \
                     on that dump again"
                ))
            }
            Some(v) if v < u64::from(current) => {
                return Err(format!(
                    "{origin}: summary.json schema_version {v} carries no mergeable state (it \
                     came with version 2): run rdbscope report on that dump again"
                ))
            }
            _ => {
                return Err(format!(
                    "{origin}: summary.json schema_version {version}: this rdbscope merges \
                     version {current}; merge with the rdbscope that wrote it"
                ))
            }
        }
        let state = document.state.ok_or_else(|| {
            format!("{origin}: no state in this summary.json (rdbscope report writes one)")
        })?;
        let state: RunState = serde_json::from_str(state.get())
            .map_err(|e| format!("{origin}: state: {e}: not as rdbscope report writes it"))?;
        let depth = state.settings.aggregates.prefixes.depth;
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(format!(
                "{origin}: state: prefix depth {depth}: rdbscope counts 1 to {MAX_DEPTH}"
            ));
        }
        Ok(state)
    }

    /// The run as analysed, its lint rules checked with `config` (the merged runs').
    pub fn into_analysis(self, config: &Arc<LintConfig>) -> Analysis<Linted> {
        let profile = self.files.iter().find_map(|f| f.profile);
        Analysis {
            merged: Linted::of(
                self.aggregates,
                KeyRules::restore(Arc::clone(config), profile, self.lint),
            ),
            files: self.files,
        }
    }
}
