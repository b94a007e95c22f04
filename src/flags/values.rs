//! How a flag's value is spelt: the parsers clap runs on each value (sizes, percentages,
//! types, rules, the allocator) and the spellings of the choices whose types live in the
//! layers below (`--sort`, `--by`, `--fail-on`, `--progress`, `--format`), so that those
//! types need no clap.

use crate::aggregates::groups::SortBy;
use crate::aggregates::top::Metric;
use crate::commands::diff::DiffFormat;
use crate::commands::info::InfoFormat;
use crate::commands::lint::LintFormat;
use crate::commands::report::KeysFiles;
use crate::commands::ListFormat;
use crate::lint::{Rule, Severity};
use crate::model::allocator::Allocator;
use crate::model::server::AllocatorSetting;
use crate::pass::progress::ProgressMode;
use crate::rdb::RedisType;
use crate::runs::written::ReportFormat;
use clap::builder::PossibleValue;
use clap::ValueEnum;

/// `clap::ValueEnum` for a type of a layer below: each variant as the command line spells
/// it, with the help `--help` lists it with, if any.
macro_rules! choices {
    ($ty:ident { $($variant:ident = $name:expr $(=> $help:literal)?),+ $(,)? }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self {
                    $($ty::$variant => PossibleValue::new($name)$(.help($help))?,)+
                })
            }
        }
    };
}

choices!(SortBy {
    Keys = "keys" => "Key count",
    Memory = "memory" => "Estimated memory (then bytes in the file)",
    Elements = "elements" => "Element count",
});

choices!(Metric {
    Memory = Metric::Memory.ranking() => "Estimated RAM once loaded",
    Elements = Metric::Elements.ranking() => "Element count of collections (a string holds none)",
    Serialized = Metric::Serialized.ranking() => "Bytes in the dump file",
    Idle = Metric::Idle.ranking() => "LRU idle seconds, the coldest first (dumps of servers with an `*-lru` policy)",
    Freq = Metric::Freq.ranking() => "LFU counter, the hottest first (dumps of servers with an `*-lfu` policy)",
});

choices!(Severity {
    Info = Severity::Info.name(),
    Warn = Severity::Warn.name(),
    Error = Severity::Error.name(),
});

choices!(ProgressMode {
    Auto = "auto" => "When stderr is a terminal",
    Always = "always",
    Never = "never",
});

choices!(ListFormat {
    Table = "table",
    Csv = "csv",
    Json = "json" => "One JSON document with summary.json's field names (docs/summary-json.md)",
});

choices!(ReportFormat {
    Table = "table",
    Json = "json",
});

choices!(KeysFiles {
    Csv = "csv",
    Parquet = "parquet",
    Both = "both",
    None = "none",
    Arrow = "arrow" => "An Arrow IPC stream on stdout, in place of the tables",
});

impl ValueEnum for InfoFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[InfoFormat::Table, InfoFormat::Json]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            // `text`: the spelling `info` had before every command said `table`.
            InfoFormat::Table => PossibleValue::new("table").alias("text"),
            InfoFormat::Json => PossibleValue::new("json"),
        })
    }
}

choices!(LintFormat {
    Table = "table",
    Json = "json",
    Csv = "csv",
});

choices!(DiffFormat {
    Table = "table",
    Csv = "csv",
    Json = "json",
});

pub(super) fn parse_allocator(s: &str) -> Result<AllocatorSetting, String> {
    match s {
        "auto" => Ok(AllocatorSetting::Auto),
        _ => Allocator::parse(s)
            .map(AllocatorSetting::Fixed)
            .ok_or_else(|| format!("{s:?}: expected auto, jemalloc, jemalloc-16 or libc")),
    }
}

pub(super) fn parse_quantum(s: &str) -> Result<AllocatorSetting, String> {
    match s {
        "8" => Ok(AllocatorSetting::Fixed(Allocator::Jemalloc)),
        "16" => Ok(AllocatorSetting::Fixed(Allocator::Jemalloc16)),
        _ => Err(format!("{s:?}: jemalloc's quantum is 8 or 16")),
    }
}

pub(super) fn parse_type(s: &str) -> Result<RedisType, String> {
    RedisType::from_name(s).ok_or_else(|| {
        format!(
            "unknown type {s:?}: expected string, list, set, zset, hash, stream, array or module"
        )
    })
}

/// A byte count with an optional unit: `1500`, `10GB`, `1.5M`, `512KiB` (K, M, G, T and
/// KB… are powers of 1000; KiB, MiB, GiB, TiB powers of 1024; case-insensitive).
pub(super) fn parse_byte_size(s: &str) -> Result<u64, String> {
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

pub(super) fn parse_rule(s: &str) -> Result<Rule, String> {
    Rule::from_id(s).ok_or_else(|| {
        let ids: Vec<_> = Rule::ALL.iter().map(|r| r.id()).collect();
        format!("unknown rule {s:?}: expected one of {}", ids.join(", "))
    })
}

pub(super) fn parse_growth(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a percentage, 0 or more (e.g. 10 or 2.5)"
        )),
    }
}

pub(super) fn parse_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?}: expected a percentage from 0 to 100")),
    }
}

pub(super) fn parse_factor(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?}: expected a non-negative number")),
    }
}

pub(super) fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(s.to_string())
    }
}

/// `--timeout`: seconds, more than zero (fractions allowed).
pub fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds between 0 and 86400"
        )),
    }
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
