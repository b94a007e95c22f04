//! `report`, `top` and `prefixes` through the binary: the aggregates agree with the per-key
//! rows on every fixture, rollups and TTL classes match hand-computed answers on crafted
//! dumps, shards merge into what their union gives, and thread count changes nothing.

mod common;
mod craft;

use common::{csv_rows, read_csv};
use craft::{string_serialized, Rdb};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn rdbscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// `report --out-dir` into a fresh directory; returns it and the run.
fn report_dir(dumps: &[&Path], extra: &[&str]) -> (TempDir, Output) {
    let dir = TempDir::new().unwrap();
    let mut args = vec![
        "report",
        "--quiet",
        "--out-dir",
        dir.path().to_str().unwrap(),
    ];
    args.extend(extra);
    let paths: Vec<&str> = dumps.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(paths);
    let out = rdbscope(&args);
    (dir, out)
}

fn summary(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn num(row: &HashMap<String, String>, col: &str) -> u64 {
    row.get(col)
        .filter(|v| !v.is_empty())
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{col}={v:?}")))
        .unwrap_or(0)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Sums of the per-key rows that `summary.json` must reproduce.
#[derive(Debug, Default, PartialEq)]
struct Sums {
    keys: u64,
    elements: u64,
    serialized_bytes: u64,
    memory_bytes: Option<u64>,
    keys_with_ttl: u64,
}

fn sums<'a>(rows: impl Iterator<Item = &'a HashMap<String, String>>) -> Sums {
    let mut s = Sums::default();
    for r in rows {
        s.keys += 1;
        s.elements += num(r, "elements");
        s.serialized_bytes += num(r, "serialized_bytes");
        if r.contains_key("memory_bytes") {
            *s.memory_bytes.get_or_insert(0) += num(r, "memory_bytes");
        }
        s.keys_with_ttl += u64::from(!r["expiry_ms"].is_empty());
    }
    s
}

fn json_sums(v: &Value, with_memory: bool) -> Sums {
    Sums {
        keys: u(&v["keys"]),
        elements: u(&v["elements"]),
        serialized_bytes: u(&v["serialized_bytes"]),
        memory_bytes: with_memory.then(|| u(&v["memory_bytes"])),
        keys_with_ttl: u(&v["keys_with_ttl"]),
    }
}

fn fixtures() -> Vec<PathBuf> {
    let mut all = common::dumps_in("real");
    all.extend(common::dumps_in("peers"));
    all.extend(common::dumps_in("corrupt"));
    all
}

#[test]
fn summary_sums_equal_keys_csv_on_every_fixture() {
    let fixtures = fixtures();
    assert!(fixtures.len() > 40, "fixtures found: {}", fixtures.len());
    for path in &fixtures {
        let name = path.display().to_string();
        let (dir, out) = report_dir(&[path], &["--format", "json"]);
        if !dir.path().join("summary.json").exists() {
            // No dump at all (no RDB header): refused, nothing written.
            assert_eq!(code(&out), 2, "{name}");
            assert!(out.stdout.is_empty(), "{name}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("not an RDB file"), "{name}: {err}");
            continue;
        }
        let s = summary(dir.path());
        let failed = s["partial"] == true || s["files"][0]["checksum"] == "mismatch";
        assert_eq!(code(&out), if failed { 2 } else { 0 }, "{name}");
        assert_eq!(
            serde_json::from_str::<Value>(&stdout(&out)).unwrap(),
            s,
            "{name}: stdout is summary.json"
        );
        let keys = read_csv(&dir.path().join("keys.csv"));
        let with_memory = keys.first().is_some_and(|r| r.contains_key("memory_bytes"));

        assert_eq!(
            json_sums(&s["totals"], with_memory),
            sums(keys.iter()),
            "{name}"
        );
        assert_eq!(
            u(&s["files"][0]["totals"]["keys"]),
            keys.len() as u64,
            "{name}"
        );

        // Per type, per db, per type and encoding.
        let by = |col: &[&str]| {
            let mut m: BTreeMap<Vec<String>, Vec<&HashMap<String, String>>> = BTreeMap::new();
            for r in &keys {
                m.entry(col.iter().map(|c| r[*c].clone()).collect())
                    .or_default()
                    .push(r);
            }
            m.into_iter()
                .map(|(k, rows)| (k, sums(rows.into_iter())))
                .collect::<BTreeMap<_, _>>()
        };
        let json_by = |field: &str, cols: &[&str]| {
            s[field]
                .as_array()
                .unwrap()
                .iter()
                .map(|row| {
                    let k = cols
                        .iter()
                        .map(|c| match &row[*c] {
                            Value::String(t) => t.clone(),
                            v => v.to_string(),
                        })
                        .collect::<Vec<_>>();
                    (k, json_sums(row, with_memory))
                })
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(json_by("by_type", &["type"]), by(&["type"]), "{name}");
        assert_eq!(json_by("by_db", &["db"]), by(&["db"]), "{name}");
        assert_eq!(
            json_by("by_encoding", &["type", "encoding"]),
            by(&["type", "encoding"]),
            "{name}"
        );

        // Every key lands in one TTL class.
        let buckets = s["ttl"]["buckets"].as_array().unwrap();
        let bucket_keys: u64 = buckets.iter().map(|b| u(&b["keys"])).sum();
        let bucket_memory: u64 = buckets.iter().map(|b| u(&b["memory_bytes"])).sum();
        assert_eq!(bucket_keys, keys.len() as u64, "{name}");
        assert_eq!(bucket_memory, u(&s["totals"]["memory_bytes"]), "{name}");
        assert_eq!(
            u(&buckets[6]["keys"]),
            keys.iter().filter(|r| r["expiry_ms"].is_empty()).count() as u64,
            "{name}: no_ttl"
        );

        // Rollups: depth 1 plus keys without a delimiter, and patterns, cover every key.
        let prefixes = read_csv(&dir.path().join("prefixes.csv"));
        let depth1: u64 = prefixes
            .iter()
            .filter(|r| r["depth"] == "1")
            .map(|r| num(r, "keys"))
            .sum();
        let no_delimiter = keys.iter().filter(|r| !r["key"].contains(':')).count() as u64;
        assert_eq!(depth1 + no_delimiter, keys.len() as u64, "{name}");
        assert_eq!(
            u(&s["prefixes"]["no_delimiter"]["keys"]),
            no_delimiter,
            "{name}"
        );
        for depth in 2..=3 {
            let deeper = keys
                .iter()
                .filter(|r| r["key"].matches(':').count() >= depth)
                .count() as u64;
            let rows: u64 = prefixes
                .iter()
                .filter(|r| r["depth"] == depth.to_string())
                .map(|r| num(r, "keys"))
                .sum();
            assert_eq!(rows, deeper, "{name}: depth {depth}");
        }
        let patterns = read_csv(&dir.path().join("patterns.csv"));
        let pattern_sums = (
            patterns.iter().map(|r| num(r, "keys")).sum::<u64>(),
            patterns
                .iter()
                .map(|r| num(r, "serialized_bytes"))
                .sum::<u64>(),
            patterns.iter().map(|r| num(r, "memory_bytes")).sum::<u64>(),
        );
        assert_eq!(
            pattern_sums,
            (
                keys.len() as u64,
                u(&s["totals"]["serialized_bytes"]),
                u(&s["totals"]["memory_bytes"])
            ),
            "{name}"
        );

        // Slots: the per-slot counts are the key rows' slots.
        let mut per_slot: BTreeMap<String, u64> = BTreeMap::new();
        for r in &keys {
            *per_slot.entry(r["slot"].clone()).or_default() += 1;
        }
        let slots: BTreeMap<String, u64> = read_csv(&dir.path().join("slots.csv"))
            .iter()
            .map(|r| (r["slot"].clone(), num(r, "keys")))
            .collect();
        assert_eq!(slots, per_slot, "{name}");
        assert_eq!(
            u(&s["cluster"]["slots_with_keys"]),
            per_slot.len() as u64,
            "{name}"
        );

        // Top keys: the first of each ranking is the row maximum.
        let top = read_csv(&dir.path().join("top.csv"));
        for (ranking, col) in [("elements", "elements"), ("serialized", "serialized_bytes")] {
            let best = top
                .iter()
                .find(|r| r["ranking"] == ranking && r["rank"] == "1")
                .map(|r| num(r, "value"));
            // By elements, collections only: strings hold none, modules' are unknown.
            let max = keys
                .iter()
                .filter(|r| col != "elements" || (r["type"] != "string" && !r[col].is_empty()))
                .map(|r| num(r, col))
                .max();
            assert_eq!(best, max, "{name}: top by {ranking}");
        }

        // Distributions: one entry per type, counting its keys, with its largest size.
        for d in s["distributions"].as_array().unwrap() {
            let ty = d["type"].as_str().unwrap();
            let rows: Vec<_> = keys
                .iter()
                .filter(|r| {
                    r["type"] == ty
                        || (ty == "module"
                            && !["string", "list", "set", "zset", "hash", "stream"]
                                .contains(&r["type"].as_str()))
                })
                .collect();
            assert_eq!(
                u(&d["serialized_bytes"]["count"]),
                rows.len() as u64,
                "{name} {ty}"
            );
            assert_eq!(
                u(&d["serialized_bytes"]["max"]),
                rows.iter()
                    .map(|r| num(r, "serialized_bytes"))
                    .max()
                    .unwrap(),
                "{name} {ty}"
            );
        }
    }
}

const CTIME: i64 = 1_700_000_000;
const REF_MS: i64 = CTIME * 1000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

fn write_dump(path: &Path, fill: impl FnOnce(&mut Rdb<BufWriter<File>>)) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("ctime", &CTIME.to_string()).unwrap();
    rdb.select_db(0).unwrap();
    fill(&mut rdb);
    rdb.finish().unwrap();
}

/// Keys whose prefixes and patterns are worked out by hand below.
const NAMED: [(&str, &str, Option<i64>); 8] = [
    ("user:1:profile", "aaaa", None),
    ("user:2:profile", "bbbbbbbb", None),
    ("user:99999:profile", "c", None),
    ("user:7:name", "Al", Some(REF_MS + DAY)),
    (
        "session:550e8400-e29b-41d4-a716-446655440000",
        "s",
        Some(REF_MS + HOUR),
    ),
    ("session:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "t", None),
    ("cache:product:9f86d081884c7d65", "x", None),
    ("counter", "5", None),
];

fn named_dump(path: &Path) {
    write_dump(path, |rdb| {
        for (k, v, e) in NAMED {
            rdb.set_string(k.as_bytes(), v.as_bytes(), e).unwrap();
        }
        rdb.set_set(b"tags:1", &[b"a", b"b", b"c"]).unwrap();
    });
}

fn ser(key: &str) -> u64 {
    let (k, v, _) = NAMED.iter().find(|(k, _, _)| *k == key).unwrap();
    string_serialized(k.as_bytes(), v.as_bytes())
}

/// `(keys, serialized_bytes, elements, no_ttl_keys, string_keys, set_keys)` per name.
fn rollup(rows: &[HashMap<String, String>], first: &str) -> BTreeMap<String, [u64; 6]> {
    rows.iter()
        .map(|r| {
            let name = match r.get("depth") {
                Some(d) => format!("{d} {}", r[first]),
                None => r[first].clone(),
            };
            let cols = ["keys", "serialized_bytes", "elements", "no_ttl_keys"];
            let mut v = [0; 6];
            for (i, c) in cols.iter().enumerate() {
                v[i] = num(r, c);
            }
            v[4] = num(r, "string_keys");
            v[5] = num(r, "set_keys");
            (name, v)
        })
        .collect()
}

#[test]
fn prefix_and_pattern_rollups_on_a_crafted_dump() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("named.rdb");
    named_dump(&dump);
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    let tags_set = {
        let keys = read_csv(&dir.path().join("keys.csv"));
        let tags = keys.iter().find(|r| r["key"] == "tags:1").unwrap();
        num(tags, "serialized_bytes")
    };
    let users = ser("user:1:profile") + ser("user:2:profile") + ser("user:99999:profile");
    let sessions = ser("session:550e8400-e29b-41d4-a716-446655440000")
        + ser("session:6ba7b810-9dad-11d1-80b4-00c04fd430c8");

    let expected: BTreeMap<String, [u64; 6]> = [
        ("1 user", [4, users + ser("user:7:name"), 0, 3, 4, 0]),
        ("1 session", [2, sessions, 0, 1, 2, 0]),
        (
            "1 cache",
            [1, ser("cache:product:9f86d081884c7d65"), 0, 1, 1, 0],
        ),
        ("1 tags", [1, tags_set, 3, 1, 0, 1]),
        ("2 user:1", [1, ser("user:1:profile"), 0, 1, 1, 0]),
        ("2 user:2", [1, ser("user:2:profile"), 0, 1, 1, 0]),
        ("2 user:99999", [1, ser("user:99999:profile"), 0, 1, 1, 0]),
        ("2 user:7", [1, ser("user:7:name"), 0, 0, 1, 0]),
        (
            "2 cache:product",
            [1, ser("cache:product:9f86d081884c7d65"), 0, 1, 1, 0],
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let prefixes = read_csv(&dir.path().join("prefixes.csv"));
    assert_eq!(rollup(&prefixes, "prefix"), expected);

    let expected: BTreeMap<String, [u64; 6]> = [
        ("user:*:profile", [3, users, 0, 3, 3, 0]),
        ("user:*:name", [1, ser("user:7:name"), 0, 0, 1, 0]),
        ("session:*", [2, sessions, 0, 1, 2, 0]),
        (
            "cache:product:*",
            [1, ser("cache:product:9f86d081884c7d65"), 0, 1, 1, 0],
        ),
        ("counter", [1, ser("counter"), 0, 1, 1, 0]),
        ("tags:*", [1, tags_set, 3, 1, 0, 1]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let patterns = read_csv(&dir.path().join("patterns.csv"));
    assert_eq!(rollup(&patterns, "pattern"), expected);
    // Heaviest first: by memory, then bytes in the file, then keys.
    let weights: Vec<_> = patterns
        .iter()
        .map(|r| {
            (
                num(r, "memory_bytes"),
                num(r, "serialized_bytes"),
                num(r, "keys"),
            )
        })
        .collect();
    assert!(weights.windows(2).all(|w| w[0] >= w[1]), "{weights:?}");

    let s = summary(dir.path());
    assert_eq!(u(&s["prefixes"]["no_delimiter"]["keys"]), 1);
    assert_eq!(s["prefixes"]["depths"][2]["rows"], Value::Array(vec![]));
    assert_eq!(s["prefixes"]["depths"][0]["capped"], false);

    // The same through `prefixes`, with another delimiter and depth.
    let out = rdbscope(&[
        "prefixes",
        "--format",
        "csv",
        "--delimiter",
        "_",
        "--depth",
        "1",
        dump.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0);
    let rows = csv_rows(&out.stdout);
    assert!(rows.is_empty(), "no key holds '_': {rows:?}");
    let out = rdbscope(
        &["prefixes", "--format", "csv", "--depth", "1", "--patterns"]
            .into_iter()
            .chain([dump.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        out.stdout,
        fs::read(dir.path().join("patterns.csv")).unwrap()
    );
}

/// A `ctime` written with spaces around its number is one clock: the keys' `ttl_s`, the
/// TTL classes and `--no-expired` all measure from it.
#[test]
fn a_ctime_with_spaces_is_the_one_clock_of_ttls() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("ctime.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("ctime", &format!(" {CTIME} ")).unwrap();
    rdb.select_db(0).unwrap();
    rdb.set_string(b"gone", b"v", Some(REF_MS - 1000)).unwrap();
    rdb.set_string(b"soon", b"v", Some(REF_MS + 30 * MINUTE))
        .unwrap();
    rdb.finish().unwrap();
    let path = dump.to_str().unwrap();
    let keys = rdbscope(&["keys", "--format", "csv", path]);
    let ttl: HashMap<String, String> = csv_rows(&keys.stdout)
        .into_iter()
        .map(|r| (r["key"].clone(), r["ttl_s"].clone()))
        .collect();
    assert_eq!(ttl["gone"], "-1");
    assert_eq!(ttl["soon"], "1800");
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 0);
    let s = summary(dir.path());
    assert_eq!(s["files"][0]["ttl_reference_ms"], REF_MS);
    let buckets: HashMap<String, u64> = s["ttl"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["bucket"].as_str().unwrap().to_string(), u(&b["keys"])))
        .collect();
    assert_eq!((buckets["expired"], buckets["lt_1h"]), (1, 1));
    let live = rdbscope(&["keys", "--format", "csv", "--no-expired", path]);
    let live: Vec<String> = csv_rows(&live.stdout)
        .into_iter()
        .map(|r| r["key"].clone())
        .collect();
    assert_eq!(
        live,
        ["soon"],
        "--no-expired leaves out what had expired at ctime"
    );
}

#[test]
fn ttl_classes_and_expiry_storms_from_ctime() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("ttl.rdb");
    let storm_minute = (REF_MS / MINUTE + 180) * MINUTE;
    let keys: Vec<(String, Option<i64>)> = [
        ("gone", Some(REF_MS - 1000)),
        ("soon", Some(REF_MS + 30 * MINUTE)),
        ("today", Some(REF_MS + 2 * HOUR)),
        ("week", Some(REF_MS + 2 * DAY)),
        ("month", Some(REF_MS + 10 * DAY)),
        ("later", Some(REF_MS + 60 * DAY)),
        ("forever", None),
    ]
    .into_iter()
    .map(|(k, e)| (k.to_string(), e))
    .chain((0..5).map(|i| (format!("storm:{i}"), Some(storm_minute + 1000 * i))))
    .collect();
    write_dump(&dump, |rdb| {
        for (k, e) in &keys {
            rdb.set_string(k.as_bytes(), b"value", *e).unwrap();
        }
    });
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 0);
    let s = summary(dir.path());
    assert_eq!(s["files"][0]["ctime"], CTIME);
    assert_eq!(s["files"][0]["ttl_reference_ms"], REF_MS);
    let buckets: Vec<(String, u64)> = s["ttl"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["bucket"].as_str().unwrap().to_string(), u(&b["keys"])))
        .collect();
    let expected: Vec<(String, u64)> = [
        ("expired", 1),
        ("lt_1h", 1),
        ("1h_24h", 6),
        ("1d_7d", 1),
        ("7d_30d", 1),
        ("gt_30d", 1),
        ("no_ttl", 1),
    ]
    .into_iter()
    .map(|(b, n)| (b.to_string(), n))
    .collect();
    assert_eq!(buckets, expected);

    // Memory per class is the sum of its keys' memory (taken from `top`).
    let top = rdbscope(&[
        "top",
        "-n",
        "100",
        "--format",
        "csv",
        dump.to_str().unwrap(),
    ]);
    let memory: HashMap<String, u64> = csv_rows(&top.stdout)
        .iter()
        .map(|r| (r["key"].clone(), num(r, "memory_bytes")))
        .collect();
    assert_eq!(memory.len(), keys.len());
    let class_memory = |names: &[&str]| names.iter().map(|n| memory[*n]).sum::<u64>();
    let bucket_memory = |i: usize| u(&s["ttl"]["buckets"][i]["memory_bytes"]);
    assert_eq!(bucket_memory(0), class_memory(&["gone"]));
    assert_eq!(
        bucket_memory(2),
        class_memory(&["today", "storm:0", "storm:1", "storm:2", "storm:3", "storm:4"])
    );
    assert_eq!(bucket_memory(6), class_memory(&["forever"]));

    let storms = s["ttl"]["expiry_storms"].as_array().unwrap();
    assert_eq!(storms[0]["minute_start_ms"], storm_minute);
    assert_eq!(storms[0]["keys"], 5);
    // Already expired and beyond 30 days are not expiry storms to come.
    let listed: u64 = storms.iter().map(|m| u(&m["keys"])).sum();
    assert_eq!(listed, 5 + 4);
}

#[test]
fn top_ranks_by_the_metric_then_db_and_key() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("top.rdb");
    write_dump(&dump, |rdb| {
        rdb.set_string(b"mid", &[b'm'; 50], None).unwrap();
        rdb.set_string(b"big", &[b'b'; 200], None).unwrap();
        rdb.set_string(b"tie:b", &[b't'; 10], None).unwrap();
        rdb.set_string(b"tie:a", &[b't'; 10], None).unwrap();
        rdb.set_string(b"small", b"s", None).unwrap();
        rdb.set_set(b"set:many", &[b"1", b"2", b"3", b"4"]).unwrap();
    });
    let path = dump.to_str().unwrap();
    let ranked = |args: &[&str]| -> Vec<(String, u64)> {
        let mut all = vec!["top", "--format", "csv"];
        all.extend(args);
        all.push(path);
        let out = rdbscope(&all);
        assert_eq!(code(&out), 0);
        csv_rows(&out.stdout)
            .iter()
            .map(|r| (r["key"].clone(), num(r, "value")))
            .collect()
    };
    let s = |k: &str, n: u64| (k.to_string(), n);
    // A string holds no elements: only the set is ranked by elements.
    assert_eq!(
        ranked(&["-n", "4", "--by", "elements"]),
        vec![s("set:many", 4)]
    );
    assert_eq!(
        ranked(&["-n", "2", "--by", "serialized"]),
        vec![
            s("big", string_serialized(b"big", &[0; 200])),
            s("mid", string_serialized(b"mid", &[0; 50]))
        ]
    );
    assert_eq!(
        ranked(&["--by", "elements", "--type", "set"]),
        vec![s("set:many", 4)]
    );

    // report's top.csv has the same ranking, and one per type.
    let (dir, _) = report_dir(&[&dump], &["--top", "4"]);
    let top = read_csv(&dir.path().join("top.csv"));
    let block = |ranking: &str| -> Vec<String> {
        top.iter()
            .filter(|r| r["ranking"] == ranking)
            .map(|r| r["key"].clone())
            .collect()
    };
    assert_eq!(block("elements"), ["set:many"]);
    assert_eq!(block("memory:set"), ["set:many"]);
    assert_eq!(block("memory").len(), 4);
    let memory = rdbscope(&["top", "-n", "4", "--format", "csv", path]);
    let from_top: Vec<String> = csv_rows(&memory.stdout)
        .iter()
        .map(|r| r["key"].clone())
        .collect();
    assert_eq!(block("memory"), from_top);
}

/// Keys spread over 7 services, with ids, TTLs and a few sets; index `i` decides it all.
fn shard_key(rdb: &mut Rdb<BufWriter<File>>, i: usize) {
    let key = format!("svc{}:obj:{i}:{}", i % 7, ["a", "bb", "ccc"][i % 3]);
    let expiry = i
        .is_multiple_of(4)
        .then_some(REF_MS + (i as i64 % 50) * MINUTE);
    if i.is_multiple_of(11) {
        rdb.set_set(key.as_bytes(), &[&b"x"[..], b"yy", b"zzz"][..1 + i % 3])
            .unwrap();
    } else {
        let value = vec![b'v'; i % 97];
        rdb.set_string(key.as_bytes(), &value, expiry).unwrap();
    }
    // A hash tag on some keys.
    if i.is_multiple_of(13) {
        let tagged = format!("{{tag{}}}:k{i}", i % 8);
        rdb.set_string(tagged.as_bytes(), b"t", None).unwrap();
    }
}

/// Everything but what names the files and the positions of keys in them.
fn without_files(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("files");
                // Positions: which dump, and where in it (rankings break ties by them).
                m.remove("file");
                m.remove("offset");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// summary.json without what heavy-hitter tables that overflowed shape: which light names
/// they hold (and the lint findings and notes judged on them, and the mergeable state that
/// holds them whole) depends on the order keys met.
fn without_group_tables(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for k in [
            "prefixes",
            "patterns",
            "pattern_encodings",
            "lint",
            "notes",
            "state",
        ] {
            m.remove(k);
        }
        if let Some(Value::Object(c)) = m.get_mut("cluster") {
            c.remove("hash_tags");
        }
    }
    v
}

/// Every name of `exact` (a CSV of a table that never overflowed) above `1 / m` of its
/// table's keys or memory is in `bounded` with keys and memory inside `[shown, shown +
/// error]`, and each table's rows plus `(other)` sum to the same whole. Returns how many
/// heavy names it checked.
fn assert_heavy_kept(exact: &Path, bounded: &Path, m: u64) -> usize {
    let name_col = |r: &HashMap<String, String>| {
        let name = r
            .get("prefix")
            .or_else(|| r.get("pattern"))
            .unwrap()
            .clone();
        (r.get("depth").cloned().unwrap_or_default(), name)
    };
    let exact = read_csv(exact);
    let bounded = read_csv(bounded);
    let mut whole: HashMap<String, (u64, u64)> = HashMap::new();
    for r in &exact {
        assert!(r.get("prefix").or_else(|| r.get("pattern")) != Some(&"(other)".to_string()));
        let w = whole.entry(name_col(r).0).or_default();
        w.0 += num(r, "keys");
        w.1 += num(r, "memory_bytes");
    }
    let mut sums: HashMap<String, (u64, u64)> = HashMap::new();
    for r in &bounded {
        let w = sums.entry(name_col(r).0).or_default();
        w.0 += num(r, "keys");
        w.1 += num(r, "memory_bytes");
    }
    assert_eq!(sums, whole, "{}", bounded.len());
    let held: HashMap<_, _> = bounded.iter().map(|r| (name_col(r), r)).collect();
    let mut heavy = 0;
    for r in &exact {
        let (depth, name) = name_col(r);
        let (keys, memory) = (num(r, "keys"), num(r, "memory_bytes"));
        let w = whole[&depth];
        if keys * m <= w.0 && memory * m <= w.1 {
            continue;
        }
        heavy += 1;
        let b = held
            .get(&(depth.clone(), name.clone()))
            .unwrap_or_else(|| panic!("heavy {name} (depth {depth:?}) lost"));
        let (k, e) = (num(b, "keys"), num(b, "error_keys"));
        assert!(
            k <= keys && keys <= k + e,
            "{name}: {keys} keys, shown {k} + {e}"
        );
        let (mb, eb) = (num(b, "memory_bytes"), num(b, "error_bytes"));
        assert!(
            mb <= memory && memory <= mb + eb,
            "{name}: {memory} B, shown {mb} + {eb}"
        );
    }
    heavy
}

fn without_file_column(path: &Path) -> Vec<HashMap<String, String>> {
    let mut rows = read_csv(path);
    for r in &mut rows {
        r.remove("file");
    }
    rows
}

#[test]
fn two_shards_merge_into_what_their_union_gives() {
    const N: usize = 40_000;
    let tmp = TempDir::new().unwrap();
    let (a, b, union) = (
        tmp.path().join("a.rdb"),
        tmp.path().join("b.rdb"),
        tmp.path().join("union.rdb"),
    );
    write_dump(&a, |rdb| (0..N / 2).for_each(|i| shard_key(rdb, i)));
    write_dump(&b, |rdb| (N / 2..N).for_each(|i| shard_key(rdb, i)));
    write_dump(&union, |rdb| (0..N).for_each(|i| shard_key(rdb, i)));

    // Uncapped, and with caps small enough that every table overflows (a table of capacity
    // 2 holds up to 5 names: 7 services, 21 patterns and 8 hash tags all overflow).
    let (truth, _) = report_dir(&[&union], &["--max-prefixes", "100000"]);
    // `--cluster`: the union is the shards' cluster, so the cluster lint rules apply to it
    // as they do to the two shards given together.
    for extra in [
        &["--cluster"][..],
        &["--cluster", "--max-prefixes", "2"][..],
    ] {
        let (shards, out) = report_dir(&[&a, &b], extra);
        assert_eq!(code(&out), 0);
        let (whole, out) = report_dir(&[&union], extra);
        assert_eq!(code(&out), 0);
        let (s, w) = (summary(shards.path()), summary(whole.path()));
        assert_eq!(s["files"].as_array().unwrap().len(), 2);
        let in_a = usize::try_from(u(&s["files"][0]["totals"]["keys"])).unwrap();
        let per_file: u64 = s["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| u(&f["totals"]["keys"]))
            .sum();
        assert_eq!(per_file, u(&w["totals"]["keys"]));
        if extra.len() > 1 {
            assert_eq!(w["prefixes"]["depths"][2]["capped"], true);
            assert_eq!(w["patterns"]["capped"], true);
            assert_eq!(w["cluster"]["hash_tags"]["capped"], true);
        }
        if extra.len() == 1 {
            assert_eq!(without_files(s), without_files(w));
            for csv in ["prefixes.csv", "patterns.csv", "slots.csv"] {
                assert_eq!(
                    fs::read(shards.path().join(csv)).unwrap(),
                    fs::read(whole.path().join(csv)).unwrap(),
                    "{csv}"
                );
            }
        } else {
            assert_eq!(
                without_group_tables(without_files(s)),
                without_group_tables(without_files(w))
            );
            for run in [&shards, &whole] {
                for csv in ["prefixes.csv", "patterns.csv"] {
                    // No name is above 1/2 here: this checks the sums.
                    assert_heavy_kept(&truth.path().join(csv), &run.path().join(csv), 2);
                }
            }
        }
        assert_eq!(
            without_file_column(&shards.path().join("top.csv")),
            without_file_column(&whole.path().join("top.csv"))
        );
        // keys.csv holds the shards' rows one after the other, each naming its dump.
        let shard_rows = read_csv(&shards.path().join("keys.csv"));
        let files: Vec<&str> = shard_rows.iter().map(|r| r["file"].as_str()).collect();
        let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
        assert_eq!(files, [vec![a; in_a], vec![b; files.len() - in_a]].concat());
        assert!(in_a > N / 2 && files.len() - in_a > N / 2);
        assert_eq!(
            without_file_column(&shards.path().join("keys.csv")),
            read_csv(&whole.path().join("keys.csv"))
        );
    }
}

#[test]
fn thread_count_changes_no_output() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("many.rdb");
    write_dump(&dump, |rdb| (0..60_000).for_each(|i| shard_key(rdb, i)));
    let runs: Vec<TempDir> = ["1", "2", "3"]
        .iter()
        .map(|t| {
            let (dir, out) = report_dir(&[&dump], &["--threads", t, "--max-prefixes", "50"]);
            assert_eq!(code(&out), 0);
            dir
        })
        .collect();
    // Which light names an overflowing table holds depends on the order keys meet in the
    // merges; the heavy ones and everything else do not.
    let (truth, _) = report_dir(&[&dump], &["--max-prefixes", "100000"]);
    for r in &runs {
        for csv in ["prefixes.csv", "patterns.csv"] {
            // The 7 services and 21 patterns are all above 1/50.
            let heavy = assert_heavy_kept(&truth.path().join(csv), &r.path().join(csv), 50);
            assert!(heavy >= 7, "{csv}: {heavy} heavy names");
        }
        assert_eq!(
            without_group_tables(summary(runs[0].path())),
            without_group_tables(summary(r.path()))
        );
    }
    for name in ["keys.csv", "top.csv"] {
        let first = fs::read(runs[0].path().join(name)).unwrap();
        for r in &runs[1..] {
            assert!(
                first == fs::read(r.path().join(name)).unwrap(),
                "{name} differs"
            );
        }
    }
}

/// A value damaged inside a batch, with keys after it in the same batch: the aggregates
/// cover exactly the keys before the damage, as the rows do, whatever the thread count.
#[test]
fn aggregates_stop_where_the_rows_stop_at_a_damaged_value() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("late-damage.rdb");
    craft::late_damage_dump(&dump, 40_000, 30_000).unwrap();
    for threads in ["1", "2", "8"] {
        let (dir, out) = report_dir(&[&dump], &["--threads", threads]);
        assert_eq!(code(&out), 2, "{threads} threads");
        let s = summary(dir.path());
        assert_eq!(s["partial"], true);
        let keys = read_csv(&dir.path().join("keys.csv"));
        assert_eq!(keys.len(), 30_000);
        assert_eq!(
            json_sums(&s["totals"], true),
            sums(keys.iter()),
            "{threads} threads"
        );
        let patterns = read_csv(&dir.path().join("patterns.csv"));
        assert_eq!(patterns.len(), 1);
        assert_eq!(num(&patterns[0], "keys"), 30_000);
    }
}

/// A second run into the same directory replaces every file whole: a smaller dump leaves
/// no rows of the bigger one behind, and no temporary file stays.
#[test]
fn a_rerun_replaces_the_files_of_the_last_one() {
    let tmp = TempDir::new().unwrap();
    let (big, small) = (tmp.path().join("big.rdb"), tmp.path().join("small.rdb"));
    write_dump(&big, |rdb| (0..5_000).for_each(|i| shard_key(rdb, i)));
    write_dump(&small, |rdb| (0..10).for_each(|i| shard_key(rdb, i)));
    let dir = TempDir::new().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    // `shard_key` adds a hash-tagged key for every 13th index.
    for (dump, rows) in [(&big, 5_000 + 385), (&small, 10 + 1)] {
        let run = rdbscope(&[
            "report",
            "--quiet",
            "--out-dir",
            out_dir,
            dump.to_str().unwrap(),
        ]);
        assert_eq!(code(&run), 0);
        assert_eq!(read_csv(&dir.path().join("keys.csv")).len(), rows);
        assert_eq!(u(&summary(dir.path())["totals"]["keys"]), rows as u64);
    }
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "findings.csv",
            "keys.csv",
            "patterns.csv",
            "prefixes.csv",
            "report.html",
            "slots.csv",
            "summary.json",
            "top.csv"
        ]
    );
}

#[test]
fn commands_agree_with_report_files() {
    let dump = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 0);
    let path = dump.to_str().unwrap();
    let prefixes = rdbscope(&["prefixes", "--format", "csv", path]);
    assert_eq!(
        prefixes.stdout,
        fs::read(dir.path().join("prefixes.csv")).unwrap()
    );
    let top = rdbscope(&["top", "--format", "csv", "--by", "elements", path]);
    let report_top = read_csv(&dir.path().join("top.csv"));
    let elements: Vec<_> = report_top
        .into_iter()
        .filter(|r| r["ranking"] == "elements")
        .collect();
    assert_eq!(csv_rows(&top.stdout), elements);

    // Tables: one section per aggregate, for people.
    let tables = rdbscope(&["report", path]);
    assert_eq!(code(&tables), 0);
    let text = stdout(&tables);
    for title in [
        "Keys by type",
        "Keys by type and encoding",
        "Keys by db",
        "TTL (from the dump's ctime)",
        "Prefixes, depth 1",
        "Key patterns",
        "Biggest keys by memory",
        "Distributions per type",
        "Heaviest cluster slots",
    ] {
        assert!(text.contains(title), "missing {title}");
    }
    let top_table = stdout(&rdbscope(&["top", "-n", "3", path]));
    let rows: Vec<&str> = top_table.lines().filter(|l| l.starts_with('│')).collect();
    assert_eq!(
        rows.len(),
        1 + 3 + 1,
        "a header, 3 keys, the rest:\n{top_table}"
    );
    assert!(rows[4].contains("more keys"), "{top_table}");
}

#[test]
fn damaged_dump_still_reports_what_was_read() {
    // The seventh key's type byte is damaged: six keys are read whole before it.
    let dump = common::testdata().join("corrupt/unknown-type-byte.rdb");
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown-type-byte.rdb"), "{stderr}");
    let s = summary(dir.path());
    assert_eq!(s["partial"], true);
    assert_eq!(s["files"][0]["partial"], true);
    assert!(s["files"][0]["error"].as_str().unwrap().contains("offset"));
    assert!(s["notes"][0].as_str().unwrap().starts_with("PARTIAL"));
    let keys = read_csv(&dir.path().join("keys.csv"));
    assert_eq!(keys.len(), 6);
    assert_eq!(u(&s["totals"]["keys"]), 6);

    let tables = rdbscope(&["report", dump.to_str().unwrap()]);
    assert_eq!(code(&tables), 2);
    assert!(stdout(&tables).contains("PARTIAL"));

    // A missing dump among good ones: reported, the rest analysed, exit 2.
    let good = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let missing = Path::new("/nonexistent/dump.rdb");
    let run = |extra: &[&str]| {
        let dumps = [good.to_str().unwrap(), missing.to_str().unwrap()];
        rdbscope(&[&["report", "--format", "json"][..], &dumps, extra].concat())
    };
    // A run missing one of its dumps is no result...
    let out = run(&[]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
    // ... unless asked for: then the others are reported, the missing one named.
    let out = run(&["--allow-partial"]);
    assert_eq!(code(&out), 2);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(s["files"][1]["error"]
        .as_str()
        .unwrap()
        .starts_with("cannot open"));
    assert_eq!(s["totals"]["keys"], s["files"][0]["totals"]["keys"]);
}

#[test]
fn hostile_names_are_escaped_everywhere() {
    let tmp = TempDir::new().unwrap();
    let dump = tmp.path().join("hostile.rdb");
    write_dump(&dump, |rdb| {
        for key in [
            &b"=HYPERLINK(\"x\"):1"[..],
            b"bin\xff\x00:2",
            b"line\nbreak:3",
            b"\x1b[31mred:4",
        ] {
            rdb.set_string(key, b"v", None).unwrap();
        }
    });
    let (dir, out) = report_dir(&[&dump], &[]);
    assert_eq!(code(&out), 0);
    let prefixes = fs::read_to_string(dir.path().join("prefixes.csv")).unwrap();
    let names: Vec<String> = csv_rows(prefixes.as_bytes())
        .iter()
        .map(|r| r["prefix"].clone())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "'=HYPERLINK(\"x\")",
            "\\x1b[31mred",
            "bin\\xff\\x00",
            "line\\x0abreak"
        ]
    );
    assert!(!prefixes.contains('\x1b'));
    let s = summary(dir.path());
    let rows = s["prefixes"]["depths"][0]["rows"].as_array().unwrap();
    let bin = rows.iter().find(|r| r["name"] == "bin\\xff\\x00").unwrap();
    assert_eq!(bin["name_base64"], "Ymlu/wA=");
    let table = stdout(&rdbscope(&["prefixes", dump.to_str().unwrap()]));
    assert!(!table.contains('\x1b') && table.contains("line\\x0abreak"));
}

#[test]
fn progress_bar_only_on_request_when_stderr_is_not_a_terminal() {
    let dump = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let path = dump.to_str().unwrap();
    let auto = rdbscope(&["top", path]);
    assert!(
        auto.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&auto.stderr)
    );
    let forced = rdbscope(&["top", "--progress", "always", path]);
    assert!(!forced.stderr.is_empty());
    assert_eq!(forced.stdout, auto.stdout);
    let quiet = rdbscope(&["top", "--progress", "always", "--quiet", path]);
    assert!(quiet.stderr.is_empty());
}

/// `--allocator auto` on a 41-key dump: used-mem is mostly the server's own memory, so the
/// detection falls back to jemalloc and says why; a named allocator (or the
/// `--malloc-quantum` alias) is taken as given. `info`, the report and summary.json agree.
#[test]
fn allocator_choice_is_shown_in_info_report_and_summary() {
    let dump = common::testdata().join("real/redis-7.0.15-alltypes.rdb");
    let dump = dump.to_str().unwrap();
    let info = |extra: &[&str]| -> Value {
        let mut args = vec!["info", "--format", "json", dump];
        args.extend(extra);
        let o = rdbscope(&args);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["allocator"].clone()
    };
    let auto = info(&[]);
    assert_eq!(auto["name"], "jemalloc");
    assert_eq!(auto["chosen_by"], "ambiguous");
    assert!(
        auto["note"]
            .as_str()
            .unwrap()
            .contains("jemalloc (official builds) assumed, --allocator settles it"),
        "{auto}"
    );
    // The margin (a few KB between the candidates) is far below the uncertainty (the
    // server's own memory, the model's tolerance: over 300 KB).
    let margin = auto["margin_bytes"].as_u64().unwrap();
    let uncertainty = auto["uncertainty_bytes"].as_u64().unwrap();
    assert!(margin < 50_000 && uncertainty > 300_000, "{auto}");
    assert_eq!(auto["sampled_keys"], 41);
    assert_eq!(auto["whole_dump_sampled"], true);
    // Each allocator with each list-compress-depth from 0 to 3 (the dump's
    // `list:compressed` has nodes its server may have held compressed).
    let names: Vec<&str> = auto["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["allocator"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 12);
    for name in ["jemalloc", "jemalloc-16", "libc"] {
        assert!(names.contains(&name), "{names:?}");
    }
    // 2,127,368 bytes used-mem, of which the keys are a fifth: every residual about -34%.
    for c in auto["candidates"].as_array().unwrap() {
        let r = c["residual_percent"].as_f64().unwrap();
        assert!((-42.0..-33.0).contains(&r), "{c}");
    }
    let given = info(&["--malloc-quantum", "16"]);
    assert_eq!(
        (given["name"].as_str(), given["chosen_by"].as_str()),
        (Some("jemalloc-16"), Some("option"))
    );
    // The allocator named, the list-compress-depth is still chosen: one candidate a depth.
    let candidates = given["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 4, "{given}");
    assert!(candidates.iter().all(|c| c["allocator"] == "jemalloc-16"));
    assert_eq!(given["list_compress_depth"]["chosen_by"], "ambiguous");
    let named = info(&[
        "--allocator",
        "libc",
        "--config-set",
        "list-compress-depth=1",
    ]);
    assert_eq!(named["candidates"].as_array().unwrap().len(), 0, "{named}");
    assert_eq!(named["list_compress_depth"], Value::Null);
    assert_eq!(info(&["--allocator", "libc"])["name"], "libc");
    let o = rdbscope(&["info", "--allocator", "tcmalloc", dump]);
    assert_eq!(code(&o), 2, "{}", String::from_utf8_lossy(&o.stderr));

    let o = rdbscope(&["report", dump]);
    assert!(
        stdout(&o)
            .contains("memory modelled with allocator jemalloc (ambiguous: the runner-up leaves "),
        "{}",
        stdout(&o)
    );
    let (dir, o) = report_dir(&[Path::new(dump)], &["--allocator", "jemalloc-16"]);
    assert_eq!(code(&o), 0);
    let s = summary(dir.path());
    assert_eq!(s["files"][0]["model"]["allocator"]["name"], "jemalloc-16");
    assert_eq!(s["files"][0]["model"]["allocator"]["chosen_by"], "option");
}

/// summary.json records every setting the model used (allocator, server and where its
/// version came from, thresholds and the directives given, lint thresholds), and a
/// `--redis-version` that cannot have written the dump's RDB version is refused.
#[test]
fn summary_records_the_model_settings_and_the_version_is_checked() {
    let dump = common::testdata().join("real/redis-7.0.15-alltypes.rdb");
    let (dir, o) = report_dir(
        &[dump.as_path()],
        &[
            "--redis-version",
            "7.0.4",
            "--config-set",
            "hash-max-listpack-entries=100",
            "--allocator",
            "jemalloc-16",
        ],
    );
    assert!(code(&o) <= 1, "{}", String::from_utf8_lossy(&o.stderr));
    let s = summary(dir.path());
    let model = &s["files"][0]["model"];
    assert_eq!(model["allocator"]["name"], "jemalloc-16");
    assert_eq!(model["server"]["family"], "redis");
    assert_eq!(model["server"]["version"], "7.0.4");
    assert_eq!(model["server"]["version_from"], "--redis-version");
    assert_eq!(model["limits"]["hash_max_listpack_entries"], 100);
    assert_eq!(model["limits"]["zset_max_listpack_entries"], 128);
    assert_eq!(model["config"][0]["name"], "hash-max-listpack-entries");
    assert_eq!(model["config"][0]["value"], "100");
    assert_eq!(s["lint"]["thresholds"]["key_max_bytes"], 100);
    let (dir, _) = report_dir(&[dump.as_path()], &[]);
    let s = summary(dir.path());
    assert_eq!(s["files"][0]["model"]["server"]["version"], "7.0.15");
    assert_eq!(s["files"][0]["model"]["server"]["version_from"], "dump");

    let dump = dump.to_str().unwrap();
    for command in ["info", "keys", "report"] {
        let o = rdbscope(&[command, "--redis-version", "6.2.0", dump]);
        assert_eq!(code(&o), 2, "{command}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(
                "--redis-version 6.2.0: Redis 6.2.0 writes RDB 9, but this dump is RDB 10"
            ),
            "{command}: {err}"
        );
    }
    let valkey9 = common::testdata().join("modern/valkey-9.1.2-alltypes.rdb");
    let o = rdbscope(&[
        "info",
        "--redis-version",
        "8.1.8",
        valkey9.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("Valkey 8.1.8 writes RDB 11, but this dump is RDB 80"));
    let o = rdbscope(&[
        "info",
        "--redis-version",
        "9.0.0",
        valkey9.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}
