//! TTL distribution: how many keys, and how much memory, expire when — measured from the
//! moment the dump was written (its `ctime` aux field), so "already expired" means the
//! server would have dropped the key on load.

use crate::model::key_stats::KeyStats;
use crate::pass::totals::add_bounded;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::AddAssign;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Expiries further out than this are not tracked per minute: a storm that far ahead is
/// not actionable, and the window bounds the table (43 201 minutes).
pub const STORM_WINDOW_MS: i64 = 30 * DAY_MS;

/// TTL classes, in the order reports list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlBucket {
    Expired,
    UnderHour,
    HourToDay,
    DayToWeek,
    WeekToMonth,
    OverMonth,
    NoTtl,
}

impl TtlBucket {
    pub const ALL: [TtlBucket; 7] = [
        TtlBucket::Expired,
        TtlBucket::UnderHour,
        TtlBucket::HourToDay,
        TtlBucket::DayToWeek,
        TtlBucket::WeekToMonth,
        TtlBucket::OverMonth,
        TtlBucket::NoTtl,
    ];

    /// The stable name used in `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            TtlBucket::Expired => "expired",
            TtlBucket::UnderHour => "lt_1h",
            TtlBucket::HourToDay => "1h_24h",
            TtlBucket::DayToWeek => "1d_7d",
            TtlBucket::WeekToMonth => "7d_30d",
            TtlBucket::OverMonth => "gt_30d",
            TtlBucket::NoTtl => "no_ttl",
        }
    }

    /// For tables.
    pub fn label(self) -> &'static str {
        match self {
            TtlBucket::Expired => "already expired",
            TtlBucket::UnderHour => "< 1 h",
            TtlBucket::HourToDay => "1 h – 24 h",
            TtlBucket::DayToWeek => "1 d – 7 d",
            TtlBucket::WeekToMonth => "7 d – 30 d",
            TtlBucket::OverMonth => "> 30 d",
            TtlBucket::NoTtl => "no TTL",
        }
    }

    /// The class of a key expiring `ttl_ms` after the reference time.
    pub fn of(ttl_ms: Option<i64>) -> TtlBucket {
        match ttl_ms {
            None => TtlBucket::NoTtl,
            Some(t) if t <= 0 => TtlBucket::Expired,
            Some(t) if t < HOUR_MS => TtlBucket::UnderHour,
            Some(t) if t < DAY_MS => TtlBucket::HourToDay,
            Some(t) if t < 7 * DAY_MS => TtlBucket::DayToWeek,
            Some(t) if t < 30 * DAY_MS => TtlBucket::WeekToMonth,
            Some(_) => TtlBucket::OverMonth,
        }
    }
}

/// Keys and memory of a TTL class or an expiry minute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub keys: u64,
    pub memory_bytes: u64,
}

impl Tally {
    #[inline]
    fn add(&mut self, memory_bytes: u64) {
        add_bounded(&mut self.keys, 1);
        self.memory_bytes = self.memory_bytes.saturating_add(memory_bytes);
    }
}

impl AddAssign<&Tally> for Tally {
    fn add_assign(&mut self, o: &Tally) {
        self.keys = self.keys.saturating_add(o.keys);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
    }
}

pub struct Ttl {
    /// Unix ms the TTLs are measured from (the dump's `ctime`).
    reference_ms: i64,
    buckets: [Tally; 7],
    /// First minute (Unix ms / 60 000) of the storm window: the reference's.
    window_start: i64,
    /// Keys expiring in each minute of the window, indexed from `window_start`; allocated
    /// at the first expiry. An array rather than a map: every key with a TTL lands here,
    /// and one indexed access is cheaper than hashing and probing.
    window: Vec<Tally>,
    /// Minutes merged in from dumps with another reference that fall outside the window.
    elsewhere: FxHashMap<i64, Tally>,
}

/// Minutes in the storm window.
const WINDOW_MINUTES: usize = (STORM_WINDOW_MS / MINUTE_MS) as usize + 1;

impl Ttl {
    pub fn new(reference_ms: i64) -> Self {
        Ttl {
            reference_ms,
            buckets: [Tally::default(); 7],
            window_start: reference_ms.div_euclid(MINUTE_MS),
            window: Vec::new(),
            elsewhere: FxHashMap::default(),
        }
    }

    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let ttl = k.expiry_ms.map(|e| e.saturating_sub(self.reference_ms));
        self.buckets[TtlBucket::of(ttl) as usize].add(k.memory_bytes);
        if let Some(minute) = self.window_index(k) {
            if self.window.is_empty() {
                self.window = vec![Tally::default(); WINDOW_MINUTES];
            }
            self.window[minute].add(k.memory_bytes);
        }
    }

    /// The minute of the storm window `k` expires in, if it does.
    #[inline]
    fn window_index(&self, k: &KeyStats<'_>) -> Option<usize> {
        let expiry = k.expiry_ms?;
        let ttl = expiry.saturating_sub(self.reference_ms);
        if ttl <= 0 || ttl > STORM_WINDOW_MS {
            return None;
        }
        let minute = expiry.div_euclid(MINUTE_MS);
        usize::try_from(minute.checked_sub(self.window_start)?).ok()
    }

    /// Adds `t` to the keys expiring in `minute` (Unix ms / 60 000).
    fn add_minute(&mut self, minute: i64, t: &Tally) {
        match minute
            .checked_sub(self.window_start)
            .and_then(|i| usize::try_from(i).ok())
        {
            Some(i) if i < WINDOW_MINUTES => {
                if self.window.is_empty() {
                    self.window = vec![Tally::default(); WINDOW_MINUTES];
                }
                self.window[i] += t;
            }
            _ => *self.elsewhere.entry(minute).or_default() += t,
        }
    }

    /// Minutes with expiring keys, as (minute, tally), in no particular order.
    fn minutes(&self) -> impl Iterator<Item = (i64, &Tally)> {
        (self.window_start..)
            .zip(&self.window)
            .filter(|(_, t)| t.keys > 0)
            .chain(self.elsewhere.iter().map(|(&m, t)| (m, t)))
    }

    /// Every class, in [`TtlBucket::ALL`] order.
    pub fn buckets(&self) -> impl Iterator<Item = (TtlBucket, &Tally)> {
        TtlBucket::ALL.into_iter().zip(&self.buckets)
    }

    /// Keys and memory expired `within_ms` after the reference (the first merged dump's
    /// ctime), for each of `within_ms` (ascending): the keys already expired plus every expiry
    /// minute that starts before the reference + that offset, so the curve is exact to the
    /// minute up to [`STORM_WINDOW_MS`].
    pub fn expiring_within(&self, within_ms: &[i64]) -> Vec<Tally> {
        let mut minutes: Vec<(i64, Tally)> = self
            .minutes()
            .map(|(m, &t)| (m.saturating_mul(MINUTE_MS), t))
            .collect();
        minutes.sort_unstable_by_key(|(start, _)| *start);
        let mut total = self.buckets[TtlBucket::Expired as usize];
        let mut next = minutes.iter().peekable();
        within_ms
            .iter()
            .map(|&offset| {
                let end = self.reference_ms.saturating_add(offset);
                while let Some((_, t)) = next.next_if(|(start, _)| *start < end) {
                    total += t;
                }
                total
            })
            .collect()
    }

    /// The `n` minutes in which the most keys expire, as (minute start in Unix ms, tally):
    /// most keys first, then most memory, then earliest. The `n` are picked out first and
    /// only they are sorted: a dump's keys may expire in a hundred thousand minutes.
    pub fn storms(&self, n: usize) -> Vec<(i64, Tally)> {
        self.storms_among(n, 1)
    }

    /// The minutes in which at least `keys` keys expire, in the order of [`Ttl::storms`].
    pub fn storms_of_at_least(&self, keys: u64) -> Vec<(i64, Tally)> {
        self.storms_among(usize::MAX, keys)
    }

    /// How many minutes have keys expiring, and what they sum to.
    pub fn minutes_in_all(&self) -> (usize, Tally) {
        self.minutes()
            .fold((0, Tally::default()), |(n, mut all), (_, t)| {
                all += t;
                (n.saturating_add(1), all)
            })
    }

    /// The `n` first, in the order of [`Ttl::storms`], of the minutes with `keys` or more.
    fn storms_among(&self, n: usize, keys: u64) -> Vec<(i64, Tally)> {
        let mut rows: Vec<_> = self
            .minutes()
            .filter(|(_, t)| t.keys >= keys)
            .map(|(m, &t)| (m.saturating_mul(MINUTE_MS), t))
            .collect();
        let by_storm = |a: &(i64, Tally), b: &(i64, Tally)| {
            (b.1.keys, b.1.memory_bytes)
                .cmp(&(a.1.keys, a.1.memory_bytes))
                .then(a.0.cmp(&b.0))
        };
        super::sort_first(&mut rows, n, by_storm);
        rows.truncate(n);
        rows
    }
}

/// How a [`Ttl`] is written in summary.json's mergeable state: the expiry minutes as
/// `[minute, keys, memory_bytes]`, earliest first, the empty ones left out.
#[derive(Serialize, Deserialize)]
struct TtlState {
    reference_ms: i64,
    buckets: [Tally; 7],
    minutes: Vec<(i64, u64, u64)>,
}

impl Serialize for Ttl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut minutes: Vec<_> = self
            .minutes()
            .map(|(m, t)| (m, t.keys, t.memory_bytes))
            .collect();
        minutes.sort_unstable();
        TtlState {
            reference_ms: self.reference_ms,
            buckets: self.buckets,
            minutes,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Ttl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = TtlState::deserialize(d)?;
        let mut ttl = Ttl::new(state.reference_ms);
        ttl.buckets = state.buckets;
        for (minute, keys, memory_bytes) in state.minutes {
            if keys > 0 {
                ttl.add_minute(minute, &Tally { keys, memory_bytes });
            }
        }
        Ok(ttl)
    }
}

impl AddAssign for Ttl {
    fn add_assign(&mut self, o: Ttl) {
        // An empty tally (the merge of a run's dumps starts as one, measured from now) takes
        // the other's reference, so the merge measures from the first dump's ctime.
        if self.buckets.iter().all(|t| t.keys == 0) && self.minutes().next().is_none() {
            *self = o;
            return;
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a += b;
        }
        if o.window_start == self.window_start && !self.window.is_empty() {
            for (a, b) in self.window.iter_mut().zip(&o.window) {
                *a += b;
            }
            for (m, t) in &o.elsewhere {
                self.add_minute(*m, t);
            }
        } else {
            for (m, t) in o.minutes() {
                self.add_minute(m, t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_edges() {
        assert_eq!(TtlBucket::of(None), TtlBucket::NoTtl);
        assert_eq!(TtlBucket::of(Some(-5)), TtlBucket::Expired);
        assert_eq!(TtlBucket::of(Some(0)), TtlBucket::Expired);
        assert_eq!(TtlBucket::of(Some(1)), TtlBucket::UnderHour);
        assert_eq!(TtlBucket::of(Some(HOUR_MS)), TtlBucket::HourToDay);
        assert_eq!(TtlBucket::of(Some(DAY_MS)), TtlBucket::DayToWeek);
        assert_eq!(TtlBucket::of(Some(7 * DAY_MS)), TtlBucket::WeekToMonth);
        assert_eq!(TtlBucket::of(Some(30 * DAY_MS)), TtlBucket::OverMonth);
    }

    /// `keys` keys of 10 bytes each.
    fn tally(keys: u64) -> Tally {
        Tally {
            keys,
            memory_bytes: keys.saturating_mul(10),
        }
    }

    /// A minute of November 2023.
    const BASE_MINUTE: i64 = 1_700_000_000_000 / MINUTE_MS;

    #[test]
    fn the_busiest_minutes_picked_out_are_those_of_all_minutes_sorted() {
        // Minutes inside the 30-day window and past it, tallies with ties on keys and on
        // memory.
        let mut ttl = Ttl::new(BASE_MINUTE * MINUTE_MS);
        let mut x = 12345u64;
        for _ in 0..3_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let minute = BASE_MINUTE + ((x >> 40) % 60_000).cast_signed();
            let keys = 1 + (x >> 20) % 7;
            ttl.add_minute(
                minute,
                &Tally {
                    keys,
                    memory_bytes: keys * 10 + (x >> 60),
                },
            );
        }
        let mut all: Vec<(i64, Tally)> = ttl.minutes().map(|(m, &t)| (m * MINUTE_MS, t)).collect();
        all.sort_by(|a, b| {
            (b.1.keys, b.1.memory_bytes)
                .cmp(&(a.1.keys, a.1.memory_bytes))
                .then(a.0.cmp(&b.0))
        });
        assert!(all.len() > 2_000, "{} minutes", all.len());
        for n in [0, 1, 10, 500, all.len() - 1, all.len(), all.len() + 1] {
            assert_eq!(ttl.storms(n), all[..n.min(all.len())], "{n}");
        }
        for keys in [0, 1, 5, 7, 8, 30] {
            let expected: Vec<_> = all
                .iter()
                .take_while(|(_, t)| t.keys >= keys)
                .copied()
                .collect();
            assert_eq!(ttl.storms_of_at_least(keys), expected, "{keys}");
        }
        let mut sum = Tally::default();
        for (_, t) in &all {
            sum += t;
        }
        assert_eq!(ttl.minutes_in_all(), (all.len(), sum));
    }

    #[test]
    fn expiring_within_is_cumulative_to_the_minute() {
        let (t, base) = (tally, BASE_MINUTE);
        let mut a = Ttl::new(base * MINUTE_MS);
        a.buckets[TtlBucket::Expired as usize] = t(1);
        a.add_minute(base, &t(2));
        a.add_minute(base + 59, &t(3));
        a.add_minute(base + 60, &t(4));
        a.add_minute(base + 43_200, &t(5));
        assert_eq!(
            a.expiring_within(&[0, MINUTE_MS, HOUR_MS, DAY_MS, STORM_WINDOW_MS + MINUTE_MS]),
            vec![t(1), t(3), t(6), t(10), t(15)]
        );
    }

    #[test]
    fn windows_of_different_dumps_merge() {
        let (t, base) = (tally, BASE_MINUTE);
        let mut a = Ttl::new(base * MINUTE_MS);
        a.add_minute(base + 5, &t(2));
        a.add_minute(base + 43_200, &t(1));
        // Another shard written two hours later: its window reaches further.
        let mut b = Ttl::new((base + 120) * MINUTE_MS);
        b.add_minute(base + 5 + 120, &t(7));
        b.add_minute(base + 43_200 + 120, &t(3));
        let mut same = Ttl::new(base * MINUTE_MS);
        same.add_minute(base + 5, &t(4));
        a += b;
        a += same;
        let at = |m: i64| m * MINUTE_MS;
        assert_eq!(
            a.storms(10),
            vec![
                (at(base + 125), t(7)),
                (at(base + 5), t(6)),
                (at(base + 43_320), t(3)),
                (at(base + 43_200), t(1)),
            ]
        );
    }
}
