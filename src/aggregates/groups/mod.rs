//! Statistics of a group of keys (a prefix, a pattern, a hash tag) and [`GroupTable`], a
//! table of named groups of bounded size that never loses a heavy name.
//!
//! # The guarantee
//!
//! A table of capacity `m` fed keys holding `W` bytes of memory in `K` keys:
//! * lists every name holding more than `W / m` bytes or more than `K / m` keys;
//! * counts every key of a listed name from the moment the name entered the table, so each
//!   figure of a row (keys, memory, bytes in file, elements, per-type split, no-TTL
//!   columns) is a lower bound of the truth, and the keys counted before, if any, number at
//!   most the row's [`ErrorBound::keys`] and hold at most its [`ErrorBound::memory_bytes`];
//!   both are 0 (the row is exact) unless the table overflowed before the name entered;
//! * a name not listed holds at most [`GroupTable::absent_bound`] (≤ `W / m` bytes and
//!   `K / m` keys);
//! * counts every key it does not list in its `(other)` group, so the rows plus `(other)`
//!   always sum to the keys fed;
//! * holds at most `2.5 m` names (plus one table's worth for the moment of a merge), and
//!   at most `2 m` once a dump's keys are all in ([`GroupTable::trim`]).
//!
//! # How
//!
//! A weighted Misra–Gries summary counting memory and keys at once, merged as in Agarwal
//! et al., "Mergeable summaries" (PODS 2012). Each name carries two counters, memory and
//! keys since it entered, less what purges took. When a new name finds the table full, a
//! purge takes `δm` (the `m`-th largest memory counter) from every memory counter and `δk`
//! (the `m`-th largest key counter) from every key counter, flooring at zero, and drops the
//! names whose counters are both zero into `(other)`; fewer than `m` names have a memory
//! counter above `δm`, fewer than `m` a key counter above `δk`, so fewer than `2 m` stay.
//! Every purge takes at least `m · δm` bytes from the counters, which never held more than
//! `W`, so the sum `Δm` of the `δm` stays ≤ `W / m` (and `Δk` ≤ `K / m`); a name's true
//! memory is at most its counter plus `Δm`, and at most `Δm` when it is not in the table.
//! A name entering the table carries the `Δm`, `Δk` of that moment as its error bound.
//! Merging adds counters, errors and `Δ`s (a name missing from one side takes that side's
//! `Δ` as extra error) and purges once if the table grew too big: the bounds then hold for
//! the union of the keys, whichever thread or shard saw which key.
//!
//! Names are identified by their 128-bit xxh3 hash; the bytes are kept for the output.
//! The entries lie end to end in the order the names entered, found through an index of
//! their hashes; a name counted once (most names of a deep prefix level) holds that key's
//! figures, and only its second key gives it a whole [`GroupStats`] (per-type split),
//! so that the names a purge drops soon after they enter cost little.
//!
//! Inside: [`stats`] is a group's figures, [`table`] the table, [`index`] its index of
//! names, [`state`] its save and load.

mod index;
mod state;
mod stats;
mod table;

pub use stats::{type_index, GroupStats, SortBy, TypeSplit};
pub use table::{same_name, ErrorBound, GroupRow, GroupTable, RunOfKeys};

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // Small known test values.
mod tests {
    use super::table::Counted;
    use super::*;
    use crate::model::key_stats::KeyStats;
    use crate::rdb::RedisType;
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    /// splitmix64: a seeded stream of numbers, the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn key(memory: u64, ty: RedisType, ttl: bool) -> KeyStats<'static> {
        let mut k = KeyStats::new();
        k.key = Cow::Borrowed(b"k");
        k.memory_bytes = memory;
        k.serialized_bytes = memory / 2;
        k.elements = Some(memory % 7);
        k.redis_type = ty;
        k.expiry_ms = ttl.then_some(1);
        k
    }

    /// `(name, key)` pairs: a few heavy names (big keys; or many keys) placed first,
    /// last or interleaved among `light` one-key names.
    fn stream(seed: u64, light: usize, placement: u64) -> Vec<(Vec<u8>, KeyStats<'static>)> {
        let mut rng = Rng(seed);
        let mut light_keys: Vec<_> = (0..light)
            .map(|i| {
                let ty = RedisType::ALL[rng.below(7) as usize];
                (
                    format!("light:{i}").into_bytes(),
                    key(40 + rng.below(80), ty, i % 3 == 0),
                )
            })
            .collect();
        let mut heavy = Vec::new();
        for h in 0..3u64 {
            // Few keys, a lot of memory.
            for _ in 0..5 {
                heavy.push((
                    format!("big:{h}").into_bytes(),
                    key(100_000 + rng.below(50_000), RedisType::Hash, false),
                ));
            }
        }
        // Many small keys under one name: heavy by key count only.
        for _ in 0..light / 20 {
            heavy.push((b"many".to_vec(), key(10, RedisType::String, true)));
        }
        match placement {
            0 => {
                heavy.extend(light_keys);
                heavy
            }
            1 => {
                light_keys.extend(heavy);
                light_keys
            }
            _ => {
                let mut all = light_keys;
                all.extend(heavy);
                for i in (1..all.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    all.swap(i, j);
                }
                all
            }
        }
    }

    fn truth(items: &[(Vec<u8>, KeyStats<'static>)]) -> BTreeMap<Vec<u8>, GroupStats> {
        let mut t: BTreeMap<Vec<u8>, GroupStats> = BTreeMap::new();
        for (name, k) in items {
            t.entry(name.clone()).or_default().add(k);
        }
        t
    }

    /// Every claim of the module docs, against the brute-force count.
    fn check(table: &GroupTable, truth: &BTreeMap<Vec<u8>, GroupStats>) {
        let mut total = GroupStats::default();
        for s in truth.values() {
            total += s;
        }
        let m = table.capacity() as u64;
        let rows = table.rows();
        assert!(rows.len() as u64 <= m * 5 / 2, "{} rows", rows.len());
        let mut sum = table.other().clone();
        let listed: BTreeMap<&[u8], GroupRow<'_>> = rows.iter().map(|r| (r.name, *r)).collect();
        for (name, t) in truth {
            let Some(row) = listed.get(&name[..]) else {
                assert!(t.memory_bytes * m <= total.memory_bytes, "{name:?} lost");
                assert!(t.keys * m <= total.keys, "{name:?} lost");
                assert!(t.memory_bytes <= table.absent_bound().memory_bytes);
                assert!(t.keys <= table.absent_bound().keys);
                continue;
            };
            let (s, e) = (row.stats, row.error);
            sum += s;
            assert!(s.keys <= t.keys && t.keys - s.keys <= e.keys, "{name:?}");
            assert!(s.memory_bytes <= t.memory_bytes);
            assert!(
                t.memory_bytes - s.memory_bytes <= e.memory_bytes,
                "{name:?}"
            );
            assert!(s.serialized_bytes <= t.serialized_bytes && s.elements <= t.elements);
            assert!(t.no_ttl_keys - s.no_ttl_keys <= e.keys);
            assert!(t.no_ttl_memory_bytes - s.no_ttl_memory_bytes <= e.memory_bytes);
            for (a, b) in s.by_type.iter().zip(&t.by_type) {
                assert!(
                    b.keys - a.keys <= e.keys && b.memory_bytes - a.memory_bytes <= e.memory_bytes
                );
            }
            assert!(e.keys <= table.absent_bound().keys);
            assert!(e.memory_bytes <= table.absent_bound().memory_bytes);
            if !table.overflowed() {
                assert_eq!((s, e), (t, ErrorBound::default()));
            }
        }
        assert_eq!(sum, total, "rows plus (other) are the whole");
        assert!(table.absent_bound().memory_bytes * m <= total.memory_bytes);
        assert!(table.absent_bound().keys * m <= total.keys);
    }

    fn fill(items: &[(Vec<u8>, KeyStats<'static>)], m: usize) -> GroupTable {
        let mut t = GroupTable::new(m);
        for (name, k) in items {
            t.add(name, k);
        }
        t
    }

    /// Every placement of the heavy names (first, last, interleaved) with three seeds: the
    /// seed, the placement, the stream with `light` light names, and its truth.
    #[allow(clippy::type_complexity)]
    fn streams(
        light: usize,
    ) -> impl Iterator<
        Item = (
            u64,
            u64,
            Vec<(Vec<u8>, KeyStats<'static>)>,
            BTreeMap<Vec<u8>, GroupStats>,
        ),
    > {
        (0..3).flat_map(move |placement| {
            (1..4).map(move |seed| {
                let items = stream(seed, light, placement);
                let truth = truth(&items);
                (seed, placement, items, truth)
            })
        })
    }

    #[test]
    fn heavy_names_first_last_and_interleaved_are_kept_within_bounds() {
        for (_, _, items, truth) in streams(5_000) {
            let table = fill(&items, 50);
            assert!(table.overflowed());
            check(&table, &truth);
            for name in [&b"big:0"[..], b"big:1", b"big:2", b"many"] {
                assert!(table.rows().iter().any(|r| r.name == name), "{name:?}");
            }
        }
    }

    #[test]
    fn merges_keep_the_bounds_of_the_union() {
        for (seed, placement, items, truth) in streams(4_000) {
            {
                let single = fill(&items, 40);
                // Two to five parts, cut at random places, merged in order and not.
                let mut rng = Rng(seed * 7 + placement);
                let parts = 2 + rng.below(4) as usize;
                let mut cuts: Vec<usize> = (1..parts)
                    .map(|_| rng.below(items.len() as u64) as usize)
                    .collect();
                cuts.sort_unstable();
                cuts.insert(0, 0);
                cuts.push(items.len());
                let mut tables: Vec<GroupTable> = cuts
                    .windows(2)
                    .map(|w| fill(&items[w[0]..w[1]], 40))
                    .collect();
                if seed % 2 == 0 {
                    tables.reverse();
                }
                let mut merged = GroupTable::new(40);
                for t in tables {
                    merged += t;
                }
                check(&merged, &truth);
                // The heavy names agree with one pass over everything within their bounds.
                let one: BTreeMap<&[u8], GroupRow<'_>> =
                    single.rows().into_iter().map(|r| (r.name, r)).collect();
                for r in merged.rows() {
                    if let Some(s) = one.get(r.name) {
                        let t = &truth[r.name];
                        assert!(
                            r.stats.memory_bytes.abs_diff(s.stats.memory_bytes)
                                <= t.memory_bytes - r.stats.memory_bytes.min(s.stats.memory_bytes)
                        );
                        assert!(
                            r.stats.memory_bytes + r.error.memory_bytes >= s.stats.memory_bytes
                        );
                        assert!(
                            s.stats.memory_bytes + s.error.memory_bytes >= r.stats.memory_bytes
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_part_absorbed_fills_again_as_a_new_one() {
        // Chunks small enough to purge on their own (capacity 40), so every part of the
        // table's state is left behind by some chunk: emptied, it must be as new.
        let rows = |t: &GroupTable| {
            let listed: Vec<(Vec<u8>, GroupStats, ErrorBound)> = t
                .rows()
                .iter()
                .map(|r| (r.name.to_vec(), r.stats.clone(), r.error))
                .collect();
            (listed, t.other().clone(), t.absent_bound(), t.overflowed())
        };
        for (_, _, items, _) in streams(3_000) {
            let mut fresh_parts = GroupTable::new(40);
            let mut reused_parts = GroupTable::new(40);
            let mut part = GroupTable::new(40);
            for chunk in items.chunks(700) {
                fresh_parts += fill(chunk, 40);
                for (name, k) in chunk {
                    part.add(name, k);
                }
                reused_parts.absorb(&mut part);
                assert!(part.rows().is_empty() && !part.overflowed());
            }
            assert!(rows(&fresh_parts).3, "the merged table overflows");
            assert_eq!(rows(&reused_parts), rows(&fresh_parts));
        }
    }

    #[test]
    fn exact_until_the_table_overflows() {
        let items = stream(9, 300, 2);
        let truth = truth(&items);
        let table = fill(&items, 200);
        assert!(!table.overflowed());
        assert_eq!(table.rows().len(), truth.len());
        assert_eq!(table.other(), &GroupStats::default());
        check(&table, &truth);
        let mut merged = fill(&items[..100], 200);
        merged += fill(&items[100..], 200);
        assert!(!merged.overflowed());
        check(&merged, &truth);
    }

    #[test]
    fn the_top_rows_come_first_in_the_order_of_all_rows() {
        let items = stream(11, 2_000, 2);
        let table = fill(&items, 40);
        let names =
            |rows: &[GroupRow<'_>]| rows.iter().map(|r| r.name.to_vec()).collect::<Vec<_>>();
        for by in [SortBy::Memory, SortBy::Keys, SortBy::Elements] {
            let all = table.rows_by(by);
            assert!(all.len() > 40, "{} rows", all.len());
            for n in [0, 1, 7, 40, all.len() - 1, all.len(), all.len() + 5] {
                let top = table.rows_top(by, n);
                let shown = n.min(all.len());
                assert_eq!(names(&top[..shown]), names(&all[..shown]), "{by:?}, {n}");
                // The others follow in some order: every row once.
                let mut rest = names(&top[shown..]);
                let mut expected = names(&all[shown..]);
                rest.sort();
                expected.sort();
                assert_eq!(rest, expected, "{by:?}, {n}");
            }
        }
        assert!(!table.is_empty());
        assert!(GroupTable::new(5).is_empty());
    }

    /// A table's rows (name, figures, error), `(other)` and absent bound, comparable.
    type Shown = (
        Vec<(Vec<u8>, GroupStats, ErrorBound)>,
        GroupStats,
        ErrorBound,
    );

    fn shown(t: &GroupTable) -> Shown {
        let rows = t
            .rows()
            .iter()
            .map(|r| (r.name.to_vec(), r.stats.clone(), r.error))
            .collect();
        (rows, t.other().clone(), t.absent_bound())
    }

    #[test]
    fn a_table_read_back_merges_as_the_table_itself() {
        let items = stream(5, 3_000, 2);
        let (first, second) = items.split_at(1_700);
        let table = fill(first, 30);
        assert!(table.overflowed());
        let text = serde_json::to_string(&table).unwrap();
        let back: GroupTable = serde_json::from_str(&text).unwrap();
        assert_eq!(shown(&back), shown(&table));
        assert!(back.overflowed());
        // Names counted once are read back as one key, not as a whole GroupStats.
        let held_whole = |t: &GroupTable| {
            t.entries
                .iter()
                .filter(|e| matches!(e.counted, Counted::Many(_)))
                .count()
        };
        assert!((1..table.entries.len()).contains(&held_whole(&table)));
        assert_eq!(held_whole(&back), held_whole(&table));
        assert_eq!(back.many.len(), held_whole(&table));
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        // Merged into the same table, the original and the copy give the same table.
        let (mut a, mut b) = (fill(second, 30), fill(second, 30));
        a += table;
        b += back;
        assert_eq!(shown(&a), shown(&b));
        check(&a, &truth(&items));
        // A table holding more names than its capacity allows is refused.
        let wider = fill(&items, 1_000);
        let text = serde_json::to_string(&wider).unwrap().replacen(
            "\"capacity\":1000",
            "\"capacity\":3",
            1,
        );
        let e = serde_json::from_str::<GroupTable>(&text)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("in a table of capacity 3"), "{e}");
    }

    #[test]
    fn a_table_of_one_keeps_the_heaviest() {
        let items = stream(3, 1_000, 2);
        let truth = truth(&items);
        let table = fill(&items, 1);
        check(&table, &truth);
    }
}
