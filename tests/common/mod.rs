//! Shared test support: locating fixtures and reading a dump's per-key rows in-process.

#![allow(dead_code, unused_macros)]

/// A command: every argument as bytes.
macro_rules! cmd {
    ($($arg:expr),+ $(,)?) => {
        vec![$(AsRef::<[u8]>::as_ref(&$arg).to_vec()),+]
    };
}

use rdbscope::model::key_stats::KeyStats;
use rdbscope::model::server::ServerProfile;
use rdbscope::pass::scan::{DumpInfo, DumpScan};
use rdbscope::rdb::{DecodeError, KeyRecord, Scratch};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What `rdbscope ARGS… DUMP` writes to stdout; panics, with its stderr, unless it succeeds.
pub fn rdbscope_stdout(args: &[&str], dump: &Path) -> Vec<u8> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .arg(dump)
        .output()
        .expect("run rdbscope");
    assert!(
        out.status.success(),
        "rdbscope {args:?} {} exited with {}: {}",
        dump.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

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
    pub largest_element_bytes: u64,
    pub expiry_ms: Option<i64>,
    pub idle_s: Option<u64>,
    pub lfu_freq: Option<u8>,
    pub serialized_bytes: u64,
}

/// Every key of `bytes` in file order, with the server profile it was read under, through
/// the pass's scanner in batches. `on_key` failing (on a damaged value) ends the scan: the
/// info then says so and counts only the keys before that one, as the pass reports it.
pub fn scan_dump<'data>(
    bytes: &'data [u8],
    verify_checksum: bool,
    mut on_key: impl FnMut(&ServerProfile, &KeyRecord<'data>) -> Result<(), DecodeError>,
) -> DumpInfo {
    let mut scan = DumpScan::new(bytes);
    let mut batch = Vec::new();
    let mut handed = 0u64;
    let mut last_handed: Option<KeyRecord<'data>> = None;
    let mut failed = None;
    'batches: loop {
        batch.clear();
        let more = scan.next_batch(&mut batch, 1024);
        if let Some(profile) = scan.profile() {
            for record in &batch {
                if let Err(e) = on_key(&profile, record) {
                    failed = Some(e);
                    break 'batches;
                }
                handed += 1;
                last_handed = Some(*record);
            }
        }
        if !more {
            break;
        }
    }
    let mut info = scan.finish(verify_checksum, None);
    if let Some(e) = failed {
        info.keys = handed;
        info.last_key =
            last_handed.map(|k| (k.db, k.key.to_cow().unwrap_or_default().into_owned()));
        info.error = Some(e);
    }
    info
}

/// Reads every key of a dump in-process, with the error that stopped the scan if any.
pub fn read_rows(bytes: &[u8]) -> (Vec<Row>, DumpInfo, Option<DecodeError>) {
    let mut scratch = Scratch::default();
    let mut rows = Vec::new();
    let info = scan_dump(bytes, true, |profile, record| {
        let k = KeyStats::from_record(record, profile, &mut scratch)?;
        rows.push(Row {
            db: k.db,
            key: k.key.to_vec(),
            type_name: k.type_name().into_owned(),
            encoding: k.encoding.to_string(),
            elements: k.elements,
            largest_element_bytes: k.largest_element_bytes,
            expiry_ms: k.expiry_ms,
            idle_s: k.idle_s,
            lfu_freq: k.lfu_freq,
            serialized_bytes: k.serialized_bytes,
        });
        Ok(())
    });
    let stop = info.error.clone();
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
pub mod rng;

/// The venv's Python that `scripts/test.sh` sets up with the engines the tests query
/// (duckdb, chdb, pyspark, pyarrow) and names in `RDBSCOPE_PYTHON`.
pub fn python() -> PathBuf {
    let path = std::env::var_os("RDBSCOPE_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        panic!("RDBSCOPE_PYTHON is not set: run the tests with scripts/test.sh, which installs duckdb, chdb and pyspark in .venv and sets it")
    });
    assert!(
        path.is_file(),
        "RDBSCOPE_PYTHON={} is not a file; run scripts/test.sh",
        path.display()
    );
    path
}
