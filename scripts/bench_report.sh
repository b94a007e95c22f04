#!/usr/bin/env bash
# Throughput and peak memory of `rdbscope report --out-dir` (every aggregate, summary.json
# and the CSVs, keys.csv included, from one pass) with 1 and 2 worker threads.
#
#   scripts/bench_report.sh DUMP [DUMP...]      # RUNS=3 by default; median of the runs
#
# Per dump and thread count it prints the median wall time, MB/s (dump bytes / median s),
# keys/s (keys in summary.json / median s), the median CPU seconds (user + system: on a
# shared machine, MB per CPU second is the steadier figure) and the peak RSS over the runs
# (GNU time %M).
# When the `rdb` crate's CLI is found (RDB_BIN, default /tmp/rdbscope-bench/peers/bin/rdb,
# which scripts/bench.sh installs), its parse-only pass (`rdb --format nil DUMP`) is timed
# the same way and the last column is its median seconds / ours (> 1: faster than it).
# The page cache is warmed first (cat DUMP); the binary is built with `cargo build --release`.
# Output goes to a temporary directory removed at exit. The CRC64 is verified, as by default.
set -euo pipefail

RUNS=${RUNS:-3}
THREADS=${THREADS:-"1 2"}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/rdbscope
TIME=/usr/bin/time
RDB_BIN=${RDB_BIN:-/tmp/rdbscope-bench/peers/bin/rdb}

if [ $# -eq 0 ]; then
    echo "usage: $0 DUMP [DUMP...]   (e.g. /tmp/rdbscope-bench/dumps/mix.rdb)" >&2
    exit 2
fi
if [ ! -x "$TIME" ]; then
    echo "$0: needs GNU time at $TIME (apt-get install time)" >&2
    exit 2
fi

(cd "$REPO" && cargo build --release --quiet)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

printf '%-20s %7s %9s %9s %8s %11s %7s %9s %12s %10s\n' \
    dump threads bytes_MB median_s MB/s keys/s cpu_s MB/cpu_s peak_RSS_MiB vs_rdb_crate
for dump in "$@"; do
    bytes=$(stat -c %s "$dump")
    cat "$dump" >/dev/null
    rdb_secs=
    if [ -x "$RDB_BIN" ]; then
        : >"$OUT/rdb_times"
        for _ in $(seq "$RUNS"); do
            "$TIME" -f '%e' -o "$OUT/time1" "$RDB_BIN" --format nil "$dump" >/dev/null
            cat "$OUT/time1" >>"$OUT/rdb_times"
        done
        rdb_secs=$(median <"$OUT/rdb_times")
    fi
    for t in $THREADS; do
        : >"$OUT/times"
        for _ in $(seq "$RUNS"); do
            rm -rf "$OUT/report"
            # %e wall seconds, %M peak RSS in KiB, %U + %S CPU seconds.
            "$TIME" -f '%e %M %U %S' -o "$OUT/time1" \
                "$BIN" report --quiet --threads "$t" --out-dir "$OUT/report" "$dump" >/dev/null
            cat "$OUT/time1" >>"$OUT/times"
        done
        keys=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["keys"])' \
            "$OUT/report/summary.json")
        secs=$(awk '{print $1}' "$OUT/times" | median)
        rss=$(awk '{print $2}' "$OUT/times" | sort -n | tail -1)
        cpu=$(awk '{print $3 + $4}' "$OUT/times" | median)
        awk -v d="$(basename "$dump")" -v t="$t" -v b="$bytes" -v s="$secs" -v k="$keys" \
            -v c="$cpu" -v r="$rss" -v x="$rdb_secs" \
            'BEGIN {printf "%-20s %7d %9.0f %9.2f %8.0f %11.0f %7.2f %9.0f %12.1f %10s\n",
                d, t, b/1e6, s, b/1e6/s, k/s, c, b/1e6/c, r/1024, x == "" ? "-" : sprintf("%.2fx", x/s)}'
    done
done
if [ -x "$RDB_BIN" ]; then
    echo "vs_rdb_crate: median seconds of \`$RDB_BIN --format nil DUMP\` / ours"
fi
