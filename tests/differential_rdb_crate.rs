//! Differential test against the `rdb` crate (0.4), an independent full-value parser: for
//! every dump it can read, the same keys in the same order, with the same types, element
//! counts (a string's length: its one element's bytes, since a string has no elements) and
//! expiries. It skips streams and module values, so those are left out of ours.

mod common;

use common::{dumps_in, read_rows};
use rdb::{filter::Simple, RdbDecoder, RdbValue};
use std::io::Cursor;

/// `(db, key, type, elements, expiry)` of one key; a string's "elements" is its length.
type KeyFacts = (u64, Vec<u8>, &'static str, u64, Option<i64>);

/// The keys as the rdb crate decodes them.
fn oracle(bytes: &[u8]) -> Result<Vec<KeyFacts>, String> {
    let decoder = RdbDecoder::new(Cursor::new(bytes), Simple::new()).map_err(|e| e.to_string())?;
    let mut db = 0u64;
    let mut out = Vec::new();
    for item in decoder {
        let item = item.map_err(|e| e.to_string())?;
        let row = match item {
            RdbValue::SelectDb(n) => {
                db = u64::from(n);
                continue;
            }
            RdbValue::String { key, value, expiry } => (key, "string", value.len(), expiry),
            RdbValue::List {
                key,
                values,
                expiry,
            } => (key, "list", values.len(), expiry),
            RdbValue::Set {
                key,
                members,
                expiry,
            } => (key, "set", members.len(), expiry),
            RdbValue::SortedSet {
                key,
                values,
                expiry,
            } => (key, "zset", values.len(), expiry),
            RdbValue::Hash {
                key,
                values,
                expiry,
            } => (key, "hash", values.len(), expiry),
            _ => continue,
        };
        out.push((db, row.0, row.1, row.2 as u64, row.3.map(|e| e as i64)));
    }
    Ok(out)
}

#[test]
fn same_keys_types_lengths_and_expiries_as_the_rdb_crate() {
    let mut compared_dumps = 0;
    let mut compared_keys = 0;
    let mut skipped = Vec::new();
    let mut mismatches = Vec::new();
    for dump in dumps_in("peers").into_iter().chain(dumps_in("real")) {
        let name = dump
            .strip_prefix(common::testdata())
            .unwrap()
            .display()
            .to_string();
        let bytes = std::fs::read(&dump).unwrap();
        let theirs = match oracle(&bytes) {
            Ok(rows) => rows,
            Err(e) => {
                skipped.push(format!("{name}: {e}"));
                continue;
            }
        };
        let (rows, info, stop) = read_rows(&bytes);
        assert!(
            stop.is_none(),
            "{name}: the rdb crate reads it but we stop: {:?}",
            info.error
        );
        let ours: Vec<_> = rows
            .iter()
            .filter(|r| ["string", "list", "set", "zset", "hash"].contains(&r.type_name.as_str()))
            .map(|r| {
                (
                    r.db,
                    r.key.clone(),
                    r.type_name.as_str(),
                    match r.type_name.as_str() {
                        "string" => r.largest_element_bytes,
                        _ => r.elements.unwrap(),
                    },
                    r.expiry_ms,
                )
            })
            .collect();
        if ours.len() != theirs.len() {
            mismatches.push(format!(
                "{name}: {} keys ours, {} theirs",
                ours.len(),
                theirs.len()
            ));
            continue;
        }
        for (o, t) in ours.iter().zip(&theirs) {
            if (o.0, &o.1, o.2, o.3, o.4) != (t.0, &t.1, t.2, t.3, t.4) {
                mismatches.push(format!("{name}: ours {o:?} theirs {t:?}"));
            }
        }
        compared_dumps += 1;
        compared_keys += ours.len();
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    eprintln!(
        "compared {compared_keys} keys in {compared_dumps} dumps; the rdb crate could not read {}:\n{}",
        skipped.len(),
        skipped.join("\n")
    );
    assert!(compared_dumps >= 70, "only {compared_dumps} dumps compared");
}
