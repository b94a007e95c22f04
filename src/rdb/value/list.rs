//! Lists: linked (type 1, read with the plain set of type 2, which the RDB lays out alike),
//! and quicklists of ziplist nodes (type 14) or of listpack and plain nodes (type 18). Lists
//! in one ziplist (type 10) are read in [`super::container`].

use super::super::bytes::Bytes;
use super::super::error::{DecodeError, Result};
use super::super::length::{read_count, read_length, read_string, RdbString};
use super::super::listpack;
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::string::integer_value;
use super::{blob, locate, PackedEntries, Scratch, ValueFacts};

/// A linked list (type 1) or a plain set (type 2): a count, then one string per element.
/// A set's members also go to the sink, with the integer each holds.
#[inline]
pub(super) fn walk_linked_list_or_set<const DEEP: bool, S: ValueSink>(
    vt: ValueType,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let n = read_count(r, 1, "collection length")?;
    for _ in 0..n {
        scratch.walked_to(r.offset());
        let e = read_string(r, "collection element")?;
        if DEEP {
            s.string(&e)?;
            s.estimate(listpack::entry_size_of_string(&e));
            if vt == ValueType::SetPlain {
                sink.member(e.len());
                match integer_value(&e) {
                    Some(v) => sink.member_integer(v),
                    None => s.all_integers = false,
                }
            }
        }
    }
    s.elements = Some(n);
    Ok(())
}

/// A quicklist: a node count, then one string per node: a ziplist (type 14), or (type 18)
/// after the node's container (1 plain, 2 packed) one element or a listpack.
#[inline]
pub(super) fn walk_quicklist<const DEEP: bool, S: ValueSink>(
    vt: ValueType,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let nodes = read_count(r, 2, "quicklist node count")?;
    let mut elements = 0u64;
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
        if DEEP {
            if plain {
                s.plain_nodes = s.plain_nodes.saturating_add(1);
                s.string(&node)?;
                elements = elements.saturating_add(1);
                s.estimate(listpack::entry_size_of_string(&node));
                sink.list_node(index, node.len(), None);
            } else {
                let (bytes, origin, compressed) = blob(node, at, &mut scratch.blob)?;
                let mut est = 0u64;
                let mut largest = s.largest_element;
                let mut n = 0u64;
                let entries = PackedEntries::parse(vt == ValueType::ListQuicklist, bytes, origin);
                for entry in locate(entries, compressed)? {
                    let (e, size) = locate(entry, compressed)?;
                    largest = largest.max(e.len());
                    est = est.saturating_add(size);
                    n = n.saturating_add(1);
                }
                s.largest_element = largest;
                s.estimate(est);
                // Ziplist nodes are rewritten as listpacks while loading.
                let node_bytes = if vt == ValueType::ListQuicklist2 {
                    bytes.len() as u64
                } else {
                    est.saturating_add(7)
                };
                let lzf = match node {
                    RdbString::Lzf { compressed, .. } => Some(compressed.len() as u64),
                    _ => None,
                };
                sink.list_node(index, node_bytes, lzf);
                elements = elements.saturating_add(n);
            }
        }
    }
    if DEEP {
        s.list_nodes = nodes;
        s.elements = Some(elements);
    }
    Ok(())
}
