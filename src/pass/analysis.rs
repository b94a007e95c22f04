//! The one driver every command's dumps go through: for each dump in turn, open it, check
//! the user's overrides against it, choose its allocator, read its profile, run the
//! pipeline, and report damage and a checksum mismatch; several dumps (one per cluster
//! shard) give one result with a per-file summary.
//!
//! Each dump's keys flow two ways, into aggregates and into rows. Each pool thread has
//! its own aggregator (a [`ThreadLocal`]) and takes the keys of the chunks it reads into
//! what merges the same whatever the order; what depends on the order keys come in (the
//! heavy-hitter tables of `aggregates::groups`, whose light rows depend on the order they met
//! the keys in; lists in file order) each chunk of the file fills on its own, and the
//! dump's one aggregator merges those parts as the chunks come back in file order. After
//! the pass the threads' aggregators are merged into the dump's with `+=`, and the dumps'
//! in command-line order, so every aggregate is a function of the dumps alone, the same
//! whatever `--threads` is and however the pool schedules. The chunk values the pipeline
//! hands back in file order carry the parts, the rows for the run's [`RowSink`] and the
//! bytes done for the progress bar.

use crate::model::key_stats::KeyStats;
use crate::model::server::ServerProfile;
use crate::pass::allocator_detection::{choose_allocator, reconsider, AllocatorChoice, ChosenBy};
use crate::pass::filter::KeyFilter;
use crate::pass::fold::{Aggregator, Source};
use crate::pass::input::{self, Compression, Dump};
use crate::pass::pipeline::{self, Aggregating, Folding, NoFold, Options};
use crate::pass::progress::Progress;
use crate::pass::row_sink::{NoRows, RowBuild, RowSink};
use crate::pass::scan::{check_overrides, ChecksumVerdict, DumpScan};
use crate::pass::totals::Totals;
use crate::rdb::header::Header;
use std::cell::{RefCell, RefMut};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use thread_local::ThreadLocal;

/// One dump of the run, as the per-file breakdown shows it; summary.json's mergeable
/// state holds it whole (`rdbscope merge`).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FileOutcome {
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
    /// Whether the dump says it is a cluster node's: `Some(true)` when it holds SLOT_INFO
    /// records, `None` when it does not say.
    #[serde(default)]
    pub cluster: Option<bool>,
    /// The allocator the whole dump settled on after overturning the first guess its rows
    /// went out under: the run written again under it (rows in files can be) prices them
    /// right.
    #[serde(skip)]
    pub settle: Option<AllocatorChoice>,
}

impl FileOutcome {
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
    pub files: Vec<FileOutcome>,
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
        self.files.iter().any(FileOutcome::partial)
    }

    /// Each dump's allocator as its whole content settled it ([`Options::settled`]), when
    /// some dump's rows went out under a first guess the whole dump overturned.
    pub fn settled(&self) -> Option<Vec<Option<AllocatorChoice>>> {
        let settled: Vec<_> = self.files.iter().map(|f| f.settle.clone()).collect();
        settled.iter().any(Option::is_some).then_some(settled)
    }

    /// Says, for each dump whose rows went out under a first guess its whole content
    /// overturned, what was written and the flags that settle it (rows that cannot be
    /// written again: standard output).
    pub fn warn_unsettled(&self, progress: &Progress) {
        for file in self.files.iter().filter(|f| f.settle.is_some()) {
            if let Some(allocator) = &file.allocator {
                progress.error(&format!(
                    "rdbscope: {}: the rows were priced under the guess from the first keys, {}",
                    file.name,
                    allocator.describe()
                ));
            }
        }
    }
}

/// A dump ready for its pass, from one read of what it says before its first key (its
/// preamble: header and aux fields): the user's overrides checked against it, its allocator
/// chosen, its `ctime` and server profile.
pub struct PreparedDump {
    pub name: String,
    pub dump: Dump,
    pub allocator: AllocatorChoice,
    /// The run's options, with the allocator chosen for this dump.
    pub options: Options,
    /// The `ctime` aux field: the one time the keys' TTLs are measured from.
    pub ctime: Option<i64>,
    /// The server profile of the preamble, as the dump says it (`None`: no header).
    pub dumped: Option<ServerProfile>,
    /// That profile with the overrides (and the allocator chosen).
    pub profile: Option<ServerProfile>,
}

impl PreparedDump {
    /// Prepares `dump` (named `name` in messages) for a pass with `options`; an error when
    /// `--redis-version` names a server that does not write the dump's RDB version.
    /// `settled`: the allocator a pass over the whole dump chose, in place of a guess.
    pub fn new(
        dump: Dump,
        name: String,
        options: &Options,
        settled: Option<&AllocatorChoice>,
    ) -> io::Result<Self> {
        let mut scan = DumpScan::of(&dump);
        scan.read_preamble();
        let (ctime, dumped) = (scan.info().ctime_s(), scan.info().profile());
        check_overrides(scan.info(), &options.overrides)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {e}")))?;
        let allocator = match settled {
            Some(choice) => choice.clone(),
            // The sample continues the scan from the first key.
            None => choose_allocator(scan, dump.len() as u64, &options.overrides),
        };
        let options = Options {
            overrides: allocator.apply_to(&options.overrides),
            ..options.clone()
        };
        let profile = dumped.map(|p| options.overrides.apply(p));
        Ok(PreparedDump {
            name,
            dump,
            allocator,
            options,
            ctime,
            dumped,
            profile,
        })
    }
}

/// What a pool task hands back, in file order.
struct Chunk<R> {
    rows: Option<R>,
    bytes: u64,
    /// Keys that passed the filters.
    keys: u64,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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

/// What one dump's keys are folded into beside the rows.
trait DumpFold: Aggregating {
    /// What the folding leaves once the pass is over.
    type Folded;
    /// Whether keys are folded at all (a pass that folded keys past a damaged value is
    /// folded again up to it).
    const FOLDS: bool;
    /// The threads' shares merged into the one in file order.
    fn merged(self) -> Self::Folded;
    /// The totals the per-file summary shows.
    fn totals(folded: &Self::Folded) -> Totals;
}

/// A dump's aggregator taking the chunks' parts in file order, and one a pool thread
/// takes keys into in any order, built by `make` and merged after the pass.
struct PerDump<A: Aggregator, M> {
    /// Taken by one thread at a time, one batch at a time: never contended.
    ordered: Mutex<A>,
    locals: ThreadLocal<RefCell<A>>,
    make: M,
    /// Parts merged and emptied, for the chunks to come: as many as chunks were in flight
    /// at once (two batches' worth).
    spare_parts: Mutex<Vec<A::InOrder>>,
}

impl<A: Aggregator, M: Fn() -> A + Sync> PerDump<A, M> {
    fn new(make: M) -> Self {
        PerDump {
            ordered: Mutex::new(make()),
            locals: ThreadLocal::new(),
            make,
            spare_parts: Mutex::new(Vec::new()),
        }
    }
}

impl<A: Aggregator, M: Fn() -> A + Sync> Aggregating for PerDump<A, M> {
    type Local<'a>
        = RefMut<'a, A>
    where
        Self: 'a;
    type Part = A::InOrder;

    /// Borrowed for a whole chunk: a chunk's fold calls nothing that lets the pool run
    /// other work on its thread, so no second borrow of the same aggregator can begin.
    fn local(&self) -> RefMut<'_, A> {
        self.locals
            .get_or(|| RefCell::new((self.make)()))
            .borrow_mut()
    }

    fn part(&self, local: &mut RefMut<'_, A>) -> A::InOrder {
        let spare = self
            .spare_parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        spare.unwrap_or_else(|| local.in_order())
    }

    #[inline]
    fn add(local: &mut RefMut<'_, A>, part: &mut A::InOrder, key: &KeyStats<'_>) {
        local.add(part, key);
    }

    fn merge(&self, mut part: A::InOrder) {
        self.ordered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .merge_in_order(&mut part);
        self.spare_parts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(part);
    }
}

impl<A: Aggregator, M: Fn() -> A + Sync> DumpFold for PerDump<A, M> {
    type Folded = A;
    const FOLDS: bool = true;

    fn merged(self) -> A {
        let mut aggregate = self
            .ordered
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        for local in self.locals {
            aggregate += local.into_inner();
        }
        aggregate.trim();
        aggregate
    }

    fn totals(folded: &A) -> Totals {
        folded.totals().clone()
    }
}

/// What a dump's pass folded, with the number of keys that passed the filters; `None`
/// when the dump could not be opened.
type DumpFolded<F> = Option<(<F as DumpFold>::Folded, u64)>;

/// Nothing folded: a pass that only writes rows (`keys`).
impl DumpFold for NoFold {
    type Folded = ();
    const FOLDS: bool = false;

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
        |source| PerDump::new(move || make(source)),
        |aggregate| merged += aggregate,
    )?;
    Ok(Analysis { files, merged })
}

/// When the dumps hold keys and none passed the filters: says so, naming the filters,
/// lest an empty report read as an empty dump.
fn unmatched(files: &[FileOutcome], passed: u64, filter: &KeyFilter) -> Option<String> {
    let read: u64 = files.iter().map(|f| f.keys_scanned).sum();
    (read > 0 && passed == 0 && !filter.is_empty()).then(|| {
        format!(
            "{} matched no key (of {} read)",
            filter.flags.join(" "),
            crate::text::words::plural(read, "key")
        )
    })
}

/// The rows of every key of `dumps` that passes the filters, to `rows` in file order;
/// nothing aggregated. Damage and checksum failures are reported as by [`analyze`].
pub fn write_rows(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    rows: &mut impl RowSink,
) -> io::Result<Analysis<()>> {
    let files = each_dump(dumps, options, progress, Some(rows), |_| NoFold, |_| ())?;
    Ok(Analysis { files, merged: () })
}

/// Why the dump at `path` cannot be read, found before any pass: it cannot be opened, or
/// its first bytes are neither an RDB header nor a compressed container (whose content is
/// checked as it is spooled, as standard input's and a live source's are).
fn unreadable(path: &Path) -> Option<String> {
    if input::read_once(path) {
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
/// are named first and reported as such. Filters that let no key through are warned of.
fn each_dump<F: DumpFold, S: RowSink>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    mut rows: Option<&mut S>,
    fold: impl Fn(Source) -> F,
    mut merge: impl FnMut(F::Folded),
) -> io::Result<Vec<FileOutcome>> {
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
    let mut passed = 0;
    for (index, path) in dumps.iter().enumerate() {
        if let Some(why) = &unreadable[index] {
            files.push(FileOutcome {
                error: Some(why.clone()),
                ..empty_outcome(path.display().to_string())
            });
            continue;
        }
        let (summary, folded) =
            pass_one(index, path, options, progress, rows.as_deref_mut(), &fold)?;
        if let Some((folded, keys)) = folded {
            merge(folded);
            passed += keys;
        }
        files.push(summary);
    }
    progress.finish();
    if let Some(warning) = unmatched(&files, passed, &options.filter) {
        eprintln!("rdbscope: warning: {warning}");
    }
    Ok(files)
}

/// One dump: opened and prepared, its keys folded by what `fold` makes and their rows
/// written to `rows`, what stopped the pass and a checksum mismatch reported (after the
/// rows before them). The fold, with the number of keys that passed the filters, is `None`
/// when the dump could not be opened.
fn pass_one<F: DumpFold, S: RowSink>(
    index: usize,
    path: &Path,
    options: &Options,
    progress: &Progress,
    mut rows: Option<&mut S>,
    fold: &impl Fn(Source) -> F,
) -> io::Result<(FileOutcome, DumpFolded<F>)> {
    let name = input::source_name(path);
    progress.set_message(&name);
    let dump = match Dump::open(path, &options.spool, progress) {
        Ok(d) => d,
        Err(e) if !options.allow_partial => {
            return Err(io::Error::new(
                e.kind(),
                format!("{name}: cannot open: {e}"),
            ));
        }
        Err(e) => {
            progress.error(&format!("rdbscope: {name}: {e}"));
            let summary = FileOutcome {
                error: Some(format!("cannot open: {e}")),
                ..empty_outcome(name)
            };
            return Ok((summary, None));
        }
    };
    if input::read_once(path) {
        progress.add_length(dump.len() as u64);
    }
    let user_overrides = &options.overrides;
    let settled = options.settled.get(index).and_then(Option::as_ref);
    let prepared = PreparedDump::new(dump, name, options, settled)?;
    let (dump, options) = (&prepared.dump, &prepared.options);
    let mut source = Source {
        file: index,
        reference_ms: prepared
            .ctime
            .map_or_else(now_ms, |s| s.saturating_mul(1000)),
        profile: prepared.profile,
    };
    let writes_rows = rows.is_some();
    let written = rows
        .as_deref_mut()
        .map(|sinks| (sinks.builder(&prepared.name), sinks));
    let (mut pass, mut folded, mut passed) =
        fold_pass(dump, options, Some(progress), written, fold(source))?;
    if let Some(damage) = pass.damage.as_ref().filter(|d| F::FOLDS && d.folded_past) {
        // The value found damaged was analysed beside keys after it, which the threads'
        // aggregators took in although no row was written for them: fold again, up to
        // the damage.
        let up_to_damage = Options {
            verify_checksum: false,
            key_limit: Some(damage.keys_read),
            ..options.clone()
        };
        let no_rows = None::<(S::Builder, &mut S)>;
        folded = fold_pass(dump, &up_to_damage, None, no_rows, fold(source))?.1;
    }
    let (mut allocator, mut settle) = (prepared.allocator.clone(), None);
    let mut options = options.clone();
    let whole = match (&pass.damage, prepared.profile) {
        (None, Some(profile)) if settled.is_none() => reconsider(
            &prepared.allocator,
            &pass.info,
            &profile,
            &pass.used_memory,
            user_overrides,
        ),
        _ => None,
    };
    if let Some(mut whole) = whole {
        match (whole.first_guess.as_mut(), writes_rows) {
            (Some(first), false) => {
                // The whole dump ruled the first guess out, and no row was written under
                // it: the keys again, priced under the whole dump's choice.
                first.reread = true;
                options.overrides = whole.apply_to(user_overrides);
                source.profile = prepared.dumped.map(|p| options.overrides.apply(p));
                let no_rows = None::<(S::Builder, &mut S)>;
                (pass, folded, passed) = fold_pass(dump, &options, None, no_rows, fold(source))?;
                allocator = whole;
            }
            (Some(_), true) => {
                // Rows went out priced under the guess: the figures stay the guess's, and
                // say what the whole dump points to, unless the run is written again
                // under it (`settle`).
                let flags = whole.apply_to(user_overrides).flags().join(" ");
                allocator.chosen_by = ChosenBy::Ambiguous;
                allocator.note = Some(format!(
                    "the whole dump points to {}, rerun with {flags}",
                    whole.describe()
                ));
                if let Some(first) = whole.first_guess.as_mut() {
                    first.reread = true;
                }
                settle = Some(whole);
            }
            (None, _) => allocator = whole,
        }
    }
    let options = &options;
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
    let summary = FileOutcome {
        magic: info.header.map(|h| h.magic()),
        rdb_version: info.header.map(|h| h.version),
        server_version: info
            .aux_value("redis-ver")
            .or_else(|| info.aux_value("valkey-ver")),
        ctime: prepared.ctime,
        used_mem: info
            .aux_value("used-mem")
            .and_then(|v| v.trim().parse().ok()),
        allocator: Some(allocator),
        profile: source.profile,
        version_given: options.overrides.version.is_some(),
        config: options.overrides.config.clone(),
        file_bytes: info.file_bytes,
        keys_scanned: info.keys,
        reference_ms: source.reference_ms,
        checksum: info.checksum,
        error,
        totals: F::totals(&folded),
        cluster: (info.slot_infos > 0).then_some(true),
        name: prepared.name,
        settle,
    };
    Ok((summary, Some((folded, passed))))
}

/// One pass over `dump` folding every key into `fold`; rows (built by the builder) go to
/// the sink and progress to `progress` when given.
fn fold_pass<F: DumpFold, S: RowSink>(
    dump: &Dump,
    options: &Options,
    progress: Option<&Progress>,
    rows: Option<(S::Builder, &mut S)>,
    fold: F,
) -> io::Result<(pipeline::Pass, F::Folded, u64)> {
    let (builder, mut sinks) = rows.unzip();
    let (mut done, mut passed) = (0u64, 0u64);
    let pass = pipeline::run(
        dump,
        options,
        Folding {
            init: || Chunk {
                rows: builder.as_ref().map(RowBuild::start),
                bytes: 0,
                keys: 0,
            },
            fold: |chunk: &mut Chunk<_>, key: &KeyStats<'_>| {
                chunk.bytes += key.serialized_bytes;
                chunk.keys += 1;
                if let (Some(builder), Some(rows)) = (&builder, &mut chunk.rows) {
                    builder.push(rows, key);
                }
            },
        },
        &fold,
        |chunk| {
            if let Some(progress) = progress {
                progress.advance(chunk.bytes);
            }
            done += chunk.bytes;
            passed += chunk.keys;
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
    Ok((pass, fold.merged(), passed))
}

fn empty_outcome(name: String) -> FileOutcome {
    FileOutcome {
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
        cluster: None,
        settle: None,
    }
}
