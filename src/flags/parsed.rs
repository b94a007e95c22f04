//! The flags as clap parses them: one struct per command, the groups of flags several
//! commands share, their `--help` texts. Values are checked as far as clap can
//! ([`super::values`]); [`super::config`] checks the rest and builds the commands' `Config`.

use super::examples::{
    DIFF_EXAMPLES, INFO_EXAMPLES, KEYS_EXAMPLES, LINT_EXAMPLES, MERGE_EXAMPLES, PREFIXES_EXAMPLES,
    REPORT_EXAMPLES, TOP_EXAMPLES,
};
use super::values::{
    non_empty, parse_allocator, parse_byte_size, parse_factor, parse_growth, parse_percent,
    parse_quantum, parse_rule, parse_timeout, parse_type,
};
use crate::aggregates::groups::SortBy;
use crate::aggregates::prefixes::MAX_DEPTH;
use crate::aggregates::top::Metric;
use crate::commands::diff::DiffFormat;
use crate::commands::info::InfoFormat;
use crate::commands::lint::LintFormat;
use crate::commands::report::KeysFiles;
use crate::commands::ListFormat;
use crate::lint::{Rule, Severity};
use crate::model::server::AllocatorSetting;
use crate::pass::progress::ProgressMode;
use crate::rdb::RedisType;
use crate::runs::compare::{DIFF_MIN_KEY_BYTES, DIFF_ROWS};
use crate::runs::written::ReportFormat;
use clap::{Args, Parser, Subcommand};
use std::num::NonZeroUsize;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "rdbscope",
    version,
    about = "Offline analyzer for Redis and Valkey RDB dumps"
)]
pub struct Flags {
    #[command(subcommand)]
    pub command: CommandFlags,
}

#[derive(Subcommand, Debug)]
pub enum CommandFlags {
    /// Everything in one pass: totals, TTLs, prefixes, patterns, top keys, distributions,
    /// cluster slots. Tables on stdout; `--out-dir` also writes summary.json and CSVs.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// The biggest keys by memory, elements or bytes in the file; the coldest or hottest
    /// by LRU idle time or LFU counter.
    #[command(after_help = TOP_EXAMPLES)]
    Top(TopArgs),
    /// Keys, memory and bytes rolled up by key prefix (or by pattern with --patterns).
    #[command(after_help = PREFIXES_EXAMPLES)]
    Prefixes(PrefixesArgs),
    /// One row per key, streamed in file order.
    #[command(after_help = KEYS_EXAMPLES)]
    Keys(KeysArgs),
    /// Header, aux fields, databases, functions and checksum verdict of each dump.
    #[command(after_help = INFO_EXAMPLES)]
    Info(InfoArgs),
    /// Check keys against Redis key-design rules (docs/lint.md). Exit 1 when a finding is
    /// at or above --fail-on.
    #[command(after_help = LINT_EXAMPLES)]
    Lint(LintCommandArgs),
    /// What changed between two runs: totals, prefixes and patterns, big keys, TTL classes,
    /// lint findings, encoding crossings. OLD and NEW are each a dump, a `report --out-dir`
    /// directory or its summary.json. Exit 1 when an alert (--fail-on-growth,
    /// --fail-on-prefix-growth) fires.
    #[command(after_help = DIFF_EXAMPLES)]
    Diff(DiffArgs),
    /// Runs done apart (one `report --out-dir` per shard) merged into the report one run
    /// over all their dumps gives: RUN is a report directory or its summary.json. The runs
    /// must share their settings (prefix, top-N, lint and filter flags, server model).
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
#[command(next_help_heading = "Filters")]
pub struct FilterArgs {
    /// Only keys in this db (repeatable).
    #[arg(long = "db", value_name = "N")]
    pub dbs: Vec<u64>,
    /// Only keys of this type: string, list, set, zset, hash, stream, array, module (repeatable).
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
    pub types: Vec<RedisType>,
    /// Only keys matching this Redis glob (`user:*`, `h[ae]llo`).
    #[arg(long = "match", value_name = "GLOB")]
    pub glob: Option<String>,
    /// Only keys matching this regular expression (on the key bytes).
    #[arg(long, value_name = "RE")]
    pub regex: Option<String>,
    /// Skip keys matching this Redis glob (repeatable).
    #[arg(long = "not-match", value_name = "GLOB")]
    pub not_match: Vec<String>,
    /// Only keys whose estimated memory is at least this (`1MiB`, `512k`).
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_size)]
    pub min_memory: Option<u64>,
    /// Skip keys already expired when the dump was written (its `ctime`; for a dump
    /// without one, when the run started).
    #[arg(long)]
    pub no_expired: bool,
}

/// Options every analysing command takes: filters and the server model.
#[derive(Args, Debug)]
#[command(next_help_heading = "Server model")]
pub struct CommonArgs {
    /// Model this server version instead of the dump's `redis-ver` (e.g. 7.2.4).
    #[arg(long, value_name = "X.Y.Z")]
    pub redis_version: Option<String>,
    /// The server's redis.conf: its encoding thresholds (`hash-max-listpack-entries`, ...,
    /// `list-compress-depth`) replace the defaults.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// One threshold, as `name=value` (repeatable; applied after --config).
    #[arg(long, value_name = "NAME=VALUE")]
    pub config_set: Vec<String>,
    /// The server's allocator: `jemalloc` (Redis's bundled one, 8-byte quantum: official
    /// builds, Docker images), `jemalloc-16` (a distribution's system jemalloc: Debian,
    /// Ubuntu), `libc` (glibc malloc builds), or `auto`: the one whose modelled total best
    /// matches the dump's `used-mem`.
    #[arg(long, value_name = "NAME", value_parser = parse_allocator, default_value = "auto")]
    pub allocator: AllocatorSetting,
    /// jemalloc's quantum, 8 or 16: the same as `--allocator jemalloc` / `jemalloc-16`.
    #[arg(long, value_name = "BYTES", value_parser = parse_quantum, conflicts_with = "allocator")]
    pub malloc_quantum: Option<AllocatorSetting>,
    /// Where compressed dumps and standard input are spooled before they are read: an
    /// unnamed temporary file as large as the decompressed dump, deleted on exit (default:
    /// $TMPDIR, else /tmp). rdbscope refuses to fill the directory's free space.
    #[arg(long, value_name = "DIR", help_heading = "Input")]
    pub tmpdir: Option<PathBuf>,
    /// Refuse to spool more than this many bytes (e.g. 20GB, 512MiB, 1.5G; K, M, G, T are
    /// powers of 1000, KiB, MiB, GiB, TiB of 1024).
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_size, help_heading = "Input")]
    pub max_spool: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Reading a running server instead of a file: a DUMP given as
/// `redis://[user[:password]@]host[:port]` or `rediss://` (TLS; the password may come
/// from REDISCLI_AUTH instead). The server sends its dataset as it would to a new
/// replica; read a replica (README: what a live read costs the server).
#[derive(Args, Debug)]
#[command(next_help_heading = "Live sources")]
pub struct LiveArgs {
    /// Read a master too: a full sync makes it fork a BGSAVE (copy-on-write memory).
    #[arg(long)]
    pub allow_master: bool,
    /// Give up on a server silent for this many seconds (it sends a newline a second
    /// while it forks and saves).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_timeout)]
    pub timeout: f64,
    /// Keep the payload read here (a directory, one file a server, under --cluster or
    /// with several addresses).
    #[arg(long, value_name = "PATH")]
    pub keep_dump: Option<PathBuf>,
    /// The CA certificate(s) a rediss:// server's certificate is checked against (PEM;
    /// default: the system's).
    #[arg(long, value_name = "FILE")]
    pub tls_ca_cert: Option<PathBuf>,
    /// A client certificate (PEM) for servers that ask for one; with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// The dumps are a cluster's shards (cluster lint rules apply); a redis:// address is
    /// one node of a cluster: read every shard (`CLUSTER SHARDS`) from one in-sync replica
    /// each, into one report with a row a shard.
    #[arg(long)]
    pub cluster: bool,
    /// Report the dumps that can be read, naming the missing ones first, instead of
    /// refusing the run: a dump that cannot be opened or is no dump, a --cluster shard with
    /// no in-sync replica; `diff` and `merge` take a side only part of whose dumps were read.
    #[arg(long, help_heading = "Run")]
    pub allow_partial: bool,
    /// Under --cluster, shards read at once.
    #[arg(long, value_name = "N", default_value_t = NonZeroUsize::new(2).expect("non-zero"))]
    pub parallel: NonZeroUsize,
}

/// How an analysing command runs: threads, progress bar, checksum.
#[derive(Args, Debug)]
#[command(next_help_heading = "Run")]
pub struct RunArgs {
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
    /// Progress bar on stderr: bytes, MB/s, ETA.
    #[arg(long, value_enum, default_value = "auto")]
    pub progress: ProgressMode,
    /// No progress bar and no informational messages (errors are still printed).
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not verify the CRC64 trailer.
    #[arg(long)]
    pub skip_checksum: bool,
}

/// How keys are grouped into prefixes and patterns.
#[derive(Args, Debug)]
#[command(next_help_heading = "Prefixes and patterns")]
pub struct RollupArgs {
    /// What separates the segments of a key.
    #[arg(long, default_value = ":", value_parser = non_empty)]
    pub delimiter: String,
    /// Deepest prefix level: `a`, `a:b`, `a:b:c` for 3 (levels below PREFIX with --under).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=MAX_DEPTH as i64))]
    pub depth: u8,
    /// Capacity m of each prefix-depth, pattern and hash-tag table: every name holding more
    /// than 1/m of the memory or of the keys is listed (a row's `error` is the most it may
    /// miss); at most 2.5 m names are held, the rest counted in `(other)`.
    #[arg(long, default_value_t = NonZeroUsize::new(20_000).expect("non-zero"), value_name = "N")]
    pub max_prefixes: NonZeroUsize,
}

/// `--under PREFIX` and `--sort`, for the commands that show prefix tables.
#[derive(Args, Debug)]
#[command(next_help_heading = "Prefixes and patterns")]
pub struct DrillArgs {
    /// Rows of the prefix, pattern and hash-tag tables (and their CSV and JSON), the
    /// type, encoding and db tables and the slot table, largest first by this (slots,
    /// counting no elements, by memory for `elements`). A name is guaranteed listed when
    /// heavy by memory or keys; `elements` ranks the names held.
    #[arg(long, value_enum, default_value = "memory")]
    pub sort: SortBy,
    /// Drill down: only the keys under PREFIX (`cache` or `cache:`: keys starting with
    /// `cache:`) are analysed, like a filter, so totals, types, top keys and every % are
    /// the prefix's own. Prefix depths count below it: `--under cache --depth 2` lists
    /// `cache:page` (depth 1) and `cache:page:1` (depth 2); patterns keep PREFIX as is.
    #[arg(long, value_name = "PREFIX", value_parser = non_empty)]
    pub under: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Dump files, one per cluster shard for a merged report (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// Also write summary.json, report.html, keys.csv, prefixes.csv, patterns.csv, top.csv,
    /// slots.csv and findings.csv (lint) here, from the same pass.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// The per-key rows in --out-dir: keys.csv, keys.parquet, both, or none; or arrow: an
    /// Arrow IPC stream on stdout in place of the tables, from the same pass as --out-dir's
    /// summary.json.
    #[arg(
        long,
        value_enum,
        default_value = "csv",
        value_name = "FORMAT",
        requires = "out_dir"
    )]
    pub keys_format: KeysFiles,
    /// Also write the report as one self-contained HTML page (no network request) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Compare with an older run, as `diff OLD` reads it (a dump, a `report --out-dir`
    /// directory or a summary.json; repeat for several shard dumps): the HTML report gains a
    /// "Since baseline" section, and --out-dir also gets diff.txt, diff.csv and diff.json.
    #[arg(long, value_name = "OLD")]
    pub baseline: Vec<PathBuf>,
    /// What to print on stdout: tables, or summary.json.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Keys kept in each top-N ranking.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub top: usize,
    /// Rows of each table on stdout (default: 20 for prefixes, patterns and hash tags, the
    /// whole --top for the rankings); the rows left out are added up in a `… N more` row.
    #[arg(short = 'n', long = "rows", value_name = "N")]
    pub rows: Option<usize>,
    #[command(flatten)]
    pub rollup: RollupArgs,
    #[command(flatten)]
    pub drill: DrillArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub lint: LintArgs,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The runs: each a `report --out-dir` directory or its summary.json.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// Also write summary.json (mergeable again), report.html, prefixes.csv, patterns.csv,
    /// top.csv, slots.csv and findings.csv (lint) here.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// What to print on stdout: tables, or summary.json.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Rows of the tables on stdout, largest first by this (see `report --sort`).
    #[arg(long, value_enum, default_value = "memory")]
    pub sort: SortBy,
    /// Rows of each table on stdout (see `report --rows`).
    #[arg(short = 'n', long = "rows", value_name = "N")]
    pub rows: Option<usize>,
    /// No message about the files written.
    #[arg(long, short)]
    pub quiet: bool,
    /// Merge runs only part of whose dumps were read instead of refusing them.
    #[arg(long, help_heading = "Run")]
    pub allow_partial: bool,
    /// Worker threads (taken as every command takes it; merging reads no dump).
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub threads: Option<NonZeroUsize>,
    /// Progress bar (taken as every command takes it; merging reads no dump, so there is
    /// no bar to show).
    #[arg(long, value_enum, default_value = "auto", help_heading = "Run")]
    pub progress: ProgressMode,
}

#[derive(Args, Debug)]
pub struct TopArgs {
    /// Dump files, one per cluster shard for a merged ranking (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// How many keys (`--rows` is the same).
    #[arg(
        short = 'n',
        long = "top",
        visible_alias = "rows",
        default_value_t = 50,
        value_name = "N"
    )]
    pub n: usize,
    /// Rank by estimated memory, element count or bytes in the file.
    #[arg(long, value_enum, default_value = "memory")]
    pub by: Metric,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
pub struct PrefixesArgs {
    /// Dump files, one per cluster shard for a merged rollup (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// Roll up by key pattern (ids collapsed to `*`) instead of by prefix.
    #[arg(long)]
    pub patterns: bool,
    /// Table rows per depth (CSV and JSON have every row).
    #[arg(short = 'n', long = "rows", default_value_t = 50, value_name = "N")]
    pub rows: usize,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
    #[command(flatten)]
    pub rollup: RollupArgs,
    #[command(flatten)]
    pub drill: DrillArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `keys --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeysFormat {
    /// Comma-separated values, a header row first.
    Csv,
    /// JSON Lines: one object a key.
    Jsonl,
    /// Apache Parquet, for Spark, DuckDB, ClickHouse and Trino: to a file only (-o).
    Parquet,
    /// An Arrow IPC stream: the Parquet columns, to stdout or -o.
    Arrow,
}

/// Column sets a user can ask for (`keys --compat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// redis-rdb-tools' `-c memory` columns.
    Rdbtools,
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// Dump files (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// Row format. With several dumps, CSV and JSON Lines rows start with the dump's name
    /// (`file`); Parquet and Arrow always have that column; Parquet needs -o.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: KeysFormat,
    /// Write another tool's columns instead (CSV; not with `--format jsonl` or `parquet`).
    #[arg(long, value_enum)]
    pub compat: Option<Compat>,
    /// Write the rows to FILE instead of standard output: written as FILE.partial and
    /// renamed over FILE once complete (removed if the run fails).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Dump files, each described on its own (`-` for standard input; gzip, zstd, LZ4, xz
    /// and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// `text` is the same as `table`.
    #[arg(long, value_enum, default_value = "table")]
    pub format: InfoFormat,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Which naming rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LintProfile {
    Default,
    /// Also key.charset: keys start with a letter and use only `A-Za-z0-9_.:`.
    Strict,
}

/// The lint rules' thresholds and selection (docs/lint.md), for `lint` and `report`.
#[derive(Args, Debug)]
#[command(next_help_heading = "Lint rules and thresholds (docs/lint.md)")]
pub struct LintArgs {
    /// key.too-long: key bytes above this.
    #[arg(long, default_value = "100", value_name = "BYTES", value_parser = parse_byte_size)]
    pub key_max_bytes: u64,
    /// bigkey.string: string bytes above this.
    #[arg(long, default_value = "10KiB", value_name = "BYTES", value_parser = parse_byte_size)]
    pub bigkey_string_bytes: u64,
    /// bigkey.elements: hash/list/set/zset/stream/array elements above this.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub bigkey_elements: u64,
    /// value.json-string: JSON object/array strings above this many bytes.
    #[arg(long, default_value = "10KiB", value_name = "BYTES", value_parser = parse_byte_size)]
    pub json_string_bytes: u64,
    /// value.json-string: JSON arrays with more items than this.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub json_array_items: u64,
    /// type.strings-as-hash: field names per entity pattern, at least.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub strings_as_hash_fields: u64,
    /// type.strings-as-hash: ids each field name is seen on, at least.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub strings_as_hash_ids: u64,
    /// type.strings-as-hash: string values no longer than this count as small.
    #[arg(long, default_value = "64", value_name = "BYTES", value_parser = parse_byte_size)]
    pub strings_as_hash_value_bytes: u64,
    /// encoding.just-over-listpack: within this factor of the listpack limits.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub listpack_margin: u64,
    /// encoding.listpack-too-long: listpack/ziplist entries above this.
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub listpack_max_entries: u64,
    /// ttl.clustered: keys expiring in one minute, at least.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub ttl_clustered_keys: u64,
    /// ttl.clustered: share of all expiring keys in one minute, at least (percent).
    #[arg(long, default_value_t = 1.0, value_name = "PERCENT", value_parser = parse_percent)]
    pub ttl_clustered_percent: f64,
    /// idle.cold: idle days above this (needs LRU info in the dump).
    #[arg(long, default_value_t = 30, value_name = "DAYS")]
    pub idle_cold_days: u64,
    /// hot.lfu: LFU counter at or above this (needs LFU info in the dump).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub hot_lfu: u8,
    /// db.multiple: dbs with keys above this.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub max_dbs: u64,
    /// cluster.shard-too-big: estimated memory of one dump above this.
    #[arg(long, default_value = "10GiB", value_name = "BYTES", value_parser = parse_byte_size)]
    pub shard_max_bytes: u64,
    /// cluster.slot-skew: a slot or hash tag above this many times the mean…
    #[arg(long, default_value_t = 10.0, value_name = "X", value_parser = parse_factor)]
    pub slot_skew_factor: f64,
    /// …and above this share of all memory (percent).
    #[arg(long, default_value_t = 1.0, value_name = "PERCENT", value_parser = parse_percent)]
    pub slot_skew_percent: f64,
    /// Do not check this rule (repeatable), e.g. `--disable ttl.missing`.
    #[arg(long = "disable", value_name = "RULE", value_parser = parse_rule)]
    pub disabled: Vec<Rule>,
    /// `strict` adds key.charset.
    #[arg(long, value_enum, default_value = "default")]
    pub profile: LintProfile,
    /// Findings listed per rule (the worst by memory); counts cover all of them.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_findings: usize,
}

#[derive(Args, Debug)]
pub struct LintCommandArgs {
    /// Dump files, one per cluster shard for a merged check (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: LintFormat,
    /// Exit 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: Severity,
    #[command(flatten)]
    pub lint: LintArgs,
    #[command(flatten)]
    pub rollup: RollupArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// OLD then NEW: each a dump, a `report --out-dir` directory, or a summary.json.
    #[arg(value_name = "RUN", num_args = 0..=2)]
    pub runs: Vec<PathBuf>,
    /// OLD as several dumps (one per cluster shard), instead of the first RUN.
    #[arg(long = "old", value_name = "DUMP", num_args = 1.., requires = "new_runs", conflicts_with = "runs")]
    pub old_runs: Vec<PathBuf>,
    /// NEW as several dumps, instead of the second RUN.
    #[arg(long = "new", value_name = "DUMP", num_args = 1.., requires = "old_runs")]
    pub new_runs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: DiffFormat,
    /// Also write diff.txt, diff.csv and diff.json here.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Rows of each list (growers, shrinkers, appeared, …).
    #[arg(short = 'n', long = "rows", default_value_t = DIFF_ROWS, value_name = "N")]
    pub rows: usize,
    /// Leave out changes of less memory than this (noise).
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_size, default_value = "0")]
    pub min_change: u64,
    /// When both sides are dumps: compare every key of at least this memory key by key
    /// (besides each side's top N by memory).
    #[arg(long, value_name = "BYTES", value_parser = parse_byte_size, default_value_t = DIFF_MIN_KEY_BYTES)]
    pub min_key_bytes: u64,
    /// Exit 1 when total memory grew by more than PCT percent.
    #[arg(long, value_name = "PCT", value_parser = parse_growth, help_heading = "Alerts")]
    pub fail_on_growth: Option<f64>,
    /// Exit 1 when a prefix's memory (any depth) surely grew by more than PCT percent; a
    /// prefix OLD did not hold counts as grown without limit. Changes under --min-change
    /// do not count.
    #[arg(long, value_name = "PCT", value_parser = parse_growth, help_heading = "Alerts")]
    pub fail_on_prefix_growth: Option<f64>,
    /// Keys kept in each top-N ranking of a dump analysed here.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub top: usize,
    #[command(flatten)]
    pub rollup: RollupArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub lint: LintArgs,
}
