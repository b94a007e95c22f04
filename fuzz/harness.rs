//! What each fuzz target does with one input, shared by the targets (`fuzz_targets/`) and
//! by `tests/fuzz_replay.rs`, which replays every input in `testdata/fuzz/` under a plain
//! `cargo test`. Each function panics exactly when the input shows a bug: a panic, an
//! overflow (targets are built with overflow checks), or two readings of one value that
//! disagree.

use clap::Parser;
use rdbscope::flags::Flags;
use rdbscope::model::facts::MemoryFacts;
use rdbscope::rdb::bytes::Bytes;
use rdbscope::rdb::value::skip_value;
use rdbscope::rdb::{lzf, Flavor, Record, Scanner, Scratch, ValueFacts, ValueType};
use std::io;
use std::path::Path;

/// Where values are placed in the raw-value mode of [`decoders`]: errors name offsets
/// from here.
const ORIGIN: u64 = 1000;

/// Runs `rdbscope ARGS… DUMP` in-process with its output discarded.
fn run(args: &[&str], dump: &Path) {
    let path = dump.to_str().expect("temporary paths are UTF-8");
    let line: Vec<&str> = ["rdbscope"]
        .iter()
        .chain(args)
        .chain([&path])
        .copied()
        .collect();
    let flags = Flags::try_parse_from(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    let result = flags.build().and_then(|command| command.run(io::sink()));
    // Damage is an outcome (exit 2), not an error: an error here is I/O on our own files,
    // or a dump rejected as a whole: one that is no RDB file (or a compressed container
    // that cannot be opened), which every command refuses, or one `info` rejects.
    if let Err(e) = result {
        let message = e.to_string();
        let refused = message.contains(": not an RDB file") || message.contains(": cannot open: ");
        assert!(args[0] == "info" || refused, "{line:?}: {e}");
    }
}

fn write_dump(data: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("dump.rdb");
    std::fs::write(&path, data).expect("write the input");
    (dir, path)
}

/// The whole analysis in-process: `report` with every writer (tables, summary.json, the
/// CSVs of --out-dir, the lint findings) over the input as a dump.
pub fn analysis(data: &[u8]) {
    let (dir, path) = write_dump(data);
    let out = dir.path().join("out");
    let out = out.to_str().expect("temporary paths are UTF-8");
    run(&["report", "-q"], &path);
    run(
        &[
            "report",
            "-q",
            "--format",
            "json",
            "--top",
            "3",
            "--out-dir",
            out,
        ],
        &path,
    );
}

/// Every other command on the input as a dump file.
pub fn commands(data: &[u8]) {
    let (_dir, path) = write_dump(data);
    run(&["info"], &path);
    run(&["info", "--format", "json"], &path);
    run(&["keys", "-q", "--format", "jsonl"], &path);
    run(&["keys", "-q", "--compat", "rdbtools"], &path);
    run(&["top", "-q", "-n", "5", "--by", "elements"], &path);
    run(&["prefixes", "-q", "--patterns", "--format", "csv"], &path);
    run(&["lint", "-q", "--format", "json"], &path);
}

/// The inner decoders, two ways that must agree:
/// * a dump (input starting with `REDIS`/`VALKEY`): the scanner finds each value's end by
///   skipping it; summarising the same bytes must end there too, or fail;
/// * otherwise byte 0 picks a value type (bit 7: Valkey) and the rest is the value:
///   skipping and summarising must agree on success and on where it ends; a value that
///   cannot be skipped cannot be summarised; type byte 0x7F instead checks that LZF
///   validation and decompression accept the same streams.
pub fn decoders(data: &[u8]) {
    if data.starts_with(b"REDIS") || data.starts_with(b"VALKEY") {
        return dump_values(data);
    }
    let Some((&first, value)) = data.split_first() else {
        return;
    };
    if first == 0x7f {
        return lzf_agrees(value);
    }
    let flavor = if first & 0x80 != 0 {
        Flavor::Valkey
    } else {
        Flavor::Redis
    };
    let Some(vt) = ValueType::from_byte(first & 0x7f, flavor) else {
        return;
    };
    let mut skipped = Bytes::new(value, ORIGIN);
    // Without the scanner there is no template: types 30 and 32 fail alike in both walks.
    let skip = skip_value(vt, None, &mut skipped, &mut Scratch::default());
    let mut summarised = Bytes::new(value, ORIGIN);
    let mut s = ValueFacts::default();
    let deep = rdbscope::rdb::summarize_value_into(
        vt,
        None,
        &mut summarised,
        &mut Scratch::default(),
        &mut MemoryFacts::new(0, false),
        &mut s,
    );
    match (&skip, &deep) {
        (Ok(()), Ok(())) => assert_eq!(
            skipped.offset(),
            summarised.offset(),
            "{vt:?}: skip and summary end at different offsets"
        ),
        (Err(_), Ok(())) => panic!("{vt:?}: summarised a value that cannot be skipped: {skip:?}"),
        (Err(a), Err(b)) => assert!(
            b.offset <= a.offset,
            "{vt:?}: the summary failed past where skipping did: {b} / {a}"
        ),
        (Ok(()), Err(_)) => {}
    }
}

fn dump_values(data: &[u8]) {
    let Ok(scanner) = Scanner::new(data) else {
        return;
    };
    let mut scratch = Scratch::default();
    let mut s = ValueFacts::default();
    for record in scanner {
        let Ok(Record::Key(k)) = record else {
            if record.is_err() {
                return;
            }
            continue;
        };
        let mut r = k.value_bytes();
        let deep = rdbscope::rdb::summarize_value_into(
            k.value_type,
            k.template(),
            &mut r,
            &mut scratch,
            &mut MemoryFacts::new(0, false),
            &mut s,
        );
        if deep.is_ok() {
            assert!(
                r.is_empty(),
                "{:?} at {}: the summary ended {} bytes before the skip",
                k.value_type,
                k.offset,
                r.remaining()
            );
        }
    }
}

fn lzf_agrees(data: &[u8]) {
    let Some((len, input)) = data.split_first_chunk::<2>() else {
        return;
    };
    let expected = u64::from(u16::from_le_bytes(*len));
    let valid = lzf::validate(input, expected, ORIGIN);
    let mut out = Vec::new();
    let expanded = lzf::decompress_into(input, expected, ORIGIN, &mut out);
    assert_eq!(valid.is_ok(), expanded.is_ok(), "{valid:?} / {expanded:?}");
    if expanded.is_ok() {
        assert_eq!(out.len() as u64, expected);
    }
}
