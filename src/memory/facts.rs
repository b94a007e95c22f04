//! What the memory model needs to know about a value's elements, gathered during the one
//! walk the decoder makes over it (so no element is visited twice and none is stored).
//!
//! Each element is accounted in every form the server might hold it in (sds in a hash
//! table, entry in a listpack, member of an intset), because which form the server picks
//! is decided after the walk, from the counts and sizes seen.

use super::jemalloc::Allocator;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryFacts {
    /// The rounding every allocation below is summed with.
    pub alloc: Allocator,
    /// Elements up to which a listpack read from the dump stays a listpack on load; the
    /// hash-table allocations of its elements are only summed past it (0 = always).
    pub compact_limit: u64,
    /// Σ allocations of set members, zset members and hash fields as sds strings.
    pub member_sds: u64,
    /// Σ allocations of hash fields as Redis 7.4+ `mstr` fields (with TTL metadata).
    pub field_mstr: u64,
    /// Σ allocations of hash values as sds strings.
    pub value_sds: u64,
    /// Exact bytes of a listpack or intset blob stored in the dump (kept if the server
    /// keeps the compact encoding).
    pub blob_bytes: Option<u64>,
    /// Σ allocations of quicklist nodes (listpacks, or single elements for plain nodes).
    pub node_allocs: u64,
    /// Bytes of the widest integer element, for an intset built from a plain set (2, 4, 8).
    pub int_width: u64,
    /// Stream radix-tree nodes (listpacks): Σ allocations of all but the last, and the last.
    pub stream_node_allocs: u64,
    pub stream_last_node_alloc: u64,
    stream_last_node_bytes: u64,
    /// Σ consumer name bytes, over all groups.
    pub consumer_name_bytes: u64,
    /// Σ entries and radix nodes over every PEL (one per group, one per consumer).
    pub pel_entries: u64,
    pub pel_rax_nodes: u64,
    /// Σ over quicklist nodes stored LZF-compressed of what compression saves in memory
    /// (uncompressed allocation minus `quicklistLZF` allocation), first and last node
    /// excluded: what `list-compress-depth 1` would save.
    pub compressed_node_saving: u64,
    /// The saving of the latest compressed node, not yet known to be an inner one.
    pub pending_node_saving: u64,
}

/// Listpack nodes of a running stream are created with room for this many bytes
/// (`STREAM_LISTPACK_MAX_PRE_ALLOCATE`) and grow only past it.
const STREAM_NODE_PREALLOC: u64 = 4096;

impl MemoryFacts {
    pub fn new(alloc: Allocator, compact_limit: u64) -> Self {
        MemoryFacts {
            alloc,
            compact_limit,
            ..MemoryFacts::default()
        }
    }

    #[inline]
    pub fn member(&mut self, len: u64) {
        self.member_sds += self.alloc.sds(len);
    }

    #[inline]
    pub fn field(&mut self, len: u64, with_ttl: bool) {
        self.member_sds += self.alloc.sds(len);
        self.field_mstr += self.alloc.mstr(len, with_ttl);
    }

    #[inline]
    pub fn value(&mut self, len: u64) {
        self.value_sds += self.alloc.sds(len);
    }

    #[inline]
    pub fn integer(&mut self, v: i64) {
        let width = if i64::from(v as i16) == v {
            2
        } else if i64::from(v as i32) == v {
            4
        } else {
            8
        };
        self.int_width = self.int_width.max(width);
    }

    /// The quicklist node at `index` holding `bytes` (listpack bytes, or the element of a
    /// plain node), and its LZF size when the dump stores it compressed.
    #[inline]
    pub fn list_node(&mut self, index: u64, bytes: u64, compressed: Option<u64>) {
        self.node_allocs += self.alloc.class(bytes);
        // A node follows: the previous one was not the last.
        self.compressed_node_saving += std::mem::take(&mut self.pending_node_saving);
        if let (Some(compressed), true) = (compressed, index > 0) {
            // `quicklistLZF`: a size_t length, then the compressed bytes.
            self.pending_node_saving = self
                .alloc
                .class(bytes)
                .saturating_sub(self.alloc.class(8 + compressed));
        }
    }

    /// A stream node listpack of `bytes`, in file (= ID) order. The last node of a running
    /// stream keeps its preallocation; earlier ones were shrunk to fit when closed.
    pub fn stream_node(&mut self, bytes: u64) {
        self.stream_node_allocs += self.alloc.class(self.stream_last_node_bytes);
        self.stream_last_node_bytes = bytes;
        self.stream_last_node_alloc = self.alloc.class(bytes.max(STREAM_NODE_PREALLOC));
    }

    /// A pending-entries list of `entries` IDs (a group's or a consumer's).
    pub fn pel(&mut self, entries: u64) {
        self.pel_entries += entries;
        self.pel_rax_nodes += rax_nodes(entries);
    }
}

/// Radix-tree nodes holding `n` stream IDs (16 bytes, big-endian): an empty tree is one
/// node, one key a compressed path and a leaf, and more keys, which share their leading
/// bytes, a common path, a branch, and a path and a leaf each.
pub fn rax_nodes(n: u64) -> u64 {
    match n {
        0 => 1,
        1 => 2,
        _ => 2 + 2 * n,
    }
}
