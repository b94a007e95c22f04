//! `lint` output: a summary table per rule and the findings as a table, one JSON object
//! (`{"findings": [...], "summary": [...]}`) or CSV rows. Field meanings are in
//! docs/lint.md. Keys, patterns, tags and paths go through [`escape_key`], CSV cells
//! also through [`neutralize_formula`].

use super::human::bytes;
use super::text_table::table;
use super::text_table::{output_width, wrap, wrap_indented, Keep, LIST_SEPARATOR};
use crate::lint::{Finding, LintReport, Subject};
use crate::text::escape::{escape_key, neutralize_formula, text_and_base64};
use serde_json::{json, Map, Value};
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

/// `kind` holds the escaped name; `<kind>_base64` the exact bytes when escaping changed them.
fn named(o: &mut Map<String, Value>, kind: &str, bytes: &[u8]) {
    let (text, base64) = text_and_base64(bytes);
    o.insert(kind.into(), text.into_owned().into());
    if let Some(b64) = base64 {
        o.insert(format!("{kind}_base64"), b64.into());
    }
}

fn finding_json(f: &Finding) -> Value {
    let mut o = Map::new();
    o.insert("rule".into(), f.rule.id().into());
    o.insert("severity".into(), f.rule.severity().name().into());
    o.insert("db".into(), f.db.map_or(Value::Null, Value::from));
    let kind = f.subject.kind();
    match &f.subject {
        Subject::Slot(slot) => {
            o.insert(kind.into(), Value::from(*slot));
        }
        Subject::Key(b) | Subject::Pattern(b) | Subject::Tag(b) => named(&mut o, kind, b),
        Subject::File(path) => named(&mut o, kind, path.as_bytes()),
        s => {
            o.insert(kind.into(), Value::from(subject_text(s).into_owned()));
        }
    }
    o.insert("value".into(), f.value.into());
    o.insert("threshold".into(), f.threshold.into());
    o.insert("advice".into(), f.rule.advice().into());
    o.insert("keys".into(), f.keys.into());
    o.insert("memory_bytes".into(), f.memory_bytes.into());
    if let Some(saving) = f.saving_bytes {
        o.insert("saving_bytes".into(), saving.into());
    }
    Value::Object(o)
}

/// The `lint --format json` object, also the `lint` section of `summary.json`.
pub fn json(r: &LintReport) -> Value {
    let summary: Vec<Value> = r
        .rules
        .iter()
        .map(|(rule, s)| {
            json!({
                "rule": rule.id(),
                "severity": rule.severity().name(),
                "findings": s.findings,
                "keys": s.keys,
                "memory_bytes": s.memory_bytes,
                "examples": s.worst.iter().take(EXAMPLES).map(|f| subject_text(&f.subject)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "findings": r.findings().map(finding_json).collect::<Vec<_>>(),
        "summary": summary,
    })
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
