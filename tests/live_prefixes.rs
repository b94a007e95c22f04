//! A live redis-server dump of over a million keys in which one depth-2 prefix holds over
//! 40 % of the memory among a million one-key prefixes: at the default `--max-prefixes` the
//! heavy prefix is listed with exact figures (error 0), whatever order the keys came in.

#[macro_use]
mod common;

use common::csv_rows;
use common::redis::RedisServer;
use std::collections::HashMap;
use std::process::{Command, Output};
use std::time::Instant;

/// One-key prefixes `user:<i>` (keys `user:<i>:profile`).
const LIGHT: u64 = 1_000_000;
/// Keys `cache:page:<i>` of `HEAVY_BYTES` each: the heavy prefix `cache:page`.
const HEAVY: u64 = 1_000;
const HEAVY_BYTES: u64 = 80_000;

fn rdbscope(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn num(row: &HashMap<String, String>, col: &str) -> u64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}={:?}", row[col]))
}

#[test]
fn a_heavy_prefix_among_a_million_one_key_prefixes_is_exact() {
    let started = Instant::now();
    let server = RedisServer::start();
    let mut c = server.connect();
    // The light keys in batches of 100k, each one Lua script (one round trip).
    let script = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do \
                  redis.call('SET', 'user:' .. i .. ':profile', 'x') end return 0";
    for start in (0..LIGHT).step_by(100_000) {
        let end = start + 99_999;
        c.call(cmd![
            "EVAL",
            script,
            "0",
            start.to_string(),
            end.to_string()
        ]);
    }
    c.ok(cmd![
        "DEBUG",
        "POPULATE",
        HEAVY.to_string(),
        "cache:page",
        HEAVY_BYTES.to_string()
    ]);
    c.ok(cmd!["SAVE"]);
    let dump = server.dump_path();
    let dump = dump.to_str().unwrap();
    eprintln!("dump of {} keys in {:?}", LIGHT + HEAVY, started.elapsed());

    // The truth for cache:page, key by key.
    let keys = csv_rows(&rdbscope(&["keys", "--match", "cache:page:*", dump]).stdout);
    assert_eq!(keys.len() as u64, HEAVY);
    let memory: u64 = keys.iter().map(|r| num(r, "memory_bytes")).sum();
    let serialized: u64 = keys.iter().map(|r| num(r, "serialized_bytes")).sum();

    let rows = csv_rows(&rdbscope(&["prefixes", "--depth", "2", "--format", "csv", dump]).stdout);
    let depth2: Vec<_> = rows.iter().filter(|r| r["depth"] == "2").collect();
    let whole: u64 = depth2.iter().map(|r| num(r, "memory_bytes")).sum();
    let all_keys: u64 = depth2.iter().map(|r| num(r, "keys")).sum();
    assert_eq!(all_keys, LIGHT + HEAVY, "rows and (other) sum to every key");
    let other = depth2.iter().find(|r| r["prefix"] == "(other)").unwrap();
    assert!(num(other, "keys") > 900_000, "the table overflowed");
    let heavy = depth2.iter().find(|r| r["prefix"] == "cache:page").unwrap();
    assert_eq!(
        [
            num(heavy, "keys"),
            num(heavy, "memory_bytes"),
            num(heavy, "serialized_bytes"),
            num(heavy, "error_keys"),
            num(heavy, "error_bytes"),
        ],
        [HEAVY, memory, serialized, 0, 0]
    );
    eprintln!(
        "cache:page: {HEAVY} keys, {memory} B memory ({:.1} % of {whole} B), {serialized} B in \
         file, error 0; (other) {} keys",
        memory as f64 * 100.0 / whole as f64,
        num(other, "keys")
    );
    assert!(
        memory * 100 >= whole * 40,
        "cache:page holds {memory} of {whole} bytes: under 40 %"
    );
    // It heads the table, with its share of the memory.
    let text = String::from_utf8(rdbscope(&["prefixes", "--depth", "2", dump]).stdout).unwrap();
    let table = text.split("Prefixes, depth 2").nth(1).unwrap();
    let first = table.lines().nth(4).unwrap();
    let share = format!("{:.1}%", memory as f64 * 100.0 / whole as f64);
    assert!(
        first.contains(" cache:page ") && first.contains(&share),
        "{first}"
    );
    eprintln!("{first}\nwhole test in {:?}", started.elapsed());
}
