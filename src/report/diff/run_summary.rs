//! `summary.json` read back: the parts of a run that two runs are compared by (`diff`), as
//! owned values. A run analysed in the same invocation goes through the same type (its
//! [`Summary`] turned into JSON values and read back), so a dump and the summary.json a
//! report wrote of it compare the same way.
//!
//! Fields added to summary.json after a reader was written are ignored; fields this reader
//! knows that an older summary.json lacks are `Option`s or default to "unknown".

use crate::analyze::top::TopKey;
use crate::report::run::summary::{Summary, SCHEMA_VERSION};
use crate::text::escape::text_and_base64;
use serde::Deserialize;

/// One run read back.
#[derive(Clone, Debug, Deserialize)]
pub struct RunSummary {
    pub schema_version: u32,
    pub partial: bool,
    pub options: RunOptions,
    pub files: Vec<RunFile>,
    pub totals: RunCounts,
    pub by_db: Vec<RunDb>,
    pub by_type: Vec<RunType>,
    pub by_encoding: Vec<RunEncoding>,
    pub ttl: RunTtl,
    pub prefixes: RunPrefixes,
    pub patterns: RunGroupTable,
    pub top_keys: RunTopKeys,
    pub notes: Vec<String>,
    #[serde(default)]
    pub lint: Option<RunLint>,
    /// Absent from summaries written before pattern × encoding tables existed.
    #[serde(default)]
    pub pattern_encodings: Option<RunPatternEncodings>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunOptions {
    pub delimiter: String,
    pub depth: usize,
    pub top: usize,
    pub max_prefixes: usize,
    pub filtered: bool,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunFile {
    pub path: String,
    pub ctime: Option<i64>,
    pub ttl_reference_ms: i64,
    pub partial: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct RunCounts {
    pub keys: u64,
    pub elements: u64,
    pub serialized_bytes: u64,
    pub memory_bytes: u64,
    pub keys_with_ttl: u64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunDb {
    pub db: u64,
    #[serde(flatten)]
    pub counts: RunCounts,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunType {
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(flatten)]
    pub counts: RunCounts,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunEncoding {
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: String,
    #[serde(flatten)]
    pub counts: RunCounts,
}

#[derive(Clone, Copy, Debug, Deserialize)]
pub struct RunTally {
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunTtlBucket {
    pub bucket: String,
    #[serde(flatten)]
    pub tally: RunTally,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunStorm {
    pub minute_start_ms: i64,
    #[serde(flatten)]
    pub tally: RunTally,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunTtl {
    pub buckets: Vec<RunTtlBucket>,
    pub expiry_storms: Vec<RunStorm>,
}

/// A prefix, pattern or tag row.
#[derive(Clone, Debug, Deserialize)]
pub struct RunGroup {
    pub name: String,
    #[serde(default)]
    pub name_base64: Option<String>,
    pub keys: u64,
    pub memory_bytes: u64,
    pub no_ttl_keys: u64,
    #[serde(default)]
    pub error_keys: u64,
    #[serde(default)]
    pub error_bytes: u64,
}

/// The bounds of a heavy-hitter table: what a name it does not list may hold.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct RunTableBounds {
    pub capped: bool,
    pub distinct_kept: usize,
    pub absent_max_keys: u64,
    pub absent_max_memory_bytes: u64,
    /// Held names beyond the listed rows; `None` in summaries that predate the field.
    #[serde(default)]
    pub unlisted_keys: Option<u64>,
    #[serde(default)]
    pub unlisted_memory_bytes: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunGroupTable {
    #[serde(flatten)]
    pub bounds: RunTableBounds,
    pub rows: Vec<RunGroup>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunPrefixDepth {
    pub depth: usize,
    #[serde(flatten)]
    pub table: RunGroupTable,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunPrefixes {
    pub depths: Vec<RunPrefixDepth>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunTopKey {
    pub db: u64,
    pub key: String,
    #[serde(default)]
    pub key_base64: Option<String>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: String,
    pub elements: Option<u64>,
    pub memory_bytes: u64,
    pub expiry_ms: Option<i64>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunTopKeys {
    pub n: usize,
    pub by_memory: Vec<RunTopKey>,
}

/// One lint finding; its subject is under the field its kind names.
#[derive(Clone, Debug, Deserialize)]
pub struct RunFinding {
    pub rule: String,
    pub severity: String,
    pub db: Option<u64>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    minute: Option<String>,
    #[serde(default)]
    slot: Option<u64>,
    #[serde(default)]
    tag: Option<String>,
    #[serde(default)]
    file: Option<String>,
    pub value: i64,
    pub keys: u64,
    pub memory_bytes: u64,
}

impl RunFinding {
    /// The subject's kind (`key`, `pattern`, …) and its text as summary.json shows it.
    pub fn subject(&self) -> (&'static str, String) {
        let text = |kind, s: &Option<String>| s.as_ref().map(|s| (kind, s.clone()));
        text("key", &self.key)
            .or_else(|| text("pattern", &self.pattern))
            .or_else(|| text("minute", &self.minute))
            .or_else(|| self.slot.map(|s| ("slot", s.to_string())))
            .or_else(|| text("tag", &self.tag))
            .or_else(|| text("file", &self.file))
            .unwrap_or(("none", String::new()))
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunRuleSummary {
    pub rule: String,
    pub severity: String,
    pub findings: u64,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunLint {
    pub findings: Vec<RunFinding>,
    pub summary: Vec<RunRuleSummary>,
    #[serde(default)]
    pub thresholds: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunPatternEncoding {
    pub pattern: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: String,
    pub keys: u64,
    pub memory_bytes: u64,
    pub error_keys: u64,
    pub error_bytes: u64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct RunPatternEncodings {
    #[serde(flatten)]
    pub bounds: RunTableBounds,
    pub rows: Vec<RunPatternEncoding>,
}

impl From<&TopKey> for RunTopKey {
    fn from(k: &TopKey) -> Self {
        let (key, key_base64) = text_and_base64(&k.key);
        RunTopKey {
            db: k.db,
            key: key.into_owned(),
            key_base64,
            type_name: k.type_key.name().into_owned(),
            encoding: k.encoding.to_string(),
            elements: k.elements,
            memory_bytes: k.memory_bytes,
            expiry_ms: k.expiry_ms,
        }
    }
}

impl RunSummary {
    /// A summary.json document (`origin` names it in errors): refused with a clear
    /// message when it is not one, or of a schema version this rdbscope does not read.
    pub fn from_value(document: serde_json::Value, origin: &str) -> Result<RunSummary, String> {
        let version = match document.get("schema_version") {
            Some(v) => v.as_u64().ok_or_else(|| {
                format!("{origin}: schema_version is {v}, not a number: not a summary.json")
            })?,
            None => {
                return Err(format!(
                    "{origin}: no schema_version: not a summary.json written by rdbscope report"
                ))
            }
        };
        // Version 2 added fields only (`state`); 3 changed what a string's elements are
        // (`reconcile_elements`): all read the same way.
        if !(1..=u64::from(SCHEMA_VERSION)).contains(&version) {
            return Err(format!(
                "{origin}: summary.json schema_version {version}: this rdbscope reads versions \
                 1 to {SCHEMA_VERSION}; compare it with the rdbscope that wrote it, or run the \
                 report again"
            ));
        }
        serde_json::from_value(document).map_err(|e| format!("{origin}: not a summary.json: {e}"))
    }

    /// Written by an rdbscope that counted a string's length as its elements: a schema
    /// version before 3 whose strings hold elements.
    fn counts_string_lengths(&self) -> bool {
        let is_string = |name: &str| name == "string";
        self.schema_version < 3
            && (self
                .by_type
                .iter()
                .any(|t| is_string(&t.type_name) && t.counts.elements > 0)
                || self
                    .top_keys
                    .by_memory
                    .iter()
                    .any(|k| is_string(&k.type_name) && k.elements.is_some_and(|e| e > 0)))
    }

    /// When one side was written by an rdbscope that counted a string's length as its
    /// elements and the other was not (a version 2 summary whose strings hold none needs
    /// nothing): takes strings' lengths out of that side's elements
    /// where the summary says what they were (totals, types, encodings, top keys, a single
    /// db), gives its dbs the other side's elements where it does not (so no change is
    /// shown), and says so.
    pub fn reconcile_elements(old: &mut RunSummary, new: &mut RunSummary) -> Option<String> {
        let (older, newer, side) = match (old.counts_string_lengths(), new.counts_string_lengths())
        {
            (true, false) => (old, &*new, "OLD"),
            (false, true) => (new, &*old, "NEW"),
            _ => return None,
        };
        let is_string = |name: &str| name == "string";
        let lengths: u64 = older
            .by_type
            .iter()
            .filter(|t| is_string(&t.type_name))
            .map(|t| t.counts.elements)
            .sum();
        older.totals.elements = older.totals.elements.saturating_sub(lengths);
        for t in older.by_type.iter_mut().filter(|t| is_string(&t.type_name)) {
            t.counts.elements = 0;
        }
        for e in older
            .by_encoding
            .iter_mut()
            .filter(|e| is_string(&e.type_name))
        {
            e.counts.elements = 0;
        }
        for k in older
            .top_keys
            .by_memory
            .iter_mut()
            .filter(|k| is_string(&k.type_name))
        {
            k.elements = Some(0);
        }
        let dbs = match older.by_db.as_mut_slice() {
            [only] => {
                only.counts.elements = older.totals.elements;
                ""
            }
            dbs => {
                for db in dbs {
                    if let Some(other) = newer.by_db.iter().find(|n| n.db == db.db) {
                        db.counts.elements = other.counts.elements;
                    }
                }
                "; its elements per db are not compared"
            }
        };
        Some(format!(
            "{side} was written by an older rdbscope (summary.json schema_version {}), which \
             counted a string's length as its elements: strings are left out of its elements{dbs}",
            older.schema_version
        ))
    }

    /// A summary.json file's text.
    pub fn parse(text: &str, origin: &str) -> Result<RunSummary, String> {
        let document = serde_json::from_str(text)
            .map_err(|e| format!("{origin}: not JSON ({e}): expected a summary.json"))?;
        RunSummary::from_value(document, origin)
    }

    /// A summary built in this process, read back the way a file would be.
    pub fn of(summary: &Summary, origin: &str) -> Result<RunSummary, String> {
        let document = serde_json::to_value(summary).map_err(|e| format!("{origin}: {e}"))?;
        RunSummary::from_value(document, origin)
    }
}

#[cfg(test)]
mod tests {
    use super::RunSummary;

    #[test]
    fn unknown_versions_and_other_documents_are_refused_by_name() {
        let e = RunSummary::parse(r#"{"schema_version": 99}"#, "old.json").unwrap_err();
        assert!(
            e.contains("old.json")
                && e.contains("schema_version 99")
                && e.contains("reads versions 1 to 3"),
            "{e}"
        );
        let e = RunSummary::parse(r#"{"keys": 3}"#, "x.json").unwrap_err();
        assert!(e.contains("no schema_version"), "{e}");
        let e = RunSummary::parse("REDIS0011", "dump").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        let e = RunSummary::parse(r#"{"schema_version": 1}"#, "cut.json").unwrap_err();
        assert!(
            e.contains("cut.json: not a summary.json: missing field"),
            "{e}"
        );
    }
}
