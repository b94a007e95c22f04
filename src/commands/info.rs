//! `rdbscope info`: what the dump says about itself.

use super::{describe_damage, Outcome};
use crate::cli::{InfoArgs, InfoFormat};
use crate::input::Dump;
use crate::report::info;
use crate::scan::{scan, ChecksumVerdict, Stop};
use std::io::{self, Write};

pub fn run(args: &InfoArgs, mut out: impl Write) -> io::Result<Outcome> {
    let dump = Dump::open(&args.dump)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", args.dump.display())))?;
    let name = dump.display_name();
    let (info, stop) = scan(&dump, true, |_, _| Ok(()));
    match args.format {
        InfoFormat::Text => out.write_all(info::text(&name, &info).as_bytes())?,
        InfoFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &info::json(&name, &info))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    let mut outcome = Outcome::Clean;
    if let Some(Stop::Corrupt(e)) = &stop {
        eprintln!("rdbscope: {}", describe_damage(&name, e, &info));
        outcome = Outcome::Failed;
    }
    if matches!(info.checksum, ChecksumVerdict::Mismatch { .. }) {
        eprintln!("rdbscope: {name}: CRC64 mismatch");
        outcome = Outcome::Failed;
    }
    Ok(outcome)
}
