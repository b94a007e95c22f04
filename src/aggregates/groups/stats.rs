//! What a group of keys adds up to ([`GroupStats`]), and what one key adds to it.

use crate::model::key_stats::KeyStats;
use crate::pass::totals::add_bounded;
use crate::rdb::RedisType;
use std::ops::AddAssign;

/// Index of a type in per-type arrays: module values of every module count as `module`.
#[inline]
pub fn type_index(t: RedisType) -> usize {
    t as usize
}

/// Keys and memory of one type within a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeSplit {
    pub keys: u64,
    pub memory_bytes: u64,
}

/// What a group of keys adds up to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    pub keys: u64,
    pub memory_bytes: u64,
    pub serialized_bytes: u64,
    pub elements: u64,
    /// Sum of the key names' lengths.
    pub key_bytes: u64,
    /// Indexed by [`type_index`], in the order of [`RedisType::ALL`].
    pub by_type: [TypeSplit; RedisType::ALL.len()],
    pub no_ttl_keys: u64,
    pub no_ttl_memory_bytes: u64,
}

impl GroupStats {
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        self.add_key(&OneKey::of(k, k.elements.unwrap_or(0)));
    }

    #[inline]
    pub(super) fn add_key(&mut self, k: &OneKey) {
        add_bounded(&mut self.keys, 1);
        self.memory_bytes = self.memory_bytes.saturating_add(k.memory_bytes);
        add_bounded(&mut self.serialized_bytes, k.serialized_bytes);
        self.elements = self.elements.saturating_add(k.elements);
        add_bounded(&mut self.key_bytes, k.key_bytes);
        let split = &mut self.by_type[type_index(k.redis_type)];
        add_bounded(&mut split.keys, 1);
        split.memory_bytes = split.memory_bytes.saturating_add(k.memory_bytes);
        if k.no_ttl {
            add_bounded(&mut self.no_ttl_keys, 1);
            self.no_ttl_memory_bytes = self.no_ttl_memory_bytes.saturating_add(k.memory_bytes);
        }
    }

    /// Descending by memory, then serialized bytes, then keys: the order reports list
    /// groups in by default (serialized bytes break ties while the memory model reports
    /// zeros).
    pub fn weight(&self) -> (u64, u64, u64) {
        self.rank(SortBy::Memory)
    }

    /// What rows are ranked by (descending) under `by`: its figure, then the others.
    pub fn rank(&self, by: SortBy) -> (u64, u64, u64) {
        match by {
            SortBy::Memory => (self.memory_bytes, self.serialized_bytes, self.keys),
            SortBy::Keys => (self.keys, self.memory_bytes, self.serialized_bytes),
            SortBy::Elements => (self.elements, self.memory_bytes, self.keys),
        }
    }
}

/// What table rows are sorted by (`--sort`), largest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// Key count.
    Keys,
    /// Estimated memory (then bytes in the file).
    #[default]
    Memory,
    /// Element count.
    Elements,
}

impl AddAssign<&GroupStats> for GroupStats {
    fn add_assign(&mut self, o: &GroupStats) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
        self.serialized_bytes = self.serialized_bytes.saturating_add(o.serialized_bytes);
        self.elements = self.elements.saturating_add(o.elements);
        self.key_bytes = self.key_bytes.saturating_add(o.key_bytes);
        for (a, b) in self.by_type.iter_mut().zip(&o.by_type) {
            a.keys = a.keys.saturating_add(b.keys);
            a.memory_bytes = a.memory_bytes.saturating_add(b.memory_bytes);
        }
        self.no_ttl_keys = self.no_ttl_keys.saturating_add(o.no_ttl_keys);
        self.no_ttl_memory_bytes = self
            .no_ttl_memory_bytes
            .saturating_add(o.no_ttl_memory_bytes);
    }
}

/// The figures of one key that a group counts: what a name counted once holds instead of
/// a whole [`GroupStats`].
#[derive(Clone, Copy, Debug)]
pub(super) struct OneKey {
    pub(super) memory_bytes: u64,
    pub(super) serialized_bytes: u64,
    pub(super) elements: u64,
    pub(super) key_bytes: u64,
    pub(super) redis_type: RedisType,
    pub(super) no_ttl: bool,
}

impl OneKey {
    /// `k`'s figures, counted with `elements` as its elements (lint's table of small
    /// strings counts their lengths there).
    #[inline]
    pub(super) fn of(k: &KeyStats<'_>, elements: u64) -> Self {
        OneKey {
            memory_bytes: k.memory_bytes,
            serialized_bytes: k.serialized_bytes,
            elements,
            key_bytes: k.key.len() as u64,
            redis_type: k.redis_type,
            no_ttl: k.expiry_ms.is_none(),
        }
    }

    pub(super) fn stats(&self) -> GroupStats {
        let mut s = GroupStats::default();
        s.add_key(self);
        s
    }

    /// The key that `stats` counted, if they count exactly one key.
    pub(super) fn alone(stats: &GroupStats) -> Option<Self> {
        if stats.keys != 1 {
            return None;
        }
        let t = stats.by_type.iter().position(|t| t.keys == 1)?;
        let key = OneKey {
            memory_bytes: stats.memory_bytes,
            serialized_bytes: stats.serialized_bytes,
            elements: stats.elements,
            key_bytes: stats.key_bytes,
            redis_type: *RedisType::ALL.get(t)?,
            no_ttl: stats.no_ttl_keys == 1,
        };
        (key.stats() == *stats).then_some(key)
    }
}
