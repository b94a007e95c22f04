//! [`ValueSink`]: what a deep walk of one value reports, piece by piece, to whoever models
//! the value beyond the summary the decoder keeps (the memory model implements it).
//!
//! The walker is generic over its sink, so each sink gets its own monomorphised walk and a
//! report costs a direct (usually inlined) call. `()` is the sink that wants nothing: the
//! walk that only skips a value reports to it.

use std::borrow::Cow;

/// Receives a value's elements, nodes and bookkeeping in the order the dump stores them.
/// Lengths are in bytes; integers stored as such count as their decimal text.
pub trait ValueSink {
    /// A set member, or a field of a Valkey 9 hash (type 22 under the VALKEY magic), whose
    /// value follows with [`ValueSink::value`].
    fn member(&mut self, len: u64);

    /// The latest member of a plain set (type 2) holds this canonical integer.
    fn member_integer(&mut self, value: i64);

    fn zset_member(&mut self, len: u64);

    /// A hash field, and whether it carries a TTL; its value follows with
    /// [`ValueSink::value`].
    fn field(&mut self, len: u64, with_ttl: bool);

    /// The value of the latest hash field (of a template hash: of the next field name).
    fn value(&mut self, len: u64);

    /// Whether the members, fields and values of a listpack holding `elements` (set
    /// members, sorted-set members or hash fields) are to be reported one by one.
    fn wants_listpack_elements(&self, elements: u64) -> bool;

    /// A value stored as one container (listpack, ziplist, intset, zipmap) of `bytes`
    /// bytes once decompressed.
    fn container(&mut self, bytes: u64);

    /// Quicklist node `index` holding `bytes`: its listpack, the element of a plain node, or
    /// for a ziplist node (`ziplist`) the listpack entries its elements take; and its LZF
    /// bytes when the dump stores it compressed.
    fn list_node(&mut self, index: u64, bytes: u64, ziplist: bool, compressed: Option<u64>);

    /// A stream node: its master ID (the key of the stream's radix tree) and the bytes of
    /// its listpack, in ID order.
    fn stream_node(&mut self, master_id: [u8; 16], listpack_bytes: u64);

    /// An entry of the pending-entries list being read (a group's, or a consumer's).
    fn pending_entry(&mut self, id: [u8; 16]);

    /// The pending-entries list being read ends: the entries since the previous end.
    fn pending_list_end(&mut self);

    /// A consumer with a name of `name_len` bytes; its pending-entries list follows.
    fn consumer(&mut self, name_len: u64);

    /// The names of a group's consumers once all are read (after the group's last
    /// consumer), or of the stream's consumer groups (after its last group, when it has
    /// any); the sink may reorder them.
    fn name_list(&mut self, names: &mut [Cow<'_, [u8]>]);

    /// A sparse array's string element at `index`; `inline_allowed` is false for values
    /// the dump tags as heap strings (tag 0).
    fn array_string(&mut self, index: u64, len: u64, inline_allowed: bool);

    fn array_integer(&mut self, index: u64, value: i64);

    fn array_double(&mut self, index: u64);
}

/// The sink that wants nothing.
impl ValueSink for () {
    #[inline]
    fn member(&mut self, _: u64) {}
    #[inline]
    fn member_integer(&mut self, _: i64) {}
    #[inline]
    fn zset_member(&mut self, _: u64) {}
    #[inline]
    fn field(&mut self, _: u64, _: bool) {}
    #[inline]
    fn value(&mut self, _: u64) {}
    #[inline]
    fn wants_listpack_elements(&self, _: u64) -> bool {
        false
    }
    #[inline]
    fn container(&mut self, _: u64) {}
    #[inline]
    fn list_node(&mut self, _: u64, _: u64, _: bool, _: Option<u64>) {}
    #[inline]
    fn stream_node(&mut self, _: [u8; 16], _: u64) {}
    #[inline]
    fn pending_entry(&mut self, _: [u8; 16]) {}
    #[inline]
    fn pending_list_end(&mut self) {}
    #[inline]
    fn consumer(&mut self, _: u64) {}
    #[inline]
    fn name_list(&mut self, _: &mut [Cow<'_, [u8]>]) {}
    #[inline]
    fn array_string(&mut self, _: u64, _: u64, _: bool) {}
    #[inline]
    fn array_integer(&mut self, _: u64, _: i64) {}
    #[inline]
    fn array_double(&mut self, _: u64) {}
}
