//! The engines a fleet's owners run read rdbscope's keys natively and run rdbscope:
//! ClickHouse (chDB, in-process) and Spark (pyspark in local mode, on Debian's Java 17),
//! both from the venv `scripts/test.sh` sets up (`RDBSCOPE_PYTHON`).
//!
//! Over keys.parquet of two dumps, `GROUP BY type` with no cast equals summary.json's
//! `by_type` (keys, memory, elements) in both, each reading every number as a plain
//! integer; `examples/spark_fleet.py` over the same dumps (one read from a path, one
//! streamed through standard input) writes keys with the same per-type figures and a
//! merged summary equal to `report A B`'s. The Arrow stream (`keys --format arrow`,
//! `report --keys-format arrow`) is keys.parquet's table, read by pyarrow.

mod common;
mod craft;

use craft::Rdb;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;
use tempfile::TempDir;

const RDBSCOPE: &str = env!("CARGO_BIN_EXE_rdbscope");

fn rdbscope(args: &[&str]) -> Output {
    Command::new(RDBSCOPE)
        .args(args)
        .output()
        .expect("rdbscope runs")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 test paths")
}

fn dumps() -> [PathBuf; 2] {
    [
        common::testdata().join("real/redis-7.4.1-alltypes.rdb"),
        common::testdata().join("modern/valkey-9.1.2-alltypes.rdb"),
    ]
}

/// Runs a Python script with `args`; its stdout, echoed with its stderr on failure.
fn run_python(script: &str, args: &[&str]) -> String {
    let out = Command::new(common::python())
        .args(["-c", script])
        .args(args)
        // Spark's Python workers run the venv's Python too.
        .env("PYSPARK_PYTHON", common::python())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// summary.json's `by_type` as `type -> (keys, memory_bytes, elements)`.
fn by_type(summary: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    summary["by_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let n = |f: &str| t[f].as_u64().unwrap();
            let key = t["type"].as_str().unwrap().to_string();
            (key, (n("keys"), n("memory_bytes"), n("elements")))
        })
        .collect()
}

/// The rows printed as JSON objects `{type, keys, memory_bytes, elements}` (other lines
/// left out), every figure an integer (not a decimal, not a float), as
/// `type -> (keys, memory, elements)`.
fn grouped(lines: &str) -> BTreeMap<String, (u64, u64, u64)> {
    lines
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|row| row.get("type").is_some())
        .map(|row| {
            let n = |f: &str| {
                (row[f].as_u64()).unwrap_or_else(|| panic!("{f} is not an integer in {row}"))
            };
            let key = row["type"].as_str().unwrap().to_string();
            (key, (n("keys"), n("memory_bytes"), n("elements")))
        })
        .collect()
}

const CHDB: &str = r#"
import chdb, json, sys
path = sys.argv[1]
print(chdb.query(f"DESCRIBE file('{path}', Parquet)", "TSV").bytes().decode())
rows = chdb.query(
    f"SELECT type, count() AS keys, sum(memory_bytes) AS memory_bytes, sum(elements) AS elements "
    f"FROM file('{path}', Parquet) GROUP BY type ORDER BY type", "JSONEachRow")
print(rows.bytes().decode())
"#;

const SPARK: &str = r#"
import json, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").appName("rdbscope keys")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
keys = spark.read.parquet(sys.argv[1])
print(keys.schema.simpleString())
keys.createOrReplaceTempView("keys")
rows = spark.sql("SELECT type, count(*) AS keys, sum(memory_bytes) AS memory_bytes, "
                 "sum(elements) AS elements FROM keys GROUP BY type ORDER BY type")
for row in rows.collect():
    print(json.dumps(row.asDict()))
spark.stop()
"#;

#[test]
fn chdb_and_spark_group_by_type_equal_summary_json() {
    let dir = TempDir::new().unwrap();
    let [a, b] = dumps();
    let out = rdbscope(&[
        "report",
        "-q",
        "--out-dir",
        s(dir.path()),
        "--keys-format",
        "parquet",
        s(&a),
        s(&b),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value =
        serde_json::from_slice(&fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let expected = by_type(&summary);
    assert_eq!(expected.len(), 6, "{expected:?}");
    let parquet = dir.path().join("keys.parquet");

    let chdb = run_python(CHDB, &[s(&parquet)]);
    println!("chDB:\n{chdb}");
    let described: Vec<(&str, &str)> = chdb
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let mut cells = l.split('\t');
            (cells.next().unwrap(), cells.next().unwrap())
        })
        .collect();
    assert_eq!(
        described,
        [
            ("file", "String"),
            ("db", "Int64"),
            ("key", "String"),
            ("key_bytes", "String"),
            ("type", "String"),
            ("encoding", "String"),
            ("elements", "Nullable(Int64)"),
            ("serialized_bytes", "Int64"),
            ("memory_bytes", "Int64"),
            ("largest_element_bytes", "Int64"),
            ("expiry_ms", "Nullable(Int64)"),
            ("ttl_s", "Nullable(Int64)"),
            ("idle_s", "Nullable(Int64)"),
            ("lfu_freq", "Nullable(Int32)"),
            ("slot", "Int32"),
        ]
    );
    assert_eq!(grouped(&chdb), expected, "chDB");

    let spark = run_python(SPARK, &[s(&parquet)]);
    println!("Spark:\n{spark}");
    assert_eq!(
        spark.lines().next().unwrap(),
        "struct<file:string,db:bigint,key:string,key_bytes:binary,type:string,\
         encoding:string,elements:bigint,serialized_bytes:bigint,memory_bytes:bigint,\
         largest_element_bytes:bigint,expiry_ms:bigint,ttl_s:bigint,idle_s:bigint,\
         lfu_freq:int,slot:int>"
    );
    assert_eq!(grouped(&spark), expected, "Spark");
}

/// The keys the Spark job wrote, per type, read back by DuckDB over the partitioned
/// dataset; and the keys per `file` partition.
const DATASET: &str = r#"
import duckdb, json, sys
keys = f"read_parquet('{sys.argv[1]}/*/*.parquet', hive_partitioning = true)"
for sql in [f"SELECT type, count(*) AS keys, sum(memory_bytes) AS memory_bytes, sum(elements) AS elements FROM {keys} GROUP BY type",
            f"SELECT file, count(*) AS keys FROM {keys} GROUP BY file ORDER BY file"]:
    rel = duckdb.sql(sql)
    for row in rel.fetchall():
        print(json.dumps(dict(zip(rel.columns, row))))
"#;

#[test]
fn the_spark_job_over_two_dumps_gives_report_a_b() {
    let dir = TempDir::new().unwrap();
    let [a, b] = dumps();
    // The second dump as a URI: streamed into rdbscope's standard input.
    let b_uri = format!("file://{}", s(&b));
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spark_fleet.py");
    let out_dir = dir.path().join("out");
    let started = Instant::now();
    let spark = Command::new(common::python().with_file_name("spark-submit"))
        .args(["--master", "local[2]", "--conf", "spark.ui.enabled=false"])
        .arg(&job)
        .args(["--out", s(&out_dir), "--rdbscope", RDBSCOPE, s(&a), &b_uri])
        .env("PYSPARK_PYTHON", common::python())
        .output()
        .expect("spark-submit runs");
    let spark_time = started.elapsed();
    assert!(
        spark.status.success(),
        "{}",
        String::from_utf8_lossy(&spark.stderr)
    );

    let report_dir = dir.path().join("report");
    let started = Instant::now();
    let out = rdbscope(&["report", "-q", "--out-dir", s(&report_dir), s(&a), s(&b)]);
    let report_time = started.elapsed();
    assert_eq!(out.status.code(), Some(0));
    println!(
        "spark-submit examples/spark_fleet.py: {spark_time:.1?}; report A B: {report_time:.1?}"
    );
    let read = |p: PathBuf| -> Value { serde_json::from_slice(&fs::read(p).unwrap()).unwrap() };
    let report = read(report_dir.join("summary.json"));
    let fleet = read(out_dir.join("fleet/summary.json"));

    // The job names the dump read through standard input by its URI.
    let paths: Vec<&str> = (fleet["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [s(&a), &b_uri]);
    let fleet: Value = serde_json::from_str(&fleet.to_string().replace(&b_uri, s(&b))).unwrap();
    for section in ["totals", "by_type", "by_encoding", "ttl", "top_keys"] {
        assert_eq!(fleet[section], report[section], "{section}");
    }

    let dataset = run_python(DATASET, &[s(&out_dir.join("keys"))]);
    println!("{dataset}");
    assert_eq!(grouped(&dataset), by_type(&report));
    let per_file: Vec<(String, u64)> = dataset
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|row| row.get("file").is_some())
        .map(|row| {
            (
                row["file"].as_str().unwrap().to_string(),
                row["keys"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [(s(&a), 0), (&b_uri, 1)]
        .iter()
        .map(|(name, i)| {
            let keys = report["files"][*i]["totals"]["keys"].as_u64().unwrap();
            (name.to_string(), keys)
        })
        .collect();
    assert_eq!(per_file, expected);
}

/// `keys --format arrow` (stdout and -o) and `report --keys-format arrow` (stdout, beside
/// the run's files) give pyarrow the table keys.parquet holds: same schema, its version,
/// same rows.
const ARROW: &str = r#"
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
parquet = pq.read_table(sys.argv[1])
version = pq.read_metadata(sys.argv[1]).metadata[b"rdbscope.keys_schema"].decode()
for stream in sys.argv[2:]:
    with open(stream, "rb") as f:
        reader = pa.ipc.open_stream(f)
        batches = list(reader)
        table = pa.Table.from_batches(batches, reader.schema)
    assert table.schema.metadata[b"rdbscope.keys_schema"] == b"2", table.schema.metadata
    assert table.schema.equals(parquet.schema), (stream, table.schema, parquet.schema)
    assert table.to_pylist() == parquet.to_pylist(), stream
    print(json.dumps({"stream": stream, "rows": table.num_rows, "batches": len(batches)}))
print(json.dumps({"version": version, "rows": parquet.num_rows}))
"#;

#[test]
fn the_arrow_stream_is_the_parquet_table() {
    let dir = TempDir::new().unwrap();
    let [a, b] = dumps();
    let parquet = dir.path().join("keys.parquet");
    let keys = |extra: &[&str]| {
        let mut args = vec!["keys", "-q", s(&a), s(&b)];
        args.extend_from_slice(extra);
        let out = rdbscope(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert!(keys(&["--format", "parquet", "-o", s(&parquet)]).is_empty());
    let stdout = dir.path().join("stdout.arrow");
    fs::write(&stdout, keys(&["--format", "arrow"])).unwrap();
    let file = dir.path().join("file.arrow");
    assert!(keys(&["--format", "arrow", "-o", s(&file)]).is_empty());
    let run = dir.path().join("run");
    let out = rdbscope(&[
        "report",
        "-q",
        s(&a),
        s(&b),
        "--out-dir",
        s(&run),
        "--keys-format",
        "arrow",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.path().join("report.arrow");
    fs::write(&report, &out.stdout).unwrap();
    // The run's files but the keys, which went to stdout in place of the tables.
    let mut written: Vec<String> = fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "findings.csv",
            "patterns.csv",
            "prefixes.csv",
            "report.html",
            "slots.csv",
            "summary.json",
            "top.csv"
        ]
    );

    let read = run_python(ARROW, &[s(&parquet), s(&stdout), s(&file), s(&report)]);
    println!("{read}");
    let last: Value = serde_json::from_str(read.lines().last().unwrap()).unwrap();
    assert_eq!(last["version"], "2");
    let summary: Value =
        serde_json::from_slice(&fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(last["rows"], summary["totals"]["keys"]);

    let out = rdbscope(&[
        "report",
        s(&a),
        "--out-dir",
        s(&run),
        "--keys-format",
        "arrow",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not go with --format json"));
}

/// A count a dump records above i64::MAX (an LRU idle time) is written as i64::MAX in
/// the signed columns; the CSV keeps it whole.
#[test]
fn a_count_above_i64_max_is_clamped_in_the_columns() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("idle.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.idle(u64::MAX).unwrap();
    rdb.set_string(b"cold", b"v", None).unwrap();
    rdb.idle(7).unwrap();
    rdb.set_string(b"warm", b"v", None).unwrap();
    rdb.finish().unwrap();
    let csv = String::from_utf8(rdbscope(&["keys", s(&dump)]).stdout).unwrap();
    assert!(csv.contains(",18446744073709551615,"), "{csv}");
    let arrow = dir.path().join("idle.arrow");
    let out = rdbscope(&["keys", s(&dump), "--format", "arrow", "-o", s(&arrow)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let idle = run_python(
        "import sys, pyarrow as pa; print(pa.ipc.open_stream(open(sys.argv[1], 'rb')).read_all().column('idle_s').to_pylist())",
        &[s(&arrow)],
    );
    assert_eq!(idle.trim(), format!("[{}, 7]", i64::MAX));
}
