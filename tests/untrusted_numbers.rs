//! Numbers a dump claims (expiries, lengths, sizes) never turn into wrong figures: they
//! saturate, or a count the data cannot hold is reported as damage at its offset
//! (docs/untrusted-numbers.md). One test per figure that once went wrong.

mod craft;

use craft::Rdb;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The dumps' `ctime`, Unix seconds.
const CTIME: i64 = 1_700_000_000;

fn rdbscope(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .arg("-q")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = if args[0] == "keys" {
        Value::Array(
            stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        )
    } else {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    (out.status.code().unwrap(), value)
}

fn write(path: &Path, keys: impl FnOnce(&mut Rdb<std::fs::File>)) {
    let mut rdb = Rdb::new(std::fs::File::create(path).unwrap()).unwrap();
    rdb.aux("redis-ver", "7.2.0")
        .unwrap()
        .aux("ctime", &CTIME.to_string())
        .unwrap()
        .select_db(0)
        .unwrap();
    keys(&mut rdb);
    rdb.finish().unwrap();
}

fn findings<'v>(lint: &'v Value, rule: &str) -> Vec<&'v Value> {
    lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

#[test]
fn ttl_keeps_its_sign_at_both_ends_of_the_expiry_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("extremes.rdb");
    write(&path, |r| {
        r.set_string(b"min", b"v", Some(i64::MIN)).unwrap();
        r.set_string(b"max", b"v", Some(i64::MAX)).unwrap();
    });
    let dump = path.to_str().unwrap();
    let (code, rows) = rdbscope(&["keys", "--format", "jsonl", dump]);
    assert_eq!(code, 0);
    let ttl: Vec<_> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["ttl_s"].as_i64().unwrap()))
        .collect();
    // i64::MIN ms is long past: the most negative TTL; i64::MAX ms is far ahead.
    assert_eq!(
        ttl,
        [
            ("min", -9_223_372_036_854_776),
            ("max", 9_223_370_336_854_775)
        ]
    );

    let (_, lint) = rdbscope(&["lint", "--format", "json", dump]);
    let expired: Vec<_> = findings(&lint, "ttl.already-expired")
        .iter()
        .map(|f| (f["key"].as_str().unwrap(), f["value"].as_i64().unwrap()))
        .collect();
    assert_eq!(expired, [("min", -9_223_372_036_854_776)]);

    // The TTL table agrees with the lint: one key expired, one beyond 30 days.
    let (_, report) = rdbscope(&["report", "--format", "json", dump]);
    let buckets: Vec<_> = report["ttl"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["keys"].as_u64() != Some(0))
        .map(|b| (b["bucket"].as_str().unwrap(), b["keys"].as_u64().unwrap()))
        .collect();
    assert_eq!(buckets, [("expired", 1), ("gt_30d", 1)]);
}

#[test]
fn a_stream_length_its_nodes_cannot_hold_is_damage_not_a_wrapped_total() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("streams.rdb");
    write(&path, |r| {
        r.set_string(b"s", b"abc", None).unwrap();
        r.set_stream(b"honest", 1).unwrap();
        r.set_stream(b"liar:1", u64::MAX).unwrap();
        r.set_stream(b"liar:2", u64::MAX).unwrap();
    });
    let (code, report) = rdbscope(&["report", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(code, 2, "a damaged dump fails the run");
    // The honest stream's one entry (a string holds no elements); the liars are not counted.
    assert_eq!(report["totals"]["elements"], 1);
    assert_eq!(report["totals"]["keys"], 2);
    assert_eq!(report["partial"], true);
    let error = report["files"][0]["error"].as_str().unwrap();
    assert!(
        error.contains(
            "18446744073709551615 entries claimed, its nodes hold 10 listpack entries \
             at offset 177 (reading stream length)"
        ),
        "{error}"
    );
}

#[test]
fn strings_as_hash_saves_as_much_on_lzf_strings_as_on_raw_ones() {
    let dir = tempfile::tempdir().unwrap();
    let value = [b'a'; 25];
    // "a", then a back reference of 24 bytes at distance 1: 25 × "a" in 5 bytes.
    let lzf = [0x00, b'a', 0xE0, 24 - 2 - 7, 0x00];
    let mut saving = Vec::new();
    for compressed in [false, true] {
        let path = dir.path().join(format!("strings-{compressed}.rdb"));
        write(&path, |r| {
            for id in 0..100 {
                for field in ["a", "b", "c"] {
                    let key = format!("u:{id}:{field}");
                    if compressed {
                        r.set_lzf_string(key.as_bytes(), &lzf, value.len()).unwrap();
                    } else {
                        r.set_string(key.as_bytes(), &value, None).unwrap();
                    }
                }
            }
        });
        let (_, lint) = rdbscope(&["lint", "--format", "json", path.to_str().unwrap()]);
        let found = findings(&lint, "type.strings-as-hash");
        assert_eq!(found.len(), 1, "{lint}");
        assert_eq!(found[0]["pattern"], "u:*");
        assert_eq!(found[0]["keys"], 300);
        saving.push(found[0]["saving_bytes"].as_u64().unwrap());
    }
    assert_eq!(saving, [8000, 8000]);
}
