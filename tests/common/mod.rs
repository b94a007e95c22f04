//! Shared test support: locating fixtures and reading a dump's per-key rows in-process.

#![allow(dead_code)]

use rdbscope::analyze::KeyStats;
use rdbscope::rdb::Scratch;
use rdbscope::scan::{scan, DumpInfo, Stop};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Every `.rdb` under `testdata/<dir>`, sorted.
pub fn dumps_in(dir: &str) -> Vec<PathBuf> {
    rdb_files(&testdata().join(dir))
}

/// Every `.rdb` under `dir`, sorted.
pub fn rdb_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rdb") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What the server that wrote `dump` said about each key (`<dump>.truth.jsonl`), by
/// `(db, key bytes)`.
pub fn load_truth(dump: &Path) -> BTreeMap<(u64, Vec<u8>), serde_json::Value> {
    use base64::Engine;
    std::fs::read_to_string(dump.with_extension("truth.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let key = v["key"].as_str().unwrap();
            let key = if v["key_is_base64"].as_bool().unwrap() {
                base64::engine::general_purpose::STANDARD
                    .decode(key)
                    .unwrap()
            } else {
                key.as_bytes().to_vec()
            };
            ((v["db"].as_u64().unwrap(), key), v)
        })
        .collect()
}

/// One key as the tests compare it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub db: u64,
    pub key: Vec<u8>,
    pub type_name: String,
    pub encoding: String,
    pub elements: Option<u64>,
    pub expiry_ms: Option<i64>,
    pub idle_s: Option<u64>,
    pub lfu_freq: Option<u8>,
    pub serialized_bytes: u64,
}

/// Reads every key of a dump in-process.
pub fn read_rows(bytes: &[u8]) -> (Vec<Row>, DumpInfo, Option<Stop>) {
    let mut scratch = Scratch::default();
    let mut rows = Vec::new();
    let (info, stop) = scan(bytes, true, |profile, record| {
        let k = KeyStats::from_record(record, profile, &mut scratch).map_err(Stop::Corrupt)?;
        rows.push(Row {
            db: k.db,
            key: k.key.to_vec(),
            type_name: k.type_name().into_owned(),
            encoding: k.encoding.to_string(),
            elements: k.elements,
            expiry_ms: k.expiry_ms,
            idle_s: k.idle_s,
            lfu_freq: k.lfu_freq,
            serialized_bytes: k.serialized_bytes,
        });
        Ok(())
    });
    (rows, info, stop)
}

/// A CSV document as header-keyed rows, in order.
pub fn csv_rows(text: &[u8]) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text);
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// A CSV file as header-keyed rows, in order.
pub fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    csv_rows(&std::fs::read(path).unwrap())
}

pub mod redis;
