//! What `diff` says changed, as types: one per section of the comparison (totals, per-db,
//! per-type and per-encoding figures, prefix and pattern rows, big keys, TTL classes, lint
//! findings, encoding crossings, alerts), [`Diff`] holding them all. diff.json is these
//! types serialized (docs/diff-json.md).

use crate::aggregates::figure::percent_of;
use crate::lint::Severity;
use crate::report::run::summary::{CountsJson, TopKeyJson};
use serde::Serialize;

/// What `diff` was asked for.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// Rows per list (growers, shrinkers, …).
    pub rows: usize,
    /// Changes of less memory than this are left out of the lists.
    pub min_change: u64,
    /// Alert when total memory grew by more than this percentage.
    pub fail_on_growth: Option<f64>,
    /// Alert when a prefix's memory grew by more than this percentage.
    pub fail_on_prefix_growth: Option<f64>,
}

/// One side of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// The arguments as given.
    pub source: String,
    /// `dumps` (analysed by this run) or `summary` (a summary.json read back).
    pub kind: &'static str,
    pub files: Vec<String>,
    pub partial: bool,
}

/// Every key above a size, on both sides, with each one's state on the other side: when
/// both sides are dumps, big keys are compared exactly.
#[derive(Clone, Debug)]
pub struct ExactKeys {
    pub min_key_bytes: u64,
    /// Every OLD key of at least `min_key_bytes`, and OLD's state of every NEW key of at
    /// least `min_key_bytes` that OLD holds.
    pub old: Vec<TopKeyJson>,
    /// The same for NEW.
    pub new: Vec<TopKeyJson>,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct MetricChange {
    pub old: u64,
    pub new: u64,
    pub change: i64,
    /// `null` when `old` is 0.
    pub change_percent: Option<f64>,
}

impl MetricChange {
    pub fn new(old: u64, new: u64) -> Self {
        MetricChange {
            old,
            new,
            change: signed_change(old, new),
            change_percent: percent_of(new as f64 - old as f64, old),
        }
    }
}

pub(super) fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `new - old`, saturating.
pub fn signed_change(old: u64, new: u64) -> i64 {
    signed(new).saturating_sub(signed(old))
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct CountsChange {
    pub keys: MetricChange,
    pub memory_bytes: MetricChange,
    pub serialized_bytes: MetricChange,
    pub elements: MetricChange,
    pub keys_with_ttl: MetricChange,
}

impl CountsChange {
    pub(super) fn new(old: &CountsJson, new: &CountsJson) -> Self {
        CountsChange {
            keys: MetricChange::new(old.keys, new.keys),
            memory_bytes: MetricChange::new(old.memory_bytes, new.memory_bytes),
            serialized_bytes: MetricChange::new(old.serialized_bytes, new.serialized_bytes),
            elements: MetricChange::new(old.elements, new.elements),
            keys_with_ttl: MetricChange::new(old.keys_with_ttl, new.keys_with_ttl),
        }
    }

    pub fn changed(&self) -> bool {
        [
            self.keys,
            self.memory_bytes,
            self.serialized_bytes,
            self.elements,
            self.keys_with_ttl,
        ]
        .iter()
        .any(|m| m.change != 0)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct DbChange {
    pub db: u64,
    #[serde(flatten)]
    pub counts: CountsChange,
}

#[derive(Clone, Debug, Serialize)]
pub struct TypeChange {
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(flatten)]
    pub counts: CountsChange,
}

#[derive(Clone, Debug, Serialize)]
pub struct EncodingChange {
    #[serde(rename = "type")]
    pub type_name: String,
    pub encoding: String,
    #[serde(flatten)]
    pub counts: CountsChange,
}

/// What a side holds for a name: at least `min`, at most `max` (equal when exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

/// A change between two [`Range`]s: anywhere from `min` to `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Delta {
    pub min: i64,
    pub max: i64,
    /// The ranges overlap: the change may be 0 — too small for the rows' error bounds
    /// to give it a sign, so it is not stated as a number.
    pub within_bounds: bool,
}

impl Delta {
    pub(super) fn between(old: Range, new: Range) -> Self {
        let min = signed(new.min).saturating_sub(signed(old.max));
        let max = signed(new.max).saturating_sub(signed(old.min));
        Delta {
            min,
            max,
            within_bounds: min <= 0 && max >= 0 && (min, max) != (0, 0),
        }
    }

    pub fn exact(&self) -> bool {
        self.min == self.max
    }

    /// The largest change the ranges allow, either way.
    pub(super) fn largest(&self) -> u64 {
        self.min.unsigned_abs().max(self.max.unsigned_abs())
    }
}

/// How a prefix or pattern changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupStatus {
    /// Not on OLD, on NEW.
    Appeared,
    /// On OLD, not on NEW.
    Vanished,
    Grew,
    Shrank,
    /// Changed by less than the rows' error bounds allow to tell.
    WithinBounds,
}

#[derive(Clone, Debug, Serialize)]
pub struct GroupChange {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_base64: Option<String>,
    /// By memory.
    pub status: GroupStatus,
    pub old_keys: Range,
    pub new_keys: Range,
    pub keys_change: Delta,
    pub old_memory_bytes: Range,
    pub new_memory_bytes: Range,
    pub memory_change: Delta,
    /// The least growth (or shrinkage) the ranges allow, in percent of the most (least)
    /// OLD may have held; `null` for a name OLD did not hold.
    pub memory_change_percent: Option<f64>,
}

/// The changes of one prefix depth, or of the patterns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GroupTableChange {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// Names whose memory surely changed by at least `--min-change`, by status.
    pub appeared: usize,
    pub vanished: usize,
    pub grew: usize,
    pub shrank: usize,
    /// Names that may have changed by `--min-change` or more, but by less than their
    /// rows' error bounds allow to tell.
    pub within_bounds: usize,
    /// Heaviest first; at most `rows` each. Appeared and vanished names are listed apart.
    pub growers_by_memory: Vec<GroupChange>,
    pub shrinkers_by_memory: Vec<GroupChange>,
    pub growers_by_keys: Vec<GroupChange>,
    pub shrinkers_by_keys: Vec<GroupChange>,
    pub appeared_names: Vec<GroupChange>,
    pub vanished_names: Vec<GroupChange>,
}

impl GroupTableChange {
    /// Some name surely changed (a change within bounds may be none).
    pub(super) fn changed(&self) -> bool {
        self.appeared + self.vanished + self.grew + self.shrank > 0
    }
}

/// How a big key changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStatus {
    /// Not in OLD.
    New,
    /// Not in NEW.
    Vanished,
    Grew,
    Shrank,
    /// In NEW's top N but not in OLD's: OLD held it with at most `old_memory_at_most`, or
    /// not at all.
    EnteredTop,
    /// In OLD's top N but not in NEW's.
    LeftTop,
}

#[derive(Clone, Debug, Serialize)]
pub struct KeyChange {
    pub status: KeyStatus,
    pub db: u64,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_base64: Option<String>,
    #[serde(rename = "type")]
    pub type_name: String,
    pub old_encoding: Option<String>,
    pub new_encoding: Option<String>,
    pub old_memory_bytes: Option<u64>,
    pub new_memory_bytes: Option<u64>,
    /// For a key that left or entered a top N: the most the side that does not list it
    /// may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_memory_at_most: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_memory_at_most: Option<u64>,
    pub old_elements: Option<u64>,
    pub new_elements: Option<u64>,
}

impl KeyChange {
    /// The memory change, as far as it is known (a side's "at most" counts as 0).
    pub fn memory_change(&self) -> i64 {
        signed(self.new_memory_bytes.unwrap_or(0))
            .saturating_sub(signed(self.old_memory_bytes.unwrap_or(0)))
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BigKeysChange {
    /// Keys of each side's top N by memory compared.
    pub n: usize,
    /// When both sides are dumps: every key of at least this many bytes was compared,
    /// exactly.
    pub exact_above_bytes: Option<u64>,
    /// Changes beyond bounds first, then keys that entered or left a top N; biggest
    /// change first within each; at most `--rows`.
    pub keys: Vec<KeyChange>,
    /// Changed keys left out of `keys` by `--rows`…
    pub omitted: usize,
    /// …of which entered or left a top N.
    pub omitted_churn: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct TtlClassChange {
    pub bucket: String,
    pub keys: MetricChange,
    pub memory_bytes: MetricChange,
}

/// A pattern whose keys without a TTL grew by more than its keys: keys lost their TTL
/// (or new keys came without one while others went).
#[derive(Clone, Debug, Serialize)]
pub struct TtlLossChange {
    pub pattern: String,
    pub keys_change: i64,
    pub no_ttl_keys_change: i64,
    /// `no_ttl_keys_change` less the growth in keys: keys that went without a TTL.
    pub lost_ttl_keys: u64,
    /// Both rows exact.
    pub exact: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct StormChange {
    pub minute_start_ms: i64,
    pub keys: u64,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TtlChange {
    pub classes: Vec<TtlClassChange>,
    pub keys_without_ttl: MetricChange,
    /// Keys that had a TTL in OLD and have none in NEW, counted key by key (both sides
    /// dumps); `null` otherwise.
    pub lost_ttl_keys: Option<u64>,
    /// By pattern (net figures), at most `rows`.
    pub lost_ttl_by_pattern: Vec<TtlLossChange>,
    /// Expiry minutes among NEW's busiest that OLD did not list.
    pub new_storms: Vec<StormChange>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RuleChange {
    pub rule: String,
    pub severity: Severity,
    pub findings: MetricChange,
    pub keys: MetricChange,
    pub memory_bytes: MetricChange,
}

#[derive(Clone, Debug, Serialize)]
pub struct FindingChange {
    pub rule: String,
    pub severity: Severity,
    pub db: Option<u64>,
    pub subject_kind: &'static str,
    pub subject: String,
    pub keys: u64,
    pub memory_bytes: u64,
    /// `false` when the other side listed only its worst findings of this rule
    /// (`--max-findings`): the finding may be there unlisted.
    pub certain: bool,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LintChange {
    /// Rules whose counts changed.
    pub rules: Vec<RuleChange>,
    pub new: Vec<FindingChange>,
    pub resolved: Vec<FindingChange>,
}

/// Keys of a pattern that moved between a compact encoding and its big one.
#[derive(Clone, Debug, Serialize)]
pub struct Crossing {
    pub pattern: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub from: String,
    pub to: String,
    /// Net keys that moved (the smaller of what `from` lost and `to` gained).
    pub keys: u64,
    /// Memory of the pattern's keys of this type, every encoding.
    pub old_memory_bytes: u64,
    pub new_memory_bytes: u64,
    /// Every row involved was exact on both sides.
    pub exact: bool,
}

/// A growth past a `--fail-on-growth` / `--fail-on-prefix-growth` limit.
#[derive(Clone, Debug, Serialize)]
pub struct Alert {
    pub flag: &'static str,
    /// `total memory` or the prefix.
    pub subject: String,
    pub growth_percent: Option<f64>,
    pub limit_percent: f64,
}

impl Alert {
    /// `FLAG: SUBJECT grew 12.3 % (limit 10 %)`, as the tables and stderr say it.
    pub fn describe(&self) -> String {
        format!(
            "{}: {} grew {} (limit {} %)",
            self.flag,
            self.subject,
            self.growth_percent
                .map_or_else(|| "from nothing".into(), |p| format!("{p:.1} %")),
            self.limit_percent
        )
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    pub old: Side,
    pub new: Side,
    /// Whether something surely differs: totals, or a listed change (a prefix or pattern
    /// change within its error bounds may be none).
    pub changed: bool,
    pub totals: CountsChange,
    pub by_db: Vec<DbChange>,
    pub by_type: Vec<TypeChange>,
    pub by_encoding: Vec<EncodingChange>,
    pub prefixes: Vec<GroupTableChange>,
    pub patterns: GroupTableChange,
    pub big_keys: BigKeysChange,
    pub ttl: TtlChange,
    pub lint: Option<LintChange>,
    pub encoding_crossings: Vec<Crossing>,
    pub alerts: Vec<Alert>,
    pub notes: Vec<String>,
}
