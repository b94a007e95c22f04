//! The examples that end each command's `--help`, then how sizes (BYTES) are written.

/// A command's `--help` ending: example command lines, then how sizes are written.
macro_rules! examples {
    ($($line:literal),* $(,)?) => {
        concat!(
            "Examples:\n",
            $("  ", $line, "\n",)*
            "\nSizes (BYTES) take a unit: 1500, 1.5k or 1.5KB (1,500), 512KiB (524,288), \
             10GB (10,000,000,000), 2GiB."
        )
    };
}

pub(super) const REPORT_EXAMPLES: &str = examples!(
    "rdbscope report dump.rdb",
    "rdbscope report shard1.rdb shard2.rdb --out-dir out/      # merged; summary.json and CSVs in out/",
    "rdbscope report dump.rdb --out-dir out/ --keys-format parquet   # keys.parquet instead of keys.csv",
    "rdbscope report dump.rdb --format json > summary.json",
    "rdbscope report dump.rdb --db 0 --not-match 'cache:*' --no-expired",
    "rdbscope report dump.rdb --under cache:page         # that prefix alone, % of it",
    "rdbscope report dump.rdb --bigkey-string-bytes 1MiB --disable ttl.missing"
);
pub(super) const TOP_EXAMPLES: &str = examples!(
    "rdbscope top dump.rdb -n 20",
    "rdbscope top dump.rdb --by elements --type hash --type zset",
    "rdbscope top dump.rdb --by idle -n 100 --format csv     # coldest keys (LRU dumps)",
    "rdbscope top dump.rdb --by freq                         # hottest keys (LFU dumps)",
    "rdbscope top dump.rdb --min-memory 10MB --match 'session:*'"
);
pub(super) const PREFIXES_EXAMPLES: &str = examples!(
    "rdbscope prefixes dump.rdb",
    "rdbscope prefixes dump.rdb --delimiter / --depth 2",
    "rdbscope prefixes dump.rdb --under cache --depth 2   # cache:page, cache:page:home …",
    "rdbscope prefixes dump.rdb --patterns               # user:1:profile … as user:*:profile",
    "rdbscope prefixes dump.rdb --format csv > prefixes.csv"
);
pub(super) const KEYS_EXAMPLES: &str = examples!(
    "rdbscope keys dump.rdb > keys.csv",
    "rdbscope keys dump.rdb --format jsonl --min-memory 1MiB",
    "rdbscope keys dump.rdb --compat rdbtools            # redis-rdb-tools' memory CSV",
    "rdbscope keys shard*.rdb --format parquet -o keys.parquet  # column file: the dump",
    "rdbscope keys dump.rdb --format arrow | python3 read.py   # Arrow IPC stream, same columns",
    "zcat dump.rdb.gz | rdbscope keys - --match 'user:*'"
);
pub(super) const INFO_EXAMPLES: &str = examples!(
    "rdbscope info dump.rdb",
    "rdbscope info shard*.rdb --format json              # an array, one object per dump"
);
pub(super) const LINT_EXAMPLES: &str = examples!(
    "rdbscope lint dump.rdb",
    "rdbscope lint dump.rdb --fail-on warn               # CI: exit 1 on warnings too",
    "rdbscope lint dump.rdb --profile strict --key-max-bytes 64",
    "rdbscope lint dump.rdb --format json --max-findings 1000 > findings.json"
);

pub(super) const MERGE_EXAMPLES: &str = examples!(
    "rdbscope merge shard1/ shard2/ shard3/ --out-dir fleet/   # each from rdbscope report --out-dir",
    "rdbscope merge runs/*/summary.json --format json > fleet.json",
    "rdbscope merge fleet-eu/ fleet-us/ --out-dir world/       # merged runs merge again"
);

pub(super) const DIFF_EXAMPLES: &str = examples!(
    "rdbscope diff yesterday/summary.json today.rdb",
    "rdbscope diff old.rdb new.rdb --min-key-bytes 256KiB  # big keys compared key by key",
    "rdbscope diff --old a1.rdb a2.rdb --new b1.rdb b2.rdb   # one dump per cluster shard",
    "rdbscope diff runs/mon/ runs/tue/ --format json > diff.json",
    "rdbscope diff last/summary.json dump.rdb --fail-on-growth 10 --min-change 1MiB"
);
