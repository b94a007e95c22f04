//! The allocators a server can be built with, and the bytes each hands out for a request.
//!
//! `zmalloc_size`, and so `MEMORY USAGE`, reports what the allocator handed out, not the
//! bytes asked for. Three builds are common:
//!
//! * jemalloc with an 8-byte quantum: Redis's bundled jemalloc (official builds, Docker
//!   images). Classes 8, 16, 24, ..., 64, then four evenly spaced steps per doubling (80,
//!   96, 112, 128, 160, ...), for small, large and huge allocations alike (x86-64, 4 KiB
//!   pages);
//! * jemalloc with its default 16-byte quantum: distribution packages linking the system
//!   jemalloc (Debian's and Ubuntu's `redis-server`): 8, 16, 32, 48, 64, then as above;
//! * glibc malloc (`make MALLOC=libc`, e.g. the `valkey-server` of the PyPI packages):
//!   `malloc_usable_size` of a chunk rounded to 16 bytes with an 8-byte header (24, 40, 56,
//!   ...), and from 128 KiB (glibc's initial mmap threshold) a page-rounded mapping with a
//!   16-byte header.

/// The allocator a server was built with.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Allocator {
    /// Bundled jemalloc, 8-byte quantum.
    #[default]
    Jemalloc,
    /// System jemalloc, 16-byte quantum.
    #[serde(rename = "jemalloc-16")]
    Jemalloc16,
    /// glibc malloc.
    Libc,
}

/// glibc's default `M_MMAP_THRESHOLD`: chunks from this size on are mapped on their own.
const LIBC_MMAP_THRESHOLD: u64 = 128 * 1024;

impl Allocator {
    pub const ALL: [Allocator; 3] = [Allocator::Jemalloc, Allocator::Jemalloc16, Allocator::Libc];

    /// The name `--allocator` takes and reports show.
    pub fn name(self) -> &'static str {
        match self {
            Allocator::Jemalloc => "jemalloc",
            Allocator::Jemalloc16 => "jemalloc-16",
            Allocator::Libc => "libc",
        }
    }

    pub fn parse(name: &str) -> Option<Allocator> {
        Allocator::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The bytes the allocator hands out for a request of `n` bytes: looked up below
    /// [`SMALL_REQUESTS`] (a key's own requests, several a key), else worked out.
    #[inline]
    pub fn class(self, n: u64) -> u64 {
        match small_row(n) {
            Some(row) => self.row_class(row),
            None => self.class_of(n),
        }
    }

    /// The class of every request of [`small_row`] `row`.
    #[inline]
    pub fn row_class(self, row: usize) -> u64 {
        u64::from(SMALL_CLASSES[self.index()][row])
    }

    /// [`Allocator::class`], worked out.
    const fn class_of(self, n: u64) -> u64 {
        match self {
            Allocator::Jemalloc => jemalloc_class(n, 8),
            Allocator::Jemalloc16 => jemalloc_class(n, 16),
            Allocator::Libc => {
                // request2size: the request plus an 8-byte size field, 16-aligned, min 32.
                let chunk = n.saturating_add(8 + 15) & !15;
                let chunk = if chunk < 32 { 32 } else { chunk };
                if chunk >= LIBC_MMAP_THRESHOLD {
                    (chunk.saturating_add(8 + 4095) & !4095) - 16
                } else {
                    chunk - 8
                }
            }
        }
    }

    /// Allocation of an sds holding `len` bytes, created at its exact size.
    pub fn sds(self, len: u64) -> u64 {
        self.class(sds_header(len) + len + 1)
    }

    /// The position of this allocator in [`Allocator::ALL`] and in a [`ByAllocator`].
    #[inline]
    pub const fn index(self) -> usize {
        match self {
            Allocator::Jemalloc => 0,
            Allocator::Jemalloc16 => 1,
            Allocator::Libc => 2,
        }
    }

    /// The bytes every candidate allocator hands out for a request of `n` bytes: the two
    /// jemalloc quanta differ only up to 64 bytes, so their large classes are computed once.
    #[inline]
    pub fn classes(n: u64) -> ByAllocator {
        let (bundled, system) = if n <= 64 {
            (jemalloc_class(n, 8), jemalloc_class(n, 16))
        } else {
            let c = jemalloc_class(n, 8);
            (c, c)
        };
        ByAllocator([bundled, system, Allocator::Libc.class(n)])
    }

    /// [`Allocator::sds`] under every candidate.
    #[inline]
    pub fn sds_classes(len: u64) -> ByAllocator {
        Allocator::classes(sds_header(len) + len + 1)
    }

    /// Allocation of a Redis 7.4+ hash field (`mstr`): a 1, 3 or 9-byte header, the bytes
    /// and a NUL; a field with a TTL also carries 2 bytes of flags and a 16-byte expiry
    /// record.
    pub fn mstr(self, len: u64, with_ttl: bool) -> u64 {
        self.class(mstr_request(len, with_ttl))
    }
}

/// The bytes a Redis 7.4+ hash field (`mstr`) of `len` bytes asks for: see
/// [`Allocator::mstr`].
pub fn mstr_request(len: u64, with_ttl: bool) -> u64 {
    let header = match len {
        0..=31 => 1,
        32..=65535 => 3,
        _ => 9,
    };
    let meta = if with_ttl { 2 + 16 } else { 0 };
    header + len + 1 + meta
}

/// A figure under each candidate allocator, in the order of [`Allocator::ALL`]: what a
/// value's walk sums once for all of them, so the whole dump's `used_memory` can be
/// modelled under every candidate in the one pass that prices its keys under one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByAllocator(pub [u64; 3]);

impl ByAllocator {
    /// The same figure under every allocator (a size no allocator rounds).
    pub const fn all(n: u64) -> Self {
        ByAllocator([n; 3])
    }

    /// `f` applied to each allocator's figure.
    #[inline]
    pub fn map(self, mut f: impl FnMut(Allocator, u64) -> u64) -> Self {
        let [a, b, c] = self.0;
        ByAllocator([
            f(Allocator::Jemalloc, a),
            f(Allocator::Jemalloc16, b),
            f(Allocator::Libc, c),
        ])
    }

    /// `f` applied to each allocator's figures in `self` and `o`.
    #[inline]
    fn zip(self, o: ByAllocator, f: impl Fn(u64, u64) -> u64) -> Self {
        let [a, b, c] = self.0;
        let [x, y, z] = o.0;
        ByAllocator([f(a, x), f(b, y), f(c, z)])
    }

    /// Each allocator's figure less the other's, at least 0.
    #[inline]
    pub fn saturating_sub(self, o: ByAllocator) -> Self {
        self.zip(o, u64::saturating_sub)
    }

    /// Each allocator's figure times `k`.
    #[inline]
    pub fn times(self, k: u64) -> Self {
        ByAllocator(self.0.map(|v| v.saturating_mul(k)))
    }
}

impl std::ops::Index<Allocator> for ByAllocator {
    type Output = u64;

    #[inline]
    fn index(&self, a: Allocator) -> &u64 {
        &self.0[a.index()]
    }
}

impl std::ops::Add for ByAllocator {
    type Output = ByAllocator;

    #[inline]
    fn add(self, o: ByAllocator) -> ByAllocator {
        self.zip(o, u64::saturating_add)
    }
}

impl std::ops::AddAssign for ByAllocator {
    #[inline]
    fn add_assign(&mut self, o: ByAllocator) {
        *self = *self + o;
    }
}

impl std::ops::SubAssign for ByAllocator {
    /// Takes back what a part of the sum added (saturating).
    fn sub_assign(&mut self, o: ByAllocator) {
        for (s, o) in self.0.iter_mut().zip(o.0) {
            *s = s.saturating_sub(o);
        }
    }
}

/// Requests below this many bytes, a key's own, go by rows of 8 bytes: their classes are
/// looked up ([`Allocator::row_class`]), and the memory model counts them by row
/// ([`crate::model::allocations`]).
pub const SMALL_REQUESTS: u64 = 1024;

/// Rows of requests below [`SMALL_REQUESTS`].
pub const SMALL_ROWS: usize = SMALL_REQUESTS as usize / 8 + 1;

/// The row of a request of `n` bytes, below [`SMALL_REQUESTS`]: 8 bytes a row, as every
/// candidate's classes there end on a multiple of 8, so all the sizes of a row fall in the
/// same class under each of them (`rows_keep_every_class` checks it).
#[inline]
pub fn small_row(n: u64) -> Option<usize> {
    (n < SMALL_REQUESTS).then(|| n.div_ceil(8) as usize)
}

/// The largest request of row `row`: what its requests are priced as.
const fn row_size(row: usize) -> u64 {
    row as u64 * 8
}

/// Each candidate's class of every row below [`SMALL_REQUESTS`], in the order of
/// [`Allocator::ALL`].
static SMALL_CLASSES: [[u16; SMALL_ROWS]; 3] = {
    let mut table = [[0; SMALL_ROWS]; 3];
    let mut a = 0;
    while a < 3 {
        let allocator = Allocator::ALL[a];
        let mut row = 0;
        while row < SMALL_ROWS {
            table[a][row] = allocator.class_of(row_size(row)) as u16;
            row += 1;
        }
        a += 1;
    }
    table
};

/// jemalloc's class for `n` bytes with the given quantum.
const fn jemalloc_class(n: u64, quantum: u64) -> u64 {
    match n {
        0..=8 => 8,
        9..=64 => n.div_ceil(quantum) * quantum,
        _ => {
            // The doubling group (2^k, 2^(k+1)] holding n, in four steps of 2^(k-2).
            let k = 63 - (n - 1).leading_zeros();
            let step = 1u64 << (k - 2);
            n.div_ceil(step).saturating_mul(step)
        }
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

    #[test]
    fn small_classes_are_looked_up() {
        for a in Allocator::ALL {
            for n in 0..SMALL_REQUESTS + 64 {
                assert_eq!(a.class(n), a.class_of(n), "{n} bytes under {}", a.name());
            }
        }
    }

    #[test]
    fn rows_keep_every_class() {
        for n in 0..SMALL_REQUESTS {
            let b = row_size(small_row(n).unwrap());
            for a in Allocator::ALL {
                assert_eq!(
                    a.class_of(n),
                    a.class_of(b),
                    "{} bytes under {}",
                    n,
                    a.name()
                );
            }
        }
    }

    const DEBIAN: Allocator = Allocator::Jemalloc16;
    const BUNDLED: Allocator = Allocator::Jemalloc;
    const LIBC: Allocator = Allocator::Libc;

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

    #[test]
    fn classes_of_every_candidate_agree_with_each() {
        for n in (0..300).chain([4097, 11006, 131_000, 200_010, 1 << 21]) {
            let all = Allocator::classes(n);
            for a in Allocator::ALL {
                assert_eq!(all[a], a.class(n), "{} class({n})", a.name());
            }
        }
    }

    #[test]
    fn libc_usable_sizes() {
        // malloc_usable_size on glibc x86-64, read from valkey-server 9.1.2 (MALLOC=libc).
        let expect = [
            (1, 24),
            (24, 24),
            (25, 40),
            (40, 40),
            (41, 56),
            (100_010, 100_024),
            (200_010, 200_688),
            (1_000_010, 1_003_504),
        ];
        for (n, usable) in expect {
            assert_eq!(LIBC.class(n), usable, "class({n})");
        }
    }
}
