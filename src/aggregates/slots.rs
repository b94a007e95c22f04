//! Cluster view: keys and memory per hash slot, and per hash tag (`{tag}`), to find the
//! slots and tags that make one shard heavier than the others.

use super::groups::{GroupTable, SortBy};
use crate::model::key_stats::KeyStats;
use crate::pass::totals::add_bounded;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::AddAssign;

pub const SLOTS: usize = 16384;

/// Keys and memory of one slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotLoad {
    pub keys: u64,
    pub memory_bytes: u64,
}

pub struct Slots {
    /// Indexed by slot.
    load: Vec<SlotLoad>,
    tags: GroupTable,
}

impl Slots {
    /// `tag_cap`: hash tags kept before the rest goes to `(other)`.
    pub fn new(tag_cap: usize) -> Self {
        Slots {
            load: vec![SlotLoad::default(); SLOTS],
            tags: GroupTable::new(tag_cap),
        }
    }

    /// Adds `k` to its slot's load (merges the same in any order).
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let s = &mut self.load[usize::from(k.slot()) % SLOTS];
        add_bounded(&mut s.keys, 1);
        s.memory_bytes = s.memory_bytes.saturating_add(k.memory_bytes);
    }

    /// An empty hash-tag table of the same capacity, for [`add_tag`].
    pub fn tags_like(&self) -> GroupTable {
        self.tags.like()
    }

    /// See [`GroupTable::trim`].
    pub fn trim(&mut self) {
        self.tags.trim();
    }

    /// Merges a hash-tag table filled by [`add_tag`], in file order, and empties it
    /// ([`GroupTable::absorb`]).
    pub fn absorb_tags(&mut self, tags: &mut GroupTable) {
        self.tags.absorb(tags);
    }

    pub fn slots_with_keys(&self) -> usize {
        self.load.iter().filter(|s| s.keys > 0).count()
    }

    /// Non-empty slots in slot order.
    pub fn loaded(&self) -> impl Iterator<Item = (u16, &SlotLoad)> {
        (0u16..).zip(&self.load).filter(|(_, l)| l.keys > 0)
    }

    /// The `n` slots with the most memory (then keys, then lowest slot); with
    /// [`SortBy::Keys`], the most keys (then memory). Slots count no elements: `Elements`
    /// ranks by memory.
    pub fn heaviest(&self, n: usize, by: SortBy) -> Vec<(u16, SlotLoad)> {
        let mut rows = self.heaviest_first(n, by);
        rows.truncate(n);
        rows
    }

    /// Every slot with keys: the `n` heaviest first, in the order of
    /// [`Slots::heaviest`], then the others in no particular order. Only the heaviest are
    /// sorted, not the up to 16,384 slots.
    pub fn heaviest_first(&self, n: usize, by: SortBy) -> Vec<(u16, SlotLoad)> {
        let mut rows: Vec<_> = self.loaded().map(|(s, l)| (s, *l)).collect();
        let rank = |l: &SlotLoad| match by {
            SortBy::Keys => (l.keys, l.memory_bytes),
            SortBy::Memory | SortBy::Elements => (l.memory_bytes, l.keys),
        };
        let order = |a: &(u16, SlotLoad), b: &(u16, SlotLoad)| {
            rank(&b.1).cmp(&rank(&a.1)).then(a.0.cmp(&b.0))
        };
        crate::aggregates::sort_first(&mut rows, n, order);
        rows
    }

    pub fn tags(&self) -> &GroupTable {
        &self.tags
    }
}

/// How [`Slots`] are written in summary.json's mergeable state: the slots with keys as
/// `[slot, keys, memory_bytes]`, and the hash-tag table.
#[derive(Deserialize)]
struct SlotsState {
    load: Vec<(u16, u64, u64)>,
    tags: GroupTable,
}

impl Serialize for Slots {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let load = self
            .loaded()
            .map(|(slot, l)| (slot, l.keys, l.memory_bytes))
            .collect();
        /// [`SlotsState`] as written, the table by reference.
        #[derive(Serialize)]
        struct Borrowed<'a> {
            load: Vec<(u16, u64, u64)>,
            tags: &'a GroupTable,
        }
        Borrowed {
            load,
            tags: &self.tags,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Slots {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = SlotsState::deserialize(d)?;
        let mut slots = Slots::new(state.tags.capacity());
        slots.tags = state.tags;
        for (slot, keys, memory_bytes) in state.load {
            *slots
                .load
                .get_mut(usize::from(slot))
                .ok_or_else(|| D::Error::custom(format!("slot {slot} out of range")))? =
                SlotLoad { keys, memory_bytes };
        }
        Ok(slots)
    }
}

/// Adds `k` to a hash-tag table (a heavy-hitter table: keys in file order).
#[inline]
pub fn add_tag(tags: &mut GroupTable, k: &KeyStats<'_>) {
    if let Some(tag) = k.hash_tag() {
        tags.add(tag, k);
    }
}

impl AddAssign for Slots {
    fn add_assign(&mut self, o: Slots) {
        for (a, b) in self.load.iter_mut().zip(&o.load) {
            a.keys = a.keys.saturating_add(b.keys);
            a.memory_bytes = a.memory_bytes.saturating_add(b.memory_bytes);
        }
        self.tags += o.tags;
    }
}
