//! The groups in summary.json's mergeable state: [`GroupStats`] and [`GroupTable`] saved
//! and read back, written by hand to keep the state small (a name counted once holds no
//! per-type array).

use super::stats::{GroupStats, OneKey, TypeSplit};
use super::table::{Counted, ErrorBound, GroupTable};
use crate::rdb::RedisType;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use xxhash_rust::xxh3::xxh3_128;

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
        serialize_with = "crate::aggregates::state_fields::bytes::serialize",
        deserialize_with = "crate::aggregates::state_fields::bytes::deserialize"
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
