//! `rdbscope keys`: one row per key, streamed in file order, to stdout or to `-o FILE`.

use super::replace::replace_files;
use super::Outcome;
use crate::allocator_detection::choose_allocator;
use crate::input::Dump;
use crate::pipeline::{self, Folding, Options};
use crate::progress::{Progress, ProgressMode};
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::{RowBatch, RowSinks};
use crate::scan::{check_overrides, ChecksumVerdict};
use std::io::{self, Write};
use std::path::PathBuf;

/// What `keys` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    /// Text rows in this format, or Parquet when `None` (to `output` only).
    pub rows: Option<RowFormat>,
    /// The file written instead of standard output.
    pub output: Option<PathBuf>,
    pub options: Options,
    pub progress: ProgressMode,
}

pub fn run(args: &Config, mut out: impl Write + Send) -> io::Result<Outcome> {
    match &args.output {
        None => write_rows(args, args.rows, &mut out),
        Some(path) => replace_files(std::slice::from_ref(path), |files| {
            let mut file = files.into_iter().next().expect("one path, one file");
            let outcome = write_rows(args, args.rows, &mut file)?;
            file.flush()?;
            Ok(outcome)
        }),
    }
}

/// Streams the rows of every dump to `out`: text rows when `text` is given, else Parquet.
fn write_rows(
    args: &Config,
    text: Option<RowFormat>,
    out: &mut (dyn Write + Send),
) -> io::Result<Outcome> {
    let options = &args.options;
    let several = args.dumps.len() > 1;
    let mut sinks = match text {
        Some(format) => RowSinks::begin(Some((format, out)), None, several)?,
        None => RowSinks::begin(None, Some(out), several)?,
    };
    let mut outcome = Outcome::Clean;
    let progress = Progress::for_files(args.progress, &args.dumps);
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
