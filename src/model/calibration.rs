//! What a dump's keys add to the server's `used_memory` under every candidate for what the
//! file does not record: the allocator the server was built with, and whether it held its
//! lists' inner quicklist nodes LZF-compressed (`list-compress-depth`). Each key is priced
//! once, under the profile's allocator; its allocations go into a histogram by request size
//! ([`UsedMemorySums`], merged with `+=`), and the totals for every candidate are Σ count ×
//! class(size) at the end ([`UsedMemoryTotals`]). Requests from
//! [`super::allocator::SMALL_REQUESTS`] bytes on, rare, and the sums a collection's walk
//! made for its elements are priced under every candidate as they come. Lists holding nodes the server may have compressed, rare too,
//! add what each depth would save. So the whole dump's evidence, not a sample's, tells the
//! candidates apart, for a few additions a key.

use super::allocations::{KeyAllocations, Requests};
use super::allocator::{Allocator, ByAllocator};
use super::key_stats::KeyStats;
use super::memory::KEYSPACE_ENTRY;
use std::ops::{AddAssign, SubAssign};

/// `list-compress-depth` candidates: 0 (off) to 3. Deeper settings are rare, and differ
/// from 3 by a few nodes a list; `--config-set list-compress-depth=N` names one.
pub const DEPTH_CANDIDATES: u64 = 4;

/// Σ over keys of their allocations, by request size: `used_memory` under every candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsedMemorySums {
    pub keys: u64,
    /// Keys with a TTL: each has an expires entry beside its keyspace entry.
    expires: u64,
    /// What the keys' models requested (negative: allocations they took back).
    requests: Requests,
    /// What compression at the depth the keys were priced with saves, and at depth `d`
    /// (index), under every candidate.
    priced_saving: ByAllocator,
    savings: [ByAllocator; DEPTH_CANDIDATES as usize],
}

impl Default for UsedMemorySums {
    fn default() -> Self {
        UsedMemorySums {
            keys: 0,
            expires: 0,
            requests: Requests::default(),
            priced_saving: ByAllocator::default(),
            savings: [ByAllocator::default(); DEPTH_CANDIDATES as usize],
        }
    }
}

impl UsedMemorySums {
    /// A key priced at `list-compress-depth` `depth` (its allocations are taken with the
    /// others' by [`UsedMemorySums::take`]).
    #[inline]
    pub fn add(&mut self, key: &KeyStats<'_>, depth: u64) {
        self.keys += 1;
        self.expires += u64::from(key.expiry_ms.is_some());
        let compression = &key.memory.list_compression;
        if !compression.is_empty() {
            self.add_savings(key, depth);
        }
    }

    /// Takes what the keys priced since the last take requested, leaving `allocations`
    /// empty: once a chunk of keys.
    pub fn take(&mut self, allocations: &mut KeyAllocations) {
        self.requests += &allocations.take();
    }

    /// What a list's compressed nodes save at each depth: out of line, few keys have any.
    #[inline(never)]
    fn add_savings(&mut self, key: &KeyStats<'_>, depth: u64) {
        let (compression, nodes) = (&key.memory.list_compression, key.summary.list_nodes);
        self.priced_saving += compression.saving(depth, nodes);
        for d in 1..DEPTH_CANDIDATES {
            self.savings[d as usize] += compression.saving(d, nodes);
        }
    }

    /// The totals under every candidate.
    pub fn totals(&self) -> UsedMemoryTotals {
        // Every key's keyspace entry and every expiring key's expires entry, which
        // `MEMORY USAGE` counts (once) at its size.
        let entries = (self.keys + self.expires) as i64;
        let r = &self.requests;
        let mut priced = r.under_each.map(|e| e + r.unrounded);
        for (p, a) in priced.iter_mut().zip(Allocator::ALL) {
            *p += entries * (a.class(KEYSPACE_ENTRY) - KEYSPACE_ENTRY) as i64;
        }
        for (b, &count) in r.by_size.iter().enumerate() {
            if count != 0 {
                for (p, a) in priced.iter_mut().zip(Allocator::ALL) {
                    let c = a.row_class(b);
                    *p = p.saturating_add((c as i64).saturating_mul(count));
                }
            }
        }
        let priced = ByAllocator(priced.map(|p| p.max(0) as u64));
        UsedMemoryTotals {
            keys: self.keys,
            priced,
            uncompressed: priced + self.priced_saving,
            savings: self.savings,
        }
    }
}

impl AddAssign<&UsedMemorySums> for UsedMemorySums {
    fn add_assign(&mut self, o: &UsedMemorySums) {
        self.keys += o.keys;
        self.expires += o.expires;
        self.requests += &o.requests;
        self.priced_saving += o.priced_saving;
        for (s, o) in self.savings.iter_mut().zip(o.savings) {
            *s += o;
        }
    }
}

/// The keys' `used_memory` under every candidate (see [`UsedMemorySums::totals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsedMemoryTotals {
    pub keys: u64,
    /// Under the depth the keys were priced with.
    priced: ByAllocator,
    /// With no list node held compressed ...
    uncompressed: ByAllocator,
    /// ... less what compression at depth `d` (index) saves.
    savings: [ByAllocator; DEPTH_CANDIDATES as usize],
}

impl UsedMemoryTotals {
    /// The keys' `used_memory` under `allocator` at `list-compress-depth` `depth` (one of
    /// the candidates), or as priced when `None`.
    pub fn used(&self, allocator: Allocator, depth: Option<u64>) -> u64 {
        match depth {
            Some(d) => self.uncompressed[allocator]
                .saturating_sub(self.savings[d.min(DEPTH_CANDIDATES - 1) as usize][allocator]),
            None => self.priced[allocator],
        }
    }

    /// Whether some list holds nodes the server may have held compressed: whether the
    /// depth makes a difference.
    pub fn compressible(&self) -> bool {
        self.savings[1] != ByAllocator::default()
    }

    /// These totals times `factor` (an estimate of the keys they stand for).
    pub fn scaled(&self, factor: f64) -> Self {
        let scale = |b: ByAllocator| b.map(|_, v| (v as f64 * factor).round() as u64);
        UsedMemoryTotals {
            keys: (self.keys as f64 * factor).round() as u64,
            priced: scale(self.priced),
            uncompressed: scale(self.uncompressed),
            savings: self.savings.map(scale),
        }
    }
}

impl SubAssign<&UsedMemoryTotals> for UsedMemoryTotals {
    /// Takes back the totals of keys among those summed (the totals are linear in the keys).
    fn sub_assign(&mut self, o: &UsedMemoryTotals) {
        self.keys = self.keys.saturating_sub(o.keys);
        self.priced -= o.priced;
        self.uncompressed -= o.uncompressed;
        for (s, o) in self.savings.iter_mut().zip(o.savings) {
            *s -= o;
        }
    }
}

impl AddAssign<&UsedMemoryTotals> for UsedMemoryTotals {
    fn add_assign(&mut self, o: &UsedMemoryTotals) {
        self.keys += o.keys;
        self.priced += o.priced;
        self.uncompressed += o.uncompressed;
        for (s, o) in self.savings.iter_mut().zip(o.savings) {
            *s += o;
        }
    }
}
