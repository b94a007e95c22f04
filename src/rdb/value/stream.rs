//! Streams, layout versions 1–5 (types 15, 19, 21, 26, 27): the node listpacks, the length
//! and last ID, the consumer groups with their pending entries, consumers and (version 5)
//! NACKed entries, and (version 4 on) the idempotency records.

use super::super::element::Element;
use super::super::error::{DecodeError, Result};
use super::super::length::{read_count, read_length, read_string};
use super::super::listpack::Listpack;
use super::super::value_sink::ValueSink;
use super::{blob, locate, StreamBookkeeping, Walk};

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A stream: its entries' nodes, then its bookkeeping ([`StreamBookkeeping`]).
    #[inline]
    pub(super) fn stream<const DEEP: bool>(&mut self, version: u8) -> Result<()> {
        let (r, scratch, s, sink) = self.parts();
        let mut st = StreamBookkeeping::default();
        // Every stream entry takes several listpack entries: a length above this count is a
        // dump contradicting itself (docs/untrusted-numbers.md).
        let mut listpack_entries = 0u64;
        let nodes = read_count(r, 2, "stream node count")?;
        for _ in 0..nodes {
            scratch.walked_to(r.offset());
            let at = r.offset();
            let master = read_string(r, "stream node master ID")?;
            if master.len() != 16 {
                return Err(DecodeError::malformed(
                    at,
                    "stream node master ID",
                    format!("{} bytes, expected 16", master.len()),
                ));
            }
            let mut master_id = [0u8; 16];
            if DEEP {
                master_id.copy_from_slice(master.to_cow()?.as_ref());
            }
            let at = r.offset();
            let lp = read_string(r, "stream node listpack")?;
            if DEEP {
                let (bytes, origin, compressed) = blob(lp, at, &mut scratch.blob)?;
                let mut largest = s.largest_element;
                let mut entries = 0u64;
                for entry in locate(Listpack::parse(bytes, origin), compressed)?.iter() {
                    if let (Element::Bytes(b), _) = locate(entry, compressed)? {
                        largest = largest.max(b.len() as u64);
                    }
                    entries = entries.saturating_add(1);
                }
                let total = bytes.len() as u64;
                listpack_entries = listpack_entries.saturating_add(entries);
                s.largest_element = largest;
                st.listpack_bytes = st.listpack_bytes.saturating_add(total);
                sink.stream_node(master_id, total);
            }
        }
        st.nodes = nodes;
        let at = r.offset();
        let length = read_length(r, "stream length")?;
        if DEEP && length > listpack_entries {
            return Err(DecodeError::malformed(
                at,
                "stream length",
                format!(
                    "{length} entries claimed, its nodes hold {listpack_entries} listpack entries"
                ),
            ));
        }
        st.last_id = (
            read_length(r, "stream last ID")?,
            read_length(r, "stream last ID")?,
        );
        if version >= 2 {
            for _ in 0..5 {
                read_length(r, "stream first/max-deleted ID and entries added")?;
            }
        }
        let groups = read_count(r, 4, "stream consumer group count")?;
        // The IDs of a group's pending entries, kept for its NACK zone (type 27).
        let mut group_pel: Vec<[u8; 16]> = Vec::new();
        let mut group_names = Vec::new();
        let mut consumer_names = Vec::new();
        for _ in 0..groups {
            let name = read_string(r, "consumer group name")?;
            if DEEP {
                group_names.push(name.to_cow()?);
            }
            read_length(r, "consumer group last ID")?;
            read_length(r, "consumer group last ID")?;
            if version >= 2 {
                read_length(r, "consumer group entries read")?;
            }
            let pel = read_count(r, 25, "consumer group PEL size")?;
            group_pel.clear();
            for _ in 0..pel {
                let id = r.read_array::<16>("pending entry ID")?;
                if version >= 5 {
                    group_pel.push(id);
                }
                sink.pending_entry(id);
                r.skip(8, "pending entry delivery time")?;
                read_length(r, "pending entry delivery count")?;
            }
            st.pending = st.pending.saturating_add(pel);
            sink.pending_list_end();
            let consumers = read_count(r, 10, "consumer count")?;
            consumer_names.clear();
            for _ in 0..consumers {
                let name = read_string(r, "consumer name")?;
                if DEEP {
                    consumer_names.push(name.to_cow()?);
                }
                r.skip(
                    if version >= 3 { 16 } else { 8 },
                    "consumer seen/active time",
                )?;
                let pending = read_count(r, 16, "consumer PEL size")?;
                sink.consumer(name.len());
                for _ in 0..pending {
                    sink.pending_entry(r.read_array::<16>("consumer PEL ID")?);
                }
                sink.pending_list_end();
            }
            st.consumers = st.consumers.saturating_add(consumers);
            if DEEP {
                sink.name_list(&mut consumer_names);
            }
            if version >= 5 {
                // Entries released with XNACK: listed again by ID, already counted in the PEL,
                // which must hold them (Redis refuses the dump otherwise).
                let nacked = read_count(r, 16, "consumer group NACK count")?;
                group_pel.sort_unstable();
                for _ in 0..nacked {
                    let at = r.offset();
                    let id = r.read_array::<16>("NACK entry ID")?;
                    if group_pel.binary_search(&id).is_err() {
                        return Err(DecodeError::malformed(
                            at,
                            "NACK entry ID",
                            "a NACKed entry missing from its group's pending entries",
                        ));
                    }
                }
            }
        }
        st.groups = groups;
        if DEEP && groups > 0 {
            sink.name_list(&mut group_names);
        }
        if version >= 4 {
            read_length(r, "stream idempotency duration")?;
            read_length(r, "stream idempotency max entries")?;
            let producers = read_count(r, 2, "stream idempotency producers")?;
            for _ in 0..producers {
                read_string(r, "stream producer id")?;
                let ids = read_count(r, 3, "stream idempotency ids")?;
                for _ in 0..ids {
                    read_string(r, "stream idempotency id")?;
                    read_length(r, "stream idempotency entry ID")?;
                    read_length(r, "stream idempotency entry ID")?;
                }
            }
            read_length(r, "stream idempotency counters")?;
            read_length(r, "stream idempotency counters")?;
        }
        if DEEP {
            s.elements = Some(length);
            s.stream = Some(st);
            s.all_integers = false;
        }
        Ok(())
    }
}
