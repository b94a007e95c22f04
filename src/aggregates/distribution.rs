//! Distributions of element counts and sizes per type, as fixed-size histograms: exact
//! below 256, then 8 buckets per power of two (percentiles within 12.5 %), so a histogram
//! is a few KiB whatever the number of keys and merges by adding counts.

use super::figure::ceil_count;
use super::groups::type_index;
use crate::model::key_stats::KeyStats;
use crate::pass::totals::add_bounded;
use crate::rdb::RedisType;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::AddAssign;

/// Values below this each have a bucket.
const LINEAR: u64 = 256;
/// Sub-buckets per power of two above `LINEAR`.
const SUB_BITS: u32 = 3;
const FIRST_LOG: u32 = LINEAR.trailing_zeros();
const BUCKETS: usize = LINEAR as usize + ((64 - FIRST_LOG as usize) << SUB_BITS);

#[inline]
fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    // v ≥ LINEAR: log ≥ FIRST_LOG > SUB_BITS, so nothing saturates here.
    let log = v.ilog2();
    let sub = (v >> log.saturating_sub(SUB_BITS)) & ((1 << SUB_BITS) - 1);
    let group = (log.saturating_sub(FIRST_LOG) as usize) << SUB_BITS;
    (LINEAR as usize)
        .saturating_add(group)
        .saturating_add(sub as usize)
}

/// Smallest and largest value of bucket `i`.
fn bucket_bounds(i: usize) -> (u64, u64) {
    let Some(j) = i.checked_sub(LINEAR as usize) else {
        return (i as u64, i as u64);
    };
    let log = ((j >> SUB_BITS) as u32).saturating_add(FIRST_LOG);
    let sub = (j & ((1 << SUB_BITS) - 1)) as u64;
    let width = 1u64 << log.saturating_sub(SUB_BITS);
    let lo = (1u64 << log).saturating_add(sub.saturating_mul(width));
    (lo, lo.saturating_add(width.saturating_sub(1)))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl Histogram {
    #[inline]
    pub fn add(&mut self, v: u64) {
        add_bounded(&mut self.counts[bucket_of(v)], 1);
        add_bounded(&mut self.count, 1);
        // At most 2^64 − 1 values of at most 2^64 − 1: below 2^128.
        self.sum = self.sum.wrapping_add(u128::from(v));
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The value at quantile `q` (0–1): exact below 256, else the top of its bucket (never
    /// above the maximum). 0 when empty.
    pub fn percentile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ceil_count(q * self.count as f64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen >= rank {
                return bucket_bounds(i).1.min(self.max);
            }
        }
        self.max
    }

    /// Counts per power-of-two range (`0`, `1`, `2–3`, `4–7`, …), empty ranges left out:
    /// `(min, max, count)`.
    pub fn ranges(&self) -> Vec<(u64, u64, u64)> {
        let mut out: Vec<(u64, u64, u64)> = Vec::new();
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let (lo, _) = bucket_bounds(i);
            let (min, max) = match lo {
                0 => (0, 0),
                _ => {
                    let low = 1u64 << lo.ilog2();
                    (low, low | low.saturating_sub(1))
                }
            };
            match out.last_mut() {
                Some(last) if last.0 == min => last.2 = last.2.saturating_add(c),
                _ => out.push((min, max, c)),
            }
        }
        out
    }
}

impl AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a = a.saturating_add(*b);
        }
        self.count = self.count.saturating_add(o.count);
        self.sum = self.sum.saturating_add(o.sum);
        self.max = self.max.max(o.max);
    }
}

/// How a [`Histogram`] is written in summary.json's mergeable state: the non-empty buckets
/// as `[index, count]`.
#[derive(Serialize, Deserialize)]
struct HistogramState {
    count: u64,
    sum: u128,
    max: u64,
    buckets: Vec<(usize, u64)>,
}

impl Serialize for Histogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HistogramState {
            count: self.count,
            sum: self.sum,
            max: self.max,
            buckets: (0..)
                .zip(&self.counts)
                .filter(|(_, c)| **c > 0)
                .map(|(i, c)| (i, *c))
                .collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = HistogramState::deserialize(d)?;
        let mut h = Histogram {
            count: state.count,
            sum: state.sum,
            max: state.max,
            ..Histogram::default()
        };
        for (i, count) in state.buckets {
            *h.counts
                .get_mut(i)
                .ok_or_else(|| D::Error::custom(format!("histogram bucket {i} out of range")))? =
                count;
        }
        Ok(h)
    }
}

/// Element counts and sizes of one type's keys.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TypeDistribution {
    pub elements: Histogram,
    pub serialized_bytes: Histogram,
    pub memory_bytes: Histogram,
}

/// One [`TypeDistribution`] per type, indexed like [`crate::rdb::RedisType::ALL`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Distributions {
    pub by_type: [TypeDistribution; crate::rdb::RedisType::ALL.len()],
}

impl Distributions {
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let d = &mut self.by_type[type_index(k.redis_type)];
        // Collections only: a string holds no elements.
        if let Some(e) = k.elements.filter(|_| k.redis_type != RedisType::String) {
            d.elements.add(e);
        }
        d.serialized_bytes.add(k.serialized_bytes);
        d.memory_bytes.add(k.memory_bytes);
    }
}

impl AddAssign for Distributions {
    fn add_assign(&mut self, o: Distributions) {
        for (a, b) in self.by_type.iter_mut().zip(&o.by_type) {
            a.elements += &b.elements;
            a.serialized_bytes += &b.serialized_bytes;
            a.memory_bytes += &b.memory_bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range() {
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            let (lo, hi) = bucket_bounds(i);
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(hi), i);
            if i + 1 < BUCKETS {
                assert_eq!(bucket_bounds(i + 1).0, hi + 1);
            }
        }
    }

    #[test]
    fn percentiles() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(h.percentile(0.5), 50);
        assert_eq!(h.percentile(0.9), 90);
        assert_eq!(h.percentile(0.99), 99);
        assert_eq!(h.percentile(1.0), 100);
        h.add(1_000_000);
        // 1 000 000 lies in [983 040, 1 048 575]; the maximum caps the answer.
        assert_eq!(h.percentile(1.0), 1_000_000);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.ranges().last().copied(), Some((524_288, 1_048_575, 1)));
        let mut g = Histogram::default();
        g.add(300);
        g.add(300);
        g.add(5000);
        g += &h;
        assert_eq!(g.count(), 104);
        assert_eq!(g.max(), 1_000_000);
        // Ranks 101 and 102 are 300, in the bucket [288, 319]; 103 is 5000, in [4608, 5119].
        assert_eq!(g.percentile(0.98), 319);
        assert_eq!(g.percentile(0.99), 5119);
    }
}
