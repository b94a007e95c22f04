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
//! thread takes its chunk; a chunk keeps the statistics of the keys it read, and what the
//! pass aggregates ([`Aggregating`]) takes them in two steps. First in file order: whichever
//! thread finds the next chunk of the file ready folds it into what depends on the order
//! keys come in (the heavy-hitter tables of `analyze::groups`, whose light rows depend on
//! the order they met the keys in), one thread at a time, while the other threads go on
//! reading. Then in any order, on any thread and several at once: into what merges the
//! same whatever the order (sums, histograms, totally ordered rankings), one aggregate a
//! thread. So the aggregates are the same whatever `--threads` is and however the pool
//! schedules: those of one thread reading the dump from start to end. A chunk is folded
//! either way only once every chunk before it has been: the aggregates never hold a key
//! after a damaged value.

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
use std::io;
use std::sync::{Mutex, PoisonError};

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
    /// Folds `keys`, already folded in order, into what does not depend on the order;
    /// on any thread, several at once.
    fn any_order(&self, keys: &[KeyStats<'_>]);
}

/// Nothing folded: a pass that only builds its chunk values (`keys`, `info`).
pub struct NoFold;

impl Aggregating for NoFold {
    const FOLDS: bool = false;
    fn in_order(&self, _: &[KeyStats<'_>]) {}
    fn any_order(&self, _: &[KeyStats<'_>]) {}
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

/// The chunks of the batch being read, folded by whichever thread finds work: the next
/// chunk of the file in order (one thread at a time), then any chunk folded in order into
/// what does not depend on order (several threads at once). A chunk past a damaged value
/// is folded neither way.
struct Sequencer<'data, 'f, F> {
    ready: Mutex<Ready<'data>>,
    fold: &'f F,
}

struct Ready<'data> {
    /// The batch's chunks read and not yet folded in order, by index.
    chunks: Vec<Option<Kept<'data>>>,
    /// The chunk to fold in order next (past the end once a damaged one is folded).
    next: usize,
    /// A thread is folding in order.
    folding: bool,
    /// Chunks folded in order, not yet folded into what does not depend on order.
    cleared: Vec<Kept<'data>>,
    /// Statistics folded both ways, for chunks to come to read into.
    free: Vec<Kept<'data>>,
}

impl<'data, 'f, F: Aggregating> Sequencer<'data, 'f, F> {
    fn new(fold: &'f F) -> Self {
        Sequencer {
            ready: Mutex::new(Ready {
                chunks: Vec::new(),
                next: 0,
                folding: false,
                cleared: Vec::new(),
                free: Vec::new(),
            }),
            fold,
        }
    }

    fn ready(&self) -> std::sync::MutexGuard<'_, Ready<'data>> {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A batch of `chunks` chunks is about to be read.
    fn start_batch(&self, chunks: usize) {
        let mut ready = self.ready();
        debug_assert!(ready.chunks.iter().all(Option::is_none));
        debug_assert!(ready.cleared.is_empty());
        ready.chunks.clear();
        ready.chunks.resize_with(chunks, || None);
        ready.next = 0;
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

    /// Chunk `index` has been read: folds what is ready, the next chunk in order first,
    /// until nothing is (a thread folding in order leaves what it folds to be folded
    /// out of order, by itself or another thread, before the batch ends).
    fn offer(&self, index: usize, kept: Kept<'data>) {
        let mut ready = self.ready();
        ready.chunks[index] = Some(kept);
        loop {
            let at = ready.next;
            let next = match ready.folding {
                true => None,
                false => ready.chunks.get_mut(at).and_then(Option::take),
            };
            if let Some(kept) = next {
                ready.next = if kept.damaged { usize::MAX } else { at + 1 };
                ready.folding = true;
                drop(ready);
                self.fold.in_order(kept.read());
                ready = self.ready();
                ready.folding = false;
                ready.cleared.push(kept);
            } else if let Some(kept) = ready.cleared.pop() {
                drop(ready);
                self.fold.any_order(kept.read());
                ready = self.ready();
                ready.free.push(kept);
            } else {
                return;
            }
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
    let mut used_memory = UsedMemorySums::default();
    let (crc, value_damage) =
        dump.with_checksum(options.verify_checksum, || -> io::Result<Option<Damage>> {
            // Three batches in flight: `ahead` being scanned, `current` folded on the pool,
            // and the one folded before it, whose chunk values (`to_hand`) go to `consume`
            // (which may write hundreds of megabytes of rows) on the scanning side of the
            // join.
            let mut ahead = Vec::with_capacity(BATCH);
            let mut current = Vec::with_capacity(BATCH);
            let mut handover = Handover::default();
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
                        sequencer.start_batch(current.len().div_ceil(CHUNK));
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
                                sequencer.offer(index, kept);
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
            let damage = handover.hand_over(to_hand, &mut consume);
            used_memory = handover.used_memory;
            damage
        });
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
