//! Rules about groups of keys, evaluated after the merge from the aggregates every
//! report builds: keys without TTL per pattern, strings that should be one hash per
//! entity, expiry minutes, slots and hash tags, and whole dumps.

use super::keys::{field_of, KeyRules};
use super::{Finding, LintConfig, LintReport, Rule, RuleTally, Subject};
use crate::aggregates::figure::{ceil_count, percent, signed};
use crate::aggregates::groups::{GroupRow, GroupStats};
use crate::aggregates::ttl::TtlBucket;
use crate::aggregates::Aggregates;
use crate::model::allocator::Allocator;
use crate::model::encoding::LISTPACK_OVERHEAD;
use crate::model::memory::{DICT_ENTRY, ROBJ};
use crate::pass::analysis::Analysis;
use std::collections::BTreeMap;

/// Listpack entry overhead of a short string: encoding byte and back-length byte.
const ENTRY_OVERHEAD: u64 = 2;

/// Every enabled rule's tally, per-key rules from `keys`, group rules from `a`.
pub fn evaluate(a: &Analysis<Aggregates>, keys: KeyRules) -> LintReport {
    let config = keys.config().clone();
    let cap = config.max_findings;
    let mut groups: Vec<(Rule, RuleTally)> = Vec::new();
    let mut rule = |r: Rule, findings: Vec<Finding>| {
        let mut s = RuleTally::new(cap);
        for f in findings {
            s.add(f);
        }
        s.trim();
        groups.push((r, s));
    };
    let m = &a.merged;
    rule(Rule::TtlMissing, ttl_missing(m));
    rule(Rule::TypeStringsAsHash, strings_as_hash(&keys, &config));
    rule(Rule::TtlClustered, ttl_clustered(m, &config));
    rule(Rule::ClusterSlotSkew, slot_skew(m, &config));
    let t = &config.thresholds;
    let mut dbs = Vec::new();
    let mut big = Vec::new();
    for f in &a.files {
        let all = f.totals.all();
        let subject = || Subject::File(f.name.clone());
        let count = f.totals.by_db().len() as u64;
        if count > t.max_dbs {
            dbs.push(Finding::of_group(
                Rule::DbMultiple,
                subject(),
                (signed(count), signed(t.max_dbs)),
                all.keys,
                all.memory_bytes,
            ));
        }
        if all.memory_bytes > t.shard_max_bytes {
            big.push(Finding::of_group(
                Rule::ClusterShardTooBig,
                subject(),
                (signed(all.memory_bytes), signed(t.shard_max_bytes)),
                all.keys,
                all.memory_bytes,
            ));
        }
    }
    rule(Rule::DbMultiple, dbs);
    rule(Rule::ClusterShardTooBig, big);
    let mut all: BTreeMap<Rule, RuleTally> = keys.into_rules().collect();
    for (r, s) in groups {
        all.insert(r, s);
    }
    let cluster = is_cluster(a, &config);
    let not_a_cluster = Rule::ALL
        .into_iter()
        .filter(|r| r.cluster_only() && config.enabled(*r) && !cluster)
        .collect();
    let rules = all
        .into_iter()
        .filter(|(r, _)| config.enabled(*r) && (cluster || !r.cluster_only()))
        .map(|(r, mut s)| {
            s.trim();
            (r, s)
        })
        .collect();
    LintReport {
        rules,
        not_a_cluster,
    }
}

/// Whether the dumps are a cluster's shards, as far as anything says: never when a dump
/// says it is not a cluster's; when `--cluster` says so (Valkey 9 clusters may hold several
/// dbs); else not when a dump holds keys in several dbs (a Redis cluster has only db 0),
/// and yes when several dumps are analysed together or a dump holds SLOT_INFO records
/// (written by cluster nodes since Redis 7.4).
fn is_cluster(a: &Analysis<Aggregates>, config: &LintConfig) -> bool {
    let files = &a.files;
    if files.iter().any(|f| f.cluster == Some(false)) {
        return false;
    }
    config.cluster
        || (files.iter().all(|f| f.totals.by_db().len() <= 1)
            && (files.len() > 1 || files.iter().any(|f| f.cluster == Some(true))))
}

/// One finding per pattern holding keys without an expiry: value = their share of the
/// pattern's keys in percent; keys and memory = those without TTL. Names past the
/// pattern cap are reported as `(other)`, so the totals stay exact.
fn ttl_missing(m: &Aggregates) -> Vec<Finding> {
    let table = m.patterns.table();
    let other = (table.overflowed()).then(|| (&b"(other)"[..], table.other()));
    table
        .rows()
        .into_iter()
        .map(|r| (r.name, r.stats))
        .chain(other)
        .filter(|(_, g)| g.no_ttl_keys > 0)
        .map(|(name, g)| {
            Finding::of_group(
                Rule::TtlMissing,
                Subject::Pattern(name.into()),
                (signed(percent(g.no_ttl_keys, g.keys)), 0),
                g.no_ttl_keys,
                g.no_ttl_memory_bytes,
            )
        })
        .collect()
}

/// Entity patterns (`user:*`) whose small string keys come in at least
/// `strings_as_hash_fields` field names (`user:*:name`, `user:*:age`, …) each seen on at
/// least `strings_as_hash_ids` ids. Value = the field names; the saving is the strings'
/// memory minus one listpack hash per entity holding every field.
fn strings_as_hash(keys: &KeyRules, config: &LintConfig) -> Vec<Finding> {
    let t = &config.thresholds;
    let mut entities: BTreeMap<&[u8], Vec<(&[u8], &GroupStats)>> = BTreeMap::new();
    for GroupRow {
        name: pattern,
        stats: g,
        ..
    } in keys.strings().rows()
    {
        if g.keys >= t.strings_as_hash_ids {
            if let Some((parent, field)) = field_of(pattern, &config.delimiter) {
                entities.entry(parent).or_default().push((field, g));
            }
        }
    }
    let allocator = keys.allocator();
    entities
        .into_iter()
        .filter(|(_, fields)| fields.len() as u64 >= t.strings_as_hash_fields)
        .map(|(parent, fields)| {
            let key_count = fields.iter().map(|(_, g)| g.keys).sum();
            let memory = fields.iter().map(|(_, g)| g.memory_bytes).sum::<u64>();
            let hashes = hash_memory(allocator, &fields, config.delimiter.len() as u64);
            Finding {
                rule: Rule::TypeStringsAsHash,
                db: None,
                subject: Subject::Pattern(parent.into()),
                value: signed(fields.len() as u64),
                threshold: signed(t.strings_as_hash_fields),
                keys: key_count,
                memory_bytes: memory,
                saving_bytes: Some(memory.saturating_sub(hashes)),
            }
        })
        .collect()
}

/// Memory of one listpack hash per entity holding the fields' average values. Entities
/// are as many as the most common field has keys; an entity's key name is the average
/// field key minus `:field`. For strings, `elements` is the value length (decompressed:
/// what the server holds, whatever the dump stored).
fn hash_memory(a: Allocator, fields: &[(&[u8], &GroupStats)], delimiter: u64) -> u64 {
    let entities = fields.iter().map(|(_, g)| g.keys).max().unwrap_or(0);
    let mut entries = 0u64;
    let mut key_len = 0;
    for (field, g) in fields {
        let field_len = field.len() as u64;
        let value = g.elements.checked_div(g.keys).unwrap_or(0);
        let entry = field_len
            .saturating_add(value)
            .saturating_add(2 * ENTRY_OVERHEAD);
        // The field's share of entities: its keys / entities, in u128 so it cannot wrap.
        let share = u128::from(entry)
            .saturating_mul(u128::from(g.keys))
            .checked_div(u128::from(entities))
            .unwrap_or(0);
        entries = entries.saturating_add(u64::try_from(share).unwrap_or(u64::MAX));
        let field_key = g.key_bytes.checked_div(g.keys).unwrap_or(0);
        key_len = key_len.max(field_key.saturating_sub(field_len.saturating_add(delimiter)));
    }
    // Per entity: a dict entry, the hash's object, its name and its listpack.
    let listpack = a.class(entries.saturating_add(LISTPACK_OVERHEAD));
    let entity = (DICT_ENTRY + ROBJ)
        .saturating_add(a.sds(key_len))
        .saturating_add(listpack);
    entities.saturating_mul(entity)
}

/// Minutes in which at least `ttl_clustered_keys` keys and `ttl_clustered_percent` of
/// all keys with a future expiry expire. Value = keys in the minute.
fn ttl_clustered(m: &Aggregates, config: &LintConfig) -> Vec<Finding> {
    let t = &config.thresholds;
    let expiring: u64 = m
        .ttl
        .buckets()
        .filter(|(b, _)| !matches!(b, TtlBucket::NoTtl | TtlBucket::Expired))
        .map(|(_, tally)| tally.keys)
        .sum();
    let share = ceil_count(expiring as f64 * t.ttl_clustered_percent / 100.0);
    let threshold = t.ttl_clustered_keys.max(share);
    m.ttl
        .storms_of_at_least(threshold)
        .into_iter()
        .map(|(minute, tally)| {
            Finding::of_group(
                Rule::TtlClustered,
                Subject::Minute(minute),
                (signed(tally.keys), signed(threshold)),
                tally.keys,
                tally.memory_bytes,
            )
        })
        .collect()
}

/// Slots and hash tags holding more than `slot_skew_factor` times the mean memory (over
/// slots with keys, over tags) and more than `slot_skew_percent` of all memory analysed.
/// Value = the slot's or tag's memory; threshold = the larger of the two bounds.
fn slot_skew(m: &Aggregates, config: &LintConfig) -> Vec<Finding> {
    let t = &config.thresholds;
    let total = m.totals.all().memory_bytes;
    let floor = total as f64 * t.slot_skew_percent / 100.0;
    let bound = |sum: u64, count: usize| {
        let mean = sum as f64 / count.max(1) as f64;
        (mean * t.slot_skew_factor).max(floor)
    };
    let slots: Vec<_> = m.slots.loaded().collect();
    let slot_bound = bound(total, slots.len());
    let mut out: Vec<Finding> = slots
        .into_iter()
        .filter(|(_, l)| l.memory_bytes as f64 > slot_bound)
        .map(|(slot, l)| {
            Finding::of_group(
                Rule::ClusterSlotSkew,
                Subject::Slot(slot),
                (signed(l.memory_bytes), slot_bound.ceil() as i64),
                l.keys,
                l.memory_bytes,
            )
        })
        .collect();
    let tags = m.slots.tags().rows();
    let tag_bound = bound(tags.iter().map(|r| r.stats.memory_bytes).sum(), tags.len());
    out.extend(
        tags.into_iter()
            .filter(|r| r.stats.memory_bytes as f64 > tag_bound)
            .map(
                |GroupRow {
                     name: tag,
                     stats: g,
                     ..
                 }| {
                    Finding::of_group(
                        Rule::ClusterSlotSkew,
                        Subject::Tag(tag.into()),
                        (signed(g.memory_bytes), tag_bound.ceil() as i64),
                        g.keys,
                        g.memory_bytes,
                    )
                },
            ),
    );
    out
}
