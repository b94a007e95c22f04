//! `rdbscope keys`: one row per key, streamed in file order.

use super::{describe_damage, Outcome};
use crate::analyze::KeyStats;
use crate::cli::KeysArgs;
use crate::input::Dump;
use crate::rdb::Scratch;
use crate::report::keys::KeyWriter;
use crate::scan::{scan, ChecksumVerdict, Stop};
use crate::server::{ServerProfile, Version};
use std::io::{self, BufWriter, Write};

pub fn run(args: &KeysArgs, out: impl Write) -> io::Result<Outcome> {
    let filter = args
        .filter
        .build()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let version_override = match &args.redis_version {
        Some(v) => Some(Version::parse(v).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("--redis-version {v:?} is not X.Y.Z"),
            )
        })?),
        None => None,
    };
    let mut writer = KeyWriter::new(
        BufWriter::with_capacity(1 << 16, out),
        args.format,
        args.compat,
    )?;
    let mut outcome = Outcome::Clean;
    let mut scratch = Scratch::default();
    for path in &args.dumps {
        let dump = match Dump::open(path) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("rdbscope: {}: {e}", path.display());
                outcome = Outcome::Failed;
                continue;
            }
        };
        let (info, stop) = scan(&dump, !args.skip_checksum, |profile, record| {
            let profile = match version_override {
                Some(v) => ServerProfile {
                    version: v,
                    ..*profile
                },
                None => *profile,
            };
            if !filter.is_empty()
                && !filter.accepts(record, || record.key.to_cow().ok().map(|k| k.into_owned()))
            {
                return Ok(());
            }
            let stats =
                KeyStats::from_record(record, &profile, &mut scratch).map_err(Stop::Corrupt)?;
            writer.write(&stats).map_err(Stop::Consumer)
        });
        match stop {
            Some(Stop::Consumer(e)) => return Err(e),
            Some(Stop::Corrupt(e)) => {
                writer.flush()?;
                eprintln!(
                    "rdbscope: {}",
                    describe_damage(&dump.display_name(), &e, &info)
                );
                outcome = Outcome::Failed;
            }
            None => {}
        }
        if let ChecksumVerdict::Mismatch { stored, computed } = info.checksum {
            writer.flush()?;
            eprintln!(
                "rdbscope: {}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}",
                dump.display_name()
            );
            outcome = Outcome::Failed;
        }
    }
    writer.finish()?;
    Ok(outcome)
}
