//! `diff` output: terminal tables and CSV rows from a [`Diff`] (JSON is the `Diff` itself).
//!
//! Figures a heavy-hitter table gives only as a range are shown as one: `≤ 4.0 KiB` for a
//! name a side does not list, `1.0 MiB..1.1 MiB` for a row with an error bound; a change
//! the ranges cannot give a sign is "within bounds".

use super::compare::{
    CountsChange, Delta, Diff, GroupChange, GroupStatus, GroupTableChange, KeyChange, KeyStatus,
    LintChange, MetricChange, Range, TtlChange,
};
use crate::report::human::{bytes, utc_seconds};
use crate::report::text_table::{notes_section, table, wrap};
use crate::text::escape::neutralize_formula;
use crate::text::words::plural;
use std::fmt::Write as _;
use std::io::{self, Write};

fn signed_bytes(v: i64) -> String {
    match v {
        0 => "0".into(),
        v if v > 0 => format!("+{}", bytes(v.unsigned_abs())),
        v => format!("-{}", bytes(v.unsigned_abs())),
    }
}

fn signed_count(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

fn percent(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() => format!("{p:+.1} %"),
        _ => "new".into(),
    }
}

fn range(r: Range, show: fn(u64) -> String) -> String {
    match (r.min, r.max) {
        (a, b) if a == b => show(a),
        (0, u64::MAX) => "not listed".into(),
        (0, b) => format!("≤ {}", show(b)),
        (a, u64::MAX) => format!("≥ {}", show(a)),
        (a, b) => format!("{}..{}", show(a), show(b)),
    }
}

fn delta(d: Delta, show: fn(i64) -> String) -> String {
    if d.within_bounds {
        "within bounds".into()
    } else if d.exact() {
        show(d.min)
    } else if d.min > 0 {
        format!("≥ {}", show(d.min))
    } else {
        format!("≤ {}", show(d.max))
    }
}

fn count(v: u64) -> String {
    v.to_string()
}

/// One table of the diff, as cells: the terminal tables and report.html's "Since baseline"
/// section show the same rows.
pub struct DiffTable {
    pub title: String,
    pub header: Vec<&'static str>,
    /// Leading columns of text (the rest are figures).
    pub text_columns: usize,
    pub rows: Vec<Vec<String>>,
}

impl DiffTable {
    fn new(title: impl Into<String>, header: &[&'static str], text_columns: usize) -> Self {
        DiffTable {
            title: title.into(),
            header: header.to_vec(),
            text_columns,
            rows: Vec::new(),
        }
    }

    /// `None` when it has no row.
    fn some(self) -> Option<Self> {
        (!self.rows.is_empty()).then_some(self)
    }
}

/// Columns a diff table may leave out to fit the terminal, first to last: each side's
/// figures the change column sums up.
const OPTIONAL: [&str; 8] = [
    "elements old",
    "elements new",
    "encoding",
    "keys old",
    "keys change",
    "type",
    "db",
    "change %",
];

fn section(out: &mut String, t: &DiffTable) {
    let mut text = table(&t.header, t.text_columns);
    text.optional(&OPTIONAL);
    for row in &t.rows {
        text.add_row(row.clone());
    }
    let _ = write!(out, "{}{text}\n\n", wrap(&t.title));
}

/// A metric's change in percent; empty when it did not change.
pub fn change_percent(m: MetricChange) -> String {
    if m.change == 0 {
        String::new()
    } else {
        percent(m.change_percent)
    }
}

/// Keys, memory, bytes in the file, elements and keys with TTL: old, new, change.
pub fn totals_table(c: &CountsChange) -> DiffTable {
    let mut t = DiffTable::new("Totals", &["", "old", "new", "change", "change %"], 1);
    let rows: [(&str, MetricChange, bool); 5] = [
        ("keys", c.keys, false),
        ("memory", c.memory_bytes, true),
        ("bytes in the file", c.serialized_bytes, true),
        ("elements", c.elements, false),
        ("keys with TTL", c.keys_with_ttl, false),
    ];
    for (name, m, is_bytes) in rows {
        let (old, new, change) = if is_bytes {
            (bytes(m.old), bytes(m.new), signed_bytes(m.change))
        } else {
            (m.old.to_string(), m.new.to_string(), signed_count(m.change))
        };
        t.rows
            .push(vec![name.into(), old, new, change, change_percent(m)]);
    }
    t
}

/// One row per changed breakdown entry: keys and memory, old, new and change.
fn breakdown<'a>(
    title: &str,
    label: &'static str,
    rows: impl Iterator<Item = (String, &'a CountsChange)>,
) -> Option<DiffTable> {
    let mut t = DiffTable::new(
        title,
        &[
            label,
            "keys old",
            "keys new",
            "keys change",
            "memory old",
            "memory new",
            "memory change",
            "change %",
        ],
        1,
    );
    for (name, c) in rows.filter(|(_, c)| c.changed()) {
        let m = c.memory_bytes;
        t.rows.push(vec![
            name,
            c.keys.old.to_string(),
            c.keys.new.to_string(),
            signed_count(c.keys.change),
            bytes(m.old),
            bytes(m.new),
            signed_bytes(m.change),
            change_percent(m),
        ]);
    }
    t.some()
}

/// The changed entries by db, by type, by type and encoding.
pub fn breakdown_tables(d: &Diff) -> Vec<DiffTable> {
    [
        breakdown(
            "By db (changed)",
            "db",
            d.by_db.iter().map(|r| (r.db.to_string(), &r.counts)),
        ),
        breakdown(
            "By type (changed)",
            "type",
            d.by_type.iter().map(|r| (r.type_name.clone(), &r.counts)),
        ),
        breakdown(
            "By type and encoding (changed)",
            "type/encoding",
            d.by_encoding
                .iter()
                .map(|r| (format!("{}/{}", r.type_name, r.encoding), &r.counts)),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn status(s: GroupStatus) -> &'static str {
    match s {
        GroupStatus::Appeared => "appeared",
        GroupStatus::Vanished => "vanished",
        GroupStatus::Grew => "grew",
        GroupStatus::Shrank => "shrank",
        GroupStatus::WithinBounds => "within bounds",
    }
}

/// A prefix or pattern table's changes, one row per name.
pub fn group_table<'a>(
    title: &str,
    label: &'static str,
    rows: impl IntoIterator<Item = &'a GroupChange>,
) -> DiffTable {
    let mut t = DiffTable::new(
        title,
        &[
            label,
            "status",
            "keys old",
            "keys new",
            "keys change",
            "memory old",
            "memory new",
            "memory change",
            "change %",
        ],
        2,
    );
    for c in rows {
        t.rows.push(vec![
            if c.name.is_empty() {
                "\"\"".into()
            } else {
                c.name.clone()
            },
            status(c.status).into(),
            range(c.old_keys, count),
            range(c.new_keys, count),
            delta(c.keys_change, signed_count),
            range(c.old_memory_bytes, bytes),
            range(c.new_memory_bytes, bytes),
            delta(c.memory_change, signed_bytes),
            match c.memory_change_percent {
                Some(p) if c.status != GroupStatus::Appeared => {
                    let at_least = if c.memory_change.exact() { "" } else { "≥ " };
                    format!("{at_least}{}", percent(Some(p)))
                }
                _ => String::new(),
            },
        ]);
    }
    t
}

/// `WHAT: 1 appeared, 0 vanished, …`, or `WHAT: no change`.
pub fn group_summary(what: &str, g: &GroupTableChange) -> String {
    if g.appeared + g.vanished + g.grew + g.shrank + g.within_bounds == 0 {
        return format!("{what}: no change");
    }
    format!(
        "{what}: {} appeared, {} vanished, {} grew, {} shrank, {} within their error bounds",
        g.appeared, g.vanished, g.grew, g.shrank, g.within_bounds
    )
}

/// Every listed change of a table once, in list order: appeared, vanished, growers and
/// shrinkers by memory, then by keys.
pub fn group_changes_once(g: &GroupTableChange) -> Vec<&GroupChange> {
    let mut seen = std::collections::BTreeSet::new();
    [
        &g.appeared_names,
        &g.vanished_names,
        &g.growers_by_memory,
        &g.shrinkers_by_memory,
        &g.growers_by_keys,
        &g.shrinkers_by_keys,
    ]
    .into_iter()
    .flatten()
    .filter(|c| seen.insert(&c.name))
    .collect()
}

fn group_sections(out: &mut String, what: &str, label: &'static str, g: &GroupTableChange) {
    let _ = writeln!(out, "{}", wrap(&group_summary(what, g)));
    let lists = [
        ("appeared", &g.appeared_names),
        ("vanished", &g.vanished_names),
        ("biggest growers by memory", &g.growers_by_memory),
        ("biggest shrinkers by memory", &g.shrinkers_by_memory),
        ("biggest growers by keys", &g.growers_by_keys),
        ("biggest shrinkers by keys", &g.shrinkers_by_keys),
    ];
    for (list, rows) in lists {
        if !rows.is_empty() {
            section(out, &group_table(&format!("{what} — {list}"), label, rows));
        }
    }
}

fn key_status(s: KeyStatus) -> &'static str {
    match s {
        KeyStatus::New => "new",
        KeyStatus::Vanished => "vanished",
        KeyStatus::Grew => "grew",
        KeyStatus::Shrank => "shrank",
        KeyStatus::EnteredTop => "entered top",
        KeyStatus::LeftTop => "left top",
    }
}

fn key_memory(known: Option<u64>, at_most: Option<u64>) -> String {
    match (known, at_most) {
        (Some(v), _) => bytes(v),
        (None, Some(m)) => format!("≤ {}", bytes(m)),
        (None, None) => "-".into(),
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

fn encoding_cell(k: &KeyChange) -> String {
    match (&k.old_encoding, &k.new_encoding) {
        (Some(o), Some(n)) if o != n => format!("{o} → {n}"),
        (_, Some(e)) | (Some(e), None) => e.clone(),
        (None, None) => String::new(),
    }
}

/// The big keys that changed, biggest change first.
pub fn big_keys_table(d: &Diff) -> Option<DiffTable> {
    let title = match d.big_keys.exact_above_bytes {
        Some(b) => format!(
            "Big keys (every key of {} or more, and each side's top {} by memory)",
            bytes(b),
            d.big_keys.n
        ),
        None => format!("Big keys (each side's top {} by memory)", d.big_keys.n),
    };
    let mut t = DiffTable::new(
        title,
        &[
            "key",
            "db",
            "type",
            "status",
            "encoding",
            "memory old",
            "memory new",
            "change",
            "elements old",
            "elements new",
        ],
        5,
    );
    for k in &d.big_keys.keys {
        t.rows.push(vec![
            if k.key.is_empty() {
                "\"\"".into()
            } else {
                k.key.clone()
            },
            k.db.to_string(),
            k.type_name.clone(),
            key_status(k.status).into(),
            encoding_cell(k),
            key_memory(k.old_memory_bytes, k.old_memory_at_most),
            key_memory(k.new_memory_bytes, k.new_memory_at_most),
            match k.status {
                KeyStatus::EnteredTop | KeyStatus::LeftTop => String::new(),
                _ => signed_bytes(k.memory_change()),
            },
            opt(k.old_elements),
            opt(k.new_elements),
        ]);
    }
    let more = &d.big_keys;
    if more.omitted > 0 {
        let mut row = vec![String::new(); t.header.len()];
        row[0] = format!("… {} more", more.omitted);
        row[3] = if more.omitted_churn > 0 {
            format!("{} entered or left a top", more.omitted_churn)
        } else {
            String::new()
        };
        t.rows.push(row);
    }
    t.some()
}

/// The TTL classes, when one changed.
pub fn ttl_classes_table(ttl: &TtlChange) -> Option<DiffTable> {
    if !ttl
        .classes
        .iter()
        .any(|c| c.keys.change != 0 || c.memory_bytes.change != 0)
    {
        return None;
    }
    let mut t = DiffTable::new(
        "TTL classes (each run measured from its dump's ctime)",
        &[
            "TTL class",
            "keys old",
            "keys new",
            "keys change",
            "memory old",
            "memory new",
            "memory change",
        ],
        1,
    );
    for c in &ttl.classes {
        t.rows.push(vec![
            c.bucket.clone(),
            c.keys.old.to_string(),
            c.keys.new.to_string(),
            signed_count(c.keys.change),
            bytes(c.memory_bytes.old),
            bytes(c.memory_bytes.new),
            signed_bytes(c.memory_bytes.change),
        ]);
    }
    Some(t)
}

/// `Keys that lost their TTL (key by key): N`, when counted.
pub fn lost_ttl_line(ttl: &TtlChange) -> Option<String> {
    ttl.lost_ttl_keys
        .map(|lost| format!("Keys that lost their TTL (key by key): {lost}"))
}

/// Patterns whose keys without a TTL grew beyond their keys.
pub fn lost_ttl_table(ttl: &TtlChange) -> Option<DiffTable> {
    let mut t = DiffTable::new(
        "Keys without a TTL beyond each pattern's growth (net)",
        &[
            "pattern",
            "keys change",
            "no-TTL keys change",
            "went without TTL",
            "exact",
        ],
        1,
    );
    for l in &ttl.lost_ttl_by_pattern {
        t.rows.push(vec![
            l.pattern.clone(),
            signed_count(l.keys_change),
            signed_count(l.no_ttl_keys_change),
            l.lost_ttl_keys.to_string(),
            if l.exact { "yes" } else { "no" }.into(),
        ]);
    }
    t.some()
}

/// NEW's busiest expiry minutes OLD did not list.
pub fn storms_table(ttl: &TtlChange) -> Option<DiffTable> {
    let mut t = DiffTable::new(
        "New expiry storms (NEW's busiest minutes OLD did not list)",
        &["minute (UTC)", "keys", "memory"],
        1,
    );
    for s in &ttl.new_storms {
        t.rows.push(vec![
            utc_seconds(s.minute_start_ms),
            s.keys.to_string(),
            bytes(s.memory_bytes),
        ]);
    }
    t.some()
}

/// Rules whose findings changed, findings new since OLD, findings resolved (each when it
/// has a row).
pub fn lint_tables(lint: &LintChange) -> [Option<DiffTable>; 3] {
    let mut rules = DiffTable::new(
        "Lint rules whose findings changed",
        &[
            "rule",
            "severity",
            "findings old",
            "findings new",
            "change",
            "memory change",
        ],
        2,
    );
    for r in &lint.rules {
        rules.rows.push(vec![
            r.rule.clone(),
            r.severity.name().to_string(),
            r.findings.old.to_string(),
            r.findings.new.to_string(),
            signed_count(r.findings.change),
            signed_bytes(r.memory_bytes.change),
        ]);
    }
    let findings = |title: &str, list: &[super::compare::FindingChange]| {
        let mut t = DiffTable::new(
            title,
            &["subject", "rule", "kind", "db", "keys", "memory", "certain"],
            3,
        );
        for f in list {
            t.rows.push(vec![
                f.subject.clone(),
                f.rule.clone(),
                f.subject_kind.into(),
                opt(f.db),
                f.keys.to_string(),
                bytes(f.memory_bytes),
                if f.certain { "yes" } else { "not listed" }.into(),
            ]);
        }
        t.some()
    };
    [
        rules.some(),
        findings("Lint findings new since OLD", &lint.new),
        findings("Lint findings resolved", &lint.resolved),
    ]
}

/// Patterns whose keys moved between a compact encoding and its big one.
pub fn crossings_table(d: &Diff) -> Option<DiffTable> {
    let mut t = DiffTable::new(
        "Encoding crossings by pattern (memory: the pattern's keys of that type)",
        &[
            "pattern",
            "type",
            "from",
            "to",
            "keys",
            "memory old",
            "memory new",
            "exact",
        ],
        4,
    );
    for c in &d.encoding_crossings {
        t.rows.push(vec![
            c.pattern.clone(),
            c.type_name.clone(),
            c.from.clone(),
            c.to.clone(),
            c.keys.to_string(),
            bytes(c.old_memory_bytes),
            bytes(c.new_memory_bytes),
            if c.exact { "yes" } else { "no" }.into(),
        ]);
    }
    t.some()
}

/// `ALERT FLAG: SUBJECT grew …`, one per alert.
fn alert_lines(d: &Diff) -> Vec<String> {
    d.alerts
        .iter()
        .map(|a| format!("ALERT {}", a.describe()))
        .collect()
}

/// The diff as terminal tables.
pub fn render(d: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "OLD: {} ({})\nNEW: {} ({})\n",
        d.old.source, d.old.kind, d.new.source, d.new.kind
    );
    if !d.changed {
        out.push_str("No change.\n\n");
    }
    section(&mut out, &totals_table(&d.totals));
    for t in breakdown_tables(d) {
        section(&mut out, &t);
    }
    for p in &d.prefixes {
        let depth = p.depth.unwrap_or(0);
        group_sections(&mut out, &format!("Prefixes at depth {depth}"), "prefix", p);
    }
    group_sections(&mut out, "Patterns", "pattern", &d.patterns);
    if let Some(t) = big_keys_table(d) {
        section(&mut out, &t);
    }
    let ttl = &d.ttl;
    if let Some(t) = ttl_classes_table(ttl) {
        section(&mut out, &t);
    }
    if let Some(line) = lost_ttl_line(ttl) {
        let _ = writeln!(out, "{}", wrap(&line));
    }
    for t in [lost_ttl_table(ttl), storms_table(ttl)]
        .into_iter()
        .flatten()
    {
        section(&mut out, &t);
    }
    for t in d
        .lint
        .as_ref()
        .map(lint_tables)
        .into_iter()
        .flatten()
        .flatten()
    {
        section(&mut out, &t);
    }
    if let Some(t) = crossings_table(d) {
        section(&mut out, &t);
    }
    let alerts = alert_lines(d);
    for a in &alerts {
        out.push_str(&wrap(a));
    }
    if !alerts.is_empty() {
        out.push('\n');
    }
    notes_section(&mut out, &d.notes);
    out
}

pub const CSV_HEADER: [&str; 11] = [
    "section",
    "name",
    "metric",
    "old_min",
    "old_max",
    "new_min",
    "new_max",
    "change_min",
    "change_max",
    "change_percent",
    "status",
];

struct Rows<W: Write> {
    w: csv::Writer<W>,
}

impl<W: Write> Rows<W> {
    /// One figure: where (section, name, metric), its OLD and NEW ranges, the change's.
    fn row(
        &mut self,
        (section, name, metric): (&str, &str, &str),
        (old, new): (Range, Range),
        change: (i64, i64),
        pct: Option<f64>,
        status: &str,
    ) -> csv::Result<()> {
        let n = |v: u64| v.to_string();
        self.w.write_record([
            section.to_string(),
            neutralize_formula(name.into()).into_owned(),
            metric.to_string(),
            n(old.min),
            n(old.max),
            n(new.min),
            n(new.max),
            change.0.to_string(),
            change.1.to_string(),
            pct.filter(|p| p.is_finite())
                .map_or_else(String::new, |p| format!("{p:.3}")),
            status.to_string(),
        ])
    }

    fn metric(
        &mut self,
        section: &str,
        name: &str,
        metric: &str,
        m: MetricChange,
    ) -> csv::Result<()> {
        let r = |v| Range { min: v, max: v };
        self.row(
            (section, name, metric),
            (r(m.old), r(m.new)),
            (m.change, m.change),
            m.change_percent,
            "",
        )
    }

    fn counts(&mut self, section: &str, name: &str, c: &CountsChange) -> csv::Result<()> {
        self.metric(section, name, "keys", c.keys)?;
        self.metric(section, name, "memory_bytes", c.memory_bytes)?;
        self.metric(section, name, "serialized_bytes", c.serialized_bytes)?;
        self.metric(section, name, "elements", c.elements)?;
        self.metric(section, name, "keys_with_ttl", c.keys_with_ttl)
    }

    fn groups(&mut self, section: &str, g: &GroupTableChange) -> csv::Result<()> {
        for c in group_changes_once(g) {
            let s = status(c.status);
            self.row(
                (section, &c.name, "keys"),
                (c.old_keys, c.new_keys),
                (c.keys_change.min, c.keys_change.max),
                None,
                s,
            )?;
            self.row(
                (section, &c.name, "memory_bytes"),
                (c.old_memory_bytes, c.new_memory_bytes),
                (c.memory_change.min, c.memory_change.max),
                c.memory_change_percent,
                s,
            )?;
        }
        Ok(())
    }
}

/// The diff as CSV rows under [`CSV_HEADER`]: one per compared figure, ranges as min/max
/// columns (equal when exact).
pub fn write_csv(out: impl Write, d: &Diff) -> io::Result<()> {
    let mut r = Rows {
        w: csv::Writer::from_writer(out),
    };
    let exact = |v: u64| Range { min: v, max: v };
    let opt_range = |known: Option<u64>, at_most: Option<u64>| match (known, at_most) {
        (Some(v), _) => exact(v),
        (None, Some(m)) => Range { min: 0, max: m },
        (None, None) => exact(0),
    };
    r.w.write_record(CSV_HEADER)?;
    r.counts("totals", "", &d.totals)?;
    for x in &d.by_db {
        r.counts("db", &x.db.to_string(), &x.counts)?;
    }
    for x in &d.by_type {
        r.counts("type", &x.type_name, &x.counts)?;
    }
    for x in &d.by_encoding {
        r.counts(
            "encoding",
            &format!("{}/{}", x.type_name, x.encoding),
            &x.counts,
        )?;
    }
    for p in &d.prefixes {
        r.groups(&format!("prefix:{}", p.depth.unwrap_or(0)), p)?;
    }
    r.groups("pattern", &d.patterns)?;
    for k in &d.big_keys.keys {
        let (old, new) = (
            opt_range(k.old_memory_bytes, k.old_memory_at_most),
            opt_range(k.new_memory_bytes, k.new_memory_at_most),
        );
        let change = (
            super::compare::signed_change(old.max, new.min),
            super::compare::signed_change(old.min, new.max),
        );
        r.row(
            ("big_key", &format!("{}:{}", k.db, k.key), "memory_bytes"),
            (old, new),
            change,
            None,
            key_status(k.status),
        )?;
    }
    for c in &d.ttl.classes {
        r.metric("ttl_class", &c.bucket, "keys", c.keys)?;
        r.metric("ttl_class", &c.bucket, "memory_bytes", c.memory_bytes)?;
    }
    if let Some(lost) = d.ttl.lost_ttl_keys {
        r.row(
            ("lost_ttl", "", "keys"),
            (exact(0), exact(lost)),
            (lost as i64, lost as i64),
            None,
            "exact",
        )?;
    }
    for l in &d.ttl.lost_ttl_by_pattern {
        let v = l.lost_ttl_keys;
        r.row(
            ("lost_ttl", &l.pattern, "keys"),
            (exact(0), exact(v)),
            (v as i64, v as i64),
            None,
            if l.exact { "net" } else { "net, bounded rows" },
        )?;
    }
    for s in &d.ttl.new_storms {
        r.row(
            ("new_storm", &utc_seconds(s.minute_start_ms), "keys"),
            (exact(0), exact(s.keys)),
            (s.keys as i64, s.keys as i64),
            None,
            "",
        )?;
    }
    if let Some(lint) = &d.lint {
        for x in &lint.rules {
            r.metric("lint_rule", &x.rule, "findings", x.findings)?;
            r.metric("lint_rule", &x.rule, "memory_bytes", x.memory_bytes)?;
        }
        for (section, list) in [("lint_new", &lint.new), ("lint_resolved", &lint.resolved)] {
            for f in list {
                let m = f.memory_bytes;
                let (old, new) = if section == "lint_new" {
                    (exact(0), exact(m))
                } else {
                    (exact(m), exact(0))
                };
                let status = format!("{}{}", f.rule, if f.certain { "" } else { " (not listed)" });
                r.row(
                    (section, &f.subject, "memory_bytes"),
                    (old, new),
                    (
                        super::compare::signed_change(old.min, new.min),
                        super::compare::signed_change(old.min, new.min),
                    ),
                    None,
                    &status,
                )?;
            }
        }
    }
    for c in &d.encoding_crossings {
        let change = super::compare::signed_change(c.old_memory_bytes, c.new_memory_bytes);
        r.row(
            ("encoding_crossing", &c.pattern, "memory_bytes"),
            (exact(c.old_memory_bytes), exact(c.new_memory_bytes)),
            (change, change),
            None,
            &format!(
                "{} {} -> {} ({})",
                c.type_name,
                c.from,
                c.to,
                plural(c.keys, "key")
            ),
        )?;
    }
    for a in &d.alerts {
        r.row(
            ("alert", &a.subject, a.flag),
            (exact(0), exact(0)),
            (0, 0),
            a.growth_percent,
            "exceeded",
        )?;
    }
    r.w.flush()
}
