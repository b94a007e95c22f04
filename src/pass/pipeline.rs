//! The analysis pass every command shares: scan a dump in batches and analyse each batch
//! on the rayon pool while the next one is scanned.
//!
//! An RDB file has no index, so scanning is sequential; analysing a key (walking its
//! value, modelling its encoding and memory, rendering or aggregating) is not. While the
//! pool folds batch N in chunks, one side of the join hands batch N-1's chunk values to
//! the caller (who may write hundreds of megabytes of rows) and then scans batch N+1,
//! while a task on the pool merges batch N-1's parts ([`Aggregating::merge`]). Both go in
//! file order, so streamed rows keep the dump's order and what depends on the order keys
//! come in is the same whatever the threads: a chunk is a fixed run of the dump's records
//! ([`CHUNK`] of them), whatever `--threads` is. A batch holding a damaged value is handed
//! over at once and ends the pass.

use crate::model::calibration::UsedMemorySums;
use crate::model::key_stats::KeyStats;
use crate::model::server::ProfileOverrides;
use crate::pass::allocator_detection::AllocatorChoice;
use crate::pass::filter::KeyFilter;
use crate::pass::input::{Dump, SpoolOptions};
use crate::pass::scan::{DumpInfo, DumpScan};
use crate::rdb::value::ReleasePages;
use crate::rdb::{DecodeError, KeyRecord, Scratch};
use crate::text::escape::escape_key;
use crate::text::words::plural;
use rayon::prelude::*;
use std::io;

/// Keys scanned ahead while the previous batch is analysed.
const BATCH: usize = 16 * 1024;
/// Records one rayon task analyses: the unit what depends on the order keys come in is
/// summarised by, so a constant (not a function of the pool).
const CHUNK: usize = 1024;

#[derive(Clone, Default)]
pub struct Options {
    pub verify_checksum: bool,
    /// What the user says about the server, over what the dump says.
    pub overrides: ProfileOverrides,
    pub filter: KeyFilter,
    /// Stop after this many keys (filtered ones included).
    pub key_limit: Option<u64>,
    /// Where compressed input and standard input are spooled.
    pub spool: SpoolOptions,
    /// Report the dumps that can be read when another cannot be opened or is no dump
    /// (`--allow-partial`), instead of refusing the run.
    pub allow_partial: bool,
    /// No consumer shows the keys' cluster slots (`info`): the keys are not hashed as they
    /// are read, only if a slot is asked for.
    pub without_slots: bool,
    /// Each dump's allocator (by position) as a pass over the whole dump settled it: a run
    /// whose rows went out under a first guess the whole dump overturned, run again.
    pub settled: Vec<Option<AllocatorChoice>>,
}

/// What is left of [`Options::key_limit`] as batches are scanned.
struct KeyLimit {
    left: Option<u64>,
}

impl KeyLimit {
    /// Cuts `batch` to the keys left; false once none are.
    fn apply(&mut self, batch: &mut Vec<KeyRecord<'_>>) -> bool {
        let Some(left) = &mut self.left else {
            return true;
        };
        batch.truncate(usize::try_from(*left).map_or(batch.len(), |l| l.min(batch.len())));
        *left -= batch.len() as u64;
        *left > 0
    }
}

/// Where a dump turned out damaged, and what was read whole before it.
#[derive(Debug, Clone)]
pub struct Damage {
    pub error: DecodeError,
    pub last_key: Option<(u64, Vec<u8>)>,
    pub keys_read: u64,
    /// Keys after the damaged one were folded too (later chunks of its batch, analysed
    /// beside it): what folding fed holds more keys than `consume` received.
    pub folded_past: bool,
    /// The compressed input broke there: why (see [`crate::pass::input::Cut`]).
    pub input: Option<String>,
}

impl Damage {
    /// One line: what, where, why the input broke there (compressed input), and the last
    /// key read whole (the dump's name not included).
    pub fn describe(&self) -> String {
        let mut msg = self.error.to_string();
        if let Some(input) = &self.input {
            msg.push_str("; ");
            msg.push_str(input);
        }
        match &self.last_key {
            Some((db, key)) => msg.push_str(&format!(
                "; last good key: \"{}\" (db {db}); {} read before the damage",
                escape_key(key),
                plural(self.keys_read, "key")
            )),
            None => msg.push_str("; no key was read before the damage"),
        }
        msg
    }
}

/// The result of a pass: what the dump said about itself, and any damage.
pub struct Pass {
    pub info: DumpInfo,
    pub damage: Option<Damage>,
    /// What the keys read (filtered out by `--min-memory` or not) add to `used_memory`
    /// under every candidate: the whole dump's when it holds `info.keys` keys.
    pub used_memory: UsedMemorySums,
}

struct Folded<T> {
    value: T,
    /// What the chunk's keys add to `used_memory` under every candidate.
    used_memory: UsedMemorySums,
    /// Index in the chunk of the key whose value is damaged, and why.
    failure: Option<(usize, DecodeError)>,
}

/// What a pass does with each key read on the pool: `fold` it into the chunk's value
/// (`init`, handed to `consume` in file order). What it aggregates is folded by an
/// [`Aggregating`].
pub struct Folding<I, F> {
    pub init: I,
    pub fold: F,
}

/// What a pass aggregates every key into beside the chunk values: each pool thread's own
/// state (`Local`, taken once a chunk, for what merges the same in any order), and the
/// part each chunk of the file fills of what depends on the order keys come in, which
/// [`Aggregating::merge`] takes in file order, one part at a time, on one thread, while
/// the next batch is read.
pub trait Aggregating: Sync {
    type Local<'a>
    where
        Self: 'a;
    type Part: Send;
    fn local(&self) -> Self::Local<'_>;
    /// An empty part for the next chunk: one a chunk before filled and [`Aggregating::merge`]
    /// emptied, or a new one.
    fn part(&self, local: &mut Self::Local<'_>) -> Self::Part;
    fn add(local: &mut Self::Local<'_>, part: &mut Self::Part, key: &KeyStats<'_>);
    /// Takes the part of the next chunk of the file; the part, emptied, is kept for a
    /// later chunk.
    fn merge(&self, part: Self::Part);
}

/// Nothing aggregated: a pass that only builds its chunk values (`keys`, `info`).
pub struct NoFold;

impl Aggregating for NoFold {
    type Local<'a> = ();
    type Part = ();

    fn local(&self) {}

    fn part(&self, (): &mut ()) {}

    #[inline]
    fn add((): &mut (), (): &mut (), _: &KeyStats<'_>) {}

    fn merge(&self, (): ()) {}
}

fn fold_chunk<T, I, F, K>(
    records: &[KeyRecord<'_>],
    pages: &dyn ReleasePages,
    profile: &crate::model::server::ServerProfile,
    options: &Options,
    folding: &Folding<I, F>,
    aggregating: &K,
) -> (Folded<T>, K::Part)
where
    I: Fn() -> T + Sync,
    F: Fn(&mut T, &KeyStats<'_>) + Sync,
    K: Aggregating,
{
    let mut scratch = Scratch::releasing(pages);
    let mut value = (folding.init)();
    let mut local = aggregating.local();
    let mut part = aggregating.part(&mut local);
    let mut used_memory = UsedMemorySums::default();
    let filter = &options.filter;
    let filtering = !filter.is_empty();
    let mut key = KeyStats::new();
    key.slot_on_read = !options.without_slots;
    for (i, record) in records.iter().enumerate() {
        if filtering && !filter.accepts(record, profile.saved_at_ms, || record.key.to_cow().ok()) {
            continue;
        }
        if let Err(e) = key.read(record, profile, &mut scratch) {
            used_memory.take(&mut key.allocations);
            let failure = Some((i, e));
            return (
                Folded {
                    value,
                    used_memory,
                    failure,
                },
                part,
            );
        }
        used_memory.add(&key, profile.limits.list_compress_depth);
        if filter.keeps(key.memory_bytes) {
            (folding.fold)(&mut value, &key);
            K::add(&mut local, &mut part, &key);
        }
    }
    used_memory.take(&mut key.allocations);
    let failure = None;
    (
        Folded {
            value,
            used_memory,
            failure,
        },
        part,
    )
}

/// The batch whose folded chunks go to `consume` next, and the batches before it.
struct Handover<'data> {
    records: Vec<KeyRecord<'data>>,
    /// Keys in the batches handed over before.
    done: u64,
    /// The last of them.
    last_done: Option<KeyRecord<'data>>,
    /// What the keys handed over add to `used_memory`.
    used_memory: UsedMemorySums,
}

impl Default for Handover<'_> {
    fn default() -> Self {
        Handover {
            records: Vec::with_capacity(BATCH),
            done: 0,
            last_done: None,
            used_memory: UsedMemorySums::default(),
        }
    }
}

impl<'data> Handover<'data> {
    /// Hands the `chunks` folded from `self.records` to `consume` in order, up to and
    /// including the partial chunk before a damaged value, which ends the pass.
    fn hand_over<T>(
        &mut self,
        chunks: Vec<Folded<T>>,
        consume: &mut impl FnMut(T) -> io::Result<()>,
    ) -> io::Result<Option<Damage>> {
        let count = chunks.len();
        for (ci, chunk) in chunks.into_iter().enumerate() {
            self.used_memory += &chunk.used_memory;
            consume(chunk.value)?;
            if let Some((i, error)) = chunk.failure {
                let at = ci * CHUNK + i;
                let last = match at {
                    0 => self.last_done,
                    _ => Some(self.records[at - 1]),
                };
                return Ok(Some(Damage {
                    error,
                    last_key: last.as_ref().map(owned_key),
                    keys_read: self.done + at as u64,
                    folded_past: ci + 1 < count,
                    input: None,
                }));
            }
        }
        if count > 0 {
            self.done += self.records.len() as u64;
            self.last_done = self.records.last().copied();
        }
        Ok(None)
    }
}

fn owned_key(record: &KeyRecord<'_>) -> (u64, Vec<u8>) {
    (
        record.db,
        record
            .key
            .to_cow()
            .map(|k| k.into_owned())
            .unwrap_or_default(),
    )
}

/// Analyses every key of `dump` that passes the filter. `folding.fold` runs on the pool
/// over chunks of keys, each into a fresh `folding.init()`; `consume` receives the chunk
/// values in file order (including the partial chunk before a damaged value);
/// `aggregating` takes every key, and merges the chunks' parts in file order up to a
/// damaged value (keys after it in its batch, analysed beside it, are in the threads'
/// states: [`Damage::folded_past`]).
pub fn run<T, I, F, K>(
    dump: &Dump,
    options: &Options,
    folding: Folding<I, F>,
    aggregating: &K,
    mut consume: impl FnMut(T) -> io::Result<()> + Send,
) -> io::Result<Pass>
where
    T: Send,
    I: Fn() -> T + Sync,
    F: Fn(&mut T, &KeyStats<'_>) + Sync,
    K: Aggregating,
{
    let mut scan = DumpScan::of(dump);
    let merge_all = |parts: Vec<K::Part>| {
        for part in parts {
            aggregating.merge(part);
        }
    };
    // Outside the pass's closure so that what it summed is kept on every way out of it,
    // a damaged value's included.
    let mut handover = Handover::default();
    let (crc, value_damage) =
        dump.with_checksum(options.verify_checksum, || -> io::Result<Option<Damage>> {
            // Three batches in flight: `ahead` being scanned, `current` folded on the pool,
            // and the one folded before it, whose chunk values (`to_hand`) go to `consume`
            // (which may write hundreds of megabytes of rows) on the scanning side of the
            // join, and whose parts (`to_merge`) are merged on the pool beside the folding.
            let mut ahead = Vec::with_capacity(BATCH);
            let mut current = Vec::with_capacity(BATCH);
            let mut to_hand: Vec<Folded<T>> = Vec::new();
            let mut to_merge: Vec<K::Part> = Vec::new();
            let mut limit = KeyLimit {
                left: options.key_limit,
            };
            let mut more = scan.next_batch(&mut current, BATCH);
            more = limit.apply(&mut current) && more;
            let mut profile = scan.profile();
            while let (false, Some(p)) = (current.is_empty(), profile) {
                let p = options.overrides.apply(p);
                let (handed, ((values, mut parts), ())) = rayon::join(
                    || -> io::Result<(Option<Damage>, bool)> {
                        let damage =
                            handover.hand_over(std::mem::take(&mut to_hand), &mut consume)?;
                        let more = damage.is_none() && more && scan.next_batch(&mut ahead, BATCH);
                        Ok((damage, limit.apply(&mut ahead) && more))
                    },
                    || {
                        rayon::join(
                            || {
                                current
                                    .par_chunks(CHUNK)
                                    .map(|c| {
                                        fold_chunk(c, dump, &p, options, &folding, aggregating)
                                    })
                                    .unzip::<_, _, Vec<_>, Vec<_>>()
                            },
                            || merge_all(std::mem::take(&mut to_merge)),
                        )
                    },
                );
                let (damage, scanned_more) = handed?;
                if damage.is_some() {
                    // Batches with a damaged value are handed over at once (below), so
                    // this is not expected; a pass never goes on past damage.
                    return Ok(damage);
                }
                more = scanned_more;
                std::mem::swap(&mut handover.records, &mut current);
                if let Some(at) = values.iter().position(|c| c.failure.is_some()) {
                    // Stop at the damage: no later batch is folded, and no part after it
                    // merged.
                    parts.truncate(at + 1);
                    merge_all(parts);
                    return handover.hand_over(values, &mut consume);
                }
                to_hand = values;
                to_merge = parts;
                std::mem::swap(&mut current, &mut ahead);
                ahead.clear();
                // Everything before the batch about to be folded has been read.
                if let Some(first) = current.first() {
                    dump.release_before(first.offset);
                }
                profile = scan.profile();
            }
            merge_all(to_merge);
            handover.hand_over(to_hand, &mut consume)
        });
    let used_memory = handover.used_memory;
    let value_damage = value_damage?;
    let info = scan.finish(options.verify_checksum, crc);
    let mut damage = value_damage.or_else(|| {
        info.error.clone().map(|error| Damage {
            error,
            last_key: info.last_key.clone(),
            keys_read: info.keys,
            folded_past: false,
            input: None,
        })
    });
    if let Some(cut) = dump.cut() {
        // The dump read so far ends where decompression broke: the scan's error (most
        // often a truncation at that offset) says what was cut, the input's why.
        let d = damage.get_or_insert_with(|| Damage {
            error: DecodeError::malformed(cut.offset, "compressed input", "after the dump's end"),
            last_key: info.last_key.clone(),
            keys_read: info.keys,
            folded_past: false,
            input: None,
        });
        d.input = Some(cut.to_string());
    }
    Ok(Pass {
        info,
        damage,
        used_memory,
    })
}
