//! The one driver every command's dumps go through: for each dump in turn, open it, check
//! the user's overrides against it, choose its allocator, read its profile, run the
//! pipeline, and report damage and a checksum mismatch; several dumps (one per cluster
//! shard) give one result with a per-file summary.
//!
//! Each dump's keys flow two ways. Into aggregates: each of the pipeline's lanes folds the
//! keys of its fixed ranges of the dump, in file order, into its own aggregator, so an
//! aggregator's tables fill once per lane rather than once per chunk of keys, and nothing
//! is merged on the scanning thread while the scan runs. After the pass the lanes'
//! aggregators are merged with `+=` in lane order: which keys each one saw, and in what
//! order, depends on the dump alone, so the heavy-hitter tables (`analyze::groups`), whose
//! light rows depend on how the keys were split, come out the same whatever `--threads` is
//! (see `pipeline`, "Lanes"). Ordered, as rows: the chunk values the pipeline hands back in
//! file order carry only what must stay ordered, the rows for the run's [`RowSink`] and the
//! bytes done for the progress bar.

use crate::model::key_stats::KeyStats;
use crate::model::server::{ProfileOverrides, ServerProfile};
use crate::pass::allocator_detection::{choose_allocator, AllocatorChoice};
use crate::pass::fold::{Aggregator, Source};
use crate::pass::input::{Compression, Dump};
use crate::pass::pipeline::{self, Folding, Options};
use crate::pass::progress::Progress;
use crate::pass::row_sink::{NoRows, RowBuild, RowSink};
use crate::pass::scan::{check_overrides, ChecksumVerdict, DumpScan};
use crate::pass::totals::Totals;
use crate::rdb::header::Header;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One dump of the run, as the per-file breakdown shows it; summary.json's mergeable
/// state holds it whole (`rdbscope merge`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FileSummary {
    pub name: String,
    /// `REDIS0011`, `VALKEY080`; `None` when the header could not be read.
    pub magic: Option<String>,
    pub rdb_version: Option<u32>,
    /// The `redis-ver` (or `valkey-ver`) aux field.
    pub server_version: Option<String>,
    /// The `ctime` aux field: Unix seconds when the dump was written.
    pub ctime: Option<i64>,
    /// The `used-mem` aux field: the server's `used_memory` when it wrote the dump.
    pub used_mem: Option<u64>,
    /// The allocator the memory model used, and how it was chosen (`None` when the dump
    /// could not be opened).
    pub allocator: Option<AllocatorChoice>,
    /// The server the memory model stood for: family, version, encoding thresholds (with
    /// the overrides applied; `None` when the header could not be read).
    pub profile: Option<ServerProfile>,
    /// What the user said over the dump: `--redis-version`, and the configuration
    /// directives (`--config`, `--config-set`) in the order applied.
    pub version_given: bool,
    pub config: Vec<(String, String)>,
    pub file_bytes: u64,
    /// Keys read, before filters.
    pub keys_scanned: u64,
    /// Unix ms TTLs were measured from: `ctime`, or the time of the analysis without one.
    pub reference_ms: i64,
    pub checksum: ChecksumVerdict,
    /// Why the dump could not be opened or read whole.
    pub error: Option<String>,
    /// Totals of the keys that passed the filters.
    pub totals: Totals,
}

impl FileSummary {
    /// The report covers only part of this dump.
    pub fn partial(&self) -> bool {
        self.error.is_some()
    }

    /// Read whole, but the content does not match its checksum.
    pub fn checksum_mismatch(&self) -> bool {
        matches!(self.checksum, ChecksumVerdict::Mismatch { .. })
    }
}

/// Per-file summaries and the aggregate over all dumps.
pub struct Analysis<A> {
    pub files: Vec<FileSummary>,
    pub merged: A,
}

impl<A> Analysis<A> {
    /// Some dump was not read whole or failed its checksum: the exit code says so.
    pub fn failed(&self) -> bool {
        self.files
            .iter()
            .any(|f| f.partial() || f.checksum_mismatch())
    }

    /// The report covers only part of the dumps.
    pub fn partial(&self) -> bool {
        self.files.iter().any(FileSummary::partial)
    }
}

/// A dump ready for its pass: the user's overrides checked against what it says before its
/// first key, its allocator chosen, its `ctime` and server profile read from its aux fields.
pub struct PreparedDump {
    pub name: String,
    pub dump: Dump,
    pub allocator: AllocatorChoice,
    /// The run's options, with the allocator chosen for this dump.
    pub options: Options,
    /// The `ctime` aux field.
    pub ctime: Option<i64>,
    /// The server profile of the aux fields before the first key, with the overrides.
    pub profile: Option<ServerProfile>,
}

impl PreparedDump {
    /// Prepares `dump` (named `name` in messages) for a pass with `options`; an error when
    /// `--redis-version` names a server that does not write the dump's RDB version.
    pub fn new(dump: Dump, name: String, options: &Options) -> io::Result<Self> {
        check_overrides(&dump, &options.overrides)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {e}")))?;
        let allocator = choose_allocator(&dump, &options.overrides);
        let options = Options {
            overrides: allocator.apply_to(&options.overrides),
            ..options.clone()
        };
        let (ctime, profile) = dump_context(&dump, &options.overrides);
        Ok(PreparedDump {
            name,
            dump,
            allocator,
            options,
            ctime,
            profile,
        })
    }
}

/// What a pool task hands back, in file order.
struct Chunk<R> {
    rows: Option<R>,
    bytes: u64,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The `ctime` aux field and the server profile (with `overrides`), read from the aux
/// fields before the first key.
fn dump_context(dump: &Dump, overrides: &ProfileOverrides) -> (Option<i64>, Option<ServerProfile>) {
    let mut scan = DumpScan::of(dump);
    scan.read_preamble();
    let ctime = scan
        .info()
        .aux_value("ctime")
        .and_then(|t| t.trim().parse().ok());
    (ctime, scan.profile().map(|p| overrides.apply(p)))
}

/// The empty aggregate dumps (or runs) are merged into with `+=`, in order: it measures
/// TTLs from now until the first dump with keys brings its own reference.
pub fn merge_target<A>(make: impl Fn(Source) -> A) -> A {
    make(Source {
        file: 0,
        reference_ms: now_ms(),
        profile: None,
    })
}

/// What the pool folds one dump's keys into beside the rows.
trait DumpFold: Sync {
    /// What the folding leaves once the pass is over.
    type Folded;
    /// Whether keys are folded at all (a pass that folded keys past a damaged value is
    /// folded again up to it).
    const FOLDS: bool;
    /// What a lane folds into, taken once for each batch's range of the lane.
    type Local<'a>
    where
        Self: 'a;
    fn local(&self, lane: usize) -> Self::Local<'_>;
    fn add(local: &mut Self::Local<'_>, key: &KeyStats<'_>);
    fn prefetch(local: &Self::Local<'_>, key: &KeyStats<'_>);
    /// The threads' shares merged.
    fn merged(self) -> Self::Folded;
    /// The totals the per-file summary shows.
    fn totals(folded: &Self::Folded) -> Totals;
}

/// An aggregator per lane of the pipeline, built by `make` when the lane gets its first
/// keys, and merged in lane order after the pass.
struct PerLane<A: Send, M> {
    lanes: [Mutex<Option<A>>; pipeline::LANES],
    make: M,
}

impl<A: Aggregator, M: Fn() -> A + Sync> PerLane<A, M> {
    fn new(make: M) -> Self {
        PerLane {
            lanes: std::array::from_fn(|_| Mutex::new(None)),
            make,
        }
    }
}

impl<A: Aggregator, M: Fn() -> A + Sync> DumpFold for PerLane<A, M> {
    type Folded = A;
    const FOLDS: bool = true;
    type Local<'a>
        = MutexGuard<'a, Option<A>>
    where
        Self: 'a;

    /// Locked for a batch's range of the lane: one task a batch folds a lane, and the
    /// batches are folded one after another, so the lock is never contended.
    fn local(&self, lane: usize) -> MutexGuard<'_, Option<A>> {
        let mut local = self.lanes[lane]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        local.get_or_insert_with(&self.make);
        local
    }

    #[inline]
    fn add(local: &mut MutexGuard<'_, Option<A>>, key: &KeyStats<'_>) {
        if let Some(aggregate) = local.as_mut() {
            aggregate.add(key);
        }
    }

    #[inline]
    fn prefetch(local: &MutexGuard<'_, Option<A>>, key: &KeyStats<'_>) {
        if let Some(aggregate) = local.as_ref() {
            aggregate.prefetch(key);
        }
    }

    fn merged(self) -> A {
        let mut aggregate = (self.make)();
        for lane in self.lanes {
            if let Some(lane) = lane.into_inner().unwrap_or_else(PoisonError::into_inner) {
                aggregate += lane;
            }
        }
        aggregate
    }

    fn totals(folded: &A) -> Totals {
        folded.totals().clone()
    }
}

/// Nothing folded: a pass that only writes rows (`keys`).
struct NoFold;

impl DumpFold for NoFold {
    type Folded = ();
    const FOLDS: bool = false;
    type Local<'a> = ();

    fn local(&self, _: usize) {}

    #[inline]
    fn add((): &mut (), _: &KeyStats<'_>) {}

    #[inline]
    fn prefetch((): &(), _: &KeyStats<'_>) {}

    fn merged(self) {}

    fn totals((): &()) -> Totals {
        Totals::default()
    }
}

/// Analyses `dumps` in order, each on the whole pool. `make` builds an empty aggregator
/// for keys from `source`. Damage and checksum failures are reported on stderr and in the
/// summaries; a dump that cannot be opened is skipped with its error recorded.
pub fn analyze<A: Aggregator>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    make: impl Fn(Source) -> A + Sync,
) -> io::Result<Analysis<A>> {
    analyze_writing(dumps, options, progress, None::<&mut NoRows>, make)
}

/// [`analyze`], the rows of the keys that pass the filters written to `rows` in file order
/// in the same pass.
pub fn analyze_writing<A: Aggregator>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    rows: Option<&mut impl RowSink>,
    make: impl Fn(Source) -> A + Sync,
) -> io::Result<Analysis<A>> {
    let mut merged = merge_target(&make);
    let make = &make;
    let files = each_dump(
        dumps,
        options,
        progress,
        rows,
        |source| PerLane::new(move || make(source)),
        |aggregate| merged += aggregate,
    )?;
    Ok(Analysis { files, merged })
}

/// The rows of every key of `dumps` that passes the filters, to `rows` in file order;
/// nothing aggregated. Damage and checksum failures are reported as by [`analyze`].
pub fn write_rows(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    rows: &mut impl RowSink,
) -> io::Result<Analysis<()>> {
    let files = each_dump(dumps, options, progress, Some(rows), |_| NoFold, |()| ())?;
    Ok(Analysis { files, merged: () })
}

/// Why the dump at `path` cannot be read, found before any pass: it cannot be opened, or
/// its first bytes are neither an RDB header nor a compressed container (whose content is
/// checked as it is spooled, as standard input's is).
fn unreadable(path: &Path) -> Option<String> {
    if path == Path::new("-") {
        return None;
    }
    let mut head = Vec::with_capacity(9);
    if let Err(e) = File::open(path).and_then(|f| f.take(9).read_to_end(&mut head)) {
        return Some(format!("cannot open: {e}"));
    }
    if Compression::starts(&head) {
        return None;
    }
    Header::parse(&head).err().map(|e| {
        let e = e.to_string();
        match e.starts_with("not an RDB file") {
            true => e,
            false => format!("not an RDB file: {e}"),
        }
    })
}

/// Why each of `dumps` cannot be read, in order (`None`: it can be tried). Unless
/// `options.allow_partial`, a dump that cannot be read is the run's error, found before
/// anything is analysed or written: a report missing a shard is no report of the fleet.
pub fn check_dumps(dumps: &[PathBuf], options: &Options) -> io::Result<Vec<Option<String>>> {
    let why: Vec<Option<String>> = dumps.iter().map(|p| unreadable(p)).collect();
    let refused: Vec<String> = dumps
        .iter()
        .zip(&why)
        .filter_map(|(p, w)| Some(format!("{}: {}", p.display(), w.as_ref()?)))
        .collect();
    if refused.is_empty() || options.allow_partial {
        return Ok(why);
    }
    let others = if dumps.len() > refused.len() {
        " (--allow-partial reports the other dumps)"
    } else {
        ""
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}{others}", refused.join("; ")),
    ))
}

/// Every dump through [`pass_one`] in order; `merge` takes what each one folded. The
/// dumps that cannot be read refuse the run ([`check_dumps`]), or with `--allow-partial`
/// are named first and reported as such.
fn each_dump<F: DumpFold, S: RowSink>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    mut rows: Option<&mut S>,
    fold: impl Fn(Source) -> F,
    mut merge: impl FnMut(F::Folded),
) -> io::Result<Vec<FileSummary>> {
    let unreadable = check_dumps(dumps, options)?;
    for (path, why) in dumps.iter().zip(&unreadable) {
        if let Some(why) = why {
            progress.error(&format!(
                "rdbscope: {}: {why}; the report covers the other dumps (--allow-partial)",
                path.display()
            ));
        }
    }
    let mut files = Vec::with_capacity(dumps.len());
    for (index, path) in dumps.iter().enumerate() {
        if let Some(why) = &unreadable[index] {
            files.push(FileSummary {
                error: Some(why.clone()),
                ..empty_summary(path.display().to_string())
            });
            continue;
        }
        let (summary, folded) =
            pass_one(index, path, options, progress, rows.as_deref_mut(), &fold)?;
        if let Some(folded) = folded {
            merge(folded);
        }
        files.push(summary);
    }
    progress.finish();
    Ok(files)
}

/// One dump: opened and prepared, its keys folded by what `fold` makes and their rows
/// written to `rows`, what stopped the pass and a checksum mismatch reported (after the
/// rows before them). The fold is `None` when the dump could not be opened.
fn pass_one<F: DumpFold, S: RowSink>(
    index: usize,
    path: &Path,
    options: &Options,
    progress: &Progress,
    mut rows: Option<&mut S>,
    fold: &impl Fn(Source) -> F,
) -> io::Result<(FileSummary, Option<F::Folded>)> {
    let name = path.display().to_string();
    progress.set_message(&name);
    let dump = match Dump::open(path, &options.spool) {
        Ok(d) => d,
        Err(e) if !options.allow_partial => {
            return Err(io::Error::new(
                e.kind(),
                format!("{name}: cannot open: {e}"),
            ));
        }
        Err(e) => {
            progress.error(&format!("rdbscope: {name}: {e}"));
            let summary = FileSummary {
                error: Some(format!("cannot open: {e}")),
                ..empty_summary(name)
            };
            return Ok((summary, None));
        }
    };
    if path == Path::new("-") {
        progress.add_length(dump.len() as u64);
    }
    let prepared = PreparedDump::new(dump, name, options)?;
    let (dump, options) = (&prepared.dump, &prepared.options);
    let source = Source {
        file: index,
        reference_ms: prepared
            .ctime
            .map_or_else(now_ms, |s| s.saturating_mul(1000)),
        profile: prepared.profile,
    };
    let written = rows
        .as_deref_mut()
        .map(|sinks| (sinks.builder(&prepared.name), sinks));
    let (pass, mut folded) = fold_pass(dump, options, Some(progress), written, fold(source))?;
    if let Some(damage) = pass.damage.as_ref().filter(|d| F::FOLDS && d.folded_past) {
        // The value found damaged was analysed beside keys after it, which the aggregates
        // took in although no row was written for them: fold again, up to the damage.
        let up_to_damage = Options {
            verify_checksum: false,
            key_limit: Some(damage.keys_read),
            ..options.clone()
        };
        let no_rows = None::<(S::Builder, &mut S)>;
        folded = fold_pass(dump, &up_to_damage, None, no_rows, fold(source))?.1;
    }
    let info = pass.info;
    let mismatch = match info.checksum {
        ChecksumVerdict::Mismatch { stored, computed } => Some((stored, computed)),
        _ => None,
    };
    if let (true, Some(sinks)) = (pass.damage.is_some() || mismatch.is_some(), rows) {
        sinks.flush()?;
    }
    let error = pass.damage.map(|d| {
        let described = d.describe();
        progress.error(&format!("rdbscope: {}: {described}", prepared.name));
        described
    });
    if let Some((stored, computed)) = mismatch {
        progress.error(&format!(
            "rdbscope: {}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}",
            prepared.name
        ));
    }
    let summary = FileSummary {
        magic: info.header.map(|h| h.magic()),
        rdb_version: info.header.map(|h| h.version),
        server_version: info
            .aux_value("redis-ver")
            .or_else(|| info.aux_value("valkey-ver")),
        ctime: prepared.ctime,
        used_mem: info
            .aux_value("used-mem")
            .and_then(|v| v.trim().parse().ok()),
        allocator: Some(prepared.allocator),
        profile: prepared.profile,
        version_given: options.overrides.version.is_some(),
        config: options.overrides.config.clone(),
        file_bytes: info.file_bytes,
        keys_scanned: info.keys,
        reference_ms: source.reference_ms,
        checksum: info.checksum,
        error,
        totals: F::totals(&folded),
        name: prepared.name,
    };
    Ok((summary, Some(folded)))
}

/// One pass over `dump` folding every key into `fold`; rows (built by the builder) go to
/// the sink and progress to `progress` when given.
fn fold_pass<F: DumpFold, S: RowSink>(
    dump: &Dump,
    options: &Options,
    progress: Option<&Progress>,
    rows: Option<(S::Builder, &mut S)>,
    fold: F,
) -> io::Result<(pipeline::Pass, F::Folded)> {
    let (builder, mut sinks) = rows.unzip();
    let mut done = 0u64;
    let pass = pipeline::run(
        dump,
        options,
        Folding {
            init: || Chunk {
                rows: builder.as_ref().map(RowBuild::start),
                bytes: 0,
            },
            local: |lane| fold.local(lane),
            fold: |chunk: &mut Chunk<_>, local: &mut F::Local<'_>, key: &KeyStats<'_>| {
                chunk.bytes += key.serialized_bytes;
                F::add(local, key);
                if let (Some(builder), Some(rows)) = (&builder, &mut chunk.rows) {
                    builder.push(rows, key);
                }
            },
            prefetch: |local: &F::Local<'_>, key: &KeyStats<'_>| F::prefetch(local, key),
        },
        |chunk| {
            if let Some(progress) = progress {
                progress.advance(chunk.bytes);
            }
            done += chunk.bytes;
            match (sinks.as_mut(), chunk.rows) {
                (Some(sinks), Some(rows)) => sinks.batch(rows),
                _ => Ok(()),
            }
        },
    )?;
    if let Some(progress) = progress {
        // What the keys do not account for: header, aux fields, opcodes, skipped keys.
        progress.advance((dump.len() as u64).saturating_sub(done));
    }
    Ok((pass, fold.merged()))
}

fn empty_summary(name: String) -> FileSummary {
    FileSummary {
        name,
        magic: None,
        rdb_version: None,
        server_version: None,
        ctime: None,
        used_mem: None,
        allocator: None,
        profile: None,
        version_given: false,
        config: Vec::new(),
        file_bytes: 0,
        keys_scanned: 0,
        reference_ms: 0,
        checksum: ChecksumVerdict::NotChecked,
        error: None,
        totals: Totals::default(),
    }
}
