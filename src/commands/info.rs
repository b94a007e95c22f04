//! `rdbscope info`: what the dump says about itself.

use super::{keep_verdict, Outcome};
use crate::cli::{InfoArgs, InfoFormat};
use crate::input::Dump;
use crate::memory::{db_overhead, DumpMemory};
use crate::pipeline::{self, Folding, Options};
use crate::report::info;
use crate::scan::ChecksumVerdict;
use std::io::{self, Write};

pub fn run(args: &InfoArgs, mut out: impl Write) -> io::Result<Outcome> {
    let dump = Dump::open(&args.dump)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", args.dump.display())))?;
    let name = dump.display_name();
    let options = Options {
        verify_checksum: true,
        overrides: args.common.overrides()?,
        ..Options::default()
    };
    let mut keys_bytes = 0u64;
    let pass = pipeline::run(
        &dump,
        &options,
        Folding::new(
            || 0u64,
            |sum, key| {
                *sum += key.memory_bytes
                    + crate::memory::sizeof_rounding(
                        key.summary.memory.alloc,
                        key.redis_type,
                        key.encoding,
                        key.elements.unwrap_or(0),
                        key.summary.list_nodes,
                        key.expiry_ms.is_some(),
                    )
            },
        ),
        |sum| {
            keys_bytes += sum;
            Ok(())
        },
    )?;
    let info = pass.info;
    let memory = DumpMemory {
        keys_bytes,
        overhead_bytes: info
            .dbs
            .values()
            .map(|d| db_overhead(d.keys, d.expires))
            .sum(),
        used_mem_aux: info.aux_value("used-mem").and_then(|v| v.parse().ok()),
    };
    let mut outcome = Outcome::Clean;
    if let Some(damage) = &pass.damage {
        eprintln!("rdbscope: {}", damage.describe(&name));
        outcome = Outcome::Failed;
    }
    if matches!(info.checksum, ChecksumVerdict::Mismatch { .. }) {
        eprintln!("rdbscope: {name}: CRC64 mismatch");
        outcome = Outcome::Failed;
    }
    let written = match args.format {
        InfoFormat::Text => out.write_all(info::text(&name, &info, &memory).as_bytes()),
        InfoFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &info::json(&name, &info, &memory))
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        }
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}
