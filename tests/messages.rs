//! What the commands say about the dumps around their numbers: `info` on several dumps and
//! on a damaged one, a file given as `--out-dir`, what TTLs are measured from, the PARTIAL
//! note, the lint's values and counts, and times marked as UTC.

mod common;
mod craft;

use craft::Rdb;
use serde_json::Value;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .env("COLUMNS", "200")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn corrupt(name: &str) -> String {
    common::testdata()
        .join("corrupt")
        .join(name)
        .display()
        .to_string()
}

fn real(name: &str) -> String {
    common::testdata()
        .join("real")
        .join(name)
        .display()
        .to_string()
}

/// Three string keys, one expiring at 2023-11-15T00:13:20Z; `ctime` when given.
fn small_dump(dir: &Path, name: &str, ctime: Option<&str>) -> PathBuf {
    let path = dir.join(name);
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    if let Some(ctime) = ctime {
        rdb.aux("ctime", ctime).unwrap();
    }
    rdb.select_db(0).unwrap();
    rdb.set_string(b"a:1", b"x", None).unwrap();
    rdb.set_string(b"a:2", b"y", Some(1_700_007_200_000))
        .unwrap();
    rdb.set_string(b"b:1", b"z", None).unwrap();
    rdb.finish().unwrap();
    path
}

#[test]
fn info_describes_each_of_several_dumps() {
    let (a, b) = (
        corrupt("redis-7.4.1-small.rdb"),
        real("redis-7.4.1-alltypes.rdb"),
    );
    let o = run(&["info", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let files: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("file             "))
        .collect();
    assert_eq!(files.len(), 2, "{text}");
    assert!(
        files[0].ends_with(&a) && files[1].ends_with(&b),
        "{files:?}"
    );
    assert!(text.contains("keys             10\n"), "{text}");
    assert!(text.contains("keys             44\n"), "{text}");

    let o = run(&["info", "--format", "json", &a, &b]);
    let docs: Value = serde_json::from_slice(&o.stdout).unwrap();
    let docs = docs.as_array().expect("an array for several dumps");
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0]["keys"], 10);
    assert_eq!(docs[1]["keys"], 44);
    // One dump: the object itself, as before.
    let o = run(&["info", "--format", "json", &a]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["keys"], 10);
}

#[test]
fn info_on_a_damaged_dump_does_not_compare_the_model() {
    let path = corrupt("truncated-mid-value.rdb");
    let o = run(&["info", &path]);
    assert_eq!(o.status.code(), Some(2));
    let text = stdout(&o);
    assert!(!text.contains("-100"), "{text}");
    assert!(
        text.contains(
            "used-mem (aux)   1283152 (the server's used_memory at save; not compared: the dump was not read whole)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "used_memory      0 modelled = keys 0 + db overhead 0 (the keys read before the damage)"
        ),
        "{text}"
    );
    let o = run(&["info", "--format", "json", &path]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["memory"]["difference_percent"], Value::Null);
    assert_eq!(doc["memory"]["used_mem_aux"], 1283152);
    // The whole dump is compared.
    let o = run(&[
        "info",
        "--format",
        "json",
        &corrupt("redis-7.4.1-small.rdb"),
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    // A few keys beside the server's own ~0.94 MB baseline (counted in the comparison) of
    // 1,283,152 bytes used-mem.
    let diff = doc["memory"]["difference_percent"].as_f64().unwrap();
    assert!((-27.0..-26.0).contains(&diff), "{diff}");
}

#[test]
fn a_file_as_out_dir_is_named_before_any_reading() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    let dump = corrupt("redis-7.4.1-small.rdb");
    let o = run(&[
        "report",
        "--quiet",
        "--out-dir",
        file.to_str().unwrap(),
        &dump,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "rdbscope: --out-dir {}: is a file, not a directory (name a directory; it is created when missing)\n",
            file.display()
        )
    );
    assert!(o.stdout.is_empty());
    let below = file.join("out");
    let o = run(&[
        "report",
        "--quiet",
        "--out-dir",
        below.to_str().unwrap(),
        &dump,
    ]);
    assert_eq!(
        stderr(&o),
        format!(
            "rdbscope: --out-dir {}: {} is a file, not a directory (name a directory; it is created when missing)\n",
            below.display(),
            file.display()
        )
    );
}

#[test]
fn the_ttl_table_says_what_it_measures_from() {
    let dir = TempDir::new().unwrap();
    let with = small_dump(dir.path(), "with.rdb", Some("1700000000"));
    let without = small_dump(dir.path(), "without.rdb", None);
    let title = |dumps: &[&Path]| {
        let mut args = vec!["report", "--quiet"];
        args.extend(dumps.iter().map(|p| p.to_str().unwrap()));
        let text = stdout(&run(&args));
        text.lines()
            .find(|l| l.starts_with("TTL ("))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    assert_eq!(title(&[&with]), "TTL (from the dump's ctime)");
    assert_eq!(
        title(&[&without]),
        "TTL (from the time of the analysis: the dump has no ctime)"
    );
    assert_eq!(
        title(&[&with, &without]),
        "TTL (from each dump's ctime, or the time of the analysis for those without)"
    );
}

#[test]
fn the_partial_note_names_the_dump_once() {
    let path = corrupt("truncated-mid-value.rdb");
    for args in [&["report"][..], &["top"], &["prefixes"]] {
        let mut args = args.to_vec();
        args.extend(["--quiet", &path]);
        let o = run(&args);
        let text = stdout(&o);
        // The note, its lines wrapped to the width joined again.
        let at = text
            .find("  * PARTIAL: ")
            .unwrap_or_else(|| panic!("{args:?}\n{text}"));
        let end = text[at..].find("\n\n").map_or(text.len(), |e| at + e);
        let note = text[at..end].replace("\n    ", " ");
        assert_eq!(
            note,
            format!(
                "  * PARTIAL: {path}: truncated: needs 300 bytes, 150 left at offset 92 (reading string value); no key was read before the damage; the report covers the keys read before that"
            )
        );
        // stderr names it once too.
        assert_eq!(stderr(&o).matches(&path).count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn just_over_listpack_shows_the_limit_the_key_is_over() {
    // hash:long-value: one field whose value is 100 bytes (hash-max-listpack-value 64);
    // zset:long-member: 2 members, one of 100 bytes (zset-max-listpack-value 64);
    // hash:hashtable: 600 fields (hash-max-listpack-entries 512).
    let o = run(&[
        "lint",
        "--format",
        "json",
        &real("redis-7.4.1-alltypes.rdb"),
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let found = |key: &str| {
        let f = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "encoding.just-over-listpack" && f["key"] == key)
            .unwrap_or_else(|| panic!("no finding on {key}"));
        (
            f["value"].as_i64().unwrap(),
            f["threshold"].as_i64().unwrap(),
        )
    };
    assert_eq!(found("hash:long-value"), (100, 64));
    assert_eq!(found("zset:long-member"), (100, 64));
    assert_eq!(found("hash:hashtable"), (600, 512));
    let text = stdout(&run(&["lint", &real("redis-7.4.1-alltypes.rdb")]));
    let row = text
        .lines()
        .find(|l| l.contains("key hash:long-value"))
        .unwrap();
    assert!(row.contains("  100         64  "), "{row}");
}

#[test]
fn the_lint_says_what_findings_and_keys_count_and_how_many_are_listed() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("long.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..5 {
        let key = format!("svc:{i}:{}", "x".repeat(120));
        rdb.set_string(key.as_bytes(), b"v", None).unwrap();
    }
    rdb.finish().unwrap();
    let o = run(&["lint", "--max-findings", "2", path.to_str().unwrap()]);
    let text = stdout(&o);
    let summary_row = |rule: &str| {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("│ {rule} ")))
            .unwrap_or_else(|| panic!("{text}"));
        row.split_whitespace()
            .skip(3)
            .take(2)
            .map(|n| n.parse::<u64>().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(summary_row("key.too-long"), [5, 5]);
    // One pattern (svc:*:xxx…) holds the five keys without a TTL.
    assert_eq!(summary_row("ttl.missing"), [1, 5]);
    assert!(text.contains(
        "findings: the keys, patterns, minutes, slots or files breaking a rule;\nkeys: the keys those findings cover\n"
    ));
    assert!(
        text.contains(
            "Listed: the worst findings of each rule up to --max-findings (key.too-long 2 of 5); the summary counts them all\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("│ key.too-long  ").count(), 1 + 2, "{text}");
}

#[test]
fn times_in_tables_are_marked_utc() {
    let dir = TempDir::new().unwrap();
    let dump = small_dump(dir.path(), "d.rdb", Some("1700000000"));
    let dump = dump.to_str().unwrap();
    let report = stdout(&run(&["report", "--quiet", dump]));
    // The dump's ctime in the files table, the expiry in the top table, the minute.
    for time in [
        "  2023-11-14T22:13:20Z  ",
        "  2023-11-15T00:13:20Z │",
        "│ 2023-11-15T00:13Z  ",
    ] {
        assert!(report.contains(time), "no {time:?} in\n{report}");
    }
    let info = stdout(&run(&["info", dump]));
    assert!(
        info.contains("written (ctime)  2023-11-14T22:13:20Z\n"),
        "{info}"
    );
}
