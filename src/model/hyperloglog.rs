//! The allocation a sparse HyperLogLog holds on the server that built it with `PFADD`.
//!
//! A sparse HyperLogLog is a string, but not one the server sized for its bytes:
//! `createHLLObject` (hyperloglog.c) makes it with `sdsnewlen(NULL, 18)` (the 16-byte
//! header and one XZERO opcode pair: an sds5 of 20 bytes), and every `hllSparseSet` first
//! makes room for the 3 bytes an update may add (XZERO → XZERO-VAL-XZERO), growing it
//! when fewer are free:
//!
//! * Redis before 7.2: `sdsMakeRoomFor(o->ptr, 3)`, greedy (`_sdsMakeRoomFor`, sds.c):
//!   twice the length needed below 1 MB, 1 MB more above; from 6.2 the sds `alloc` is
//!   the allocator's usable size (`s_realloc_usable`), capped at the type's maximum (255
//!   for an sds8, whose allocation may be larger);
//! * Redis 7.2+ and Valkey (#11438): `sdsResize(o->ptr, newlen, 1)` with
//!   `newlen = len + 3 + min(len + 3, 300)`, at most `hll-sparse-max-bytes` (3000), and no
//!   growth once `alloc` reaches it; Redis sets `alloc` to `newlen`, Valkey 8.0+ to the
//!   usable size (`adjustTypeIfNeeded` widening the header when that passes the type's
//!   maximum; its sds8 holds up to 252 bytes).
//!
//! `MEMORY USAGE` counts the whole allocation (`sdsZmallocSize`, Valkey's
//! `sdsAllocSize`), free space included. Which allocation a HyperLogLog of `L` bytes ended
//! in depends on the lengths at which it grew: each growth happens at the first update
//! that finds fewer than 3 bytes free, at a length of `alloc − 2`, `alloc − 1` or `alloc`
//! depending on the sizes of the updates before it (1 to 3 bytes), which the dump does not
//! record. The model follows every path, each of those lengths equally likely, to the
//! first allocation holding `L` bytes, and prices the expectation. Under Redis's greedy
//! growth the paths part widely (a 1,800-byte HyperLogLog sits in 2,048 or 3,584 bytes:
//! doubling amplifies a step across a size class), so single keys can be 30 % off while
//! sums hold; under the 300-byte steps they seldom part.
//!
//! A server that loaded the dump (a replica after a full sync, a restart) holds every
//! HyperLogLog at its exact size, as any string: its `MEMORY USAGE` is lower than this.
//! Dense HyperLogLogs need nothing of this: `hllSparseToDense` and `PFMERGE` create them
//! with `sdsnewlen(NULL, 12304)`, the exact size a load gives them too.

use super::allocator::{Allocator, ByAllocator};
use super::server::{Family, ServerProfile, Version};

/// `createHLLObject`'s sparse string: header and one XZERO pair.
const INITIAL_LEN: u64 = 18;
/// The room `hllSparseSet` asks for before an update.
const ROOM: u64 = 3;
/// `hll-sparse-max-bytes`' default: the sparse length past which `PFADD` goes dense.
const SPARSE_MAX_BYTES: u64 = 3000;
/// The longest string priced as a sparse HyperLogLog: 4 times the dense representation
/// (12,304 bytes), past which no `hll-sparse-max-bytes` is sensible (and the walk of its
/// growth would be long).
const LARGEST_SPARSE: u64 = 4 * 12_304;
/// `SDS_MAX_PREALLOC`: greedy growth doubles below it, adds it above.
const SDS_MAX_PREALLOC: u64 = 1 << 20;

/// How a server grows a sparse HyperLogLog.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Growth {
    /// `sdsMakeRoomFor` (Redis before 7.2); `usable`: `alloc` is the usable size (6.2+).
    Greedy { usable: bool },
    /// `sdsResize` by at most 300 bytes (Redis 7.2+, Valkey); `valkey8`: Valkey 8.0's
    /// sds types and usable `alloc`.
    Resize { valkey8: bool },
}

impl Growth {
    fn of(profile: &ServerProfile) -> Growth {
        match profile.family {
            Family::Redis if profile.version < Version(7, 2, 0) => Growth::Greedy {
                usable: profile.version >= Version(6, 2, 0),
            },
            Family::Redis => Growth::Resize { valkey8: false },
            Family::Valkey => Growth::Resize {
                valkey8: profile.version >= Version(8, 0, 0),
            },
        }
    }
}

/// An sds type, by its header bytes (1, 3, 5, 9, 17).
type Header = u64;

/// The largest `alloc` an sds type records.
fn type_max(header: Header) -> u64 {
    match header {
        1 => 31,
        3 => 255,
        5 => 65_535,
        9 => 0xffff_ffff,
        _ => u64::MAX,
    }
}

/// `sdsReqType` for a string that will grow (never type 5): Redis by the length alone,
/// Valkey 8.0+ so that header, bytes and NUL fit the type (an sds8 up to 252 bytes).
fn growing_header(len: u64, valkey8: bool) -> Header {
    let fits = |header: u64, max: u64| {
        if valkey8 {
            len.saturating_add(header + 1) <= max + 1
        } else {
            len <= max
        }
    };
    if fits(3, 255) {
        3
    } else if fits(5, 65_535) {
        5
    } else if fits(9, 0xffff_ffff) {
        9
    } else {
        17
    }
}

/// The string after a growth: its header, `alloc` (what `sdsavail` counts free space
/// from) and allocation.
#[derive(Clone, Copy, PartialEq)]
struct Sds {
    header: Header,
    alloc: u64,
    bytes: u64,
}

/// `_sdsMakeRoomFor(s, 3, greedy)` or the `sdsResize` growth at length `len`.
fn grow(a: Allocator, growth: Growth, s: Sds, len: u64, max_bytes: u64) -> Sds {
    let needed = len.saturating_add(ROOM);
    let (newlen, header) = match growth {
        Growth::Greedy { .. } => {
            let newlen = if needed < SDS_MAX_PREALLOC {
                needed.saturating_mul(2)
            } else {
                needed.saturating_add(SDS_MAX_PREALLOC)
            };
            (newlen, growing_header(newlen, false))
        }
        Growth::Resize { valkey8 } => {
            let newlen = needed
                .saturating_add(needed.min(300))
                .min(max_bytes.max(needed));
            let wanted = growing_header(newlen, valkey8);
            // realloc() keeps the header when the type is the same or a wider one above
            // sds8; otherwise a new allocation takes the type's.
            let keeps = wanted == s.header || (wanted < s.header && wanted > 3);
            (newlen, if keeps { s.header } else { wanted })
        }
    };
    let bytes = a.class(header + newlen + 1);
    let usable = bytes - header - 1;
    let (header, alloc) = match growth {
        // From 6.2 `alloc` is the usable size, capped at the type's maximum.
        Growth::Greedy { usable: true } => (header, usable.min(type_max(header))),
        // Valkey 8.0+: the usable size, the header widened when it passes the type's.
        Growth::Resize { valkey8: true } => {
            let header = if usable > type_max(header) {
                growing_header(usable, true)
            } else {
                header
            };
            (header, bytes - header - 1)
        }
        _ => (header, newlen),
    };
    Sds {
        header,
        alloc,
        bytes,
    }
}

/// The expected allocation, under `a`, of a sparse HyperLogLog of `len` bytes grown by
/// `PFADD` (see the module doc).
fn expected_allocation(a: Allocator, growth: Growth, len: u64) -> u64 {
    let initial = a.class(1 + INITIAL_LEN + 1);
    if len <= INITIAL_LEN {
        return initial;
    }
    // A longer sparse string came from a server allowing it: grow up to it.
    let max_bytes = SPARSE_MAX_BYTES.max(len);
    let first = Sds {
        header: 1,
        alloc: INITIAL_LEN,
        bytes: initial,
    };
    // The sds5 has no free space: the first update grows it at 18 bytes.
    let mut frontier: Vec<(Sds, f64)> = vec![(grow(a, growth, first, INITIAL_LEN, max_bytes), 1.0)];
    let mut expected = 0.0;
    while !frontier.is_empty() {
        let mut next: Vec<(Sds, f64)> = Vec::with_capacity(frontier.len() * 3);
        for (s, p) in frontier {
            let full = matches!(growth, Growth::Resize { .. }) && s.alloc >= max_bytes;
            if s.alloc >= len || full {
                expected += p * s.bytes as f64;
                continue;
            }
            for short in 0..ROOM {
                let grown = grow(a, growth, s, s.alloc.saturating_sub(short), max_bytes);
                let q = p / ROOM as f64;
                match next.iter_mut().find(|(t, _)| *t == grown) {
                    Some((_, w)) => *w += q,
                    None => next.push((grown, q)),
                }
            }
        }
        frontier = next;
    }
    expected.round() as u64
}

/// The allocation of a sparse HyperLogLog of `len` bytes under every candidate allocator,
/// on the server the profile describes.
/// `None` past [`LARGEST_SPARSE`]: such a string was not grown by `PFADD`.
pub fn sparse_allocations(profile: &ServerProfile, len: u64) -> Option<ByAllocator> {
    if len > LARGEST_SPARSE {
        return None;
    }
    let growth = Growth::of(profile);
    Some(ByAllocator(
        Allocator::ALL.map(|a| expected_allocation(a, growth, len)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: Allocator = Allocator::Jemalloc16;

    #[test]
    fn small_hyperloglogs_follow_their_one_path() {
        let greedy = Growth::Greedy { usable: true };
        // Up to 44 bytes: the 48-byte sds8 of the first growth (DEBUG SDSLEN on Debian's
        // redis-server 7.0.15: 42 bytes, 2 free, 48 allocated).
        assert_eq!(expected_allocation(DEBIAN, greedy, 18), 32);
        assert_eq!(expected_allocation(DEBIAN, greedy, 21), 48);
        assert_eq!(expected_allocation(DEBIAN, greedy, 44), 48);
        // Valkey 8+, glibc: 27 bytes in 56 (25 free), as valkey-server 9.1.2 shows.
        let valkey = Growth::Resize { valkey8: true };
        assert_eq!(expected_allocation(Allocator::Libc, valkey, 27), 56);
    }

    #[test]
    fn resize_grows_by_300_bytes() {
        // valkey-server 9.1.2 (glibc): 1,112 then 1,416 bytes, 304 apart.
        let valkey = Growth::Resize { valkey8: true };
        assert_eq!(expected_allocation(Allocator::Libc, valkey, 1000), 1112);
        assert_eq!(expected_allocation(Allocator::Libc, valkey, 1200), 1416);
        // Never past hll-sparse-max-bytes' allocation.
        assert!(expected_allocation(Allocator::Libc, valkey, 3000) <= 3024);
    }

    #[test]
    fn greedy_paths_are_averaged() {
        // 1,821 bytes sit in 2,048 or 3,584 on Debian's redis-server 7.0.15.
        let e = expected_allocation(DEBIAN, Growth::Greedy { usable: true }, 1821);
        assert!((2048..=3584).contains(&e), "{e}");
    }
}
