//! The allocations the memory model makes for the keys it prices, kept by request size, so
//! each key is priced once, under the allocator of the profile, and the keys' `used_memory`
//! under every other candidate follows from the same requests (see
//! [`crate::model::calibration`]).
//!
//! A key's model makes a handful of requests (its key sds, its dict entry, its object or
//! value): each is counted straight into a histogram by request size that the keys read
//! one after another share, until [`crate::model::calibration::UsedMemorySums::take`]
//! takes it (once a chunk of keys): a few additions a key, no per-key list. The sums the
//! walk of a collection made for its elements under every candidate ([`ByAllocator`], see
//! [`crate::model::facts`]), and requests too large for the histogram, are added under
//! every candidate at once.

use super::allocator::{sds_header, small_row, Allocator, ByAllocator, SMALL_ROWS};
use std::ops::AddAssign;

/// Allocations by request size, summed over keys: what [`KeyAllocations`] gathers for
/// the keys read since the last take, and what
/// [`crate::model::calibration::UsedMemorySums`] sums over a dump, merged with `+=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requests {
    /// Requests by size, in rows of 8 bytes ([`small_row`]; negative: taken back).
    pub(super) by_size: [i64; SMALL_ROWS],
    /// Larger requests, and the walks' sums, under every candidate.
    pub(super) under_each: [i64; 3],
    /// What the keys' `used_memory` holds beside them that no allocator rounds: struct
    /// sizes the server's `MEMORY USAGE` counts as they are.
    pub(super) unrounded: i64,
}

impl Default for Requests {
    fn default() -> Self {
        Requests {
            by_size: [0; SMALL_ROWS],
            under_each: [0; 3],
            unrounded: 0,
        }
    }
}

impl AddAssign<&Requests> for Requests {
    fn add_assign(&mut self, o: &Requests) {
        for (c, o) in self.by_size.iter_mut().zip(o.by_size.iter()) {
            *c += o;
        }
        for (e, o) in self.under_each.iter_mut().zip(o.under_each) {
            *e += o;
        }
        self.unrounded += o.unrounded;
    }
}

/// The allocations the model made for the keys read since the last take (see the module
/// doc).
#[derive(Clone, Debug)]
pub struct KeyAllocations {
    /// The allocator the current key is priced under.
    allocator: Allocator,
    requests: Requests,
    /// What the current key's requests and sums come to under `allocator`.
    priced: i64,
}

impl Default for KeyAllocations {
    fn default() -> Self {
        KeyAllocations::new(Allocator::default())
    }
}

impl KeyAllocations {
    pub fn new(allocator: Allocator) -> Self {
        KeyAllocations {
            allocator,
            requests: Requests::default(),
            priced: 0,
        }
    }

    /// The next key, priced under `allocator`.
    #[inline]
    pub fn reset(&mut self, allocator: Allocator) {
        self.allocator = allocator;
        self.priced = 0;
    }

    pub fn allocator(&self) -> Allocator {
        self.allocator
    }

    /// One request of `n` bytes: its size class under the key's allocator.
    #[inline]
    pub fn class(&mut self, n: u64) -> u64 {
        self.class_times(n, 1)
    }

    /// `count` requests of `n` bytes: their size classes under the key's allocator. A
    /// small request's row gives both its class and its count's place in the histogram.
    #[inline(always)]
    pub fn class_times(&mut self, n: u64, count: u64) -> u64 {
        let row = small_row(n);
        let class = match row {
            Some(row) => self.allocator.row_class(row),
            None => self.allocator.class(n),
        };
        let total = class.saturating_mul(count);
        self.priced += total as i64;
        match row.and_then(|row| self.requests.by_size.get_mut(row)) {
            Some(c) => *c += count as i64,
            None => {
                let each = Allocator::classes(n);
                for (e, c) in self.requests.under_each.iter_mut().zip(each.0) {
                    *e += c as i64 * count as i64;
                }
            }
        }
        total
    }

    /// An sds string of `len` bytes.
    #[inline]
    pub fn sds(&mut self, len: u64) -> u64 {
        self.class(sds_header(len) + len + 1)
    }

    /// Sums a walk made under every candidate: the key's allocator's.
    #[inline]
    pub fn walked(&mut self, sums: ByAllocator) -> u64 {
        let mine = sums[self.allocator];
        for (each, s) in self.requests.under_each.iter_mut().zip(sums.0) {
            *each += s as i64;
        }
        self.priced += mine as i64;
        mine
    }

    /// Sums taken back from what was priced (a shared object the server does not hold
    /// twice): the key's allocator's.
    #[inline]
    pub fn taken_back(&mut self, sums: ByAllocator) -> u64 {
        let mine = sums[self.allocator];
        for (each, s) in self.requests.under_each.iter_mut().zip(sums.0) {
            *each -= s as i64;
        }
        self.priced -= mine as i64;
        mine
    }

    /// The key's `used_memory` under its allocator is `used`: what its requests and sums
    /// do not make is unrounded.
    #[inline]
    pub fn finish(&mut self, used: u64) {
        self.requests.unrounded += used as i64 - self.priced;
    }

    /// What the keys priced since the last take requested, leaving none: once a chunk of
    /// keys.
    pub fn take(&mut self) -> Requests {
        std::mem::take(&mut self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys' figure under `allocator`.
    fn used_under(k: &KeyAllocations, allocator: Allocator) -> u64 {
        let r = &k.requests;
        let requests: i64 = (0u64..)
            .zip(r.by_size.iter())
            .map(|(b, &count)| allocator.class(b * 8) as i64 * count)
            .sum();
        let each = r.under_each[allocator.index()];
        (r.unrounded + requests + each) as u64
    }

    #[test]
    fn a_key_priced_once_is_priced_under_every_allocator() {
        let mut k = KeyAllocations::new(Allocator::Jemalloc16);
        // Requests of 20 (×2), 100, more distinct sizes, and one past the histogram.
        let mut priced = k.class(20) + k.class(20) + k.class(100);
        for n in 30..40 {
            priced += k.class(n);
        }
        priced += k.class(5000);
        priced += k.walked(ByAllocator([10, 20, 30]));
        priced -= k.taken_back(ByAllocator([1, 2, 3]));
        k.finish(priced + 56);
        assert_eq!(used_under(&k, Allocator::Jemalloc16), priced + 56);
        for a in Allocator::ALL {
            let mut expected = 2 * a.class(20) + a.class(100) + 56;
            expected += (30..40).map(|n| a.class(n)).sum::<u64>() + a.class(5000);
            expected += [10, 20, 30][a.index()] - [1, 2, 3][a.index()];
            assert_eq!(used_under(&k, a), expected, "{}", a.name());
        }
    }
}
