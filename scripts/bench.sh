#!/usr/bin/env bash
# rdbscope throughput benchmark: rdbscope vs its peers on real Redis dumps.
#
# What it measures
#   Wall time (median of RUNS), MB/s (dump bytes / median s), keys/s (key count / median s)
#   and peak RSS (max resident set, GNU time %M, max over the runs) of, side by side:
#     cat DUMP >/dev/null                                  the floor (page cache -> /dev/null)
#     rdbscope keys DUMP --format csv >/dev/null           this repo, built here (cargo build --release)
#     rdb --format nil DUMP                                the `rdb` crate 0.4.0 CLI, parse-only pass
#     rdb -c memory DUMP -f /dev/null                      redis-rdb-tools (Python), ONCE, small dump only
#   The page cache is warm (each dump is cat'ed once before its runs); runs are interleaved
#   round-robin so drift hits every tool alike. "ratio vs rdb crate" = rdb crate's median
#   seconds / the tool's median seconds on the same dump (> 1 means faster than the rdb crate).
#
# The dumps (generated once by a real redis-server, cached under $BENCH_DIR/dumps)
#   mix         >= 1 GB, production-like: ~6.8M small namespaced keys (user:<id>:profile JSON
#               strings, user:<id> hashes of 5-10 fields, session:<uuid>, cache:product:<id>,
#               small sets/intsets/zsets/lists, integer counters), ~31% with a TTL, plus 15 big
#               collections (hashes/sets/zsets/lists of 100k-1M elements, 3 streams with
#               consumer groups). See scripts/bench-gen.lua for the exact recipe.
#   strings10m  10M small string keys only (DEBUG POPULATE), for keys/s.
#   biglist     one list of BIGLIST_ELEMENTS (32M) 20-80 B items (>= 1 GB on disk): peak RSS
#               while one value is bigger than any memory bound.
#   mix-small   the same recipe at ~1/12 scale (~100 MB) made readable by redis-rdb-tools:
#               zsets forced to skiplist encoding and streams without consumer groups (its
#               parsers crash on Redis 7 listpack zsets and on stream consumer groups). All tools
#               run on it too, so its ratios compare like with like.
#   The server runs with its own --dir on a free 127.0.0.1 port, rdbcompression yes (default),
#   no persistence but one SAVE, and is stopped at the end (and on any exit, by a trap).
#
# Peers (installed into $BENCH_DIR if missing, never system-wide except GNU time via apt)
#   rdb crate:        cargo install rdb --version 0.4.0 --root $BENCH_DIR/peers
#                     (CARGO_TARGET_DIR=$BENCH_DIR/peers-target, so the repo's target/ isn't locked)
#   redis-rdb-tools:  venv $BENCH_DIR/rdbtools-venv with `pip install rdbtools python-lzf`.
#                     The last PyPI release (0.1.15, 2020) rejects RDB version 10 (Redis 7.0+);
#                     if it fails, the table says so and the script also runs the PyPI fork
#                     `rdbtools-tikon93` (venv $BENCH_DIR/rdbtools-fork-venv), labelled as such.
#
# Run
#   scripts/bench.sh                                   # BENCH_DIR=/tmp/rdbscope-bench RUNS=3
#   BENCH_DIR=/data/bench RUNS=5 scripts/bench.sh
#   Knobs: MIX_UNITS (1800000 user units, ~3.8 keys each), SMALL_UNITS (150000),
#          STRINGS_KEYS (10000000), BIGLIST_ELEMENTS (32000000), BIG_DIV (1; divides the big collections' sizes),
#          REDIS_MAXMEM (12gb), SKIP_RDBTOOLS=1, REGEN=1 (regenerate the cached dumps),
#          GEN_ONLY=1 (generate the missing dumps and stop).
#   Smoke test: MIX_UNITS=20000 SMALL_UNITS=5000 STRINGS_KEYS=100000 BIGLIST_ELEMENTS=100000 \
#               BIG_DIV=100 RUNS=1 \
#               BENCH_DIR=/tmp/rdbscope-bench-smoke scripts/bench.sh
#   First run: ~5 min to generate the dumps, ~2 min to install peers, then the measurements.
#   The report goes to stdout and to $BENCH_DIR/results/bench-<timestamp>.md; progress to stderr.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
GEN_LUA=$SCRIPT_DIR/bench-gen.lua

BENCH_DIR=${BENCH_DIR:-/tmp/rdbscope-bench}
RUNS=${RUNS:-3}
MIX_UNITS=${MIX_UNITS:-1800000}
SMALL_UNITS=${SMALL_UNITS:-150000}
STRINGS_KEYS=${STRINGS_KEYS:-10000000}
BIGLIST_ELEMENTS=${BIGLIST_ELEMENTS:-32000000}
BIG_DIV=${BIG_DIV:-1} # divide the big collections' sizes (smoke tests)
REDIS_MAXMEM=${REDIS_MAXMEM:-12gb}
SKIP_RDBTOOLS=${SKIP_RDBTOOLS:-0}
REGEN=${REGEN:-0}
GEN_ONLY=${GEN_ONLY:-0}
GEN_VERSION=1 # bump when bench-gen.lua or the recipes below change, to invalidate cached dumps

DUMPS=$BENCH_DIR/dumps
RESULTS_DIR=$BENCH_DIR/results
mkdir -p "$BENCH_DIR" "$DUMPS" "$RESULTS_DIR" "$BENCH_DIR/tmp"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive integer" >&2; exit 2; }

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------------------------------------
# redis-server lifecycle: only ever the one we started, found by its PID, on 127.0.0.1.
REDIS_PID=""
REDIS_PORT=""

stop_redis() {
  [[ -n $REDIS_PID ]] || return 0
  if kill -0 "$REDIS_PID" 2>/dev/null; then
    kill -TERM "$REDIS_PID" 2>/dev/null || true # with --save '' this exits without saving
    local i
    for ((i = 0; i < 600; i++)); do # bounded: 60 s
      kill -0 "$REDIS_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$REDIS_PID" 2>/dev/null; then
      log "redis-server $REDIS_PID ignored SIGTERM for 60 s; killing it"
      kill -KILL "$REDIS_PID" 2>/dev/null || true
    fi
  fi
  wait "$REDIS_PID" 2>/dev/null || true
  REDIS_PID=""
  REDIS_PORT=""
}

on_exit() {
  local rc=$?
  stop_redis
  rm -rf "$BENCH_DIR/tmp"
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

redis_version() { redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# rcli ARGS...: redis-cli against our server, bounded (SAVE of a GB-sized set can take a while).
rcli() { timeout 1200 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }

# rok ARGS...: a command whose reply must be OK.
rok() {
  local out
  out=$(rcli "$@") || die "redis-cli $* failed"
  [[ $out == OK ]] || die "redis-cli $* answered: $out"
}

# gen KIND ARGS...: one bench-gen.lua call; its reply must be a count.
gen() {
  local out
  out=$(rcli --eval "$GEN_LUA" , "$@") || die "bench-gen.lua $* failed"
  [[ $out =~ ^[0-9]+$ ]] || die "bench-gen.lua $* answered: $out"
}

# start_redis WORKDIR [extra redis-server args...]
start_redis() {
  local dir=$1
  shift
  [[ -z $REDIS_PID ]] || die "a bench redis-server is already running"
  rm -rf "$dir"
  mkdir -p "$dir"
  REDIS_PORT=$(free_port)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --protected-mode yes \
    --dir "$dir" --dbfilename dump.rdb --save '' --appendonly no --rdbcompression yes \
    --enable-debug-command local --maxmemory "$REDIS_MAXMEM" --maxmemory-policy noeviction \
    --daemonize no --logfile "$dir/redis.log" "$@" &
  REDIS_PID=$!
  local i
  for ((i = 0; i < 200; i++)); do # bounded: 20 s
    kill -0 "$REDIS_PID" 2>/dev/null || die "redis-server exited at start; see $dir/redis.log"
    if [[ $(timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; then break; fi
    sleep 0.1
  done
  ((i < 200)) || die "redis-server did not answer on 127.0.0.1:$REDIS_PORT within 20 s"
  local pid
  pid=$(rcli info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')
  [[ $pid == "$REDIS_PID" ]] || die "127.0.0.1:$REDIS_PORT is answered by pid $pid, not ours ($REDIS_PID)"
  log "redis-server $(redis_version) pid $REDIS_PID on 127.0.0.1:$REDIS_PORT, dir $dir"
}

# save_dump NAME PARAMS T0: SAVE, record key counts, move the dump into the cache, stop the server.
save_dump() {
  local name=$1 params=$2 t0=$3 dir
  dir=$(rcli config get dir | sed -n 2p)
  local keys expires used
  keys=$(rcli dbsize)
  expires=$(rcli info keyspace | tr -d '\r' | sed -n 's/^db0:.*expires=\([0-9]*\).*/\1/p')
  used=$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory_human" {print $2}')
  log "$name: $keys keys ($expires with TTL), used_memory $used; SAVE..."
  rok save
  stop_redis
  mv -f "$dir/dump.rdb" "$DUMPS/$name.rdb"
  rm -rf "$dir"
  local secs=$(($(date +%s) - t0))
  {
    echo "params=$params"
    echo "keys=$keys"
    echo "expires=${expires:-0}"
    echo "used_memory=$used"
    echo "gen_seconds=$secs"
    echo "bytes=$(stat -c %s "$DUMPS/$name.rdb")"
    echo "redis=$(redis_version)"
  } >"$DUMPS/$name.meta"
  log "$name: $(stat -c %s "$DUMPS/$name.rdb") bytes, generated in ${secs}s"
}

meta() { sed -n "s/^$2=//p" "$DUMPS/$1.meta"; }

cached() { # cached NAME PARAMS: the dump exists and was made with these parameters
  if [[ $REGEN != 1 && -s $DUMPS/$1.rdb && -s $DUMPS/$1.meta && "$(meta "$1" params)" == "$2" ]]; then
    log "$1: cached ($DUMPS/$1.rdb)"
    return 0
  fi
  return 1
}

# gen_chunked KIND KEY COUNT: COUNT elements into one collection, 250k per bench-gen.lua call.
gen_chunked() {
  local kind=$1 key=$2 count=$3 done_=0 n
  while ((done_ < count)); do
    n=$((count - done_ < 250000 ? count - done_ : 250000))
    gen "$kind" "$key" "$done_" "$n"
    done_=$((done_ + n))
  done
}

# Big collections of the mix: KIND KEY ELEMENTS TTL(0/1). ELEMENTS is scaled for mix-small.
BIG_SPEC=(
  "hash catalog:product:attrs 1000000 0"
  "hash config:feature:rollout 300000 0"
  "hash geo:ip:country 100000 1"
  "set online:users 1000000 0"
  "intset blocked:user:ids 500000 0"
  "set campaign:42:recipients 200000 1"
  "zset leaderboard:global 1000000 0"
  "zset leaderboard:weekly:2024-47 300000 1"
  "zset ratelimit:api:window 100000 0"
  "list queue:emails 1000000 0"
  "list log:audit 500000 0"
  "list queue:webhooks 100000 1"
  "stream events:clicks 500000 0"
  "stream events:orders 200000 0"
  "stream events:signups 50000 0"
)

# gen_mix NAME UNITS BIG_DIVISOR COMPAT(0/1)
gen_mix() {
  local name=$1 units=$2 div=$3 compat=$4
  local params="v$GEN_VERSION units=$units div=$div compat=$compat"
  if cached "$name" "$params"; then return; fi
  local t0
  t0=$(date +%s)
  local extra=()
  ((compat == 0)) || extra=(--zset-max-listpack-entries 0)
  start_redis "$BENCH_DIR/redis-$name" "${extra[@]}"
  local first=0 chunk=50000 n
  log "$name: $units user units (~$((units * 38 / 10)) small keys)..."
  while ((first < units)); do
    n=$((units - first < chunk ? units - first : chunk))
    gen users "$first" "$n"
    first=$((first + n))
    if ((first % 500000 == 0)); then log "  $first / $units units"; fi
  done
  log "$name: big collections..."
  local spec kind key count ttl
  for spec in "${BIG_SPEC[@]}"; do
    read -r kind key count ttl <<<"$spec"
    gen_chunked "$kind" "$key" $((count / div))
    if ((ttl == 1)); then gen ttl "$key" $((7 * 86400 * 1000)); fi
    if [[ $kind == stream ]] && ((compat == 0)); then
      rok xgroup create "$key" workers 0
      rok xgroup create "$key" analytics '$'
      rcli xreadgroup group workers c1 count 2000 streams "$key" '>' >/dev/null
      rcli xreadgroup group workers c2 count 500 streams "$key" '>' >/dev/null
    fi
  done
  save_dump "$name" "$params" "$t0"
}

# gen_biglist: one list, pushed in chunks of 250k items by bench-gen.lua.
gen_biglist() {
  local name=biglist total=$BIGLIST_ELEMENTS
  local params="v$GEN_VERSION elements=$total"
  if cached "$name" "$params"; then return; fi
  local t0
  t0=$(date +%s)
  start_redis "$BENCH_DIR/redis-$name"
  log "$name: RPUSH $total items into queue:firehose..."
  gen_chunked list queue:firehose "$total"
  save_dump "$name" "$params" "$t0"
}

gen_strings() {
  local name=strings10m total=$STRINGS_KEYS
  local params="v$GEN_VERSION keys=$total"
  if cached "$name" "$params"; then return; fi
  local t0
  t0=$(date +%s)
  start_redis "$BENCH_DIR/redis-$name"
  # DEBUG POPULATE COUNT PREFIX SIZE makes PREFIX:<n> = "value:<n>" zero-padded to SIZE bytes
  # (SIZE 0 = unpadded). Three namespaces, 40/30/30 %.
  local a=$((total * 4 / 10)) b=$((total * 3 / 10))
  local c=$((total - a - b))
  log "$name: DEBUG POPULATE $a + $b + $c keys..."
  rok debug populate "$a" session 64
  rok debug populate "$b" cache:product 120
  rok debug populate "$c" user:name 0
  save_dump "$name" "$params" "$t0"
}

# ---------------------------------------------------------------------------------------------
# Tools

ensure_gnu_time() {
  [[ -x /usr/bin/time ]] && return
  log "installing GNU time (apt-get install -y time)"
  if ! apt-get install -y time >/dev/null 2>&1; then
    apt-get update >/dev/null
    apt-get install -y time >/dev/null
  fi
  [[ -x /usr/bin/time ]] || die "GNU time is not available at /usr/bin/time"
}

RDB_CRATE=$BENCH_DIR/peers/bin/rdb
ensure_rdb_crate() {
  if [[ -x $RDB_CRATE ]]; then return; fi
  log "installing the rdb crate 0.4.0 into $BENCH_DIR/peers (takes a minute or two)"
  CARGO_TARGET_DIR=$BENCH_DIR/peers-target \
    cargo install rdb --version 0.4.0 --locked --root "$BENCH_DIR/peers" >"$BENCH_DIR/peers-install.log" 2>&1 ||
    die "cargo install rdb failed; see $BENCH_DIR/peers-install.log"
}

# ensure_venv DIR PACKAGES...
ensure_venv() {
  local dir=$1
  shift
  if [[ -x $dir/bin/rdb ]]; then return; fi
  log "installing $* into the venv $dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install -q "$@" >"$dir.install.log" 2>&1 || die "pip install $* failed; see $dir.install.log"
}

RDBSCOPE=""
build_rdbscope() {
  log "cargo build --release in $REPO"
  (cd "$REPO" && cargo build --release) >&2 || die "cargo build --release failed"
  COMMIT=$(git -C "$REPO" rev-parse --short HEAD)
  if [[ -n $(git -C "$REPO" status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null) ]]; then
    COMMIT="$COMMIT+dirty"
  fi
  # Measure a private copy: the repo's target/ may be rebuilt while we run.
  mkdir -p "$BENCH_DIR/bin"
  RDBSCOPE=$BENCH_DIR/bin/rdbscope
  cp -f "$REPO/target/release/rdbscope" "$RDBSCOPE"
}

# ---------------------------------------------------------------------------------------------
# Measurement. Results: one TSV line per (tool, dump):
#   tool  dump  runs  median_s  bytes  keys  peak_rss_kb  status  note

RESULTS=$BENCH_DIR/tmp/results.tsv
NOTES=$BENCH_DIR/tmp/notes.md

# run_once OUT_TIMES OUT_RSS CMD...: one timed run; appends seconds and RSS KiB; returns CMD's rc.
run_once() {
  local tf=$BENCH_DIR/tmp/time.out ef=$BENCH_DIR/tmp/stderr.out t0 t1 rc=0
  t0=$(date +%s%N)
  /usr/bin/time -f '%e %M' -o "$tf" "${@:3}" >/dev/null 2>"$ef" || rc=$?
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000))" >>"$1" # microseconds
  tail -n 1 "$tf" | awk '{print $2}' >>"$2"
  if ((rc != 0)); then
    LAST_ERR=$(grep -v '^\s*$' "$ef" | tail -n 1 | cut -c1-160 || true)
  fi
  return "$rc"
}

# bench_dump DUMP_NAME: RUNS interleaved runs of cat, rdbscope, rdb crate.
bench_dump() {
  local name=$1 dump=$DUMPS/$1.rdb bytes keys
  bytes=$(stat -c %s "$dump")
  keys=$(meta "$name" keys)
  log "measuring on $name ($bytes bytes, $keys keys), $RUNS runs each"
  cat "$dump" >/dev/null # warm the page cache
  # Sanity (untimed): rdbscope must print one row per key (plus the CSV header).
  local rows
  rows=$("$RDBSCOPE" keys "$dump" --format csv 2>/dev/null | wc -l || true)
  if [[ $rows == $((keys + 1)) ]]; then
    echo "- check: rdbscope keys printed $((rows - 1)) rows for the $keys keys of \`$name\`" >>"$NOTES"
  else
    echo "- **check FAILED: rdbscope keys printed $((rows - 1)) rows for the $keys keys of \`$name\`**" >>"$NOTES"
    log "  WARNING: rdbscope printed $((rows - 1)) rows for $keys keys"
  fi
  local tools=(cat rdbscope report-t1 report-t2 rdbcrate) t r
  declare -A cmd status
  cmd[cat]="cat $dump"
  cmd[rdbscope]="$RDBSCOPE keys $dump --format csv"
  # --quiet: no tables on stdout; the files land in one directory, rewritten by every run.
  cmd[report-t1]="$RDBSCOPE report --quiet --threads 1 --out-dir $BENCH_DIR/tmp/report $dump"
  cmd[report-t2]="$RDBSCOPE report --quiet --threads 2 --out-dir $BENCH_DIR/tmp/report $dump"
  cmd[rdbcrate]="$RDB_CRATE --format nil $dump"
  for t in "${tools[@]}"; do
    : >"$BENCH_DIR/tmp/$t.times"
    : >"$BENCH_DIR/tmp/$t.rss"
    status[$t]=ok
  done
  for ((r = 1; r <= RUNS; r++)); do
    for t in "${tools[@]}"; do
      [[ ${status[$t]} == ok ]] || continue
      LAST_ERR=""
      # shellcheck disable=SC2086 # the commands are plain words (paths without spaces)
      if ! run_once "$BENCH_DIR/tmp/$t.times" "$BENCH_DIR/tmp/$t.rss" ${cmd[$t]}; then
        status[$t]="FAILED: $LAST_ERR"
        log "  $t failed on $name: $LAST_ERR"
      fi
    done
    log "  run $r/$RUNS done"
  done
  for t in "${tools[@]}"; do
    record "$t" "$name" "$bytes" "$keys" "${status[$t]}" ""
  done
}

# record TOOL DUMP BYTES KEYS STATUS NOTE: summarise $BENCH_DIR/tmp/TOOL.{times,rss} into RESULTS.
record() {
  local t=$1 f=$BENCH_DIR/tmp/$1
  local n median rss
  n=$(wc -l <"$f.times")
  median=$(sort -n "$f.times" | awk '{a[NR] = $1} END {if (NR % 2) m = a[(NR + 1) / 2]; else m = (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f", m / 1e6}')
  rss=$(sort -n "$f.rss" | tail -n 1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$2" "$n" "$median" "$3" "$4" "${rss:-0}" "$5" "$6" >>"$RESULTS"
}

# bench_rdbtools DUMP_NAME: redis-rdb-tools once (upstream, then the fork if upstream fails).
bench_rdbtools() {
  local name=$1 dump=$DUMPS/$1.rdb bytes keys
  bytes=$(stat -c %s "$dump")
  keys=$(meta "$name" keys)
  cat "$dump" >/dev/null
  local venv label t
  for venv in rdbtools rdbtools-fork; do
    if [[ $venv == rdbtools ]]; then
      ensure_venv "$BENCH_DIR/rdbtools-venv" rdbtools python-lzf
      t=rdbtools
    else
      ensure_venv "$BENCH_DIR/rdbtools-fork-venv" rdbtools-tikon93 python-lzf
      t=rdbtools-fork
    fi
    local dir=$BENCH_DIR/$venv-venv
    label=$("$dir/bin/pip" list 2>/dev/null | awk '$1 == "rdbtools" || $1 == "rdbtools-tikon93" {print $1 " " $2}')
    log "measuring redis-rdb-tools ($label) once on $name (slow: Python)"
    : >"$BENCH_DIR/tmp/$t.times"
    : >"$BENCH_DIR/tmp/$t.rss"
    LAST_ERR=""
    if run_once "$BENCH_DIR/tmp/$t.times" "$BENCH_DIR/tmp/$t.rss" timeout 3600 "$dir/bin/rdb" -c memory "$dump" -f /dev/null; then
      record "$t" "$name" "$bytes" "$keys" ok "$label"
      return
    fi
    log "  $label failed: $LAST_ERR"
    record "$t" "$name" "$bytes" "$keys" "FAILED: $LAST_ERR" "$label"
  done
}

# ---------------------------------------------------------------------------------------------
# Main

START=$(date +%s)
command -v redis-server >/dev/null || die "redis-server not found"
command -v redis-cli >/dev/null || die "redis-cli not found"
ensure_gnu_time
build_rdbscope
ensure_rdb_crate

GEN_T0=$(date +%s)
gen_mix mix "$MIX_UNITS" "$BIG_DIV" 0
gen_strings
gen_biglist
if [[ $SKIP_RDBTOOLS != 1 ]]; then gen_mix mix-small "$SMALL_UNITS" $((12 * BIG_DIV)) 1; fi
GEN_SECS=$(($(date +%s) - GEN_T0))
if [[ $GEN_ONLY == 1 ]]; then
  log "dumps ready in $DUMPS (generated in ${GEN_SECS} s)"
  exit 0
fi

: >"$RESULTS"
: >"$NOTES"
bench_dump mix
bench_dump strings10m
bench_dump biglist
if [[ $SKIP_RDBTOOLS != 1 ]]; then
  bench_dump mix-small
  bench_rdbtools mix-small
fi

REPORT=$RESULTS_DIR/bench-$(date +%Y%m%d-%H%M%S).md
{
  echo "## rdbscope benchmark"
  echo
  echo "- rdbscope commit: $COMMIT ($(cd "$REPO" && cargo pkgid 2>/dev/null | sed 's/.*[#@]//'))"
  echo "- nproc: $(nproc); CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo); RAM: $(free -g | awk '/^Mem:/ {print $2}') GiB"
  echo "- redis-server: $(redis_version); rustc: $(rustc --version | awk '{print $2}'); peers: rdb crate 0.4.0 (cargo install), redis-rdb-tools from PyPI"
  echo "- runs per tool: $RUNS (median shown; redis-rdb-tools ran once); page cache warm"
  for d in mix strings10m biglist mix-small; do
    [[ -s $DUMPS/$d.meta ]] || continue
    [[ $d != mix-small || $SKIP_RDBTOOLS != 1 ]] || continue
    echo "- dump \`$d\`: $(meta $d bytes) bytes ($(awk -v b="$(meta $d bytes)" 'BEGIN {printf "%.1f", b / 1048576}') MiB), $(meta $d keys) keys, $(meta $d expires) with TTL, generated in $(meta $d gen_seconds) s by redis $(meta $d redis) (used_memory $(meta $d used_memory))"
  done
  echo "- generation this run: ${GEN_SECS} s (0 = all cached)"
  cat "$NOTES"
  echo
  python3 - "$RESULTS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
names = {
    "cat": "cat (floor)",
    "rdbscope": "rdbscope keys --format csv",
    "report-t1": "rdbscope report --out-dir, 1 thread",
    "report-t2": "rdbscope report --out-dir, 2 threads",
    "rdbcrate": "rdb crate 0.4.0 --format nil",
    "rdbtools": "redis-rdb-tools -c memory",
    "rdbtools-fork": "redis-rdb-tools -c memory",
}
dump_note = {"mix-small": "mix-small (~1/12 scale, rdbtools-compatible)"}
crate = {r[1]: float(r[3]) for r in rows if r[0] == "rdbcrate" and r[7] == "ok"}
print("| tool | dump | median s | MB/s | keys/s | peak RSS MiB | ratio vs rdb crate |")
print("|---|---|---:|---:|---:|---:|---:|")
for tool, dump, n, med, size, keys, rss, status, note in rows:
    name = names.get(tool, tool)
    if note:
        name += f" ({note}" + (", 1 run" if status == "ok" else "") + ")"
    d = dump_note.get(dump, dump)
    if status != "ok":
        print(f"| {name} | {d} | {status} | | | | |")
        continue
    med = float(med)
    mbs = int(size) / 1e6 / med if med > 0 else float("inf")
    ks = int(keys) / med if med > 0 else float("inf")
    ratio = f"{crate[dump] / med:.2f}x" if dump in crate and med > 0 else "n/a"
    ks = f"{ks:,.0f}" if ks >= 100 else f"{ks:.2f}"  # one huge key: a fraction per second
    print(f"| {name} | {d} | {med:.3f} | {mbs:,.0f} | {ks} | {int(rss) / 1024:,.1f} | {ratio} |")
print()
print("MB/s = dump bytes / 10^6 / median s; keys/s = keys in the dump / median s;")
print("ratio vs rdb crate = rdb crate median s / tool median s on the same dump (> 1 = faster).")
print()
for tool in ("rdbscope", "report-t1", "report-t2"):
    ours = {r[1]: float(r[3]) for r in rows if r[0] == tool and r[7] == "ok"}
    for dump in ours:
        if dump in crate:
            print(f"{names[tool]} / rdb crate speed ratio on {dump}: {crate[dump] / ours[dump]:.2f}x "
                  f"({ours[dump]:.3f} s vs rdb crate {crate[dump]:.3f} s)")
PY
  echo
  echo "Total script time: $(($(date +%s) - START)) s"
} | tee "$REPORT"
log "report saved to $REPORT"
