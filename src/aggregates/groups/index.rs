//! The index of a [`super::GroupTable`]'s names by their hashes.

use super::table::Entry;

/// Where each listed name's entry is, by the name's hash: open addressing with linear
/// probing, at most half full. Each slot has a tag byte (0: empty, else 7 bits of the hash
/// and the top bit set), apart from the entries' positions so that looking up a name not
/// listed, what most lookups of a deep prefix level are, reads only tags: 128 KiB of them
/// for the 50,000 names of a full table at the default capacity, which stay in the cache.
pub(super) struct NameIndex {
    pub(super) tags: Vec<u8>,
    /// The entry's position, where the tag is not 0.
    pub(super) positions: Vec<u32>,
}

impl NameIndex {
    pub(super) const MIN_SLOTS: usize = 16;

    pub(super) fn new() -> Self {
        NameIndex {
            tags: vec![0; Self::MIN_SLOTS],
            positions: vec![0; Self::MIN_SLOTS],
        }
    }

    /// The slot a lookup starts at, and the tag it looks for.
    #[inline]
    pub(super) fn home(&self, hash: u128) -> (usize, u8) {
        let mask = self.tags.len().wrapping_sub(1);
        (hash as usize & mask, (hash >> 121) as u8 | 0x80)
    }

    /// `Ok(position of the entry)` of the name hashed `hash`, or `Err(the empty slot)` where
    /// it would go.
    #[inline]
    pub(super) fn find(&self, hash: u128, entries: &[Entry]) -> Result<usize, usize> {
        let mask = self.tags.len().wrapping_sub(1);
        let (mut i, tag) = self.home(hash);
        // Ends: at most half the slots are taken.
        loop {
            match self.tags[i] {
                0 => return Err(i),
                t if t == tag => {
                    let at = self.positions[i] as usize;
                    if entries.get(at).is_some_and(|e| e.hash == hash) {
                        return Ok(at);
                    }
                }
                _ => {}
            }
            i = i.wrapping_add(1) & mask;
        }
    }

    /// Points the empty `slot` that [`NameIndex::find`] gave for `hash` at entry `at`.
    #[inline]
    pub(super) fn set(&mut self, slot: usize, hash: u128, at: usize) {
        self.tags[slot] = self.home(hash).1;
        self.positions[slot] = at as u32;
    }

    /// No entry indexed; the slots stay.
    pub(super) fn clear(&mut self) {
        self.tags.fill(0);
    }

    /// Indexes `entries` afresh, growing so that at most half the slots are taken.
    pub(super) fn rebuild(&mut self, entries: &[Entry]) {
        let want = entries
            .len()
            .saturating_mul(2)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .max(Self::MIN_SLOTS);
        if want > self.tags.len() {
            self.tags = vec![0; want];
            self.positions = vec![0; want];
        } else {
            self.tags.fill(0);
        }
        for (at, e) in entries.iter().enumerate() {
            if let Err(slot) = self.find(e.hash, entries) {
                self.set(slot, e.hash, at);
            }
        }
    }
}
