//! The allocations the memory model makes for one key, kept by request size, so the key is
//! priced once, under the allocator of the profile, and its `used_memory` under every other
//! candidate follows from the same requests (see [`crate::model::calibration`]).
//!
//! A key's model makes a handful of requests (its key sds, its dict entry, its object or
//! value): they are kept as they are, a few pairs of size and count in place, with no
//! allocation and no reset beyond a length. The sums the walk of a collection made for
//! its elements under every candidate ([`ByAllocator`], see [`crate::model::facts`]), and
//! the requests past the few kept in place, are added under every candidate at once.

use super::allocator::{sds_header, Allocator, ByAllocator};

/// Requests kept in place for a key; more are priced under every candidate.
const IN_PLACE: usize = 8;

/// The allocations a key's model made (see the module doc), and what it holds beside them
/// that no allocator rounds.
#[derive(Clone, Debug)]
pub struct KeyAllocations {
    /// The allocator the key is priced under.
    allocator: Allocator,
    /// Request sizes and how many of each (negative: taken back).
    requests: [(u64, i64); IN_PLACE],
    len: usize,
    /// Requests past those, and the walk's sums, under every candidate (when `walked`).
    under_each: [i64; 3],
    walked: bool,
    /// Σ of all the above under `allocator`.
    priced: i64,
    /// What the key's `used_memory` holds beside them: struct sizes the server's
    /// `MEMORY USAGE` counts as they are, set by [`KeyAllocations::finish`].
    unrounded: i64,
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
            requests: [(0, 0); IN_PLACE],
            len: 0,
            under_each: [0; 3],
            walked: false,
            priced: 0,
            unrounded: 0,
        }
    }

    /// Ready for the next key, priced under `allocator`.
    #[inline]
    pub fn reset(&mut self, allocator: Allocator) {
        self.allocator = allocator;
        self.len = 0;
        if self.walked {
            self.under_each = [0; 3];
            self.walked = false;
        }
        self.priced = 0;
    }

    pub fn allocator(&self) -> Allocator {
        self.allocator
    }

    /// The bytes the allocator hands out for a request of `n` bytes.
    #[inline]
    pub fn class(&mut self, n: u64) -> u64 {
        self.class_times(n, 1)
    }

    /// `count` requests of `n` bytes: what they are handed out.
    #[inline]
    pub fn class_times(&mut self, n: u64, count: u64) -> u64 {
        let class = self.allocator.class(n);
        let total = class.saturating_mul(count);
        self.record(n, count as i64, total as i64);
        total
    }

    /// An sds holding `len` bytes, created at its exact size.
    #[inline]
    pub fn sds(&mut self, len: u64) -> u64 {
        self.class(sds_header(len) + len + 1)
    }

    /// A sum the walk made under every candidate: its figure under the allocator priced.
    #[inline]
    pub fn walked(&mut self, sums: ByAllocator) -> u64 {
        let mine = sums[self.allocator];
        for (each, s) in self.under_each.iter_mut().zip(sums.0) {
            *each += s as i64;
        }
        self.walked = true;
        self.priced += mine as i64;
        mine
    }

    /// A sum under every candidate taken back from the key's allocations.
    #[inline]
    pub fn taken_back(&mut self, sums: ByAllocator) -> u64 {
        let mine = sums[self.allocator];
        for (each, s) in self.under_each.iter_mut().zip(sums.0) {
            *each -= s as i64;
        }
        self.walked = true;
        self.priced -= mine as i64;
        mine
    }

    /// `count` requests of `n` bytes, handed out as `total` under the allocator priced.
    #[inline]
    fn record(&mut self, n: u64, count: i64, total: i64) {
        self.priced += total;
        if let Some(slot) = self.requests.get_mut(self.len) {
            *slot = (n, count);
            self.len += 1;
        } else {
            let each = Allocator::classes(n);
            for (e, c) in self.under_each.iter_mut().zip(each.0) {
                *e += c as i64 * count;
            }
            self.walked = true;
        }
    }

    /// Closes the key: `used` is its `used_memory` under the allocator priced, of which
    /// what the requests do not explain is held whatever the allocator.
    #[inline]
    pub fn finish(&mut self, used: u64) {
        self.unrounded = used as i64 - self.priced;
    }

    /// The requests kept in place: size and count.
    #[inline]
    pub fn requests(&self) -> &[(u64, i64)] {
        &self.requests[..self.len]
    }

    /// What the requests past those and the walk's sums come to under every candidate,
    /// when there are any.
    #[inline]
    pub fn under_each(&self) -> Option<[i64; 3]> {
        self.walked.then_some(self.under_each)
    }

    /// What the key holds that no allocator rounds.
    #[inline]
    pub fn unrounded(&self) -> i64 {
        self.unrounded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key's figure under `allocator`.
    fn used_under(k: &KeyAllocations, allocator: Allocator) -> u64 {
        let requests: i64 = k
            .requests()
            .iter()
            .map(|&(n, count)| allocator.class(n) as i64 * count)
            .sum();
        let each = k.under_each().unwrap_or_default()[allocator.index()];
        (k.unrounded() + requests + each) as u64
    }

    #[test]
    fn a_key_priced_once_is_priced_under_every_allocator() {
        let mut k = KeyAllocations::new(Allocator::Jemalloc16);
        // Requests of 20 (×2), 100, and more distinct sizes than are kept in place.
        let mut priced = k.class(20) + k.class(20) + k.class(100);
        for n in 30..40 {
            priced += k.class(n);
        }
        priced += k.walked(ByAllocator([10, 20, 30]));
        priced -= k.taken_back(ByAllocator([1, 2, 3]));
        k.finish(priced + 56);
        assert_eq!(used_under(&k, Allocator::Jemalloc16), priced + 56);
        for a in Allocator::ALL {
            let mut expected = 2 * a.class(20) + a.class(100) + 56;
            expected += (30..40).map(|n| a.class(n)).sum::<u64>();
            expected += [10, 20, 30][a.index()] - [1, 2, 3][a.index()];
            assert_eq!(used_under(&k, a), expected, "{}", a.name());
        }
    }
}
