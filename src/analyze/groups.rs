//! Statistics of a group of keys (a prefix, a pattern, a hash tag) and [`GroupTable`], a
//! table of named groups of bounded size that never loses a heavy name.
//!
//! # The guarantee
//!
//! A table of capacity `m` fed keys holding `W` bytes of memory in `K` keys:
//! * lists every name holding more than `W / m` bytes or more than `K / m` keys;
//! * counts every key of a listed name from the moment the name entered the table, so each
//!   figure of a row (keys, memory, bytes in file, elements, per-type split, no-TTL
//!   columns) is a lower bound of the truth, and the keys counted before, if any, number at
//!   most the row's [`ErrorBound::keys`] and hold at most its [`ErrorBound::memory_bytes`];
//!   both are 0 (the row is exact) unless the table overflowed before the name entered;
//! * a name not listed holds at most [`GroupTable::absent_bound`] (≤ `W / m` bytes and
//!   `K / m` keys);
//! * counts every key it does not list in its `(other)` group, so the rows plus `(other)`
//!   always sum to the keys fed;
//! * holds at most `2.5 m` names (plus one table's worth for the moment of a merge).
//!
//! # How
//!
//! A weighted Misra–Gries summary counting memory and keys at once, merged as in Agarwal
//! et al., "Mergeable summaries" (PODS 2012). Each name carries two counters, memory and
//! keys since it entered, less what purges took. When a new name finds the table full, a
//! purge takes `δm` (the `m`-th largest memory counter) from every memory counter and `δk`
//! (the `m`-th largest key counter) from every key counter, flooring at zero, and drops the
//! names whose counters are both zero into `(other)`; fewer than `m` names have a memory
//! counter above `δm`, fewer than `m` a key counter above `δk`, so fewer than `2 m` stay.
//! Every purge takes at least `m · δm` bytes from the counters, which never held more than
//! `W`, so the sum `Δm` of the `δm` stays ≤ `W / m` (and `Δk` ≤ `K / m`); a name's true
//! memory is at most its counter plus `Δm`, and at most `Δm` when it is not in the table.
//! A name entering the table carries the `Δm`, `Δk` of that moment as its error bound.
//! Merging adds counters, errors and `Δ`s (a name missing from one side takes that side's
//! `Δ` as extra error) and purges once if the table grew too big: the bounds then hold for
//! the union of the keys, whichever thread or shard saw which key.
//!
//! Names are identified by their 128-bit xxh3 hash; the bytes are kept for the output.

use super::KeyStats;
use crate::rdb::RedisType;
use rustc_hash::FxHashMap;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
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

/// How far a row may fall short of the truth: at most `keys` keys holding at most
/// `memory_bytes` bytes were counted under `(other)` before the name entered the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBound {
    pub keys: u64,
    pub memory_bytes: u64,
}

impl AddAssign for ErrorBound {
    fn add_assign(&mut self, o: ErrorBound) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
    }
}

/// One listed name of a [`GroupTable`].
#[derive(Clone, Copy, Debug)]
pub struct GroupRow<'a> {
    pub name: &'a [u8],
    pub stats: &'a GroupStats,
    pub error: ErrorBound,
}

struct Entry {
    /// Where the name's bytes are in [`GroupTable::names`].
    start: usize,
    len: usize,
    stats: GroupStats,
    /// Memory and keys since the name entered, less the purges' decrements.
    counter: ErrorBound,
    error: ErrorBound,
}

impl Entry {
    /// Where the name's bytes are in the table's `names`.
    fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start.saturating_add(self.len)
    }
}

/// Named groups of bounded number that keep every heavy name (see the module docs).
pub struct GroupTable {
    capacity: usize,
    /// Keyed by the name's xxh3-128 hash.
    entries: FxHashMap<u128, Entry>,
    /// The names' bytes, end to end; compacted at each purge.
    names: Vec<u8>,
    other: GroupStats,
    /// `Δm`, `Δk`: the purges' decrements so far, what a name out of the table may hold.
    absent: ErrorBound,
    overflowed: bool,
    /// Reused by purges.
    scratch: Vec<u64>,
}

impl GroupTable {
    /// A table of capacity `capacity` (at least 1).
    pub fn new(capacity: usize) -> Self {
        GroupTable {
            capacity: capacity.max(1),
            entries: FxHashMap::default(),
            names: Vec::new(),
            other: GroupStats::default(),
            absent: ErrorBound::default(),
            overflowed: false,
            scratch: Vec::new(),
        }
    }

    /// Most names held between keys: `2.5 m`, which leaves room for at least `m / 2` new
    /// names after each purge.
    fn limit(&self) -> usize {
        self.capacity
            .saturating_mul(2)
            .saturating_add(self.capacity / 2)
    }

    /// Counts `k` under `name`.
    #[inline]
    pub fn add(&mut self, name: &[u8], k: &KeyStats<'_>) {
        let hash = xxh3_128(name);
        if let Some(e) = self.entries.get_mut(&hash) {
            e.stats.add(k);
            e.counter += ErrorBound {
                keys: 1,
                memory_bytes: k.memory_bytes,
            };
            return;
        }
        if self.entries.len() >= self.limit() {
            self.purge();
        }
        let mut stats = GroupStats::default();
        stats.add(k);
        let entry = Entry {
            start: self.names.len(),
            len: name.len(),
            stats,
            counter: ErrorBound {
                keys: 1,
                memory_bytes: k.memory_bytes,
            },
            error: self.absent,
        };
        self.names.extend_from_slice(name);
        self.entries.insert(hash, entry);
    }

    /// Takes the `m`-th largest counters from every counter and moves the names left
    /// with nothing to `(other)`.
    #[cold]
    fn purge(&mut self) {
        let m = self.capacity;
        let nth_largest = |scratch: &mut Vec<u64>, values: &mut dyn Iterator<Item = u64>| {
            scratch.clear();
            scratch.extend(values);
            match m.checked_sub(1) {
                Some(nth) if scratch.len() > nth => {
                    *scratch.select_nth_unstable_by(nth, |a, b| b.cmp(a)).1
                }
                _ => 0,
            }
        };
        let cut = ErrorBound {
            memory_bytes: nth_largest(
                &mut self.scratch,
                &mut self.entries.values().map(|e| e.counter.memory_bytes),
            ),
            keys: nth_largest(
                &mut self.scratch,
                &mut self.entries.values().map(|e| e.counter.keys),
            ),
        };
        let other = &mut self.other;
        self.entries.retain(|_, e| {
            e.counter.memory_bytes = e.counter.memory_bytes.saturating_sub(cut.memory_bytes);
            e.counter.keys = e.counter.keys.saturating_sub(cut.keys);
            let keep = e.counter.memory_bytes > 0 || e.counter.keys > 0;
            if !keep {
                *other += &e.stats;
            }
            keep
        });
        self.absent += cut;
        self.overflowed = true;
        let mut names = Vec::with_capacity(self.names.len());
        for e in self.entries.values_mut() {
            let start = names.len();
            names.extend_from_slice(&self.names[e.range()]);
            e.start = start;
        }
        self.names = names;
    }

    /// Whether names were ever dropped to `(other)`: rows may then be lower bounds.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// `m`: every name above `1 / m` of the memory or of the keys is listed.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// What a name not listed holds at most (`Δm` bytes, `Δk` keys); 0 when nothing was
    /// ever dropped.
    pub fn absent_bound(&self) -> ErrorBound {
        self.absent
    }

    /// Everything counted under names not listed, or before a listed name entered.
    pub fn other(&self) -> &GroupStats {
        &self.other
    }

    /// The listed groups, heaviest first ([`GroupStats::weight`], then name).
    pub fn rows(&self) -> Vec<GroupRow<'_>> {
        self.rows_by(SortBy::Memory)
    }

    /// The listed groups, largest first by `by` ([`GroupStats::rank`]), then by name.
    pub fn rows_by(&self, by: SortBy) -> Vec<GroupRow<'_>> {
        let mut rows: Vec<_> = self
            .entries
            .values()
            .map(|e| GroupRow {
                name: &self.names[e.range()],
                stats: &e.stats,
                error: e.error,
            })
            .collect();
        rows.sort_unstable_by(|a, b| {
            b.stats
                .rank(by)
                .cmp(&a.stats.rank(by))
                .then(a.name.cmp(b.name))
        });
        rows
    }
}

impl AddAssign for GroupTable {
    fn add_assign(&mut self, o: GroupTable) {
        self.other += &o.other;
        self.overflowed |= o.overflowed;
        if o.absent != ErrorBound::default() {
            for (hash, e) in self.entries.iter_mut() {
                if !o.entries.contains_key(hash) {
                    e.error += o.absent;
                }
            }
        }
        for (hash, e) in o.entries {
            if let Some(mine) = self.entries.get_mut(&hash) {
                mine.stats += &e.stats;
                mine.counter += e.counter;
                mine.error += e.error;
            } else {
                let mut error = e.error;
                error += self.absent;
                let start = self.names.len();
                self.names.extend_from_slice(&o.names[e.range()]);
                self.entries.insert(hash, Entry { start, error, ..e });
            }
        }
        self.absent += o.absent;
        if self.entries.len() > self.limit() {
            self.purge();
        }
    }
}

/// [`GroupStats`] in summary.json's mergeable state, one array per group (there are up to
/// `2.5 m` of them per table): keys, memory, bytes in the file, elements, key bytes, no-TTL
/// keys and memory, then `[type index, keys, memory]` for each type present.
type StatsState = (u64, u64, u64, u64, u64, u64, u64, Vec<(usize, u64, u64)>);

impl Serialize for GroupStats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let by_type = self
            .by_type
            .iter()
            .enumerate()
            .filter(|(_, t)| *t != &TypeSplit::default())
            .map(|(i, t)| (i, t.keys, t.memory_bytes))
            .collect();
        let state: StatsState = (
            self.keys,
            self.memory_bytes,
            self.serialized_bytes,
            self.elements,
            self.key_bytes,
            self.no_ttl_keys,
            self.no_ttl_memory_bytes,
            by_type,
        );
        state.serialize(s)
    }
}

impl<'de> Deserialize<'de> for GroupStats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (keys, memory_bytes, serialized_bytes, elements, key_bytes, no_ttl_keys, nm, types) =
            StatsState::deserialize(d)?;
        let mut by_type = [TypeSplit::default(); RedisType::ALL.len()];
        for (i, keys, memory_bytes) in types {
            *by_type
                .get_mut(i)
                .ok_or_else(|| D::Error::custom(format!("type index {i} out of range")))? =
                TypeSplit { keys, memory_bytes };
        }
        Ok(GroupStats {
            keys,
            memory_bytes,
            serialized_bytes,
            elements,
            key_bytes,
            by_type,
            no_ttl_keys,
            no_ttl_memory_bytes: nm,
        })
    }
}

/// One held name in summary.json's mergeable state: the name, its figures, its counter
/// (`[keys, memory]`) and its error bound (`[keys, memory]`).
#[derive(Serialize, Deserialize)]
struct EntryState<'a>(
    #[serde(
        serialize_with = "super::state_fields::bytes::serialize",
        deserialize_with = "super::state_fields::bytes::deserialize"
    )]
    std::borrow::Cow<'a, [u8]>,
    GroupStats,
    (u64, u64),
    (u64, u64),
);

/// A [`GroupTable`] in summary.json's mergeable state: everything a merge reads, the names
/// in byte order.
#[derive(Serialize, Deserialize)]
struct TableState<'a> {
    capacity: usize,
    overflowed: bool,
    absent: ErrorBound,
    other: GroupStats,
    entries: Vec<EntryState<'a>>,
}

impl Serialize for GroupTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<EntryState<'_>> = self
            .entries
            .values()
            .map(|e| {
                EntryState(
                    std::borrow::Cow::Borrowed(&self.names[e.range()]),
                    e.stats.clone(),
                    (e.counter.keys, e.counter.memory_bytes),
                    (e.error.keys, e.error.memory_bytes),
                )
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        TableState {
            capacity: self.capacity,
            overflowed: self.overflowed,
            absent: self.absent,
            other: self.other.clone(),
            entries,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for GroupTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = TableState::deserialize(d)?;
        let mut table = GroupTable::new(state.capacity);
        if state.entries.len() > table.limit() {
            return Err(D::Error::custom(format!(
                "{} names in a table of capacity {}, which holds at most {}",
                state.entries.len(),
                table.capacity,
                table.limit()
            )));
        }
        table.overflowed = state.overflowed;
        table.absent = state.absent;
        table.other = state.other;
        for EntryState(name, stats, counter, error) in state.entries {
            let entry = Entry {
                start: table.names.len(),
                len: name.len(),
                stats,
                counter: ErrorBound {
                    keys: counter.0,
                    memory_bytes: counter.1,
                },
                error: ErrorBound {
                    keys: error.0,
                    memory_bytes: error.1,
                },
            };
            if table.entries.insert(xxh3_128(&name), entry).is_some() {
                return Err(D::Error::custom(format!(
                    "the name {:?} is held twice",
                    String::from_utf8_lossy(&name)
                )));
            }
            table.names.extend_from_slice(&name);
        }
        Ok(table)
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // Small known test values.
mod tests {
    use super::*;
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    /// splitmix64: a seeded stream of numbers, the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn key(memory: u64, ty: RedisType, ttl: bool) -> KeyStats<'static> {
        let mut k = KeyStats::new();
        k.key = Cow::Borrowed(b"k");
        k.memory_bytes = memory;
        k.serialized_bytes = memory / 2;
        k.elements = Some(memory % 7);
        k.redis_type = ty;
        k.expiry_ms = ttl.then_some(1);
        k
    }

    /// `(name, key)` pairs: a few heavy names (big keys; or many keys) placed first,
    /// last or interleaved among `light` one-key names.
    fn stream(seed: u64, light: usize, placement: u64) -> Vec<(Vec<u8>, KeyStats<'static>)> {
        let mut rng = Rng(seed);
        let mut light_keys: Vec<_> = (0..light)
            .map(|i| {
                let ty = RedisType::ALL[rng.below(7) as usize];
                (
                    format!("light:{i}").into_bytes(),
                    key(40 + rng.below(80), ty, i % 3 == 0),
                )
            })
            .collect();
        let mut heavy = Vec::new();
        for h in 0..3u64 {
            // Few keys, a lot of memory.
            for _ in 0..5 {
                heavy.push((
                    format!("big:{h}").into_bytes(),
                    key(100_000 + rng.below(50_000), RedisType::Hash, false),
                ));
            }
        }
        // Many small keys under one name: heavy by key count only.
        for _ in 0..light / 20 {
            heavy.push((b"many".to_vec(), key(10, RedisType::String, true)));
        }
        match placement {
            0 => {
                heavy.extend(light_keys);
                heavy
            }
            1 => {
                light_keys.extend(heavy);
                light_keys
            }
            _ => {
                let mut all = light_keys;
                all.extend(heavy);
                for i in (1..all.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    all.swap(i, j);
                }
                all
            }
        }
    }

    fn truth(items: &[(Vec<u8>, KeyStats<'static>)]) -> BTreeMap<Vec<u8>, GroupStats> {
        let mut t: BTreeMap<Vec<u8>, GroupStats> = BTreeMap::new();
        for (name, k) in items {
            t.entry(name.clone()).or_default().add(k);
        }
        t
    }

    /// Every claim of the module docs, against the brute-force count.
    fn check(table: &GroupTable, truth: &BTreeMap<Vec<u8>, GroupStats>) {
        let mut total = GroupStats::default();
        for s in truth.values() {
            total += s;
        }
        let m = table.capacity() as u64;
        let rows = table.rows();
        assert!(rows.len() as u64 <= m * 5 / 2, "{} rows", rows.len());
        let mut sum = table.other().clone();
        let listed: BTreeMap<&[u8], GroupRow<'_>> = rows.iter().map(|r| (r.name, *r)).collect();
        for (name, t) in truth {
            let Some(row) = listed.get(&name[..]) else {
                assert!(t.memory_bytes * m <= total.memory_bytes, "{name:?} lost");
                assert!(t.keys * m <= total.keys, "{name:?} lost");
                assert!(t.memory_bytes <= table.absent_bound().memory_bytes);
                assert!(t.keys <= table.absent_bound().keys);
                continue;
            };
            let (s, e) = (row.stats, row.error);
            sum += s;
            assert!(s.keys <= t.keys && t.keys - s.keys <= e.keys, "{name:?}");
            assert!(s.memory_bytes <= t.memory_bytes);
            assert!(
                t.memory_bytes - s.memory_bytes <= e.memory_bytes,
                "{name:?}"
            );
            assert!(s.serialized_bytes <= t.serialized_bytes && s.elements <= t.elements);
            assert!(t.no_ttl_keys - s.no_ttl_keys <= e.keys);
            assert!(t.no_ttl_memory_bytes - s.no_ttl_memory_bytes <= e.memory_bytes);
            for (a, b) in s.by_type.iter().zip(&t.by_type) {
                assert!(
                    b.keys - a.keys <= e.keys && b.memory_bytes - a.memory_bytes <= e.memory_bytes
                );
            }
            assert!(e.keys <= table.absent_bound().keys);
            assert!(e.memory_bytes <= table.absent_bound().memory_bytes);
            if !table.overflowed() {
                assert_eq!((s, e), (t, ErrorBound::default()));
            }
        }
        assert_eq!(sum, total, "rows plus (other) are the whole");
        assert!(table.absent_bound().memory_bytes * m <= total.memory_bytes);
        assert!(table.absent_bound().keys * m <= total.keys);
    }

    fn fill(items: &[(Vec<u8>, KeyStats<'static>)], m: usize) -> GroupTable {
        let mut t = GroupTable::new(m);
        for (name, k) in items {
            t.add(name, k);
        }
        t
    }

    #[test]
    fn heavy_names_first_last_and_interleaved_are_kept_within_bounds() {
        for placement in 0..3 {
            for seed in 1..4 {
                let items = stream(seed, 5_000, placement);
                let truth = truth(&items);
                let table = fill(&items, 50);
                assert!(table.overflowed());
                check(&table, &truth);
                for name in [&b"big:0"[..], b"big:1", b"big:2", b"many"] {
                    assert!(table.rows().iter().any(|r| r.name == name), "{name:?}");
                }
            }
        }
    }

    #[test]
    fn merges_keep_the_bounds_of_the_union() {
        for placement in 0..3 {
            for seed in 1..4 {
                let items = stream(seed, 4_000, placement);
                let truth = truth(&items);
                let single = fill(&items, 40);
                // Two to five parts, cut at random places, merged in order and not.
                let mut rng = Rng(seed * 7 + placement);
                let parts = 2 + rng.below(4) as usize;
                let mut cuts: Vec<usize> = (1..parts)
                    .map(|_| rng.below(items.len() as u64) as usize)
                    .collect();
                cuts.sort_unstable();
                cuts.insert(0, 0);
                cuts.push(items.len());
                let mut tables: Vec<GroupTable> = cuts
                    .windows(2)
                    .map(|w| fill(&items[w[0]..w[1]], 40))
                    .collect();
                if seed % 2 == 0 {
                    tables.reverse();
                }
                let mut merged = GroupTable::new(40);
                for t in tables {
                    merged += t;
                }
                check(&merged, &truth);
                // The heavy names agree with one pass over everything within their bounds.
                let one: BTreeMap<&[u8], GroupRow<'_>> =
                    single.rows().into_iter().map(|r| (r.name, r)).collect();
                for r in merged.rows() {
                    if let Some(s) = one.get(r.name) {
                        let t = &truth[r.name];
                        assert!(
                            r.stats.memory_bytes.abs_diff(s.stats.memory_bytes)
                                <= t.memory_bytes - r.stats.memory_bytes.min(s.stats.memory_bytes)
                        );
                        assert!(
                            r.stats.memory_bytes + r.error.memory_bytes >= s.stats.memory_bytes
                        );
                        assert!(
                            s.stats.memory_bytes + s.error.memory_bytes >= r.stats.memory_bytes
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn exact_until_the_table_overflows() {
        let items = stream(9, 300, 2);
        let truth = truth(&items);
        let table = fill(&items, 200);
        assert!(!table.overflowed());
        assert_eq!(table.rows().len(), truth.len());
        assert_eq!(table.other(), &GroupStats::default());
        check(&table, &truth);
        let mut merged = fill(&items[..100], 200);
        merged += fill(&items[100..], 200);
        assert!(!merged.overflowed());
        check(&merged, &truth);
    }

    /// A table's rows (name, figures, error), `(other)` and absent bound, comparable.
    type Shown = (
        Vec<(Vec<u8>, GroupStats, ErrorBound)>,
        GroupStats,
        ErrorBound,
    );

    fn shown(t: &GroupTable) -> Shown {
        let rows = t
            .rows()
            .iter()
            .map(|r| (r.name.to_vec(), r.stats.clone(), r.error))
            .collect();
        (rows, t.other().clone(), t.absent_bound())
    }

    #[test]
    fn a_table_read_back_merges_as_the_table_itself() {
        let items = stream(5, 3_000, 2);
        let (first, second) = items.split_at(1_700);
        let table = fill(first, 30);
        assert!(table.overflowed());
        let text = serde_json::to_string(&table).unwrap();
        let back: GroupTable = serde_json::from_str(&text).unwrap();
        assert_eq!(shown(&back), shown(&table));
        assert!(back.overflowed());
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        // Merged into the same table, the original and the copy give the same table.
        let (mut a, mut b) = (fill(second, 30), fill(second, 30));
        a += table;
        b += back;
        assert_eq!(shown(&a), shown(&b));
        check(&a, &truth(&items));
        // A table holding more names than its capacity allows is refused.
        let wider = fill(&items, 1_000);
        let text = serde_json::to_string(&wider).unwrap().replacen(
            "\"capacity\":1000",
            "\"capacity\":3",
            1,
        );
        let e = serde_json::from_str::<GroupTable>(&text)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("in a table of capacity 3"), "{e}");
    }

    #[test]
    fn a_table_of_one_keeps_the_heaviest() {
        let items = stream(3, 1_000, 2);
        let truth = truth(&items);
        let table = fill(&items, 1);
        check(&table, &truth);
    }
}
