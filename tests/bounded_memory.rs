//! Memory stays bounded whatever the number of distinct prefixes: 1M keys with 1M
//! distinct prefixes (and as many patterns) are analysed under a cap, and the heap grows
//! by a few MiB; the same dump without a cap makes it grow by well over 100 MiB, which
//! shows the measurement sees the aggregators' tables.
//!
//! Heap use is measured by a counting global allocator (live bytes and their peak, on
//! every thread: the rayon workers hold the aggregators). That is only meaningful with
//! nothing else running in this process, so this file holds a single test.

mod craft;

use craft::Rdb;
use rdbscope::aggregates::prefixes::PrefixConfig;
use rdbscope::aggregates::{AggregateConfig, Aggregates};
use rdbscope::pass::analysis;
use rdbscope::pass::pipeline::Options;
use rdbscope::pass::progress::{Progress, ProgressMode};
use std::alloc::{GlobalAlloc, Layout, System};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct CountingAlloc;

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const KEYS: usize = 1_000_000;
const MIB: usize = 1 << 20;

/// Peak heap growth while `f` runs, in bytes.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst) - base)
}

fn analyse(dump: &Path, cap: usize) -> (analysis::Analysis<Aggregates>, usize) {
    let config = AggregateConfig {
        top_n: 50,
        prefixes: PrefixConfig {
            cap,
            ..PrefixConfig::default()
        },
    };
    let progress = Progress::new(ProgressMode::Never, 0);
    peak_growth(|| {
        analysis::analyze(
            &[dump.to_path_buf()],
            &Options::default(),
            &progress,
            |source| Aggregates::new(&config, source),
        )
        .unwrap()
    })
}

#[test]
fn a_million_distinct_prefixes_under_a_cap() {
    let tmp = tempfile::TempDir::new().unwrap();
    let dump = tmp.path().join("million.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..KEYS {
        // `tenant<i>` is no id (letters and digits, shorter than 16): a million
        // prefixes at depth 1 and a million patterns.
        rdb.set_string(format!("tenant{i}:item").as_bytes(), b"v", None)
            .unwrap();
    }
    rdb.finish().unwrap();

    const CAP: usize = 1000;
    let (capped, growth) = analyse(&dump, CAP);
    let m = &capped.merged;
    assert_eq!(m.totals.all().keys, KEYS as u64);
    let depth1 = &m.prefixes.tables()[0];
    // A heavy-hitter table holds at most 2.5 × its capacity of names; with no heavy name,
    // which one-key names survive is immaterial, but nothing is lost from the sums.
    let rows = depth1.rows();
    assert!(rows.len() <= CAP * 5 / 2, "{} rows", rows.len());
    assert!(depth1.overflowed());
    let kept: u64 = rows.iter().map(|r| r.stats.keys).sum();
    assert_eq!(kept + depth1.other().keys, KEYS as u64);
    assert!(rows.iter().all(|r| r.stats.keys == 1));
    assert!(depth1.absent_bound().keys * CAP as u64 <= KEYS as u64);
    let patterns = m.patterns.table();
    assert!(patterns.rows().len() <= CAP * 5 / 2);
    let kept: u64 = patterns.rows().iter().map(|r| r.stats.keys).sum();
    assert_eq!(kept + patterns.other().keys, KEYS as u64);
    let notes = rdbscope::report::run::summary::notes(&capped, false);
    assert!(
        notes.iter().any(|n| n.starts_with(
            "prefixes at depth 1: more distinct names than a table of capacity 1000 holds"
        )),
        "{notes:?}"
    );
    // Bounded by the tables' capacity (at most 2.5 × 1000 names per table and thread),
    // not by the million keys.
    assert!(
        growth < 32 * MIB,
        "capped run grew the heap by {} MiB",
        growth / MIB
    );

    // The same keys with room for every name: the tables now hold them all.
    let (uncapped, growth_uncapped) = analyse(&dump, 2 * KEYS);
    assert_eq!(uncapped.merged.prefixes.tables()[0].rows().len(), KEYS);
    assert!(
        growth_uncapped > 100 * MIB,
        "uncapped run grew the heap by only {} MiB",
        growth_uncapped / MIB
    );
    eprintln!(
        "heap growth: {} KiB with a cap of {CAP}, {} MiB without",
        growth / 1024,
        growth_uncapped / MIB
    );
}
