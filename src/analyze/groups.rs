//! Statistics of a group of keys (a prefix, a pattern, a hash tag) and a table of named
//! groups whose size is capped whatever the number of distinct names.
//!
//! Names are identified by a 128-bit hash (xxh3): 64 bits key the map, the other 64
//! confirm a match, so a lookup compares no bytes; two names would have to agree on all
//! 128 bits to be confused. The name itself is kept only for the output.
//!
//! When more names turn up than the cap allows, the table keeps the `cap` names whose
//! 64-bit key is smallest and adds everything else into one `(other)` group. That choice
//! depends only on the set of names, not on the order keys arrive in, so tables filled by
//! different threads or from different shards merge (`+=`) into exactly the table one pass
//! over all the keys would have built: a kept name has every one of its keys counted, and
//! the sums over kept names plus `(other)` are always the sums over all keys.

use super::KeyStats;
use crate::rdb::RedisType;
use rustc_hash::FxHashMap;
use std::collections::BinaryHeap;
use std::ops::AddAssign;
use xxhash_rust::xxh3::xxh3_128;

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
        self.keys = self.keys.saturating_add(1);
        self.memory_bytes = self.memory_bytes.saturating_add(k.memory_bytes);
        self.serialized_bytes = self.serialized_bytes.saturating_add(k.serialized_bytes);
        self.elements = self.elements.saturating_add(k.elements.unwrap_or(0));
        self.key_bytes = self.key_bytes.saturating_add(k.key.len() as u64);
        let split = &mut self.by_type[type_index(k.redis_type)];
        split.keys = split.keys.saturating_add(1);
        split.memory_bytes = split.memory_bytes.saturating_add(k.memory_bytes);
        if k.expiry_ms.is_none() {
            self.no_ttl_keys = self.no_ttl_keys.saturating_add(1);
            self.no_ttl_memory_bytes = self.no_ttl_memory_bytes.saturating_add(k.memory_bytes);
        }
    }

    /// Descending by memory, then serialized bytes, then keys: the order reports list
    /// groups in (serialized bytes break ties while the memory model reports zeros).
    pub fn weight(&self) -> (u64, u64, u64) {
        (self.memory_bytes, self.serialized_bytes, self.keys)
    }
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

struct Entry {
    /// The upper 64 bits of the name's hash (the lower ones key the map).
    check: u64,
    name: Box<[u8]>,
    stats: GroupStats,
}

/// Named groups, at most `cap` of them, plus `(other)`. See the module docs for which
/// names are kept.
pub struct CappedTable {
    cap: usize,
    /// Keyed by the lower 64 bits of the name's hash.
    entries: FxHashMap<u64, Entry>,
    /// The hashes in `entries`, largest on top: the next to give way.
    hashes: BinaryHeap<u64>,
    other: GroupStats,
    /// Names were turned away (cap reached, or two names sharing a 64-bit key).
    overflowed: bool,
}

impl CappedTable {
    pub fn new(cap: usize) -> Self {
        CappedTable {
            cap,
            entries: FxHashMap::default(),
            hashes: BinaryHeap::new(),
            other: GroupStats::default(),
            overflowed: false,
        }
    }

    /// Counts `k` under `name`.
    #[inline]
    pub fn add(&mut self, name: &[u8], k: &KeyStats<'_>) {
        let full = xxh3_128(name);
        let (hash, check) = (full as u64, (full >> 64) as u64);
        if self.beyond_cap(hash) {
            self.other.add(k);
            return;
        }
        if let Some(e) = self.entries.get_mut(&hash) {
            if e.check == check {
                e.stats.add(k);
            } else {
                self.overflowed = true;
                self.other.add(k);
            }
        } else if self.make_room(hash) {
            let mut stats = GroupStats::default();
            stats.add(k);
            self.insert(hash, check, name.into(), stats);
        } else {
            self.other.add(k);
        }
    }

    /// The table is full and `hash` is above every kept hash: the name is not in the
    /// table and cannot enter it. Decided without a lookup, the common case once a table
    /// of many distinct names has filled.
    #[inline]
    fn beyond_cap(&mut self, hash: u64) -> bool {
        let beyond =
            self.entries.len() >= self.cap && self.hashes.peek().is_some_and(|&top| hash > top);
        self.overflowed |= beyond;
        beyond
    }

    /// Whether a new name hashing to `hash` is kept; evicts the name it displaces.
    #[inline]
    fn make_room(&mut self, hash: u64) -> bool {
        if self.entries.len() < self.cap {
            return true;
        }
        self.overflowed = true;
        match self.hashes.peek() {
            Some(&top) if hash < top => {
                self.hashes.pop();
                let evicted = self
                    .entries
                    .remove(&top)
                    .expect("the heap mirrors the table");
                self.other += &evicted.stats;
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, hash: u64, check: u64, name: Box<[u8]>, stats: GroupStats) {
        self.hashes.push(hash);
        self.entries.insert(hash, Entry { check, name, stats });
    }

    /// Whether some names went to `(other)`.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Everything counted under names that were not kept.
    pub fn other(&self) -> &GroupStats {
        &self.other
    }

    /// The kept groups, heaviest first ([`GroupStats::weight`], then name).
    pub fn rows(&self) -> Vec<(&[u8], &GroupStats)> {
        let mut rows: Vec<_> = self
            .entries
            .values()
            .map(|e| (&*e.name, &e.stats))
            .collect();
        rows.sort_unstable_by(|a, b| b.1.weight().cmp(&a.1.weight()).then(a.0.cmp(b.0)));
        rows
    }
}

impl AddAssign for CappedTable {
    fn add_assign(&mut self, other: CappedTable) {
        self.other += &other.other;
        self.overflowed |= other.overflowed;
        for (hash, Entry { check, name, stats }) in other.entries {
            if self.beyond_cap(hash) {
                self.other += &stats;
            } else if let Some(e) = self.entries.get_mut(&hash) {
                if e.check == check {
                    e.stats += &stats;
                } else {
                    self.overflowed = true;
                    self.other += &stats;
                }
            } else if self.make_room(hash) {
                self.insert(hash, check, name, stats);
            } else {
                self.other += &stats;
            }
        }
    }
}
