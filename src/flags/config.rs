//! The flags checked and built into the configuration each command takes: the key filter,
//! the server model, the pass's options, the prefix grouping, the lint rules. What clap
//! cannot check is checked here, and named by its flag (`--config x: …`) as an error the
//! command would have given; `main` prints it and exits 2.

use super::parsed::{
    CommandFlags, CommonArgs, Compat, DiffArgs, DrillArgs, FilterArgs, Flags, InfoArgs, KeysArgs,
    KeysFormat, LintArgs, LintCommandArgs, LintProfile, MergeArgs, PrefixesArgs, ReportArgs,
    RollupArgs, RunArgs, TopArgs,
};
use crate::aggregates::prefixes::PrefixConfig;
use crate::aggregates::AggregateConfig;
use crate::commands::keys::Rows;
use crate::commands::report::KeysFiles;
use crate::commands::{diff, info, keys, lint, merge, prefixes, report, top, Command};
use crate::lint::{LintConfig, Thresholds};
use crate::model::server::{ProfileOverrides, Version};
use crate::pass::filter::{glob_to_regex, KeyFilter};
use crate::pass::input::SpoolOptions;
use crate::pass::live::{self, LiveOptions, TlsFiles};
use crate::pass::pipeline::Options;
use crate::pass::progress::ProgressMode;
use crate::report::diff::compare::DiffOptions;
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::ColumnFormat;
use crate::runs::written::ReportFormat;
use std::io;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message.into())
}

impl Flags {
    /// The worker threads asked for, for the global rayon pool.
    pub fn threads(&self) -> Option<usize> {
        let run = match &self.command {
            CommandFlags::Report(a) => &a.run,
            CommandFlags::Top(a) => &a.run,
            CommandFlags::Prefixes(a) => &a.run,
            CommandFlags::Lint(a) => &a.run,
            CommandFlags::Keys(a) => &a.run,
            CommandFlags::Diff(a) => &a.run,
            CommandFlags::Info(a) => &a.run,
            CommandFlags::Merge(a) => return a.threads.map(NonZeroUsize::get),
        };
        run.threads.map(NonZeroUsize::get)
    }

    /// The command with its configuration, or why the flags do not make one.
    pub fn build(&self) -> io::Result<Command> {
        Ok(match &self.command {
            CommandFlags::Report(a) => Command::Report(a.build()?),
            CommandFlags::Top(a) => Command::Top(a.build()?),
            CommandFlags::Prefixes(a) => Command::Prefixes(a.build()?),
            CommandFlags::Keys(a) => Command::Keys(a.build()?),
            CommandFlags::Info(a) => Command::Info(a.build()?),
            CommandFlags::Lint(a) => Command::Lint(a.build()?),
            CommandFlags::Diff(a) => Command::Diff(a.build()?),
            CommandFlags::Merge(a) => Command::Merge(a.build()),
        })
    }
}

impl FilterArgs {
    /// The filters as given on the command line, one flag and its value each.
    fn flags(&self) -> Vec<String> {
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

    fn build(&self) -> io::Result<KeyFilter> {
        let mut patterns = Vec::new();
        if let Some(g) = &self.glob {
            patterns.push(glob_to_regex(g).map_err(|e| invalid(format!("--match {g:?}: {e}")))?);
        }
        if let Some(r) = &self.regex {
            patterns.push(
                regex::bytes::Regex::new(r).map_err(|e| invalid(format!("--regex {r:?}: {e}")))?,
            );
        }
        let excluded = self
            .not_match
            .iter()
            .map(|g| glob_to_regex(g).map_err(|e| invalid(format!("--not-match {g:?}: {e}"))))
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
            flags: self.flags(),
        })
    }
}

impl CommonArgs {
    /// The server model: version, allocator, `--config` read and `--config-set` applied.
    fn overrides(&self) -> io::Result<ProfileOverrides> {
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
            ..ProfileOverrides::default()
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

    /// The pass's options: filters, server model and whether to verify the CRC64.
    fn options(&self, run: &RunArgs) -> io::Result<Options> {
        Ok(Options {
            verify_checksum: !run.skip_checksum,
            overrides: self.overrides()?,
            filter: self.filter.build()?,
            key_limit: None,
            spool: self.spool(),
            allow_partial: self.live.allow_partial,
            without_slots: false,
            settled: Vec::new(),
        })
    }

    fn spool(&self) -> SpoolOptions {
        let live = &self.live;
        SpoolOptions {
            dir: self.tmpdir.clone(),
            max_bytes: self.max_spool,
            live: LiveOptions {
                allow_master: live.allow_master,
                timeout: Duration::from_secs_f64(live.timeout),
                keep_dump: live.keep_dump.clone(),
                tls: TlsFiles {
                    ca_cert: live.tls_ca_cert.clone(),
                    cert: live.tls_cert.clone(),
                    key: live.tls_key.clone(),
                },
                cluster: live.cluster,
                allow_partial: live.allow_partial,
                parallel: live.parallel.get(),
            },
        }
    }

    /// The dumps: files as given, live addresses without their password, a `--cluster`
    /// address expanded into its shards (which asks the cluster).
    fn sources(&self, dumps: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
        live::sources(dumps, &self.spool().live)
    }
}

impl RunArgs {
    fn progress(&self) -> ProgressMode {
        if self.quiet {
            ProgressMode::Never
        } else {
            self.progress
        }
    }
}

impl RollupArgs {
    fn config(&self) -> PrefixConfig {
        PrefixConfig {
            delimiter: self.delimiter.as_bytes().to_vec(),
            depth: usize::from(self.depth),
            cap: self.max_prefixes.get(),
            under: Vec::new(),
        }
    }
}

impl DrillArgs {
    /// The prefix grouping drilled down under `--under` (the prefix with one trailing
    /// delimiter, which it may already end with: `cache` and `cache:` are the same), and
    /// `options` restricted to the keys under it.
    fn apply(&self, rollup: &RollupArgs, options: &mut Options) -> PrefixConfig {
        let mut config = rollup.config();
        if let Some(under) = &self.under {
            options.filter.flags.push(format!("--under {under}"));
            let prefix = under.as_bytes();
            config.under = prefix
                .strip_suffix(&config.delimiter[..])
                .unwrap_or(prefix)
                .to_vec();
            config.under.extend_from_slice(&config.delimiter);
            options.filter.key_prefix = Some(config.under.clone());
        }
        config
    }
}

impl LintArgs {
    /// `cluster`: the dumps are a cluster's shards (`--cluster`), so cluster rules apply.
    fn config(&self, rollup: &RollupArgs, cluster: bool) -> LintConfig {
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
        let mut config = LintConfig::new(
            thresholds,
            &self.disabled,
            self.profile == LintProfile::Strict,
            self.max_findings,
            rollup.delimiter.as_bytes().to_vec(),
            rollup.max_prefixes.get(),
        );
        config.cluster = cluster;
        config
    }
}

impl ReportArgs {
    fn build(&self) -> io::Result<report::Config> {
        if self.keys_format == KeysFiles::Arrow && self.format == ReportFormat::Json {
            return Err(invalid(
                "--keys-format arrow writes the keys to standard output: it does not go with \
                 --format json (summary.json is in --out-dir)",
            ));
        }
        let mut options = self.common.options(&self.run)?;
        // `--under` restricts the keys too, but says so in its own note.
        let filtered = !options.filter.is_empty();
        let prefixes = self.drill.apply(&self.rollup, &mut options);
        Ok(report::Config {
            dumps: self.common.sources(&self.dumps)?,
            out_dir: self.out_dir.clone(),
            keys_files: self.keys_format,
            html: self.html.clone(),
            baseline: self.common.sources(&self.baseline)?,
            format: self.format,
            aggregates: AggregateConfig {
                top_n: self.top,
                prefixes,
            },
            lint: self.lint.config(&self.rollup, self.common.live.cluster),
            options,
            filtered,
            filters: self.common.filter.flags(),
            sort: self.drill.sort,
            rows: self.rows,
            progress: self.run.progress(),
            quiet: self.run.quiet,
        })
    }
}

impl TopArgs {
    fn build(&self) -> io::Result<top::Config> {
        Ok(top::Config {
            dumps: self.common.sources(&self.dumps)?,
            n: self.n,
            by: self.by,
            format: self.format,
            options: self.common.options(&self.run)?,
            progress: self.run.progress(),
        })
    }
}

impl PrefixesArgs {
    fn build(&self) -> io::Result<prefixes::Config> {
        let mut options = self.common.options(&self.run)?;
        let filtered = !options.filter.is_empty();
        let prefixes = self.drill.apply(&self.rollup, &mut options);
        Ok(prefixes::Config {
            dumps: self.common.sources(&self.dumps)?,
            patterns: self.patterns,
            rows: self.rows,
            format: self.format,
            prefixes,
            sort: self.drill.sort,
            options,
            filtered,
            progress: self.run.progress(),
        })
    }
}

impl KeysArgs {
    fn build(&self) -> io::Result<keys::Config> {
        let rows =
            match (self.format, self.compat) {
                (KeysFormat::Parquet | KeysFormat::Arrow, Some(_)) => return Err(invalid(
                    "--compat rdbtools writes CSV; it does not go with --format parquet or arrow",
                )),
                (KeysFormat::Parquet, None) if self.output.is_none() => return Err(invalid(
                    "--format parquet needs -o FILE: a Parquet file ends with its index, so it \
                     is not written to standard output",
                )),
                (KeysFormat::Jsonl, Some(_)) => {
                    return Err(invalid(
                        "--compat rdbtools writes redis-rdb-tools' CSV; it does not go with \
                         --format jsonl",
                    ))
                }
                (KeysFormat::Parquet, None) => Rows::Columns(ColumnFormat::Parquet),
                (KeysFormat::Arrow, None) => Rows::Columns(ColumnFormat::Arrow),
                (_, Some(Compat::Rdbtools)) => Rows::Text(RowFormat::Rdbtools),
                (KeysFormat::Csv, None) => Rows::Text(RowFormat::Csv),
                (KeysFormat::Jsonl, None) => Rows::Text(RowFormat::Jsonl),
            };
        Ok(keys::Config {
            dumps: self.common.sources(&self.dumps)?,
            rows,
            output: self.output.clone(),
            options: self.common.options(&self.run)?,
            progress: self.run.progress(),
        })
    }
}

impl InfoArgs {
    fn build(&self) -> io::Result<info::Config> {
        if !self.common.filter.build()?.is_empty() {
            return Err(invalid(
                "info describes whole dumps: filters (--db, --type, --match, --min-memory, …) apply to keys, top, prefixes, report and lint",
            ));
        }
        Ok(info::Config {
            dumps: self.common.sources(&self.dumps)?,
            format: self.format,
            spool: self.common.spool(),
            overrides: self.common.overrides()?,
            verify_checksum: !self.run.skip_checksum,
            progress: self.run.progress(),
        })
    }
}

impl LintCommandArgs {
    fn build(&self) -> io::Result<lint::Config> {
        Ok(lint::Config {
            dumps: self.common.sources(&self.dumps)?,
            format: self.format,
            fail_on: self.fail_on,
            lint: self.lint.config(&self.rollup, self.common.live.cluster),
            prefixes: self.rollup.config(),
            options: self.common.options(&self.run)?,
            progress: self.run.progress(),
        })
    }
}

impl DiffArgs {
    fn build(&self) -> io::Result<diff::Config> {
        let (old, new) = if !self.old_runs.is_empty() {
            (self.old_runs.clone(), self.new_runs.clone())
        } else {
            match &self.runs[..] {
                [old, new] => (vec![old.clone()], vec![new.clone()]),
                _ => {
                    return Err(invalid(
                        "diff takes two runs, OLD and NEW (or --old DUMP... --new DUMP...)",
                    ))
                }
            }
        };
        Ok(diff::Config {
            old: self.common.sources(&old)?,
            new: self.common.sources(&new)?,
            format: self.format,
            out_dir: self.out_dir.clone(),
            diff: DiffOptions {
                rows: self.rows,
                min_change: self.min_change,
                fail_on_growth: self.fail_on_growth,
                fail_on_prefix_growth: self.fail_on_prefix_growth,
            },
            min_key_bytes: self.min_key_bytes,
            aggregates: AggregateConfig {
                top_n: self.top,
                prefixes: self.rollup.config(),
            },
            lint: self.lint.config(&self.rollup, self.common.live.cluster),
            options: self.common.options(&self.run)?,
            progress: self.run.progress(),
            quiet: self.run.quiet,
        })
    }
}

impl MergeArgs {
    fn build(&self) -> merge::Config {
        merge::Config {
            runs: self.runs.clone(),
            out_dir: self.out_dir.clone(),
            html: self.html.clone(),
            format: self.format,
            sort: self.sort,
            rows: self.rows,
            quiet: self.quiet,
            allow_partial: self.allow_partial,
        }
    }
}
