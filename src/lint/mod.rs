//! `lint`: Redis key-design rules (docs/lint.md, from the specifications in
//! spec-rules.md) checked in the same pass as every other report.
//!
//! Rules about one key are evaluated while keys are folded ([`keys::KeyRules`]); rules
//! about groups of keys (patterns, expiry minutes, slots, dumps) are evaluated after the
//! merge from the aggregates `report` already builds ([`groups`]). Either way a rule ends
//! as a [`RuleTally`]: exact counts and sums, and the worst findings up to a cap, so
//! memory stays bounded whatever the number of violating keys.
//!
//! Layer: aggregates, beside (above) the `aggregates` module, whose tables the group
//! rules read. May import `rdb`, `text`, the `model`, the `pass` and `aggregates`; never
//! `report`, `commands` or `flags`.

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

pub mod groups;
pub mod keys;

use crate::aggregates::report::Tables;
use crate::aggregates::{AggregateConfig, Aggregates};
use crate::model::key_stats::KeyStats;
use crate::pass::analysis::Analysis;
use crate::pass::fold::{Aggregator, Source};
use crate::pass::totals::Totals;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::ops::AddAssign;
use std::sync::Arc;

/// How serious a finding is: `error` = the specifications say "mandatory", `warn` =
/// "recommended", `info` = advice. Ordered, so `--fail-on` compares; JSON names it as
/// [`Severity::name`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warn,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

/// Every rule, in the order reports list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    KeySpecialChars,
    KeyCharset,
    KeyTooLong,
    KeyNoNamespace,
    BigkeyString,
    BigkeyElements,
    BigkeyExpiring,
    ValueJsonString,
    TypeStringsAsHash,
    EncodingJustOverListpack,
    EncodingListpackTooLong,
    TtlMissing,
    TtlClustered,
    TtlAlreadyExpired,
    IdleCold,
    HotLfu,
    DbMultiple,
    ClusterShardTooBig,
    ClusterSlotSkew,
}

impl Rule {
    pub const ALL: [Rule; 19] = [
        Rule::KeySpecialChars,
        Rule::KeyCharset,
        Rule::KeyTooLong,
        Rule::KeyNoNamespace,
        Rule::BigkeyString,
        Rule::BigkeyElements,
        Rule::BigkeyExpiring,
        Rule::ValueJsonString,
        Rule::TypeStringsAsHash,
        Rule::EncodingJustOverListpack,
        Rule::EncodingListpackTooLong,
        Rule::TtlMissing,
        Rule::TtlClustered,
        Rule::TtlAlreadyExpired,
        Rule::IdleCold,
        Rule::HotLfu,
        Rule::DbMultiple,
        Rule::ClusterShardTooBig,
        Rule::ClusterSlotSkew,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::KeySpecialChars => "key.special-chars",
            Rule::KeyCharset => "key.charset",
            Rule::KeyTooLong => "key.too-long",
            Rule::KeyNoNamespace => "key.no-namespace",
            Rule::BigkeyString => "bigkey.string",
            Rule::BigkeyElements => "bigkey.elements",
            Rule::BigkeyExpiring => "bigkey.expiring",
            Rule::ValueJsonString => "value.json-string",
            Rule::TypeStringsAsHash => "type.strings-as-hash",
            Rule::EncodingJustOverListpack => "encoding.just-over-listpack",
            Rule::EncodingListpackTooLong => "encoding.listpack-too-long",
            Rule::TtlMissing => "ttl.missing",
            Rule::TtlClustered => "ttl.clustered",
            Rule::TtlAlreadyExpired => "ttl.already-expired",
            Rule::IdleCold => "idle.cold",
            Rule::HotLfu => "hot.lfu",
            Rule::DbMultiple => "db.multiple",
            Rule::ClusterShardTooBig => "cluster.shard-too-big",
            Rule::ClusterSlotSkew => "cluster.slot-skew",
        }
    }

    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.id() == id)
    }

    /// The rules `enabled` (indexed like [`Rule::ALL`]) leaves out.
    fn disabled(enabled: &[bool; Rule::ALL.len()]) -> Vec<Rule> {
        Rule::ALL
            .into_iter()
            .zip(enabled)
            .filter(|(_, on)| !**on)
            .map(|(r, _)| r)
            .collect()
    }

    pub fn severity(self) -> Severity {
        match self {
            Rule::KeySpecialChars | Rule::BigkeyString | Rule::BigkeyElements => Severity::Error,
            Rule::KeyTooLong
            | Rule::BigkeyExpiring
            | Rule::ValueJsonString
            | Rule::TypeStringsAsHash
            | Rule::TtlMissing
            | Rule::TtlClustered
            | Rule::ClusterShardTooBig
            | Rule::ClusterSlotSkew => Severity::Warn,
            Rule::KeyCharset
            | Rule::KeyNoNamespace
            | Rule::EncodingJustOverListpack
            | Rule::EncodingListpackTooLong
            | Rule::TtlAlreadyExpired
            | Rule::IdleCold
            | Rule::HotLfu
            | Rule::DbMultiple => Severity::Info,
        }
    }

    /// One line of advice, from the specifications.
    pub fn advice(self) -> &'static str {
        match self {
            Rule::KeySpecialChars => "such keys break tooling and scripts; rename",
            Rule::KeyCharset => "one naming alphabet across teams: start with a letter, use A-Za-z0-9 _ . :",
            Rule::KeyTooLong => "shorten segments (user:{uid}:friends:messages:{mid} -> u:{uid}:fr:m:{mid})",
            Rule::KeyNoNamespace => "use business:table:id",
            Rule::BigkeyString => "split, compress client-side, or move fields into a hash",
            Rule::BigkeyElements => "shard into key:{n} buckets (hash(field) mod N); iterate with the SCAN family",
            Rule::BigkeyExpiring => "expiry deletes it synchronously unless lazyfree-lazy-expire yes; delete progressively (HSCAN+HDEL, SSCAN+SREM, ZREMRANGEBYRANK, LTRIM) or UNLINK",
            Rule::ValueJsonString => "store fields in a hash (HSET) or members in a set/zset; keep full JSON only as a fallback copy with a TTL",
            Rule::TypeStringsAsHash => "one hash per entity (HSET user:1 name .. age ..)",
            Rule::EncodingJustOverListpack => "raising the limit (or trimming one long field) would switch it to the compact encoding",
            Rule::EncodingListpackTooLong => "listpacks trade CPU for memory (linear scans on every access); keep entries small",
            Rule::TtlMissing => "Redis is not a trash can: set an expiry (a 30-day fallback TTL at least)",
            Rule::TtlClustered => "add random jitter to TTLs (base + rand(0..3600) s) to avoid expiry storms",
            Rule::TtlAlreadyExpired => "dead weight until the server evicts them; fine in small numbers",
            Rule::IdleCold => "cold data: archive or expire",
            Rule::HotLfu => "hot key: local cache, or split into shards key:{shard}",
            Rule::DbMultiple => "numbered dbs are weakly supported by clients and share one thread; prefer separate instances",
            Rule::ClusterShardTooBig => "split the shard: large shards slow failover, BGSAVE and full resync",
            Rule::ClusterSlotSkew => "a hash tag {...} or a big key concentrates data in one slot",
        }
    }

    /// Rules that need `--profile strict`.
    fn strict_only(self) -> bool {
        self == Rule::KeyCharset
    }

    /// Rules about a cluster's shards, checked only when the dumps are known to be some
    /// ([`LintConfig::cluster`], `groups::is_cluster`).
    pub fn cluster_only(self) -> bool {
        matches!(self, Rule::ClusterShardTooBig | Rule::ClusterSlotSkew)
    }
}

/// The thresholds of every rule; each has a command-line flag (`rdbscope lint --help`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// key.too-long: key bytes above this.
    pub key_max_bytes: u64,
    /// bigkey.string: value bytes above this.
    pub bigkey_string_bytes: u64,
    /// bigkey.elements: elements above this.
    pub bigkey_elements: u64,
    /// value.json-string: JSON object/array strings above this many bytes…
    pub json_string_bytes: u64,
    /// …or JSON arrays with more items than this.
    pub json_array_items: u64,
    /// type.strings-as-hash: at least this many field names per entity pattern…
    pub strings_as_hash_fields: u64,
    /// …each seen on at least this many ids…
    pub strings_as_hash_ids: u64,
    /// …with values no longer than this (small enough for a listpack hash).
    pub strings_as_hash_value_bytes: u64,
    /// encoding.just-over-listpack: within this factor of the listpack limits.
    pub listpack_margin: u64,
    /// encoding.listpack-too-long: listpack/ziplist entries above this.
    pub listpack_max_entries: u64,
    /// ttl.clustered: a minute with at least this many expiring keys…
    pub ttl_clustered_keys: u64,
    /// …and at least this percentage of all keys that will expire.
    pub ttl_clustered_percent: f64,
    /// idle.cold: idle seconds above this.
    pub idle_cold_seconds: u64,
    /// hot.lfu: LFU counter at or above this.
    pub hot_lfu: u8,
    /// db.multiple: dbs with keys above this.
    pub max_dbs: u64,
    /// cluster.shard-too-big: estimated memory of one dump above this.
    pub shard_max_bytes: u64,
    /// cluster.slot-skew: a slot or tag above this many times the mean…
    pub slot_skew_factor: f64,
    /// …and above this percentage of the memory of the dumps.
    pub slot_skew_percent: f64,
}

/// What a lint run checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LintConfig {
    pub thresholds: Thresholds,
    /// Indexed like [`Rule::ALL`]; in summary.json, the ids of the rules left out.
    #[serde(
        rename = "disabled",
        serialize_with = "serialize_enabled",
        deserialize_with = "deserialize_enabled"
    )]
    enabled: [bool; Rule::ALL.len()],
    /// Findings kept per rule (the worst by memory); counts stay exact.
    pub max_findings: usize,
    /// The key segment delimiter (key.no-namespace, type.strings-as-hash).
    #[serde(
        serialize_with = "crate::aggregates::state_fields::bytes::serialize",
        deserialize_with = "crate::aggregates::state_fields::bytes::deserialize_non_empty"
    )]
    pub delimiter: Vec<u8>,
    /// Patterns kept by type.strings-as-hash before the rest goes to `(other)`.
    pub group_cap: usize,
    /// `--cluster`: the user says the dumps are a cluster's shards, so the cluster rules
    /// apply even to one dump without SLOT_INFO records.
    #[serde(default)]
    pub cluster: bool,
}

impl LintConfig {
    /// Every rule except `disabled`; strict-only rules only when `strict`.
    pub fn new(
        thresholds: Thresholds,
        disabled: &[Rule],
        strict: bool,
        max_findings: usize,
        delimiter: Vec<u8>,
        group_cap: usize,
    ) -> Self {
        let enabled = Rule::ALL.map(|r| !disabled.contains(&r) && (strict || !r.strict_only()));
        LintConfig {
            thresholds,
            enabled,
            max_findings,
            delimiter,
            group_cap,
            cluster: false,
        }
    }

    pub fn enabled(&self, rule: Rule) -> bool {
        self.enabled[rule as usize]
    }
}

fn serialize_enabled<S: Serializer>(
    enabled: &[bool; Rule::ALL.len()],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(Rule::disabled(enabled))
}

fn deserialize_enabled<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<[bool; Rule::ALL.len()], D::Error> {
    let disabled = Vec::<Rule>::deserialize(d)?;
    Ok(Rule::ALL.map(|r| !disabled.contains(&r)))
}

/// A rule as its id (`bigkey.string`).
impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = String::deserialize(d)?;
        Rule::from_id(&id)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown lint rule {id:?}")))
    }
}

/// What a finding is about.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Subject {
    Key(#[serde(with = "crate::aggregates::state_fields::bytes")] Box<[u8]>),
    Pattern(#[serde(with = "crate::aggregates::state_fields::bytes")] Box<[u8]>),
    /// Start of the minute, Unix ms.
    Minute(i64),
    Slot(u16),
    Tag(#[serde(with = "crate::aggregates::state_fields::bytes")] Box<[u8]>),
    /// A dump, by the path given on the command line.
    File(String),
}

impl Subject {
    /// The field name in JSON and the `subject_kind` CSV column.
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Key(_) => "key",
            Subject::Pattern(_) => "pattern",
            Subject::Minute(_) => "minute",
            Subject::Slot(_) => "slot",
            Subject::Tag(_) => "tag",
            Subject::File(_) => "file",
        }
    }
}

/// One violation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: Rule,
    /// For per-key findings.
    pub db: Option<u64>,
    pub subject: Subject,
    /// What was measured, in the unit of the threshold (see docs/lint.md).
    pub value: i64,
    pub threshold: i64,
    /// Keys involved.
    pub keys: u64,
    pub memory_bytes: u64,
    /// Estimated memory saved by following the advice, where the memory model can say.
    pub saving_bytes: Option<u64>,
}

impl Finding {
    /// A finding over keys grouped by `subject` (a pattern, minute, slot, tag or dump): of
    /// no one db, and with no saving the memory model can tell.
    fn of_group(
        rule: Rule,
        subject: Subject,
        (value, threshold): (i64, i64),
        keys: u64,
        memory_bytes: u64,
    ) -> Self {
        Finding {
            rule,
            db: None,
            subject,
            value,
            threshold,
            keys,
            memory_bytes,
            saving_bytes: None,
        }
    }

    /// Worst first: most memory, then the larger measurement, then subject order, so
    /// the kept findings do not depend on how keys were split between threads.
    fn worst_first(a: &Finding, b: &Finding) -> Ordering {
        (b.memory_bytes, b.value)
            .cmp(&(a.memory_bytes, a.value))
            .then_with(|| (a.db, &a.subject).cmp(&(b.db, &b.subject)))
    }
}

/// The worst `cap` findings of a rule and exact totals over all of them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RuleTally {
    pub findings: u64,
    pub keys: u64,
    pub memory_bytes: u64,
    /// Worst first once evaluated; at most `cap`.
    pub worst: Vec<Finding>,
    cap: usize,
    /// Memory of the last kept finding once `cap` are kept: anything lighter cannot
    /// enter, so callers skip building it (copying its key). Set again by
    /// [`RuleTally::trim`] once read back.
    #[serde(skip)]
    floor: u64,
}

impl RuleTally {
    pub fn new(cap: usize) -> Self {
        RuleTally {
            cap,
            ..RuleTally::default()
        }
    }

    /// Counts a finding; whether it may be among the worst (then [`RuleTally::keep`] it).
    #[inline]
    pub fn tally(&mut self, keys: u64, memory_bytes: u64) -> bool {
        self.findings = self.findings.saturating_add(1);
        self.keys = self.keys.saturating_add(keys);
        self.memory_bytes = self.memory_bytes.saturating_add(memory_bytes);
        self.cap > 0 && memory_bytes >= self.floor
    }

    /// Keeps a finding already counted by [`RuleTally::tally`].
    pub fn keep(&mut self, f: Finding) {
        self.worst.push(f);
        // Trim in batches: sorting on every push would cost a log factor per finding.
        if self.worst.len() >= self.cap.max(16).saturating_mul(2) {
            self.trim();
        }
    }

    pub fn add(&mut self, f: Finding) {
        if self.tally(f.keys, f.memory_bytes) {
            self.keep(f);
        }
    }

    pub(super) fn trim(&mut self) {
        self.worst.sort_by(Finding::worst_first);
        self.worst.truncate(self.cap);
        if self.worst.len() == self.cap {
            self.floor = self.worst.last().map_or(0, |f| f.memory_bytes);
        }
    }

    fn merge(&mut self, o: RuleTally) {
        self.findings = self.findings.saturating_add(o.findings);
        self.keys = self.keys.saturating_add(o.keys);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
        self.worst.extend(o.worst);
        self.trim();
    }
}

/// The outcome of a lint: one tally per enabled rule, in [`Rule::ALL`] order.
#[derive(Debug)]
pub struct LintReport {
    pub rules: Vec<(Rule, RuleTally)>,
    /// Enabled cluster rules left unchecked: nothing said the dumps are a cluster's shards.
    pub not_a_cluster: Vec<Rule>,
}

impl LintReport {
    /// Every kept finding, rule by rule, worst first within a rule.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.rules.iter().flat_map(|(_, s)| &s.worst)
    }

    /// Whether some finding is at or above `level`.
    pub fn fails(&self, level: Severity) -> bool {
        self.rules
            .iter()
            .any(|(r, s)| s.findings > 0 && r.severity() >= level)
    }
}

/// [`Aggregates`] and the per-key rules, folded in one pass.
pub struct Linted {
    pub aggregates: Aggregates,
    pub keys: keys::KeyRules,
    /// Whether the key rules can take each key's pattern from the pattern table (built
    /// with the same delimiter over the whole keyspace) rather than build it again.
    shared_pattern: bool,
}

impl Linted {
    pub fn new(aggregates: &AggregateConfig, lint: &Arc<LintConfig>, source: Source) -> Self {
        Self::of(
            Aggregates::new(aggregates, source),
            keys::KeyRules::new(lint.clone(), source),
        )
    }

    /// The aggregates and key rules of one fold, or restored from a run.
    pub fn of(aggregates: Aggregates, keys: keys::KeyRules) -> Self {
        Linted {
            shared_pattern: aggregates.patterns.built_with(&keys.config().delimiter),
            aggregates,
            keys,
        }
    }
}

/// What a chunk of the file fills of [`Linted`]: the aggregates' heavy-hitter tables and
/// the small-string pattern table.
pub struct LintedTables {
    tables: Tables,
    strings: keys::SmallStrings,
    /// [`Linted::shared_pattern`].
    shared_pattern: bool,
}

impl Aggregator for Linted {
    type InOrder = LintedTables;

    fn in_order(&self) -> LintedTables {
        LintedTables {
            tables: self.aggregates.in_order(),
            strings: self.keys.small_strings(),
            shared_pattern: self.shared_pattern,
        }
    }

    #[inline(always)]
    fn add(&mut self, t: &mut LintedTables, k: &KeyStats<'_>) {
        self.aggregates.add(&mut t.tables, k);
        let seen = t.shared_pattern.then(|| t.tables.seen());
        self.keys.add(k, seen);
        let pattern = t.shared_pattern.then(|| t.tables.pattern());
        t.strings.add(k, pattern);
    }

    fn merge_in_order(&mut self, t: &mut LintedTables) {
        self.aggregates.merge_in_order(&mut t.tables);
        self.keys.absorb_small_strings(&mut t.strings);
    }

    fn trim(&mut self) {
        self.aggregates.trim();
        self.keys.trim();
    }

    fn totals(&self) -> &Totals {
        self.aggregates.totals()
    }
}

impl AddAssign for Linted {
    fn add_assign(&mut self, o: Linted) {
        self.aggregates += o.aggregates;
        self.keys += o.keys;
    }
}

/// Splits a linted analysis into the plain one the other reports read, and the lint.
pub fn evaluate(analysis: Analysis<Linted>) -> (Analysis<Aggregates>, LintReport) {
    let Analysis { files, merged } = analysis;
    let Linted {
        aggregates, keys, ..
    } = merged;
    let analysis = Analysis {
        files,
        merged: aggregates,
    };
    let report = groups::evaluate(&analysis, keys);
    (analysis, report)
}
