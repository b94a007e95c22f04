//! Terminal tables ([`TextTable`]) for `report`, `top` and `prefixes`: sizes in binary
//! units for reading, every name escaped like keys. Long lists show their first rows;
//! `report --out-dir` writes them whole.

use super::summary::notes;
use crate::aggregates::distribution::Histogram;
use crate::aggregates::figure::percent_of;
use crate::aggregates::groups::{ErrorBound, GroupStats, GroupTable, SortBy};
use crate::aggregates::prefixes::Prefixes;
use crate::aggregates::top::{Metric, TopN};
use crate::aggregates::Aggregates;
use crate::pass::analysis::{Analysis, FileOutcome};
use crate::pass::totals::Counts;
use crate::rdb::RedisType;
use crate::report::human::{bytes, iso_utc, utc_seconds};
use crate::report::text_table::{
    notes_section, output_width, table, wrap, wrap_indented, Keep, TextTable,
};
use crate::text::escape::escape_key;
use crate::text::words::plural;
use std::fmt::Write;

/// Rows a list section shows in `report`.
pub const SECTION_ROWS: usize = 20;
/// Rows of the short lists of `report`: expiry minutes, slots, hash tags.
const SHORT_ROWS: usize = 10;

/// A name as a table shows it: escaped, `""` when empty.
pub fn name(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        "\"\"".to_string()
    } else {
        escape_key(bytes).into_owned()
    }
}

fn section(out: &mut String, title: &str, t: TextTable) {
    let _ = write!(out, "{title}\n{t}\n\n");
}

fn counts_row(first: String, c: &Counts, whole: Whole) -> Vec<String> {
    vec![
        first,
        c.keys.to_string(),
        share(c.keys, whole.keys),
        c.elements.to_string(),
        bytes(c.serialized_bytes),
        bytes(c.memory_bytes),
        share(c.memory_bytes, whole.memory_bytes),
        c.keys_with_ttl.to_string(),
        c.keys_without_ttl().to_string(),
    ]
}

const COUNTS_HEADER: [&str; 8] = [
    "keys", "% keys", "elements", "in file", "memory", "% memory", "with TTL", "no TTL",
];

fn counts_table(first: &str) -> TextTable {
    let mut h = vec![first];
    h.extend(COUNTS_HEADER);
    let mut t = table(&h, 1);
    t.optional(&["in file", "% keys", "with TTL", "elements"]);
    t
}

/// `rows` largest first by `by`, then in their given order.
fn sort_counts<T>(rows: &mut [T], by: SortBy, counts: impl Fn(&T) -> &Counts) {
    rows.sort_by(|a, b| {
        let rank = |c: &Counts| match by {
            SortBy::Memory => (c.memory_bytes, c.serialized_bytes, c.keys),
            SortBy::Keys => (c.keys, c.memory_bytes, c.serialized_bytes),
            SortBy::Elements => (c.elements, c.memory_bytes, c.keys),
        };
        rank(counts(b)).cmp(&rank(counts(a)))
    });
}

/// One row per dump: what it is, what it holds, whether it was read whole.
pub fn files_table(files: &[FileOutcome]) -> TextTable {
    let mut t = table(
        &[
            "file", "magic", "server", "ctime", "keys", "in file", "memory", "with TTL", "status",
        ],
        4,
    );
    t.names_in(0, Keep::Path)
        .optional(&["magic", "in file", "with TTL", "server"]);
    for f in files {
        let c = f.totals.all();
        let status = match (&f.error, f.checksum_mismatch()) {
            (Some(_), _) => "PARTIAL",
            (None, true) => "CRC MISMATCH",
            (None, false) => "ok",
        };
        t.add_row(vec![
            escape_key(f.name.as_bytes()).into_owned(),
            f.magic.clone().unwrap_or_default(),
            f.server_version
                .as_deref()
                .map(|v| escape_key(v.as_bytes()).into_owned())
                .unwrap_or_default(),
            f.ctime
                .map(|s| utc_seconds(s.saturating_mul(1000)))
                .unwrap_or_default(),
            c.keys.to_string(),
            bytes(c.serialized_bytes),
            bytes(c.memory_bytes),
            c.keys_with_ttl.to_string(),
            status.to_string(),
        ]);
    }
    t
}

/// `part` as a percentage of `whole`, one decimal; empty when `whole` is 0.
pub fn share(part: u64, whole: u64) -> String {
    percent_of(part as f64, whole)
        .map(|p| format!("{p:.1}%"))
        .unwrap_or_default()
}

/// How many rows a list shows and in what order.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub rows: usize,
    pub sort: SortBy,
}

/// Keys and memory of everything a table's shares are taken of (the dump's totals).
#[derive(Clone, Copy, Debug)]
pub struct Whole {
    pub keys: u64,
    pub memory_bytes: u64,
}

impl From<Counts> for Whole {
    fn from(c: Counts) -> Self {
        Whole {
            keys: c.keys,
            memory_bytes: c.memory_bytes,
        }
    }
}

fn group_row(name: String, s: &GroupStats, whole: Whole) -> Vec<String> {
    vec![
        name,
        s.keys.to_string(),
        share(s.keys, whole.keys),
        bytes(s.memory_bytes),
        share(s.memory_bytes, whole.memory_bytes),
        bytes(s.serialized_bytes),
        s.elements.to_string(),
        s.no_ttl_keys.to_string(),
        bytes(s.no_ttl_memory_bytes),
    ]
}

/// The first cell of the row standing for the `n` rows a table does not show: its other
/// cells add those rows up, so the rows shown add up to the whole table.
pub fn more_rows(n: usize) -> String {
    format!("… {n} more")
}

/// The heaviest `rows` groups of `t`, then a row adding up the groups not shown and
/// `(other)` when names were dropped, with their shares of `whole`; rows that may fall short of the truth get an `error ≤` column and a
/// footnote saying what it means. Returns what all the rows and `(other)` add up to.
pub fn group_section(
    out: &mut String,
    title: &str,
    first: &str,
    t: &GroupTable,
    view: View,
    whole: Whole,
) -> GroupStats {
    let mut shown = t.rows_top(view.sort, view.rows);
    let rest = shown.split_off(view.rows.min(shown.len()));
    let bounded = shown.iter().any(|r| r.error != ErrorBound::default());
    let mut header = vec![
        first,
        "keys",
        "% keys",
        "memory",
        "% memory",
        "in file",
        "elements",
        "no-TTL keys",
        "no-TTL memory",
    ];
    if bounded {
        header.push("error ≤");
    }
    let mut table = table(&header, 1);
    table.optional(&[
        "no-TTL keys",
        "in file",
        "elements",
        "no-TTL memory",
        "% keys",
    ]);
    let error = |e: ErrorBound| {
        if e == ErrorBound::default() {
            String::new()
        } else {
            format!("+{}, +{}", plural(e.keys, "key"), bytes(e.memory_bytes))
        }
    };
    let mut all = t.other().clone();
    for r in &shown {
        all += r.stats;
        let mut row = group_row(name(r.name), r.stats, whole);
        if bounded {
            row.push(error(r.error));
        }
        table.add_row(row);
    }
    if !rest.is_empty() {
        let mut more = GroupStats::default();
        for r in &rest {
            more += r.stats;
        }
        all += &more;
        let mut row = group_row(more_rows(rest.len()), &more, whole);
        if bounded {
            row.push(String::new());
        }
        table.add_row(row);
    }
    if t.overflowed() {
        let mut row = group_row("(other)".into(), t.other(), whole);
        if bounded {
            row.push(String::new());
        }
        table.add_row(row);
    }
    let _ = write!(out, "{title}\n{table}\n");
    if bounded {
        out.push_str(&wrap_indented(
            "error ≤: the row may miss up to that many keys and that much memory, counted under \
             (other) before the name entered the table (other columns likewise count only the \
             keys since); rows without one are exact.",
            "  ",
            "  ",
            output_width(),
        ));
    }
    out.push('\n');
    all
}

/// One table per depth.
pub fn prefix_sections(out: &mut String, p: &Prefixes, view: View, whole: Whole) {
    let delimiter = escape_key(p.delimiter());
    let below = if p.under().is_empty() {
        String::new()
    } else {
        format!(" below {:?}", escape_key(p.under()))
    };
    // What the depth-1 table counts: every key holding the delimiter.
    let mut depth_one = GroupStats::default();
    for (i, t) in p.tables().iter().enumerate() {
        let title = format!("Prefixes, depth {}{below} (delimiter {delimiter:?})", i + 1);
        if t.is_empty() && !t.overflowed() {
            out.push_str(&wrap(&format!(
                "{title}: no key has more than {}{below}",
                plural(i as u64 + 1, "segment")
            )));
            out.push('\n');
            continue;
        }
        let counted = group_section(out, &title, "prefix", t, view, whole);
        if i == 0 {
            depth_one = counted;
            continue;
        }
        // A table below depth 1 leaves out the keys with too few segments to have a prefix
        // that deep: said, so that its rows are not read as every key's.
        let keys = depth_one.keys.saturating_sub(counted.keys);
        let memory = depth_one.memory_bytes.saturating_sub(counted.memory_bytes);
        if keys > 0 {
            out.push_str(&wrap(&format!(
                "{} ({}) {} {} or fewer{below} and {} in no depth-{} prefix",
                plural(keys, "key"),
                bytes(memory),
                if keys == 1 { "has" } else { "have" },
                plural(i as u64 + 1, "segment"),
                if keys == 1 { "is" } else { "are" },
                i + 1
            )));
            out.push('\n');
        }
    }
    let none = p.no_delimiter();
    if none.keys > 0 {
        out.push_str(&wrap(&format!(
            "{} ({} memory, {} in file) {} no {delimiter:?}{below} and belong{} to no prefix",
            plural(none.keys, "key"),
            bytes(none.memory_bytes),
            bytes(none.serialized_bytes),
            if none.keys == 1 { "holds" } else { "hold" },
            if none.keys == 1 { "s" } else { "" },
        )));
        out.push('\n');
    }
}

/// The `rows` first keys of `top`, each with its share of `whole` (every key analysed),
/// then a row adding up the keys not shown, so the rows add up to `whole`.
pub fn top_table(top: &TopN, files: &[FileOutcome], rows: usize, whole: Whole) -> TextTable {
    let several = files.len() > 1;
    let mut header = vec!["#"];
    if several {
        header.push("file");
    }
    header.extend([
        "db", "key", "type", "encoding", "elements", "in file", "memory", "% memory", "expiry",
    ]);
    let text_columns = header.len() - 5;
    let metric = match top.metric() {
        Metric::Idle => Some(("idle", duration as fn(u64) -> String)),
        Metric::Freq => Some(("LFU counter", count as fn(u64) -> String)),
        Metric::Memory | Metric::Elements | Metric::Serialized => None,
    };
    header.extend(metric.map(|(title, _)| title));
    let mut t = table(&header, text_columns);
    t.names_in(text_columns - 3, Keep::Middle)
        .optional(&["in file", "encoding", "% memory", "#", "elements", "file"]);
    let (mut shown_keys, mut shown_memory) = (0u64, 0u64);
    for (i, k) in top.sorted().into_iter().take(rows).enumerate() {
        shown_keys += 1;
        shown_memory = shown_memory.saturating_add(k.memory_bytes);
        let mut row = vec![(i + 1).to_string()];
        if several {
            row.push(
                files
                    .get(k.file)
                    .map(|f| escape_key(f.name.as_bytes()).into_owned())
                    .unwrap_or_default(),
            );
        }
        row.extend([
            k.db.to_string(),
            name(&k.key),
            k.type_key.name().into_owned(),
            k.encoding.to_string(),
            k.elements.map(|e| e.to_string()).unwrap_or_default(),
            bytes(k.serialized_bytes),
            bytes(k.memory_bytes),
            share(k.memory_bytes, whole.memory_bytes),
            k.expiry_ms.map(utc_seconds).unwrap_or_default(),
        ]);
        row.extend(metric.map(|(_, show)| show(k.value)));
        t.add_row(row);
    }
    let more_keys = whole.keys.saturating_sub(shown_keys);
    if more_keys > 0 {
        let more_memory = whole.memory_bytes.saturating_sub(shown_memory);
        let mut row = vec![String::new(); header.len()];
        row[text_columns - 3] = format!("… {}", plural(more_keys, "more key"));
        row[header.len() - 3 - usize::from(metric.is_some())] = bytes(more_memory);
        row[header.len() - 2 - usize::from(metric.is_some())] =
            share(more_memory, whole.memory_bytes);
        t.add_row(row);
    }
    t
}

fn count(n: u64) -> String {
    n.to_string()
}

/// `45 s`, `12 min`, `3.5 h`, `12.0 d`.
fn duration(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => format!("{:.1} h", seconds as f64 / 3600.0),
        _ => format!("{:.1} d", seconds as f64 / 86_400.0),
    }
}

fn histogram_row(first: &str, metric: &str, h: &Histogram, fmt: fn(u64) -> String) -> Vec<String> {
    vec![
        first.to_string(),
        metric.to_string(),
        h.count().to_string(),
        fmt(h.percentile(0.5)),
        fmt(h.percentile(0.9)),
        fmt(h.percentile(0.99)),
        fmt(h.max()),
    ]
}

/// Per-file rows when there are several dumps, and what went wrong with any.
pub fn files_section(out: &mut String, files: &[FileOutcome]) {
    section(
        out,
        if files.len() > 1 {
            "Dumps (merged below)"
        } else {
            "Dump"
        },
        files_table(files),
    );
}

/// What the TTL classes are measured from: the `ctime` a dump records, else the time of
/// the analysis.
fn ttl_title(files: &[FileOutcome]) -> String {
    let with_ctime = files.iter().filter(|f| f.ctime.is_some()).count();
    let from = match (with_ctime, files.len()) {
        (1, 1) => "the dump's ctime",
        (w, n) if w == n => "each dump's ctime",
        (0, 1) => "the time of the analysis: the dump has no ctime",
        (0, _) => "the time of the analysis: the dumps have no ctime",
        _ => "each dump's ctime, or the time of the analysis for those without",
    };
    format!("TTL (from {from})")
}

/// Under the totals: the allocator each dump's memory was modelled with, and why.
fn allocator_lines(out: &mut String, files: &[FileOutcome]) {
    let chosen: Vec<_> = files
        .iter()
        .filter_map(|f| f.allocator.as_ref().map(|a| (f, a)))
        .collect();
    for (f, a) in &chosen {
        if chosen.len() == 1 {
            out.push_str(&wrap(&format!(
                "memory modelled with allocator {}",
                a.describe()
            )));
        } else {
            out.push_str(&wrap(&format!(
                "{}: memory modelled with allocator {}",
                escape_key(f.name.as_bytes()),
                a.describe()
            )));
        }
    }
    if !chosen.is_empty() {
        out.push('\n');
    }
}

/// The whole report: each table shows `table_rows` rows when given, else the lists of names
/// [`SECTION_ROWS`], the rankings `top_n` keys and the short lists [`SHORT_ROWS`].
pub fn report(
    a: &Analysis<Aggregates>,
    top_n: usize,
    table_rows: Option<usize>,
    sort: SortBy,
    filtered: bool,
) -> String {
    let short_rows = table_rows.unwrap_or(SHORT_ROWS);
    let m = &a.merged;
    let whole = Whole::from(m.totals.all());
    let mut out = super::notes::partial_banner(&a.files).unwrap_or_default();
    files_section(&mut out, &a.files);

    let mut t = counts_table("type");
    let mut rows = m.totals.by_type();
    sort_counts(&mut rows, sort, |(_, c)| c);
    for (ty, c) in rows {
        t.add_row(counts_row(ty.name().into_owned(), &c, whole));
    }
    t.add_row(counts_row("all".into(), &m.totals.all(), whole));
    section(&mut out, "Keys by type", t);
    out.push_str(&wrap(
        "memory: the keys' MEMORY USAGE added up (`info` models the server's used_memory, \
         which also counts the dbs' tables)",
    ));
    allocator_lines(&mut out, &a.files);

    let mut t = counts_table("type / encoding");
    let mut rows = m.totals.by_encoding();
    sort_counts(&mut rows, sort, |(_, _, c)| c);
    for (ty, enc, c) in rows {
        t.add_row(counts_row(format!("{} / {enc}", ty.name()), &c, whole));
    }
    section(&mut out, "Keys by type and encoding", t);

    let mut t = counts_table("db");
    let mut rows = m.totals.by_db();
    sort_counts(&mut rows, sort, |(_, c)| c);
    for (db, c) in rows {
        t.add_row(counts_row(db.to_string(), &c, whole));
    }
    section(&mut out, "Keys by db", t);

    let mut t = table(&["expires", "keys", "memory", "memory freed by then"], 1);
    let mut freed = 0;
    for (bucket, tally) in m.ttl.buckets() {
        let cumulative = if bucket == crate::aggregates::ttl::TtlBucket::NoTtl {
            String::new()
        } else {
            freed += tally.memory_bytes;
            bytes(freed)
        };
        t.add_row(vec![
            bucket.label().to_string(),
            tally.keys.to_string(),
            bytes(tally.memory_bytes),
            cumulative,
        ]);
    }
    section(&mut out, &ttl_title(&a.files), t);

    let storms = m.ttl.storms(short_rows);
    if !storms.is_empty() {
        // The minutes not shown: all of them less those shown.
        let (minutes, mut rest) = m.ttl.minutes_in_all();
        let rest_minutes = minutes.saturating_sub(storms.len());
        let mut t = table(&["minute", "keys expiring", "memory"], 1);
        for (ms, tally) in storms {
            rest.keys = rest.keys.saturating_sub(tally.keys);
            rest.memory_bytes = rest.memory_bytes.saturating_sub(tally.memory_bytes);
            t.add_row(vec![
                format!("{}Z", iso_utc(ms).get(..16).unwrap_or_default()),
                tally.keys.to_string(),
                bytes(tally.memory_bytes),
            ]);
        }
        if rest_minutes > 0 {
            t.add_row(vec![
                more_rows(rest_minutes),
                rest.keys.to_string(),
                bytes(rest.memory_bytes),
            ]);
        }
        section(&mut out, "Busiest expiry minutes (next 30 days)", t);
    }

    let view = View {
        rows: table_rows.unwrap_or(SECTION_ROWS),
        sort,
    };
    prefix_sections(&mut out, &m.prefixes, view, whole);
    group_section(
        &mut out,
        "Key patterns (ids collapsed to *)",
        "pattern",
        m.patterns.table(),
        view,
        whole,
    );

    let rows = table_rows.unwrap_or(top_n);
    section(
        &mut out,
        "Biggest keys by memory",
        top_table(&m.top.by_memory, &a.files, rows, whole),
    );
    section(
        &mut out,
        "Biggest keys by elements",
        top_table(&m.top.by_elements, &a.files, rows, whole),
    );

    let mut t = table(&["type", "metric", "keys", "p50", "p90", "p99", "max"], 2);
    for (ty, d) in RedisType::ALL.iter().zip(&m.distributions.by_type) {
        if d.serialized_bytes.count() == 0 {
            continue;
        }
        if d.elements.count() > 0 {
            t.add_row(histogram_row(ty.name(), "elements", &d.elements, count));
        }
        t.add_row(histogram_row(
            ty.name(),
            "in file",
            &d.serialized_bytes,
            bytes,
        ));
        t.add_row(histogram_row(ty.name(), "memory", &d.memory_bytes, bytes));
    }
    section(&mut out, "Distributions per type", t);

    let mut t = table(&["slot", "keys", "% keys", "memory", "% memory"], 1);
    let mut slots = m.slots.heaviest_first(short_rows, sort);
    let rest = slots.split_off(short_rows.min(slots.len()));
    let slot_row = |first: String, keys: u64, memory: u64| {
        vec![
            first,
            keys.to_string(),
            share(keys, whole.keys),
            bytes(memory),
            share(memory, whole.memory_bytes),
        ]
    };
    for (slot, load) in slots {
        t.add_row(slot_row(slot.to_string(), load.keys, load.memory_bytes));
    }
    if !rest.is_empty() {
        let (keys, memory) = rest.iter().fold((0u64, 0u64), |(k, m), (_, l)| {
            (k.saturating_add(l.keys), m.saturating_add(l.memory_bytes))
        });
        t.add_row(slot_row(more_rows(rest.len()), keys, memory));
    }
    let most = if sort == SortBy::Keys {
        "Most loaded cluster slots by keys"
    } else {
        "Heaviest cluster slots"
    };
    section(
        &mut out,
        &format!(
            "{most} ({} of 16384 slots hold keys)",
            m.slots.slots_with_keys()
        ),
        t,
    );
    if !m.slots.tags().is_empty() {
        let view = View {
            rows: short_rows,
            sort,
        };
        group_section(&mut out, "Hash tags", "tag", m.slots.tags(), view, whole);
    }

    let idle = &m.idle_freq;
    if idle.idle_s.count() > 0 || idle.lfu_freq.count() > 0 {
        let mut t = table(&["policy", "metric", "keys", "p50", "p90", "p99", "max"], 2);
        if idle.idle_s.count() > 0 {
            t.add_row(histogram_row("LRU", "idle seconds", &idle.idle_s, count));
        }
        if idle.lfu_freq.count() > 0 {
            t.add_row(histogram_row("LFU", "counter", &idle.lfu_freq, count));
        }
        section(&mut out, "Access (from the dump's IDLE / FREQ)", t);
    }

    notes_section(&mut out, &notes(a, filtered));
    out
}
