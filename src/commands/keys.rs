//! `rdbscope keys`: one row per key, streamed in file order.
//!
//! The scan is sequential (an RDB file has no index), but most of the work per key is
//! not: while the scanner reads the next batch of records, the rayon pool analyses and
//! renders the current one in chunks, and the chunks are written back in order.

use super::{describe_damage, Outcome};
use crate::analyze::KeyStats;
use crate::cli::KeysArgs;
use crate::filter::KeyFilter;
use crate::input::Dump;
use crate::rdb::{DecodeError, KeyRecord, Scratch};
use crate::report::keys::RowFormat;
use crate::scan::{ChecksumVerdict, DumpScan};
use crate::server::{ServerProfile, Version};
use rayon::prelude::*;
use std::io::{self, Write};

/// Keys scanned ahead while the previous batch is analysed.
const BATCH: usize = 16 * 1024;
/// Keys one rayon task analyses and renders.
const CHUNK: usize = 1024;

/// The rows of one chunk, and the key whose value turned out damaged, if any.
struct Rendered {
    bytes: Vec<u8>,
    failure: Option<(usize, DecodeError)>,
}

fn render_chunk(
    records: &[KeyRecord<'_>],
    profile: &ServerProfile,
    filter: &KeyFilter,
    format: RowFormat,
) -> Rendered {
    let mut scratch = Scratch::default();
    let mut bytes = Vec::with_capacity(records.len() * 96);
    for (i, record) in records.iter().enumerate() {
        if !filter.is_empty()
            && !filter.accepts(record, || record.key.to_cow().ok().map(|k| k.into_owned()))
        {
            continue;
        }
        match KeyStats::from_record(record, profile, &mut scratch) {
            Ok(stats) => format.render(&stats, &mut bytes),
            Err(e) => {
                return Rendered {
                    bytes,
                    failure: Some((i, e)),
                }
            }
        }
    }
    Rendered {
        bytes,
        failure: None,
    }
}

pub fn run(args: &KeysArgs, mut out: impl Write) -> io::Result<Outcome> {
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
        let verify = !args.skip_checksum;
        let mut scan = DumpScan::new(&dump);
        let (crc, result) = dump.with_checksum(verify, || {
            let mut current = Vec::with_capacity(BATCH);
            let mut next = Vec::with_capacity(BATCH);
            let mut more = scan.next_batch(&mut current, BATCH);
            let mut profile = scan.profile();
            let mut written = 0u64;
            let mut last_written: Option<KeyRecord<'_>> = None;
            while let (false, Some(p)) = (current.is_empty(), profile) {
                let p = match version_override {
                    Some(v) => ServerProfile { version: v, ..p },
                    None => p,
                };
                let (next_more, chunks) = rayon::join(
                    || more && scan.next_batch(&mut next, BATCH),
                    || {
                        current
                            .par_chunks(CHUNK)
                            .map(|c| render_chunk(c, &p, &filter, format))
                            .collect::<Vec<_>>()
                    },
                );
                for (ci, chunk) in chunks.into_iter().enumerate() {
                    out.write_all(&chunk.bytes)?;
                    if let Some((i, e)) = chunk.failure {
                        let at = ci * CHUNK + i;
                        let last = if at > 0 {
                            Some(current[at - 1])
                        } else {
                            last_written
                        };
                        return Ok(Some((e, last, written + at as u64)));
                    }
                }
                written += current.len() as u64;
                // Everything before the batch being scanned is done with.
                if let Some(first) = next.first() {
                    dump.release_before(first.offset);
                }
                last_written = current.last().copied();
                profile = scan.profile();
                std::mem::swap(&mut current, &mut next);
                next.clear();
                more = next_more;
            }
            out.flush()?;
            Ok::<_, io::Error>(None)
        });
        let value_damage = result?;
        let info = scan.finish(verify, crc);
        let damage = match value_damage {
            Some((e, last, read)) => {
                let key = last.map(|r| {
                    (
                        r.db,
                        r.key.to_cow().map(|k| k.into_owned()).unwrap_or_default(),
                    )
                });
                Some((e, key, read))
            }
            None => info
                .error
                .clone()
                .map(|e| (e, info.last_key.clone(), info.keys)),
        };
        if let Some((e, last, read)) = damage {
            out.flush()?;
            let last = last.as_ref().map(|(db, k)| (*db, k.as_slice()));
            eprintln!("rdbscope: {}", describe_damage(&name, &e, last, read));
            outcome = Outcome::Failed;
        }
        if let ChecksumVerdict::Mismatch { stored, computed } = info.checksum {
            out.flush()?;
            eprintln!("rdbscope: {name}: CRC64 mismatch: trailer says {stored:016x}, content hashes to {computed:016x}");
            outcome = Outcome::Failed;
        }
    }
    out.flush()?;
    Ok(outcome)
}
