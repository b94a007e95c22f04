//! `summary.json`: the whole report for scripts, with field names that stay put.
//!
//! Every field is documented in `docs/summary-json.md`; a change that renames or removes
//! a field, or changes its meaning, bumps [`SCHEMA_VERSION`]. Adding a field does not.

use super::notes::{cap_note, file_notes, under_note};
use crate::aggregates::distribution::Histogram;
use crate::aggregates::encodings::split_name;
use crate::aggregates::groups::{ErrorBound, GroupRow, GroupStats, GroupTable, SortBy};
use crate::aggregates::prefixes::Prefixes;
use crate::aggregates::top::{Metric, TopKey, TopN};
use crate::aggregates::{AggregateConfig, Aggregates};
use crate::model::encoding::Encoding;
use crate::model::server::EncodingLimits;
use crate::pass::analysis::{Analysis, FileOutcome};
use crate::pass::scan::ChecksumVerdict;
use crate::pass::totals::Counts;
use crate::rdb::RedisType;
use crate::report::info::AllocatorJson;
use crate::report::lint::sorted_keys;
use crate::report::lint::LintJson;
use crate::text::escape::{escape_key, text_and_base64};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// 2: `state`, what `rdbscope merge` reads. 3: a string holds no elements (2 counted its
/// length).
pub const SCHEMA_VERSION: u32 = 3;

/// Rows of the hash-tag and heaviest-slot lists.
const CLUSTER_ROWS: usize = 20;
/// Expiry minutes listed.
const STORM_ROWS: usize = 10;
/// Offsets after the dump's `ctime` at which the memory freed by expiry is told: 0 (already
/// expired), 1, 5, 15 and 30 minutes, 1, 2, 6 and 12 hours, 1, 2, 3, 7, 14 and 30 days.
pub const EXPIRING_WITHIN_MS: [i64; 15] = {
    const M: i64 = 60_000;
    const H: i64 = 60 * M;
    const D: i64 = 24 * H;
    [
        0,
        M,
        5 * M,
        15 * M,
        30 * M,
        H,
        2 * H,
        6 * H,
        12 * H,
        D,
        2 * D,
        3 * D,
        7 * D,
        14 * D,
        30 * D,
    ]
};

/// summary.json, written by `report` and `merge`, read back by `diff`, `report
/// --baseline` and the HTML page. Fields a reader of an older summary.json (schema version
/// 1 or 2) may not find are `#[serde(default)]`; [`SummaryJson::parse`] checks the version.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SummaryJson {
    pub schema_version: u32,
    #[serde(default)]
    pub generator: String,
    pub partial: bool,
    pub options: OptionsJson,
    pub files: Vec<FileJson>,
    pub totals: CountsJson,
    pub by_db: Vec<DbJson>,
    pub by_type: Vec<TypeJson>,
    pub by_encoding: Vec<EncodingJson>,
    pub ttl: TtlJson,
    pub prefixes: PrefixesJson,
    pub patterns: GroupTableJson,
    pub top_keys: TopKeysJson,
    #[serde(default)]
    pub distributions: Vec<DistributionJson>,
    #[serde(default)]
    pub cluster: ClusterJson,
    #[serde(default)]
    pub lru_idle_seconds: Option<HistogramJson>,
    #[serde(default)]
    pub lfu_frequency: Option<HistogramJson>,
    pub notes: Vec<String>,
    /// The `lint --format json` object with the thresholds it judged by; set by `report`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint: Option<LintJson>,
    /// Keys and memory per pattern and encoding (hash, list, set, zset); absent from
    /// summaries written before the table existed.
    #[serde(default)]
    pub pattern_encodings: Option<PatternEncodingsJson>,
    /// What `rdbscope merge` merges runs by (`super::state`), on one line; set by
    /// `report` and `merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Box<serde_json::value::RawValue>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OptionsJson {
    pub delimiter: String,
    pub depth: usize,
    pub top: usize,
    pub max_prefixes: usize,
    pub filtered: bool,
    /// `--under`: the prefix drilled down under, with its delimiter; `null` for the
    /// whole keyspace.
    #[serde(default)]
    pub under: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileJson {
    pub path: String,
    #[serde(default)]
    pub magic: Option<String>,
    #[serde(default)]
    pub rdb_version: Option<u32>,
    #[serde(default)]
    pub server_version: Option<String>,
    pub ctime: Option<i64>,
    #[serde(default)]
    pub used_mem: Option<u64>,
    /// The allocator and every other setting the memory model used for this dump.
    #[serde(default)]
    pub model: Option<ModelJson>,
    #[serde(default)]
    pub file_bytes: u64,
    #[serde(default)]
    pub keys_scanned: u64,
    pub ttl_reference_ms: i64,
    /// `absent`, `disabled`, `valid`, `mismatch` or `not_checked`.
    #[serde(default)]
    pub checksum: String,
    pub partial: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub totals: CountsJson,
}

/// Every setting the memory model used for one dump, so two runs can be compared: the
/// allocator and how it was chosen, the server modelled and where its version came from,
/// the encoding thresholds in force and the configuration directives given. Its fields,
/// and `limits`' and `server`'s, are written in alphabetical order, as summary.json has
/// always had them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelJson {
    pub allocator: AllocatorJson,
    pub config: Vec<ConfigJson>,
    #[serde(serialize_with = "sorted_keys")]
    pub limits: Option<EncodingLimits>,
    pub server: Option<ServerJson>,
}

/// The server the model stood for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerJson {
    /// `redis` or `valkey`.
    pub family: String,
    pub version: String,
    /// `dump`, or `--redis-version` when given.
    pub version_from: String,
}

/// A configuration directive given to the model (`--config name=value`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigJson {
    pub name: String,
    pub value: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountsJson {
    pub keys: u64,
    pub elements: u64,
    pub serialized_bytes: u64,
    pub memory_bytes: u64,
    pub keys_with_ttl: u64,
    #[serde(default)]
    pub keys_without_ttl: u64,
}

impl From<Counts> for CountsJson {
    fn from(c: Counts) -> Self {
        CountsJson {
            keys: c.keys,
            elements: c.elements,
            serialized_bytes: c.serialized_bytes,
            memory_bytes: c.memory_bytes,
            keys_with_ttl: c.keys_with_ttl,
            keys_without_ttl: c.keys_without_ttl(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DbJson {
    pub db: u64,
    #[serde(flatten)]
    pub counts: CountsJson,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TypeJson {
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(flatten)]
    pub counts: CountsJson,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EncodingJson {
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: Encoding,
    #[serde(flatten)]
    pub counts: CountsJson,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TtlBucketJson {
    pub bucket: String,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StormJson {
    pub minute_start_ms: i64,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExpiringJson {
    pub within_ms: i64,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TtlJson {
    pub buckets: Vec<TtlBucketJson>,
    /// Cumulative: the keys expired within each offset of [`EXPIRING_WITHIN_MS`].
    #[serde(default)]
    pub expiring_within: Vec<ExpiringJson>,
    pub expiry_storms: Vec<StormJson>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TypeSplitJson {
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupJson {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_base64: Option<String>,
    pub keys: u64,
    pub memory_bytes: u64,
    #[serde(default)]
    pub serialized_bytes: u64,
    #[serde(default)]
    pub elements: u64,
    #[serde(default)]
    pub by_type: BTreeMap<String, TypeSplitJson>,
    pub no_ttl_keys: u64,
    #[serde(default)]
    pub no_ttl_memory_bytes: u64,
    /// At most this many keys holding at most `error_bytes` were counted under `(other)`
    /// before the name entered its table: 0 for an exact row.
    #[serde(default)]
    pub error_keys: u64,
    #[serde(default)]
    pub error_bytes: u64,
}

impl GroupJson {
    pub fn new(name: &[u8], s: &GroupStats, e: ErrorBound) -> Self {
        let (name, name_base64) = text_and_base64(name);
        let name = name.into_owned();
        GroupJson {
            name,
            name_base64,
            keys: s.keys,
            memory_bytes: s.memory_bytes,
            serialized_bytes: s.serialized_bytes,
            elements: s.elements,
            by_type: RedisType::ALL
                .iter()
                .zip(&s.by_type)
                .filter(|(_, t)| t.keys > 0)
                .map(|(ty, t)| {
                    (
                        ty.name().to_string(),
                        TypeSplitJson {
                            keys: t.keys,
                            memory_bytes: t.memory_bytes,
                        },
                    )
                })
                .collect(),
            no_ttl_keys: s.no_ttl_keys,
            no_ttl_memory_bytes: s.no_ttl_memory_bytes,
            error_keys: e.keys,
            error_bytes: e.memory_bytes,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupTableJson {
    #[serde(default)]
    pub cap: usize,
    pub capped: bool,
    pub distinct_kept: usize,
    pub absent_max_keys: u64,
    pub absent_max_memory_bytes: u64,
    pub rows: Vec<GroupJson>,
    #[serde(default)]
    pub other: Option<GroupJson>,
    /// Keys and memory of the held names beyond `rows` (0 when `rows` lists them all);
    /// `None` in summaries that predate the fields.
    #[serde(default)]
    pub unlisted_keys: Option<u64>,
    #[serde(default)]
    pub unlisted_memory_bytes: Option<u64>,
}

/// Keys and memory of the held names of `rows` beyond the first `listed`.
fn unlisted(rows: &[GroupRow<'_>], listed: usize) -> (u64, u64) {
    rows.iter().skip(listed).fold((0, 0), |(k, m), r| {
        (
            k.saturating_add(r.stats.keys),
            m.saturating_add(r.stats.memory_bytes),
        )
    })
}

impl GroupTableJson {
    /// The table with its `rows` heaviest rows by memory.
    pub fn new(table: &GroupTable, rows: usize) -> Self {
        GroupTableJson::sorted(table, rows, SortBy::Memory)
    }

    /// The table with its `rows` first rows by `by`.
    pub fn sorted(table: &GroupTable, rows: usize, by: SortBy) -> Self {
        let kept = table.rows_top(by, rows);
        let (unlisted_keys, unlisted_memory_bytes) = unlisted(&kept, rows);
        GroupTableJson {
            cap: table.capacity(),
            capped: table.overflowed(),
            distinct_kept: kept.len(),
            absent_max_keys: table.absent_bound().keys,
            absent_max_memory_bytes: table.absent_bound().memory_bytes,
            rows: kept
                .iter()
                .take(rows)
                .map(|r| GroupJson::new(r.name, r.stats, r.error))
                .collect(),
            other: table
                .overflowed()
                .then(|| GroupJson::new(b"(other)", table.other(), ErrorBound::default())),
            unlisted_keys: Some(unlisted_keys),
            unlisted_memory_bytes: Some(unlisted_memory_bytes),
        }
    }
}

/// Keys of one pattern in one encoding (hash, list, set and zset keys).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatternEncodingJson {
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern_base64: Option<String>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: String,
    pub keys: u64,
    pub memory_bytes: u64,
    pub error_keys: u64,
    pub error_bytes: u64,
}

/// The pattern × encoding table: the group-table bounds, and rows heaviest first.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatternEncodingsJson {
    #[serde(default)]
    pub cap: usize,
    pub capped: bool,
    pub distinct_kept: usize,
    pub absent_max_keys: u64,
    pub absent_max_memory_bytes: u64,
    #[serde(default)]
    pub unlisted_keys: Option<u64>,
    #[serde(default)]
    pub unlisted_memory_bytes: Option<u64>,
    pub rows: Vec<PatternEncodingJson>,
}

impl PatternEncodingsJson {
    pub fn new(table: &GroupTable, rows: usize) -> Self {
        let kept = table.rows_top(SortBy::Memory, rows);
        let (unlisted_keys, unlisted_memory_bytes) = unlisted(&kept, rows);
        PatternEncodingsJson {
            cap: table.capacity(),
            capped: table.overflowed(),
            distinct_kept: kept.len(),
            absent_max_keys: table.absent_bound().keys,
            absent_max_memory_bytes: table.absent_bound().memory_bytes,
            unlisted_keys: Some(unlisted_keys),
            unlisted_memory_bytes: Some(unlisted_memory_bytes),
            rows: kept
                .iter()
                .take(rows)
                .map(|r| {
                    let (type_name, encoding, pattern) = split_name(r.name);
                    let (pattern, pattern_base64) = text_and_base64(pattern);
                    PatternEncodingJson {
                        pattern: pattern.into_owned(),
                        pattern_base64,
                        type_name: String::from_utf8_lossy(type_name).into_owned(),
                        encoding: String::from_utf8_lossy(encoding).into_owned(),
                        keys: r.stats.keys,
                        memory_bytes: r.stats.memory_bytes,
                        error_keys: r.error.keys,
                        error_bytes: r.error.memory_bytes,
                    }
                })
                .collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrefixDepthJson {
    pub depth: usize,
    #[serde(flatten)]
    pub table: GroupTableJson,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrefixesJson {
    #[serde(default)]
    pub delimiter: String,
    #[serde(default)]
    pub no_delimiter: GroupJson,
    pub depths: Vec<PrefixDepthJson>,
}

impl PrefixesJson {
    /// Every depth's table with its `rows` first rows by `by`.
    pub fn new(p: &Prefixes, rows: usize, by: SortBy) -> Self {
        PrefixesJson {
            delimiter: escape_key(p.delimiter()).into_owned(),
            no_delimiter: GroupJson::new(
                b"(no delimiter)",
                p.no_delimiter(),
                ErrorBound::default(),
            ),
            depths: p
                .tables()
                .iter()
                .enumerate()
                .map(|(i, t)| PrefixDepthJson {
                    depth: i + 1,
                    table: GroupTableJson::sorted(t, rows, by),
                })
                .collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopKeyJson {
    #[serde(default)]
    pub file: String,
    pub db: u64,
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_base64: Option<String>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: Encoding,
    pub elements: Option<u64>,
    #[serde(default)]
    pub serialized_bytes: u64,
    pub memory_bytes: u64,
    #[serde(default)]
    pub largest_element_bytes: u64,
    pub expiry_ms: Option<i64>,
    /// `top --by idle`: the key's LRU idle time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_seconds: Option<u64>,
    /// `top --by freq`: the key's LFU counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lfu_frequency: Option<u64>,
}

impl TopKeyJson {
    pub fn new(k: &TopKey, files: &[FileOutcome]) -> Self {
        let (key, key_base64) = text_and_base64(&k.key);
        let key = key.into_owned();
        TopKeyJson {
            file: files
                .get(k.file)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            db: k.db,
            key,
            key_base64,
            type_name: k.type_key.name().into_owned(),
            encoding: k.encoding,
            elements: k.elements,
            serialized_bytes: k.serialized_bytes,
            memory_bytes: k.memory_bytes,
            largest_element_bytes: k.largest_element_bytes,
            expiry_ms: k.expiry_ms,
            idle_seconds: None,
            lfu_frequency: None,
        }
    }

    /// A key of a ranking by `metric`: idle and frequency rankings carry the key's value.
    pub fn ranked(k: &TopKey, files: &[FileOutcome], metric: Metric) -> Self {
        let mut row = TopKeyJson::new(k, files);
        match metric {
            Metric::Idle => row.idle_seconds = Some(k.value),
            Metric::Freq => row.lfu_frequency = Some(k.value),
            Metric::Memory | Metric::Elements | Metric::Serialized => {}
        }
        row
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TopKeysJson {
    pub n: usize,
    pub by_memory: Vec<TopKeyJson>,
    #[serde(default)]
    pub by_elements: Vec<TopKeyJson>,
    #[serde(default)]
    pub by_serialized: Vec<TopKeyJson>,
    #[serde(default)]
    pub by_type_memory: BTreeMap<String, Vec<TopKeyJson>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RangeJson {
    pub min: u64,
    pub max: u64,
    pub count: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HistogramJson {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub ranges: Vec<RangeJson>,
}

impl HistogramJson {
    pub fn new(h: &Histogram) -> Self {
        HistogramJson {
            count: h.count(),
            mean: if h.count() == 0 {
                0.0
            } else {
                h.sum() as f64 / h.count() as f64
            },
            p50: h.percentile(0.5),
            p90: h.percentile(0.9),
            p99: h.percentile(0.99),
            max: h.max(),
            ranges: h
                .ranges()
                .into_iter()
                .map(|(min, max, count)| RangeJson { min, max, count })
                .collect(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DistributionJson {
    #[serde(rename = "type")]
    pub type_name: String,
    pub elements: HistogramJson,
    pub serialized_bytes: HistogramJson,
    pub memory_bytes: HistogramJson,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlotJson {
    pub slot: u16,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClusterJson {
    pub slots_with_keys: usize,
    pub heaviest_slots: Vec<SlotJson>,
    #[serde(default)]
    pub hash_tags: GroupTableJson,
}

fn checksum_name(v: &ChecksumVerdict) -> &'static str {
    match v {
        ChecksumVerdict::Absent => "absent",
        ChecksumVerdict::Disabled => "disabled",
        ChecksumVerdict::Valid(_) => "valid",
        ChecksumVerdict::Mismatch { .. } => "mismatch",
        ChecksumVerdict::NotChecked => "not_checked",
    }
}

fn model_json(f: &FileOutcome) -> Option<ModelJson> {
    let allocator = f.allocator.as_ref()?;
    Some(ModelJson {
        allocator: allocator.into(),
        config: f
            .config
            .iter()
            .map(|(name, value)| ConfigJson {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        limits: f.profile.map(|p| p.limits),
        server: f.profile.map(|p| ServerJson {
            family: format!("{:?}", p.family).to_lowercase(),
            version: p.version.to_string(),
            version_from: if f.version_given {
                "--redis-version"
            } else {
                "dump"
            }
            .to_string(),
        }),
    })
}

pub fn file_json(f: &FileOutcome) -> FileJson {
    FileJson {
        path: f.name.clone(),
        magic: f.magic.clone(),
        rdb_version: f.rdb_version,
        server_version: f.server_version.clone(),
        ctime: f.ctime,
        used_mem: f.used_mem,
        model: model_json(f),
        file_bytes: f.file_bytes,
        keys_scanned: f.keys_scanned,
        ttl_reference_ms: f.reference_ms,
        checksum: checksum_name(&f.checksum).to_string(),
        partial: f.partial(),
        error: f.error.clone(),
        totals: f.totals.all().into(),
    }
}

fn top_json(t: &TopN, files: &[FileOutcome]) -> Vec<TopKeyJson> {
    t.sorted()
        .into_iter()
        .map(|k| TopKeyJson::new(k, files))
        .collect()
}

/// Every note a report on `a` carries, in the order tables print them.
pub fn notes(a: &Analysis<Aggregates>, filtered: bool) -> Vec<String> {
    let mut notes = file_notes(&a.files);
    if filtered {
        notes.push("filters applied: every number covers the matching keys only".into());
    }
    let m = &a.merged;
    notes.extend(under_note(m.prefixes.under()));
    for (i, t) in m.prefixes.tables().iter().enumerate() {
        notes.extend(cap_note(
            &format!("prefixes at depth {}", i + 1),
            t,
            "; raise --max-prefixes or see the patterns, which collapse ids",
        ));
    }
    notes.extend(cap_note(
        "patterns",
        m.patterns.table(),
        "; raise --max-prefixes",
    ));
    notes.extend(cap_note(
        "hash tags",
        m.slots.tags(),
        "; raise --max-prefixes",
    ));
    notes
}

pub fn build(a: &Analysis<Aggregates>, config: &AggregateConfig, filtered: bool) -> SummaryJson {
    build_with_rows(a, config, filtered, config.top_n)
}

/// [`build`] with `rows` rows in each prefix, pattern and pattern-encoding table (`diff`
/// takes every held row of the dumps it analyses).
pub fn build_with_rows(
    a: &Analysis<Aggregates>,
    config: &AggregateConfig,
    filtered: bool,
    rows: usize,
) -> SummaryJson {
    let m = &a.merged;
    let n = config.top_n;
    SummaryJson {
        schema_version: SCHEMA_VERSION,
        generator: format!("rdbscope {}", env!("CARGO_PKG_VERSION")),
        partial: a.partial(),
        options: OptionsJson {
            delimiter: escape_key(&config.prefixes.delimiter).into_owned(),
            depth: config.prefixes.depth,
            top: n,
            max_prefixes: config.prefixes.cap,
            filtered,
            under: (!config.prefixes.under.is_empty())
                .then(|| escape_key(&config.prefixes.under).into_owned()),
        },
        files: a.files.iter().map(file_json).collect(),
        totals: m.totals.all().into(),
        by_db: m
            .totals
            .by_db()
            .iter()
            .map(|(db, c)| DbJson {
                db: *db,
                counts: (*c).into(),
            })
            .collect(),
        by_type: m
            .totals
            .by_type()
            .iter()
            .map(|(t, c)| TypeJson {
                type_name: t.name().into_owned(),
                counts: (*c).into(),
            })
            .collect(),
        by_encoding: m
            .totals
            .by_encoding()
            .iter()
            .map(|(t, e, c)| EncodingJson {
                type_name: t.name().into_owned(),
                encoding: *e,
                counts: (*c).into(),
            })
            .collect(),
        ttl: TtlJson {
            buckets: m
                .ttl
                .buckets()
                .map(|(b, t)| TtlBucketJson {
                    bucket: b.name().to_string(),
                    keys: t.keys,
                    memory_bytes: t.memory_bytes,
                })
                .collect(),
            expiring_within: EXPIRING_WITHIN_MS
                .iter()
                .zip(m.ttl.expiring_within(&EXPIRING_WITHIN_MS))
                .map(|(&within_ms, t)| ExpiringJson {
                    within_ms,
                    keys: t.keys,
                    memory_bytes: t.memory_bytes,
                })
                .collect(),
            expiry_storms: m
                .ttl
                .storms(STORM_ROWS)
                .into_iter()
                .map(|(ms, t)| StormJson {
                    minute_start_ms: ms,
                    keys: t.keys,
                    memory_bytes: t.memory_bytes,
                })
                .collect(),
        },
        prefixes: PrefixesJson::new(&m.prefixes, rows, SortBy::Memory),
        patterns: GroupTableJson::new(m.patterns.table(), rows),
        top_keys: TopKeysJson {
            n,
            by_memory: top_json(&m.top.by_memory, &a.files),
            by_elements: top_json(&m.top.by_elements, &a.files),
            by_serialized: top_json(&m.top.by_serialized, &a.files),
            by_type_memory: RedisType::ALL
                .iter()
                .zip(&m.top.by_type)
                .map(|(t, top)| (t.name().to_string(), top_json(top, &a.files)))
                .filter(|(_, rows)| !rows.is_empty())
                .collect(),
        },
        distributions: RedisType::ALL
            .iter()
            .zip(&m.distributions.by_type)
            .filter(|(_, d)| d.serialized_bytes.count() > 0)
            .map(|(t, d)| DistributionJson {
                type_name: t.name().to_string(),
                elements: HistogramJson::new(&d.elements),
                serialized_bytes: HistogramJson::new(&d.serialized_bytes),
                memory_bytes: HistogramJson::new(&d.memory_bytes),
            })
            .collect(),
        cluster: ClusterJson {
            slots_with_keys: m.slots.slots_with_keys(),
            heaviest_slots: m
                .slots
                .heaviest(CLUSTER_ROWS, SortBy::Memory)
                .into_iter()
                .map(|(slot, l)| SlotJson {
                    slot,
                    keys: l.keys,
                    memory_bytes: l.memory_bytes,
                })
                .collect(),
            hash_tags: GroupTableJson::new(m.slots.tags(), CLUSTER_ROWS),
        },
        lru_idle_seconds: (m.idle_freq.idle_s.count() > 0)
            .then(|| HistogramJson::new(&m.idle_freq.idle_s)),
        lfu_frequency: (m.idle_freq.lfu_freq.count() > 0)
            .then(|| HistogramJson::new(&m.idle_freq.lfu_freq)),
        notes: notes(a, filtered),
        lint: None,
        pattern_encodings: Some(PatternEncodingsJson::new(m.encodings.table(), rows)),
        state: None,
    }
}

/// What every document of a table command starts with, as in summary.json.
#[derive(Serialize)]
pub struct Head {
    pub schema_version: u32,
    pub generator: String,
    pub partial: bool,
}

impl Head {
    pub fn new(files: &[FileOutcome]) -> Self {
        Head {
            schema_version: SCHEMA_VERSION,
            generator: format!("rdbscope {}", env!("CARGO_PKG_VERSION")),
            partial: files.iter().any(FileOutcome::partial),
        }
    }
}

/// `prefixes --format json`: summary.json's `prefixes` (or `patterns`) section with every
/// row held, the totals its shares are of, the files and the notes.
#[derive(Serialize)]
pub struct RollupJson {
    #[serde(flatten)]
    pub head: Head,
    pub options: RollupOptionsJson,
    pub files: Vec<FileJson>,
    pub totals: CountsJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefixes: Option<PrefixesJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patterns: Option<GroupTableJson>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct RollupOptionsJson {
    pub delimiter: String,
    pub depth: usize,
    pub max_prefixes: usize,
    pub under: Option<String>,
    /// `--sort`: `memory`, `keys` or `elements`.
    pub sort: &'static str,
    pub filtered: bool,
}

/// `top --format json`: summary.json's `top_keys` with the one ranking asked for
/// (`by_memory`, `by_elements`, `by_serialized`, `by_idle` or `by_freq`).
#[derive(Serialize)]
pub struct TopJson {
    #[serde(flatten)]
    pub head: Head,
    pub options: TopOptionsJson,
    pub files: Vec<FileJson>,
    pub totals: CountsJson,
    pub top_keys: BTreeMap<String, serde_json::Value>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct TopOptionsJson {
    pub top: usize,
    /// `--by`.
    pub by: &'static str,
    pub filtered: bool,
}

impl TopJson {
    /// The `n` first keys of `top`.
    pub fn new(
        top: &TopN,
        n: usize,
        files: &[FileOutcome],
        totals: Counts,
        filtered: bool,
        notes: Vec<String>,
    ) -> Self {
        let metric = top.metric();
        let keys: Vec<_> = top
            .sorted()
            .into_iter()
            .map(|k| TopKeyJson::ranked(k, files, metric))
            .collect();
        let mut top_keys = BTreeMap::new();
        top_keys.insert("n".to_string(), serde_json::json!(n));
        top_keys.insert(
            format!("by_{}", metric.ranking()),
            serde_json::to_value(keys).unwrap_or_default(),
        );
        TopJson {
            head: Head::new(files),
            options: TopOptionsJson {
                top: n,
                by: metric.ranking(),
                filtered,
            },
            files: files.iter().map(file_json).collect(),
            totals: totals.into(),
            top_keys,
            notes,
        }
    }
}

/// The name `--sort` gives `by`.
pub fn sort_name(by: SortBy) -> &'static str {
    match by {
        SortBy::Keys => "keys",
        SortBy::Memory => "memory",
        SortBy::Elements => "elements",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregates::key_columns::top_key_columns;
    use crate::model::key_stats::KeyStats;

    /// A top-key record holds the dump's name and then the key columns it keeps, under
    /// their names and in their order.
    #[test]
    fn top_key_records_follow_the_key_columns() {
        let key = TopKey::new(&KeyStats::new(), 0, 0);
        let json = serde_json::to_string(&TopKeyJson::new(&key, &[])).unwrap();
        let fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&json).unwrap();
        let expected: Vec<&str> = std::iter::once("file").chain(top_key_columns()).collect();
        let at = |name: &str| json.find(&format!("\"{name}\":")).unwrap();
        let mut written: Vec<&str> = fields.keys().map(String::as_str).collect();
        written.sort_by_key(|name| at(name));
        assert_eq!(written, expected);
    }
}
