//! Flags every command shares: byte sizes with units, `--not-match`, `--min-memory`,
//! `--no-expired`; `top --by idle|freq`; each command's `--help` ends with examples.

mod common;
mod craft;

use craft::Rdb;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

fn rdbscope(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// ctime 1700000000; `keep:small` (a few bytes), `keep:big`, `skip:big`, `old:big`
/// (expired a second before ctime) and `new:big` (expiring a second after), the `big` ones
/// holding 2,000 bytes.
fn dump(dir: &Path) -> PathBuf {
    let path = dir.join("filters.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    let big = vec![b'v'; 2000];
    rdb.set_string(b"keep:small", b"v", None).unwrap();
    rdb.set_string(b"keep:big", &big, None).unwrap();
    rdb.set_string(b"skip:big", &big, None).unwrap();
    rdb.set_string(b"old:big", &big, Some(1_699_999_999_000))
        .unwrap();
    rdb.set_string(b"new:big", &big, Some(1_700_000_001_000))
        .unwrap();
    rdb.finish().unwrap();
    path
}

fn csv_column(text: &str, column: &str) -> Vec<String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == column)
        .unwrap();
    r.records()
        .map(|row| row.unwrap()[at].to_string())
        .collect()
}

/// The keys each command reports under `filters`.
fn keys_seen(dump: &Path, filters: &[&str]) -> Vec<BTreeSet<String>> {
    let dump = dump.to_str().unwrap();
    let with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(filters);
        all.extend(["--quiet", dump]);
        rdbscope(&all)
    };
    let keys = csv_column(&with(&["keys"]), "key");
    let top = csv_column(&with(&["top", "--format", "csv"]), "key");
    let prefixes: Vec<String> = {
        let text = with(&["prefixes", "--format", "csv", "--depth", "1"]);
        let names = csv_column(&text, "prefix");
        let counts = csv_column(&text, "keys");
        names
            .iter()
            .zip(counts)
            .map(|(n, c)| format!("{n}:{c}"))
            .collect()
    };
    let report: Value = serde_json::from_str(&with(&["report", "--format", "json"])).unwrap();
    let lint: Value =
        serde_json::from_str(&with(&["lint", "--format", "json", "--key-max-bytes", "1"])).unwrap();
    let linted: Vec<String> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "key.too-long")
        .map(|f| f["key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        report["totals"]["keys"].as_u64().unwrap() as usize,
        keys.len(),
        "{filters:?}"
    );
    [keys, top, linted]
        .into_iter()
        .map(|v| v.into_iter().collect())
        .chain([prefixes.into_iter().collect()])
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn every_command_applies_not_match_min_memory_and_no_expired() {
    let dir = TempDir::new().unwrap();
    let dump = dump(dir.path());
    let cases: &[(&[&str], &[&str], &[&str])] = &[
        (
            &[],
            &["keep:small", "keep:big", "skip:big", "old:big", "new:big"],
            &["keep:2", "skip:1", "old:1", "new:1"],
        ),
        (
            &["--not-match", "skip:*", "--not-match", "old:*"],
            &["keep:small", "keep:big", "new:big"],
            &["keep:2", "new:1"],
        ),
        (
            &["--min-memory", "1k"],
            &["keep:big", "skip:big", "old:big", "new:big"],
            &["keep:1", "skip:1", "old:1", "new:1"],
        ),
        (
            &["--no-expired"],
            &["keep:small", "keep:big", "skip:big", "new:big"],
            &["keep:2", "skip:1", "new:1"],
        ),
        (
            &[
                "--not-match",
                "skip:*",
                "--min-memory",
                "1.5KiB",
                "--no-expired",
            ],
            &["keep:big", "new:big"],
            &["keep:1", "new:1"],
        ),
    ];
    for (filters, keys, prefixes) in cases {
        let seen = keys_seen(&dump, filters);
        for (command, got) in ["keys", "top", "lint"].iter().zip(&seen) {
            assert_eq!(*got, set(keys), "{command} {filters:?}");
        }
        assert_eq!(seen[3], set(prefixes), "prefixes {filters:?}");
    }
}

#[test]
fn byte_sizes_take_units() {
    let dir = TempDir::new().unwrap();
    let dump = dump(dir.path());
    let dump = dump.to_str().unwrap();
    let threshold = |size: &str| {
        let text = rdbscope(&[
            "lint",
            "--format",
            "json",
            "--quiet",
            "--bigkey-string-bytes",
            size,
            dump,
        ]);
        let lint: Value = serde_json::from_str(&text).unwrap();
        let big: Vec<_> = lint["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "bigkey.string")
            .map(|f| f["threshold"].as_u64().unwrap())
            .collect();
        (big.first().copied(), big.len())
    };
    assert_eq!(threshold("1k"), (Some(1000), 4));
    assert_eq!(threshold("1kb"), (Some(1000), 4));
    assert_eq!(threshold("1KiB"), (Some(1024), 4));
    assert_eq!(threshold("1.5K"), (Some(1500), 4));
    assert_eq!(threshold("1999"), (Some(1999), 4));
    assert_eq!(threshold("2000 b"), (None, 0));
    assert_eq!(threshold("0.001MB"), (Some(1000), 4));
    assert_eq!(threshold("0.001MiB"), (Some(1049), 4));
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(["lint", "--bigkey-string-bytes", "10XB", dump])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"10XB\": unknown unit"), "{err}");
}

#[test]
fn top_ranks_by_idle_time_and_lfu_counter() {
    for (dump, by, column) in [
        ("redis-7.4.1-alltypes-lru.rdb", "idle", "idle_s"),
        ("redis-7.4.1-alltypes-lfu.rdb", "freq", "lfu_freq"),
    ] {
        let dump = common::testdata().join("real").join(dump);
        let dump = dump.to_str().unwrap();
        let keys = rdbscope(&["keys", "--quiet", dump]);
        let values: Vec<u64> = csv_column(&keys, column)
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        let top = rdbscope(&[
            "top", "--quiet", "--by", by, "-n", "1000", "--format", "csv", dump,
        ]);
        let ranked: Vec<u64> = csv_column(&top, "value")
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        let mut expected = values.clone();
        expected.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(ranked, expected, "{by}");
        assert!(ranked[0] > 0, "{by}");
        let table = rdbscope(&["top", "--quiet", "--by", by, "-n", "3", dump]);
        let title = if by == "idle" {
            "Coldest keys (longest LRU idle time)"
        } else {
            "Hottest keys (highest LFU counter)"
        };
        assert!(table.starts_with(title), "{table}");
    }
    // A dump without LRU idle times says so.
    let plain = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let table = rdbscope(&["top", "--quiet", "--by", "idle", plain.to_str().unwrap()]);
    assert!(
        table.contains("no key carries an LRU idle time: a dump holds them when the server's maxmemory-policy is allkeys-lru or volatile-lru"),
        "{table}"
    );
}

#[test]
fn every_help_ends_with_examples_and_report_groups_its_options() {
    for command in ["report", "top", "prefixes", "keys", "info", "lint"] {
        let help = rdbscope(&[command, "--help"]);
        assert!(
            help.contains(&format!("Examples:\n  rdbscope {command} ")),
            "{command}:\n{help}"
        );
        assert!(help.contains("Sizes (BYTES) take a unit"), "{command}");
    }
    // Doc comments become help text: a link written for rustdoc reads as noise there.
    for command in [
        "report", "top", "prefixes", "keys", "info", "lint", "diff", "merge",
    ] {
        let help = rdbscope(&[command, "--help"]);
        assert!(
            !help.contains("[`"),
            "a rustdoc link in {command}'s help:\n{help}"
        );
    }
    let help = rdbscope(&["report", "-h"]);
    let options = help
        .split("\n\n")
        .find(|s| s.starts_with("Options:"))
        .unwrap();
    assert!(!options.contains("--key-max-bytes"), "{options}");
    for heading in [
        "\nFilters:\n",
        "\nServer model:\n",
        "\nPrefixes and patterns:\n",
        "\nLint rules and thresholds (docs/lint.md):\n",
    ] {
        assert!(help.contains(heading), "no {heading:?} in\n{help}");
    }
}
