#!/usr/bin/env bash
# Coverage-guided fuzzing of rdbscope (cargo-fuzz, libFuzzer): the targets in fuzz/ run one
# after the other, each for SECONDS (default 60), one process each, with overflow checks
# and debug assertions on. No sanitizer: the code is safe Rust but for the memory map,
# and AddressSanitizer made the analysis target five times slower.
#
#   scripts/fuzz.sh [SECONDS]          TARGETS="decoders" scripts/fuzz.sh 1200
#
# Seeds: the dumps under testdata/ up to 64 KiB, and every input kept in testdata/fuzz/.
# The corpus grows in fuzz/corpus/TARGET (not in git). Every input that crashes, hangs or
# runs out of memory is copied to testdata/fuzz/TARGET/, where `cargo test --test
# fuzz_replay` replays it on the stable toolchain: fix the bug, commit the input.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly toolchain; without nightly
# the stable one is used with RUSTC_BOOTSTRAP=1.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
targets=${TARGETS:-analysis decoders commands}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "scripts/fuzz.sh: cargo-fuzz is missing: cargo install cargo-fuzz" >&2
    exit 2
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi

status=0
for target in $targets; do
    corpus=fuzz/corpus/$target
    artifacts=fuzz/artifacts/$target
    found=testdata/fuzz/$target
    mkdir -p "$corpus" "$artifacts" "$found" fuzz/logs
    find testdata -name '*.rdb' -size -65k -exec cp -n {} "$corpus/" \;
    find "$found" -type f -exec cp -n {} "$corpus/" \;
    echo "== $target: ${seconds}s"
    # One worker process (-fork=1) that goes on after a finding, so every target gets
    # its whole time; findings are counted at the end.
    "${fuzz[@]}" run --sanitizer none --debug-assertions "$target" "$corpus" -- \
        -max_total_time="$seconds" -dict=fuzz/rdb.dict -max_len=65536 -timeout=30 \
        -rss_limit_mb=2048 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -artifact_prefix="$artifacts/" > "fuzz/logs/$target.log" 2>&1
    grep -aE '^#[0-9]+' "fuzz/logs/$target.log" | tail -1
    for crash in "$artifacts"/*; do
        [ -f "$crash" ] || continue
        cp -n "$crash" "$found/"
        echo "finding: $found/$(basename "$crash")"
        status=1
    done
done
exit $status
