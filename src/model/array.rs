//! The layout a Redis 8.8+ sparse array (`TYPE` array, encoding `sliced-array`) takes once
//! loaded, rebuilt from the elements' indices and values as the dump lists them.
//!
//! This is an **estimate** from the data structure's public description (`sparsearray.h`,
//! `sparsearray.c`), not a figure checked against a running server: no Redis 8.8+ build
//! was at hand. Facts used (64-bit build, default `array-slice-size` 4096 and
//! `array-sparse-kmax` 10):
//! * the header (`redisArray`) is 80 bytes; every allocation below is counted at its
//!   allocator size, as the array tracks it for `MEMORY USAGE`;
//! * index `i` lives in slice `i / 4096`; slices hang off a flat directory of pointers
//!   (a power of two ≥ highest slice + 1) until a slice id reaches 2048, then off a
//!   super-directory of 24-byte entries (capacity 4, doubling), each owning a block of
//!   2048 slice pointers (16 KiB);
//! * a slice is a 32-byte header plus its payload. Loaded in index order, a slice of at
//!   most 10 elements stays *sparse*: capacity 4, then 8, then 10 pairs of a 2-byte offset
//!   (padded to 8) and an 8-byte value. An eleventh element promotes it to *dense*: a
//!   window of 8-byte slots, a power of two ≥ 8 covering lowest to highest offset;
//! * values are tagged words: integers that fit in 62 bits, doubles and strings of up to
//!   7 bytes cost nothing more; longer strings are an `arString` (a 2-byte length header,
//!   8 bytes from 32 KiB on, then the bytes).

use super::allocator::{Allocator, ByAllocator};
use crate::rdb::length::decimal_len;

/// `sizeof(redisArray)`.
const HEADER: u64 = 80;
/// `sizeof(arSlice)`.
const SLICE: u64 = 32;
/// Elements a slice holds (`array-slice-size`).
const SLICE_SIZE: u64 = 4096;
/// Elements a sparse slice holds before it turns dense (`array-sparse-kmax`).
const SPARSE_MAX: u64 = 10;
/// Slice pointers in a flat directory before it turns into a super-directory.
const BLOCK_SLOTS: u64 = 2048;
/// `sizeof(arSDirEntry)`.
const SUPERDIR_ENTRY: u64 = 24;
/// Longest string stored inline in the tagged word.
const INLINE_STRING: u64 = 7;
/// Integers stored inline in the tagged word: 62 bits.
const INLINE_INT_MAX: i64 = (1 << 61) - 1;

/// What the array holds, summed as the walk meets its elements (in index order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayFacts {
    /// Σ allocations of closed slices and of heap strings.
    bytes: ByAllocator,
    /// The slice being filled: id, elements, lowest and highest offset.
    open: Option<(u64, u64, u64, u64)>,
    highest_slice: u64,
    /// Super-directory blocks used (distinct `slice / 2048`, in index order).
    blocks: u64,
    last_block: Option<u64>,
}

impl ArrayFacts {
    /// An element at `index` whose value costs `value_alloc` bytes beyond its slot.
    fn element(&mut self, index: u64, value_alloc: ByAllocator) {
        self.bytes += value_alloc;
        let slice = index / SLICE_SIZE;
        let offset = index % SLICE_SIZE;
        match &mut self.open {
            Some((id, count, low, high)) if *id == slice => {
                *count += 1;
                *low = (*low).min(offset);
                *high = (*high).max(offset);
            }
            open => {
                if let Some(closed) = open.replace((slice, 1, offset, offset)) {
                    self.bytes += slice_bytes(closed);
                }
                let block = slice / BLOCK_SLOTS;
                if self.last_block != Some(block) {
                    self.blocks += 1;
                    self.last_block = Some(block);
                }
            }
        }
        self.highest_slice = self.highest_slice.max(slice);
    }

    pub fn integer(&mut self, index: u64, v: i64) {
        let heap = if (-INLINE_INT_MAX - 1..=INLINE_INT_MAX).contains(&v) {
            ByAllocator::default()
        } else {
            string_alloc(decimal_len(v))
        };
        self.element(index, heap);
    }

    pub fn double(&mut self, index: u64) {
        self.element(index, ByAllocator::default());
    }

    /// A string element; `inline_allowed` is false for values the dump tags as heap
    /// strings (tag 0), which load as heap strings whatever their length.
    pub fn string(&mut self, index: u64, len: u64, inline_allowed: bool) {
        let heap = if inline_allowed && len <= INLINE_STRING {
            ByAllocator::default()
        } else {
            string_alloc(len)
        };
        self.element(index, heap);
    }

    /// The array's tracked allocation size: header, directory, slices and strings.
    pub fn bytes(&self) -> ByAllocator {
        let open = self.open.map_or(ByAllocator::default(), slice_bytes);
        let directory = if self.highest_slice < BLOCK_SLOTS {
            if self.open.is_none() {
                ByAllocator::default()
            } else {
                Allocator::classes(8 * (self.highest_slice + 1).next_power_of_two())
            }
        } else {
            let capacity = self.blocks.max(4).next_power_of_two();
            Allocator::classes(SUPERDIR_ENTRY * capacity)
                + Allocator::classes(8 * BLOCK_SLOTS).times(self.blocks)
        };
        Allocator::classes(HEADER) + directory + self.bytes + open
    }
}

/// A heap string (`arString`) of `len` bytes.
fn string_alloc(len: u64) -> ByAllocator {
    let header = if len <= 32767 { 2 } else { 8 };
    Allocator::classes(header + len)
}

/// A slice holding `count` elements between offsets `low` and `high`.
fn slice_bytes((_, count, low, high): (u64, u64, u64, u64)) -> ByAllocator {
    if count <= SPARSE_MAX {
        let capacity = match count {
            0..=4 => 4,
            5..=8 => 8,
            _ => SPARSE_MAX,
        };
        Allocator::classes(SLICE + (2 * capacity).next_multiple_of(8) + 8 * capacity)
    } else {
        let window = (high - low + 1).next_power_of_two().clamp(8, SLICE_SIZE);
        Allocator::classes(SLICE + 8 * window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Allocator = Allocator::Jemalloc;

    #[test]
    fn one_short_string() {
        let mut f = ArrayFacts::default();
        f.string(0, 11, false);
        // Header 80, directory of one pointer (8), a sparse slice of capacity 4
        // (32 + 8 + 32 = 72 bytes, an 80-byte class), the string (2 + 11 → 16).
        assert_eq!(f.bytes()[A], 80 + 8 + 80 + 16);
    }

    #[test]
    fn dense_and_sparse_slices_and_a_directory() {
        let mut f = ArrayFacts::default();
        // 100 integers at 0..100: one dense slice with a 128-slot window.
        for i in 0..100 {
            f.integer(i, i as i64);
        }
        // 3 inline strings in slice 5 (a sparse slice of capacity 4).
        for i in 0..3 {
            f.string(5 * 4096 + i, 3, true);
        }
        let dense = A.class(32 + 8 * 128);
        let sparse = A.class(32 + 8 + 32);
        // Highest slice 5: a directory of 8 pointers.
        assert_eq!(f.bytes()[A], 80 + 64 + dense + sparse);
    }

    #[test]
    fn far_indices_use_a_super_directory() {
        let mut f = ArrayFacts::default();
        f.double(0);
        f.double(1_000_000_000_000);
        let sparse = A.class(32 + 8 + 32);
        // Two blocks of 2048 pointers, a super-directory of capacity 4.
        assert_eq!(f.bytes()[A], 80 + 2 * 16384 + 96 + 2 * sparse);
    }
}
