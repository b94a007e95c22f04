//! jemalloc's size classes (x86-64, 4 KiB pages), as Redis links it.
//!
//! `zmalloc_size`, and so `MEMORY USAGE`, reports the class an allocation was rounded up
//! to, not the bytes asked for. Above 64 bytes the classes are four evenly spaced steps
//! per doubling (80, 96, 112, 128, 160, 192, ...), for small, large and huge allocations
//! alike. Below, they depend on the build: Redis's bundled jemalloc is configured with an
//! 8-byte quantum (8, 16, 24, ..., 64: official builds, Docker images), a distribution's
//! system jemalloc (Debian's and Ubuntu's redis-server packages) keeps the 16-byte one
//! (8, 16, 32, 48, 64). A dump does not say which built the server; 8 is the default.

/// The allocator's rounding, set by its quantum (8 or 16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocator {
    pub quantum: u64,
}

impl Default for Allocator {
    fn default() -> Self {
        Allocator { quantum: 8 }
    }
}

impl Allocator {
    /// The bytes jemalloc hands out for a request of `n` bytes.
    pub fn class(self, n: u64) -> u64 {
        match n {
            0..=8 => 8,
            9..=64 => n.div_ceil(self.quantum) * self.quantum,
            _ => {
                // The doubling group (2^k, 2^(k+1)] holding n, in four steps of 2^(k-2).
                let k = 63 - (n - 1).leading_zeros();
                let step = 1u64 << (k - 2);
                n.div_ceil(step).saturating_mul(step)
            }
        }
    }

    /// Allocation of an sds holding `len` bytes, created at its exact size.
    pub fn sds(self, len: u64) -> u64 {
        self.class(sds_header(len) + len + 1)
    }

    /// Allocation of a Redis 7.4+ hash field (`mstr`): a 1, 3 or 9-byte header, the bytes
    /// and a NUL; a field with a TTL also carries 2 bytes of flags and a 16-byte expiry
    /// record.
    pub fn mstr(self, len: u64, with_ttl: bool) -> u64 {
        let header = match len {
            0..=31 => 1,
            32..=65535 => 3,
            _ => 9,
        };
        let meta = if with_ttl { 2 + 16 } else { 0 };
        self.class(header + len + 1 + meta)
    }
}

/// Header bytes of an sds string of `len` bytes (`sdsReqType`): type 5 (1 byte) below 32
/// bytes except the empty string, then 8/16/32/64-bit lengths (3, 5, 9, 17 bytes).
pub fn sds_header(len: u64) -> u64 {
    match len {
        1..=31 => 1,
        0 | 32..=255 => 3,
        256..=65535 => 5,
        65536..=0xffff_ffff => 9,
        _ => 17,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: Allocator = Allocator { quantum: 16 };
    const BUNDLED: Allocator = Allocator { quantum: 8 };

    #[test]
    fn small_classes_follow_the_quantum() {
        assert_eq!(BUNDLED.class(20), 24);
        assert_eq!(DEBIAN.class(20), 32);
        assert_eq!(BUNDLED.class(37), 40);
        assert_eq!(DEBIAN.class(37), 48);
        assert_eq!(BUNDLED.class(65), 80);
    }

    #[test]
    fn classes_match_jemalloc() {
        let expect = [
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (100, 112),
            (128, 128),
            (129, 160),
            (257, 320),
            (1025, 1280),
            (4097, 5120),
            (11006, 12288),
            (16385, 20480),
            (1 << 20, 1 << 20),
            ((1 << 20) + 1, 1310720),
        ];
        for (n, class) in expect {
            assert_eq!(DEBIAN.class(n), class, "class({n})");
        }
    }

    #[test]
    fn sds_headers_by_length() {
        assert_eq!(DEBIAN.sds(10), 16); // 1 + 10 + 1
        assert_eq!(BUNDLED.sds(6), 8); // 1 + 6 + 1
        assert_eq!(DEBIAN.sds(0), 8); // type 8 header for the empty string
        assert_eq!(DEBIAN.sds(100), 112); // 3 + 100 + 1
        assert_eq!(DEBIAN.sds(11000), 12288); // 5 + 11000 + 1
    }
}
