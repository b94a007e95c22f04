//! `rdbscope info`: what the dump says about itself.

use super::Outcome;
use crate::cli::{InfoArgs, InfoFormat};
use crate::input::Dump;
use crate::pipeline::Damage;
use crate::report::info;
use crate::scan::{ChecksumVerdict, DumpScan};
use std::io::{self, Write};

pub fn run(args: &InfoArgs, mut out: impl Write) -> io::Result<Outcome> {
    let dump = Dump::open(&args.dump)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", args.dump.display())))?;
    let name = dump.display_name();
    let mut scan = DumpScan::new(&dump);
    let (crc, ()) = dump.with_checksum(true, || {
        let mut batch = Vec::with_capacity(4096);
        while scan.next_batch(&mut batch, 4096) {
            if let Some(last) = batch.last() {
                dump.release_before(last.offset);
            }
            batch.clear();
        }
    });
    let info = scan.finish(true, crc);
    match args.format {
        InfoFormat::Text => out.write_all(info::text(&name, &info).as_bytes())?,
        InfoFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &info::json(&name, &info))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    let mut outcome = Outcome::Clean;
    if let Some(error) = &info.error {
        let damage = Damage {
            error: error.clone(),
            last_key: info.last_key.clone(),
            keys_read: info.keys,
        };
        eprintln!("rdbscope: {}", damage.describe(&name));
        outcome = Outcome::Failed;
    }
    if matches!(info.checksum, ChecksumVerdict::Mismatch { .. }) {
        eprintln!("rdbscope: {name}: CRC64 mismatch");
        outcome = Outcome::Failed;
    }
    Ok(outcome)
}
