//! `--allocator auto`: which allocator built the server that wrote a dump, told from the
//! dump's `used-mem` aux field (the server's `used_memory` when it saved).
//!
//! A dump does not name its server's allocator, and the builds people run differ: Redis's
//! bundled jemalloc (8-byte quantum), a distribution's system jemalloc (16-byte quantum)
//! and glibc malloc round the same allocations differently, by several percent of a
//! dataset of small keys. A bounded sample of the dump's keys (see [`sample`]: the first
//! [`SAMPLE_KEYS`] spanning at most [`SAMPLE_BYTES`], all of them in a smaller dump) is
//! modelled under each candidate, the rest of the file estimated from the sample's later
//! half; each total, plus the per-db tables and the server's own baseline, is compared
//! with `used-mem`. The sample's size does not grow with the dump, so `auto` costs the same
//! few milliseconds on a dump of any size. The closest
//! candidate is chosen when it explains `used-mem` to within [`EXPLAINED`] and leads the
//! next one clearly ([`MIN_LEAD_BYTES`], [`MIN_LEAD`]); otherwise jemalloc, with a note
//! saying why (no `used-mem`, or a dataset too small beside the server's own memory).
//!
//! The server's own memory is its startup baseline ([`server_baseline`]) and what it has
//! allocated since: client buffers, and since Redis 7.0 (and in Valkey) one latency
//! histogram per command it has run (`latency-tracking`, ~25 KB each, freed only by
//! `CONFIG RESETSTAT`). A server that ran 35 distinct commands holds ~0.9 MB of them, more
//! than a small dataset's keys and far more than the few KB by which the allocators' models
//! of it differ; a dump cannot say how many commands its server ran, so a small dump's
//! `used-mem` cannot tell the allocators apart, and no margin on it would be honest.

use crate::model::allocator::Allocator;
use crate::model::key_stats::KeyStats;
use crate::model::memory::{db_overhead, server_baseline};
use crate::model::server::{AllocatorSetting, ProfileOverrides, ServerProfile};
use crate::pass::input::Dump;
use crate::pass::scan::DumpScan;
use crate::rdb::{KeyRecord, Scratch};
use crate::text::words::plural;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// The sample: the first keys of the dump, at most this many ...
pub const SAMPLE_KEYS: usize = 16_384;
/// ... spanning at most this many bytes of the file.
pub const SAMPLE_BYTES: u64 = 32 << 20;
/// The best candidate must land within this share of `used-mem`.
pub const EXPLAINED: f64 = 0.10;
/// ... and be closer than the next one by this many bytes and this share of `used-mem`.
pub const MIN_LEAD_BYTES: u64 = 64 << 10;
pub const MIN_LEAD: f64 = 0.001;

/// One candidate's modelled `used_memory` against the dump's `used-mem`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub allocator: Allocator,
    /// Keys (the sample and the estimate for the rest of the file), per-db tables and the
    /// server's baseline.
    pub modelled_bytes: u64,
    /// (modelled − used-mem) / used-mem, in percent.
    pub residual_percent: f64,
}

/// How the allocator was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChosenBy {
    /// `--allocator NAME` (or `--malloc-quantum`).
    Option,
    /// `--allocator auto`, from `used-mem`.
    Detected,
    /// `--allocator auto` could not tell: jemalloc.
    Fallback,
}

impl ChosenBy {
    pub fn name(self) -> &'static str {
        match self {
            ChosenBy::Option => "option",
            ChosenBy::Detected => "detected",
            ChosenBy::Fallback => "fallback",
        }
    }
}

/// The allocator a dump's memory is modelled with, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AllocatorChoice {
    pub allocator: Allocator,
    pub chosen_by: ChosenBy,
    /// Every candidate's residual, best first (empty when given or without `used-mem`).
    pub candidates: Vec<Candidate>,
    /// Keys the detection modelled, and whether they were all of the dump's.
    pub sampled_keys: u64,
    pub whole_dump: bool,
    /// Why the detection fell back to jemalloc.
    pub note: Option<String>,
}

impl AllocatorChoice {
    /// The allocator the user named.
    pub fn given(allocator: Allocator) -> Self {
        AllocatorChoice {
            allocator,
            chosen_by: ChosenBy::Option,
            candidates: Vec::new(),
            sampled_keys: 0,
            whole_dump: false,
            note: None,
        }
    }

    /// `overrides` with this choice in place of `auto`.
    pub fn apply_to(&self, overrides: &ProfileOverrides) -> ProfileOverrides {
        ProfileOverrides {
            allocator: AllocatorSetting::Fixed(self.allocator),
            ..overrides.clone()
        }
    }

    /// One line for people: the choice, how it was made, each candidate's residual.
    pub fn describe(&self) -> String {
        let mut s = format!("{} ({}", self.allocator.name(), self.chosen_by.name());
        if !self.candidates.is_empty() {
            let residuals: Vec<String> = self
                .candidates
                .iter()
                .map(|c| format!("{} {:+.1}%", c.allocator.name(), c.residual_percent))
                .collect();
            s.push_str(&format!(
                "; model vs used-mem: {}; {} {}",
                residuals.join(", "),
                plural(self.sampled_keys, "key"),
                if self.whole_dump { "(all)" } else { "sampled" }
            ));
        }
        s.push(')');
        if let Some(note) = &self.note {
            s.push_str(&format!(": {note}"));
        }
        s
    }
}

/// What the sample holds: per candidate the modelled bytes of the sampled keys and the
/// estimate for the rest of the file, and per db its keys and expires (the rest of the
/// file counted in the db the sample ended in).
struct Sample {
    keys_bytes: [u64; 3],
    dbs: BTreeMap<u64, (u64, u64)>,
    keys: u64,
    whole: bool,
    profile: ServerProfile,
}

/// Per candidate, the modelled bytes of each sampled key.
fn model_keys(records: &[KeyRecord<'_>], profile: ServerProfile) -> Option<Vec<[u64; 3]>> {
    let per_allocator: Vec<Option<Vec<u64>>> = Allocator::ALL
        .par_iter()
        .map(|&allocator| {
            let profile = ServerProfile {
                allocator,
                ..profile
            };
            let mut scratch = Scratch::default();
            let mut stats = KeyStats::new();
            records
                .iter()
                .map(|record| {
                    stats.read(record, &profile, &mut scratch).ok()?;
                    Some(stats.used_memory_bytes(&profile))
                })
                .collect()
        })
        .collect();
    let mut keys = vec![[0; 3]; records.len()];
    for (i, bytes) in per_allocator.into_iter().enumerate() {
        for (key, b) in keys.iter_mut().zip(bytes?) {
            key[i] = b;
        }
    }
    Some(keys)
}

/// Models the first keys of the dump `scan` reads, at most [`SAMPLE_KEYS`] spanning at
/// most [`SAMPLE_BYTES`] of the file (all of them in a smaller dump), under every candidate
/// allocator, one candidate per pool thread. A server writes each db's keys in the order
/// of its hash table, which has nothing to do with their names, types or age, so the first
/// keys of a db are a random sample of it. The rest of the file is estimated from the
/// later half of the sample (the keys nearest to it: the db it continues): its modelled
/// bytes, keys and expires per byte of file, times the bytes left.
fn sample(mut scan: DumpScan<'_>, file_bytes: u64, overrides: &ProfileOverrides) -> Option<Sample> {
    let mut records = Vec::new();
    let mut batch = Vec::new();
    let mut whole = false;
    let mut profile = None;
    'scan: loop {
        batch.clear();
        let more = scan.next_batch(&mut batch, 1024);
        let Some(batch_profile) = scan.profile().map(|p| overrides.apply(p)) else {
            break;
        };
        for record in batch.drain(..) {
            let first = records
                .first()
                .map_or(record.offset, |r: &KeyRecord| r.offset);
            if records.len() >= SAMPLE_KEYS
                || record.offset + record.serialized_bytes - first > SAMPLE_BYTES
            {
                break 'scan;
            }
            // The profile of the first key stands for the sample (a dump's aux fields
            // come before its keys).
            profile.get_or_insert(batch_profile);
            records.push(record);
        }
        if !more {
            whole = scan.info().error.is_none();
            break;
        }
    }
    let profile = profile?;
    let modelled = model_keys(&records, profile)?;
    let mut keys_bytes = [0u64; 3];
    let mut dbs: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for (r, m) in records.iter().zip(&modelled) {
        let db = dbs.entry(r.db).or_default();
        db.0 += 1;
        db.1 += u64::from(r.expire_ms.is_some());
        for (sum, b) in keys_bytes.iter_mut().zip(m) {
            *sum += b;
        }
    }
    let last = records.last()?;
    let end = last.offset + last.serialized_bytes;
    // The trailer: the EOF opcode and the checksum.
    let rest = file_bytes.saturating_sub(end).saturating_sub(9);
    if !whole && rest > 0 {
        let tail = records.len() / 2;
        let tail_start = records[tail].offset;
        let per_byte = |n: u64| n as f64 / (end - tail_start).max(1) as f64 * rest as f64;
        let scaled = |n: u64| per_byte(n).round() as u64;
        for (i, sum) in keys_bytes.iter_mut().enumerate() {
            *sum += scaled(modelled[tail..].iter().map(|m| m[i]).sum());
        }
        let tail_records = &records[tail..];
        let db = dbs.entry(last.db).or_default();
        db.0 += scaled(tail_records.len() as u64);
        db.1 += scaled(
            tail_records
                .iter()
                .filter(|r| r.expire_ms.is_some())
                .count() as u64,
        );
    }
    Some(Sample {
        keys_bytes,
        dbs,
        keys: records.len() as u64,
        whole,
        profile,
    })
}

/// The allocator for `dump` under `overrides`: the one given, or the detected one.
pub fn choose_allocator(dump: &Dump, overrides: &ProfileOverrides) -> AllocatorChoice {
    if let AllocatorSetting::Fixed(a) = overrides.allocator {
        return AllocatorChoice::given(a);
    }
    let fallback = |note: &str| AllocatorChoice {
        chosen_by: ChosenBy::Fallback,
        note: Some(note.to_string()),
        ..AllocatorChoice::given(Allocator::Jemalloc)
    };
    // A value too long to sample is skipped, its pages handed back as it is.
    let mut scan = DumpScan::of(dump);
    scan.read_preamble();
    let used_mem = scan
        .info()
        .aux_value("used-mem")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&u| u > 0);
    let Some(used_mem) = used_mem else {
        return fallback("the dump has no used-mem aux field to tell the allocator by");
    };
    let Some(sample) = sample(scan, dump.len() as u64, overrides) else {
        return fallback("no key small enough to sample to tell the allocator by");
    };
    let tables: u64 = sample
        .dbs
        .values()
        .map(|&(keys, expires)| db_overhead(&sample.profile, keys, expires))
        .sum();
    let fixed = tables + server_baseline(&sample.profile);
    let mut candidates: Vec<Candidate> = Allocator::ALL
        .into_iter()
        .zip(sample.keys_bytes)
        .map(|(allocator, keys)| {
            let modelled = keys + fixed;
            Candidate {
                allocator,
                modelled_bytes: modelled,
                residual_percent: (modelled as f64 - used_mem as f64) / used_mem as f64 * 100.0,
            }
        })
        .collect();
    let off = |c: &Candidate| c.modelled_bytes.abs_diff(used_mem);
    candidates.sort_by_key(off);
    let (best, next) = (&candidates[0], &candidates[1]);
    let lead = off(next) - off(best);
    let note = if off(best) as f64 > EXPLAINED * used_mem as f64 {
        let spread = candidates
            .iter()
            .map(|c| c.modelled_bytes)
            .max()
            .unwrap_or(0)
            .abs_diff(
                candidates
                    .iter()
                    .map(|c| c.modelled_bytes)
                    .min()
                    .unwrap_or(0),
            );
        Some(format!(
            "no allocator's model comes within {:.0}% of used-mem (the nearest is off by {} of \
             its {} bytes): beside so small a dataset the server's own memory decides used-mem, \
             and it grows by a latency histogram of ~25 KB for each command the server has run \
             and by client buffers, which no dump tells to within the {} bytes the candidates \
             differ by; so jemalloc is assumed; name it with --allocator",
            EXPLAINED * 100.0,
            used_mem.abs_diff(best.modelled_bytes),
            used_mem,
            spread
        ))
    } else if lead < MIN_LEAD_BYTES || (lead as f64) < MIN_LEAD * used_mem as f64 {
        Some(format!(
            "{} and {} model used-mem about equally well (the keys cannot tell them apart), so \
             jemalloc is assumed; name it with --allocator",
            best.allocator.name(),
            next.allocator.name()
        ))
    } else {
        None
    };
    let (allocator, chosen_by) = match note {
        Some(_) => (Allocator::Jemalloc, ChosenBy::Fallback),
        None => (best.allocator, ChosenBy::Detected),
    };
    AllocatorChoice {
        allocator,
        chosen_by,
        sampled_keys: sample.keys,
        whole_dump: sample.whole,
        note,
        candidates,
    }
}
