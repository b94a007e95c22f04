//! `merge` through the binary: runs of fixture dumps made apart (one `report --out-dir`
//! each, as on the shards' own machines) merged from their summary.json give what one run
//! over all the dumps gives — summary.json, every table file and report.html byte for byte,
//! and the printed report — also when the heavy-hitter tables overflow, when a run holds
//! several dumps and when a merged run is merged again; with threads splitting the keys of
//! overflowing tables, within the tables' guarantee; dumps of two shards at the same path
//! told apart by their run; runs made with other settings, a dump merged twice and
//! summaries without state are refused by name.

mod common;
mod craft;

use serde_json::Value;
use std::collections::HashMap;
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

/// Three dumps of three servers (Redis 7.4 with and without cluster slots, Valkey 8.0 with
/// LFU counters), each with a `ctime`.
fn fleet() -> Vec<PathBuf> {
    let real = common::testdata().join("real");
    [
        "redis-7.4.1-alltypes.rdb",
        "redis-7.4.1-cluster.rdb",
        "valkey-8.0.1-alltypes-lfu.rdb",
    ]
    .iter()
    .map(|name| real.join(name))
    .collect()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `report --out-dir` over `dumps` with `extra` flags: the directory and the run.
fn report(dumps: &[&Path], extra: &[&str]) -> (TempDir, Output) {
    let dir = TempDir::new().unwrap();
    let mut args = vec!["report", "-q", "--out-dir", path(dir.path())];
    args.extend(extra);
    args.extend(dumps.iter().map(|d| path(d)));
    let out = rdbscope(&args);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    (dir, out)
}

/// `merge --out-dir` of `runs`: the directory and the run.
fn merge(runs: &[&Path]) -> (TempDir, Output) {
    let dir = TempDir::new().unwrap();
    let mut args = vec!["merge", "-q", "--out-dir", path(dir.path())];
    args.extend(runs.iter().map(|r| path(r)));
    let out = rdbscope(&args);
    (dir, out)
}

/// The fields of summary.json that may differ between a merge and the one run over the
/// same dumps: none. (Nothing in it depends on when or where a run was made once every
/// dump has a `ctime`: TTLs are measured from it, not from the time of the analysis.)
const MAY_DIFFER: [&str; 0] = [];

fn summary(dir: &Path) -> Value {
    let mut v: Value =
        serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap();
    for field in MAY_DIFFER {
        v.as_object_mut().unwrap().remove(field);
    }
    v
}

/// Every file `merge --out-dir` writes.
const FILES: [&str; 7] = [
    "summary.json",
    "report.html",
    "prefixes.csv",
    "patterns.csv",
    "top.csv",
    "slots.csv",
    "findings.csv",
];

/// `merged` holds what `one` holds, file by file, and printed the same report.
/// The dumps a summary.json names, in its order.
fn file_paths(summary: &Value) -> Vec<&str> {
    summary["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect()
}

fn assert_same_report(merged: &(TempDir, Output), one: &(TempDir, Output), what: &str) {
    assert_eq!(merged.1.status.code(), Some(0), "{what}: {:?}", merged.1);
    let (m, o) = (summary(merged.0.path()), summary(one.0.path()));
    for (field, value) in o.as_object().unwrap() {
        assert_eq!(&m[field], value, "{what}: summary.json {field}");
    }
    assert_eq!(m, o, "{what}: summary.json");
    for name in FILES {
        let (a, b) = (merged.0.path().join(name), one.0.path().join(name));
        assert!(
            fs::read(&a).unwrap() == fs::read(&b).unwrap(),
            "{what}: {name} differs"
        );
    }
    assert!(
        !merged.0.path().join("keys.csv").exists(),
        "no per-key file"
    );
    assert_eq!(
        String::from_utf8_lossy(&merged.1.stdout),
        String::from_utf8_lossy(&one.1.stdout),
        "{what}: the printed report"
    );
}

#[test]
fn runs_merged_equal_one_run_over_their_dumps() {
    let dumps = fleet();
    let [a, b, c] = [&dumps[0], &dumps[1], &dumps[2]].map(PathBuf::as_path);
    // Default tables (nothing overflows), and tables of capacity 2 that every prefix depth,
    // the patterns and the pattern encodings overflow: the merge adds the runs' tables as
    // the one run adds its dumps', so even then it is the same. One thread per run, so a
    // dump's tables do not depend on how keys were split between threads.
    for extra in [
        &["--threads", "1"][..],
        &["--threads", "1", "--max-prefixes", "2"],
    ] {
        let one = report(&[a, b, c], extra);
        let what = format!("{extra:?}");
        let runs: Vec<TempDir> = [a, b, c].iter().map(|d| report(&[d], extra).0).collect();
        let [ra, rb, rc] = [&runs[0], &runs[1], &runs[2]].map(TempDir::path);
        // A report directory or its summary.json, alike.
        let merged = merge(&[ra, &rb.join("summary.json"), rc]);
        assert_same_report(&merged, &one, &what);

        let s = summary(merged.0.path());
        let files = file_paths(&s);
        assert_eq!(files, [a, b, c].map(path));
        let keys: u64 = s["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["totals"]["keys"].as_u64().unwrap())
            .sum();
        assert!(keys > 100 && s["totals"]["keys"] == keys, "{keys}");
        // Top keys name the dump they are in, numbered across the runs.
        let top_files: Vec<&str> = s["top_keys"]["by_memory"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["file"].as_str().unwrap())
            .collect();
        for d in [a, b, c] {
            assert!(top_files.contains(&path(d)), "{top_files:?}");
        }
        let capped = s["patterns"]["capped"].as_bool().unwrap();
        assert_eq!(capped, extra.contains(&"--max-prefixes"), "{what}");
        if capped {
            assert_eq!(s["prefixes"]["depths"][0]["capped"], true);
            assert!(s["patterns"]["absent_max_keys"].as_u64().unwrap() > 0);
        }

        // A run of two dumps merged with a run of one; a merged run merged again.
        let ab = report(&[a, b], extra).0;
        assert_same_report(&merge(&[ab.path(), rc]), &one, &format!("{what} ab+c"));
        let merged_ab = merge(&[ra, rb]).0;
        assert_same_report(
            &merge(&[merged_ab.path(), rc]),
            &one,
            &format!("{what} (a+b)+c"),
        );
    }
}

#[test]
fn json_stdout_is_the_summary_and_tables_print_as_report_does() {
    let dumps = fleet();
    let runs: Vec<TempDir> = dumps.iter().map(|d| report(&[d], &[]).0).collect();
    let args: Vec<&str> = runs.iter().map(|r| path(r.path())).collect();
    let json = rdbscope(&[&["merge", "--format", "json"][..], &args].concat());
    assert_eq!(json.status.code(), Some(0));
    let printed: Value = serde_json::from_slice(&json.stdout).unwrap();
    let all: Vec<&str> = dumps.iter().map(|d| path(d)).collect();
    let one = rdbscope(&[&["report", "-q", "--format", "json"][..], &all].concat());
    let one: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(printed, one);
    assert_eq!(printed["schema_version"], 3);
    assert!(printed["state"]["aggregates"]["prefixes"]["tables"].is_array());
}

#[test]
fn dumps_of_the_same_path_on_two_shards_are_told_apart_by_their_run() {
    let dumps = fleet();
    let tmp = TempDir::new().unwrap();
    let mut runs = Vec::new();
    for (i, dump) in dumps[..2].iter().enumerate() {
        // Each shard's dump is `dump.rdb` in its own data directory.
        let data = tmp.path().join(format!("data{i}"));
        fs::create_dir(&data).unwrap();
        fs::copy(dump, data.join("dump.rdb")).unwrap();
        let run = tmp.path().join(format!("shard{i}"));
        let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
            .args(["report", "-q", "--out-dir", path(&run), "dump.rdb"])
            .current_dir(&data)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        runs.push(run);
    }
    let merged = merge(&[&runs[0], &runs[1]]);
    assert_eq!(merged.1.status.code(), Some(0), "{:?}", merged.1);
    let s = summary(merged.0.path());
    let names: Vec<String> = runs
        .iter()
        .map(|r| format!("dump.rdb ({})", r.display()))
        .collect();
    let files = file_paths(&s);
    assert_eq!(files, names);
    let top = s["top_keys"]["by_memory"].as_array().unwrap();
    for name in &names {
        assert!(top.iter().any(|k| k["file"] == name.as_str()), "{name}");
    }
}

#[test]
fn runs_that_cannot_merge_are_refused_by_name() {
    let dumps = fleet();
    let (a, b) = (dumps[0].as_path(), dumps[1].as_path());
    let plain = report(&[a], &[]).0;
    let refused = |runs: &[&Path]| {
        let out = merge(runs).1;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let origin = |dir: &TempDir| dir.path().join("summary.json").display().to_string();

    // Other prefix depth and lint threshold: each named with both values.
    let deeper = report(&[b], &["--depth", "2", "--bigkey-elements", "100"]).0;
    let err = refused(&[plain.path(), deeper.path()]);
    assert!(err.contains("different settings"), "{err}");
    for said in [
        format!("--depth: 3 in {}, 2 in {}", origin(&plain), origin(&deeper)),
        format!(
            "--bigkey-elements: 5000 in {}, 100 in {}",
            origin(&plain),
            origin(&deeper)
        ),
    ] {
        assert!(err.contains(&said), "{said} in {err}");
    }
    for (flags, named) in [
        (&["--max-prefixes", "50"][..], "--max-prefixes"),
        (&["--under", "user"][..], "--under"),
        (&["--top", "10"][..], "--top"),
        (&["--disable", "ttl.missing"][..], "--disable"),
        (&["--db", "0"][..], "the filters"),
        (&["--allocator", "libc"][..], "the server model"),
    ] {
        let other = report(&[b], flags).0;
        let err = refused(&[plain.path(), other.path()]);
        assert!(err.contains(named), "{flags:?}: {err}");
    }

    // The same dump twice.
    let again = report(&[a], &[]).0;
    let err = refused(&[plain.path(), again.path()]);
    assert!(
        err.contains(&format!("{}: the same dump is in", a.display())),
        "{err}"
    );

    // A summary.json of schema version 1 has no state; a dump is not a run.
    let mut v1 = summary(plain.path());
    v1["schema_version"] = 1.into();
    v1.as_object_mut().unwrap().remove("state");
    let old = plain.path().join("v1.json");
    fs::write(&old, serde_json::to_vec(&v1).unwrap()).unwrap();
    let err = refused(&[&old]);
    assert!(
        err.contains("schema_version 1 carries no mergeable state"),
        "{err}"
    );
    let err = refused(&[a]);
    assert!(
        err.contains("not a summary.json nor a report directory"),
        "{err}"
    );
    // A damaged state names what is wrong.
    let text = fs::read_to_string(plain.path().join("summary.json")).unwrap();
    let broken = plain.path().join("broken.json");
    fs::write(&broken, text.replacen("\"capacity\":", "\"capacity\":-", 1)).unwrap();
    let err = refused(&[&broken]);
    assert!(err.contains("broken.json: state: "), "{err}");
    // Settings no run can have are refused before anything is built from them; a huge
    // top N allocates nothing up front.
    let deep = plain.path().join("deep.json");
    fs::write(
        &deep,
        text.replacen("\"depth\":3,", "\"depth\":1000000000,", 1),
    )
    .unwrap();
    let err = refused(&[&deep]);
    assert!(
        err.contains("prefix depth 1000000000: rdbscope counts 1 to 32"),
        "{err}"
    );
    let wide = plain.path().join("wide.json");
    let huge = "\"top_n\":1000000000000000000,";
    fs::write(&wide, text.replacen("\"top_n\":50,", huge, 1)).unwrap();
    let out = merge(&[&wide]).1;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// A crafted shard of `keys` string keys from `first` on: a third under `hot:`, the rest in
/// 2 services and 16 patterns, one in four with a TTL.
fn crafted_shard(path: &Path, first: usize, keys: usize) {
    let mut rdb = craft::Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in first..first + keys {
        let key = if i % 3 == 0 {
            format!("hot:{i}")
        } else {
            let field = ["a", "bb", "ccc", "dddd", "e", "ff", "ggg", "hhhh"][i / 2 % 8];
            format!("svc{}:obj:{i}:{field}", i % 2)
        };
        let expiry = (i % 4 == 0).then_some(1_700_000_000_000 + (i as i64 % 90) * 60_000);
        rdb.set_string(key.as_bytes(), &vec![b'v'; i % 61], expiry)
            .unwrap();
    }
    rdb.finish().unwrap();
}

/// The heavy-hitter tables of a summary's state by where they are: `(place, table)`.
fn tables(summary: &Value) -> Vec<(String, &Value)> {
    let a = &summary["state"]["aggregates"];
    let mut out: Vec<(String, &Value)> = a["prefixes"]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("prefixes depth {}", i + 1), t))
        .collect();
    out.push(("patterns".into(), &a["patterns"]["table"]));
    out.push(("pattern encodings".into(), &a["encodings"]["table"]));
    out.push(("hash tags".into(), &a["slots"]["tags"]));
    out
}

/// Each table of `bounded` against the same table of `exact` (which never overflowed): its
/// names plus `(other)` hold every key and byte; every name above `1/m` of the keys or of
/// the memory is held, with keys and memory within `[figure, figure + error]`. Returns how
/// many heavy names were checked.
fn assert_within_guarantee(exact: &Value, bounded: &Value, m: u64) -> usize {
    let mut heavy = 0;
    for ((place, e), (_, b)) in tables(exact).into_iter().zip(tables(bounded)) {
        assert_eq!(e["overflowed"], false, "{place}: the exact run overflowed");
        // [name, [keys, memory, …], counter, [error keys, error bytes]]
        let held = |t: &Value| -> HashMap<String, (u64, u64, u64, u64)> {
            let n = |v: &Value| v.as_u64().unwrap();
            t["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let (s, err) = (&r[1], &r[3]);
                    (
                        r[0].to_string(),
                        (n(&s[0]), n(&s[1]), n(&err[0]), n(&err[1])),
                    )
                })
                .collect()
        };
        let (truth, shown) = (held(e), held(b));
        let whole = |rows: &HashMap<String, (u64, u64, u64, u64)>, t: &Value| {
            rows.values().fold(
                (
                    t["other"][0].as_u64().unwrap(),
                    t["other"][1].as_u64().unwrap(),
                ),
                |(k, m), r| (k + r.0, m + r.1),
            )
        };
        let (keys, memory) = whole(&truth, e);
        assert_eq!(
            whole(&shown, b),
            (keys, memory),
            "{place}: rows and (other)"
        );
        for (name, &(k, mem, _, _)) in &truth {
            if k * m <= keys && mem * m <= memory {
                continue;
            }
            heavy += 1;
            let &(sk, sm, ek, em) = shown
                .get(name)
                .unwrap_or_else(|| panic!("{place}: heavy {name} lost"));
            assert!(
                sk <= k && k <= sk + ek,
                "{place} {name}: {k} keys, {sk} + {ek}"
            );
            assert!(
                sm <= mem && mem <= sm + em,
                "{place} {name}: {mem} B, {sm} + {em}"
            );
        }
    }
    heavy
}

#[test]
fn with_threads_splitting_overflowing_tables_the_merge_keeps_their_guarantee() {
    let tmp = TempDir::new().unwrap();
    let (a, b) = (tmp.path().join("a.rdb"), tmp.path().join("b.rdb"));
    crafted_shard(&a, 0, 30_000);
    crafted_shard(&b, 30_000, 30_000);
    // Capacity 4 (at most 10 names held): the 17 patterns and prefix depth 3 overflow.
    let flags = ["--threads", "2", "--max-prefixes", "4"];
    let runs = [report(&[&a], &flags).0, report(&[&b], &flags).0];
    let merged = merge(&[runs[0].path(), runs[1].path()]);
    assert_eq!(merged.1.status.code(), Some(0), "{:?}", merged.1);
    let one = report(&[&a, &b], &flags).0;
    let exact = report(&[&a, &b], &["--max-prefixes", "100000"]).0;
    let (m, o) = (summary(merged.0.path()), summary(one.path()));
    assert_eq!(m["patterns"]["capped"], true);
    // Which light names an overflowing table holds depends on the order keys met, in the
    // one run as in the merge; the heavy names and everything else do not.
    // hot, svc0, svc1; svc0:obj, svc1:obj; hot:*.
    let heavy = assert_within_guarantee(&summary(exact.path()), &m, 4);
    assert_eq!(heavy, 6);
    let judged_on_tables = [
        "prefixes",
        "patterns",
        "pattern_encodings",
        "lint",
        "notes",
        "state",
    ];
    for (field, value) in o.as_object().unwrap() {
        if !judged_on_tables.contains(&field.as_str()) {
            assert_eq!(&m[field], value, "summary.json {field}");
        }
    }
    for name in ["top.csv", "slots.csv"] {
        assert!(
            fs::read(merged.0.path().join(name)).unwrap()
                == fs::read(one.path().join(name)).unwrap(),
            "{name} differs"
        );
    }
}
