//! `rdbscope info`: what each dump says about itself.

use super::{keep_verdict, Outcome};
use crate::model::key_stats::KeyStats;
use crate::model::memory::{db_overhead, server_baseline, DumpMemory};
use crate::model::server::ProfileOverrides;
use crate::pass::allocator_detection::{reconsider, AllocatorChoice};
use crate::pass::analysis::PreparedDump;
use crate::pass::input::{self, source_name, Dump, SpoolOptions};
use crate::pass::pipeline::{self, Folding, NoFold, Options};
use crate::pass::progress::{Progress, ProgressMode};
use crate::pass::scan::{ChecksumVerdict, DumpInfo};
use crate::report::info;
use serde_json::Value;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What `info` prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoFormat {
    Table,
    Json,
}

/// What `info` was asked for: no filters, whole dumps.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    pub format: InfoFormat,
    pub spool: SpoolOptions,
    /// The server model asked for.
    pub overrides: ProfileOverrides,
    /// Whether the CRC64 trailer is checked (`--skip-checksum` not given).
    pub verify_checksum: bool,
    pub progress: ProgressMode,
}

/// Every dump in turn: text blocks one after the other, or JSON (one object, an array of
/// them for several dumps). A dump that cannot be opened is named on stderr and skipped.
pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let mut failed = false;
    let mut text = String::new();
    let mut docs = Vec::new();
    let progress = Progress::for_files(args.progress, &args.dumps);
    for path in &args.dumps {
        let described = describe(path, args, &progress);
        let (name, info, memory, allocator, damage) = match described {
            Ok(described) => described,
            Err(e) if args.dumps.len() > 1 => {
                progress.error(&format!("rdbscope: {e}"));
                failed = true;
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(damage) = damage {
            progress.error(&format!("rdbscope: {name}: {damage}"));
            failed = true;
        }
        if matches!(info.checksum, ChecksumVerdict::Mismatch { .. }) {
            progress.error(&format!("rdbscope: {name}: CRC64 mismatch"));
            failed = true;
        }
        match args.format {
            InfoFormat::Table => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&info::text(&name, &info, &memory, &allocator));
            }
            InfoFormat::Json => docs.push(info::json(&name, &info, &memory, &allocator)),
        }
    }
    progress.finish();
    let written = match args.format {
        InfoFormat::Table => out.write_all(text.as_bytes()),
        InfoFormat::Json => {
            let doc = match docs.len() {
                1 => docs.pop().unwrap_or_default(),
                _ => Value::Array(docs),
            };
            serde_json::to_writer_pretty(&mut out, &doc)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        }
    };
    keep_verdict(
        written.and_then(|()| out.flush()),
        Outcome::of(failed, false),
    )
}

/// One pass over the dump at `path`: its name, what it says, the model's memory, and the
/// damage that stopped the pass if any.
fn describe(
    path: &Path,
    args: &Config,
    progress: &Progress,
) -> io::Result<(
    String,
    DumpInfo,
    DumpMemory,
    AllocatorChoice,
    Option<String>,
)> {
    let dump = Dump::open(path, &args.spool, progress)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", source_name(path))))?;
    let name = dump.display_name();
    progress.set_message(&name);
    // Sizes the run's bar could not know: standard input's, a live payload's.
    if input::read_once(path) {
        progress.add_length(dump.len() as u64);
    }
    let options = Options {
        verify_checksum: args.verify_checksum,
        overrides: args.overrides.clone(),
        without_slots: true,
        ..Options::default()
    };
    let user_overrides = options.overrides.clone();
    // Keys are read under the profile of the dump's aux fields, so when there are keys
    // there is a profile; the per-db tables and the baseline are modelled with it too.
    let PreparedDump {
        name,
        dump,
        allocator,
        options,
        profile,
        ..
    } = PreparedDump::new(dump, name, &options, None)?;
    let mut keys_read = 0u64;
    let pass = pipeline::run(
        &dump,
        &options,
        Folding {
            init: || 0u64,
            fold: |read: &mut u64, key: &KeyStats<'_>| *read += key.serialized_bytes,
        },
        &NoFold,
        |read| {
            keys_read += read;
            progress.advance(read);
            Ok(())
        },
    )?;
    // What the keys do not account for: header, aux fields, opcodes.
    progress.advance((dump.len() as u64).saturating_sub(keys_read));
    // The whole dump's sums price every candidate: the whole dump's choice needs no
    // second pass.
    let whole = match (&pass.damage, profile) {
        (None, Some(p)) => reconsider(
            &allocator,
            &pass.info,
            &p,
            &pass.used_memory,
            &user_overrides,
        ),
        _ => None,
    };
    let totals = pass.used_memory.totals();
    let (allocator, keys_bytes) = match whole {
        Some(mut whole) => {
            let depth = whole.list_compress_depth.map(|d| d.depth);
            let bytes = totals.used(whole.allocator, depth);
            whole.first_guess = None;
            (whole, bytes)
        }
        None => {
            let bytes = totals.used(allocator.allocator, None);
            (allocator, bytes)
        }
    };
    let info = pass.info;
    let memory = DumpMemory {
        keys_bytes,
        overhead_bytes: profile.map_or(0, |p| {
            info.dbs
                .values()
                .map(|d| db_overhead(&p, d.keys, d.expires))
                .sum()
        }),
        baseline_bytes: profile.map_or(0, |p| server_baseline(&p)),
        used_mem_aux: info.aux_value("used-mem").and_then(|v| v.parse().ok()),
    };
    Ok((
        name,
        info,
        memory,
        allocator,
        pass.damage.map(|d| d.describe()),
    ))
}
