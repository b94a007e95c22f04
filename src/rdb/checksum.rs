//! CRC64 (Jones polynomial, reflected: Redis's `crc64`) over the dump, and CRC16 (XMODEM)
//! for cluster hash slots.
//!
//! The dump's CRC64 comes from `crc-fast`: it covers every byte and runs at memory speed
//! with carry-less-multiply kernels (a table-driven CRC took a tenth of a `keys` run).
//! Slots come from `crc`'s slice-by-16 tables: on keys of 10–100 bytes they took 6–25 ns
//! where `crc-fast`, which picks a kernel on every call, took 25–75 ns.

use crc::{Crc, Table, CRC_16_XMODEM};
use crc_fast::{CrcAlgorithm, Digest};

/// CRC16 as Redis Cluster hashes keys: slice-by-16 for keys of 16 bytes or more ...
static KEY_CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_XMODEM);
/// ... one table, a byte at a time, for shorter ones (the slice-by-16 code's byte loop
/// took 9 to 14 instructions a byte on them).
static SHORT_KEY_CRC16: Crc<u16, Table<1>> = Crc::<u16, Table<1>>::new(&CRC_16_XMODEM);

/// The checksum Redis writes after the EOF opcode, over `data` (header to EOF byte).
pub fn crc64(data: &[u8]) -> u64 {
    crc_fast::checksum(CrcAlgorithm::Crc64Redis, data)
}

/// CRC64 over data that arrives in pieces.
pub struct Crc64(Digest);

impl Crc64 {
    pub fn new() -> Self {
        Crc64(Digest::new(CrcAlgorithm::Crc64Redis))
    }

    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    pub fn finish(self) -> u64 {
        self.0.finalize()
    }
}

impl Default for Crc64 {
    fn default() -> Self {
        Self::new()
    }
}

/// The part of the key Redis Cluster hashes when it holds a non-empty `{…}`: from the
/// first `{` to the first `}` after it.
pub fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let inside = key.get(open.saturating_add(1)..)?;
    let len = inside.iter().position(|&b| b == b'}')?;
    (len > 0).then(|| &inside[..len])
}

/// The cluster hash slot of a key: CRC16 of its hash tag, or of the whole key.
pub fn hash_slot(key: &[u8]) -> u16 {
    let hashed = hash_tag(key).unwrap_or(key);
    let crc = if hashed.len() < 16 {
        SHORT_KEY_CRC16.checksum(hashed)
    } else {
        KEY_CRC16.checksum(hashed)
    };
    crc & 0x3fff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_redis_cluster() {
        assert_eq!(hash_tag(b"{user1000}.following"), Some(&b"user1000"[..]));
        assert_eq!(hash_tag(b"foo{}{bar}"), None);
        assert_eq!(hash_tag(b"foo{{bar}}zap"), Some(&b"{bar"[..]));
        assert_eq!(hash_tag(b"foo{bar}{zap}"), Some(&b"bar"[..]));
        assert_eq!(hash_tag(b"plain"), None);
        assert_eq!(hash_tag(b"open{only"), None);
    }

    #[test]
    fn redis_reference_values() {
        // crc64.c's self test: crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
        assert_eq!(crc64(b"123456789"), 0xe9c6d914c4b8d9ca);
        let mut pieces = Crc64::new();
        pieces.update(b"1234");
        pieces.update(b"56789");
        assert_eq!(pieces.finish(), 0xe9c6d914c4b8d9ca);
        // Cluster spec examples: CLUSTER KEYSLOT foo = 12182, {user1000}.following = 3443.
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        // An empty tag hashes the whole key.
        assert_eq!(hash_slot(b"{}foo"), 9500);
        assert_eq!(hash_slot(b"123456789"), 12739);
    }
}
