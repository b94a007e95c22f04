//! [`GroupTable`]: the named groups, their counters and error bounds, the purges and the
//! merges (see the module docs of [`super`]).

use super::index::NameIndex;
use super::stats::{GroupStats, OneKey, SortBy};
use crate::model::key_stats::KeyStats;
use crate::pass::totals::add_bounded;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;
use std::sync::OnceLock;
use xxhash_rust::xxh3::xxh3_128;

/// How far a row may fall short of the truth: at most `keys` keys holding at most
/// `memory_bytes` bytes were counted under `(other)` before the name entered the table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBound {
    pub keys: u64,
    pub memory_bytes: u64,
}

impl ErrorBound {
    /// One more key, of `memory_bytes`.
    #[inline(always)]
    fn add_key(&mut self, memory_bytes: u64) {
        add_bounded(&mut self.keys, 1);
        self.memory_bytes = self.memory_bytes.saturating_add(memory_bytes);
    }
}

impl AddAssign for ErrorBound {
    fn add_assign(&mut self, o: ErrorBound) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
    }
}

/// Keys counted under the names a few tables counted last, without naming them: a run
/// of keys whose names the caller knows are those of the key before in each table (see
/// [`crate::aggregates::report::Tables`]). Each key is summed here once; the sum goes to
/// every table's last name when the run ends ([`GroupTable::count_run`]), which gives what
/// counting each key in each table gives.
#[derive(Clone, Debug, Default)]
pub struct RunOfKeys {
    stats: GroupStats,
    counter: ErrorBound,
}

impl RunOfKeys {
    /// One more key of the run.
    #[inline(always)]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let key = OneKey::of(k, k.elements.unwrap_or(0));
        self.counter.add_key(key.memory_bytes);
        self.stats.add_key(&key);
    }

    pub fn is_empty(&self) -> bool {
        self.stats.keys == 0
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
pub(super) enum Counted {
    /// A single key.
    One(OneKey),
    /// More: where its statistics are in [`GroupTable::many`].
    Many(usize),
}

pub(super) struct Entry {
    /// xxh3-128 of the name.
    pub(super) hash: u128,
    /// Memory and keys since the name entered, less the purges' decrements.
    pub(super) counter: ErrorBound,
    pub(super) error: ErrorBound,
    /// Where the name's bytes are in [`GroupTable::names`].
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) counted: Counted,
}

impl Entry {
    /// Where the name's bytes are in the table's `names`.
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start.saturating_add(self.len)
    }
}

/// Adds to a name's statistics with `add`, giving it a whole [`GroupStats`] in `many` (a
/// position from `free` first) if it held a single key.
#[inline]
pub(super) fn count_more(
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

/// Whether two names (or a key's start and a pattern's head) are the same bytes: most are
/// short, compared here in two loads of a word each (overlapping) rather than through a
/// call to `memcmp`.
#[inline]
pub fn same_name(a: &[u8], b: &[u8]) -> bool {
    fn load<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        w.copy_from_slice(&s[at..at.saturating_add(N)]);
        w
    }
    fn ends<const N: usize>(a: &[u8], b: &[u8]) -> bool {
        let last = a.len().saturating_sub(N);
        load::<N>(a, 0) == load::<N>(b, 0) && load::<N>(a, last) == load::<N>(b, last)
    }
    match a.len() {
        n if n != b.len() => false,
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => ends::<4>(a, b),
        8..=16 => ends::<8>(a, b),
        _ => a == b,
    }
}

/// Named groups of bounded number that keep every heavy name (see the module docs).
pub struct GroupTable {
    pub(super) capacity: usize,
    /// The listed names, in the order they entered.
    pub(super) entries: Vec<Entry>,
    pub(super) index: NameIndex,
    /// Statistics of the names counted more than once ([`Counted::Many`]).
    pub(super) many: Vec<GroupStats>,
    /// Places in `many` that purges freed.
    pub(super) free: Vec<usize>,
    /// The names' bytes, end to end in the order of `entries`; compacted at each purge.
    pub(super) names: Vec<u8>,
    pub(super) other: GroupStats,
    /// `Δm`, `Δk`: the purges' decrements so far, what a name out of the table may hold.
    pub(super) absent: ErrorBound,
    pub(super) overflowed: bool,
    /// Reused by purges.
    pub(super) scratch: Vec<u64>,
    /// The statistics of every entry, in order, made when the rows are first read.
    pub(super) settled: OnceLock<Vec<GroupStats>>,
    /// The entry the last key was counted under: keys of one name tend to come in runs
    /// (a dump of one prefix, a chunk of one pattern), and such a key is counted after
    /// comparing its name with that entry's, without hashing it or probing the index.
    /// Purges move entries, so they forget it.
    pub(super) last: Option<usize>,
}

impl GroupTable {
    /// Largest capacity: entries are indexed by 32-bit positions.
    pub(super) const MAX_CAPACITY: usize = 1 << 28;

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
            last: None,
        }
    }

    /// An empty table of the same capacity.
    pub fn like(&self) -> Self {
        GroupTable::new(self.capacity)
    }

    /// Most names held between keys: `2.5 m`, which leaves room for at least `m / 2` new
    /// names after each purge.
    pub(super) fn limit(&self) -> usize {
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
    /// strings counts their lengths there. A key of the name counted last, already counted
    /// more than once, is added in line (the common case of a run of keys of one name);
    /// any other goes out of line ([`GroupTable::count_looked_up`]).
    #[inline(always)]
    pub fn add_counting(&mut self, name: &[u8], k: &KeyStats<'_>, elements: u64) {
        match self.last {
            Some(at) if same_name(&self.names[self.entries[at].range()], name) => {
                self.count_last(at, k, elements);
            }
            _ => self.count_looked_up(name, k, elements),
        }
    }

    /// Counts `k` under `name`, which the caller knows is the name this table counted a
    /// key under last (a key of the pattern of the key before): the names are not
    /// compared. A table that forgot its last name (a purge, the chunk's start) looks it up.
    #[inline(always)]
    pub fn add_same(&mut self, name: &[u8], k: &KeyStats<'_>) {
        let elements = k.elements.unwrap_or(0);
        match self.last {
            Some(at) => {
                debug_assert_eq!(&self.names[self.entries[at].range()], name);
                self.count_last(at, k, elements);
            }
            None => self.count_looked_up(name, k, elements),
        }
    }

    /// Whether the table counted a key since its start or last purge: the name a
    /// [`RunOfKeys`] is counted under.
    pub fn has_last(&self) -> bool {
        self.last.is_some()
    }

    /// Counts the keys of `run` under the name counted last, which the caller saw there
    /// was ([`GroupTable::has_last`]) when the run began; nothing has been counted since.
    pub fn count_run(&mut self, run: &RunOfKeys) {
        debug_assert!(self.last.is_some(), "a run counted with no last name");
        let Some(at) = self.last else {
            return;
        };
        self.settled.take();
        let e = &mut self.entries[at];
        e.counter += run.counter;
        count_more(&mut e.counted, &mut self.many, &mut self.free, |s| {
            *s += &run.stats;
        });
    }

    /// Counts `k` (of `elements`) under entry `at`, the name counted last: in line when
    /// that name counted more than one key (a run of keys of one name).
    #[inline(always)]
    fn count_last(&mut self, at: usize, k: &KeyStats<'_>, elements: u64) {
        let e = &mut self.entries[at];
        match e.counted {
            Counted::Many(many) if self.settled.get().is_none() => {
                // Read from `k` as it is added: the figures are not copied.
                let key = OneKey::of(k, elements);
                e.counter.add_key(key.memory_bytes);
                self.many[many].add_key(&key);
            }
            _ => self.count_again(at, k, elements),
        }
    }

    /// Counts `k` (of `elements`) under entry `at`, the name counted last, which counted
    /// one key so far or whose rows were read since.
    #[inline(never)]
    fn count_again(&mut self, at: usize, k: &KeyStats<'_>, elements: u64) {
        self.settled.take();
        let key = OneKey::of(k, elements);
        self.count_at(at, &key);
    }

    /// Counts `key` under entry `at`.
    #[inline]
    fn count_at(&mut self, at: usize, key: &OneKey) {
        let e = &mut self.entries[at];
        e.counter.add_key(key.memory_bytes);
        count_more(&mut e.counted, &mut self.many, &mut self.free, |s| {
            s.add_key(key);
        });
        self.last = Some(at);
    }

    /// Counts `k` (of `elements`) under `name`, found by its hash, or entered.
    #[inline(never)]
    fn count_looked_up(&mut self, name: &[u8], k: &KeyStats<'_>, elements: u64) {
        self.settled.take();
        let key = OneKey::of(k, elements);
        let hash = xxh3_128(name);
        let mut found = self.index.find(hash, &self.entries);
        if found.is_err() && self.entries.len() >= self.limit() {
            self.purge();
            found = self.index.find(hash, &self.entries);
        }
        match found {
            Ok(at) => self.count_at(at, &key),
            Err(slot) => {
                let counter = ErrorBound {
                    keys: 1,
                    memory_bytes: key.memory_bytes,
                };
                self.enter(slot, hash, name, Counted::One(key), counter, self.absent);
                self.last = self.entries.len().checked_sub(1);
            }
        }
    }

    /// Lists a new name at the empty index `slot` found for its `hash`.
    pub(super) fn enter(
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
    pub(super) fn purge(&mut self) {
        self.last = None;
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

    /// Purges once if the table lists more than `2 m` names, as a merge may leave it (up to
    /// `2.5 m`): how many light names a table lists then does not depend on where its
    /// last purge fell, and a dump's tables list at most `2 m` names.
    pub fn trim(&mut self) {
        if self.entries.len() > self.capacity.saturating_mul(2) {
            self.settled.take();
            self.purge();
        }
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
        crate::aggregates::sort_first(&mut rows, n, order);
        rows
    }
}

impl AddAssign for GroupTable {
    fn add_assign(&mut self, mut o: GroupTable) {
        self.absorb(&mut o);
    }
}

impl GroupTable {
    /// Merges `o` (the table of the keys that came after this one's) into this one, and
    /// empties it, keeping its allocations for the next chunk of the file: a chunk's
    /// table then grows no vector and rebuilds no index as names come in.
    pub fn absorb(&mut self, o: &mut GroupTable) {
        if self.counted_nothing() && self.capacity == o.capacity {
            // What absorbing into an empty table gives, entry by entry: `o`'s entries in
            // their order, with their counters and bounds; its rows are read the same.
            std::mem::swap(self, o);
        } else {
            self.merge_entries(o);
        }
        if self.entries.len() > self.limit() {
            self.purge();
        }
        o.clear();
    }

    /// Adds `o`'s counts and entries to this table's, entry by entry.
    fn merge_entries(&mut self, o: &GroupTable) {
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
    }

    /// Whether nothing was counted: no name listed, none dropped.
    fn counted_nothing(&self) -> bool {
        self.entries.is_empty()
            && self.other == GroupStats::default()
            && self.absent == ErrorBound::default()
            && !self.overflowed
    }

    /// No name listed, nothing counted, as [`GroupTable::like`] makes it; the vectors and
    /// the index keep their room.
    fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
        self.many.clear();
        self.free.clear();
        self.names.clear();
        self.other = GroupStats::default();
        self.absent = ErrorBound::default();
        self.overflowed = false;
        self.settled = OnceLock::new();
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::same_name;

    #[test]
    fn names_compare_as_their_bytes_whatever_their_length() {
        for len in 0..40u8 {
            let a: Vec<u8> = (0..len).collect();
            assert!(same_name(&a, &a.clone()));
            assert!(!same_name(&a, &a[..a.len().saturating_sub(1)]) || len == 0);
            for at in 0..a.len() {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_name(&a, &b), "{len} bytes, differing at {at}");
            }
        }
    }
}
