//! CRC64 (Jones polynomial, reflected: Redis's `crc64`) over the dump, and CRC16 (XMODEM)
//! for cluster hash slots.
//!
//! The dump's CRC64 comes from `crc-fast`: it covers every byte and runs at memory speed
//! with carry-less-multiply kernels (a table-driven CRC took a tenth of a `keys` run).
//!
//! Slots are hashed here, by hand: most keys are 8 to 40 bytes, where the `crc` crate
//! hashes a byte at a time (its slice-by-16 code starts at 16 bytes, and took 9 to 14
//! instructions a byte below that), and the same pass over the key looks for the `{` of a
//! hash tag, which took a second pass. A key of up to 16 bytes is hashed with one lookup a
//! byte, each in the table of its distance from the key's end (no state carried from byte
//! to byte), whose entries also mark a `{`; a longer one slicing by 8. `crc` checks both
//! in the tests.

use super::bytes::fold_short;
use crc_fast::{CrcAlgorithm, Digest};

/// `CRC16_TABLES[k][v]`: in the low half, the CRC16 (XMODEM: polynomial 0x1021, no
/// reflection, initial 0) of byte `v` followed by `k` zero bytes; above it, bit `16 + k`
/// set when `v` is a `{`. A key of up to 16 bytes is hashed with a lookup a byte, whose
/// high halves say where it holds a `{` ([`crc16_short`]); a longer one 8 bytes with 8
/// lookups of the low halves ([`crc16_sliced`]).
static CRC16_TABLES: [[u32; 256]; 16] = {
    let mut crcs = [[0u16; 256]; 16];
    let mut v = 0;
    while v < 256 {
        let mut crc = (v as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        crcs[0][v] = crc;
        v += 1;
    }
    let mut k = 1;
    while k < 16 {
        let mut v = 0;
        while v < 256 {
            let before = crcs[k - 1][v];
            crcs[k][v] = (before << 8) ^ crcs[0][(before >> 8) as usize];
            v += 1;
        }
        k += 1;
    }
    let mut tables = [[0u32; 256]; 16];
    let mut k = 0;
    while k < 16 {
        let mut v = 0;
        while v < 256 {
            let brace = (v == b'{' as usize) as u32;
            tables[k][v] = crcs[k][v] as u32 | brace << (16 + k);
            v += 1;
        }
        k += 1;
    }
    tables
};

/// CRC16 (XMODEM) of `bytes`, and whether they hold a `{`.
#[inline]
fn crc16_seeing_brace(bytes: &[u8]) -> (u16, bool) {
    match crc16_short(bytes) {
        Some(hashed) => hashed,
        None => crc16_sliced(bytes),
    }
}

/// CRC16 of up to 16 bytes, and whether they hold a `{`: with an initial 0, zero bytes
/// before a message leave its CRC as it is, so byte `i` of `n` adds the CRC of itself
/// followed by `n - 1 - i` zero bytes, one lookup in `CRC16_TABLES[n - 1 - i]`, which
/// also sets a bit of its own when the byte is a `{` (each table is looked up once, so no
/// two such bits cancel). Unrolled for each length, with no state carried from byte to
/// byte. `None` for longer keys.
#[inline]
fn crc16_short(bytes: &[u8]) -> Option<(u16, bool)> {
    let hashed = fold_short(bytes, 0, |crc, to_end, b| {
        crc ^ CRC16_TABLES[to_end][usize::from(b)]
    })?;
    Some((hashed as u16, hashed >> 16 != 0))
}

/// A 1 in each byte of a word.
const ONES_8: u64 = u64::from_le_bytes([0x01; 8]);

/// The high bit set in the bytes of `w` that hold a `{`, and perhaps in bytes above one
/// that does: zero when none does.
#[inline(always)]
fn braces_in(w: u64) -> u64 {
    // A byte of `w ^ {{{…` is zero where `w` holds a `{`.
    let x = w ^ ONES_8.wrapping_mul(u64::from(b'{'));
    x.wrapping_sub(ONES_8) & !x & ONES_8.wrapping_mul(0x80)
}

/// CRC16 (XMODEM) of `bytes` of any length, slicing by 8, and whether they hold a `{`.
#[inline]
fn crc16_sliced(bytes: &[u8]) -> (u16, bool) {
    let t = &CRC16_TABLES;
    let at = |k: usize, b: u8| t[k][usize::from(b)] as u16;
    let mut crc = 0u16;
    let mut brace = 0u64;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let &[b0, b1, b2, b3, b4, b5, b6, b7] = w else {
            unreachable!("chunks of 8")
        };
        brace |= braces_in(u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]));
        let [high, low] = crc.to_be_bytes();
        crc = at(7, b0 ^ high)
            ^ at(6, b1 ^ low)
            ^ at(5, b2)
            ^ at(4, b3)
            ^ at(3, b4)
            ^ at(2, b5)
            ^ at(1, b6)
            ^ at(0, b7);
    }
    let mut seen = brace != 0;
    for &b in words.remainder() {
        seen |= b == b'{';
        crc = at(0, crc.to_be_bytes()[0] ^ b) ^ (crc << 8);
    }
    (crc, seen)
}

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
    slot_seeing_brace(key).0
}

/// The cluster hash slot of a key, and whether it holds a `{` (else it has no hash tag).
#[inline]
pub fn slot_seeing_brace(key: &[u8]) -> (u16, bool) {
    let (crc, brace) = crc16_seeing_brace(key);
    let crc = match brace.then(|| hash_tag(key)).flatten() {
        Some(tag) => crc16_seeing_brace(tag).0,
        None => crc,
    };
    (crc & 0x3fff, brace)
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
    fn crc16_as_the_crc_crate_hashes_every_length() {
        let crate_crc16 = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut bytes = Vec::new();
        for len in 0..200 {
            for _ in 0..20 {
                bytes.clear();
                for _ in 0..len {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    bytes.push((state >> 56) as u8);
                }
                let (crc, brace) = crc16_seeing_brace(&bytes);
                assert_eq!(crc, crate_crc16.checksum(&bytes), "{bytes:?}");
                assert_eq!(brace, bytes.contains(&b'{'), "{bytes:?}");
                // Keys of up to 16 bytes take their own path: the sliced one agrees.
                assert_eq!(crc16_sliced(&bytes), (crc, brace), "{bytes:?}");
            }
        }
    }

    #[test]
    fn a_brace_is_seen_wherever_it_is() {
        for len in 1..=24 {
            let plain = vec![b'a'; len];
            assert!(!crc16_seeing_brace(&plain).1, "{len}");
            for at in 0..len {
                let mut braced = plain.clone();
                braced[at] = b'{';
                assert!(crc16_seeing_brace(&braced).1, "{len} {at}");
                // Two of them do not cancel out.
                for second in 0..len {
                    let mut two = braced.clone();
                    two[second] = b'{';
                    assert!(crc16_seeing_brace(&two).1, "{len} {at} {second}");
                }
                // `{` is 0x7b: its neighbours and a byte with the high bit are not one.
                for other in [b'z', b'|', 0xfb] {
                    braced[at] = other;
                    assert!(!crc16_seeing_brace(&braced).1, "{len} {at} {other}");
                }
            }
        }
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
