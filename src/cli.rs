//! Command-line interface (clap derive) and the commands behind it.

use crate::analyze::groups::SortBy;
use crate::analyze::prefixes::{PrefixConfig, MAX_DEPTH};
use crate::analyze::top::Metric;
use crate::filter::{glob_to_regex, KeyFilter};
use crate::input::SpoolOptions;
use crate::lint::{LintConfig, Rule, Severity, Thresholds};
use crate::memory::allocator::Allocator;
use crate::pipeline::Options;
use crate::progress::ProgressMode;
use crate::rdb::RedisType;
use crate::report::keys::{Compat, KeysFormat};
use crate::server::{AllocatorSetting, ProfileOverrides, Version};
use clap::{Args, Parser, Subcommand};
use std::io;
use std::num::NonZeroUsize;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "rdbscope",
    version,
    about = "Offline analyzer for Redis and Valkey RDB dumps"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
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

const REPORT_EXAMPLES: &str = examples!(
    "rdbscope report dump.rdb",
    "rdbscope report shard1.rdb shard2.rdb --out-dir out/      # merged; summary.json and CSVs in out/",
    "rdbscope report dump.rdb --out-dir out/ --keys-format parquet   # keys.parquet instead of keys.csv",
    "rdbscope report dump.rdb --format json > summary.json",
    "rdbscope report dump.rdb --db 0 --not-match 'cache:*' --no-expired",
    "rdbscope report dump.rdb --under cache:page         # that prefix alone, % of it",
    "rdbscope report dump.rdb --bigkey-string-bytes 1MiB --disable ttl.missing"
);
const TOP_EXAMPLES: &str = examples!(
    "rdbscope top dump.rdb -n 20",
    "rdbscope top dump.rdb --by elements --type hash --type zset",
    "rdbscope top dump.rdb --by idle -n 100 --format csv     # coldest keys (LRU dumps)",
    "rdbscope top dump.rdb --by freq                         # hottest keys (LFU dumps)",
    "rdbscope top dump.rdb --min-memory 10MB --match 'session:*'"
);
const PREFIXES_EXAMPLES: &str = examples!(
    "rdbscope prefixes dump.rdb",
    "rdbscope prefixes dump.rdb --delimiter / --depth 2",
    "rdbscope prefixes dump.rdb --under cache --depth 2   # cache:page, cache:page:home …",
    "rdbscope prefixes dump.rdb --patterns               # user:1:profile … as user:*:profile",
    "rdbscope prefixes dump.rdb --format csv > prefixes.csv"
);
const KEYS_EXAMPLES: &str = examples!(
    "rdbscope keys dump.rdb > keys.csv",
    "rdbscope keys dump.rdb --format jsonl --min-memory 1MiB",
    "rdbscope keys dump.rdb --compat rdbtools            # redis-rdb-tools' memory CSV",
    "rdbscope keys shard*.rdb --format parquet -o keys.parquet  # column file: the dump",
    "zcat dump.rdb.gz | rdbscope keys - --match 'user:*'"
);
const INFO_EXAMPLES: &str = examples!(
    "rdbscope info dump.rdb",
    "rdbscope info shard*.rdb --format json              # an array, one object per dump"
);
const LINT_EXAMPLES: &str = examples!(
    "rdbscope lint dump.rdb",
    "rdbscope lint dump.rdb --fail-on warn               # CI: exit 1 on warnings too",
    "rdbscope lint dump.rdb --profile strict --key-max-bytes 64",
    "rdbscope lint dump.rdb --format json --max-findings 1000 > findings.json"
);

const MERGE_EXAMPLES: &str = examples!(
    "rdbscope merge shard1/ shard2/ shard3/ --out-dir fleet/   # each from rdbscope report --out-dir",
    "rdbscope merge runs/*/summary.json --format json > fleet.json",
    "rdbscope merge fleet-eu/ fleet-us/ --out-dir world/       # merged runs merge again"
);

const DIFF_EXAMPLES: &str = examples!(
    "rdbscope diff yesterday/summary.json today.rdb",
    "rdbscope diff old.rdb new.rdb --min-key-bytes 256KiB  # big keys compared key by key",
    "rdbscope diff --old a1.rdb a2.rdb --new b1.rdb b2.rdb   # one dump per cluster shard",
    "rdbscope diff runs/mon/ runs/tue/ --format json > diff.json",
    "rdbscope diff last/summary.json dump.rdb --fail-on-growth 10 --min-change 1MiB"
);

impl Command {
    /// The worker threads asked for, for the global rayon pool.
    pub fn threads(&self) -> Option<usize> {
        let run = match self {
            Command::Report(a) => &a.run,
            Command::Top(a) => &a.run,
            Command::Prefixes(a) => &a.run,
            Command::Lint(a) => &a.run,
            Command::Keys(a) => &a.run,
            Command::Diff(a) => &a.run,
            Command::Info(_) | Command::Merge(_) => return None,
        };
        run.threads.map(NonZeroUsize::get)
    }
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

fn parse_allocator(s: &str) -> Result<AllocatorSetting, String> {
    match s {
        "auto" => Ok(AllocatorSetting::Auto),
        _ => Allocator::parse(s)
            .map(AllocatorSetting::Fixed)
            .ok_or_else(|| format!("{s:?}: expected auto, jemalloc, jemalloc-16 or libc")),
    }
}

fn parse_quantum(s: &str) -> Result<AllocatorSetting, String> {
    match s {
        "8" => Ok(AllocatorSetting::Fixed(Allocator::Jemalloc)),
        "16" => Ok(AllocatorSetting::Fixed(Allocator::Jemalloc16)),
        _ => Err(format!("{s:?}: jemalloc's quantum is 8 or 16")),
    }
}

fn parse_type(s: &str) -> Result<RedisType, String> {
    RedisType::from_name(s).ok_or_else(|| {
        format!(
            "unknown type {s:?}: expected string, list, set, zset, hash, stream, array or module"
        )
    })
}

impl FilterArgs {
    /// The filters as given on the command line, one flag and its value each.
    pub fn flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = self.dbs.iter().map(|db| format!("--db {db}")).collect();
        flags.extend(self.types.iter().map(|t| format!("--type {}", t.name())));
        flags.extend(self.glob.iter().map(|g| format!("--match {g}")));
        flags.extend(self.regex.iter().map(|r| format!("--regex {r}")));
        flags.extend(self.not_match.iter().map(|g| format!("--not-match {g}")));
        flags.extend(self.min_memory.map(|m| format!("--min-memory {m}")));
        if self.no_expired {
            flags.push("--no-expired".to_string());
        }
        flags
    }

    pub fn build(&self) -> Result<KeyFilter, String> {
        let mut patterns = Vec::new();
        if let Some(g) = &self.glob {
            patterns.push(glob_to_regex(g).map_err(|e| format!("--match {g:?}: {e}"))?);
        }
        if let Some(r) = &self.regex {
            patterns.push(regex::bytes::Regex::new(r).map_err(|e| format!("--regex {r:?}: {e}"))?);
        }
        let excluded = self
            .not_match
            .iter()
            .map(|g| glob_to_regex(g).map_err(|e| format!("--not-match {g:?}: {e}")))
            .collect::<Result<_, _>>()?;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Ok(KeyFilter {
            dbs: self.dbs.clone(),
            types: self.types.clone(),
            patterns,
            excluded,
            key_prefix: None,
            min_memory_bytes: self.min_memory.unwrap_or(0),
            expired_before_ms: self.no_expired.then_some(now_ms),
        })
    }
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
}

/// A byte count with an optional unit: `1500`, `10GB`, `1.5M`, `512KiB` (K, M, G, T and
/// KB… are powers of 1000; KiB, MiB, GiB, TiB powers of 1024; case-insensitive).
pub fn parse_byte_size(s: &str) -> Result<u64, String> {
    let text = s.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "{s:?}: unknown unit (K, M, G, T, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of bytes, e.g. 10GB or 512MiB"))?;
    let bytes = (value * scale as f64).round();
    if !(0.0..=u64::MAX as f64).contains(&bytes) {
        return Err(format!("{s:?}: out of range"));
    }
    Ok(bytes as u64)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

impl CommonArgs {
    pub fn overrides(&self) -> io::Result<ProfileOverrides> {
        let mut o = ProfileOverrides {
            version: self
                .redis_version
                .as_deref()
                .map(|v| {
                    Version::parse(v)
                        .ok_or_else(|| invalid(format!("--redis-version {v:?} is not X.Y.Z")))
                })
                .transpose()?,
            allocator: self.malloc_quantum.unwrap_or(self.allocator),
            config: Vec::new(),
        };
        if let Some(path) = &self.config {
            let name = path.display();
            let text = std::fs::read_to_string(path)
                .map_err(|e| io::Error::new(e.kind(), format!("--config {name}: {e}")))?;
            o.read_config(&text)
                .map_err(|e| invalid(format!("--config {name}: {e}")))?;
        }
        for directive in &self.config_set {
            o.set(directive)
                .map_err(|e| invalid(format!("--config-set {e}")))?;
        }
        Ok(o)
    }

    pub fn filter(&self) -> io::Result<KeyFilter> {
        self.filter.build().map_err(invalid)
    }

    /// The pipeline's options: filters, server model and whether to verify the CRC64.
    pub fn pipeline_options(&self, verify_checksum: bool) -> io::Result<Options> {
        Ok(Options {
            verify_checksum,
            overrides: self.overrides()?,
            filter: self.filter()?,
            key_limit: None,
            spool: self.spool(),
        })
    }

    pub fn spool(&self) -> SpoolOptions {
        SpoolOptions {
            dir: self.tmpdir.clone(),
            max_bytes: self.max_spool,
        }
    }
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

impl RunArgs {
    pub fn progress_mode(&self) -> ProgressMode {
        if self.quiet {
            ProgressMode::Never
        } else {
            self.progress
        }
    }
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

fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

impl RollupArgs {
    pub fn config(&self) -> PrefixConfig {
        PrefixConfig {
            delimiter: self.delimiter.as_bytes().to_vec(),
            depth: usize::from(self.depth),
            cap: self.max_prefixes.get(),
            under: Vec::new(),
        }
    }

    /// [`RollupArgs::config`] drilled down under `under` (`--under`): the prefix with one
    /// trailing delimiter, which it may already end with (`cache` and `cache:` are the same).
    pub fn drilled(&self, under: Option<&str>) -> PrefixConfig {
        let mut config = self.config();
        if let Some(prefix) = under {
            let prefix = prefix.as_bytes();
            config.under = prefix
                .strip_suffix(&config.delimiter[..])
                .unwrap_or(prefix)
                .to_vec();
            config.under.extend_from_slice(&config.delimiter);
        }
        config
    }
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

impl DrillArgs {
    /// The prefix tables' settings, and the run's options with the keys restricted to
    /// those under the prefix.
    pub fn apply(&self, rollup: &RollupArgs, options: &mut Options) -> PrefixConfig {
        let config = rollup.drilled(self.under.as_deref());
        if !config.under.is_empty() {
            options.filter.key_prefix = Some(config.under.clone());
        }
        config
    }
}

/// Which per-key files `report --out-dir` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeysFiles {
    Csv,
    Parquet,
    Both,
    None,
}

impl KeysFiles {
    pub fn csv(self) -> bool {
        matches!(self, KeysFiles::Csv | KeysFiles::Both)
    }

    pub fn parquet(self) -> bool {
        matches!(self, KeysFiles::Parquet | KeysFiles::Both)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
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
    /// The per-key rows in --out-dir: keys.csv, keys.parquet, both, or none.
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
    /// No message about the files written.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    Table,
    Csv,
    /// One JSON document with summary.json's field names (docs/summary-json.md).
    Json,
}

#[derive(Args, Debug)]
pub struct TopArgs {
    /// Dump files, one per cluster shard for a merged ranking (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// How many keys.
    #[arg(short = 'n', long = "top", default_value_t = 50, value_name = "N")]
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

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// Dump files (`-` for standard input;
    /// gzip, zstd, LZ4, xz and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    /// Row format. With several dumps, CSV and JSON Lines rows start with the dump's name
    /// (`file`); Parquet always has that column, and needs -o.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: KeysFormat,
    /// Write another tool's columns instead (CSV).
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Dump files, each described on its own (`-` for standard input; gzip, zstd, LZ4, xz
    /// and bzip2 dumps are decompressed to a temporary file: --tmpdir).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: InfoFormat,
    #[command(flatten)]
    pub common: CommonArgs,
}

fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::from_id(s).ok_or_else(|| {
        let ids: Vec<_> = Rule::ALL.iter().map(|r| r.id()).collect();
        format!("unknown rule {s:?}: expected one of {}", ids.join(", "))
    })
}

fn parse_growth(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a percentage, 0 or more (e.g. 10 or 2.5)"
        )),
    }
}

fn parse_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?}: expected a percentage from 0 to 100")),
    }
}

fn parse_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?}: expected a non-negative number")),
    }
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

impl LintArgs {
    pub fn config(&self, rollup: &RollupArgs) -> LintConfig {
        let thresholds = Thresholds {
            key_max_bytes: self.key_max_bytes,
            bigkey_string_bytes: self.bigkey_string_bytes,
            bigkey_elements: self.bigkey_elements,
            json_string_bytes: self.json_string_bytes,
            json_array_items: self.json_array_items,
            strings_as_hash_fields: self.strings_as_hash_fields,
            strings_as_hash_ids: self.strings_as_hash_ids,
            strings_as_hash_value_bytes: self.strings_as_hash_value_bytes,
            listpack_margin: self.listpack_margin,
            listpack_max_entries: self.listpack_max_entries,
            ttl_clustered_keys: self.ttl_clustered_keys,
            ttl_clustered_percent: self.ttl_clustered_percent,
            idle_cold_seconds: self.idle_cold_days.saturating_mul(86_400),
            hot_lfu: self.hot_lfu,
            max_dbs: self.max_dbs,
            shard_max_bytes: self.shard_max_bytes,
            slot_skew_factor: self.slot_skew_factor,
            slot_skew_percent: self.slot_skew_percent,
        };
        let rollup = rollup.config();
        LintConfig::new(
            thresholds,
            &self.disabled,
            self.profile == LintProfile::Strict,
            self.max_findings,
            rollup.delimiter,
            rollup.cap,
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    Table,
    Json,
    Csv,
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

/// `diff --rows` unless given, and the rows of each list of `report --baseline`.
pub const DIFF_ROWS: usize = 20;
/// `diff --min-key-bytes` unless given, and that of `report --baseline`.
pub const DIFF_MIN_KEY_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Table,
    Csv,
    Json,
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

#[cfg(test)]
mod tests {
    use super::parse_byte_size;

    #[test]
    fn byte_sizes_take_decimal_and_binary_units() {
        let ok = [
            ("1500", 1500),
            ("10GB", 10_000_000_000),
            ("1.5M", 1_500_000),
            ("512KiB", 524_288),
            ("64 mib", 67_108_864),
            ("2T", 2_000_000_000_000),
            ("7b", 7),
        ];
        for (text, bytes) in ok {
            assert_eq!(parse_byte_size(text), Ok(bytes), "{text}");
        }
        for bad in ["", "GB", "-5", "10 parsecs", "1e999"] {
            assert!(parse_byte_size(bad).is_err(), "{bad}");
        }
    }
}
