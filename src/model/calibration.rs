//! What a dump's keys add to the server's `used_memory` under every candidate for what the
//! file does not record: the allocator the server was built with, and whether it held its
//! lists' inner quicklist nodes LZF-compressed (`list-compress-depth`). Summed in the pass
//! that prices each key under one candidate (a few additions a key: each key's figure under
//! every allocator comes from the same walk, see [`KeyStats::used_memory`]), so the whole
//! dump's evidence, not a sample's, tells the candidates apart.

use super::allocator::{Allocator, ByAllocator};
use super::key_stats::KeyStats;
use std::ops::AddAssign;

/// `list-compress-depth` candidates: 0 (off) to 3. Deeper settings are rare, and differ
/// from 3 by a few nodes a list; `--config-set list-compress-depth=N` names one.
pub const DEPTH_CANDIDATES: u64 = 4;

/// Σ over keys of their `used_memory` under every candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsedMemorySums {
    pub keys: u64,
    /// Under the depth the keys were priced with.
    priced: ByAllocator,
    /// With no list node held compressed ...
    uncompressed: ByAllocator,
    /// ... less what compression at depth `d` (index) saves.
    savings: [ByAllocator; DEPTH_CANDIDATES as usize],
}

impl UsedMemorySums {
    /// A key priced at `list-compress-depth` `depth`.
    #[inline]
    pub fn add(&mut self, key: &KeyStats<'_>, depth: u64) {
        self.keys += 1;
        self.priced += key.used_memory;
        let compression = &key.memory.list_compression;
        if compression.is_empty() {
            self.uncompressed += key.used_memory;
            return;
        }
        let nodes = key.summary.list_nodes;
        self.uncompressed += key.used_memory + compression.saving(depth, nodes);
        for d in 1..DEPTH_CANDIDATES {
            self.savings[d as usize] += compression.saving(d, nodes);
        }
    }

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

    /// These sums times `factor` (an estimate of the keys they stand for).
    pub fn scaled(&self, factor: f64) -> Self {
        let scale = |b: ByAllocator| b.map(|_, v| (v as f64 * factor).round() as u64);
        UsedMemorySums {
            keys: (self.keys as f64 * factor).round() as u64,
            priced: scale(self.priced),
            uncompressed: scale(self.uncompressed),
            savings: self.savings.map(scale),
        }
    }
}

impl AddAssign<&UsedMemorySums> for UsedMemorySums {
    fn add_assign(&mut self, o: &UsedMemorySums) {
        self.keys += o.keys;
        self.priced += o.priced;
        self.uncompressed += o.uncompressed;
        for (s, o) in self.savings.iter_mut().zip(o.savings) {
            *s += o;
        }
    }
}
