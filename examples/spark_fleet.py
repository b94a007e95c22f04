#!/usr/bin/env python3
"""A fleet's dumps analysed by Spark: one spark-submit, one rdbscope run per dump.

    spark-submit examples/spark_fleet.py --out OUT DUMP... [-- REPORT FLAGS...]
    spark-submit examples/spark_fleet.py --out OUT --dumps-from dumps.txt

Each DUMP is a path every executor can read (local disk, NFS) or a URI that
pyarrow.fs opens (s3://, gs://, hdfs://), streamed into rdbscope's standard input
(`-`). Every dump is its own Spark task, which runs

    rdbscope report DUMP --out-dir TMP -q --keys-format arrow [REPORT FLAGS]

once: the keys come out of rdbscope's standard output as Arrow record batches, handed
to Spark as they arrive (mapInArrow: never a whole dump in one value), and the dump's
summary.json lands in TMP. The job writes

    OUT/keys/file=DUMP/part-*.parquet   every key, one Parquet dataset partitioned by dump
                                        (the columns of rdbscope's keys.parquet)
    OUT/summaries/NNNNN.json            each dump's summary.json (NNNNN: its place in the list)
    OUT/fleet/                          `rdbscope merge` of the summaries: the fleet's
                                        summary.json, report.html and CSV tables

OUT is a local or shared directory, or a URI pyarrow.fs writes (the summaries) that
Spark also writes (the keys). REPORT FLAGS go to every run alike (`--top 100`,
`--delimiter /`, ...), as `rdbscope merge` requires. rdbscope must be on the executors'
PATH, or named by --rdbscope (ship it with `spark-submit --files rdbscope` and give
`--rdbscope ./rdbscope`). A dump rdbscope cannot read whole (exit 2 with a summary:
damage) keeps its keys before the damage and its summary says so; any other failure
fails the task, which Spark retries.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import pyarrow as pa
import pyarrow.fs as pafs
from pyspark.sql import SparkSession

# rdbscope's per-key columns (README "Parquet and Arrow"), `file` as plain text: the
# partition column. Checked against the stream each run reads.
KEYS_SCHEMA = pa.schema(
    [
        ("file", pa.string()),
        ("db", pa.int64()),
        ("key", pa.string()),
        ("key_bytes", pa.binary()),
        ("type", pa.string()),
        ("encoding", pa.string()),
        ("elements", pa.int64()),
        ("serialized_bytes", pa.int64()),
        ("memory_bytes", pa.int64()),
        ("largest_element_bytes", pa.int64()),
        ("expiry_ms", pa.int64()),
        ("ttl_s", pa.int64()),
        ("idle_s", pa.int64()),
        ("lfu_freq", pa.int32()),
        ("slot", pa.int32()),
    ]
)
SPARK_SCHEMA = (
    "file string, db bigint, key string, key_bytes binary, type string, encoding string, "
    "elements bigint, serialized_bytes bigint, memory_bytes bigint, "
    "largest_element_bytes bigint, expiry_ms bigint, ttl_s bigint, idle_s bigint, "
    "lfu_freq int, slot int"
)
SCHEMA_VERSION = b"2"
COPY_BYTES = 1 << 20


def is_uri(dump):
    return "://" in dump


def filesystem(uri_or_path):
    """The pyarrow filesystem and path of a local path or a URI."""
    if is_uri(uri_or_path):
        return pafs.FileSystem.from_uri(uri_or_path)
    return pafs.LocalFileSystem(), os.path.abspath(uri_or_path)


def feed(source, sink):
    """Copies `source` (a pyarrow input stream) into rdbscope's stdin, then closes it."""
    try:
        while chunk := source.read(COPY_BYTES):
            sink.write(chunk)
    except BrokenPipeError:
        pass  # rdbscope stopped reading (a damaged dump): its exit code says why
    finally:
        source.close()
        try:
            sink.close()
        except BrokenPipeError:
            pass


def checked(schema):
    """The stream's schema is the one this job declares (a newer rdbscope may differ)."""
    version = (schema.metadata or {}).get(b"rdbscope.keys_schema")
    got = [(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type) for f in schema]
    want = [(f.name, f.type) for f in KEYS_SCHEMA]
    if version != SCHEMA_VERSION or got != want:
        raise RuntimeError(f"rdbscope's keys schema (version {version}) is not this job's: {schema}")


def run_rdbscope(index, dump, rdbscope, flags, summaries):
    """One dump: rdbscope's Arrow batches as they come, `file` set to DUMP; its
    summary.json written to SUMMARIES/NNNNN.json once the run ends."""
    work = tempfile.mkdtemp(prefix="rdbscope-")
    stdin_source = None
    try:
        if is_uri(dump):
            fs, path = filesystem(dump)
            stdin_source, dump_arg = fs.open_input_stream(path), "-"
        else:
            dump_arg = dump
        out_dir = os.path.join(work, "run")
        command = [rdbscope, "report", dump_arg, "--out-dir", out_dir, "-q",
                   "--keys-format", "arrow", *flags]
        with open(os.path.join(work, "stderr"), "w+b") as stderr:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE if stdin_source else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
            feeder = None
            if stdin_source:
                feeder = threading.Thread(target=feed, args=(stdin_source, process.stdin))
                feeder.start()
            try:
                reader = pa.ipc.open_stream(process.stdout)
                checked(reader.schema)
                for batch in reader:
                    name = pa.array([dump] * batch.num_rows, pa.string())
                    yield pa.RecordBatch.from_arrays([name, *batch.columns[1:]], schema=KEYS_SCHEMA)
            except pa.ArrowInvalid:
                pass  # no stream: rdbscope failed before writing one (its exit code says why)
            finally:
                process.stdout.close()
                code = process.wait()
                if feeder:
                    feeder.join()
            stderr.seek(0)
            message = stderr.read().decode(errors="replace")
        summary_path = os.path.join(out_dir, "summary.json")
        if code not in (0, 2) or not os.path.exists(summary_path):
            raise RuntimeError(f"rdbscope {dump}: exit {code}: {message}")
        if code == 2:
            print(f"rdbscope {dump}: not read whole: {message}", file=sys.stderr)
        with open(summary_path, "rb") as f:
            summary = json.load(f)
        if dump_arg == "-":
            name_stdin(summary, dump)
        fs, base = filesystem(summaries)
        with fs.open_output_stream(f"{base}/{index:05d}.json") as out:
            out.write(json.dumps(summary).encode())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def name_stdin(summary, dump):
    """A dump read from standard input is named `-` by rdbscope: named DUMP instead."""
    for entry in summary["files"]:
        if entry["path"] == "-":
            entry["path"] = dump
    for entry in summary["state"]["files"]:
        if entry["name"] == "-":
            entry["name"] = dump


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dumps", nargs="*", metavar="DUMP")
    parser.add_argument("--dumps-from", metavar="FILE", help="one DUMP a line")
    parser.add_argument("--out", required=True, metavar="OUT")
    parser.add_argument("--rdbscope", default="rdbscope", metavar="PATH")
    args, flags = parser.parse_known_args()
    flags = [f for f in flags if f != "--"]
    dumps = list(args.dumps)
    if args.dumps_from:
        with open(args.dumps_from) as f:
            dumps += [line.strip() for line in f if line.strip()]
    if not dumps:
        parser.error("no dumps")
    rdbscope, summaries = args.rdbscope, f"{args.out.rstrip('/')}/summaries"
    fs, base = filesystem(summaries)
    fs.delete_dir_contents(base, missing_dir_ok=True)
    fs.create_dir(base)

    def analyse(batches):
        for dumps_batch in batches:
            for index, dump in zip(*dumps_batch.to_pydict().values()):
                yield from run_rdbscope(index, dump, rdbscope, flags, summaries)

    spark = SparkSession.builder.appName("rdbscope fleet").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    # One partition per dump: each dump is one task, one rdbscope process.
    listed = spark.sparkContext.parallelize(list(enumerate(dumps)), len(dumps))
    keys = spark.createDataFrame(listed, "index int, dump string").mapInArrow(analyse, SPARK_SCHEMA)
    keys.write.mode("overwrite").partitionBy("file").parquet(f"{args.out.rstrip('/')}/keys")

    # The fleet's report: the summaries merged on the driver, in the order given.
    local = tempfile.mkdtemp(prefix="rdbscope-summaries-")
    try:
        runs = []
        for index in range(len(dumps)):
            run = os.path.join(local, f"{index:05d}.json")
            with fs.open_input_stream(f"{base}/{index:05d}.json") as f, open(run, "wb") as out:
                out.write(f.read())
            runs.append(run)
        fleet = f"{args.out.rstrip('/')}/fleet"
        if is_uri(fleet):
            merged = os.path.join(local, "fleet")
            subprocess.run([rdbscope, "merge", *runs, "--out-dir", merged, "-q"], check=True)
            ofs, obase = filesystem(fleet)
            pafs.copy_files(merged, obase, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=ofs)
        else:
            subprocess.run([rdbscope, "merge", *runs, "--out-dir", fleet, "-q"], check=True)
    finally:
        shutil.rmtree(local, ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
