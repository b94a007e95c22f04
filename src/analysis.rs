//! Analysing dumps into aggregates: one pass per dump on the rayon pool, several dumps
//! (one per cluster shard) merged into one result with a per-file summary.
//!
//! Each pool thread folds the keys it analyses into its own aggregator (a
//! [`ThreadLocal`]), so an aggregator's tables fill once per thread rather than once per
//! chunk of keys, and nothing is merged on the scanning thread while the scan runs. After
//! the pass the per-thread aggregators are merged with `+=`: sums do not depend on which
//! thread saw which key, and every aggregator is built to give the same answer whatever
//! the split (see `analyze::groups` and `analyze::top`). The chunk values the pipeline
//! hands back in file order carry only what must stay ordered: the `keys.csv` rows and the
//! bytes done for the progress bar.

use crate::allocator_detection::{choose_allocator, AllocatorChoice};
use crate::analyze::totals::Totals;
use crate::analyze::{Aggregator, KeyStats, Source};
use crate::input::Dump;
use crate::model::server::{ProfileOverrides, ServerProfile};
use crate::pipeline::{self, Folding, Options};
use crate::progress::Progress;
use crate::report::keys::sinks::{RowBatch, RowBuilder, RowSinks};
use crate::scan::{check_overrides, ChecksumVerdict, DumpScan};
use std::cell::RefCell;
use std::io;
use std::path::{Path, PathBuf};
use thread_local::ThreadLocal;

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

/// What a pool task hands back, in file order.
struct Chunk {
    rows: Option<RowBatch>,
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
    let mut scan = DumpScan::new(dump);
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

/// Analyses `dumps` in order, each on the whole pool. `make` builds an empty aggregator
/// for keys from `source`. Damage and checksum failures are reported on stderr and in the
/// summaries; a dump that cannot be opened is skipped with its error recorded.
pub fn analyze<A: Aggregator>(
    dumps: &[PathBuf],
    options: &Options,
    progress: &Progress,
    mut rows: Option<&mut RowSinks<'_>>,
    make: impl Fn(Source) -> A + Sync,
) -> io::Result<Analysis<A>> {
    let mut merged = merge_target(&make);
    let mut files = Vec::with_capacity(dumps.len());
    for (index, path) in dumps.iter().enumerate() {
        let (summary, aggregate) =
            analyze_one(index, path, options, progress, rows.as_deref_mut(), &make)?;
        if let Some(a) = aggregate {
            merged += a;
        }
        files.push(summary);
    }
    progress.finish();
    Ok(Analysis { files, merged })
}

fn analyze_one<A: Aggregator>(
    index: usize,
    path: &Path,
    options: &Options,
    progress: &Progress,
    rows: Option<&mut RowSinks<'_>>,
    make: &(impl Fn(Source) -> A + Sync),
) -> io::Result<(FileSummary, Option<A>)> {
    let name = path.display().to_string();
    progress.set_message(&name);
    let dump = match Dump::open(path, &options.spool) {
        Ok(d) => d,
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
    check_overrides(&dump, &options.overrides)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {e}")))?;
    let allocator = choose_allocator(&dump, &options.overrides);
    let options = &Options {
        overrides: allocator.apply_to(&options.overrides),
        ..options.clone()
    };
    let (ctime, profile) = dump_context(&dump, &options.overrides);
    let source = Source {
        file: index,
        reference_ms: ctime.map_or_else(now_ms, |s| s.saturating_mul(1000)),
        profile,
    };
    let rows = rows.map(|sinks| (sinks.builder(&name), sinks));
    let (pass, mut aggregate) = fold_pass(&dump, options, Some(progress), rows, || make(source))?;
    if let Some(damage) = pass.damage.as_ref().filter(|d| d.folded_past) {
        // The value found damaged was analysed beside keys after it, which the aggregates
        // took in although no row was written for them: fold again, up to the damage.
        let up_to_damage = Options {
            verify_checksum: false,
            key_limit: Some(damage.keys_read),
            ..options.clone()
        };
        aggregate = fold_pass(&dump, &up_to_damage, None, None, || make(source))?.1;
    }
    let info = pass.info;
    let error = pass.damage.map(|d| {
        let described = d.describe();
        progress.error(&format!("rdbscope: {name}: {described}"));
        described
    });
    if let ChecksumVerdict::Mismatch { stored, computed } = info.checksum {
        progress.error(&format!(
            "rdbscope: {name}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}"
        ));
    }
    let summary = FileSummary {
        magic: info.header.map(|h| h.magic()),
        rdb_version: info.header.map(|h| h.version),
        server_version: info
            .aux_value("redis-ver")
            .or_else(|| info.aux_value("valkey-ver")),
        ctime,
        used_mem: info
            .aux_value("used-mem")
            .and_then(|v| v.trim().parse().ok()),
        allocator: Some(allocator),
        profile,
        version_given: options.overrides.version.is_some(),
        config: options.overrides.config.clone(),
        file_bytes: info.file_bytes,
        keys_scanned: info.keys,
        reference_ms: source.reference_ms,
        checksum: info.checksum,
        error,
        totals: aggregate.totals().clone(),
        name,
    };
    Ok((summary, Some(aggregate)))
}

/// One pass over `dump` folding every key into per-thread aggregators from `make`, merged
/// at the end; rows (built by the builder) go to the sinks and progress to `progress` when
/// given.
fn fold_pass<A: Aggregator>(
    dump: &Dump,
    options: &Options,
    progress: Option<&Progress>,
    rows: Option<(RowBuilder, &mut RowSinks<'_>)>,
    make: impl Fn() -> A + Sync,
) -> io::Result<(pipeline::Pass, A)> {
    let locals: ThreadLocal<RefCell<A>> = ThreadLocal::new();
    let local = || locals.get_or(|| RefCell::new(make()));
    let (builder, mut sinks) = rows.unzip();
    let mut done = 0u64;
    let pass = pipeline::run(
        dump,
        options,
        Folding {
            init: || Chunk {
                rows: builder.as_ref().map(RowBuilder::start),
                bytes: 0,
            },
            fold: |chunk: &mut Chunk, key: &KeyStats<'_>| {
                chunk.bytes += key.serialized_bytes;
                local().borrow_mut().add(key);
                if let (Some(builder), Some(rows)) = (&builder, &mut chunk.rows) {
                    builder.push(rows, key);
                }
            },
            prefetch: |_: &Chunk, key: &KeyStats<'_>| local().borrow().prefetch(key),
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
    let mut aggregate = make();
    for local in locals {
        aggregate += local.into_inner();
    }
    Ok((pass, aggregate))
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
