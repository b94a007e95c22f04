//! LRU idle time and LFU frequency distributions, for dumps written with an LRU or LFU
//! `maxmemory-policy` (the server stores `IDLE` or `FREQ` before each key only then).

use super::distribution::Histogram;
use crate::model::key_stats::KeyStats;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IdleFreq {
    /// Seconds since last access, over the keys that carry one.
    pub idle_s: Histogram,
    /// The LFU counter (0–255, logarithmic), over the keys that carry one.
    pub lfu_freq: Histogram,
}

impl IdleFreq {
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        if let Some(idle) = k.idle_s {
            self.idle_s.add(idle);
        }
        if let Some(freq) = k.lfu_freq {
            self.lfu_freq.add(u64::from(freq));
        }
    }
}

impl AddAssign for IdleFreq {
    fn add_assign(&mut self, o: IdleFreq) {
        self.idle_s += &o.idle_s;
        self.lfu_freq += &o.lfu_freq;
    }
}
