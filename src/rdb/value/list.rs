//! Quicklists: of ziplist nodes (type 14), or of listpack and plain nodes (type 18). Linked
//! lists (type 1) are read in [`super::plain`], lists in one ziplist (type 10) in
//! [`super::container`].

use super::super::element::Element;
use super::super::error::{DecodeError, Result};
use super::super::length::{read_count, read_length, read_string, RdbString};
use super::super::listpack::{self, Listpack};
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::{blob, locate, ziplist_entries, Walk};

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A quicklist: a node count, then one string per node: a ziplist (type 14), or (type 18)
    /// after the node's container (1 plain, 2 packed) one element or a listpack.
    #[inline]
    pub(super) fn quicklist<const DEEP: bool>(&mut self, vt: ValueType) -> Result<()> {
        let (r, scratch, s, sink) = self.parts();
        let mut elements = 0u64;
        let nodes = read_count(r, 2, "quicklist node count")?;
        for index in 0..nodes {
            scratch.walked_to(r.offset());
            let plain = if vt == ValueType::ListQuicklist2 {
                let at = r.offset();
                match read_length(r, "quicklist node container")? {
                    1 => true,
                    2 => false,
                    c => {
                        return Err(DecodeError::malformed(
                            at,
                            "quicklist node container",
                            format!("unknown container {c}"),
                        ))
                    }
                }
            } else {
                false
            };
            let at = r.offset();
            let node = read_string(r, "quicklist node")?;
            if !DEEP {
                continue;
            }
            if plain {
                s.plain_nodes = s.plain_nodes.saturating_add(1);
                s.string(&node)?;
                elements = elements.saturating_add(1);
                s.estimate(listpack::entry_size_of_string(&node));
                sink.list_node(index, node.len(), false, None);
                continue;
            }
            let (bytes, origin, compressed) = blob(node, at, &mut scratch.blob)?;
            let ziplist = vt == ValueType::ListQuicklist;
            // A listpack node (Redis 7+) in a loop of its own, with no dispatch per entry.
            let (largest, est, n) = match ziplist {
                true => node_entries(
                    locate(ziplist_entries(bytes, origin), compressed)?,
                    compressed,
                )?,
                false => node_entries(
                    locate(Listpack::parse(bytes, origin), compressed)?.iter(),
                    compressed,
                )?,
            };
            s.largest_element = s.largest_element.max(largest);
            s.estimate(est);
            let lzf = match node {
                RdbString::Lzf { compressed, .. } => Some(compressed.len() as u64),
                _ => None,
            };
            let node_bytes = if ziplist { est } else { bytes.len() as u64 };
            sink.list_node(index, node_bytes, ziplist, lzf);
            elements = elements.saturating_add(n);
        }
        if DEEP {
            s.list_nodes = nodes;
            s.elements = Some(elements);
        }
        Ok(())
    }
}

/// A quicklist node's entries: the largest, the listpack bytes they take, how many.
#[inline(always)]
fn node_entries<'a>(
    entries: impl Iterator<Item = Result<(Element<'a>, u64)>>,
    compressed: Option<u64>,
) -> Result<(u64, u64, u64)> {
    let (mut largest, mut est, mut n) = (0u64, 0u64, 0u64);
    for entry in entries {
        let (e, size) = locate(entry, compressed)?;
        largest = largest.max(e.len());
        est = est.saturating_add(size);
        n = n.saturating_add(1);
    }
    Ok((largest, est, n))
}
