//! HyperLogLogs priced as the server that built them by `PFADD` holds them: 2,000 of 1 to
//! 100,000 elements (log-uniform; sparse up to ~1,500, dense above) beside 10,000 small
//! strings, on Debian's `redis-server` 7.0 (system jemalloc, 16-byte quantum) and on
//! valkey-server 9.1.2 (glibc malloc). The test reads `MEMORY USAGE key SAMPLES 0` of every
//! HyperLogLog, `SAVE`s, runs `rdbscope keys` with the allocator named, and holds the
//! per-key errors to the bounds below.
//!
//! A sparse HyperLogLog's allocation depends on the lengths at which it grew, which the
//! dump does not keep (see `src/model/hyperloglog.rs`): rdbscope prices the expectation
//! over them. Under Redis 7.0's greedy doubling the paths part by whole size classes (a
//! 1,800-byte one sits in 2,048 or 3,584 bytes), so a single key can be 30 % off and the
//! per-key p95 cannot come near 5 %; what holds is the sum and the median. Under the
//! 300-byte steps of Redis 7.2+ and Valkey the paths seldom part; glibc now and then hands
//! out a chunk 16 or 32 bytes larger than asked (a remainder too small to split), which no
//! model of the sizes foresees.
//!
//! Needs `redis-server` installed and the valkey-server of scripts/test.sh.

#[macro_use]
mod common;

use common::redis::{valkey_server_binary, RedisServer};
use common::rng::Rng;
use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

const HLLS: u64 = 2000;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Median, p95 and max of the errors, sorted in place.
fn stats(errors: &mut [f64]) -> (f64, f64, f64) {
    errors.sort_by(f64::total_cmp);
    (
        percentile(errors, 0.5),
        percentile(errors, 0.95),
        errors[errors.len() - 1],
    )
}

/// The bounds a server's HyperLogLogs are held to: the per-key median over the sparse
/// ones, p95 over all of them, and Σ over the sparse ones.
struct Bounds {
    sparse_median: f64,
    p95: f64,
    sparse_sum: f64,
}

fn check(server: &RedisServer, name: &str, allocator: &str, bounds: Bounds) {
    let mut c = server.connect();
    c.ok(cmd!["CONFIG", "SET", "latency-tracking", "no"]);
    let mut rng = Rng(0x4859_4c4c);
    for i in 0..HLLS {
        let n = rng.log_range(1, 100_000);
        let key = format!("hll:{i}");
        let mut args = cmd!["PFADD", key];
        for j in 0..n {
            args.push(format!("user:{i}:{j}:{}", rng.next() % 1000).into_bytes());
            if args.len() == 1002 {
                c.load(std::mem::replace(&mut args, cmd!["PFADD", key]));
            }
        }
        if args.len() > 2 {
            c.load(args);
        }
        c.replies();
    }
    c.ok(cmd!["DEBUG", "POPULATE", "10000", "str", "20"]);

    // What the server holds for each HyperLogLog, and which representation it is.
    let keys: Vec<String> = (0..HLLS).map(|i| format!("hll:{i}")).collect();
    for k in &keys {
        c.send(cmd!["MEMORY", "USAGE", k, "SAMPLES", "0"]);
        c.send(cmd!["GETRANGE", k, "4", "4"]);
    }
    let replies = c.replies();
    let mut truth = HashMap::new();
    for (k, pair) in keys.iter().zip(replies.chunks(2)) {
        let sparse = pair[1].bytes() == [1];
        truth.insert(k.clone(), (pair[0].int() as u64, sparse));
    }
    c.ok(cmd!["SAVE"]);

    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(["keys", "--format", "jsonl", "--allocator", allocator])
        .arg(server.dump_path())
        .output()
        .expect("run rdbscope keys");
    assert!(
        out.status.success(),
        "rdbscope keys: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (mut all, mut sparse, mut dense) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ours_sparse, mut server_sparse) = (0u64, 0u64);
    let mut rows = 0;
    let mut worst = Vec::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        rows += 1;
        let row: Value = serde_json::from_slice(line).expect("jsonl row");
        let key = row["key"].as_str().expect("key");
        let Some(&(server, is_sparse)) = truth.get(key) else {
            continue;
        };
        let ours = row["memory_bytes"].as_u64().expect("memory_bytes");
        let error = (ours as f64 - server as f64).abs() / server as f64;
        all.push(error);
        if is_sparse {
            sparse.push(error);
            ours_sparse += ours;
            server_sparse += server;
        } else {
            dense.push(error);
        }
        worst.push((
            error,
            format!(
                "{key} ({} bytes): ours {ours}, server {server}",
                row["largest_element_bytes"]
            ),
        ));
    }
    assert!(rows >= 12_000, "{rows} keys in the dump");
    assert_eq!(all.len(), truth.len(), "one row per HyperLogLog");
    assert!(
        sparse.len() > 1000 && dense.len() > 300,
        "{} sparse, {} dense",
        sparse.len(),
        dense.len()
    );
    let sum = ours_sparse as f64 / server_sparse as f64 - 1.0;
    let pct = |(m, p, x): (f64, f64, f64)| {
        format!(
            "median {:.2}%, p95 {:.2}%, max {:.2}%",
            m * 100.0,
            p * 100.0,
            x * 100.0
        )
    };
    let (_, p95, max) = stats(&mut all);
    let sparse_stats = stats(&mut sparse);
    eprintln!(
        "{name}: {} HyperLogLogs: {}; sparse ({}): {}, Σ ours {ours_sparse} vs Σ MEMORY USAGE \
         {server_sparse} ({:+.2}%); dense ({}): {}",
        truth.len(),
        pct((percentile(&all, 0.5), p95, max)),
        sparse.len(),
        pct(sparse_stats),
        sum * 100.0,
        dense.len(),
        pct(stats(&mut dense)),
    );
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    let worst: Vec<String> = worst.into_iter().take(12).map(|(_, w)| w).collect();
    eprintln!("{name}: the farthest:\n{}", worst.join("\n"));
    // A dense HyperLogLog is a string of its exact size, on the server as in the model
    // (glibc may hand out a chunk a few bytes larger).
    assert!(dense[dense.len() / 2] == 0.0 && dense[dense.len() - 1] <= 0.01);
    assert!(
        sum.abs() <= bounds.sparse_sum,
        "Σ sparse {:+.2}%",
        sum * 100.0
    );
    assert!(
        sparse_stats.0 <= bounds.sparse_median,
        "sparse median {:.2}%",
        sparse_stats.0 * 100.0
    );
    assert!(p95 <= bounds.p95, "p95 {:.2}%", p95 * 100.0);
}

#[test]
fn hyperloglogs_match_debian_redis_7_0() {
    // Greedy doubling: the paths part by size classes (see the module doc).
    let bounds = Bounds {
        sparse_median: 0.05,
        p95: 0.30,
        sparse_sum: 0.03,
    };
    check(&RedisServer::start(), "redis 7.0", "jemalloc-16", bounds);
}

#[test]
fn hyperloglogs_match_valkey_9() {
    // glibc's occasional larger chunk shifts where a small one doubles: p95 ~7-10 %.
    let bounds = Bounds {
        sparse_median: 0.01,
        p95: 0.15,
        sparse_sum: 0.02,
    };
    let server = RedisServer::start_binary(&valkey_server_binary("RDBSCOPE_VALKEY9_SERVER"));
    check(&server, "valkey 9.1", "libc", bounds);
}

/// Why no model of the dump holds a sparse HyperLogLog within 5 % on Redis 7.0: the same
/// elements added in two orders leave byte-identical values (`DUMP`) that the server
/// holds in allocations of different sizes, as the growth path, not the bytes, decides
/// them. For a pair more than 10.5 % apart no single figure is within 5 % of both, so at
/// least one key of each such pair is more than 5 % off whatever rdbscope prices.
#[test]
fn identical_sparse_hyperloglogs_differ_in_memory_on_redis_7_0() {
    let server = RedisServer::start();
    let mut c = server.connect();
    let mut rng = Rng(0x7e57_0dd5);
    let (mut identical, mut apart) = (0u64, 0u64);
    for i in 0..300 {
        let n = rng.log_range(1, 2_000);
        let elements: Vec<Vec<u8>> = (0..n)
            .map(|j| format!("e:{i}:{j}:{}", rng.next()).into_bytes())
            .collect();
        // The second order: a Fisher–Yates shuffle.
        let mut shuffled = elements.clone();
        for j in (1..shuffled.len()).rev() {
            shuffled.swap(j, (rng.next() % (j as u64 + 1)) as usize);
        }
        let (a, b) = (format!("a:{i}"), format!("b:{i}"));
        for (key, order) in [(&a, &elements), (&b, &shuffled)] {
            for e in order {
                c.load(cmd!["PFADD", key, e]);
            }
        }
        c.replies();
        let sparse = c.call(cmd!["GETRANGE", a, "4", "4"]).bytes() == b"\x01";
        if !sparse || c.call(cmd!["DUMP", a]).bytes() != c.call(cmd!["DUMP", b]).bytes() {
            continue;
        }
        identical += 1;
        let usage = |c: &mut common::redis::Conn, k: &str| {
            c.call(cmd!["MEMORY", "USAGE", k, "SAMPLES", "0"]).int() as f64
        };
        let (x, y) = (usage(&mut c, &a), usage(&mut c, &b));
        if x.max(y) / x.min(y) > 1.05 / 0.95 {
            apart += 1;
        }
    }
    eprintln!(
        "redis 7.0: {identical} sparse pairs with identical DUMP bytes, {apart} of them more \
         than 10.5 % apart in MEMORY USAGE: at least {:.1} % of these keys more than 5 % off \
         under any model",
        apart as f64 / (2 * identical) as f64 * 100.0
    );
    assert!(identical >= 250, "{identical} identical pairs");
    // Measured: 105 of 287 pairs apart (18.3 % of the keys more than 5 % off).
    assert!(
        apart as f64 >= 0.15 * identical as f64,
        "{apart} of {identical} pairs apart"
    );
}
