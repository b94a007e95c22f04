//! Keys two dumps are compared by one by one (`diff` when both sides are dumps): every key
//! of at least a size, the same keys looked up on the other side, and hashes of the keys
//! that carry (or lack) a TTL, whose intersection counts the keys that lost theirs.

use super::top::TopKey;
use crate::model::key_stats::KeyStats;
use rustc_hash::FxHashSet;
use std::ops::AddAssign;
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3;

/// Every key whose estimated memory is at least `min_bytes`: at most memory / `min_bytes`
/// keys.
pub struct BigKeys {
    min_bytes: u64,
    file: usize,
    keys: Vec<TopKey>,
}

impl BigKeys {
    pub fn new(min_bytes: u64, file: usize) -> Self {
        BigKeys {
            min_bytes,
            file,
            keys: Vec::new(),
        }
    }

    /// None kept yet, with the same settings.
    pub fn like(&self) -> Self {
        BigKeys::new(self.min_bytes, self.file)
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        if k.memory_bytes >= self.min_bytes {
            self.keys.push(TopKey::new(k, k.memory_bytes, self.file));
        }
    }

    /// Biggest first (then db, key, file), whatever thread saw which.
    pub fn into_sorted(mut self) -> Vec<TopKey> {
        self.keys.sort_unstable_by(|a, b| b.cmp(a));
        self.keys
    }
}

impl AddAssign for BigKeys {
    fn add_assign(&mut self, o: BigKeys) {
        self.keys.extend(o.keys);
    }
}

/// A key as `(db, key bytes)`.
pub type KeyName = (u64, Box<[u8]>);

/// The keys named in `wanted`, as found.
pub struct KeyLookup {
    wanted: Arc<FxHashSet<KeyName>>,
    file: usize,
    found: Vec<TopKey>,
}

impl KeyLookup {
    pub fn new(wanted: Arc<FxHashSet<KeyName>>, file: usize) -> Self {
        KeyLookup {
            wanted,
            file,
            found: Vec::new(),
        }
    }

    /// None found yet, looking for the same keys.
    pub fn like(&self) -> Self {
        KeyLookup::new(self.wanted.clone(), self.file)
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        // The owned name is built for the keys the lookup pass lets through its filter
        // (the wanted names), not for every key.
        let name: KeyName = (k.db, k.key.as_ref().into());
        if self.wanted.contains(&name) {
            self.found.push(TopKey::new(k, k.memory_bytes, self.file));
        }
    }

    pub fn into_found(self) -> Vec<TopKey> {
        self.found
    }
}

impl AddAssign for KeyLookup {
    fn add_assign(&mut self, o: KeyLookup) {
        self.found.extend(o.found);
    }
}

/// 64-bit hashes of `(db, key)` of the keys with a TTL (`with_ttl`) or without one, up to
/// `cap` hashes (8 bytes each); beyond, the set is given up and says so.
pub struct TtlKeyHashes {
    with_ttl: bool,
    cap: usize,
    hashes: Vec<u64>,
    overflowed: bool,
}

/// The hash of a key in [`TtlKeyHashes`].
fn key_hash(db: u64, key: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    h.update(&db.to_le_bytes());
    h.update(key);
    h.digest()
}

impl TtlKeyHashes {
    pub fn new(with_ttl: bool, cap: usize) -> Self {
        TtlKeyHashes {
            with_ttl,
            cap,
            hashes: Vec::new(),
            overflowed: false,
        }
    }

    /// None kept yet, with the same settings.
    pub fn like(&self) -> Self {
        TtlKeyHashes::new(self.with_ttl, self.cap)
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        if self.overflowed || k.expiry_ms.is_some() != self.with_ttl {
            return;
        }
        if self.hashes.len() >= self.cap {
            self.give_up();
            return;
        }
        self.hashes.push(key_hash(k.db, &k.key));
    }

    fn give_up(&mut self) {
        self.overflowed = true;
        self.hashes = Vec::new();
    }

    /// The hashes, sorted; `None` when there were more than the cap.
    pub fn into_sorted(mut self) -> Option<Vec<u64>> {
        if self.overflowed {
            return None;
        }
        self.hashes.sort_unstable();
        Some(self.hashes)
    }
}

impl AddAssign for TtlKeyHashes {
    fn add_assign(&mut self, o: TtlKeyHashes) {
        if o.overflowed || self.hashes.len().saturating_add(o.hashes.len()) > self.cap {
            self.give_up();
        } else if !self.overflowed {
            self.hashes.extend(o.hashes);
        }
    }
}

/// How many values two sorted lists share.
pub fn shared(a: &[u64], b: &[u64]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0u64);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i = i.saturating_add(1),
            std::cmp::Ordering::Greater => j = j.saturating_add(1),
            std::cmp::Ordering::Equal => {
                n = n.saturating_add(1);
                i = i.saturating_add(1);
                j = j.saturating_add(1);
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::shared;

    #[test]
    fn shared_counts_common_values_of_sorted_lists() {
        assert_eq!(shared(&[1, 3, 5, 9], &[2, 3, 4, 9, 10]), 2);
        assert_eq!(shared(&[], &[1]), 0);
        assert_eq!(shared(&[7], &[7]), 1);
    }
}
