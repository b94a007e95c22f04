//! `--allocator auto` and `list-compress-depth`: what a dump does not record about the
//! server that wrote it, told from its `used-mem` aux field (the server's `used_memory` when
//! it saved).
//!
//! A dump does not name its server's allocator, and the builds people run differ: Redis's
//! bundled jemalloc (8-byte quantum), a distribution's system jemalloc (16-byte quantum)
//! and glibc malloc round the same allocations differently, by several percent of a
//! dataset of small keys. Nor does it say whether the server held its lists' inner
//! quicklist nodes LZF-compressed (`list-compress-depth`): a node stored LZF was either
//! held so or compressed by the save (see [`crate::model::facts::ListCompression`]), and
//! lists held compressed take a fraction of the memory. Each candidate (allocator, and
//! depth 0 to 3 when some list has nodes the server may have compressed) models the keys'
//! `used_memory`, plus the per-db tables and the server's own baseline; the one nearest to
//! `used-mem` is chosen.
//!
//! Two steps, one pass. Before the pass a first guess from the first keys (see
//! [`SAMPLE_KEYS`], [`SAMPLE_BYTES`]; all of them in a smaller dump), the rest of the file
//! estimated from the sample's later half: the keys are priced under it. The pass sums
//! every key's allocations by request size, which price its `used_memory` under every
//! candidate at the end ([`UsedMemorySums`]), and
//! [`reconsider`] decides again from the whole dump: the first guess stands unless the
//! whole dump rules it out (then the pass is run again under the whole dump's choice, and
//! the choice says so).
//!
//! The decision states its margin against the uncertainty of what the dump cannot tell
//! ([`Uncertainty`]): `used-mem` may lie above a right candidate's model by the server's
//! own memory beyond its measured baseline (latency histograms, ~25 KB for each command the
//! server has run, and client buffers), the replication backlog a server that has had
//! replicas holds (the `repl-offset` aux field says whether it may have one) and the
//! model's tolerance, below it by the tolerance alone. The margin is how much more of
//! `used-mem` the runner-up leaves outside that window than the choice. `detected` when the
//! whole dump's best candidate lies inside it and every rival outside; by more than the
//! window's width when the evidence is a sample or no candidate fits; otherwise
//! `ambiguous`, and what was assumed: the first guess, then official builds' jemalloc
//! (depth 0: compression off) when they fit as well, and the flag that settles it.

use crate::model::allocator::Allocator;
use crate::model::calibration::{UsedMemorySums, UsedMemoryTotals, DEPTH_CANDIDATES};
use crate::model::key_stats::KeyStats;
use crate::model::memory::{db_overhead, server_baseline};
use crate::model::server::{AllocatorSetting, ProfileOverrides, ServerProfile};
use crate::pass::scan::{DumpInfo, DumpScan};
use crate::rdb::{KeyRecord, Scratch};
use crate::text::words::plural;
use std::collections::BTreeMap;

/// The sample: the first keys of the dump, at most this many ...
pub const SAMPLE_KEYS: usize = 16_384;
/// ... spanning at most this many bytes of the file.
pub const SAMPLE_BYTES: u64 = 32 << 20;
/// A key of the sample's later half holding more than 1/this of its memory is no
/// sample of the rest of the file (see [`Sample`]).
const OUTLIER_SHARE: u64 = 64;

/// What the dump cannot tell, in bytes of `used_memory`: the spread of the server's
/// baseline across versions and builds ...
const BASELINE_SPREAD: u64 = 64 << 10;
/// ... the server's own allocations since it started: latency histograms (~28 KB each on
/// jemalloc, one per command run, while `latency-tracking` is on) and client buffers,
/// taken as ten commands' worth ...
const SERVER_EXTRAS: u64 = 256 << 10;
/// ... a replication backlog, of `repl-backlog-size` (1 MB by default) at most, when the
/// `repl-offset` aux field shows the server has fed one ...
const DEFAULT_BACKLOG: u64 = 1 << 20;
/// ... and the model's tolerance on a dataset's `used_memory`, 0.5 %.
const MODEL_TOLERANCE: f64 = 0.005;

/// One candidate's modelled `used_memory` against the dump's `used-mem`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub allocator: Allocator,
    /// `None` when the depth is configured or makes no difference.
    #[serde(default)]
    pub list_compress_depth: Option<u64>,
    /// Keys (the whole dump's, or the sample and the estimate for the rest of the file),
    /// per-db tables and the server's baseline.
    pub modelled_bytes: u64,
    /// (modelled − used-mem) / used-mem, in percent.
    pub residual_percent: f64,
}

/// How a setting the dump does not record was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChosenBy {
    /// Named: `--allocator NAME` (or `--malloc-quantum`), `--config-set`.
    Option,
    /// From `used-mem`, by a margin that clears the uncertainty.
    Detected,
    /// `used-mem` could not tell (or the dump has none): assumed. (Runs before this name
    /// called it `fallback`.)
    #[serde(alias = "fallback")]
    Ambiguous,
}

impl ChosenBy {
    pub fn name(self) -> &'static str {
        match self {
            ChosenBy::Option => "option",
            ChosenBy::Detected => "detected",
            ChosenBy::Ambiguous => "ambiguous",
        }
    }
}

/// `list-compress-depth` as the evidence chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DepthChoice {
    pub depth: u64,
    pub chosen_by: ChosenBy,
    /// How much further from `used-mem` the best other depth is.
    pub margin_bytes: u64,
}

/// The first guess the whole dump overturned (the pass was run again when `reread`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FirstGuess {
    pub allocator: Allocator,
    pub list_compress_depth: Option<u64>,
    /// The keys it was made from.
    pub sampled_keys: u64,
    pub reread: bool,
}

/// The allocator (and `list-compress-depth`) a dump's memory is modelled with, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AllocatorChoice {
    pub allocator: Allocator,
    pub chosen_by: ChosenBy,
    /// `None` when configured, or when no list holds a node the server may have compressed.
    #[serde(default)]
    pub list_compress_depth: Option<DepthChoice>,
    /// The candidates, nearest to `used-mem` first (empty when given or without `used-mem`).
    pub candidates: Vec<Candidate>,
    /// How much further from `used-mem` the best candidate with another allocator is.
    #[serde(default)]
    pub margin_bytes: Option<u64>,
    /// What the dump cannot tell (see [`Uncertainty`]).
    #[serde(default)]
    pub uncertainty_bytes: Option<u64>,
    /// Keys the decision modelled, and whether they were all of the dump's.
    pub sampled_keys: u64,
    pub whole_dump: bool,
    /// Set when the whole dump overturned the guess from the first keys.
    #[serde(default)]
    pub first_guess: Option<FirstGuess>,
    /// What was assumed and why.
    pub note: Option<String>,
}

impl AllocatorChoice {
    /// The allocator the user named.
    pub fn given(allocator: Allocator) -> Self {
        AllocatorChoice {
            allocator,
            chosen_by: ChosenBy::Option,
            list_compress_depth: None,
            candidates: Vec::new(),
            margin_bytes: None,
            uncertainty_bytes: None,
            sampled_keys: 0,
            whole_dump: false,
            first_guess: None,
            note: None,
        }
    }

    /// `overrides` with this choice in place of `auto` (and of an unset depth).
    pub fn apply_to(&self, overrides: &ProfileOverrides) -> ProfileOverrides {
        ProfileOverrides {
            allocator: AllocatorSetting::Fixed(self.allocator),
            calibrated_compress_depth: self.list_compress_depth.map(|d| d.depth),
            ..overrides.clone()
        }
    }

    /// The depth the keys were priced at, when chosen here.
    fn depth(&self) -> Option<u64> {
        self.list_compress_depth.map(|d| d.depth)
    }

    /// One line for people: the choice, how it was made, its margin, each allocator's
    /// residual, and what was assumed.
    pub fn describe(&self) -> String {
        let mut s = format!("{} ({}", self.allocator.name(), self.chosen_by.name());
        if let (Some(margin), Some(uncertainty)) = (self.margin_bytes, self.uncertainty_bytes) {
            s.push_str(&format!(
                ": the runner-up leaves {} more of used-mem unexplained, beyond a window of {} \
                 for what the dump cannot tell",
                mb(margin),
                mb(uncertainty)
            ));
        }
        if !self.candidates.is_empty() {
            // Each allocator at the chosen depth.
            let residuals: Vec<String> = self
                .candidates
                .iter()
                .filter(|c| c.list_compress_depth == self.depth())
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
        if let Some(d) = self.list_compress_depth {
            s.push_str(&format!(
                ", list-compress-depth {} ({})",
                d.depth,
                d.chosen_by.name()
            ));
        }
        if let Some(first) = &self.first_guess {
            s.push_str(&format!(
                "; the whole dump overturned the guess from its first {} keys ({}{}){}",
                first.sampled_keys,
                first.allocator.name(),
                first
                    .list_compress_depth
                    .map_or(String::new(), |d| format!(", depth {d}")),
                if first.reread {
                    ", read again"
                } else {
                    ", rows written under the guess"
                }
            ));
        }
        if let Some(note) = &self.note {
            s.push_str(&format!(": {note}"));
        }
        s
    }
}

/// Bytes as MB with one decimal, for the one-line description.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// What the dump says about its server's memory beside its keys: `used-mem`, the per-db
/// tables and baseline the profile models, and the replication backlog it may hold.
struct Evidence {
    sums: UsedMemoryTotals,
    fixed: u64,
    used_mem: u64,
    backlog: u64,
    whole: bool,
}

/// The aux fields the decision reads: `used-mem`, and `repl-offset` (a server's master
/// offset moves only while it feeds a replication backlog).
#[derive(Clone, Copy)]
struct AuxMemory {
    used_mem: u64,
    repl_offset: u64,
}

impl AuxMemory {
    fn of(info: &DumpInfo) -> Option<AuxMemory> {
        let number = |name: &str| {
            info.aux_value(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some(AuxMemory {
            used_mem: number("used-mem").filter(|&u| u > 0)?,
            repl_offset: number("repl-offset").unwrap_or(0),
        })
    }
}

impl Evidence {
    /// From the aux fields and the db counts `dbs` (keys, expires), under `profile`.
    fn new(
        aux: AuxMemory,
        dbs: impl Iterator<Item = (u64, u64)>,
        profile: &ServerProfile,
        sums: UsedMemoryTotals,
        whole: bool,
    ) -> Evidence {
        let tables: u64 = dbs
            .map(|(keys, expires)| db_overhead(profile, keys, expires))
            .sum();
        Evidence {
            sums,
            fixed: tables + server_baseline(profile),
            used_mem: aux.used_mem,
            backlog: aux.repl_offset.min(DEFAULT_BACKLOG),
            whole,
        }
    }
}

/// What the dump cannot tell about `used_memory`: how far `used-mem` may lie above a
/// right candidate's model (the server's own memory beyond its baseline, a backlog, the
/// model's tolerance) or below it (the tolerance alone: the server's extras only add).
struct Uncertainty {
    below: u64,
    above: u64,
}

impl Uncertainty {
    fn new(evidence: &Evidence, dataset: u64) -> Self {
        let tolerance = BASELINE_SPREAD + (dataset as f64 * MODEL_TOLERANCE).round() as u64;
        Uncertainty {
            below: tolerance,
            above: tolerance + SERVER_EXTRAS + evidence.backlog,
        }
    }

    fn bytes(&self) -> u64 {
        self.below + self.above
    }

    /// How far `used_mem` lies outside what a model of `modelled` bytes explains.
    fn unexplained(&self, used_mem: u64, modelled: u64) -> u64 {
        if used_mem >= modelled {
            (used_mem - modelled).saturating_sub(self.above)
        } else {
            (modelled - used_mem).saturating_sub(self.below)
        }
    }
}

/// The choice `evidence` supports under `overrides`; when it cannot tell, `prefer` (the
/// first guess), then jemalloc and depth 0, are assumed if they fit about as well.
fn decide(
    evidence: &Evidence,
    overrides: &ProfileOverrides,
    sampled_keys: u64,
    prefer: Option<(Allocator, Option<u64>)>,
) -> AllocatorChoice {
    let allocators: Vec<Allocator> = match overrides.allocator {
        AllocatorSetting::Fixed(a) => vec![a],
        AllocatorSetting::Auto => Allocator::ALL.to_vec(),
    };
    let depths: Vec<Option<u64>> =
        if overrides.compress_depth_given() || !evidence.sums.compressible() {
            vec![None]
        } else {
            (0..DEPTH_CANDIDATES).map(Some).collect()
        };
    let used_mem = evidence.used_mem;
    let mut candidates: Vec<Candidate> = allocators
        .iter()
        .flat_map(|&allocator| {
            depths.iter().map(move |&depth| {
                let modelled = evidence.sums.used(allocator, depth) + evidence.fixed;
                Candidate {
                    allocator,
                    list_compress_depth: depth,
                    modelled_bytes: modelled,
                    residual_percent: (modelled as f64 - used_mem as f64) / used_mem as f64 * 100.0,
                }
            })
        })
        .collect();
    // Candidates by how much of used-mem they leave unexplained, then by how near they
    // come to it less the backlog estimate (a part of used-mem the model does not hold).
    let dataset = candidates
        .iter()
        .map(|c| c.modelled_bytes)
        .min()
        .unwrap_or(0)
        .saturating_sub(evidence.fixed);
    let window = Uncertainty::new(evidence, dataset);
    let uncertainty = window.bytes();
    let expected = used_mem.saturating_sub(evidence.backlog);
    let off = |c: &Candidate| window.unexplained(used_mem, c.modelled_bytes);
    candidates.sort_by_key(|c| (off(c), c.modelled_bytes.abs_diff(expected)));
    let best = candidates[0].clone();
    // A rival is ruled out when it leaves more unexplained than the best: by anything when
    // the best explains used-mem, by more than the uncertainty when it does not either, or
    // when part of the dump was estimated from a sample.
    let needed = |best: &Candidate| {
        if off(best) == 0 && evidence.whole {
            0
        } else {
            uncertainty
        }
    };
    let plausible = |c: &Candidate| off(c) - off(&best) <= needed(&best);
    let rival_margin = |differs: &dyn Fn(&Candidate) -> bool| {
        candidates
            .iter()
            .find(|c| differs(c))
            .map(|c| off(c) - off(&best))
    };
    let allocator_margin = rival_margin(&|c| c.allocator != best.allocator);
    let (allocator, chosen_by) = match (overrides.allocator, allocator_margin) {
        (AllocatorSetting::Fixed(a), _) => (a, ChosenBy::Option),
        (_, Some(m)) if m > needed(&best) => (best.allocator, ChosenBy::Detected),
        _ => {
            let fits = |a: Allocator| candidates.iter().any(|c| c.allocator == a && plausible(c));
            let assumed = prefer
                .map(|p| p.0)
                .filter(|&a| fits(a))
                .or(Some(Allocator::Jemalloc).filter(|&a| fits(a)))
                .unwrap_or(best.allocator);
            (assumed, ChosenBy::Ambiguous)
        }
    };
    // The depth, among the chosen allocator's candidates.
    let list_compress_depth = match depths.as_slice() {
        [None] => None,
        _ => {
            let own: Vec<&Candidate> = candidates
                .iter()
                .filter(|c| c.allocator == allocator)
                .collect();
            let best_depth = own[0];
            let margin = own
                .iter()
                .find(|c| c.list_compress_depth != best_depth.list_compress_depth)
                .map_or(u64::MAX, |c| off(c) - off(best_depth));
            let fits = |d: u64| {
                own.iter().any(|c| {
                    c.list_compress_depth == Some(d)
                        && off(c) - off(best_depth) <= needed(best_depth)
                })
            };
            let (depth, chosen_by) = if margin > needed(best_depth) {
                (best_depth.list_compress_depth, ChosenBy::Detected)
            } else {
                let assumed = prefer
                    .and_then(|p| p.1)
                    .filter(|&d| fits(d))
                    .or(Some(0).filter(|&d| fits(d)))
                    .or(best_depth.list_compress_depth);
                (assumed, ChosenBy::Ambiguous)
            };
            depth.map(|depth| DepthChoice {
                depth,
                chosen_by,
                margin_bytes: margin,
            })
        }
    };
    let note = ambiguity_note(&candidates, allocator, chosen_by, list_compress_depth);
    AllocatorChoice {
        allocator,
        chosen_by,
        list_compress_depth,
        candidates,
        margin_bytes: allocator_margin.filter(|_| chosen_by != ChosenBy::Option),
        uncertainty_bytes: Some(uncertainty),
        sampled_keys,
        whole_dump: evidence.whole,
        first_guess: None,
        note,
    }
}

/// What was assumed, and the flag that settles it, when the evidence could not tell.
fn ambiguity_note(
    candidates: &[Candidate],
    allocator: Allocator,
    chosen_by: ChosenBy,
    depth: Option<DepthChoice>,
) -> Option<String> {
    let mut parts = Vec::new();
    if chosen_by == ChosenBy::Ambiguous {
        let best = candidates.first().map_or(allocator, |c| c.allocator);
        let rival = candidates
            .iter()
            .find(|c| c.allocator != best)
            .map_or("another allocator", |c| c.allocator.name());
        let official = if allocator == Allocator::Jemalloc {
            " (official builds)"
        } else {
            ""
        };
        parts.push(format!(
            "used-mem cannot tell {} from {rival}: {}{official} assumed, --allocator settles it",
            best.name(),
            allocator.name(),
        ));
    }
    if let Some(d) = depth.filter(|d| d.chosen_by == ChosenBy::Ambiguous) {
        let subject = if parts.is_empty() {
            "used-mem cannot tell the list-compress-depth"
        } else {
            "nor the list-compress-depth"
        };
        parts.push(format!(
            "{subject}: {} assumed, --config-set list-compress-depth=N settles it",
            d.depth
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The first keys of the dump `scan` reads, at most [`SAMPLE_KEYS`] spanning at most
/// [`SAMPLE_BYTES`] of the file (all of them in a smaller dump), priced under the profile of
/// the first key, with what they add to `used_memory` under every candidate. A server
/// writes each db's keys in the order of its hash table, which has nothing to do with
/// their names, types or age, so the first keys of a db are a random sample of it. The
/// rest of the file is estimated from the later half of the sample (the keys nearest to
/// it: the db it continues): its sums, keys and expires per byte of file, times the bytes
/// left. A key of that half holding more than 1/[`OUTLIER_SHARE`] of its memory (a 300 KB
/// string among small hashes) is counted once, not scaled: scaled, one such key put a
/// guess 80 % over `used-mem`.
struct Sample {
    sums: UsedMemoryTotals,
    dbs: BTreeMap<u64, (u64, u64)>,
    keys: u64,
    whole: bool,
    profile: ServerProfile,
}

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
    let depth = profile.limits.list_compress_depth;
    let mut scratch = Scratch::default();
    let mut stats = KeyStats::new();
    let tail = records.len() / 2;
    let (mut head_sums, mut tail_sums) = (UsedMemorySums::default(), UsedMemorySums::default());
    let mut dbs: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    // The later half's keys, each with its memory, to tell its outliers.
    let mut tail_memory = Vec::with_capacity(records.len() - tail);
    for (i, record) in records.iter().enumerate() {
        if i == tail {
            head_sums.take(&mut stats.allocations);
        }
        stats.read(record, &profile, &mut scratch).ok()?;
        let sums = if i < tail {
            &mut head_sums
        } else {
            tail_memory.push(stats.memory_bytes);
            &mut tail_sums
        };
        sums.add(&stats, depth);
        let db = dbs.entry(record.db).or_default();
        db.0 += 1;
        db.1 += u64::from(record.expire_ms.is_some());
    }
    tail_sums.take(&mut stats.allocations);
    let outlier = tail_memory.iter().sum::<u64>() / OUTLIER_SHARE;
    let outliers: Vec<&KeyRecord> = records[tail..]
        .iter()
        .zip(&tail_memory)
        .filter(|&(_, &memory)| memory > outlier)
        .map(|(record, _)| record)
        .collect();
    let tail_totals = tail_sums.totals();
    let mut sums = head_sums.totals();
    sums += &tail_totals;
    let last = records.last()?;
    let end = last.offset + last.serialized_bytes;
    // The trailer: the EOF opcode and the checksum.
    let rest = file_bytes.saturating_sub(end).saturating_sub(9);
    if !whole && rest > 0 {
        // What stands for the rest of the file: the later half less its outliers (priced
        // again, few or none).
        let mut outlier_sums = UsedMemorySums::default();
        for record in &outliers {
            stats.read(record, &profile, &mut scratch).ok()?;
            outlier_sums.add(&stats, depth);
        }
        outlier_sums.take(&mut stats.allocations);
        let mut standing = tail_totals;
        standing -= &outlier_sums.totals();
        let outlier_bytes: u64 = outliers.iter().map(|r| r.serialized_bytes).sum();
        let tail_bytes = (end - records[tail].offset).saturating_sub(outlier_bytes);
        let factor = rest as f64 / tail_bytes.max(1) as f64;
        sums += &standing.scaled(factor);
        let expiring = |r: &&KeyRecord| r.expire_ms.is_some();
        let expires = records[tail..].iter().filter(expiring).count()
            - outliers.iter().copied().filter(expiring).count();
        let db = dbs.entry(last.db).or_default();
        db.0 += (standing.keys as f64 * factor).round() as u64;
        db.1 += (expires as f64 * factor).round() as u64;
    }
    Some(Sample {
        sums,
        dbs,
        keys: records.len() as u64,
        whole,
        profile,
    })
}

/// Nothing to go by: jemalloc (and no compression) assumed, with why.
fn assumed(why: &str) -> AllocatorChoice {
    AllocatorChoice {
        chosen_by: ChosenBy::Ambiguous,
        note: Some(format!(
            "{why}, so jemalloc (official builds' bundled jemalloc) is assumed; name it with \
             --allocator"
        )),
        ..AllocatorChoice::given(Allocator::Jemalloc)
    }
}

/// The first guess under `overrides` for a dump of `file_bytes`, from its first keys,
/// which `scan` (its preamble read) goes on to read (the allocator given and no compressed
/// list: nothing to guess).
pub fn choose_allocator(
    scan: DumpScan<'_>,
    file_bytes: u64,
    overrides: &ProfileOverrides,
) -> AllocatorChoice {
    let Some(aux) = AuxMemory::of(scan.info()) else {
        return match overrides.allocator {
            AllocatorSetting::Fixed(a) => AllocatorChoice::given(a),
            AllocatorSetting::Auto => {
                assumed("the dump has no used-mem aux field to tell the allocator by")
            }
        };
    };
    let Some(sample) = sample(scan, file_bytes, overrides) else {
        return match overrides.allocator {
            AllocatorSetting::Fixed(a) => AllocatorChoice::given(a),
            AllocatorSetting::Auto => assumed("no key small enough to sample"),
        };
    };
    let dbs = sample.dbs.values().copied();
    let evidence = Evidence::new(aux, dbs, &sample.profile, sample.sums, sample.whole);
    let choice = decide(&evidence, overrides, sample.keys, None);
    match overrides.allocator {
        // Only the depth was open: the allocator stays as named.
        AllocatorSetting::Fixed(a) if choice.list_compress_depth.is_none() => {
            AllocatorChoice::given(a)
        }
        _ => choice,
    }
}

/// The choice the whole dump supports, after a pass priced its keys under `first` with
/// `sums` over all of `info`'s keys (`overrides` as the user gave them, `profile` the
/// dump's): `first` stands unless the whole dump rules it out, and then the choice names
/// it in `first_guess`. `None` when there is nothing to reconsider (the allocator and the
/// depth given, no `used-mem`, the pass did not read every key).
pub fn reconsider(
    first: &AllocatorChoice,
    info: &DumpInfo,
    profile: &ServerProfile,
    sums: &UsedMemorySums,
    overrides: &ProfileOverrides,
) -> Option<AllocatorChoice> {
    let open = overrides.allocator == AllocatorSetting::Auto || !overrides.compress_depth_given();
    if !open || sums.keys != info.keys || info.error.is_some() || info.keys == 0 {
        return None;
    }
    let dbs = info.dbs.values().map(|d| (d.keys, d.expires));
    let evidence = Evidence::new(AuxMemory::of(info)?, dbs, profile, sums.totals(), true);
    let prefer = (first.allocator, first.depth());
    let mut whole = decide(&evidence, overrides, info.keys, Some(prefer));
    // Keys priced without a chosen depth were priced at 0 (compression off).
    let priced = |a: Allocator, d: Option<u64>| (a, d.unwrap_or(0));
    if priced(whole.allocator, whole.depth()) != priced(prefer.0, prefer.1) {
        whole.first_guess = Some(FirstGuess {
            allocator: first.allocator,
            list_compress_depth: first.depth(),
            sampled_keys: first.sampled_keys,
            reread: false,
        });
    }
    Some(whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of `data` priced under `allocator`: the candidates' totals.
    fn totals_priced_under(data: &[u8], allocator: Allocator) -> UsedMemoryTotals {
        let mut scan = DumpScan::new(data);
        let (mut sums, mut stats, mut scratch) = (
            UsedMemorySums::default(),
            KeyStats::new(),
            Scratch::default(),
        );
        let mut batch = Vec::new();
        loop {
            let more = scan.next_batch(&mut batch, 256);
            let Some(mut profile) = scan.profile() else {
                break;
            };
            profile.allocator = allocator;
            let depth = profile.limits.list_compress_depth;
            for record in batch.drain(..) {
                if stats.read(&record, &profile, &mut scratch).is_ok() {
                    sums.add(&stats, depth);
                }
            }
            if !more {
                break;
            }
        }
        sums.take(&mut stats.allocations);
        sums.totals()
    }

    /// What a key's model requests is what its figure holds: whichever allocator the keys
    /// were priced under (the first guess), every candidate's total comes out the same.
    #[test]
    fn the_candidates_do_not_depend_on_the_allocator_priced_under() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let mut dumps = 0;
        for dir in ["real", "modern"] {
            for entry in std::fs::read_dir(root.join(dir)).expect("testdata") {
                let path = entry.expect("entry").path();
                if path.extension().is_none_or(|e| e != "rdb") {
                    continue;
                }
                let data = std::fs::read(&path).expect("dump");
                let each = Allocator::ALL.map(|a| totals_priced_under(&data, a));
                for (a, totals) in Allocator::ALL.iter().zip(&each) {
                    for candidate in Allocator::ALL {
                        for depth in (0..DEPTH_CANDIDATES).map(Some).chain([None]) {
                            assert_eq!(
                                totals.used(candidate, depth),
                                each[0].used(candidate, depth),
                                "{}: {} at depth {depth:?}, priced under {} and {}",
                                path.display(),
                                candidate.name(),
                                a.name(),
                                Allocator::ALL[0].name()
                            );
                        }
                    }
                }
                dumps += 1;
            }
        }
        assert!(dumps >= 20, "{dumps} dumps");
    }
}
