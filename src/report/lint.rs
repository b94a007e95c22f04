//! `lint` output: a summary table per rule and the findings as a table, one JSON object
//! (`{"findings": [...], "summary": [...]}`) or CSV rows. Field meanings are in
//! docs/lint.md. Keys, patterns, tags and paths go through [`escape_key`], CSV cells
//! also through [`neutralize_formula`].

use super::human::bytes;
use super::text_table::table;
use super::text_table::{output_width, wrap, wrap_indented, Keep, LIST_SEPARATOR};
use crate::lint::{Finding, LintReport, Severity, Subject, Thresholds};
use crate::text::escape::{escape_key, neutralize_formula, text_and_base64};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Worst findings named per rule in the summary.
const EXAMPLES: usize = 5;

pub const CSV_HEADER: [&str; 10] = [
    "rule",
    "severity",
    "db",
    "subject_kind",
    "subject",
    "value",
    "threshold",
    "keys",
    "memory_bytes",
    "advice",
];

/// The start of an expiry minute, as `2024-05-01T12:34Z`.
fn minute_text(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%MZ").to_string())
        .unwrap_or_default()
}

/// The subject as text, escaped: what every format shows.
pub fn subject_text(s: &Subject) -> Cow<'_, str> {
    match s {
        Subject::Key(b) | Subject::Pattern(b) | Subject::Tag(b) => escape_key(b),
        Subject::Minute(ms) => Cow::Owned(minute_text(*ms)),
        Subject::Slot(slot) => Cow::Owned(slot.to_string()),
        Subject::File(path) => escape_key(path.as_bytes()),
    }
}

/// The subject as a table shows it: the empty key as `""`.
fn subject_cell(s: &Subject) -> Cow<'_, str> {
    match s {
        Subject::Key(b) | Subject::Pattern(b) | Subject::Tag(b) if b.is_empty() => "\"\"".into(),
        _ => subject_text(s),
    }
}

/// The rule's advice, with the estimated saving when there is one.
fn advice(f: &Finding) -> Cow<'static, str> {
    match f.saving_bytes {
        Some(saving) => Cow::Owned(format!(
            "{}; estimated saving {saving} bytes",
            f.rule.advice()
        )),
        None => Cow::Borrowed(f.rule.advice()),
    }
}

/// The `lint --format json` object, also the `lint` section of summary.json (there with
/// the thresholds the findings were judged by). Fields of each object in alphabetical
/// order, as both have always written them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LintJson {
    pub findings: Vec<FindingJson>,
    pub summary: Vec<RuleJson>,
    /// summary.json only: the thresholds of the run; `None` when the summary's
    /// thresholds are not those of this rdbscope's rules (an older release's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted_keys",
        deserialize_with = "thresholds_if_known"
    )]
    pub thresholds: Option<Thresholds>,
}

/// One finding. Its subject is under the field its kind names (`key`, `pattern`,
/// `minute`, `slot`, `tag` or `file`), with `<kind>_base64` holding the exact bytes when
/// escaping changed them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FindingJson {
    #[serde(default)]
    pub advice: String,
    pub db: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_base64: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_base64: Option<String>,
    pub keys: u64,
    pub memory_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minute: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern_base64: Option<String>,
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saving_bytes: Option<u64>,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_base64: Option<String>,
    #[serde(default)]
    pub threshold: i64,
    pub value: i64,
}

/// One rule's totals over all its findings, and its worst subjects.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RuleJson {
    #[serde(default)]
    pub examples: Vec<String>,
    pub findings: u64,
    pub keys: u64,
    pub memory_bytes: u64,
    pub rule: String,
    pub severity: Severity,
}

/// Writes `value` with its object keys in alphabetical order, as a `serde_json::Value`
/// holds them (summary.json's objects whose fields are not a struct's). Here, below the
/// run's summary.json that uses it too.
pub fn sorted_keys<T: Serialize, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// Thresholds this rdbscope's rules read; `None` for any other object (an older
/// release's rules), so that two runs' thresholds compare as different.
fn thresholds_if_known<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Thresholds>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}

impl FindingJson {
    fn new(f: &Finding) -> Self {
        let mut row = FindingJson {
            advice: f.rule.advice().to_string(),
            db: f.db,
            file: None,
            file_base64: None,
            key: None,
            key_base64: None,
            keys: f.keys,
            memory_bytes: f.memory_bytes,
            minute: None,
            pattern: None,
            pattern_base64: None,
            rule: f.rule.id().to_string(),
            saving_bytes: f.saving_bytes,
            severity: f.rule.severity(),
            slot: None,
            tag: None,
            tag_base64: None,
            threshold: f.threshold,
            value: f.value,
        };
        let named = |bytes: &[u8]| {
            let (text, base64) = text_and_base64(bytes);
            (Some(text.into_owned()), base64)
        };
        match &f.subject {
            Subject::Key(b) => (row.key, row.key_base64) = named(b),
            Subject::Pattern(b) => (row.pattern, row.pattern_base64) = named(b),
            Subject::Tag(b) => (row.tag, row.tag_base64) = named(b),
            Subject::File(path) => (row.file, row.file_base64) = named(path.as_bytes()),
            Subject::Slot(slot) => row.slot = Some(u64::from(*slot)),
            s @ Subject::Minute(_) => row.minute = Some(subject_text(s).into_owned()),
        }
        row
    }

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

impl LintJson {
    /// The report's findings; `thresholds` for summary.json.
    pub fn new(r: &LintReport, thresholds: Option<&Thresholds>) -> Self {
        LintJson {
            findings: r.findings().map(FindingJson::new).collect(),
            summary: r
                .rules
                .iter()
                .map(|(rule, s)| RuleJson {
                    examples: s
                        .worst
                        .iter()
                        .take(EXAMPLES)
                        .map(|f| subject_text(&f.subject).into_owned())
                        .collect(),
                    findings: s.findings,
                    keys: s.keys,
                    memory_bytes: s.memory_bytes,
                    rule: rule.id().to_string(),
                    severity: rule.severity(),
                })
                .collect(),
            thresholds: thresholds.cloned(),
        }
    }
}

/// The findings as CSV rows under [`CSV_HEADER`] (also `findings.csv` of `report`).
pub fn write_csv(out: impl Write, r: &LintReport) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER)?;
    for f in r.findings() {
        w.write_record([
            f.rule.id(),
            f.rule.severity().name(),
            &f.db.map(|d| d.to_string()).unwrap_or_default(),
            f.subject.kind(),
            &neutralize_formula(subject_text(&f.subject)),
            &f.value.to_string(),
            &f.threshold.to_string(),
            &f.keys.to_string(),
            &f.memory_bytes.to_string(),
            &advice(f),
        ])?;
    }
    w.flush()
}

/// One row per rule: findings, keys, memory and the worst subjects.
pub fn summary_table(r: &LintReport) -> String {
    let mut t = table(
        &["rule", "severity", "findings", "keys", "memory", "worst"],
        2,
    );
    for (rule, s) in &r.rules {
        let worst: Vec<_> = s
            .worst
            .iter()
            .take(3)
            .map(|f| subject_cell(&f.subject))
            .collect();
        t.add_row(vec![
            rule.id().to_string(),
            rule.severity().name().to_string(),
            s.findings.to_string(),
            s.keys.to_string(),
            bytes(s.memory_bytes),
            worst.join(&LIST_SEPARATOR.to_string()),
        ]);
    }
    t.align_left(5)
        .names_in(5, Keep::List)
        .optional(&["severity", "keys"]);
    let mut out = format!(
        "Lint summary\n{t}\n\
         findings: the keys, patterns, minutes, slots or files breaking a rule;\n\
         keys: the keys those findings cover\n"
    );
    if !r.not_a_cluster.is_empty() {
        let ids: Vec<_> = r.not_a_cluster.iter().map(|r| r.id()).collect();
        out.push_str(&wrap(&format!(
            "not checked: {}: nothing says the dumps are a cluster's shards (--cluster, \
             SLOT_INFO records, several dumps)",
            ids.join(", ")
        )));
    }
    out
}

/// The summary table, the kept findings, and the advice of each rule that fired.
pub fn tables(r: &LintReport) -> String {
    let mut out = summary_table(r);
    let mut t = table(
        &[
            "rule",
            "severity",
            "db",
            "subject",
            "value",
            "threshold",
            "keys",
            "memory",
            "saving",
        ],
        4,
    );
    t.names_in(3, Keep::Middle)
        .optional(&["saving", "db", "keys", "severity"]);
    for f in r.findings() {
        t.add_row(vec![
            f.rule.id().to_string(),
            f.rule.severity().name().to_string(),
            f.db.map(|d| d.to_string()).unwrap_or_default(),
            format!("{} {}", f.subject.kind(), subject_cell(&f.subject)),
            f.value.to_string(),
            f.threshold.to_string(),
            f.keys.to_string(),
            bytes(f.memory_bytes),
            f.saving_bytes.map(bytes).unwrap_or_default(),
        ]);
    }
    if r.findings().next().is_some() {
        let _ = writeln!(out, "\nFindings (worst first per rule)\n{t}");
        let cut: Vec<String> = r
            .rules
            .iter()
            .filter(|(_, s)| s.findings > s.worst.len() as u64)
            .map(|(rule, s)| format!("{} {} of {}", rule.id(), s.worst.len(), s.findings))
            .collect();
        if !cut.is_empty() {
            out.push_str(&wrap(&format!(
                "Listed: the worst findings of each rule up to --max-findings ({}); the summary counts them all",
                cut.join(", ")
            )));
        }
        out.push_str("\nAdvice\n");
        for (rule, _) in r.rules.iter().filter(|(_, s)| s.findings > 0) {
            out.push_str(&wrap_indented(
                &format!("{}: {}", rule.id(), rule.advice()),
                "  ",
                "    ",
                output_width(),
            ));
        }
    } else {
        out.push_str("\nNo findings.\n");
    }
    out
}
