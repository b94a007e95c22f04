//! CSV files of the aggregates: `prefixes.csv`, `patterns.csv`, `top.csv`, `slots.csv`.
//! Every row the aggregates hold is written (tables show the first few); names go through
//! the same escaping as keys, and cells a spreadsheet would run are neutralised.

use crate::aggregates::groups::{ErrorBound, GroupStats, GroupTable, SortBy};
use crate::aggregates::key_columns::top_key_columns;
use crate::aggregates::prefixes::Prefixes;
use crate::aggregates::slots::Slots;
use crate::aggregates::top::TopN;
use crate::pass::analysis::FileOutcome;
use crate::rdb::RedisType;
use crate::text::escape::{escape_key, neutralize_formula};
use std::io::{self, Write};

fn text(bytes: &[u8]) -> String {
    neutralize_formula(escape_key(bytes)).into_owned()
}

fn group_header(first: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|s| s.to_string()).collect();
    h.extend(
        ["keys", "memory_bytes", "serialized_bytes", "elements"]
            .iter()
            .map(|s| s.to_string()),
    );
    for t in RedisType::ALL {
        h.push(format!("{}_keys", t.name()));
        h.push(format!("{}_memory_bytes", t.name()));
    }
    h.push("no_ttl_keys".into());
    h.push("no_ttl_memory_bytes".into());
    h.push("error_keys".into());
    h.push("error_bytes".into());
    h
}

/// The row's figures, then its error bound (see [`GroupTable`]: the truth is within
/// `keys + error_keys`, `memory_bytes + error_bytes`; 0 for an exact row and for `(other)`).
fn group_cells(mut row: Vec<String>, s: &GroupStats, e: ErrorBound) -> Vec<String> {
    row.extend(
        [s.keys, s.memory_bytes, s.serialized_bytes, s.elements]
            .iter()
            .map(u64::to_string),
    );
    for t in &s.by_type {
        row.push(t.keys.to_string());
        row.push(t.memory_bytes.to_string());
    }
    row.push(s.no_ttl_keys.to_string());
    row.push(s.no_ttl_memory_bytes.to_string());
    row.push(e.keys.to_string());
    row.push(e.memory_bytes.to_string());
    row
}

/// The listed rows largest first by `by`, then `(other)` when names were dropped.
fn table_rows(
    table: &GroupTable,
    by: SortBy,
) -> impl Iterator<Item = (String, &GroupStats, ErrorBound)> {
    table
        .rows_by(by)
        .into_iter()
        .map(|r| (text(r.name), r.stats, r.error))
        .chain(
            table
                .overflowed()
                .then(|| ("(other)".to_string(), table.other(), ErrorBound::default())),
        )
}

/// `prefix,depth,keys,memory_bytes,serialized_bytes,elements,<type>_keys,<type>_memory_bytes…,no_ttl_keys,no_ttl_memory_bytes,error_keys,error_bytes`,
/// depth 1 first, rows largest first by `by`.
pub fn write_prefixes(out: impl Write, prefixes: &Prefixes, by: SortBy) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(group_header(&["prefix", "depth"]))?;
    for (i, table) in prefixes.tables().iter().enumerate() {
        let depth = (i + 1).to_string();
        for (name, s, e) in table_rows(table, by) {
            w.write_record(group_cells(vec![name, depth.clone()], s, e))?;
        }
    }
    w.flush()
}

/// `pattern,keys,memory_bytes,…` with the same columns as `prefixes.csv` but depth.
pub fn write_patterns(out: impl Write, patterns: &GroupTable, by: SortBy) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(group_header(&["pattern"]))?;
    for (name, s, e) in table_rows(patterns, by) {
        w.write_record(group_cells(vec![name], s, e))?;
    }
    w.flush()
}

/// `ranking,rank,file`, the key columns a top-key record keeps, and `value`.
fn top_header() -> Vec<&'static str> {
    let columns = top_key_columns();
    let header = ["ranking", "rank", "file"].into_iter().chain(columns);
    header.chain(["value"]).collect()
}

/// Top keys CSV: one block of rows per ranking (`memory`, `elements`, `serialized`,
/// `memory:<type>`), best first; `value` repeats the ranking metric.
pub fn write_top<'a>(
    out: impl Write,
    rankings: impl IntoIterator<Item = (String, &'a TopN)>,
    files: &[FileOutcome],
) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(top_header())?;
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
    for (ranking, top) in rankings {
        for (rank, k) in top.sorted().into_iter().enumerate() {
            let file = files
                .get(k.file)
                .map(|f| text(f.name.as_bytes()))
                .unwrap_or_default();
            w.write_record([
                ranking.clone(),
                (rank + 1).to_string(),
                file,
                k.db.to_string(),
                text(&k.key),
                text(k.type_key.name().as_bytes()),
                k.encoding.to_string(),
                opt(k.elements),
                k.serialized_bytes.to_string(),
                k.memory_bytes.to_string(),
                k.largest_element_bytes.to_string(),
                k.expiry_ms.map(|v| v.to_string()).unwrap_or_default(),
                k.value.to_string(),
            ])?;
        }
    }
    w.flush()
}

/// `slot,keys,memory_bytes` for every slot holding keys.
pub fn write_slots(out: impl Write, slots: &Slots) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["slot", "keys", "memory_bytes"])?;
    for (slot, load) in slots.loaded() {
        w.write_record([
            slot.to_string(),
            load.keys.to_string(),
            load.memory_bytes.to_string(),
        ])?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/summary-json.md lists top.csv's columns as written.
    #[test]
    fn doc_lists_the_top_csv_columns() {
        let doc = include_str!("../../../docs/summary-json.md");
        let listed = format!("`top.csv`: `{}`", top_header().join(","));
        assert!(
            doc.contains(&listed),
            "docs/summary-json.md should list {listed}"
        );
    }
}
