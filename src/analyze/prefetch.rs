//! A hint that a value is about to be updated. The aggregates indexed by a key's hash slot
//! or expiry minute span hundreds of kilobytes, and on dumps of small keys one update
//! that misses the cache cost more than everything else the aggregates do with the key
//! (a tenth of a `report` run). The pipeline announces each key one key ahead
//! ([`crate::analyze::Aggregator::prefetch`]), so the line arrives while the previous key
//! is folded.

/// Asks for the cache line holding `value`; no effect on other architectures.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults or changes memory, whatever the
    // address, and SSE (which provides it) is part of every x86_64 target.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
