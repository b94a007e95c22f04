//! The analysis pass every command shares: scan a dump in batches and analyse each batch
//! on the rayon pool while the next one is scanned.
//!
//! An RDB file has no index, so scanning is sequential; analysing a key (walking its
//! value, modelling its encoding and memory, rendering or aggregating) is not. While the
//! pool folds batch N in chunks, one side of the join hands batch N-1's chunk values to
//! the caller (who may write hundreds of megabytes of rows) and then scans batch N+1.
//! Chunk values reach the caller in file order, so streamed rows keep the dump's order. A
//! batch holding a damaged value is handed over at once and ends the pass.
//!
//! # The same result whatever the threads
//!
//! A key is read (its value walked, its encoding and memory modelled) on whichever pool
//! thread takes its chunk, and what the pass aggregates ([`Aggregating`]) takes it in two
//! ways. Into what merges the same whatever the order (sums, histograms, totally ordered
//! rankings), on the thread that read the chunk, right after reading it (one aggregate a
//! thread, merged after the pass). Into what depends on the order keys come in (the
//! heavy-hitter tables of `analyze::groups`, whose light rows depend on the order they met
//! the keys in), in file order, one thread at a time, from the statistics the chunk keeps:
//! the thread that folded the last chunk in order folds the next ones up to the chunk it
//! read itself, while the others go on reading, so the tables stay in one core's cache
//! and no thread holds the pool at the end of a batch; chunks left waiting are folded by
//! the threads of the next batch, or at the end of the pass. So the aggregates are the
//! same whatever `--threads` is and however the pool schedules: those of one thread
//! reading the dump from start to end. No chunk after a damaged value is folded in order;
//! the order-free aggregates, which took every chunk as it was read, are emptied and
//! folded again up to the damaged value (one more read of what came before it, for a
//! damaged dump only).

use crate::model::calibration::UsedMemorySums;
use crate::model::key_stats::KeyStats;
use crate::model::server::ProfileOverrides;
use crate::pass::filter::KeyFilter;
use crate::pass::input::{Dump, SpoolOptions};
use crate::pass::scan::{DumpInfo, DumpScan};
use crate::rdb::value::ReleasePages;
use crate::rdb::{DecodeError, KeyRecord, Scratch};
use crate::text::escape::escape_key;
use crate::text::words::plural;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::io;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Keys scanned ahead while the previous batch is analysed.
const BATCH: usize = 16 * 1024;
/// Keys one rayon task reads.
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
    used_memory: UsedMemorySums,
    /// Index in the chunk of the key whose value is damaged, and why.
    failure: Option<(usize, DecodeError)>,
}

/// What a pass does with each key read on the pool: `fold` it into the chunk's value
/// (`init`, handed to `consume` in file order). What it aggregates is folded by a
/// [`Aggregating`].
pub struct Folding<I, F> {
    pub init: I,
    pub fold: F,
}

/// What a pass aggregates every key into beside the chunk values (see the module docs).
pub trait Aggregating: Sync {
    /// Whether keys are folded at all: when not, no chunk keeps its keys' statistics.
    const FOLDS: bool;
    /// Folds `keys`, the next ones in file order, into what depends on the order keys
    /// come in; one thread at a time.
    fn in_order(&self, keys: &[KeyStats<'_>]);
    /// Folds `keys` into what does not depend on the order; on any thread, several at
    /// once.
    fn any_order(&self, keys: &[KeyStats<'_>]);
    /// Empties what [`Aggregating::any_order`] folded.
    fn forget_any_order(&self);
}

/// Nothing folded: a pass that only builds its chunk values (`keys`, `info`).
pub struct NoFold;

impl Aggregating for NoFold {
    const FOLDS: bool = false;
    fn in_order(&self, _: &[KeyStats<'_>]) {}
    fn any_order(&self, _: &[KeyStats<'_>]) {}
    fn forget_any_order(&self) {}
}

/// The statistics of a chunk's keys that passed the filters, kept for the folds.
struct Kept<'data> {
    keys: Vec<KeyStats<'data>>,
    /// Entries of `keys` filled by this chunk (the others are left from an earlier one).
    len: usize,
    /// The chunk ends at a damaged value: no key after it is folded.
    damaged: bool,
}

impl<'data> Kept<'data> {
    /// The next entry to read a key into.
    fn slot(&mut self) -> &mut KeyStats<'data> {
        if self.len == self.keys.len() {
            self.keys.push(KeyStats::new());
        }
        &mut self.keys[self.len]
    }

    fn read(&self) -> &[KeyStats<'data>] {
        &self.keys[..self.len]
    }
}

/// The chunks read so far and not yet folded both ways, folded by whichever thread finds
/// work: the next chunk of the file in order (one thread at a time), then any chunk folded
/// in order into what does not depend on order (several threads at once). A chunk past a
/// damaged value is folded neither way.
///
/// A thread folds in order only up to the chunk it read itself, so none is kept folding
/// chunks of its batch after the others are done with it: what is left waits for the
/// threads of the next batch, or for [`Sequencer::finish`]. The pool never waits at the
/// end of a batch for the one thread that may fold in order. A thread that finds
/// [`MAX_BEHIND`] chunks waiting waits to fold them itself, so the chunks kept stay
/// bounded however many threads read.
struct Sequencer<'data, 'f, F> {
    ready: Mutex<Ready<'data>>,
    /// Signalled when a thread stops folding in order.
    folded: Condvar,
    fold: &'f F,
}

/// Chunks read and waiting to be folded in order beyond which a reading thread stops to
/// fold them: two batches' worth.
const MAX_BEHIND: usize = 2 * BATCH / CHUNK;

/// Chunks waiting to be folded in order beyond which a thread other than the last to fold
/// them takes over.
const HAND_OVER_BEHIND: usize = 4;

struct Ready<'data> {
    /// Chunks read or being read, from the next to fold in order on (`None`: not read
    /// yet).
    waiting: VecDeque<Option<Kept<'data>>>,
    /// Index in the pass of the chunk to fold in order next (`None` once a damaged one is
    /// folded: no later chunk is).
    next: Option<usize>,
    /// Index in the pass of the current batch's first chunk.
    batch_start: usize,
    /// A thread is folding in order.
    folding: bool,
    /// The pool thread that folded in order last: the one to do it next, whose cache
    /// holds the tables (they would move between cores with every chunk otherwise).
    folder: Option<usize>,
    /// The record offset of the first damaged value met, if any.
    damaged_at: Option<u64>,
    /// Statistics folded both ways, for chunks to come to read into.
    free: Vec<Kept<'data>>,
}

impl<'data> Ready<'data> {
    /// The next chunk in order if it has been read and is not past `last` (an index in
    /// the pass), taken out to be folded.
    fn take_next(&mut self, last: usize) -> Option<Kept<'data>> {
        let next = self.next.filter(|&n| n <= last)?;
        let kept = self.waiting.front_mut()?.take()?;
        self.waiting.pop_front();
        self.next = (!kept.damaged).then_some(next + 1);
        Some(kept)
    }

    /// Chunks read and not folded in order.
    fn behind(&self) -> usize {
        self.waiting.iter().filter(|c| c.is_some()).count()
    }
}

impl<'data, 'f, F: Aggregating> Sequencer<'data, 'f, F> {
    fn new(fold: &'f F) -> Self {
        Sequencer {
            ready: Mutex::new(Ready {
                waiting: VecDeque::new(),
                next: Some(0),
                batch_start: 0,
                folding: false,
                folder: None,
                damaged_at: None,
                free: Vec::new(),
            }),
            folded: Condvar::new(),
            fold,
        }
    }

    fn ready(&self) -> MutexGuard<'_, Ready<'data>> {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A batch of `chunks` chunks is about to be read: returns the pass index of its first.
    fn start_batch(&self, chunks: usize) -> usize {
        let mut ready = self.ready();
        let start = ready.batch_start;
        if let Some(next) = ready.next {
            ready.waiting.resize_with(start + chunks - next, || None);
        }
        ready.batch_start = start + chunks;
        start
    }

    /// Room for a chunk's statistics.
    fn take(&self) -> Kept<'data> {
        let mut kept = self.ready().free.pop().unwrap_or_else(|| Kept {
            keys: Vec::new(),
            len: 0,
            damaged: false,
        });
        kept.len = 0;
        kept.damaged = false;
        kept
    }

    /// Chunk `index` (in the pass) has been read: folds what is ready, the next chunks in
    /// order up to this one first, until nothing is.
    fn offer(&self, index: usize, kept: Kept<'data>) {
        let mut ready = self.ready();
        match ready.next {
            Some(next) => ready.waiting[index - next] = Some(kept),
            // Past a damaged value: never folded.
            None => ready.free.push(kept),
        }
        self.fold_ready(ready, index);
    }

    /// A chunk stopped at a damaged value in the record at `offset`.
    fn damaged_at(&self, offset: u64) {
        let mut ready = self.ready();
        ready.damaged_at = Some(ready.damaged_at.map_or(offset, |at| at.min(offset)));
    }

    /// Folds the chunks left to fold: every chunk has been read. Returns the record offset
    /// of the first damaged value, if a chunk met one.
    fn finish(&self) -> Option<u64> {
        self.fold_ready(self.ready(), usize::MAX);
        self.ready().damaged_at
    }

    fn fold_ready<'g>(&'g self, mut ready: MutexGuard<'g, Ready<'data>>, last: usize) {
        let me = rayon::current_thread_index();
        loop {
            // The thread that folded in order last goes on doing so; another takes over
            // when it lags by a few chunks (it is reading a long value), or at the end.
            let mine = ready.folder.is_none()
                || ready.folder == me
                || last == usize::MAX
                || ready.behind() > HAND_OVER_BEHIND;
            let next = match ready.folding || !mine {
                true => None,
                false => ready.take_next(last),
            };
            if let Some(kept) = next {
                ready.folding = true;
                ready.folder = me;
                drop(ready);
                self.fold.in_order(kept.read());
                ready = self.ready();
                ready.folding = false;
                ready.free.push(kept);
                self.folded.notify_all();
            } else if ready.folding && ready.behind() > MAX_BEHIND {
                ready = self
                    .folded
                    .wait(ready)
                    .unwrap_or_else(PoisonError::into_inner);
            } else {
                return;
            }
        }
    }
}

/// Folds every key of `dump` whose record comes before offset `end` into what does not
/// depend on order, on this thread.
fn fold_any_order_before<K: Aggregating>(dump: &Dump, options: &Options, fold: &K, end: u64) {
    let nothing = Folding {
        init: || (),
        fold: |_: &mut (), _: &KeyStats<'_>| {},
    };
    let mut scan = DumpScan::of(dump);
    let mut batch = Vec::with_capacity(BATCH);
    let mut kept = Kept {
        keys: Vec::new(),
        len: 0,
        damaged: false,
    };
    loop {
        batch.clear();
        let more = scan.next_batch(&mut batch, BATCH);
        let Some(profile) = scan.profile() else {
            return;
        };
        let profile = options.overrides.apply(profile);
        let before = batch.partition_point(|r| r.offset < end);
        for chunk in batch[..before].chunks(CHUNK) {
            kept.len = 0;
            read_chunk(
                chunk,
                dump,
                &profile,
                &options.filter,
                &nothing,
                Some(&mut kept),
            );
            fold.any_order(kept.read());
        }
        if !more || before < batch.len() {
            return;
        }
    }
}

/// Reads the keys of one chunk that pass the filter, folds them into the chunk's value,
/// and keeps their statistics in `kept` when the pass aggregates; stops at a damaged
/// value.
fn read_chunk<'data, T, I, F>(
    records: &[KeyRecord<'data>],
    pages: &dyn ReleasePages,
    profile: &crate::model::server::ServerProfile,
    filter: &KeyFilter,
    folding: &Folding<I, F>,
    kept: Option<&mut Kept<'data>>,
) -> Folded<T>
where
    I: Fn() -> T + Sync,
    F: Fn(&mut T, &KeyStats<'_>) + Sync,
{
    let mut scratch = Scratch::releasing(pages);
    let mut value = (folding.init)();
    let mut used_memory = UsedMemorySums::default();
    let mut single = KeyStats::new();
    let mut kept = kept;
    for (i, record) in records.iter().enumerate() {
        if !filter.is_empty()
            && !filter.accepts(record, profile.saved_at_ms, || record.key.to_cow().ok())
        {
            continue;
        }
        let read = match kept.as_deref_mut() {
            Some(kept) => kept.slot(),
            None => &mut single,
        };
        if let Err(e) = read.read(record, profile, &mut scratch) {
            if let Some(kept) = kept {
                kept.damaged = true;
            }
            return Folded {
                value,
                used_memory,
                failure: Some((i, e)),
            };
        }
        used_memory.add(read, profile.limits.list_compress_depth);
        if filter.keeps(read.memory_bytes) {
            (folding.fold)(&mut value, read);
            if let Some(kept) = kept.as_deref_mut() {
                kept.len += 1;
            }
        }
    }
    Folded {
        value,
        used_memory,
        failure: None,
    }
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
/// values in file order (including the partial chunk before a damaged value); `key_fold`
/// takes every key, up to a damaged value.
pub fn run<T, I, F, K>(
    dump: &Dump,
    options: &Options,
    folding: Folding<I, F>,
    key_fold: &K,
    mut consume: impl FnMut(T) -> io::Result<()> + Send,
) -> io::Result<Pass>
where
    T: Send,
    I: Fn() -> T + Sync,
    F: Fn(&mut T, &KeyStats<'_>) + Sync,
    K: Aggregating,
{
    let sequencer = Sequencer::new(key_fold);
    let mut scan = DumpScan::of(dump);
    // Outside the pass's closure so that what it summed is kept on every way out of it,
    // a damaged value's included.
    let mut handover = Handover::default();
    let (crc, value_damage) =
        dump.with_checksum(options.verify_checksum, || -> io::Result<Option<Damage>> {
            // Three batches in flight: `ahead` being scanned, `current` folded on the pool,
            // and the one folded before it, whose chunk values (`to_hand`) go to `consume`
            // (which may write hundreds of megabytes of rows) on the scanning side of the
            // join.
            let mut ahead = Vec::with_capacity(BATCH);
            let mut current = Vec::with_capacity(BATCH);
            let mut to_hand: Vec<Folded<T>> = Vec::new();
            let mut limit = KeyLimit {
                left: options.key_limit,
            };
            let mut more = scan.next_batch(&mut current, BATCH);
            more = limit.apply(&mut current) && more;
            let mut profile = scan.profile();
            while let (false, Some(p)) = (current.is_empty(), profile) {
                let p = options.overrides.apply(p);
                let (handed, chunks) = rayon::join(
                    || -> io::Result<(Option<Damage>, bool)> {
                        let damage =
                            handover.hand_over(std::mem::take(&mut to_hand), &mut consume)?;
                        let more = damage.is_none() && more && scan.next_batch(&mut ahead, BATCH);
                        Ok((damage, limit.apply(&mut ahead) && more))
                    },
                    || {
                        let first = sequencer.start_batch(current.len().div_ceil(CHUNK));
                        current
                            .par_chunks(CHUNK)
                            .enumerate()
                            .map(|(index, c)| {
                                let filter = &options.filter;
                                if !K::FOLDS {
                                    return read_chunk(c, dump, &p, filter, &folding, None);
                                }
                                let mut kept = sequencer.take();
                                let read =
                                    read_chunk(c, dump, &p, filter, &folding, Some(&mut kept));
                                // Folded while its statistics are in this core's cache.
                                key_fold.any_order(kept.read());
                                if let Some((i, _)) = read.failure {
                                    sequencer.damaged_at(c[i].offset);
                                }
                                sequencer.offer(first + index, kept);
                                read
                            })
                            .collect::<Vec<_>>()
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
                if chunks.iter().any(|c| c.failure.is_some()) {
                    // Stop at the damage: no later batch is folded.
                    return handover.hand_over(chunks, &mut consume);
                }
                to_hand = chunks;
                std::mem::swap(&mut current, &mut ahead);
                ahead.clear();
                // Everything before the batch about to be folded has been read.
                if let Some(first) = current.first() {
                    dump.release_before(first.offset);
                }
                profile = scan.profile();
            }
            handover.hand_over(to_hand, &mut consume)
        });
    let used_memory = handover.used_memory;
    // Chunks read in the last batches may be waiting to be folded.
    if let Some(at) = sequencer.finish() {
        // Chunks after the damaged value were folded into what does not depend on order as
        // they were read: fold again what came before it (a damaged dump is rare).
        key_fold.forget_any_order();
        fold_any_order_before(dump, options, key_fold, at);
    }
    let value_damage = value_damage?;
    let info = scan.finish(options.verify_checksum, crc);
    let mut damage = value_damage.or_else(|| {
        info.error.clone().map(|error| Damage {
            error,
            last_key: info.last_key.clone(),
            keys_read: info.keys,
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
