//! The RAM model: for each key, the bytes `MEMORY USAGE key SAMPLES 0` reports on the
//! server that wrote the dump.
//!
//! `MEMORY USAGE` is `objectComputeSize` (object.c) plus the key's sds and its dict entry.
//! This module rebuilds that sum from the structures the server holds for the encoding it
//! would choose: jemalloc size classes for every allocation, sds/mstr headers, dict
//! buckets, listpack/quicklist/skiplist/intset/stream layouts. Struct sizes are those of a
//! 64-bit build; where they changed between versions the profile picks them. Nothing here
//! is copied from Redis: the numbers are facts read from its sources and checked against
//! real servers (tests/real_server_truth.rs, tests/live_redis.rs).

use super::allocations::KeyAllocations;
use super::allocator::{sds_header, Allocator, ByAllocator};
use super::array::ArrayFacts;
use super::encoding::{Encoding, LISTPACK_OVERHEAD};
use super::facts::{MemoryFacts, StreamFacts};
use super::hyperloglog;
use super::server::{Family, ServerProfile, Version};
use crate::rdb::{RedisType, ValueFacts, ValueType};

/// `robj`: type/encoding/lru bits, refcount, pointer.
pub const ROBJ: u64 = 16;
/// `dictEntry`: key, value, next.
pub const DICT_ENTRY: u64 = 24;
/// `dict`: type, two tables, two counts, rehash index, pause counters and exponents.
const DICT: u64 = 56;
/// `quicklist` header and `quicklistNode`.
const QUICKLIST: u64 = 40;
const QUICKLIST_NODE: u64 = 40;
/// `zset` (dict + skiplist pointers) and `zskiplist` (header, tail, length, level).
const ZSET: u64 = 16;
const ZSKIPLIST: u64 = 32;
/// Valkey 9's `zskiplist` with its header node inline: 32 bytes and 31 further levels.
const VALKEY9_ZSKIPLIST: u64 = 32 + 31 * 16;
/// The skiplist header node: a node with all 32 levels (24 + 32 × 16 bytes).
const ZSKIPLIST_HEADER: u64 = 24 + 32 * 16;
/// `listpackEx`: expiry metadata, key reference, listpack pointer (Redis 7.4+).
const LISTPACK_EX: u64 = 32;
/// `stream`, `streamCG`, `streamNACK`.
const STREAM: u64 = 80;
const STREAM_CG: u64 = 40;
const STREAM_NACK: u64 = 24;
/// `rax`: head pointer, element and node counts, tracked allocation size (Valkey 8.1+).
const RAX: u64 = 32;
/// `hashTemplateArray` before its value pointers: the template pointer.
const TEMPLATE_ARRAY: u64 = 8;

/// Expected allocation of a skiplist node over the random level distribution
/// (P(level = k) = 0.75 × 0.25^(k-1), node = 24 + 16 × level bytes), in 1/1000 bytes.
fn expected_skiplist_node_millis(alloc: Allocator) -> u64 {
    let mut total = 0f64;
    let mut p = 0.75f64;
    for level in 1..=32u64 {
        total += p * alloc.class(24 + 16 * level) as f64;
        p *= 0.25;
    }
    (total * 1000.0).round() as u64
}

/// The expected allocations of `n` skiplist nodes under every candidate.
fn skiplist_nodes(n: u64) -> ByAllocator {
    ByAllocator(Allocator::ALL.map(|a| (n * expected_skiplist_node_millis(a)).div_ceil(1000)))
}

/// Hash-table buckets for `n` entries: the smallest power of two holding them (min 4).
fn buckets(n: u64) -> u64 {
    n.max(4).next_power_of_two()
}

/// How a pre-7.2 server grew a set, sorted-set or hash dict: the table it started from
/// (`size` buckets, 0 for an empty dict) and the rehash steps each later
/// insert performs (index → steps: 1 for `dictAdd` alone, 2 with a `dictFind` before it).
struct Growth {
    size: u64,
    steps: fn(u64, &ServerProfile) -> u64,
}

/// Buckets (both tables while rehashing) of a dict grown to `n` entries one insert at a
/// time: after each doubling at `S` entries the old table's ~63 % occupied buckets move one
/// per rehash step.
fn grown_buckets(profile: &ServerProfile, n: u64, g: Growth) -> u64 {
    if !(profile.family == Family::Redis && profile.version < Version(7, 2, 0)) {
        return buckets(n);
    }
    let start = g.size.max(4);
    if n <= start {
        return buckets(n).max(g.size);
    }
    // The last doubling: at S entries (S ≥ start), on the (S+1)-th insert.
    let s = (n - 1).next_power_of_two().max(start);
    let s = if s >= n { s / 2 } else { s };
    if s < start {
        return start;
    }
    let occupied = s as f64 * (1.0 - (1.0 - 1.0 / s as f64).powf(s as f64));
    let steps: u64 = (s + 1..n).map(|i| (g.steps)(i, profile)).sum();
    if (steps as f64) < occupied {
        3 * s
    } else {
        2 * s
    }
}

/// `rax`: head pointer, element and node counts (Redis, Valkey before 8.1).
const RAX_UNTRACKED: u64 = 24;
/// `streamConsumer`: seen time, name, PEL; Redis 7.2+ and Valkey add the active time.
fn stream_consumer(profile: &ServerProfile) -> u64 {
    if profile.version >= Version(7, 2, 0) {
        32
    } else {
        24
    }
}

/// A stream's `MEMORY USAGE`: its struct, radix trees, node listpacks (at their
/// allocation), groups, pending entries and consumers. Redis sizes a radix tree by
/// `streamRadixTreeMemoryUsage`, a fixed 244 bytes a node and 16 an ID; Valkey 8.1+ by
/// the `rax` struct and every node at its allocation size.
fn stream_usage(profile: &ServerProfile, a: Allocator, s: &ValueFacts, m: &StreamFacts) -> u64 {
    let Some(st) = &s.stream else {
        return ROBJ + STREAM;
    };
    let rax = |elements: u64, nodes: u64, node_bytes: u64, trees: u64| {
        if profile.valkey_embedded_keys() {
            trees * a.class(RAX) + node_bytes
        } else {
            rax_usage(elements, nodes)
        }
    };
    let groups = st.groups * STREAM_CG
        + st.pending * STREAM_NACK
        + st.consumers * stream_consumer(profile)
        + m.consumer_name_bytes
        + rax(
            m.pel_entries,
            m.pel_rax_nodes,
            m.pel_rax_bytes[a],
            st.groups + st.consumers,
        );
    ROBJ + STREAM
        + rax(
            st.nodes,
            m.stream_ids.nodes(),
            m.stream_ids.node_bytes()[a],
            1,
        )
        + m.stream_node_allocs[a]
        + m.stream_last_node_alloc[a]
        + groups
}

/// What a stream's allocations add up to under the profile's allocator, where
/// [`stream_usage`] estimates: the object (unless Valkey 8.1+ embeds the key in it,
/// counted with the key) and stream structs, each radix tree's struct and nodes, the node
/// listpacks, per group its struct and two radix trees (pending entries, consumers), per
/// pending entry its NACK, per consumer its struct and radix tree, and the names (see
/// [`StreamFacts::name_allocs`]). `None` when the value was not walked.
fn stream_allocations(
    profile: &ServerProfile,
    a: Allocator,
    s: &ValueFacts,
    m: &StreamFacts,
) -> Option<u64> {
    let st = s.stream.as_ref()?;
    let (object, rax) = if profile.valkey_embedded_keys() {
        (ROBJ, a.class(RAX))
    } else {
        (a.class(ROBJ), a.class(RAX_UNTRACKED))
    };
    let groups_tree = if st.groups > 0 { rax } else { 0 };
    Some(
        object
            + a.class(STREAM)
            + rax
            + m.stream_ids.node_bytes()[a]
            + m.stream_node_allocs[a]
            + m.stream_last_node_alloc[a]
            + groups_tree
            + st.groups * (a.class(STREAM_CG) + 2 * rax)
            + st.pending * a.class(STREAM_NACK)
            + st.consumers * (a.class(stream_consumer(profile)) + rax)
            + m.pel_rax_bytes[a]
            + m.name_allocs[a],
    )
}

/// `streamRadixTreeMemoryUsage`: 16 bytes per ID plus a fixed 244 per radix node.
fn rax_usage(elements: u64, nodes: u64) -> u64 {
    elements * 16 + nodes * (4 + 8 * 30)
}

/// Memory `used_memory` counts for a db beyond its keys' `MEMORY USAGE`: the bucket
/// arrays of the keyspace and expires tables, and the expires dict's entries (the key
/// itself is shared with the keyspace).
pub fn db_overhead(profile: &ServerProfile, keys: u64, expires: u64) -> u64 {
    if profile.valkey_embedded_keys() {
        // Valkey 8.1+: two tables of pointers to the value objects, which hold the keys.
        let table = |n: u64| {
            if n == 0 {
                0
            } else {
                valkey_hashtable(0, n, TableGrowth::Rehashed)
            }
        };
        return table(keys) + table(expires);
    }
    let table = |n: u64| if n == 0 { 0 } else { DICT + 8 * buckets(n) };
    table(keys) + table(expires) + expires * DICT_ENTRY
}

/// `used_memory` of the server with no keys, as its dump's `used-mem` shows it (one
/// client connected): measured on Debian's redis-server 7.0.15 (939,056 bytes), the PyPI
/// builds of valkey-server 8.1.8 (1,003,568) and 9.1.2 (1,040,768). Other versions and
/// builds differ by a few tens of KB, which the allocator detection allows for.
pub fn server_baseline(profile: &ServerProfile) -> u64 {
    match profile.family {
        Family::Valkey if profile.version >= Version(9, 0, 0) => 1_040_768,
        Family::Valkey if profile.version >= Version(8, 1, 0) => 1_003_568,
        _ => 939_056,
    }
}

/// What of a key `used_memory` holds beyond its `MEMORY USAGE` (negative: holds less).
pub struct UsedMemoryShape<'a> {
    pub encoding: Encoding,
    pub summary: &'a ValueFacts,
    pub facts: &'a MemoryFacts,
    /// Whether the value is a string holding an integer from 0 to 9,999 on a server that
    /// points such values at its shared integer objects (see [`shares_integers`]): asked
    /// of integers only.
    pub shared_integer: &'a dyn Fn() -> bool,
}

impl UsedMemoryShape<'_> {
    fn shared_integer(&self) -> bool {
        (self.shared_integer)()
    }
}

/// Whether the server points a string value holding an integer from 0 to 9,999 at one of
/// its shared integer objects, which `MEMORY USAGE` counts for every key and `used_memory`
/// never: Redis before 8.0 and Valkey before 8.1 do, unless an LRU or LFU eviction policy
/// (which the dump shows by an idle time or frequency on the key) gives each key its own
/// object; Valkey 8.1+ embeds the key in the value object, so never shares it.
pub fn shares_integers(profile: &ServerProfile, has_idle_or_freq: bool) -> bool {
    let embeds_keys = match profile.family {
        Family::Valkey => profile.version >= Version(8, 1, 0),
        _ => profile.version >= Version(8, 0, 0),
    };
    !embeds_keys && !has_idle_or_freq
}

/// The integers a server shares: 0 to 9,999 (`OBJ_SHARED_INTEGERS`).
pub const SHARED_INTEGERS: std::ops::Range<i64> = 0..10_000;

/// Whether [`used_memory_gap`] can be other than 0 for a key of `encoding`: most keys
/// (strings, compact collections) skip it.
#[inline]
pub fn may_have_gap(encoding: Encoding) -> bool {
    matches!(
        encoding,
        Encoding::Hashtable
            | Encoding::Skiplist
            | Encoding::Quicklist
            | Encoding::Int
            | Encoding::Stream
    )
}

/// What `used_memory` holds for a key's value beyond its `MEMORY USAGE` (negative: less):
/// * `objectComputeSize` counts dict entries, dicts and quicklist nodes at `sizeof` (24,
///   56, 40 bytes), jemalloc hands out their size class (32, 64, 48 with a 16-byte
///   quantum; the same with 8): the value's dict and entries, its list nodes (the key's
///   keyspace and expires entries: [`KEYSPACE_ENTRY`]);
/// * a shared integer's object is counted by `MEMORY USAGE` only;
/// * a stream is estimated by `MEMORY USAGE` (see [`stream_allocations`]).
#[inline]
pub fn used_memory_gap(
    profile: &ServerProfile,
    p: &mut KeyAllocations,
    k: &UsedMemoryShape<'_>,
) -> i64 {
    // Held at its class, counted at its size.
    let rounded = |p: &mut KeyAllocations, size: u64, count: u64| {
        p.class_times(size, count) as i64 - (size * count) as i64
    };
    let elements = k.summary.elements.unwrap_or(0);
    match k.encoding {
        // Sets and hashes as hash tables, sorted sets as a skiplist with its dict.
        Encoding::Hashtable | Encoding::Skiplist => {
            rounded(p, DICT, 1) + rounded(p, DICT_ENTRY, elements)
        }
        Encoding::Quicklist => rounded(p, QUICKLIST_NODE, k.summary.list_nodes + 1),
        Encoding::Int if k.shared_integer() => -(ROBJ as i64),
        Encoding::Stream => stream_gap(profile, p, k),
        Encoding::Int
        | Encoding::Embstr
        | Encoding::Raw
        | Encoding::Ziplist
        | Encoding::Linkedlist
        | Encoding::Listpack
        | Encoding::Intset
        | Encoding::TemplateListpack
        | Encoding::TemplateArray
        | Encoding::Listpackex
        | Encoding::Zipmap
        | Encoding::SlicedArray => 0,
    }
}

/// What a stream's allocations add to its `MEMORY USAGE` estimate.
#[inline(never)]
fn stream_gap(profile: &ServerProfile, p: &mut KeyAllocations, k: &UsedMemoryShape<'_>) -> i64 {
    let empty = StreamFacts::default();
    let facts = k.facts.stream.as_deref().unwrap_or(&empty);
    let each = |f: &dyn Fn(Allocator) -> Option<u64>| {
        let mut all = ByAllocator::default();
        for a in Allocator::ALL {
            all.0[a.index()] = f(a)?;
        }
        Some(all)
    };
    match each(&|a| stream_allocations(profile, a, k.summary, facts)) {
        Some(held) => {
            let counted =
                each(&|a| Some(stream_usage(profile, a, k.summary, facts))).unwrap_or_default();
            p.walked(held) as i64 - p.taken_back(counted) as i64
        }
        None => 0,
    }
}

/// A key's keyspace entry, and an expiring key's expires entry: `MEMORY USAGE` counts the
/// one at its `sizeof`, `used_memory` holds both at their class. Added per key and expiry
/// to the totals ([`crate::model::calibration`]), not per key.
pub const KEYSPACE_ENTRY: u64 = DICT_ENTRY;

/// The model's view of a whole dump: Σ per-key estimates, the per-db overhead, the
/// server's own memory, and what the server reported as `used_memory` when it saved
/// (`used-mem` aux field).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DumpMemory {
    pub keys_bytes: u64,
    pub overhead_bytes: u64,
    /// [`server_baseline`]: in `used-mem`, not in the dataset.
    pub baseline_bytes: u64,
    pub used_mem_aux: Option<u64>,
}

impl DumpMemory {
    /// The dataset: what `used_memory - used_memory_startup` would show.
    pub fn total(&self) -> u64 {
        self.keys_bytes + self.overhead_bytes
    }

    /// (model + baseline − used-mem) / used-mem, in percent.
    pub fn difference_percent(&self) -> Option<f64> {
        self.used_mem_aux.filter(|&u| u > 0).map(|u| {
            (self.total() as f64 + self.baseline_bytes as f64 - u as f64) / u as f64 * 100.0
        })
    }
}

/// Estimated bytes the key and its value occupy in the server's memory.
/// Always inlined, into [`crate::model::key_stats::KeyStats::read`]: out of line, its call
/// and [`value_memory`]'s cost 23 instructions a key of 1M 20-byte strings (`info`).
#[inline(always)]
pub fn key_memory(
    profile: &ServerProfile,
    p: &mut KeyAllocations,
    value_type: ValueType,
    key: KeyShape,
    encoding: Encoding,
    s: &ValueFacts,
    m: &MemoryFacts,
) -> u64 {
    if s.string_is_sparse_hll {
        if let Some(memory) = sparse_hll_memory(profile, p, key, s) {
            return memory;
        }
    }
    if profile.valkey_embedded_keys() {
        return valkey_value_memory(profile, p, value_type, encoding, s, m, key);
    }
    key_overhead(profile, p, key.len) + value_memory(profile, p, value_type, encoding, s, m)
}

/// A sparse HyperLogLog as the server that built it by `PFADD` holds it: a raw string
/// (whatever its length: a load would embed a short one) whose sds grew ahead of its
/// bytes (see [`hyperloglog`]). Higher than what a server fresh from a load holds.
#[cold]
#[inline(never)]
fn sparse_hll_memory(
    profile: &ServerProfile,
    p: &mut KeyAllocations,
    key: KeyShape,
    s: &ValueFacts,
) -> Option<u64> {
    let sds = hyperloglog::sparse_allocations(profile, s.elements.unwrap_or(0))?;
    Some(if profile.valkey_embedded_keys() {
        p.class(ROBJ + key.expiry_field() + key.embedded()) + p.walked(sds)
    } else {
        key_overhead(profile, p, key.len) + ROBJ + p.walked(sds)
    })
}

/// What of a key its memory depends on (and, on Valkey 8.1+, the object that embeds it).
#[derive(Clone, Copy)]
pub struct KeyShape {
    pub len: u64,
    pub has_expiry: bool,
}

impl KeyShape {
    /// Bytes of the embedded key: its header-size byte, sds header, bytes and NUL.
    fn embedded(self) -> u64 {
        1 + sds_header(self.len) + self.len + 1
    }

    /// The expiry field: present with a TTL, and always for keys of 128 bytes or more.
    fn expiry_field(self) -> u64 {
        if self.has_expiry || self.len >= 128 {
            8
        } else {
            0
        }
    }
}

/// How a Valkey `hashtable` came to hold its entries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TableGrowth {
    /// Sized once for its entries, as ZADD and SADD create a sorted set or set for all
    /// the members of the command, and as loading a dump does.
    Presized,
    /// Grown one insert at a time, as HSET and SADD convert a listpack: doubled when an
    /// insert finds it over 100 % full, then rehashed one old bucket per insert, so a
    /// table that doubled fewer inserts ago than its old half has buckets still holds
    /// that half (a set or hash is not rehashed between writes), and the old buckets not
    /// yet moved still hold the 7 entries each they were full with, and their children.
    /// Which way a table came to be is not in the dump: a set grown by single SADDs is
    /// sized this way.
    ByInserts,
    /// Grown one insert at a time and rehashed to completion by the server's cron, as a
    /// master's keyspace and expires tables are: the fewest buckets holding 7 entries
    /// each. (A server fresh from loading a dump holds them presized, up to twice the
    /// buckets.)
    Rehashed,
}

/// Valkey's `hashtable` of `n` entries: 64-byte buckets of 7 entries (the last slot of a
/// full bucket points to a child bucket), a power of two of them, plus the struct
/// (`header` bytes). Presized, ⌈5n/32⌉ buckets rounded up; grown, the fewest holding 7
/// entries each. Child buckets are their expectation over the random hashes.
fn valkey_hashtable(header: u64, n: u64, growth: TableGrowth) -> u64 {
    if n == 0 {
        return header;
    }
    // The buckets, and the half they doubled from (none when presized).
    let (buckets, old) = match growth {
        TableGrowth::Presized => ((n * 5).div_ceil(32).next_power_of_two(), 0),
        TableGrowth::ByInserts => {
            let buckets = n.div_ceil(7).next_power_of_two();
            (buckets, buckets / 2)
        }
        TableGrowth::Rehashed => (n.div_ceil(7).next_power_of_two(), 0),
    };
    // Rehashing while the table doubled at most `old` inserts ago: one old bucket moved per
    // insert since, the others still full (7 entries each).
    let since_doubled = n.saturating_sub(7 * old);
    let (old_table, unmoved) = if old > 0 && since_doubled <= old {
        (old, old - since_doubled)
    } else {
        (0, 0)
    };
    let in_unmoved = 7 * unmoved;
    header
        + 64 * (buckets
            + old_table
            + expected_child_buckets(in_unmoved, unmoved)
            + expected_child_buckets(n - in_unmoved, buckets))
}

/// Σ over buckets of the children a bucket chain of k entries needs (⌈(k−7)/6⌉ past 7),
/// k Poisson-distributed with mean n / buckets.
fn expected_child_buckets(n: u64, buckets: u64) -> u64 {
    if n == 0 || buckets == 0 {
        return 0;
    }
    let lambda = n as f64 / buckets as f64;
    let mut p = (-lambda).exp();
    let mut children = 0.0;
    let top = (lambda + 12.0 * lambda.sqrt() + 20.0) as u64;
    for k in 1..=top {
        p *= lambda / k as f64;
        if k > 7 {
            children += p * (k - 7).div_ceil(6) as f64;
        }
    }
    (children * buckets as f64).round() as u64
}

/// `MEMORY USAGE` on Valkey 8.1+: the value object (robj with the key, and the expiry,
/// embedded) and what hangs off it; the keyspace holds only a pointer to it.
fn valkey_value_memory(
    profile: &ServerProfile,
    p: &mut KeyAllocations,
    vt: ValueType,
    encoding: Encoding,
    s: &ValueFacts,
    m: &MemoryFacts,
    key: KeyShape,
) -> u64 {
    let n = s.elements.unwrap_or(0);
    // Requested only where the value is not embedded in it: a request the figure does not
    // hold would be priced under every candidate (see `KeyAllocations`).
    let object = |p: &mut KeyAllocations| p.class(ROBJ + key.expiry_field() + key.embedded());
    // Valkey 9's hashtable struct is 8 bytes longer, and a hash's carries 8 of metadata.
    let table = if profile.valkey_9() { 80 } else { 72 };
    match encoding {
        Encoding::Embstr => {
            // Valkey 9 drops the value pointer when the value is embedded.
            let header = if profile.valkey_9() { 8 } else { ROBJ };
            let expiry = if key.has_expiry { 8 } else { 0 };
            let bytes = header + expiry + key.embedded() + 3 + n + 1;
            // Measured on valkey-server 9.1.2 with glibc malloc: under a key of 6 bytes or
            // more, a string object never sat in glibc's smallest chunk (24 usable bytes).
            if profile.valkey_9() && key.len >= 6 && bytes < 25 {
                p.walked(Allocator::classes(bytes).map(|a, class| match a {
                    Allocator::Libc => a.class(25),
                    _ => class,
                }))
            } else {
                p.class(bytes)
            }
        }
        Encoding::Int => object(p),
        Encoding::Raw if vt.redis_type() == RedisType::String => object(p) + p.sds(n),
        Encoding::Hashtable if vt.redis_type() == RedisType::Set => {
            // A set past the listpack limit was most likely created whole: by one SADD of
            // its members (presized for the command's count) or by loading a dump. A
            // smaller one was converted by a long member and grew one insert at a time.
            let growth = if n > profile.limits.set_max_listpack_entries {
                TableGrowth::Presized
            } else {
                TableGrowth::ByInserts
            };
            object(p) + valkey_hashtable(table, n, growth) + p.walked(m.member_sds)
        }
        Encoding::Hashtable => {
            let table = if profile.valkey_9() { table + 8 } else { table };
            object(p)
                + valkey_hashtable(table, n, TableGrowth::ByInserts)
                + p.walked(m.valkey_hash_entries)
        }
        Encoding::Skiplist => {
            if profile.valkey_9() {
                // The zset struct, the skiplist with its 32-level header node inline, and
                // the nodes, which hold the members.
                object(p)
                    + ZSET
                    + VALKEY9_ZSKIPLIST
                    + valkey_hashtable(table, n, TableGrowth::Presized)
                    + p.walked(
                        m.valkey9_zset_nodes_millis
                            .map(|_, millis| millis.div_ceil(1000)),
                    )
            } else {
                object(p)
                    + ZSET
                    + ZSKIPLIST
                    + valkey_hashtable(table, n, TableGrowth::Presized)
                    + p.class(ZSKIPLIST_HEADER)
                    + p.walked(m.member_sds)
                    + p.walked(skiplist_nodes(n))
            }
        }
        // Everything else (module values too) hangs off the object as before.
        Encoding::Raw
        | Encoding::Ziplist
        | Encoding::Linkedlist
        | Encoding::Listpack
        | Encoding::Quicklist
        | Encoding::Intset
        | Encoding::TemplateListpack
        | Encoding::TemplateArray
        | Encoding::Listpackex
        | Encoding::Zipmap
        | Encoding::Stream
        | Encoding::SlicedArray => object(p) - ROBJ + value_memory(profile, p, vt, encoding, s, m),
    }
}

/// The key's own allocation and its entry in the keyspace dict. Always inlined: called
/// once more for sparse HyperLogLogs, it went out of line and cost 13 instructions a key
/// (1M 20-byte strings, `report`).
#[inline(always)]
fn key_overhead(profile: &ServerProfile, p: &mut KeyAllocations, key_len: u64) -> u64 {
    match profile.family {
        // Valkey 8.0 embeds the key (with an sds8 header) in the dict entry: value,
        // next, header size, key.
        Family::Valkey
            if profile.version < Version(8, 1, 0) && profile.version >= Version(8, 0, 0) =>
        {
            p.class(8 + 8 + 1 + 3 + key_len + 1)
        }
        _ => p.sds(key_len) + DICT_ENTRY,
    }
}

/// Bytes of the entries of a hash-table encoded set in Valkey 8, whose set entries hold
/// the member pointer directly when alone in their bucket and take a 16-byte
/// key-and-next entry when chained.
fn valkey_set_entries(n: u64, buckets: u64) -> u64 {
    let m = buckets as f64;
    let occupied = m * (1.0 - (1.0 - 1.0 / m).powf(n as f64));
    ((n as f64 - occupied).max(0.0) * 16.0).round() as u64
}

/// Always inlined (see [`key_memory`]).
#[inline(always)]
fn value_memory(
    profile: &ServerProfile,
    p: &mut KeyAllocations,
    vt: ValueType,
    encoding: Encoding,
    s: &ValueFacts,
    m: &MemoryFacts,
) -> u64 {
    let n = s.elements.unwrap_or(0);
    // The listpack the server holds: the dump's own when it stored one of the same kind,
    // else the one it builds from the elements.
    let listpack = |same_kind: bool| match (same_kind, m.blob_bytes) {
        (true, Some(b)) => b,
        _ => s.listpack_estimate + LISTPACK_OVERHEAD,
    };
    match encoding {
        Encoding::Int => ROBJ,
        Encoding::Embstr => p.class(ROBJ + 3 + n + 1),
        // Module values are not modelled.
        Encoding::Raw if vt.redis_type() == RedisType::Module => 0,
        Encoding::Raw => ROBJ + p.sds(n),
        Encoding::Listpack | Encoding::Ziplist => match vt.redis_type() {
            RedisType::List => {
                let bytes = match vt {
                    ValueType::ListQuicklist2 => p.walked(m.node_allocs),
                    _ => p.class(s.listpack_estimate + LISTPACK_OVERHEAD),
                };
                ROBJ + bytes
            }
            RedisType::Set => ROBJ + p.class(listpack(vt == ValueType::SetListpack)),
            RedisType::ZSet => ROBJ + p.class(listpack(vt == ValueType::ZSetListpack)),
            // Hashes: no other type is held in a listpack.
            _ => ROBJ + p.class(listpack(vt == ValueType::HashListpack)),
        },
        Encoding::Quicklist | Encoding::Linkedlist => {
            let (nodes, allocs) = match vt {
                ValueType::ListQuicklist | ValueType::ListQuicklist2 => {
                    (s.list_nodes, p.walked(m.node_allocs))
                }
                _ => {
                    // Old encodings are repacked into 8 KB nodes while loading.
                    let total = s.listpack_estimate;
                    let nodes = total.div_ceil(8192 - LISTPACK_OVERHEAD).max(1);
                    (
                        nodes,
                        p.class_times(total / nodes + LISTPACK_OVERHEAD, nodes),
                    )
                }
            };
            // With compression on, the inner nodes the server compressed hold LZF data.
            let saving = p.taken_back(
                m.list_compression
                    .saving(profile.limits.list_compress_depth, nodes),
            );
            ROBJ + QUICKLIST + nodes * QUICKLIST_NODE + allocs - saving
        }
        Encoding::Intset => {
            let bytes = match (vt, m.blob_bytes) {
                (ValueType::SetIntset, Some(b)) => b,
                _ => 8 + n * m.int_width.max(2),
            };
            ROBJ + p.class(bytes)
        }
        Encoding::Hashtable if vt.redis_type() == RedisType::Set => {
            // An all-integer set began as an intset, converted with a presized dict.
            let limit = profile.limits.set_max_intset_entries;
            let growth = if s.all_integers && n > limit {
                Growth {
                    size: buckets(limit + 1),
                    steps: |_, _| 1,
                }
            } else {
                Growth {
                    size: 0,
                    steps: |_, _| 1,
                }
            };
            let b = grown_buckets(profile, n, growth);
            let entries = if profile.family == Family::Valkey {
                valkey_set_entries(n, b)
            } else {
                n * DICT_ENTRY
            };
            ROBJ + DICT + 8 * b + entries + p.walked(m.member_sds)
        }
        // Hashes, and the zipmaps of servers before 2.6 (sized as hash tables).
        Encoding::Hashtable | Encoding::Zipmap => {
            let fields = if profile.family == Family::Redis && profile.version >= Version(7, 4, 0) {
                p.walked(m.field_mstr)
            } else {
                p.walked(m.member_sds)
            };
            // Converted when it outgrew the listpack (presized), or at a long element; then
            // each HSET finds and adds.
            let limit = profile.limits.hash_max_listpack_entries;
            let growth = if s.largest_element > profile.limits.hash_max_listpack_value {
                Growth {
                    size: 0,
                    steps: |_, _| 2,
                }
            } else {
                Growth {
                    size: buckets(limit + 1),
                    steps: |_, _| 2,
                }
            };
            let b = grown_buckets(profile, n, growth);
            ROBJ + DICT + 8 * b + n * DICT_ENTRY + fields + p.walked(m.value_sds)
        }
        Encoding::Skiplist => {
            ROBJ + ZSET
                + ZSKIPLIST
                + DICT
                + 8 * grown_buckets(
                    profile,
                    n,
                    // Converted from a listpack one insert at a time, then ZADD's find + add.
                    Growth {
                        size: 0,
                        steps: |i, p| {
                            if i < p.limits.zset_max_listpack_entries {
                                1
                            } else {
                                2
                            }
                        },
                    },
                )
                + p.class(ZSKIPLIST_HEADER)
                + p.walked(m.member_sds)
                + n * DICT_ENTRY
                + p.walked(skiplist_nodes(n))
        }
        // Estimates (no Redis 8.10 server measured): the values listpack as the dump holds
        // it, or `hashTemplateArray` (template pointer, one sds pointer per field) and the
        // values. The shared template itself is not counted per key.
        Encoding::TemplateListpack => ROBJ + p.class(listpack(true)),
        Encoding::TemplateArray => {
            ROBJ + p.class(TEMPLATE_ARRAY.saturating_add(n.saturating_mul(8)))
                + p.walked(m.value_sds)
        }
        Encoding::Listpackex => {
            let same = matches!(
                vt,
                ValueType::HashListpackEx | ValueType::HashListpackExPreGa
            );
            ROBJ + p.class(LISTPACK_EX) + p.class(listpack(same))
        }
        Encoding::Stream => {
            let empty = StreamFacts::default();
            let facts = m.stream.as_deref().unwrap_or(&empty);
            p.walked(ByAllocator(
                Allocator::ALL.map(|a| stream_usage(profile, a, s, facts)),
            ))
        }
        // An estimate: see `array`.
        Encoding::SlicedArray => {
            let bytes = m
                .array
                .as_deref()
                .map_or_else(|| ArrayFacts::default().bytes(), ArrayFacts::bytes);
            ROBJ + p.walked(bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skiplist_node_expectation() {
        // 48 × 0.75 + 64 × 0.1875 + 80 × 0.046875 + ... ≈ 53.3 bytes.
        let e = expected_skiplist_node_millis(Allocator::Jemalloc16);
        assert!((53_000..53_700).contains(&e), "{e}");
    }

    #[test]
    fn a_table_grown_by_inserts_holds_its_unmoved_old_buckets_and_their_children() {
        // 57 entries: doubled from 8 to 16 buckets at the 57th insert, which moved one old
        // bucket; the 7 others still hold 49 entries (7 each on average, children
        // expected on 0.41 of them), as DEBUG HTSTATS-KEY shows [56, 112] on valkey-server
        // 8.1.8 and 9.1.2.
        assert_eq!(expected_child_buckets(49, 7), 3);
        assert_eq!(
            valkey_hashtable(0, 57, TableGrowth::ByInserts),
            64 * (16 + 8 + 3)
        );
        // Once every old bucket moved (57 + 8 inserts), only the 16 buckets are left.
        assert_eq!(
            valkey_hashtable(0, 65, TableGrowth::ByInserts),
            64 * (16 + expected_child_buckets(65, 16))
        );
        assert_eq!(valkey_hashtable(72, 0, TableGrowth::ByInserts), 72);
    }

    #[test]
    fn dict_buckets() {
        assert_eq!(buckets(1), 4);
        assert_eq!(buckets(600), 1024);
        assert_eq!(buckets(512), 512);
    }
}
