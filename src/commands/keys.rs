//! `rdbscope keys`: one row per key, streamed in file order, to stdout or to `-o FILE`.

use super::replace::replace_files;
use super::Outcome;
use crate::allocator_detection::choose_allocator;
use crate::cli::KeysArgs;
use crate::input::Dump;
use crate::pipeline::{self, Folding, Options};
use crate::progress::Progress;
use crate::report::key_rows::{RowBatch, RowSinks};
use crate::report::keys::{KeysFormat, RowFormat};
use crate::scan::{check_overrides, ChecksumVerdict};
use std::io::{self, Write};

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

pub fn run(args: &KeysArgs, mut out: impl Write + Send) -> io::Result<Outcome> {
    let text = RowFormat::new(args.format, args.compat);
    if args.format == KeysFormat::Parquet {
        if args.compat.is_some() {
            return Err(invalid(
                "--compat rdbtools writes CSV; it does not go with --format parquet",
            ));
        }
        if args.output.is_none() {
            return Err(invalid(
                "--format parquet needs -o FILE: a Parquet file ends with its index, so it is \
                 not written to standard output",
            ));
        }
    }
    match &args.output {
        None => write_rows(args, text, &mut out),
        Some(path) => replace_files(std::slice::from_ref(path), |files| {
            let mut file = files.into_iter().next().expect("one path, one file");
            let outcome = write_rows(args, text, &mut file)?;
            file.flush()?;
            Ok(outcome)
        }),
    }
}

/// Streams the rows of every dump to `out`: text rows when `text` is given, else Parquet.
fn write_rows(
    args: &KeysArgs,
    text: Option<RowFormat>,
    out: &mut (dyn Write + Send),
) -> io::Result<Outcome> {
    let options = args.common.pipeline_options(!args.run.skip_checksum)?;
    let several = args.dumps.len() > 1;
    let mut sinks = match text {
        Some(format) => RowSinks::begin(Some((format, out)), None, several)?,
        None => RowSinks::begin(None, Some(out), several)?,
    };
    let mut outcome = Outcome::Clean;
    let progress = Progress::for_files(args.run.progress_mode(), &args.dumps);
    for path in &args.dumps {
        let dump = match Dump::open(path, &options.spool) {
            Ok(d) => d,
            Err(e) => {
                progress.error(&format!("rdbscope: {}: {e}", path.display()));
                outcome = Outcome::Failed;
                continue;
            }
        };
        let name = dump.display_name();
        progress.set_message(&name);
        check_overrides(&dump, &options.overrides)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{name}: {e}")))?;
        let options = Options {
            overrides: choose_allocator(&dump, &options.overrides).apply_to(&options.overrides),
            ..options.clone()
        };
        let rows = sinks.builder(&name);
        let pass = pipeline::run(
            &dump,
            &options,
            Folding::new(
                || (rows.start(), 0u64),
                |(batch, bytes): &mut (RowBatch, u64), key| {
                    rows.push(batch, key);
                    *bytes += key.serialized_bytes;
                },
            ),
            |(batch, bytes)| {
                progress.advance(bytes);
                sinks.batch(batch)
            },
        )?;
        if let Some(damage) = &pass.damage {
            sinks.flush()?;
            progress.error(&format!("rdbscope: {name}: {}", damage.describe()));
            outcome = Outcome::Failed;
        }
        if let ChecksumVerdict::Mismatch { stored, computed } = pass.info.checksum {
            sinks.flush()?;
            progress.error(&format!(
                "rdbscope: {name}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}"
            ));
            outcome = Outcome::Failed;
        }
    }
    progress.finish();
    sinks.finish()?;
    Ok(outcome)
}
