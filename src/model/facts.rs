//! What the memory model needs to know about a value's elements, gathered during the one
//! walk the decoder makes over it (so no element is visited twice and none is stored).
//!
//! Each element is accounted in every form the server might hold it in (sds in a hash
//! table, entry in a listpack, member of an intset), because which form the server picks
//! is decided after the walk, from the counts and sizes seen.

use super::allocator::{mstr_request, sds_header, Allocator, ByAllocator};
use super::array::ArrayFacts;
use super::encoding::LISTPACK_OVERHEAD;
use crate::rdb::ValueSink;
use std::borrow::Cow;

/// Every allocation below is summed under each candidate allocator at once
/// ([`ByAllocator`]): the key is priced under one, the whole dump's `used_memory` under all.
#[derive(Clone, Debug)]
pub struct MemoryFacts {
    /// Elements up to which a listpack read from the dump stays a listpack on load; the
    /// hash-table allocations of its elements are only summed past it (0 = always).
    compact_limit: u64,
    /// Σ allocations of set members, zset members and hash fields as sds strings.
    pub member_sds: ByAllocator,
    /// Σ allocations of hash fields as Redis 7.4+ `mstr` fields (with TTL metadata).
    pub field_mstr: ByAllocator,
    /// Σ allocations of hash values as sds strings.
    pub value_sds: ByAllocator,
    /// Σ allocations of Valkey 8.1+ hash entries: the field with its value embedded, or
    /// with a pointer to a separate value sds (counted here too).
    pub valkey_hash_entries: ByAllocator,
    /// Σ expected allocations of Valkey 9 skiplist nodes, which embed their member, over
    /// the random node levels, in 1/1000 bytes (see `zset_member` below).
    pub valkey9_zset_nodes_millis: ByAllocator,
    /// Length of the latest hash field, which the next value belongs to.
    last_field: u64,
    /// Whether sorted-set members live in their skiplist nodes (Valkey 9).
    embedded_zset_nodes: bool,
    /// Exact bytes of a listpack or intset blob stored in the dump (kept if the server
    /// keeps the compact encoding).
    pub blob_bytes: Option<u64>,
    /// Σ allocations of quicklist nodes (listpacks, or single elements for plain nodes).
    pub node_allocs: ByAllocator,
    /// Bytes of the widest integer element, for an intset built from a plain set (2, 4, 8).
    pub int_width: u64,
    /// A stream's nodes, groups, consumers and pending entries (out of line: few values
    /// are streams).
    pub stream: Option<Box<StreamFacts>>,
    /// What the quicklist nodes the dump stores LZF-compressed save in memory when the
    /// server held them compressed (`list-compress-depth`).
    pub list_compression: ListCompression,
    /// A sparse array's slices, directory and heap strings (out of line, as `stream`).
    pub array: Option<Box<ArrayFacts>>,
}

/// What a stream's walk gathered (see [`MemoryFacts::stream`]).
#[derive(Clone, Debug, Default)]
pub struct StreamFacts {
    /// Stream radix-tree nodes (listpacks): Σ allocations of all but the last, and the last.
    pub stream_node_allocs: ByAllocator,
    pub stream_last_node_alloc: ByAllocator,
    stream_last_node_bytes: u64,
    stream_nodes_seen: u64,
    /// The stream's main radix tree, keyed by its nodes' master IDs.
    pub stream_ids: RaxCount,
    /// Σ consumer name bytes, over all groups.
    pub consumer_name_bytes: u64,
    /// Σ allocations of the names of consumer groups and consumers: the radix trees that
    /// find them (see `name_list` below) and the consumers' name sds.
    pub name_allocs: ByAllocator,
    /// Σ entries, radix nodes and node bytes over every PEL (one per group, one per
    /// consumer).
    pub pel_entries: u64,
    pub pel_rax_nodes: u64,
    pub pel_rax_bytes: ByAllocator,
    /// The radix tree of the PEL being read.
    pel_ids: RaxCount,
}

/// Listpack nodes of a running stream are created with room for this many bytes
/// (`STREAM_LISTPACK_MAX_PRE_ALLOCATE`) and grow only past it.
const STREAM_NODE_PREALLOC: u64 = 4096;

impl MemoryFacts {
    /// Empty facts; `embedded_zset_nodes` on Valkey 9, whose skiplist nodes embed their
    /// member.
    pub fn new(compact_limit: u64, embedded_zset_nodes: bool) -> Self {
        const ZERO: ByAllocator = ByAllocator::all(0);
        MemoryFacts {
            compact_limit,
            member_sds: ZERO,
            field_mstr: ZERO,
            value_sds: ZERO,
            valkey_hash_entries: ZERO,
            valkey9_zset_nodes_millis: ZERO,
            last_field: 0,
            embedded_zset_nodes,
            blob_bytes: None,
            node_allocs: ZERO,
            int_width: 0,
            stream: None,
            list_compression: ListCompression::default(),
            array: None,
        }
    }
}

impl MemoryFacts {
    fn stream_mut(&mut self) -> &mut StreamFacts {
        self.stream.get_or_insert_with(Box::default)
    }
}

/// Each element is summed in every form the server might hold it in.
impl ValueSink for MemoryFacts {
    /// A set or sorted-set member, or a Valkey 9 hash field: an sds.
    #[inline]
    fn member(&mut self, len: u64) {
        self.member_sds += Allocator::sds_classes(len);
        self.last_field = len;
    }

    /// The widest integer decides the intset a plain set becomes.
    #[inline]
    fn member_integer(&mut self, v: i64) {
        let width = if i64::from(v as i16) == v {
            2
        } else if i64::from(v as i32) == v {
            4
        } else {
            8
        };
        self.int_width = self.int_width.max(width);
    }

    /// A sorted-set member; on Valkey 9 also the skiplist node that embeds it: 32 bytes
    /// with the first level, 16 per further level, a header-size byte and the member's
    /// sds. Levels are random, P(level = k) = 0.75 × 0.25^(k-1): the expectation over
    /// levels 1 to 6 (the rest, 0.02 %, counted at 6).
    #[inline]
    fn zset_member(&mut self, len: u64) {
        self.member(len);
        if self.embedded_zset_nodes {
            let member = 1 + sds_header(len) + len + 1;
            let mut millis = ByAllocator::default();
            for (level, weight) in [
                (1, 750_000),
                (2, 187_500),
                (3, 46_875),
                (4, 11_719),
                (5, 2_930),
                (6, 976),
            ] {
                millis += Allocator::classes(16 + 16 * level + member).times(weight);
            }
            self.valkey9_zset_nodes_millis += millis.map(|_, m| m / 1000);
        }
    }

    /// A hash field as an sds and as a Redis 7.4+ `mstr`.
    #[inline]
    fn field(&mut self, len: u64, with_ttl: bool) {
        self.member_sds += Allocator::sds_classes(len);
        self.field_mstr += Allocator::classes(mstr_request(len, with_ttl));
        self.last_field = len;
    }

    #[inline]
    fn value(&mut self, len: u64) {
        let value = Allocator::sds_classes(len);
        self.value_sds += value;
        // Valkey 8.1+: one allocation of the field (its header-size byte, sds header,
        // bytes, NUL) and the value (3 bytes of header and NUL) while that stays within
        // 128 bytes; else the field and a pointer, the value apart.
        let field = 1 + sds_header(self.last_field) + self.last_field + 1;
        let embedded = field + 3 + len;
        self.valkey_hash_entries += if embedded <= 128 {
            Allocator::classes(embedded)
        } else {
            Allocator::classes(8 + field) + value
        };
    }

    /// A listpack within the compact limit stays one on load: its elements need no
    /// hash-table accounting.
    #[inline]
    fn wants_listpack_elements(&self, elements: u64) -> bool {
        elements > self.compact_limit
    }

    #[inline]
    fn container(&mut self, bytes: u64) {
        self.blob_bytes = Some(bytes);
    }

    #[inline]
    fn list_node(&mut self, index: u64, bytes: u64, ziplist: bool, compressed: Option<u64>) {
        // The server rewrites a ziplist node as a listpack while loading.
        let bytes = if ziplist {
            bytes.saturating_add(LISTPACK_OVERHEAD)
        } else {
            bytes
        };
        let alloc = Allocator::classes(bytes);
        self.node_allocs += alloc;
        if let Some(compressed) = compressed {
            self.list_compression.node(index, bytes, alloc, compressed);
        }
    }

    /// The last node of a running stream keeps its preallocation; earlier ones were shrunk
    /// to fit when closed.
    fn stream_node(&mut self, master_id: [u8; 16], bytes: u64) {
        let s = self.stream_mut();
        s.stream_ids.push(master_id);
        if s.stream_nodes_seen > 0 {
            s.stream_node_allocs += Allocator::classes(s.stream_last_node_bytes);
        }
        s.stream_nodes_seen += 1;
        s.stream_last_node_bytes = bytes;
        s.stream_last_node_alloc = Allocator::classes(bytes.max(STREAM_NODE_PREALLOC));
    }

    fn pending_entry(&mut self, id: [u8; 16]) {
        self.stream_mut().pel_ids.push(id);
    }

    fn pending_list_end(&mut self) {
        let s = self.stream_mut();
        let rax = std::mem::replace(&mut s.pel_ids, RaxCount::new());
        s.pel_entries += rax.keys;
        s.pel_rax_nodes += rax.nodes();
        s.pel_rax_bytes += rax.node_bytes();
    }

    /// A consumer's name: its sds (its node in its group's tree: `name_list`).
    fn consumer(&mut self, name_len: u64) {
        let s = self.stream_mut();
        s.consumer_name_bytes = s.consumer_name_bytes.saturating_add(name_len);
        s.name_allocs += Allocator::sds_classes(name_len);
    }

    /// The radix tree the names are keyed in: the stream's consumer groups, or a group's
    /// consumers.
    fn name_list(&mut self, names: &mut [Cow<'_, [u8]>]) {
        names.sort_unstable();
        let mut unique: Vec<&[u8]> = names.iter().map(|n| n.as_ref()).collect();
        unique.dedup();
        self.stream_mut().name_allocs += name_tree_bytes(&unique, 0);
    }

    fn array_string(&mut self, index: u64, len: u64, inline_allowed: bool) {
        self.array
            .get_or_insert_with(Box::default)
            .string(index, len, inline_allowed);
    }

    fn array_integer(&mut self, index: u64, value: i64) {
        self.array
            .get_or_insert_with(Box::default)
            .integer(index, value);
    }

    fn array_double(&mut self, index: u64) {
        self.array.get_or_insert_with(Box::default).double(index);
    }
}

/// `list-compress-depth` deepest modelled: nodes this far from either end are told apart.
pub const MAX_COMPRESS_DEPTH: u64 = 8;
/// `MIN_COMPRESS_BYTES` (quicklist.c): a node smaller than this is never compressed.
const MIN_COMPRESS_BYTES: u64 = 48;
/// `MIN_COMPRESS_IMPROVE`: compression is kept only when it saves more than this.
const MIN_COMPRESS_IMPROVE: u64 = 8;

/// What the quicklist nodes a dump stores LZF-compressed save in memory, for any
/// `list-compress-depth`. A node stored LZF was either held compressed by the server
/// (`rdbSaveLzfBlob`) or compressed only by the save (`rdbcompression`, which compresses
/// any node it shrinks by 5 bytes or more): the file does not say which. The server
/// compresses (`__quicklistCompressNode`) every node more than `depth` nodes from either
/// end, of at least [`MIN_COMPRESS_BYTES`], when LZF shrinks it by more than
/// [`MIN_COMPRESS_IMPROVE`] bytes, and holds it as a `quicklistLZF` (a `size_t` length and
/// the bytes) in place of the listpack: LZF's output is the same bytes whoever ran it, so
/// the stored length is the one the server held. Kept out of line: only lists with such
/// nodes need it.
#[derive(Clone, Debug, Default)]
pub struct ListCompression(Option<Box<NodeSavings>>);

#[derive(Clone, Debug, Default)]
struct NodeSavings {
    /// Σ over every node the server would compress of what compression saves.
    total: ByAllocator,
    /// The savings of the first nodes, by index ...
    first: [ByAllocator; MAX_COMPRESS_DEPTH as usize],
    /// ... and of the latest ones, at `index % MAX_COMPRESS_DEPTH`.
    last: [(u64, ByAllocator); MAX_COMPRESS_DEPTH as usize],
}

impl ListCompression {
    /// No node was stored compressed (or none the server would have compressed).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Node `index` of `bytes` (allocated as `alloc`), stored as `compressed` LZF bytes.
    fn node(&mut self, index: u64, bytes: u64, alloc: ByAllocator, compressed: u64) {
        if bytes < MIN_COMPRESS_BYTES || compressed.saturating_add(MIN_COMPRESS_IMPROVE) >= bytes {
            return;
        }
        let saving = alloc.saturating_sub(Allocator::classes(8 + compressed));
        let s = self.0.get_or_insert_with(Box::default);
        s.total += saving;
        if let Some(first) = s.first.get_mut(index as usize) {
            *first = saving;
        }
        s.last[(index % MAX_COMPRESS_DEPTH) as usize] = (index, saving);
    }

    /// The saving with `depth` (at most [`MAX_COMPRESS_DEPTH`]) nodes left uncompressed at
    /// each end of a list of `nodes` nodes; nothing at depth 0 (compression off).
    pub fn saving(&self, depth: u64, nodes: u64) -> ByAllocator {
        let Some(s) = &self.0 else {
            return ByAllocator::default();
        };
        let depth = depth.min(MAX_COMPRESS_DEPTH);
        if depth == 0 || nodes <= 2 * depth {
            return ByAllocator::default();
        }
        let mut kept = ByAllocator::default();
        for &first in &s.first[..depth as usize] {
            kept += first;
        }
        for &(index, saving) in &s.last {
            if index >= depth && index >= nodes - depth {
                kept += saving;
            }
        }
        s.total.saturating_sub(kept)
    }
}

/// Σ allocations of the nodes of the radix tree below `depth` holding `keys` (sorted,
/// distinct, all sharing their first `depth` bytes), each key's node holding a value
/// pointer: the compact trie, as inserts build it. A node where a key ends carries the
/// pointer; below it the keys' common bytes make one compressed node, or if they part at
/// once, a branching node with a child byte and pointer each.
fn name_tree_bytes(keys: &[&[u8]], depth: usize) -> ByAllocator {
    let (ends_here, rest) = match keys.split_first() {
        Some((first, rest)) if first.len() == depth => (true, rest),
        _ => (false, keys),
    };
    let value = if ends_here { 8 } else { 0 };
    let (Some(first), Some(last)) = (rest.first(), rest.last()) else {
        return Allocator::classes(rax_header_and_bytes(0) + value);
    };
    // Sorted: the common prefix of all is that of the first and last.
    let common = first[depth..]
        .iter()
        .zip(&last[depth..])
        .take_while(|(a, b)| a == b)
        .count();
    if common > 0 {
        return Allocator::classes(rax_header_and_bytes(common as u64) + 8 + value)
            + name_tree_bytes(rest, depth + common);
    }
    let mut children = 0u64;
    let mut below = ByAllocator::default();
    for group in rest.chunk_by(|a, b| a[depth] == b[depth]) {
        children += 1;
        below += name_tree_bytes(group, depth + 1);
    }
    Allocator::classes(rax_header_and_bytes(children) + 8 * children + value) + below
}

/// The radix tree (`rax`) holding 16-byte stream IDs fed in ascending order: its node count
/// (the root, every branching point, every child of one, and every leaf reached through a
/// compressed run; a branching point that is itself a child of one counted once), and the
/// bytes its nodes take under an allocator.
///
/// Inserted in order, the tree is the compact trie of its keys: a branching node at each
/// depth where keys part (its child bytes, padding to 8, a pointer per child), a run node
/// for the bytes between two of them (a header, the bytes, padding, one child pointer: a
/// compressed node, or a one-child node for a single byte), and a leaf per key (a header,
/// padding and the value pointer). The root is a run down to the first branching depth.
#[derive(Clone, Debug, Default)]
pub struct RaxCount {
    pub keys: u64,
    prev: [u8; 16],
    /// Common prefix of the previous two keys (`None` before the second key).
    prev_lcp: Option<u8>,
    /// The branching points on the path to the last key: depth and children so far.
    stack: Vec<(u8, u32)>,
    branches: u64,
    root_branches: bool,
    nested: u64,
    lone_leaves: u64,
    /// Σ allocations of the nodes closed so far (leaves, branching and run nodes).
    node_bytes: ByAllocator,
}

/// `raxNode`: a 4-byte header, then the bytes padded so pointers align.
fn rax_header_and_bytes(bytes: u64) -> u64 {
    (4 + bytes).next_multiple_of(8)
}

impl RaxCount {
    pub fn new() -> Self {
        RaxCount::default()
    }

    /// A leaf: header, padding and the value pointer.
    fn leaf() -> ByAllocator {
        Allocator::classes(rax_header_and_bytes(0) + 8)
    }

    /// The run node holding `len` bytes between two depths (none for 0 bytes).
    fn run(len: u8) -> ByAllocator {
        match len {
            0 => ByAllocator::default(),
            n => Allocator::classes(rax_header_and_bytes(u64::from(n)) + 8),
        }
    }

    /// A branching node with `children` child bytes and pointers.
    fn branch(children: u32) -> ByAllocator {
        let c = u64::from(children);
        Allocator::classes(rax_header_and_bytes(c) + 8 * c)
    }

    /// The leaf of a key whose nearest branching point is at `parent`, with its run.
    fn close_leaf(parent: u8) -> ByAllocator {
        Self::run(15 - parent) + Self::leaf()
    }

    pub fn push(&mut self, key: [u8; 16]) {
        if self.keys > 0 {
            let d = self
                .prev
                .iter()
                .zip(&key)
                .take_while(|(a, b)| a == b)
                .count()
                .min(15) as u8;
            // The previous key's leaf hangs off a branch iff it shares 15 bytes with a neighbour.
            if self.prev_lcp != Some(15) && d != 15 {
                self.lone_leaves += 1;
            }
            let leaf_parent = self.prev_lcp.map_or(d, |p| p.max(d));
            self.node_bytes += Self::close_leaf(leaf_parent);
            self.prev_lcp = Some(d);
            let mut popped = None;
            while let Some(&(depth, children)) = self.stack.last().filter(|&&(t, _)| t > d) {
                self.stack.pop();
                popped = Some(depth);
                // Its parent: the next branching point down the path, or the one at `d`.
                let parent = match self.stack.last() {
                    Some(&(t, _)) if t > d => t,
                    _ => d,
                };
                self.node_bytes += Self::branch(children) + Self::run(depth - parent - 1);
            }
            match self.stack.last_mut() {
                Some((depth, children)) if *depth == d => *children += 1,
                _ => {
                    self.branches += 1;
                    self.root_branches |= d == 0;
                    if d > 0 && self.stack.last().map(|s| s.0) == Some(d - 1) {
                        self.nested += 1;
                    }
                    if popped == Some(d + 1) {
                        self.nested += 1;
                    }
                    self.stack.push((d, 2));
                }
            }
        }
        self.prev = key;
        self.keys += 1;
    }

    pub fn nodes(&self) -> u64 {
        if self.keys == 0 {
            return 1;
        }
        let last_lone = u64::from(self.prev_lcp != Some(15));
        1 + self.branches - u64::from(self.root_branches)
            + (self.keys - 1 + self.branches)
            + self.lone_leaves
            + last_lone
            - self.nested
    }

    /// Σ allocations of the tree's nodes (`raxAllocSize` less the `rax` struct): an empty
    /// tree has an empty root node.
    pub fn node_bytes(&self) -> ByAllocator {
        match (self.keys, self.prev_lcp) {
            (0, _) => Allocator::classes(rax_header_and_bytes(0)),
            (_, None) => Self::run(16) + Self::leaf(),
            (_, Some(last)) => {
                let mut bytes = self.node_bytes + Self::close_leaf(last);
                for (i, &(depth, children)) in self.stack.iter().enumerate().rev() {
                    // The bottom branching point hangs off the root run.
                    let run = match i {
                        0 => depth,
                        _ => depth - self.stack[i - 1].0 - 1,
                    };
                    bytes += Self::branch(children) + Self::run(run);
                }
                bytes
            }
        }
    }
}

#[cfg(test)]
mod rax_tests {
    use super::{Allocator, RaxCount};

    fn id(ms: u64, seq: u64) -> [u8; 16] {
        let mut k = [0; 16];
        k[..8].copy_from_slice(&ms.to_be_bytes());
        k[8..].copy_from_slice(&seq.to_be_bytes());
        k
    }

    fn tree(ids: &[(u64, u64)]) -> RaxCount {
        let mut r = RaxCount::new();
        for &(ms, seq) in ids {
            r.push(id(ms, seq));
        }
        r
    }

    fn count(ids: &[(u64, u64)]) -> u64 {
        tree(ids).nodes()
    }

    #[test]
    fn rax_nodes_match_redis() {
        // Measured with MEMORY USAGE on redis-server 7.0.15.
        assert_eq!(count(&[]), 1);
        assert_eq!(count(&[(1000, 1)]), 2);
        let same_ms: Vec<_> = (1..30).map(|i| (1000, i)).collect();
        assert_eq!(count(&same_ms), 31);
        let diff_ms: Vec<_> = (0..30).map(|i| (1000 + i, 0)).collect();
        assert_eq!(count(&diff_ms), 64);
        let cross: Vec<_> = (0..12).map(|i| (250 + i, 0)).collect();
        assert_eq!(count(&cross), 28);
        let mixed: Vec<_> = (0..40).map(|i| (1000 + i / 5, i % 5)).collect();
        assert_eq!(count(&mixed), 58);
        let wide: Vec<_> = (0..50).map(|i| (1000 + 300 * i, i % 3)).collect();
        assert_eq!(count(&wide), 102);
        let seq_wide: Vec<_> = (0..20).map(|i| (7, 250 + i)).collect();
        assert_eq!(count(&seq_wide), 24);
    }

    #[test]
    fn rax_node_bytes_match_valkey() {
        // Both PELs of a consumer that read the entries: MEMORY USAGE of the stream after
        // XREADGROUP less before, less the consumer (32 + name), its rax struct (40) and
        // the NACKs (24 each), halved; valkey-server 9.1.2 and 8.1.8 (glibc malloc).
        let libc = |ids: &[(u64, u64)]| tree(ids).node_bytes()[Allocator::Libc];
        assert_eq!(libc(&[]), 24);
        assert_eq!(libc(&[(1000, 1)]), 64);
        let same_ms = |n| (0..n).map(|i| (1000, i)).collect::<Vec<_>>();
        assert_eq!(libc(&same_ms(2)), 112);
        assert_eq!(libc(&same_ms(10)), 384);
        let seq: Vec<_> = (0..10).map(|i| (1000 + i, 0)).collect();
        assert_eq!(libc(&seq), 608);
        let wide: Vec<_> = (0..50).map(|i| (1000 + 300 * i, i % 3)).collect();
        assert_eq!(libc(&wide), 2880);
        // jemalloc rounds the same nodes to its classes: a 16-byte compressed run of 32
        // bytes and a 16-byte leaf.
        assert_eq!(tree(&[(1000, 1)]).node_bytes()[Allocator::Jemalloc], 48);
    }
}
