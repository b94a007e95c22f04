//! Everything `report` computes, in one struct that is fed every key once and merges with
//! `+=` (one per dump, then the dumps).

use super::distribution::Distributions;
use super::encodings::PatternEncodings;
use super::groups::GroupTable;
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
}

impl Tables {
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
        t.patterns.add(k);
        match t.shared_segments {
            true => t
                .prefixes
                .add_at(k, t.patterns.delimiters(), t.patterns.same_prefixes()),
            false => t.prefixes.add(k),
        }
        t.encodings.add(k, t.patterns.current());
        add_tag(&mut t.tags, k);
    }

    fn merge_in_order(&mut self, t: &mut Tables) {
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
