//! `rdbscope keys`: one row per key, streamed in file order.

use super::Outcome;
use crate::allocator_detection::choose_allocator;
use crate::cli::KeysArgs;
use crate::input::Dump;
use crate::pipeline::{self, Folding, Options};
use crate::progress::Progress;
use crate::report::keys::RowFormat;
use crate::scan::{check_overrides, ChecksumVerdict};
use std::io::{self, Write};

pub fn run(args: &KeysArgs, mut out: impl Write + Send) -> io::Result<Outcome> {
    let options = args.common.pipeline_options(!args.run.skip_checksum)?;
    let format = RowFormat::new(args.format, args.compat);
    out.write_all(format.header().as_bytes())?;
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
        let pass = pipeline::run(
            &dump,
            &options,
            Folding::new(
                || (Vec::with_capacity(64 * 1024), 0u64),
                |(rows, bytes), key| {
                    format.render(key, rows);
                    *bytes += key.serialized_bytes;
                },
            ),
            |(rows, bytes)| {
                progress.advance(bytes);
                out.write_all(&rows)
            },
        )?;
        if let Some(damage) = &pass.damage {
            out.flush()?;
            progress.error(&format!("rdbscope: {name}: {}", damage.describe()));
            outcome = Outcome::Failed;
        }
        if let ChecksumVerdict::Mismatch { stored, computed } = pass.info.checksum {
            out.flush()?;
            progress.error(&format!(
                "rdbscope: {name}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}"
            ));
            outcome = Outcome::Failed;
        }
    }
    progress.finish();
    out.flush()?;
    Ok(outcome)
}
