//! Values stored one element at a time: linked lists (type 1), plain sets (type 2), sorted
//! sets with scores as text (type 3) or binary doubles (type 5), plain hashes (type 4),
//! hashes with field TTLs (Redis 7.4: type 24 after its minimum expiry, type 22 of the
//! release candidates) and Valkey 9's (type 22 under the VALKEY magic). Each is a count,
//! then its elements; one loop reads them all, an arm per layout of an element.

use super::super::bytes::Bytes;
use super::super::error::Result;
use super::super::length::{read_count, read_length, read_string, RdbString};
use super::super::listpack;
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::string::integer_value;
use super::{ValueFacts, Walk};

/// The layout of an element, the const parameter `LAYOUT` of [`Walk::one_by_one`]: each
/// layout gets a loop of its own, with no dispatch per element.
pub(super) mod layout {
    /// One string: linked lists and plain sets.
    pub const STRING: u8 = 0;
    /// A member and its score.
    pub const ZSET: u8 = 1;
    /// A field and its value, after its TTL on hashes with field TTLs.
    pub const HASH: u8 = 2;
    /// Valkey 9: a field, its value and its expiry.
    pub const VALKEY_HASH: u8 = 3;
}

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A value stored one element at a time (see the module doc), its elements laid out as
    /// `LAYOUT` says.
    #[inline]
    pub(super) fn one_by_one<const DEEP: bool, const LAYOUT: u8>(
        &mut self,
        vt: ValueType,
    ) -> Result<()> {
        use ValueType::*;
        let (r, scratch, s, sink) = self.parts();
        if vt == HashMetadata {
            r.skip(8, "hash minimum field expiry")?;
        }
        // The fewest bytes an element takes, for the count's plausibility check.
        let (min_bytes_each, reading) = match LAYOUT {
            layout::STRING => (1, "collection length"),
            layout::ZSET => (2, "sorted set length"),
            layout::HASH if vt == HashPlain => (2, "hash length"),
            layout::HASH => (3, "hash length"),
            _ => (10, "hash length"),
        };
        let n = read_count(r, min_bytes_each, reading)?;
        for _ in 0..n {
            scratch.walked_to(r.offset());
            match LAYOUT {
                layout::STRING => {
                    let e = read_string(r, "collection element")?;
                    if DEEP {
                        s.string(&e)?;
                        s.estimate(listpack::entry_size_of_string(&e));
                        // A set's members also go to the sink, with the integer each holds.
                        if vt == SetPlain {
                            sink.member(e.len());
                            match integer_value(&e) {
                                Some(v) => sink.member_integer(v),
                                None => s.all_integers = false,
                            }
                        }
                    }
                }
                layout::ZSET => {
                    let member = read_string(r, "sorted set member")?;
                    let score = read_score::<DEEP>(vt == ZSetBinary, r)?;
                    if DEEP {
                        s.string(&member)?;
                        sink.zset_member(member.len());
                        s.estimate(listpack::entry_size_of_string(&member));
                        s.estimate(listpack::entry_size_of_score(score));
                    }
                }
                layout::HASH => {
                    let ttl = if vt == HashPlain {
                        0
                    } else {
                        read_length(r, "hash field TTL")?
                    };
                    let (field, value) = field_and_value::<DEEP>(r, s)?;
                    if DEEP {
                        s.fields_with_ttl = s.fields_with_ttl.saturating_add(u64::from(ttl != 0));
                        sink.field(field.len(), ttl != 0);
                        sink.value(value.len());
                        s.estimate(listpack::entry_size_of_string(&field));
                        s.estimate(listpack::entry_size_of_string(&value));
                        if vt != HashPlain {
                            // The listpack form stores each field's absolute expiry (0 = none).
                            s.estimate(if ttl != 0 { 10 } else { 2 });
                        }
                    }
                }
                // Valkey 9: each field, its value and its expiry (`u64::MAX` for none).
                _ => {
                    let (field, value) = field_and_value::<DEEP>(r, s)?;
                    let expiry = r.read_u64_le("hash field expiry")?;
                    if DEEP {
                        s.fields_with_ttl = s
                            .fields_with_ttl
                            .saturating_add(u64::from(expiry != u64::MAX));
                        sink.member(field.len());
                        sink.value(value.len());
                    }
                }
            }
        }
        s.elements = Some(n);
        Ok(())
    }
}

/// A hash field and its value, each checked and counted in `s` when `DEEP`.
#[inline(always)]
fn field_and_value<'data, const DEEP: bool>(
    r: &mut Bytes<'data>,
    s: &mut ValueFacts,
) -> Result<(RdbString<'data>, RdbString<'data>)> {
    let field = read_string(r, "hash field")?;
    if DEEP {
        s.string(&field)?;
    }
    let value = read_string(r, "hash value")?;
    if DEEP {
        s.string(&value)?;
    }
    Ok((field, value))
}

/// A sorted-set score: a binary double (type 5), or text after its length (type 3), where
/// lengths 253/254/255 mean nan/+inf/-inf. Parsed only when `DEEP`.
#[inline(always)]
fn read_score<const DEEP: bool>(binary: bool, r: &mut Bytes<'_>) -> Result<f64> {
    if binary {
        return Ok(f64::from_le_bytes(r.read_array("sorted set score")?));
    }
    let len = r.read_u8("sorted set score")?;
    let text = if len < 253 {
        r.read_bytes(u64::from(len), "sorted set score")?
    } else {
        &[]
    };
    Ok(match len {
        _ if !DEEP => 0.0,
        253 => f64::NAN,
        254 => f64::INFINITY,
        255 => f64::NEG_INFINITY,
        _ => std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0),
    })
}
