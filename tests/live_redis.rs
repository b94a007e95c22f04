//! rdbscope against a live `redis-server` (Debian's 7.0.15): fill a server with every type and
//! encoding 7.0 can produce, `DEBUG RELOAD` it, ask the server what it made of each key, `SAVE`,
//! and check `rdbscope keys` says the same about both dumps: the one the server just loaded
//! (written by `DEBUG RELOAD`) and the one `SAVE` wrote afterwards.
//!
//! Needs `redis-server` installed (`apt-get install redis-server`); the test fails without it.

use base64::Engine;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[macro_use]
mod common;

use common::redis::{xreadgroup, Conn, RedisServer, Reply};

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

/// Deterministic pseudo-random bytes (xorshift64*), so incompressible values need no crate.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// Random lowercase letters and digits: printable, and too random for LZF to shrink.
fn random_text(len: usize, seed: u64) -> Vec<u8> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    random_bytes(len, seed)
        .into_iter()
        .map(|b| ALPHABET[b as usize % ALPHABET.len()])
        .collect()
}

fn repeat(byte: u8, len: usize) -> Vec<u8> {
    vec![byte; len]
}

/// `head` (`"SADD myset"`: command and key, no spaces in the key) followed by `items`, in
/// commands of at most 1000 items each, pipelined.
fn add(c: &mut Conn, head: &str, items: Vec<Vec<u8>>) {
    for chunk in items.chunks(1000) {
        let mut args: Vec<Vec<u8>> = head.split(' ').map(|w| w.as_bytes().to_vec()).collect();
        args.extend(chunk.iter().cloned());
        c.load(args);
    }
}

/// Items separated by spaces, as bytes.
fn words(text: &str) -> Vec<Vec<u8>> {
    text.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

/// `prefix0 prefix1 ...` over `range`.
fn numbered(prefix: &str, range: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    range.map(|i| format!("{prefix}{i}").into_bytes()).collect()
}

/// `0 m0 1 m1 ...`: score and member pairs for ZADD.
fn scored(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .flat_map(|i| [i.to_string().into_bytes(), format!("m{i}").into_bytes()])
        .collect()
}

/// `f0 v0 f1 v1 ...`: field and value pairs for HSET.
fn fields(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .flat_map(|i| [format!("f{i}").into_bytes(), format!("v{i}").into_bytes()])
        .collect()
}

fn config_set(c: &mut Conn, name: &str, value: &str) {
    c.ok(cmd!["CONFIG", "SET", name, value]);
}

const HOSTILE_KEYS: &[&[u8]] = &[
    b"<script>alert(1)</script>",
    b"=cmd|' /C calc'!A0",
    b"+SUM(A1:A9)",
    b"-2+3",
    b"@SUM(1)",
    b"\x1b[31mred alert\x1b[0m",
    b"line one\nline two",
    b"carriage\rreturn",
    b"tab\tkey",
    b"back\\slash",
    b"bin:\xff\x00key\xfe",
    b"\xc3\x28 invalid utf8",
    "ключ 🔑 é☃".as_bytes(),
    "bidi a\u{202e}b".as_bytes(),
    b"\"quoted,comma\"",
];

const SLOT_KEYS: &[&str] = &[
    "foo",
    "somekey",
    "hello",
    "{user1000}.following",
    "{user1000}.followers",
    "foo{}{bar}",
    "foo{{bar}}zap",
    "foo{bar}{zap}",
    "{}foo",
];

fn strings(c: &mut Conn) {
    let values: &[(&str, &[u8])] = &[
        // int encoding (string2l succeeds, at most 20 chars)
        ("str:int:zero", b"0"),
        ("str:int:shared", b"9999"),
        ("str:int:10000", b"10000"),
        ("str:int:neg", b"-123"),
        ("str:int:i8", b"-128"),
        ("str:int:i16", b"32767"),
        ("str:int:i32max", b"2147483647"),
        ("str:int:i32over", b"2147483648"),
        ("str:int:i32min", b"-2147483648"),
        ("str:int:i64max", b"9223372036854775807"),
        ("str:int:i64max-1", b"9223372036854775806"),
        ("str:int:i64min", b"-9223372036854775808"),
        // integer-looking, but not what string2l accepts
        ("str:notint:i64over", b"9223372036854775808"),
        ("str:notint:i64under", b"-9223372036854775809"),
        ("str:notint:20digits", b"12345678901234567890"),
        ("str:notint:leadzero", b"007"),
        ("str:notint:plus", b"+1"),
        ("str:notint:negzero", b"-0"),
        ("str:notint:space", b" 1"),
        ("str:notint:trailing", b"1 "),
        ("str:notint:float", b"3.14"),
        ("str:notint:exp", b"1e5"),
        ("str:notint:hex", b"0x10"),
        ("str:empty", b""),
        ("str:embstr:short", b"hello world"),
        ("str:binary", b"\x00\xff\r\n\x1b\x00"),
    ];
    for (k, v) in values {
        c.load(cmd!["SET", k, v]);
    }
    let sized: Vec<(&str, Vec<u8>)> = vec![
        ("str:embstr:44", random_text(44, 1)),
        ("str:embstr:44:lzf", repeat(b'a', 44)),
        ("str:embstr:21:lzf", repeat(b'b', 21)),
        ("str:embstr:30:lzf", repeat(b'c', 30)),
        ("str:raw:45", random_text(45, 2)),
        ("str:raw:45:lzf", repeat(b'a', 45)),
        ("str:raw:100", random_text(100, 3)),
        ("str:raw:big:lzf", b"abcdefgh".repeat(2560)),
        ("str:raw:big:random", random_bytes(20_000, 4)),
        ("str:raw:big:text", random_text(12_000, 5)),
    ];
    for (k, v) in sized {
        c.load(cmd!["SET", k, v]);
    }
    for key in HOSTILE_KEYS {
        c.load(cmd!["SET", key, "hostile"]);
    }
    for key in SLOT_KEYS {
        c.load(cmd!["SET", key, "slot"]);
    }
    c.replies();
}

fn lists(c: &mut Conn) {
    let small = "a bb 1 -2 9223372036854775807 -9223372036854775808 12345678901234567890";
    add(c, "RPUSH list:small", [words(small), cmd![""]].concat());
    // > 8 KB: several listpack nodes.
    let items: Vec<Vec<u8>> = (0..1000).map(|i| random_text(100, 100 + i)).collect();
    add(c, "RPUSH list:multinode", items);
    add(c, "RPUSH list:ints", numbered("", 0..3000));
    add(c, "RPUSH list:big", numbered("element:", 0..100_000));
    c.replies();

    // Inner nodes LZF-compressed. Left on until after SAVE, so lists loaded by DEBUG RELOAD
    // are compressed in the second dump too.
    config_set(c, "list-compress-depth", "1");
    let items: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("compressible item {i:06} {}", "z".repeat(40)).into_bytes())
        .collect();
    add(c, "RPUSH list:compressed", items);

    // Plain nodes: elements above the packed threshold get a node of their own.
    c.ok(cmd!["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"]);
    c.call(cmd![
        "RPUSH",
        "list:plain",
        "small",
        random_text(200, 7),
        "tiny",
        random_text(300, 8),
        repeat(b'p', 150),
        "last"
    ]);
    c.call(cmd!["RPUSH", "list:plain:only", random_text(500, 9)]);
    let mut items: Vec<Vec<u8>> = (0..20).map(|i| repeat(b'q', 120 + i)).collect();
    items.extend(numbered("s", 0..50));
    add(c, "RPUSH list:plain:many", items);
    c.replies();
    c.ok(cmd!["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]);
}

fn sets(c: &mut Conn) {
    add(c, "SADD set:int16", numbered("", 1..101));
    add(
        c,
        "SADD set:int32",
        words("100000 -70000 2147483647 -2147483648 0 1 2"),
    );
    add(
        c,
        "SADD set:int64",
        words("5000000000 -9223372036854775808 9223372036854775807 1"),
    );
    add(c, "SADD set:intset512", numbered("", 0..512));
    add(c, "SADD set:intset513", numbered("", 0..513));
    add(c, "SADD set:str", words("a b c"));
    add(c, "SADD set:mixed", words("1 2 x"));
    add(c, "SADD set:leadzero", words("1 2 007"));
    add(c, "SADD set:negzero", words("1 -0"));
    add(c, "SADD set:plus", words("1 +2"));
    add(c, "SADD set:hugeint", words("1 12345678901234567890"));
    add(c, "SADD set:big", numbered("member:", 0..100_000));
    // Hashtable in memory, only integers left: saved as a plain set, loaded as an intset.
    add(
        c,
        "SADD set:shrunk:ints",
        [numbered("", 0..20), words("x")].concat(),
    );
    add(c, "SREM set:shrunk:ints", words("x"));
    add(c, "SADD set:shrunk:600", numbered("", 0..600));
    add(c, "SREM set:shrunk:600", numbered("", 10..600));
    add(c, "SADD set:shrunk:strs", numbered("m", 0..600));
    add(c, "SREM set:shrunk:strs", numbered("m", 10..600));
    c.replies();
    // An intset above today's limit (saved as an intset, converted on load).
    config_set(c, "set-max-intset-entries", "1000");
    add(c, "SADD set:tweak:intset600", numbered("", 0..600));
    c.replies();
    config_set(c, "set-max-intset-entries", "512");
}

fn zsets(c: &mut Conn) {
    add(c, "ZADD zset:lp128", scored(128));
    add(c, "ZADD zset:lp129", scored(129));
    add(
        c,
        "ZADD zset:m64",
        [cmd!["1", repeat(b'x', 64)], scored(5)].concat(),
    );
    add(
        c,
        "ZADD zset:m65",
        [cmd!["1", repeat(b'x', 65)], scored(5)].concat(),
    );
    let odd_scores = "inf a -inf b 1.5 c -0 d 1e300 e 3 f -2.5 g 0.1 h 12345678901234567890 i";
    add(c, "ZADD zset:scores", words(odd_scores));
    add(c, "ZADD zset:big", scored(100_000));
    // Skiplist in memory, shrunk: saved as zset_2, loaded as a listpack...
    add(c, "ZADD zset:shrunk", scored(200));
    c.load(cmd!["ZREMRANGEBYRANK", "zset:shrunk", "5", "-1"]);
    // ...unless a member is too long.
    add(
        c,
        "ZADD zset:shrunk:long",
        [cmd!["-1", repeat(b'L', 65)], scored(200)].concat(),
    );
    c.load(cmd!["ZREMRANGEBYRANK", "zset:shrunk:long", "3", "-1"]);
    c.replies();
    // Listpacks beyond today's limits (saved as listpacks).
    config_set(c, "zset-max-listpack-entries", "1000");
    add(c, "ZADD zset:tweak:200", scored(200));
    c.replies();
    config_set(c, "zset-max-listpack-entries", "128");
    config_set(c, "zset-max-listpack-value", "1000");
    add(
        c,
        "ZADD zset:tweak:longmember",
        cmd!["1", random_text(100, 11), "2", "short"],
    );
    c.replies();
    config_set(c, "zset-max-listpack-value", "64");
}

fn hashes(c: &mut Conn) {
    add(c, "HSET hash:lp512", fields(512));
    add(c, "HSET hash:lp513", fields(513));
    add(
        c,
        "HSET hash:v64",
        [cmd!["long", repeat(b'v', 64)], fields(3)].concat(),
    );
    add(
        c,
        "HSET hash:v65",
        [cmd!["long", repeat(b'v', 65)], fields(3)].concat(),
    );
    add(
        c,
        "HSET hash:f64",
        [cmd![repeat(b'k', 64), "x"], fields(3)].concat(),
    );
    add(
        c,
        "HSET hash:f65",
        [cmd![repeat(b'k', 65), "x"], fields(3)].concat(),
    );
    add(
        c,
        "HSET hash:ints",
        cmd![
            "1",
            "2",
            "-3",
            "-4",
            "5",
            "9223372036854775807",
            "007",
            "",
            "",
            "e"
        ],
    );
    add(c, "HSET hash:big", fields(100_000));
    // Hashtable in memory, shrunk: saved as a plain hash, loaded as a listpack...
    add(c, "HSET hash:shrunk", fields(600));
    add(c, "HDEL hash:shrunk", numbered("f", 5..600));
    // ...unless a value is too long.
    add(
        c,
        "HSET hash:shrunk:long",
        [fields(600), cmd!["long", repeat(b'v', 65)]].concat(),
    );
    add(c, "HDEL hash:shrunk:long", numbered("f", 2..600));
    c.replies();
    // Listpacks beyond today's limits (saved as listpacks).
    config_set(c, "hash-max-listpack-entries", "1000");
    add(c, "HSET hash:tweak:600", fields(600));
    c.replies();
    config_set(c, "hash-max-listpack-entries", "512");
    config_set(c, "hash-max-listpack-value", "1000");
    add(
        c,
        "HSET hash:tweak:longvalue",
        cmd!["long", random_text(100, 12), "short", "1"],
    );
    c.replies();
    config_set(c, "hash-max-listpack-value", "64");
}

fn xadd_id(c: &mut Conn, key: &str, fields: &[&str]) -> Vec<u8> {
    let mut args = cmd!["XADD", key, "*"];
    args.extend(fields.iter().map(|f| f.as_bytes().to_vec()));
    c.call(args).bytes()
}

fn streams(c: &mut Conn) {
    // Empty streams, three ways.
    let id = xadd_id(c, "stream:empty:xdel", &["a", "1"]);
    c.call(cmd!["XDEL", "stream:empty:xdel", id]);
    for i in 0..5 {
        c.load(cmd!["XADD", "stream:empty:xtrim", "*", "i", i.to_string()]);
    }
    c.load(cmd!["XTRIM", "stream:empty:xtrim", "MAXLEN", "0"]);
    c.load(cmd![
        "XGROUP",
        "CREATE",
        "stream:empty:mkstream",
        "g",
        "$",
        "MKSTREAM"
    ]);
    // Entries with the same and with different fields, and explicit IDs.
    for i in 0..10 {
        c.load(cmd![
            "XADD",
            "stream:entries",
            "*",
            "name",
            format!("n{i}"),
            "n",
            i.to_string()
        ]);
    }
    c.load(cmd![
        "XADD",
        "stream:entries",
        "*",
        "other",
        "fields",
        "here",
        "-42"
    ]);
    for id in ["1-1", "1-2", "5-0", "9999999999999-5"] {
        c.load(cmd!["XADD", "stream:ids", id, "f", id]);
    }
    c.replies();
    // Consumer groups, consumers, pending entries (one of them deleted from the stream).
    let ids: Vec<Vec<u8>> = (0..20)
        .map(|i| xadd_id(c, "stream:groups", &["i", &i.to_string()]))
        .collect();
    c.ok(cmd!["XGROUP", "CREATE", "stream:groups", "g1", "0"]);
    c.ok(cmd!["XGROUP", "CREATE", "stream:groups", "g2", "$"]);
    c.ok(cmd!["XGROUP", "CREATE", "stream:groups", "g3", "0"]);
    let read = |c: &mut Conn, group: &str, consumer: &str, count: &str| {
        let r = c.call(xreadgroup("stream:groups", group, consumer, count));
        assert!(matches!(r, Reply::Array(_)), "XREADGROUP: {r:?}");
    };
    read(c, "g1", "alice", "5");
    read(c, "g1", "bob", "3");
    read(c, "g3", "carol", "20");
    c.call(cmd!["XACK", "stream:groups", "g1", ids[0].clone()]);
    c.call(cmd![
        "XGROUP",
        "CREATECONSUMER",
        "stream:groups",
        "g1",
        "dave"
    ]);
    c.call(cmd!["XDEL", "stream:groups", ids[1].clone()]);
    // Many listpack nodes (stream-node-max-entries 100).
    for i in 0..1000 {
        c.load(cmd![
            "XADD",
            "stream:nodes1000",
            "*",
            "i",
            i.to_string(),
            "pad",
            "xxxxxxxx"
        ]);
    }
    for i in 0..100_000 {
        c.load(cmd!["XADD", "stream:big", "*", "i", i.to_string()]);
    }
    c.replies();
    // An empty stream with a group and a consumer.
    let id = xadd_id(c, "stream:empty:groups", &["a", "1"]);
    c.ok(cmd!["XGROUP", "CREATE", "stream:empty:groups", "g", "0"]);
    read_group(c, "stream:empty:groups");
    c.call(cmd!["XDEL", "stream:empty:groups", id]);
}

fn read_group(c: &mut Conn, key: &str) {
    c.call(cmd!["XREADGROUP", "GROUP", "g", "eve", "STREAMS", key, ">"])
        .array();
}

fn expiries(c: &mut Conn) {
    let hour = "3600000";
    c.load(cmd!["SET", "ttl:str:rel", "v", "PX", "5000000"]);
    c.load(cmd!["SET", "ttl:str:pexpire", "12345"]);
    c.load(cmd!["PEXPIRE", "ttl:str:pexpire", hour]);
    c.load(cmd!["SET", "ttl:str:abs", "v"]);
    c.load(cmd!["PEXPIREAT", "ttl:str:abs", "4102444800000"]);
    c.load(cmd!["SET", "ttl:str:year9999", random_text(100, 13)]);
    c.load(cmd!["PEXPIREAT", "ttl:str:year9999", "253402300799999"]);
    c.load(cmd!["RPUSH", "ttl:list", "a", "b"]);
    c.load(cmd!["PEXPIRE", "ttl:list", hour]);
    c.load(cmd!["SADD", "ttl:set", "1", "2"]);
    c.load(cmd!["PEXPIREAT", "ttl:set", "4102444800000"]);
    c.load(cmd!["ZADD", "ttl:zset", "1", "a"]);
    c.load(cmd!["PEXPIRE", "ttl:zset", hour]);
    c.load(cmd!["HSET", "ttl:hash", "f", "v"]);
    c.load(cmd!["PEXPIREAT", "ttl:hash", "4102444800000"]);
    c.load(cmd!["XADD", "ttl:stream", "*", "f", "v"]);
    c.load(cmd!["PEXPIRE", "ttl:stream", hour]);
    // Expiry on big values too.
    c.load(cmd!["PEXPIRE", "list:big", "7200000"]);
    c.load(cmd!["PEXPIREAT", "hash:big", "4102444800000"]);
    c.load(cmd!["PEXPIRE", "stream:big", "7200000"]);
    c.load(cmd!["PEXPIREAT", "str:raw:big:lzf", "4102444800000"]);
    c.load(cmd!["PEXPIRE", "str:int:i64min", hour]);
    c.replies();
}

/// A second database: same key names as db 0 with other types, an empty key, binary keys.
fn db2(c: &mut Conn) {
    c.load(cmd!["HSET", "foo", "field", "value"]);
    c.load(cmd!["SET", "", "the empty key"]);
    c.load(cmd!["SET", "str:int:neg", "-9223372036854775808"]);
    c.load(cmd!["SET", b"bin:\xff\x00key\xfe", random_text(60, 14)]);
    c.load(cmd!["RPUSH", "list:small", "x", "y"]);
    c.load(cmd!["SADD", "set:int16", "1", "2", "3"]);
    c.load(cmd!["SADD", "set:str", "a", "b"]);
    c.load(cmd!["ZADD", "zset:lp128", "1", "one"]);
    c.load(cmd!["XADD", "stream:entries", "*", "a", "b"]);
    c.load(cmd!["PEXPIREAT", "stream:entries", "4102444800000"]);
    c.load(cmd!["PEXPIREAT", "foo", "4102444800000"]);
    c.load(cmd!["PEXPIRE", b"bin:\xff\x00key\xfe", "3600000"]);
    c.load(cmd!["SET", "\x1b]0;title\x07", "osc escape"]);
    c.replies();
    add(c, "HSET hash:lp513", fields(513));
    add(c, "SADD set:intset513", numbered("", 0..513));
    c.replies();
}

fn populate(c: &mut Conn) {
    c.ok(cmd!["SELECT", "0"]);
    strings(c);
    lists(c);
    sets(c);
    zsets(c);
    hashes(c);
    streams(c);
    expiries(c);
    c.ok(cmd!["SELECT", "2"]);
    db2(c);
    c.ok(cmd!["SELECT", "15"]);
    c.ok(cmd!["SET", "last:db", "15"]);
    c.ok(cmd!["SELECT", "0"]);
    // A function library: a non-key record the parser must step over.
    let library =
        "#!lua name=rdbscopetest\nredis.register_function('ping1', function() return 1 end)";
    assert_eq!(
        c.call(cmd!["FUNCTION", "LOAD", library]).text(),
        "rdbscopetest"
    );
}

// ---------------------------------------------------------------------------------------------
// What the server says
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Truth {
    type_name: String,
    encoding: String,
    elements: u64,
    expiry_ms: Option<i64>,
}

type KeyId = (u64, Vec<u8>);

fn server_truth(c: &mut Conn) -> BTreeMap<KeyId, Truth> {
    let mut truth = BTreeMap::new();
    for db in 0..16u64 {
        let keys = c.keys_in_db(db);
        for k in &keys {
            c.send(cmd!["TYPE", k]);
            c.send(cmd!["OBJECT", "ENCODING", k]);
            c.send(cmd!["PEXPIRETIME", k]);
        }
        let first = c.replies();
        for (k, r) in keys.iter().zip(first.chunks(3)) {
            let length = match r[0].text().as_str() {
                "string" => "STRLEN",
                "list" => "LLEN",
                "set" => "SCARD",
                "zset" => "ZCARD",
                "hash" => "HLEN",
                "stream" => "XLEN",
                other => panic!("unexpected type {other}"),
            };
            c.send(cmd![length, k]);
        }
        let lengths = c.replies();
        for ((k, r), len) in keys.into_iter().zip(first.chunks(3)).zip(lengths) {
            let expire = r[2].int();
            truth.insert(
                (db, k),
                Truth {
                    type_name: r[0].text(),
                    encoding: r[1].text(),
                    elements: len.int() as u64,
                    expiry_ms: (expire >= 0).then_some(expire),
                },
            );
        }
    }
    truth
}

// ---------------------------------------------------------------------------------------------
// Cluster slots, computed here independently (CRC16-CCITT/XMODEM of the hash tag)
// ---------------------------------------------------------------------------------------------

fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

fn key_slot(key: &[u8]) -> u64 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    (crc16(hashed) & 16383) as u64
}

// ---------------------------------------------------------------------------------------------
// rdbscope
// ---------------------------------------------------------------------------------------------

fn show(key: &[u8]) -> String {
    key.escape_ascii().to_string()
}

fn run_rdbscope(dump: &Path, format: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("keys")
        .arg(dump)
        .args(["--format", format])
        .output()
        .expect("run rdbscope")
}

/// Parses `keys --format jsonl` output; problems go to `mismatches`.
fn rdbscope_rows(dump: &Path, name: &str, mismatches: &mut Vec<String>) -> BTreeMap<KeyId, Value> {
    let out = run_rdbscope(dump, "jsonl");
    if !out.status.success() {
        mismatches.push(format!(
            "{name}: rdbscope keys --format jsonl exited with {}; stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut rows = BTreeMap::new();
    for line in out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let row: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                mismatches.push(format!("{name}: unparsable row ({e}): {}", show(line)));
                continue;
            }
        };
        let key = match row.get("key_base64").and_then(Value::as_str) {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("key_base64 is standard base64"),
            None => row["key"].as_str().expect("key").as_bytes().to_vec(),
        };
        let db = row["db"].as_u64().expect("db");
        if let Some(old) = rows.insert((db, key.clone()), row) {
            mismatches.push(format!(
                "{name}: db{db} {}: listed twice ({old})",
                show(&key)
            ));
        }
    }
    rows
}

fn compare(
    name: &str,
    rows: &BTreeMap<KeyId, Value>,
    truth: &BTreeMap<KeyId, Truth>,
    mismatches: &mut Vec<String>,
) {
    for (db, key) in truth.keys().filter(|k| !rows.contains_key(*k)) {
        mismatches.push(format!(
            "{name}: db{db} {}: missing from rdbscope",
            show(key)
        ));
    }
    for ((db, key), row) in rows {
        let Some(t) = truth.get(&(*db, key.clone())) else {
            mismatches.push(format!("{name}: db{db} {}: not on the server", show(key)));
            continue;
        };
        let mut check = |field: &str, expected: Value| {
            if row[field] != expected {
                mismatches.push(format!(
                    "{name}: db{db} {} ({} {}): {field}: expected {expected}, got {}",
                    show(key),
                    t.type_name,
                    t.encoding,
                    row[field]
                ));
            }
        };
        check("type", t.type_name.clone().into());
        check("encoding", t.encoding.clone().into());
        if t.type_name == "string" {
            // A string holds no elements; STRLEN is the bytes of its one value.
            check("elements", 0.into());
            check("largest_element_bytes", t.elements.into());
        } else {
            check("elements", t.elements.into());
        }
        check("expiry_ms", t.expiry_ms.into());
        // The server runs with maxmemory-policy noeviction: no LRU idle or LFU counter saved.
        check("idle_s", Value::Null);
        check("lfu_freq", Value::Null);
        check("slot", key_slot(key).into());
        // The exact bytes ride along exactly when the key is not plain printable text.
        let printable = std::str::from_utf8(key).is_ok_and(|k| {
            !k.chars()
                .any(|c| c == '\\' || c.is_control() || rdbscope::text::invisible::is_invisible(c))
        });
        check(
            "key_base64",
            if printable {
                Value::Null
            } else {
                base64::engine::general_purpose::STANDARD.encode(key).into()
            },
        );
    }
    // Known values, independent of the CRC16 above.
    let slot = |k: &str| {
        rows.get(&(0, k.as_bytes().to_vec()))
            .map(|r| r["slot"].clone())
    };
    for (k, expected) in [("foo", 12182), ("somekey", 11058), ("hello", 866)] {
        if slot(k) != Some(expected.into()) {
            mismatches.push(format!(
                "{name}: slot of {k:?}: expected {expected}, got {:?}",
                slot(k)
            ));
        }
    }
    if slot("{user1000}.following") != slot("{user1000}.followers") {
        mismatches.push(format!(
            "{name}: {{user1000}}.following and .followers in different slots: {:?} vs {:?}",
            slot("{user1000}.following"),
            slot("{user1000}.followers")
        ));
    }
}

/// CSV output: hostile keys are escaped and neutralized, one line per key.
fn check_csv(dump: &Path, name: &str, key_count: usize, mismatches: &mut Vec<String>) {
    let out = run_rdbscope(dump, "csv");
    if !out.status.success() {
        mismatches.push(format!(
            "{name}: rdbscope keys --format csv exited with {}; stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    let lines = match lines.split_last() {
        Some(([], rest)) => rest,
        _ => &lines[..],
    };
    for line in lines.iter().filter(|l| l.contains(&0x1b)) {
        mismatches.push(format!(
            "{name}: CSV line holds a raw ESC byte: {}",
            show(line)
        ));
    }
    if lines.len() != key_count + 1 {
        mismatches.push(format!(
            "{name}: CSV has {} lines, expected {} keys + 1 header",
            lines.len(),
            key_count
        ));
    }
    let mut reader = csv::ReaderBuilder::new().from_reader(&out.stdout[..]);
    let key_cells: Vec<String> = reader
        .byte_records()
        .filter_map(Result::ok)
        .map(|r| String::from_utf8_lossy(&r[1]).into_owned())
        .collect();
    for needle in ["=cmd|' /C calc'!A0", "+SUM(A1:A9)", "-2+3", "@SUM(1)"] {
        let cells: Vec<&String> = key_cells.iter().filter(|c| c.contains(needle)).collect();
        if cells.len() != 1 || !cells[0].starts_with('\'') {
            mismatches.push(format!(
                "{name}: CSV key cell for {needle:?} should be one cell starting with ', got {cells:?}"
            ));
        }
    }
}

/// `OBJECT <sub> key` (FREQ or IDLETIME; neither touches the key) for every key.
fn object_numbers(c: &mut Conn, keys: &[KeyId], sub: &str) -> BTreeMap<KeyId, i64> {
    let mut out = BTreeMap::new();
    for db in 0..16u64 {
        let in_db: Vec<&KeyId> = keys.iter().filter(|(d, _)| *d == db).collect();
        if in_db.is_empty() {
            continue;
        }
        c.ok(cmd!["SELECT", db.to_string()]);
        for (_, k) in &in_db {
            c.send(cmd!["OBJECT", sub, k]);
        }
        for (id, r) in in_db.into_iter().zip(c.replies()) {
            out.insert(id.clone(), r.int());
        }
    }
    c.ok(cmd!["SELECT", "0"]);
    out
}

/// Under an eviction policy the dump carries each key's LFU counter or LRU idle time: reload
/// under the policy, touch a few keys, SAVE, and check `field` lies between what OBJECT said
/// just before and just after the SAVE (decay and idle time only move one way).
fn check_access_metadata(
    c: &mut Conn,
    server: &RedisServer,
    truth: &BTreeMap<KeyId, Truth>,
    policy: &str,
    mismatches: &mut Vec<String>,
) {
    let (field, other, sub) = match policy {
        "allkeys-lfu" => ("lfu_freq", "idle_s", "FREQ"),
        _ => ("idle_s", "lfu_freq", "IDLETIME"),
    };
    config_set(c, "maxmemory-policy", policy);
    // Every access counts (no logarithmic damping), so counters are predictable.
    config_set(c, "lfu-log-factor", "0");
    c.ok(cmd!["DEBUG", "RELOAD"]);
    c.ok(cmd!["SELECT", "0"]);
    if field == "idle_s" {
        std::thread::sleep(Duration::from_millis(2100));
    }
    for (key, times) in [("foo", 100), ("hash:big", 300), ("stream:groups", 7)] {
        for _ in 0..times {
            c.load(cmd!["TOUCH", key]);
        }
    }
    c.replies();
    let keys: Vec<KeyId> = truth.keys().cloned().collect();
    let before = object_numbers(c, &keys, sub);
    c.ok(cmd!["SAVE"]);
    let after = object_numbers(c, &keys, sub);
    let name = format!("{policy}.rdb");
    let dump = server.dir.path().join(&name);
    std::fs::copy(server.dir.path().join("dump.rdb"), &dump).expect("copy dump");
    let rows = rdbscope_rows(&dump, &name, mismatches);
    let listed: BTreeSet<&KeyId> = rows.keys().collect();
    if listed != truth.keys().collect() {
        mismatches.push(format!(
            "{name}: rdbscope lists {} keys, the server has {}",
            listed.len(),
            truth.len()
        ));
    }
    for (id, row) in &rows {
        let (Some(&b), Some(&a)) = (before.get(id), after.get(id)) else {
            continue;
        };
        let (lo, hi) = (a.min(b), a.max(b));
        let ok = row[field].as_i64().is_some_and(|v| (lo..=hi).contains(&v));
        if !ok || !row[other].is_null() {
            mismatches.push(format!(
                "{name}: db{} {}: {field}: expected {lo}..={hi} (OBJECT {sub}), got {}; {other}: expected null, got {}",
                id.0,
                show(&id.1),
                row[field],
                row[other]
            ));
        }
    }
    // The counters really moved: TOUCHed keys stand out.
    let hot = (0, b"foo".to_vec());
    let spread: BTreeSet<i64> = after.values().copied().collect();
    assert!(
        spread.len() > 1,
        "{policy}: every key has OBJECT {sub} {spread:?}; foo: {:?}",
        after.get(&hot)
    );
}

#[test]
fn rdbscope_matches_a_live_redis_server() {
    let started = Instant::now();
    let server = RedisServer::start();
    let mut c = server.connect();
    populate(&mut c);
    eprintln!("populated in {:.1?}", started.elapsed());

    // Save, flush, load: OBJECT ENCODING now says what the server made of reload.rdb.
    c.ok(cmd!["DEBUG", "RELOAD"]);
    let reloaded = server.dir.path().join("reload.rdb");
    std::fs::copy(server.dir.path().join("dump.rdb"), &reloaded).expect("copy reload dump");
    let truth = server_truth(&mut c);
    c.ok(cmd!["SAVE"]);
    let saved = server.dir.path().join("dump.rdb");
    eprintln!(
        "{} keys, reloaded and saved in {:.1?}",
        truth.len(),
        started.elapsed()
    );

    // The data came out as intended (a check on the test, not on rdbscope).
    let pairs: BTreeSet<(String, String)> = truth
        .values()
        .map(|t| (t.type_name.clone(), t.encoding.clone()))
        .collect();
    for (ty, enc) in [
        ("string", "int"),
        ("string", "embstr"),
        ("string", "raw"),
        ("list", "quicklist"),
        ("set", "intset"),
        ("set", "hashtable"),
        ("zset", "listpack"),
        ("zset", "skiplist"),
        ("hash", "listpack"),
        ("hash", "hashtable"),
        ("stream", "stream"),
    ] {
        assert!(
            pairs.contains(&(ty.to_string(), enc.to_string())),
            "the server holds no {ty} with encoding {enc}: {pairs:?}"
        );
    }
    for (key, encoding) in [
        ("set:intset512", "intset"),
        ("set:intset513", "hashtable"),
        ("zset:lp128", "listpack"),
        ("zset:lp129", "skiplist"),
        ("hash:lp512", "listpack"),
        ("hash:lp513", "hashtable"),
    ] {
        assert_eq!(
            truth[&(0, key.as_bytes().to_vec())].encoding,
            encoding,
            "{key}"
        );
    }
    assert!(truth.keys().any(|(db, _)| *db == 2), "no key in db 2");

    let mut mismatches = Vec::new();
    for (name, dump) in [("reload.rdb", &reloaded), ("dump.rdb", &saved)] {
        let rows = rdbscope_rows(dump, name, &mut mismatches);
        compare(name, &rows, &truth, &mut mismatches);
        check_csv(dump, name, truth.len(), &mut mismatches);
    }
    eprintln!("compared in {:.1?}", started.elapsed());
    for policy in ["allkeys-lfu", "allkeys-lru"] {
        check_access_metadata(&mut c, &server, &truth, policy, &mut mismatches);
    }
    eprintln!("LFU and LRU dumps compared in {:.1?}", started.elapsed());
    assert!(
        mismatches.is_empty(),
        "{} mismatches between rdbscope and redis-server:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
