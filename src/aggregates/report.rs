//! Everything `report` computes, in one struct that is fed every key once and merges with
//! `+=` (one per dump, then the dumps).

use super::distribution::Distributions;
use super::encodings::PatternEncodings;
use super::groups::{GroupTable, RunOfKeys};
use super::idle_freq::IdleFreq;
use super::patterns::{KeySeen, Patterns};
use super::prefixes::{PrefixConfig, Prefixes};
use super::slots::{add_tag, Slots};
use super::top::TopKeys;
use super::ttl::Ttl;
use crate::model::key_stats::KeyStats;
use crate::pass::fold::{Aggregator, Source};
use crate::pass::totals::Totals;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// What every dump's aggregates are built with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AggregateConfig {
    /// Keys kept in each top-N ranking.
    pub top_n: usize,
    pub prefixes: PrefixConfig,
}

/// Serialised whole (bounded: no per-key data) in summary.json's mergeable state, which
/// `rdbscope merge` adds up with `+=` as a run over all the dumps would.
#[derive(Serialize, Deserialize)]
pub struct Aggregates {
    pub totals: Totals,
    pub ttl: Ttl,
    pub prefixes: Prefixes,
    pub patterns: Patterns,
    /// Keys per pattern and encoding, for hash, list, set and zset.
    pub encodings: PatternEncodings,
    pub top: TopKeys,
    pub distributions: Distributions,
    pub slots: Slots,
    pub idle_freq: IdleFreq,
}

impl Aggregates {
    pub fn new(config: &AggregateConfig, source: Source) -> Self {
        Aggregates {
            totals: Totals::default(),
            ttl: Ttl::new(source.reference_ms),
            prefixes: Prefixes::new(&config.prefixes),
            patterns: Patterns::new(&config.prefixes),
            encodings: PatternEncodings::new(config.prefixes.cap),
            top: TopKeys::new(config.top_n, source.file),
            distributions: Distributions::default(),
            slots: Slots::new(config.prefixes.cap),
            idle_freq: IdleFreq::default(),
        }
    }
}

/// The heavy-hitter tables of [`Aggregates`], whose light rows depend on the order keys
/// come in: what a chunk of the file fills, merged into the dump's in file order.
pub struct Tables {
    prefixes: Prefixes,
    patterns: Patterns,
    encodings: PatternEncodings,
    tags: GroupTable,
    /// Whether the prefixes take a key's segments from its pattern
    /// ([`Patterns::segments_like`]).
    shared_segments: bool,
    /// Keys in a row whose pattern and prefixes are those of the key before
    /// ([`Patterns::same_prefixes`]), not yet counted in the pattern and prefix tables:
    /// summed once a key rather than counted in each table ([`Tables::end_run`]).
    run: RunOfKeys,
    /// The prefix depths the run's keys are counted at.
    run_depths: usize,
}

impl Tables {
    /// Counts `k` in the pattern and prefix tables when the prefixes take their segments
    /// from the pattern (`same`: [`Patterns::segment_key`] told `k` from its last
    /// segment). A key whose prefixes are those of the key before joins the run.
    #[inline(always)]
    fn add_segmented(&mut self, k: &KeyStats<'_>, same: bool) {
        let same_prefixes = self.patterns.same_prefixes();
        if same_prefixes && (!self.run.is_empty() || self.run_can_start()) {
            self.run.add(k);
            return;
        }
        self.end_run();
        self.patterns.count(k, same);
        self.prefixes
            .add_at(k, self.patterns.delimiters(), same_prefixes);
    }

    /// Whether a run can begin at the key just segmented: every table it would be counted
    /// in has a name counted last (tables start empty in each chunk).
    fn run_can_start(&mut self) -> bool {
        self.run_depths = self.patterns.delimiters().len();
        self.patterns.table().has_last() && self.prefixes.have_last(self.run_depths)
    }

    /// Counts the run's keys in the pattern and prefix tables, under the names they
    /// counted last, and starts a new run.
    fn end_run(&mut self) {
        if self.run.is_empty() {
            return;
        }
        self.patterns.count_run(&self.run);
        self.prefixes.count_run(&self.run, self.run_depths);
        self.run = RunOfKeys::default();
    }

    /// The pattern of the key added last.
    pub fn pattern(&self) -> &[u8] {
        self.patterns.current()
    }

    /// What the patterns' pass saw of the key added last ([`Patterns::seen`]).
    pub fn seen(&self) -> KeySeen {
        self.patterns.seen()
    }
}

impl Aggregator for Aggregates {
    type InOrder = Tables;

    fn in_order(&self) -> Tables {
        Tables {
            prefixes: self.prefixes.like(),
            patterns: self.patterns.like(),
            encodings: self.encodings.like(),
            tags: self.slots.tags_like(),
            shared_segments: self.patterns.segments_like(&self.prefixes),
            run: RunOfKeys::default(),
            run_depths: 0,
        }
    }

    #[inline]
    fn add(&mut self, t: &mut Tables, k: &KeyStats<'_>) {
        self.totals.add(k);
        self.ttl.add(k);
        self.top.add(k);
        self.distributions.add(k);
        self.slots.add(k);
        self.idle_freq.add(k);
        let same = t.patterns.segment_key(k);
        match t.shared_segments {
            true => t.add_segmented(k, same),
            false => {
                t.patterns.count(k, same);
                t.prefixes.add(k);
            }
        }
        t.encodings.add(k, t.patterns.current());
        add_tag(&mut t.tags, k);
    }

    fn merge_in_order(&mut self, t: &mut Tables) {
        t.end_run();
        self.prefixes.absorb(&mut t.prefixes);
        self.patterns.absorb(&mut t.patterns);
        self.encodings.absorb(&mut t.encodings);
        self.slots.absorb_tags(&mut t.tags);
    }

    fn trim(&mut self) {
        self.prefixes.trim();
        self.patterns.trim();
        self.encodings.trim();
        self.slots.trim();
    }

    fn totals(&self) -> &Totals {
        &self.totals
    }
}

impl AddAssign for Aggregates {
    fn add_assign(&mut self, mut o: Aggregates) {
        self.totals += o.totals;
        self.ttl += o.ttl;
        self.prefixes += o.prefixes;
        self.patterns += o.patterns;
        self.encodings.absorb(&mut o.encodings);
        self.top += o.top;
        self.distributions += o.distributions;
        self.slots += o.slots;
        self.idle_freq += o.idle_freq;
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // Small made-up figures.
mod tests {
    use super::super::groups::{ErrorBound, GroupStats};
    use super::*;
    use crate::rdb::RedisType;
    use std::borrow::Cow;

    fn key(name: &str, i: u64) -> KeyStats<'static> {
        let mut k = KeyStats::new();
        k.key = Cow::Owned(name.as_bytes().to_vec());
        k.memory_bytes = 40 + i * 37 % 500;
        k.serialized_bytes = 20 + i % 13;
        k.elements = Some(i % 5);
        k.redis_type = RedisType::ALL[(i % 3) as usize];
        k.expiry_ms = i.is_multiple_of(4).then_some(1);
        k
    }

    /// Keys in runs of one pattern (numbered ids), runs whose head holds an id or a
    /// literal `*`, deeper prefixes, and keys of other patterns in between.
    fn names() -> Vec<String> {
        let mut names = Vec::new();
        for round in 0..6 {
            names.extend((0..40).map(|i| format!("user:{}", round * 100 + i)));
            names.extend((0..9).map(|i| format!("org:acme{round}:team:{i}")));
            names.push(format!("a:{round}:77"));
            names.extend((0..5).map(|i| format!("a:*:{}", 70 + i)));
            names.push(format!("plain{round}"));
            names.extend((0..7).map(|i| format!("s:{}", i % 2 + round)));
            names.extend((0..12).map(|i| format!("c{}:{i}", i / 4)));
        }
        names
    }

    fn rows(table: &GroupTable) -> Vec<(Vec<u8>, GroupStats, ErrorBound)> {
        table
            .rows()
            .iter()
            .map(|r| (r.name.to_vec(), r.stats.clone(), r.error))
            .collect()
    }

    /// The pattern and prefix tables count a run of keys once it ends: what they hold is
    /// what counting every key in each table gives, in chunks of any size, with the tables
    /// overflowing or not.
    #[test]
    fn runs_count_as_each_key_would() {
        let names = names();
        for cap in [3, 1000] {
            for chunk in [1, 2, 7, 64, 1000] {
                let config = AggregateConfig {
                    top_n: 5,
                    prefixes: PrefixConfig {
                        depth: 3,
                        cap,
                        ..PrefixConfig::default()
                    },
                };
                let source = Source {
                    file: 0,
                    reference_ms: 0,
                    profile: None,
                };
                let mut runs = Aggregates::new(&config, source);
                let mut each = Aggregates::new(&config, source);
                for (c, part) in names.chunks(chunk).enumerate() {
                    let mut t = runs.in_order();
                    let mut prefixes = each.prefixes.like();
                    let mut patterns = each.patterns.like();
                    for (i, name) in part.iter().enumerate() {
                        let k = key(name, (c * chunk + i) as u64);
                        runs.add(&mut t, &k);
                        prefixes.add(&k);
                        patterns.add(&k);
                    }
                    runs.merge_in_order(&mut t);
                    each.prefixes.absorb(&mut prefixes);
                    each.patterns.absorb(&mut patterns);
                }
                let at = format!("cap {cap}, chunks of {chunk}");
                for (a, b) in runs.prefixes.tables().iter().zip(each.prefixes.tables()) {
                    assert_eq!(rows(a), rows(b), "{at}");
                }
                assert_eq!(
                    rows(runs.patterns.table()),
                    rows(each.patterns.table()),
                    "{at}"
                );
                // Enough names to fill (or overflow) the tables.
                let listed = rows(runs.patterns.table()).len();
                assert!(
                    listed >= if cap < 10 { 1 } else { 10 },
                    "{at}: {listed} listed"
                );
            }
        }
    }
}
