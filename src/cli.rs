//! Command-line interface (clap derive) and the commands behind it.

use crate::filter::{glob_to_regex, KeyFilter};
use crate::rdb::RedisType;
use crate::report::keys::{Compat, KeysFormat};
use crate::server::{ProfileOverrides, Version};
use clap::{Args, Parser, Subcommand};
use std::io;
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
    /// One row per key, streamed in file order.
    Keys(KeysArgs),
    /// Header, aux fields, databases, functions and checksum verdict of a dump.
    Info(InfoArgs),
}

#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Only keys in this db (repeatable).
    #[arg(long = "db", value_name = "N")]
    pub dbs: Vec<u64>,
    /// Only keys of this type: string, list, set, zset, hash, stream, module (repeatable).
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
    pub types: Vec<RedisType>,
    /// Only keys matching this Redis glob (`user:*`, `h[ae]llo`).
    #[arg(long = "match", value_name = "GLOB")]
    pub glob: Option<String>,
    /// Only keys matching this regular expression (on the key bytes).
    #[arg(long, value_name = "RE")]
    pub regex: Option<String>,
}

fn parse_quantum(s: &str) -> Result<u64, String> {
    match s {
        "8" => Ok(8),
        "16" => Ok(16),
        _ => Err(format!("{s:?}: jemalloc's quantum is 8 or 16")),
    }
}

fn parse_type(s: &str) -> Result<RedisType, String> {
    RedisType::from_name(s).ok_or_else(|| {
        format!("unknown type {s:?}: expected string, list, set, zset, hash, stream or module")
    })
}

impl FilterArgs {
    pub fn build(&self) -> Result<KeyFilter, String> {
        let mut patterns = Vec::new();
        if let Some(g) = &self.glob {
            patterns.push(glob_to_regex(g).map_err(|e| format!("--match {g:?}: {e}"))?);
        }
        if let Some(r) = &self.regex {
            patterns.push(regex::bytes::Regex::new(r).map_err(|e| format!("--regex {r:?}: {e}"))?);
        }
        Ok(KeyFilter {
            dbs: self.dbs.clone(),
            types: self.types.clone(),
            patterns,
        })
    }
}

/// Options every analysing command takes: filters and the server model.
#[derive(Args, Debug)]
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
    /// jemalloc's quantum in the server's build: 8 for Redis's bundled jemalloc (official
    /// builds, Docker images), 16 for distribution packages linking the system jemalloc
    /// (Debian, Ubuntu).
    #[arg(long, value_name = "BYTES", value_parser = parse_quantum)]
    pub malloc_quantum: Option<u64>,
    #[command(flatten)]
    pub filter: FilterArgs,
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
            malloc_quantum: self.malloc_quantum,
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
}

#[derive(Args, Debug)]
pub struct KeysArgs {
    /// Dump files (`-` for standard input).
    #[arg(required = true, value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "csv")]
    pub format: KeysFormat,
    /// Write another tool's columns instead.
    #[arg(long, value_enum)]
    pub compat: Option<Compat>,
    /// Do not verify the CRC64 trailer.
    #[arg(long)]
    pub skip_checksum: bool,
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
    /// Dump file (`-` for standard input).
    #[arg(value_name = "DUMP")]
    pub dump: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    pub format: InfoFormat,
    #[command(flatten)]
    pub common: CommonArgs,
}
