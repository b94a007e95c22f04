//! `rdbscope keys`: one row per key, streamed in file order.

use super::Outcome;
use crate::cli::KeysArgs;
use crate::input::Dump;
use crate::pipeline::{self, Options};
use crate::report::keys::RowFormat;
use crate::scan::ChecksumVerdict;
use std::io::{self, Write};

pub fn run(args: &KeysArgs, mut out: impl Write) -> io::Result<Outcome> {
    let options = Options {
        verify_checksum: !args.skip_checksum,
        overrides: args.common.overrides()?,
        filter: args.common.filter()?,
    };
    let format = RowFormat::new(args.format, args.compat);
    out.write_all(format.header().as_bytes())?;
    let mut outcome = Outcome::Clean;
    for path in &args.dumps {
        let dump = match Dump::open(path) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("rdbscope: {}: {e}", path.display());
                outcome = Outcome::Failed;
                continue;
            }
        };
        let name = dump.display_name();
        let pass = pipeline::run(
            &dump,
            &options,
            || Vec::with_capacity(64 * 1024),
            |rows, key| format.render(key, rows),
            |rows| out.write_all(&rows),
        )?;
        if let Some(damage) = &pass.damage {
            out.flush()?;
            eprintln!("rdbscope: {}", damage.describe(&name));
            outcome = Outcome::Failed;
        }
        if let ChecksumVerdict::Mismatch { stored, computed } = pass.info.checksum {
            out.flush()?;
            eprintln!("rdbscope: {name}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}");
            outcome = Outcome::Failed;
        }
    }
    out.flush()?;
    Ok(outcome)
}
