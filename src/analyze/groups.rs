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
//! The entries lie end to end in the order the names entered, found through an index of
//! their hashes; a name counted once (most names of a deep prefix level) holds that key's
//! figures, and only its second key gives it a whole [`GroupStats`] (per-type split),
//! so that the names a purge drops soon after they enter cost little.

use crate::model::key_stats::KeyStats;
use crate::rdb::RedisType;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::AddAssign;
use std::sync::OnceLock;
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
        self.add_key(&OneKey::of(k));
    }

    #[inline]
    fn add_key(&mut self, k: &OneKey) {
        self.keys = self.keys.saturating_add(1);
        self.memory_bytes = self.memory_bytes.saturating_add(k.memory_bytes);
        self.serialized_bytes = self.serialized_bytes.saturating_add(k.serialized_bytes);
        self.elements = self.elements.saturating_add(k.elements);
        self.key_bytes = self.key_bytes.saturating_add(k.key_bytes);
        let split = &mut self.by_type[type_index(k.redis_type)];
        split.keys = split.keys.saturating_add(1);
        split.memory_bytes = split.memory_bytes.saturating_add(k.memory_bytes);
        if k.no_ttl {
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
struct OneKey {
    memory_bytes: u64,
    serialized_bytes: u64,
    elements: u64,
    key_bytes: u64,
    redis_type: RedisType,
    no_ttl: bool,
}

impl OneKey {
    #[inline]
    fn of(k: &KeyStats<'_>) -> Self {
        OneKey {
            memory_bytes: k.memory_bytes,
            serialized_bytes: k.serialized_bytes,
            elements: k.elements.unwrap_or(0),
            key_bytes: k.key.len() as u64,
            redis_type: k.redis_type,
            no_ttl: k.expiry_ms.is_none(),
        }
    }

    fn stats(&self) -> GroupStats {
        let mut s = GroupStats::default();
        s.add_key(self);
        s
    }

    /// The key that `stats` counted, if they count exactly one key.
    fn alone(stats: &GroupStats) -> Option<Self> {
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

/// What a listed name counted.
#[derive(Clone, Copy, Debug)]
enum Counted {
    /// A single key.
    One(OneKey),
    /// More: where its statistics are in [`GroupTable::many`].
    Many(usize),
}

struct Entry {
    /// xxh3-128 of the name.
    hash: u128,
    /// Memory and keys since the name entered, less the purges' decrements.
    counter: ErrorBound,
    error: ErrorBound,
    /// Where the name's bytes are in [`GroupTable::names`].
    start: usize,
    len: usize,
    counted: Counted,
}

impl Entry {
    /// Where the name's bytes are in the table's `names`.
    fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start.saturating_add(self.len)
    }
}

/// Where each listed name's entry is, by the name's hash: open addressing with linear
/// probing, at most half full. Each slot has a tag byte (0: empty, else 7 bits of the hash
/// and the top bit set), apart from the entries' positions so that looking up a name not
/// listed, what most lookups of a deep prefix level are, reads only tags: 128 KiB of them
/// for the 50,000 names of a full table at the default capacity, which stay in the cache.
struct NameIndex {
    tags: Vec<u8>,
    /// The entry's position, where the tag is not 0.
    positions: Vec<u32>,
}

impl NameIndex {
    const MIN_SLOTS: usize = 16;

    fn new() -> Self {
        NameIndex {
            tags: vec![0; Self::MIN_SLOTS],
            positions: vec![0; Self::MIN_SLOTS],
        }
    }

    /// The slot a lookup starts at, and the tag it looks for.
    #[inline]
    fn home(&self, hash: u128) -> (usize, u8) {
        let mask = self.tags.len().wrapping_sub(1);
        (hash as usize & mask, (hash >> 121) as u8 | 0x80)
    }

    /// `Ok(position of the entry)` of the name hashed `hash`, or `Err(the empty slot)` where
    /// it would go.
    #[inline]
    fn find(&self, hash: u128, entries: &[Entry]) -> Result<usize, usize> {
        let mask = self.tags.len().wrapping_sub(1);
        let (mut i, tag) = self.home(hash);
        // Ends: at most half the slots are taken.
        loop {
            match self.tags[i] {
                0 => return Err(i),
                t if t == tag => {
                    let at = self.positions[i] as usize;
                    if entries.get(at).is_some_and(|e| e.hash == hash) {
                        return Ok(at);
                    }
                }
                _ => {}
            }
            i = i.wrapping_add(1) & mask;
        }
    }

    /// Points the empty `slot` that [`NameIndex::find`] gave for `hash` at entry `at`.
    #[inline]
    fn set(&mut self, slot: usize, hash: u128, at: usize) {
        self.tags[slot] = self.home(hash).1;
        self.positions[slot] = at as u32;
    }

    /// Indexes `entries` afresh, growing so that at most half the slots are taken.
    fn rebuild(&mut self, entries: &[Entry]) {
        let want = entries
            .len()
            .saturating_mul(2)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .max(Self::MIN_SLOTS);
        if want > self.tags.len() {
            self.tags = vec![0; want];
            self.positions = vec![0; want];
        } else {
            self.tags.fill(0);
        }
        for (at, e) in entries.iter().enumerate() {
            if let Err(slot) = self.find(e.hash, entries) {
                self.set(slot, e.hash, at);
            }
        }
    }
}

/// Adds to a name's statistics with `add`, giving it a whole [`GroupStats`] in `many` (a
/// position from `free` first) if it held a single key.
#[inline]
fn count_more(
    counted: &mut Counted,
    many: &mut Vec<GroupStats>,
    free: &mut Vec<usize>,
    add: impl FnOnce(&mut GroupStats),
) {
    match *counted {
        Counted::Many(at) => add(&mut many[at]),
        Counted::One(first) => {
            let mut stats = first.stats();
            add(&mut stats);
            let at = match free.pop() {
                Some(at) => {
                    many[at] = stats;
                    at
                }
                None => {
                    many.push(stats);
                    many.len().saturating_sub(1)
                }
            };
            *counted = Counted::Many(at);
        }
    }
}

/// Named groups of bounded number that keep every heavy name (see the module docs).
pub struct GroupTable {
    capacity: usize,
    /// The listed names, in the order they entered.
    entries: Vec<Entry>,
    index: NameIndex,
    /// Statistics of the names counted more than once ([`Counted::Many`]).
    many: Vec<GroupStats>,
    /// Places in `many` that purges freed.
    free: Vec<usize>,
    /// The names' bytes, end to end in the order of `entries`; compacted at each purge.
    names: Vec<u8>,
    other: GroupStats,
    /// `Δm`, `Δk`: the purges' decrements so far, what a name out of the table may hold.
    absent: ErrorBound,
    overflowed: bool,
    /// Reused by purges.
    scratch: Vec<u64>,
    /// The statistics of every entry, in order, made when the rows are first read.
    settled: OnceLock<Vec<GroupStats>>,
}

impl GroupTable {
    /// Largest capacity: entries are indexed by 32-bit positions.
    const MAX_CAPACITY: usize = 1 << 28;

    /// A table of capacity `capacity` (at least 1, at most 2^28).
    pub fn new(capacity: usize) -> Self {
        GroupTable {
            capacity: capacity.clamp(1, Self::MAX_CAPACITY),
            entries: Vec::new(),
            index: NameIndex::new(),
            many: Vec::new(),
            free: Vec::new(),
            names: Vec::new(),
            other: GroupStats::default(),
            absent: ErrorBound::default(),
            overflowed: false,
            scratch: Vec::new(),
            settled: OnceLock::new(),
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
        self.add_counting(name, k, k.elements.unwrap_or(0));
    }

    /// Counts `k` under `name` with `elements` as its elements: lint's table of small
    /// strings counts their lengths there.
    #[inline]
    pub fn add_counting(&mut self, name: &[u8], k: &KeyStats<'_>, elements: u64) {
        self.settled.take();
        let hash = xxh3_128(name);
        let key = OneKey {
            elements,
            ..OneKey::of(k)
        };
        let mut found = self.index.find(hash, &self.entries);
        if found.is_err() && self.entries.len() >= self.limit() {
            self.purge();
            found = self.index.find(hash, &self.entries);
        }
        let counter = ErrorBound {
            keys: 1,
            memory_bytes: key.memory_bytes,
        };
        match found {
            Ok(at) => {
                let e = &mut self.entries[at];
                e.counter += counter;
                count_more(&mut e.counted, &mut self.many, &mut self.free, |s| {
                    s.add_key(&key);
                });
            }
            Err(slot) => self.enter(slot, hash, name, Counted::One(key), counter, self.absent),
        }
    }

    /// Lists a new name at the empty index `slot` found for its `hash`.
    fn enter(
        &mut self,
        slot: usize,
        hash: u128,
        name: &[u8],
        counted: Counted,
        counter: ErrorBound,
        error: ErrorBound,
    ) {
        let at = self.entries.len();
        self.entries.push(Entry {
            hash,
            counter,
            error,
            start: self.names.len(),
            len: name.len(),
            counted,
        });
        self.names.extend_from_slice(name);
        self.index.set(slot, hash, at);
        if self.entries.len().saturating_mul(2) > self.index.tags.len() {
            self.index.rebuild(&self.entries);
        }
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
                &mut self.entries.iter().map(|e| e.counter.memory_bytes),
            ),
            keys: nth_largest(
                &mut self.scratch,
                &mut self.entries.iter().map(|e| e.counter.keys),
            ),
        };
        let (names, other, many, free) =
            (&mut self.names, &mut self.other, &self.many, &mut self.free);
        // Entries and names keep their order: each kept name moves down to `names_end`.
        let mut names_end = 0usize;
        self.entries.retain_mut(|e| {
            e.counter.memory_bytes = e.counter.memory_bytes.saturating_sub(cut.memory_bytes);
            e.counter.keys = e.counter.keys.saturating_sub(cut.keys);
            let keep = e.counter.memory_bytes > 0 || e.counter.keys > 0;
            if keep {
                names.copy_within(e.range(), names_end);
                e.start = names_end;
                names_end = names_end.saturating_add(e.len);
            } else {
                match e.counted {
                    Counted::One(key) => other.add_key(&key),
                    Counted::Many(at) => {
                        *other += &many[at];
                        free.push(at);
                    }
                }
            }
            keep
        });
        names.truncate(names_end);
        self.absent += cut;
        self.overflowed = true;
        self.index.rebuild(&self.entries);
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

    /// Whether no name is listed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The listed groups, heaviest first ([`GroupStats::weight`], then name).
    pub fn rows(&self) -> Vec<GroupRow<'_>> {
        self.rows_by(SortBy::Memory)
    }

    /// The listed groups, largest first by `by` ([`GroupStats::rank`]), then by name.
    pub fn rows_by(&self, by: SortBy) -> Vec<GroupRow<'_>> {
        self.rows_top(by, usize::MAX)
    }

    /// The listed groups: the `n` largest by `by` first, in the order of
    /// [`GroupTable::rows_by`], then the others in no particular order. A table shows its
    /// top rows without sorting all of its up to `2.5 m` names (by far the most of what
    /// printing the tables of a large dump took).
    pub fn rows_top(&self, by: SortBy, n: usize) -> Vec<GroupRow<'_>> {
        let settled = self.settled.get_or_init(|| {
            self.entries
                .iter()
                .map(|e| match e.counted {
                    Counted::One(key) => key.stats(),
                    Counted::Many(at) => self.many[at].clone(),
                })
                .collect()
        });
        let mut rows: Vec<_> = self
            .entries
            .iter()
            .zip(settled)
            .map(|(e, stats)| GroupRow {
                name: &self.names[e.range()],
                stats,
                error: e.error,
            })
            .collect();
        let order = |a: &GroupRow<'_>, b: &GroupRow<'_>| {
            b.stats
                .rank(by)
                .cmp(&a.stats.rank(by))
                .then(a.name.cmp(b.name))
        };
        let top = match n.checked_sub(1) {
            Some(last) if last < rows.len() => {
                rows.select_nth_unstable_by(last, order);
                &mut rows[..=last]
            }
            Some(_) => &mut rows[..],
            None => &mut [],
        };
        top.sort_unstable_by(order);
        rows
    }
}

impl AddAssign for GroupTable {
    fn add_assign(&mut self, o: GroupTable) {
        self.settled.take();
        self.other += &o.other;
        self.overflowed |= o.overflowed;
        if o.absent != ErrorBound::default() {
            for e in &mut self.entries {
                if o.index.find(e.hash, &o.entries).is_err() {
                    e.error += o.absent;
                }
            }
        }
        for e in &o.entries {
            match self.index.find(e.hash, &self.entries) {
                Ok(at) => {
                    let mine = &mut self.entries[at];
                    mine.counter += e.counter;
                    mine.error += e.error;
                    count_more(
                        &mut mine.counted,
                        &mut self.many,
                        &mut self.free,
                        |s| match e.counted {
                            Counted::One(key) => s.add_key(&key),
                            Counted::Many(theirs) => *s += &o.many[theirs],
                        },
                    );
                }
                Err(slot) => {
                    let mut error = e.error;
                    error += self.absent;
                    let counted = match e.counted {
                        Counted::One(key) => Counted::One(key),
                        Counted::Many(theirs) => {
                            self.many.push(o.many[theirs].clone());
                            Counted::Many(self.many.len().saturating_sub(1))
                        }
                    };
                    self.enter(slot, e.hash, &o.names[e.range()], counted, e.counter, error);
                }
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
            .iter()
            .map(|e| {
                let stats = match e.counted {
                    Counted::One(key) => key.stats(),
                    Counted::Many(at) => self.many[at].clone(),
                };
                EntryState(
                    std::borrow::Cow::Borrowed(&self.names[e.range()]),
                    stats,
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
            let hash = xxh3_128(&name);
            let Err(slot) = table.index.find(hash, &table.entries) else {
                return Err(D::Error::custom(format!(
                    "the name {:?} is held twice",
                    String::from_utf8_lossy(&name)
                )));
            };
            let counted = match OneKey::alone(&stats) {
                Some(key) => Counted::One(key),
                None => {
                    table.many.push(stats);
                    Counted::Many(table.many.len().saturating_sub(1))
                }
            };
            let counter = ErrorBound {
                keys: counter.0,
                memory_bytes: counter.1,
            };
            let error = ErrorBound {
                keys: error.0,
                memory_bytes: error.1,
            };
            table.enter(slot, hash, &name, counted, counter, error);
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

    #[test]
    fn the_top_rows_come_first_in_the_order_of_all_rows() {
        let items = stream(11, 2_000, 2);
        let table = fill(&items, 40);
        let names =
            |rows: &[GroupRow<'_>]| rows.iter().map(|r| r.name.to_vec()).collect::<Vec<_>>();
        for by in [SortBy::Memory, SortBy::Keys, SortBy::Elements] {
            let all = table.rows_by(by);
            assert!(all.len() > 40, "{} rows", all.len());
            for n in [0, 1, 7, 40, all.len() - 1, all.len(), all.len() + 5] {
                let top = table.rows_top(by, n);
                let shown = n.min(all.len());
                assert_eq!(names(&top[..shown]), names(&all[..shown]), "{by:?}, {n}");
                // The others follow in some order: every row once.
                let mut rest = names(&top[shown..]);
                let mut expected = names(&all[shown..]);
                rest.sort();
                expected.sort();
                assert_eq!(rest, expected, "{by:?}, {n}");
            }
        }
        assert!(!table.is_empty());
        assert!(GroupTable::new(5).is_empty());
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
        // Names counted once are read back as one key, not as a whole GroupStats.
        let held_whole = |t: &GroupTable| {
            t.entries
                .iter()
                .filter(|e| matches!(e.counted, Counted::Many(_)))
                .count()
        };
        assert!((1..table.entries.len()).contains(&held_whole(&table)));
        assert_eq!(held_whole(&back), held_whole(&table));
        assert_eq!(back.many.len(), held_whole(&table));
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
