//! `keys --format parquet` and `keys.parquet` in `report --out-dir`, read back by an engine:
//! DuckDB (the PyPI package, in the venv `scripts/test.sh` sets up; `RDBSCOPE_PYTHON`).
//! A GROUP BY over two shards' Parquet equals summary.json's per-type totals, every row and
//! column equals keys.csv's, hostile keys keep their exact bytes, row groups hold 1Mi rows.

mod common;
mod craft;

use common::read_csv;
use craft::{late_damage_dump, Rdb};
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

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 test paths")
}

/// Runs `sql` in DuckDB; one JSON object per result row, column names as keys.
fn duckdb(sql: &str) -> Vec<HashMap<String, Value>> {
    const SCRIPT: &str = r#"
import duckdb, json, sys
rel = duckdb.sql(sys.argv[1])
for row in rel.fetchall():
    print(json.dumps(dict(zip(rel.columns, row))))
"#;
    let out = Command::new(common::python())
        .args(["-c", SCRIPT, sql])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "duckdb: {sql}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// DuckDB's own rendering of `sql`'s result, as a user sees it.
fn duckdb_table(sql: &str) -> String {
    let out = Command::new(common::python())
        .args([
            "-c",
            "import duckdb, sys; print(duckdb.sql(sys.argv[1]))",
            sql,
        ])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not a count"))
}

/// Every row of a Parquet file, in order, each column as the text a CSV cell would hold
/// (NULL as empty) and `key_bytes` in hex.
fn parquet_rows(path: &Path) -> Vec<HashMap<String, String>> {
    duckdb(&format!(
        "SELECT * REPLACE (hex(key_bytes) AS key_bytes) FROM read_parquet('{}')",
        s(path)
    ))
    .into_iter()
    .map(|row| {
        row.into_iter()
            .map(|(column, v)| {
                let text = match v {
                    Value::Null => String::new(),
                    Value::String(t) => t,
                    other => other.to_string(),
                };
                (column, text)
            })
            .collect()
    })
    .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// The bytes a CSV key cell stands for: the spreadsheet guard `'` dropped, `\\` and
/// `\xNN` decoded.
fn unescape(text: &str) -> Vec<u8> {
    let text = match text.strip_prefix('\'') {
        Some(rest) if rest.starts_with(['=', '+', '-', '@']) => rest,
        _ => text,
    };
    let (mut out, bytes, mut i) = (Vec::new(), text.as_bytes(), 0);
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'\\')) => {
                out.push(b'\\');
                i += 2;
            }
            (b'\\', Some(b'x')) => {
                out.push(u8::from_str_radix(&text[i + 2..i + 4], 16).unwrap());
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[test]
fn group_by_type_over_two_shards_equals_summary_json() {
    let shards = [
        fixture("real/redis-7.4.1-alltypes.rdb"),
        fixture("modern/valkey-9.1.2-alltypes.rdb"),
    ];
    let dir = TempDir::new().unwrap();
    let out = rdbscope(&[
        "report",
        "-q",
        "--out-dir",
        s(dir.path()),
        "--keys-format",
        "both",
        s(&shards[0]),
        s(&shards[1]),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let summary: Value =
        serde_json::from_slice(&fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let parquet = dir.path().join("keys.parquet");
    let query = format!(
        "SELECT type, count(*) AS keys, sum(memory_bytes) AS memory_bytes \
         FROM read_parquet('{}') GROUP BY type ORDER BY type",
        s(&parquet)
    );
    println!("{query}\n{}", duckdb_table(&query));
    let by_type: HashMap<String, (u64, u64)> = duckdb(&query)
        .into_iter()
        .map(|r| {
            let ty = r["type"].as_str().unwrap().to_string();
            (ty, (u(&r["keys"]), u(&r["memory_bytes"])))
        })
        .collect();
    let expected: HashMap<String, (u64, u64)> = summary["by_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let ty = t["type"].as_str().unwrap().to_string();
            (ty, (u(&t["keys"]), u(&t["memory_bytes"])))
        })
        .collect();
    assert_eq!(by_type.len(), 6, "{by_type:?}");
    assert_eq!(by_type, expected);
    let total_keys: u64 = by_type.values().map(|(keys, _)| keys).sum();
    assert_eq!(total_keys, u(&summary["totals"]["keys"]));

    // Per dump: the `file` column names the dumps as summary.json's files[].path does.
    let per_file = duckdb(&format!(
        "SELECT file, count(*) AS keys FROM read_parquet('{}') GROUP BY file",
        s(&parquet)
    ));
    assert_eq!(per_file.len(), 2);
    for f in summary["files"].as_array().unwrap() {
        let row = per_file
            .iter()
            .find(|r| r["file"] == f["path"])
            .unwrap_or_else(|| panic!("no rows for {}", f["path"]));
        assert_eq!(u(&row["keys"]), u(&f["totals"]["keys"]));
    }

    // Row for row and column for column, keys.parquet is keys.csv plus the key's bytes.
    let csv = read_csv(&dir.path().join("keys.csv"));
    let rows = parquet_rows(&parquet);
    assert_eq!(rows.len(), csv.len());
    for (p, c) in rows.iter().zip(&csv) {
        let mut p = p.clone();
        let key_bytes = p.remove("key_bytes").unwrap();
        assert_eq!(&p, c);
        assert_eq!(key_bytes, hex(&unescape(&c["key"])), "{}", c["key"]);
    }
}

#[test]
fn hostile_keys_keep_their_text_and_their_exact_bytes() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("hostile.rdb");
    let keys: [(&[u8], &str); 6] = [
        (b"=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        (b"a\nb,\"c\"", "a\\x0ab,\"c\""),
        (b"bin:\xff\xfe\x00k", "bin:\\xff\\xfe\\x00k"),
        ("rtl\u{202e}txt".as_bytes(), "rtl\\xe2\\x80\\xaetxt"),
        (b"back\\slash", "back\\\\slash"),
        (b"", ""),
    ];
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    for (key, _) in &keys {
        rdb.set_string(key, b"v", None).unwrap();
    }
    rdb.finish().unwrap();
    let parquet = dir.path().join("keys.parquet");
    let out = rdbscope(&["keys", s(&dump), "--format", "parquet", "-o", s(&parquet)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let rows = duckdb(&format!(
        "SELECT key, hex(key_bytes) AS bytes, octet_length(key_bytes) AS len \
         FROM read_parquet('{}')",
        s(&parquet)
    ));
    assert_eq!(rows.len(), keys.len());
    for (row, (bytes, text)) in rows.iter().zip(&keys) {
        assert_eq!(row["key"], *text);
        assert_eq!(row["bytes"], hex(bytes));
        assert_eq!(u(&row["len"]), bytes.len() as u64);
    }
    // The same text as keys.csv's key cells.
    let csv_path = dir.path().join("keys.csv");
    let out = rdbscope(&["keys", s(&dump), "-o", s(&csv_path)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let csv_keys: Vec<String> = read_csv(&csv_path)
        .into_iter()
        .map(|r| r["key"].clone())
        .collect();
    let texts: Vec<&str> = keys.iter().map(|(_, t)| *t).collect();
    assert_eq!(csv_keys, texts);
}

#[test]
fn row_groups_hold_a_mebirow_and_pages_are_zstd() {
    const KEYS: usize = (1 << 20) + 1000;
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("many.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    for i in 0..KEYS {
        rdb.set_string(format!("k:{i}").as_bytes(), b"v", None)
            .unwrap();
    }
    rdb.finish().unwrap();
    let parquet = dir.path().join("many.parquet");
    let out = rdbscope(&[
        "keys",
        "-q",
        s(&dump),
        "--format",
        "parquet",
        "-o",
        s(&parquet),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let groups = duckdb(&format!(
        "SELECT row_group_id, any_value(row_group_num_rows) AS rows, \
         string_agg(DISTINCT compression, ',') AS codecs \
         FROM parquet_metadata('{}') GROUP BY row_group_id ORDER BY row_group_id",
        s(&parquet)
    ));
    let rows: Vec<u64> = groups.iter().map(|g| u(&g["rows"])).collect();
    assert_eq!(rows, [1 << 20, 1000]);
    assert!(groups.iter().all(|g| g["codecs"] == "ZSTD"), "{groups:?}");
    // Rows stay in file order across the row groups.
    let last = duckdb(&format!(
        "SELECT key FROM read_parquet('{}') OFFSET {} LIMIT 2",
        s(&parquet),
        (1 << 20) - 1
    ));
    assert_eq!(last[0]["key"], format!("k:{}", (1 << 20) - 1));
    assert_eq!(last[1]["key"], format!("k:{}", 1 << 20));
}

#[test]
fn parquet_goes_to_a_file_only() {
    let dump = fixture("real/redis-7.4.1-alltypes.rdb");
    let out = rdbscope(&["keys", s(&dump), "--format", "parquet"]);
    assert_eq!(code(&out), 2);
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("--format parquet needs -o FILE"),
        "{}",
        stderr(&out)
    );
    let out = rdbscope(&[
        "keys",
        s(&dump),
        "--format",
        "parquet",
        "--compat",
        "rdbtools",
        "-o",
        "x.parquet",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--compat rdbtools writes CSV"),
        "{}",
        stderr(&out)
    );
    assert!(!Path::new("x.parquet").exists());
    let out = rdbscope(&["report", s(&dump), "--keys-format", "parquet"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--out-dir"), "{}", stderr(&out));
}

#[test]
fn output_files_are_replaced_whole() {
    let dir = TempDir::new().unwrap();
    let dump = fixture("real/redis-7.4.1-alltypes.rdb");
    let target = dir.path().join("keys.parquet");
    fs::write(&target, b"an older file").unwrap();
    let out = rdbscope(&["keys", s(&dump), "--format", "parquet", "-o", s(&target)]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(&fs::read(&target).unwrap()[..4], b"PAR1");
    let names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["keys.parquet"]);

    // CSV through -o is what stdout gets.
    let csv = dir.path().join("keys.csv");
    let out = rdbscope(&["keys", s(&dump), "-o", s(&csv)]);
    assert_eq!(code(&out), 0);
    assert!(out.stdout.is_empty());
    assert_eq!(
        fs::read(&csv).unwrap(),
        rdbscope(&["keys", s(&dump)]).stdout
    );

    // A directory in the way: an error naming it, nothing left behind.
    let blocked = dir.path().join("blocked");
    fs::create_dir(&blocked).unwrap();
    let out = rdbscope(&["keys", s(&dump), "--format", "parquet", "-o", s(&blocked)]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("blocked: is a directory"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("blocked.partial").exists());

    // Every file of report --out-dir too: the old one replaced, no partial file left.
    let out_dir = dir.path().join("report");
    fs::create_dir(&out_dir).unwrap();
    fs::write(out_dir.join("summary.json"), b"an older file").unwrap();
    let report = ["report", "-q", s(&dump), "--out-dir", s(&out_dir)];
    assert_eq!(code(&rdbscope(&report)), 0);
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["totals"]["keys"], 44);
    let partial = fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".partial"));
    assert_eq!(partial, None);
    fs::remove_file(out_dir.join("top.csv")).unwrap();
    fs::create_dir(out_dir.join("top.csv")).unwrap();
    let out = rdbscope(&report);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("top.csv: is a directory"),
        "{}",
        stderr(&out)
    );
    assert!(!out_dir.join("top.csv.partial").exists());
}

/// Ctrl-C while a file is written: exit code 130 and no partial file left. The run reads
/// its dump from a pipe the test holds open, so it is still writing when interrupted.
#[test]
fn an_interrupted_run_leaves_no_partial_file() {
    let dir = TempDir::new().unwrap();
    let target = dir.path().join("keys.csv");
    let partial = dir.path().join("keys.csv.partial");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(["keys", "-", "-o", s(&target)])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !partial.exists() {
        assert!(std::time::Instant::now() < deadline, "no partial file");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!partial.exists() && !target.exists());
}

#[test]
fn a_damaged_dump_keeps_the_rows_before_the_damage() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("late.rdb");
    late_damage_dump(&dump, 40_000, 30_000).unwrap();
    let parquet = dir.path().join("late.parquet");
    let out = rdbscope(&[
        "keys",
        "-q",
        s(&dump),
        "--format",
        "parquet",
        "-o",
        s(&parquet),
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("last good key: \"key:29999\""),
        "{}",
        stderr(&out)
    );
    let rows = duckdb(&format!(
        "SELECT count(*) AS n, max(key) FILTER (WHERE key = 'key:29999') AS last \
         FROM read_parquet('{}')",
        s(&parquet)
    ));
    assert_eq!(u(&rows[0]["n"]), 30_000);
    assert_eq!(rows[0]["last"], "key:29999");
}

#[test]
fn report_writes_the_keys_files_asked_for() {
    let dump = fixture("real/redis-7.4.1-alltypes.rdb");
    for (format, files) in [
        ("csv", &["keys.csv"][..]),
        ("parquet", &["keys.parquet"][..]),
        ("both", &["keys.csv", "keys.parquet"][..]),
        ("none", &[][..]),
    ] {
        let dir = TempDir::new().unwrap();
        let out = rdbscope(&[
            "report",
            s(&dump),
            "--out-dir",
            s(dir.path()),
            "--keys-format",
            format,
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        for name in ["keys.csv", "keys.parquet"] {
            assert_eq!(
                dir.path().join(name).exists(),
                files.contains(&name),
                "--keys-format {format}: {name}"
            );
            assert!(!dir.path().join(format!("{name}.partial")).exists());
        }
        let listed = stderr(&out);
        for name in files {
            assert!(listed.contains(&format!("{name}, ")), "{listed}");
        }
        assert!(dir.path().join("summary.json").exists());
    }
}

#[test]
fn text_rows_of_several_dumps_name_their_dump() {
    let a = fixture("real/redis-7.4.1-alltypes.rdb");
    let b = fixture("real/redis-7.0.15-alltypes.rdb");
    let one = String::from_utf8(rdbscope(&["keys", s(&a)]).stdout).unwrap();
    let two = String::from_utf8(rdbscope(&["keys", s(&a), s(&b)]).stdout).unwrap();
    let (header, first) = two.split_once('\n').unwrap();
    assert_eq!(header, format!("file,{}", one.lines().next().unwrap()));
    // The first dump's rows are its own rows with its name first.
    let a_rows: Vec<&str> = one.lines().skip(1).collect();
    let prefixed: Vec<String> = a_rows.iter().map(|r| format!("{},{r}", s(&a))).collect();
    let two_rows: Vec<&str> = first.lines().collect();
    assert_eq!(two_rows[..a_rows.len()], prefixed);
    assert!(two_rows[a_rows.len()..]
        .iter()
        .all(|r| r.starts_with(&format!("{},", s(&b)))));

    let jsonl =
        String::from_utf8(rdbscope(&["keys", "--format", "jsonl", s(&a), s(&b)]).stdout).unwrap();
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(jsonl.starts_with("{\"file\":"));
    assert_eq!(rows[0]["file"], s(&a));
    assert_eq!(rows.last().unwrap()["file"], s(&b));
    assert_eq!(rows.len(), two_rows.len());
}
