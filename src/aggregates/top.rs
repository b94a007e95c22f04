//! The N biggest keys by a metric, in a heap of N: memory stays at N keys whatever the
//! size of the dump.
//!
//! Ties are broken by position: the key of the dump named first on the command line, then
//! the one stored first in its dump, ranks higher. Positions are unique, so the kept keys
//! and their order are the same whichever thread or shard saw them first; and a tie costs
//! two integer comparisons, where comparing names cost a `memcmp` a key on dumps whose
//! keys share a size.

use super::groups::type_index;
use crate::model::encoding::Encoding;
use crate::model::key_stats::KeyStats;
use crate::pass::totals::TypeKey;
use crate::rdb::RedisType;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::AddAssign;

/// What keys are ranked by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Estimated RAM once loaded.
    Memory,
    /// Element count (`STRLEN` for strings).
    Elements,
    /// Bytes in the dump file.
    Serialized,
    /// LRU idle seconds, the coldest first (dumps of servers with an `*-lru` policy).
    Idle,
    /// LFU counter, the hottest first (dumps of servers with an `*-lfu` policy).
    Freq,
}

impl Metric {
    /// The name a ranking goes by in `top.csv` (as `--by` spells it).
    pub fn ranking(self) -> &'static str {
        match self {
            Metric::Memory => "memory",
            Metric::Elements => "elements",
            Metric::Serialized => "serialized",
            Metric::Idle => "idle",
            Metric::Freq => "freq",
        }
    }

    /// The title of the ranking.
    pub fn title(self) -> &'static str {
        match self {
            Metric::Memory => "Biggest keys by memory",
            Metric::Elements => "Biggest keys by elements",
            Metric::Serialized => "Biggest keys by bytes in the file",
            Metric::Idle => "Coldest keys (longest LRU idle time)",
            Metric::Freq => "Hottest keys (highest LFU counter)",
        }
    }

    /// Why a ranking by this metric can be empty although the dump holds keys.
    pub fn absent(self) -> Option<&'static str> {
        match self {
            Metric::Idle => Some("no key carries an LRU idle time: a dump holds them when the server's maxmemory-policy is allkeys-lru or volatile-lru"),
            Metric::Freq => Some("no key carries an LFU counter: a dump holds them when the server's maxmemory-policy is allkeys-lfu or volatile-lfu"),
            Metric::Elements => Some("no key is a collection (hash, list, set, sorted set, stream or array): strings hold no elements"),
            Metric::Memory | Metric::Serialized => None,
        }
    }

    /// The key's value; `None` for a key the dump gives no idle time or counter, and for a
    /// string or module value by elements.
    #[inline]
    fn of(self, k: &KeyStats<'_>) -> Option<u64> {
        match self {
            Metric::Memory => Some(k.memory_bytes),
            // Collections only: a string holds no elements, a module value's only its
            // module knows.
            Metric::Elements => k.elements.filter(|_| k.redis_type != RedisType::String),
            Metric::Serialized => Some(k.serialized_bytes),
            Metric::Idle => k.idle_s,
            Metric::Freq => k.lfu_freq.map(u64::from),
        }
    }
}

/// One ranked key, owned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopKey {
    /// The ranking metric's value.
    pub value: u64,
    pub db: u64,
    #[serde(with = "super::state_fields::bytes")]
    pub key: Box<[u8]>,
    /// Index of the dump on the command line.
    pub file: usize,
    /// Offset of the key's record in its dump (0 in a summary.json written before
    /// rankings broke ties by position).
    #[serde(default)]
    pub offset: u64,
    pub type_key: TypeKey,
    pub encoding: Encoding,
    pub elements: Option<u64>,
    pub serialized_bytes: u64,
    pub memory_bytes: u64,
    pub largest_element_bytes: u64,
    pub expiry_ms: Option<i64>,
}

impl TopKey {
    /// `k`, owned, ranked by `value`; `file` is the index of its dump.
    pub fn new(k: &KeyStats<'_>, value: u64, file: usize) -> Self {
        TopKey {
            value,
            db: k.db,
            key: k.key.as_ref().into(),
            file,
            offset: k.offset,
            type_key: TypeKey::of(k),
            encoding: k.encoding,
            elements: k.elements,
            serialized_bytes: k.serialized_bytes,
            memory_bytes: k.memory_bytes,
            largest_element_bytes: k.largest_element_bytes,
            expiry_ms: k.expiry_ms,
        }
    }

    /// Larger ranks higher: bigger value, then lower file, then lower offset.
    fn rank_cmp(&self, value: u64, file: usize, offset: u64) -> Ordering {
        self.value
            .cmp(&value)
            .then(file.cmp(&self.file))
            .then(offset.cmp(&self.offset))
    }
}

impl Ord for TopKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank_cmp(other.value, other.file, other.offset)
    }
}

impl PartialOrd for TopKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The `n` highest-ranked keys by one metric.
pub struct TopN {
    n: usize,
    metric: Metric,
    file: usize,
    /// Lowest-ranked kept key on top: the one a better key replaces.
    heap: BinaryHeap<Reverse<TopKey>>,
    /// What a key of this ranking's dump must pass to enter, once `n` are kept: see
    /// [`TopN::rank`]. Most keys are turned away by this one comparison.
    floor: Option<u128>,
}

impl TopN {
    /// `file` is the index of the dump the keys come from.
    pub fn new(n: usize, metric: Metric, file: usize) -> Self {
        TopN {
            n,
            metric,
            file,
            // Room for the first keys; a ranking read from a file may ask for any `n`.
            heap: BinaryHeap::with_capacity(n.min(1 << 12).saturating_add(1)),
            floor: None,
        }
    }

    /// A key of this ranking's dump as one number that orders like [`TopKey`]: its value,
    /// then its position (earlier ranks higher: `!offset`).
    #[inline]
    fn rank(value: u64, offset: u64) -> u128 {
        u128::from(value) << 64 | u128::from(!offset)
    }

    /// Sets [`TopN::floor`] from the lowest kept key, once `n` are kept. A key of this
    /// dump tying with it on value enters when it comes before it: always when the lowest
    /// is of a later dump, never when of an earlier one.
    fn settle_floor(&mut self) {
        self.floor = match self.heap.peek() {
            Some(Reverse(low)) if self.heap.len() >= self.n => {
                let before = match low.file.cmp(&self.file) {
                    Ordering::Equal => low.offset,
                    Ordering::Greater => u64::MAX,
                    Ordering::Less => 0,
                };
                Some(Self::rank(low.value, before))
            }
            _ => None,
        };
    }

    pub fn metric(&self) -> Metric {
        self.metric
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        self.offer(k, self.metric.of(k));
    }

    /// Ranks `k` by `value`, its value under this ranking's metric.
    #[inline]
    fn offer(&mut self, k: &KeyStats<'_>, value: Option<u64>) {
        let Some(value) = value else {
            return;
        };
        // Most keys lose to the lowest kept one: decide that without copying the key.
        if self
            .floor
            .is_none_or(|floor| Self::rank(value, k.offset) > floor)
        {
            self.keep(k, value);
        }
    }

    /// Keeps `k`, ranked by `value`, in place of the lowest kept key if there are `n`:
    /// apart from [`TopN::add`], which is inlined into the caller for every key.
    #[inline(never)]
    fn keep(&mut self, k: &KeyStats<'_>, value: u64) {
        if self.n == 0 {
            return;
        }
        if self.heap.len() >= self.n {
            self.heap.pop();
        }
        self.heap.push(Reverse(TopKey::new(k, value, self.file)));
        self.settle_floor();
    }

    /// Highest first.
    pub fn sorted(&self) -> Vec<&TopKey> {
        let mut keys: Vec<_> = self.heap.iter().map(|r| &r.0).collect();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        keys
    }
}

/// How a [`TopN`] is written in summary.json's mergeable state: its keys, highest first.
#[derive(Serialize, Deserialize)]
struct TopNState<K> {
    n: usize,
    metric: Metric,
    keys: Vec<K>,
}

impl Serialize for TopN {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TopNState {
            n: self.n,
            metric: self.metric,
            keys: self.sorted(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for TopN {
    /// Keys beyond the `n` highest are dropped; the ranking then adds keys of file 0.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = TopNState::<TopKey>::deserialize(d)?;
        let mut top = TopN::new(state.n, state.metric, 0);
        top.heap.extend(state.keys.into_iter().map(Reverse));
        while top.heap.len() > top.n {
            top.heap.pop();
        }
        top.settle_floor();
        Ok(top)
    }
}

impl TopN {
    /// The keys' dump indexes moved up by `offset`: this ranking's dumps come after
    /// `offset` others in a merged run.
    pub fn shift_files(&mut self, offset: usize) {
        self.heap = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|Reverse(mut k)| {
                k.file = k.file.saturating_add(offset);
                Reverse(k)
            })
            .collect();
        self.settle_floor();
    }
}

impl AddAssign for TopN {
    fn add_assign(&mut self, other: TopN) {
        for Reverse(k) in other.heap {
            if self.heap.len() < self.n {
                self.heap.push(Reverse(k));
            } else if self.heap.peek().is_some_and(|Reverse(low)| k > *low) {
                self.heap.pop();
                self.heap.push(Reverse(k));
            }
        }
        self.settle_floor();
    }
}

/// The rankings a report shows: overall by memory, elements and bytes in the file, and by
/// memory within each type.
#[derive(Serialize, Deserialize)]
pub struct TopKeys {
    pub by_memory: TopN,
    pub by_elements: TopN,
    pub by_serialized: TopN,
    /// Indexed like [`crate::rdb::RedisType::ALL`].
    pub by_type: [TopN; crate::rdb::RedisType::ALL.len()],
}

impl TopKeys {
    pub fn new(n: usize, file: usize) -> Self {
        TopKeys {
            by_memory: TopN::new(n, Metric::Memory, file),
            by_elements: TopN::new(n, Metric::Elements, file),
            by_serialized: TopN::new(n, Metric::Serialized, file),
            by_type: std::array::from_fn(|_| TopN::new(n, Metric::Memory, file)),
        }
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let memory = Some(k.memory_bytes);
        self.by_memory.offer(k, memory);
        self.by_elements.offer(k, Metric::Elements.of(k));
        self.by_serialized.offer(k, Some(k.serialized_bytes));
        self.by_type[type_index(k.redis_type)].offer(k, memory);
    }
}

impl TopKeys {
    /// See [`TopN::shift_files`].
    pub fn shift_files(&mut self, offset: usize) {
        let all = [
            &mut self.by_memory,
            &mut self.by_elements,
            &mut self.by_serialized,
        ];
        for top in all.into_iter().chain(&mut self.by_type) {
            top.shift_files(offset);
        }
    }
}

impl AddAssign for TopKeys {
    fn add_assign(&mut self, o: TopKeys) {
        self.by_memory += o.by_memory;
        self.by_elements += o.by_elements;
        self.by_serialized += o.by_serialized;
        for (a, b) in self.by_type.iter_mut().zip(o.by_type) {
            *a += b;
        }
    }
}
