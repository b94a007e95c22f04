//! Damaged and hostile input: every file in `testdata/corrupt/` through the `keys` command,
//! truncation of every small dump at every byte offset, and seeded random mutations of
//! small valid dumps. The decoder must never panic, never hang, never allocate far more than
//! the input size, and must always say where the damage is.
//!
//! Allocation sizes are measured by a counting global allocator. It applies to this whole
//! test binary, so it only records requests made on a thread that switched tracking on
//! (`track_allocations`), i.e. the mutation test's own thread while it runs `scan`; tests
//! running in parallel on other threads do not disturb the measurement.
//!
//! Every check collects its failures with a reproduction (file, cut or mutation list) and
//! reports them together; a panic names its case on stderr. `RDBSCOPE_MUTATIONS=N` runs
//! more mutation cases than the default (same seed, so the first cases are the same).

mod common;
mod craft;

use common::{rdb_files, scan_dump, testdata};
use rdbscope::model::key_stats::KeyStats;
use rdbscope::pass::scan::{ChecksumVerdict, DumpInfo};
use rdbscope::rdb::{DecodeError, Scratch};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Counting allocator
// ---------------------------------------------------------------------------------------

/// Largest single allocation (or reallocation target) requested on a tracking thread.
static MAX_ALLOC: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
}

struct CountingAlloc;

#[inline]
fn note_alloc(size: usize) {
    if TRACKING.try_with(Cell::get).unwrap_or(false) {
        MAX_ALLOC.fetch_max(size, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_alloc(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Runs `f` with allocation tracking on for this thread and returns its result with the
/// largest single allocation request made meanwhile.
fn track_allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    MAX_ALLOC.store(0, Ordering::SeqCst);
    TRACKING.with(|t| t.set(true));
    let out = f();
    TRACKING.with(|t| t.set(false));
    (out, MAX_ALLOC.swap(0, Ordering::SeqCst))
}

// ---------------------------------------------------------------------------------------
// Watchdog
// ---------------------------------------------------------------------------------------

struct WatchShared {
    /// Milliseconds since `base` when the current case started; `u64::MAX` when idle.
    started_ms: AtomicU64,
    done: AtomicBool,
    what: Mutex<String>,
    base: Instant,
}

/// Aborts the whole process, naming the case, if one case runs longer than `limit`.
struct Watchdog {
    shared: Arc<WatchShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    fn new(limit: Duration) -> Watchdog {
        let shared = Arc::new(WatchShared {
            started_ms: AtomicU64::new(u64::MAX),
            done: AtomicBool::new(false),
            what: Mutex::new(String::new()),
            base: Instant::now(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            while !s.done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                let started = s.started_ms.load(Ordering::SeqCst);
                if started == u64::MAX {
                    continue;
                }
                let now = s.base.elapsed().as_millis() as u64;
                if now.saturating_sub(started) > limit.as_millis() as u64 {
                    let what = s.what.lock().map(|w| w.clone()).unwrap_or_default();
                    eprintln!("WATCHDOG: case took more than {limit:?}, aborting: {what}");
                    std::process::abort();
                }
            }
        });
        Watchdog {
            shared,
            thread: Some(thread),
        }
    }

    fn begin(&self, what: String) {
        *self.shared.what.lock().unwrap() = what;
        let now = self.shared.base.elapsed().as_millis() as u64;
        self.shared.started_ms.store(now, Ordering::SeqCst);
    }

    fn end(&self) {
        self.shared.started_ms.store(u64::MAX, Ordering::SeqCst);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Names the running case on stderr if a panic unwinds through it (no `catch_unwind`
/// needed: the panic still fails the test, this only says which input caused it).
struct CaseGuard<'a>(&'a str);

impl Drop for CaseGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("PANIC while running: {}", self.0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn rel(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// All `.rdb` files under `dir`, recursively, sorted.
/// One key as the scan saw it: db, name, offset of its type byte, bytes it spans.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SeenKey {
    db: u64,
    key: Vec<u8>,
    offset: u64,
    len: u64,
}

/// Scans `data` the way `keys` does (KeyStats for every key, checksum verified) and
/// collects every key read whole.
fn scan_keys(data: &[u8]) -> (DumpInfo, Vec<SeenKey>) {
    let mut scratch = Scratch::default();
    let mut keys = Vec::new();
    let info = scan_dump(data, true, |profile, record| {
        let stats = KeyStats::from_record(record, profile, &mut scratch)?;
        keys.push(SeenKey {
            db: stats.db,
            key: stats.key.into_owned(),
            offset: record.offset,
            len: record.serialized_bytes,
        });
        Ok(())
    });
    (info, keys)
}

/// `at offset N` in a message.
fn offset_in(msg: &str) -> Option<u64> {
    let rest = &msg[msg.find("at offset ")? + "at offset ".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn error_is_one_line(e: &DecodeError) -> bool {
    let s = e.to_string();
    !s.contains('\n') && !s.contains('\r')
}

// ---------------------------------------------------------------------------------------
// 1. testdata/corrupt through the binary
// ---------------------------------------------------------------------------------------

const BASE: &str = "redis-7.4.1-small.rdb";

struct CliRun {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_keys(path: &Path) -> CliRun {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("keys")
        .arg(path)
        .args(["--format", "csv"])
        .output()
        .expect("run rdbscope");
    CliRun {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// What each damaged file must produce.
struct Expect {
    file: &'static str,
    /// Where the README/MANIFEST says the decoder must stop (`at offset N`), if stated.
    offset: Option<std::ops::RangeInclusive<u64>>,
    /// Text the message must contain.
    says: &'static [&'static str],
    /// Keys of the base dump that must be reported: those whose record ends at or before
    /// this offset of the base file.
    rows_before: u64,
}

#[test]
fn corrupt_files_through_keys_command() {
    let dir = testdata().join("corrupt");
    let base_path = dir.join(BASE);
    let base_bytes = read(&base_path);
    let (base_info, base_keys) = scan_keys(&base_bytes);
    assert!(base_info.error.is_none(), "{:?}", base_info.error);
    assert!(matches!(base_info.checksum, ChecksumVerdict::Valid(_)));
    assert_eq!(base_keys.len(), 10, "README lists 10 keys in the base dump");

    let base = run_keys(&base_path);
    assert_eq!(base.code, Some(0), "base dump: {}", base.stderr);
    assert_eq!(base.stderr, "", "base dump writes nothing to stderr");
    let base_lines: Vec<&str> = base.stdout.lines().collect();
    assert_eq!(
        base_lines.len(),
        1 + base_keys.len(),
        "header + one row per key"
    );
    for (row, k) in base_lines[1..].iter().zip(&base_keys) {
        let prefix = format!("{},{},", k.db, String::from_utf8_lossy(&k.key));
        assert!(
            row.starts_with(&prefix),
            "row {row:?} is not key {prefix:?}"
        );
    }
    let key_offset = |name: &str| {
        base_keys
            .iter()
            .find(|k| k.key == name.as_bytes())
            .unwrap_or_else(|| panic!("base has key {name}"))
    };
    // The README's offsets are where the damaged fields sit in the base dump.
    let lzfstr = key_offset("lzfstr");
    assert!(lzfstr.offset < 462 && 462 < lzfstr.offset + lzfstr.len);
    assert_eq!(key_offset("greeting").offset, 570);
    let blob = key_offset("blob");
    assert!(blob.offset < 92 && 92 < blob.offset + blob.len);

    let all = base_bytes.len() as u64;
    let expectations = [
        Expect {
            file: "zero-length.rdb",
            offset: Some(0..=0),
            says: &["truncated"],
            rows_before: 0,
        },
        Expect {
            file: "bad-magic.rdb",
            offset: Some(0..=0),
            says: &["not an RDB file"],
            rows_before: 0,
        },
        Expect {
            file: "bad-version-digits.rdb",
            // The four digits are bytes 5..=8.
            offset: Some(5..=8),
            says: &["version"],
            rows_before: 0,
        },
        Expect {
            file: "wrong-checksum.rdb",
            offset: None,
            says: &["CRC64 mismatch"],
            rows_before: all,
        },
        Expect {
            file: "truncated-mid-value.rdb",
            offset: Some(92..=92),
            says: &["truncated", "needs 300 bytes"],
            rows_before: 242,
        },
        Expect {
            file: "truncated-before-eof.rdb",
            offset: Some(652..=652),
            says: &["truncated"],
            rows_before: 652,
        },
        Expect {
            file: "flipped-length-byte.rdb",
            offset: Some(92..=92),
            says: &["needs 16172 bytes"],
            rows_before: 90,
        },
        Expect {
            file: "flipped-length-byte-crc-fixed.rdb",
            offset: Some(92..=92),
            says: &["needs 16172 bytes"],
            rows_before: 90,
        },
        Expect {
            file: "unknown-type-byte.rdb",
            offset: Some(570..=570),
            says: &["type 99"],
            rows_before: 570,
        },
        Expect {
            file: "corrupt-lzf-length.rdb",
            // Anywhere inside the damaged record of 'lzfstr'.
            offset: Some(lzfstr.offset..=lzfstr.offset + lzfstr.len),
            says: &[],
            rows_before: lzfstr.offset,
        },
    ];

    // Every file in the directory is covered by an expectation or is one of the two
    // inputs Redis accepts.
    let on_disk: Vec<String> = rdb_files(&dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for name in &on_disk {
        assert!(
            name == BASE
                || name == "trailing-garbage.rdb"
                || expectations.iter().any(|e| e.file == name),
            "no expectation for testdata/corrupt/{name}"
        );
    }

    let mut failures = Vec::new();
    for e in &expectations {
        let path = dir.join(e.file);
        let run = run_keys(&path);
        let mut fail = |msg: String| failures.push(format!("{}: {msg}", e.file));
        if run.code != Some(2) {
            fail(format!(
                "exit code {:?}, expected 2 (stderr: {:?})",
                run.code, run.stderr
            ));
        }
        // One message, on one line.
        let lines: Vec<&str> = run.stderr.lines().collect();
        let msg = lines.first().copied().unwrap_or("");
        if run.stderr.is_empty() {
            fail("no message on stderr".into());
        } else if lines.len() != 1 || !run.stderr.ends_with('\n') {
            fail(format!("stderr is not exactly one line: {:?}", run.stderr));
        }
        if !run.stderr.is_empty() && !msg.contains(e.file) {
            fail(format!("message does not name the file: {msg:?}"));
        }
        for s in e.says {
            if !msg.contains(s) {
                fail(format!("message lacks {s:?}: {msg:?}"));
            }
        }
        match (&e.offset, offset_in(msg)) {
            (Some(range), Some(at)) if !range.contains(&at) => {
                fail(format!("offset {at}, expected {range:?}: {msg:?}"))
            }
            (Some(range), None) if !msg.is_empty() => {
                fail(format!("no 'at offset N' (expected {range:?}): {msg:?}"))
            }
            _ => {}
        }
        // A file whose header is no RDB header is no dump: the run is refused, with not
        // even a CSV header printed.
        if matches!(
            e.file,
            "zero-length.rdb" | "bad-magic.rdb" | "bad-version-digits.rdb"
        ) {
            if !run.stdout.is_empty() || !msg.contains("not an RDB file") {
                fail(format!("not refused as no dump: {msg:?}\n{}", run.stdout));
            }
            continue;
        }
        // Rows: exactly the base dump's keys that precede the damage, in file order.
        let expected_rows = base_keys
            .iter()
            .take_while(|k| k.offset + k.len <= e.rows_before)
            .count();
        let rows: Vec<&str> = run.stdout.lines().collect();
        if rows.first() != base_lines.first() {
            fail(format!("CSV header differs: {:?}", rows.first()));
        }
        let got = rows.len().saturating_sub(1);
        if got != expected_rows || rows[..] != base_lines[..rows.len().min(base_lines.len())] {
            fail(format!(
                "stdout has {got} rows, expected the base's first {expected_rows}:\n{}",
                run.stdout
            ));
        }
        // A positional error names the last good key, or says none was read.
        if e.offset.is_some() && !msg.is_empty() {
            let want = match expected_rows {
                0 => "no key was read before the damage".to_string(),
                n => {
                    let k = &base_keys[n - 1];
                    format!(
                        "last good key: \"{}\" (db {})",
                        String::from_utf8_lossy(&k.key),
                        k.db
                    )
                }
            };
            if !msg.contains(&want) {
                fail(format!("message lacks {want:?}: {msg:?}"));
            }
        }
    }

    // Redis accepts trailing garbage after the CRC: clean exit, same rows as the base.
    let trailing = run_keys(&dir.join("trailing-garbage.rdb"));
    if trailing.code != Some(0) {
        failures.push(format!(
            "trailing-garbage.rdb: exit {:?}: {}",
            trailing.code, trailing.stderr
        ));
    }
    if trailing.stdout != base.stdout {
        failures.push(format!(
            "trailing-garbage.rdb: rows differ from the base:\n{}",
            trailing.stdout
        ));
    }

    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// 2. Truncation at every offset
// ---------------------------------------------------------------------------------------

const SMALL: u64 = 20 * 1024;

#[test]
fn truncation_at_every_offset() {
    let started = Instant::now();
    let files: Vec<PathBuf> = rdb_files(&testdata())
        .into_iter()
        .filter(|p| std::fs::metadata(p).unwrap().len() < SMALL)
        .collect();
    assert!(files.len() >= 60, "only {} small dumps found", files.len());
    assert!(files
        .iter()
        .any(|p| p.ends_with("corrupt/redis-7.4.1-small.rdb")));

    let watchdog = Watchdog::new(Duration::from_secs(10));
    let mut cases = 0u64;
    let mut failures = Vec::new();
    for path in &files {
        let data = read(path);
        let name = rel(path);
        let (full, full_keys) = scan_keys(&data);
        // Below this length a prefix must fail; from it on (trailing bytes after the
        // trailer, which Redis ignores) it reads like the whole file.
        let complete = match full.error {
            None => data.len() - full.trailing_bytes as usize,
            Some(_) => usize::MAX,
        };
        for cut in 0..data.len() {
            cases += 1;
            let what = format!("{name} truncated to {cut} of {} bytes", data.len());
            let _guard = CaseGuard(&what);
            watchdog.begin(what.clone());
            let (info, keys) = scan_keys(&data[..cut]);
            watchdog.end();
            let mut fail = |msg: String| {
                if failures.len() < 50 {
                    failures.push(format!("{what}: {msg}"));
                }
            };
            match &info.error {
                None if cut < complete => fail("no error".into()),
                None => {
                    if keys != full_keys {
                        fail("trailing-byte prefix reads other keys than the whole file".into())
                    }
                }
                Some(e) => {
                    if e.offset > cut as u64 {
                        fail(format!("error offset {} past the end: {e}", e.offset));
                    }
                    if !error_is_one_line(e) {
                        fail(format!("multi-line message: {e:?}"));
                    }
                }
            }
            if keys.len() > full_keys.len() || keys[..] != full_keys[..keys.len()] {
                fail(format!(
                    "{} keys read, not a prefix of the whole file's {}",
                    keys.len(),
                    full_keys.len()
                ));
            }
            if info.keys != keys.len() as u64 {
                fail(format!(
                    "info.keys {} != {} keys seen",
                    info.keys,
                    keys.len()
                ));
            }
            let last = keys.last().map(|k| (k.db, k.key.clone()));
            if info.last_key != last {
                fail(format!("last_key {:?} != {:?}", info.last_key, last));
            }
        }
    }
    drop(watchdog);
    eprintln!(
        "truncation: {cases} truncated prefixes of {} dumps under 20 KB, {:.1?}",
        files.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s) (first 50):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// 3. Seeded random mutations
// ---------------------------------------------------------------------------------------

/// xorshift64* (Vigna), enough for reproducible fuzzing.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-enough in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEED: u64 = 0x005e_ed0f_4db5_c09e;
/// Default case count; `RDBSCOPE_MUTATIONS=N` runs more (same seed, same first cases).
const MUTATION_CASES: usize = 100_000;
const INTERESTING: [u8; 5] = [0x00, 0xff, 0x7f, 0x80, 0xc3];

/// Applies one random mutation to `data`, describing it in `log`.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, log: &mut Vec<String>) {
    let n = data.len();
    let op = if n == 0 { 2 } else { rng.below(5) };
    match op {
        0 => {
            let (pos, bit) = (rng.below(n), rng.below(8));
            data[pos] ^= 1 << bit;
            log.push(format!("flip bit {bit} @{pos}"));
        }
        1 => {
            let pos = rng.below(n);
            let pick = rng.below(INTERESTING.len() + 1);
            let v = INTERESTING.get(pick).copied().unwrap_or(rng.next() as u8);
            log.push(format!("set @{pos} {:#04x}->{v:#04x}", data[pos]));
            data[pos] = v;
        }
        2 => {
            let pos = rng.below(n + 1);
            let pick = rng.below(INTERESTING.len() + 1);
            let v = INTERESTING.get(pick).copied().unwrap_or(rng.next() as u8);
            data.insert(pos, v);
            log.push(format!("insert {v:#04x} @{pos}"));
        }
        3 => {
            let pos = rng.below(n);
            log.push(format!("delete {:#04x} @{pos}", data[pos]));
            data.remove(pos);
        }
        _ => {
            let start = rng.below(n);
            let len = 1 + rng.below((n - start).min(64));
            let at = rng.below(n + 1);
            let span = data[start..start + len].to_vec();
            data.splice(at..at, span);
            log.push(format!("duplicate {start}..{} @{at}", start + len));
        }
    }
}

/// Small valid dumps covering many value types, plus one real server dump.
fn mutation_corpus() -> Vec<(String, Vec<u8>)> {
    let td = testdata();
    let mut paths = vec![
        td.join("corrupt").join(BASE),
        td.join("real/redis-7.4.1-alltypes.rdb"),
    ];
    for dir in [
        "peers/redis-rdb-tools",
        "peers/hdt3213-rdb",
        "peers/redis-librdb",
        "peers/rdb-rs-crate-0.4.0",
        "peers/redis-replicator",
        "peers/redis-tests-assets",
        "modern",
    ] {
        paths.extend(
            rdb_files(&td.join(dir))
                .into_iter()
                .filter(|p| std::fs::metadata(p).unwrap().len() < SMALL),
        );
    }
    // Valid only: structurally whole and, where present, a matching checksum.
    paths
        .into_iter()
        .filter_map(|p| {
            let data = read(&p);
            let (info, _) = scan_keys(&data);
            let ok =
                info.error.is_none() && !matches!(info.checksum, ChecksumVerdict::Mismatch { .. });
            ok.then(|| (rel(&p), data))
        })
        .collect()
}

#[test]
fn seeded_random_mutations() {
    let started = Instant::now();
    let corpus = mutation_corpus();
    assert!(corpus.len() >= 50, "only {} valid dumps", corpus.len());
    let limit = |len: usize| 4 * len + (1 << 20);

    // The unmutated inputs are within the allocation bound too (so the bound is fair).
    for (name, data) in &corpus {
        let ((info, _), max) = track_allocations(|| scan_count(data));
        assert!(info.error.is_none(), "{name}");
        assert!(
            max <= limit(data.len()),
            "{name}: clean parse allocates {max}"
        );
    }

    let cases = std::env::var("RDBSCOPE_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MUTATION_CASES);
    let watchdog = Watchdog::new(Duration::from_secs(10));
    let mut rng = Rng(SEED);
    let (mut errors, mut clean, mut crc_caught, mut failed) = (0u64, 0u64, 0u64, 0u64);
    let mut failures = Vec::new();
    let mut largest = (0usize, String::new());
    for case in 0..cases {
        let (name, original) = &corpus[rng.below(corpus.len())];
        let mut data = original.clone();
        let mut log = Vec::new();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut data, &mut log);
        }
        let what = format!(
            "mutation case {case} (seed {SEED:#x}): {name} [{}] -> {} bytes",
            log.join(", "),
            data.len()
        );
        let _guard = CaseGuard(&what);
        watchdog.begin(what.clone());
        let ((info, keys), max) = track_allocations(|| scan_count(&data));
        watchdog.end();

        let mut fail = |msg: String| {
            if failures.len() < 50 {
                failures.push(format!("{what}: {msg}"));
            }
            failed += 1;
        };
        if max > limit(data.len()) {
            fail(format!(
                "allocation of {max} bytes (limit {} for {} input bytes)",
                limit(data.len()),
                data.len()
            ));
        }
        if max > largest.0 {
            largest = (max, what.clone());
        }
        if info.keys != keys {
            fail(format!("info.keys {} != {keys} keys seen", info.keys));
        }
        match &info.error {
            Some(e) => {
                errors += 1;
                if e.offset > data.len() as u64 {
                    fail(format!("error offset past the end of the input: {e}"));
                }
                if !error_is_one_line(e) {
                    fail(format!("multi-line message: {e:?}"));
                }
            }
            None => {
                clean += 1;
                match info.checksum {
                    ChecksumVerdict::Mismatch { .. } => crc_caught += 1,
                    // A changed payload cannot keep its CRC64. Bytes after the trailer
                    // (appended by the mutation) are ignored, as Redis does.
                    ChecksumVerdict::Valid(_)
                        if !original
                            .starts_with(&data[..data.len() - info.trailing_bytes as usize]) =>
                    {
                        fail("changed dump passes its CRC64".into())
                    }
                    _ => {}
                }
            }
        }
    }
    drop(watchdog);
    eprintln!(
        "mutation: {cases} mutated inputs from {} dumps (seed {SEED:#x}): {errors} \
         decode errors, {clean} clean parses ({crc_caught} of them with a CRC64 mismatch); \
         largest allocation {} bytes ({}); {:.1?}",
        corpus.len(),
        largest.0,
        largest.1,
        started.elapsed()
    );
    assert_eq!(errors + clean, cases as u64);
    assert!(
        failures.is_empty(),
        "{failed} failed check(s) (first {}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// [`scan_dump`] with KeyStats for each key, counting keys (no per-key allocation of its own).
fn scan_count(data: &[u8]) -> (DumpInfo, u64) {
    let mut scratch = Scratch::default();
    let mut keys = 0u64;
    let info = scan_dump(data, true, |profile, record| {
        KeyStats::from_record(record, profile, &mut scratch)?;
        keys += 1;
        Ok(())
    });
    (info, keys)
}

// ---------------------------------------------------------------------------------------
// 4. Hand-made inputs aimed at spots found by reading the decoder
// ---------------------------------------------------------------------------------------

/// A RDB 11 dump: db 0, then `records`, EOF, and a zero (disabled) checksum.
fn crafted(records: &[u8]) -> Vec<u8> {
    let mut d = b"REDIS0011\xfe\x00".to_vec();
    d.extend_from_slice(records);
    d.push(0xff);
    d.extend_from_slice(&[0; 8]);
    d
}

/// An LZF string of 2 compressed bytes (literal "a") declaring 2^64-1 bytes: no LZF
/// blob of 2 bytes can expand that far (at most 88 bytes per compressed byte).
const LZF_IMPOSSIBLE: &[u8] = &[
    0xc3, // LZF string
    0x02, // compressed length 2
    0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // declared length u64::MAX
    0x00, b'a', // literal run of one byte
];

/// Scans a crafted dump; the caller checks the outcome. A panic fails the test.
fn scan_crafted(records: &[u8], what: &str) -> (DumpInfo, Vec<SeenKey>) {
    let data = crafted(records);
    let _guard = CaseGuard(what);
    scan_keys(&data)
}

fn key_with(value_type: u8, value: &[u8]) -> Vec<u8> {
    let mut r = vec![value_type, 0x01, b'k'];
    r.extend_from_slice(value);
    r
}

#[test]
fn lzf_string_value_with_impossible_length_is_an_error() {
    // Same class of damage as corrupt-lzf-length.rdb: the declared length of an LZF
    // string value is never checked against its compressed bytes.
    let (info, keys) = scan_crafted(&key_with(0, LZF_IMPOSSIBLE), "string value");
    assert!(
        info.error.is_some(),
        "an LZF string value declaring 2^64-1 bytes from 2 compressed bytes was accepted \
         ({} keys read)",
        keys.len()
    );
}

#[test]
fn lzf_set_member_with_impossible_length_does_not_panic() {
    let mut value = vec![0x01]; // one member
    value.extend_from_slice(LZF_IMPOSSIBLE);
    let (info, _) = scan_crafted(&key_with(2, &value), "plain set, LZF member");
    assert!(info.error.is_some(), "accepted");
}

#[test]
fn lzf_list_element_with_impossible_length_does_not_panic() {
    let mut value = vec![0x01]; // one element
    value.extend_from_slice(LZF_IMPOSSIBLE);
    let (info, _) = scan_crafted(&key_with(1, &value), "linked list, LZF element");
    assert!(info.error.is_some(), "accepted");
}

#[test]
fn lzf_quicklist_plain_node_with_impossible_length_does_not_panic() {
    let mut value = vec![0x01, 0x01]; // one node, container PLAIN
    value.extend_from_slice(LZF_IMPOSSIBLE);
    let (info, _) = scan_crafted(&key_with(18, &value), "quicklist2, LZF plain node");
    assert!(info.error.is_some(), "accepted");
}

#[test]
fn error_offsets_inside_lzf_blobs_point_into_the_record() {
    // sorted_set_as_ziplist.rdb holds its ziplist LZF-compressed; flipping bit 0 of the
    // byte at 170 corrupts the decompressed ziplist. The error must point into the file,
    // at the damaged key's record, not at a position inside the decompressed bytes.
    let path = testdata().join("peers/redis-rdb-tools/sorted_set_as_ziplist.rdb");
    let original = read(&path);
    let (_, keys) = scan_keys(&original);
    let record = keys
        .iter()
        .find(|k| k.offset <= 170 && 170 < k.offset + k.len)
        .expect("byte 170 is inside a key record");
    let mut data = original.clone();
    data[170] ^= 1;
    let (info, _) = scan_keys(&data);
    let err = info.error.expect("the damage is detected");
    let span = record.offset..=record.offset + record.len;
    assert!(
        span.contains(&err.offset),
        "{}: bit 0 of byte 170 flipped: error at offset {} ({err}), outside the damaged \
         record {span:?} of a {}-byte file",
        rel(&path),
        err.offset,
        data.len()
    );
}

#[test]
fn lzf_declared_length_bounds_allocation() {
    // An LZF key of `clen` junk literal bytes declaring the largest length LZF can reach
    // from them (88 per compressed byte): the decoder may reserve the declared length
    // before it finds the data does not fill it, but never more; one byte more is
    // rejected before anything is reserved.
    let clen: usize = 4096;
    let mut compressed = Vec::with_capacity(clen);
    while compressed.len() + 33 <= clen {
        compressed.push(31);
        compressed.extend((0..32).map(|i| b'a' + (i % 26) as u8));
    }
    while compressed.len() < clen {
        compressed.push(0);
        compressed.push(b'z');
    }
    compressed.truncate(clen);
    for (declared, at_most) in [
        (88 * clen as u64, 88 * clen),
        (88 * clen as u64 + 1, 4 * clen),
    ] {
        let mut key = vec![0xc3, 0x80];
        key.extend_from_slice(&(clen as u32).to_be_bytes());
        key.push(0x81);
        key.extend_from_slice(&declared.to_be_bytes());
        key.extend_from_slice(&compressed);
        let mut record = vec![0x00];
        record.extend_from_slice(&key);
        record.extend_from_slice(&[0x01, b'v']);
        let data = crafted(&record);
        let ((info, _), max) = track_allocations(|| scan_count(&data));
        let err = info.error.expect("a key shorter than declared is an error");
        assert!(error_is_one_line(&err));
        assert!(
            max <= at_most,
            "declared {declared} from {clen} compressed bytes: allocated {max} (> {at_most})"
        );
    }
}

/// Damage inside a value that the scan skips whole (an LZF string whose instructions are
/// invalid) found only when the value is walked, in the second batch of 16,384 keys: the
/// keys of the first batch, already handed on while the second was analysed, and those
/// of the second batch before the damage are all written, in order, and nothing after.
#[test]
fn damage_found_in_a_later_batch_keeps_every_row_before_it() {
    const KEYS: usize = 40_000;
    const DAMAGED: usize = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late-damage.rdb");
    craft::late_damage_dump(&path, KEYS, DAMAGED).unwrap();
    let run = run_keys(&path);
    assert_eq!(run.code, Some(2), "stderr: {}", run.stderr);
    let rows: Vec<&str> = run.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), DAMAGED);
    for (i, row) in rows.iter().enumerate() {
        assert!(row.starts_with(&format!("0,key:{i},")), "row {i}: {row}");
    }
    assert!(
        run.stderr
            .contains("back reference before the start of the output")
            && run.stderr.contains("last good key: \"key:29999\" (db 0)")
            && run.stderr.contains("30000 keys read before the damage"),
        "stderr: {}",
        run.stderr
    );
}
