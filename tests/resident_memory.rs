//! Peak resident memory on a dump of one long value: every read of the mapped file hands
//! back the pages it has passed, the allocator detection's skip over a value too long to
//! sample included, so the whole dump is never resident at once. Read from the child's
//! `VmHWM` (Linux), which only grows, polled until it exits.

mod craft;

use craft::{length, listpack, Entry, Rdb};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// A dump whose only key is a quicklist of `nodes` listpack nodes of ~8 KiB each, with the
/// aux fields the allocator detection reads (it samples only with `used-mem`).
fn one_long_list(path: &Path, nodes: usize) -> u64 {
    let item = [b'x'; 60];
    let node = listpack(&[Entry::Str(&item); 130]);
    let mut rdb = Rdb::with_version(BufWriter::new(File::create(path).unwrap()), 11).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("used-mem", "300000000").unwrap();
    rdb.select_db(0).unwrap();
    let mut record = vec![18]; // RDB_TYPE_LIST_QUICKLIST_2
    record.extend(length(4));
    record.extend(b"list");
    record.extend(length(nodes));
    rdb.raw(&record).unwrap();
    let mut packed = vec![2]; // a packed (listpack) node
    packed.extend(length(node.len()));
    packed.extend(&node);
    for _ in 0..nodes {
        rdb.raw(&packed).unwrap();
    }
    rdb.finish().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// `VmHWM` of process `pid` in bytes, while it runs.
fn high_water_mark(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The highest `VmHWM` read from `rdbscope args` before it exited successfully.
fn peak_resident(args: &[&str]) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run rdbscope");
    let mut peak = 0;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "rdbscope {args:?}: {status}");
            return peak;
        }
        peak = peak.max(high_water_mark(child.id()).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_value_longer_than_memory_bounds_is_never_resident_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("one-long-list.rdb");
    let size = one_long_list(&dump, 17_000);
    assert!(size > 128 * MIB, "{size}");
    let path = dump.to_str().unwrap();
    for args in [
        &["keys", "--format", "csv", path][..],
        &["report", "-q", path][..],
    ] {
        let peak = peak_resident(args);
        eprintln!(
            "rdbscope {args:?}: dump {} MiB, peak resident {} MiB",
            size / MIB,
            peak / MIB
        );
        assert!(peak > 0, "no VmHWM read");
        assert!(
            peak < 100 * MIB,
            "rdbscope {args:?} held {} MiB of a {} MiB dump resident",
            peak / MIB,
            size / MIB
        );
    }
}
