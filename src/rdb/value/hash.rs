//! Hashes stored one field at a time: plain (type 4), with field TTLs (Redis 7.4, types 22
//! and 24), Valkey 9's (type 22 under the VALKEY magic), and the hashes on a field-name
//! template of Redis 8.10 (types 29–32). Hashes in one container blob are read in
//! [`super::container`].

use super::super::bytes::Bytes;
use super::super::element::Element;
use super::super::error::{DecodeError, Result};
use super::super::length::{read_count, read_length, read_string};
use super::super::listpack::{self, Listpack};
use super::super::template::{FieldOrder, Template};
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::{blob, for_each_listpack, locate, Scratch, ValueFacts};

/// A plain hash (type 4): a count, then each field and its value.
#[inline]
pub(super) fn walk_plain_hash<const DEEP: bool, S: ValueSink>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let n = read_count(r, 2, "hash length")?;
    for _ in 0..n {
        scratch.walked_to(r.offset());
        let field = read_string(r, "hash field")?;
        let value = read_string(r, "hash value")?;
        if DEEP {
            s.string(&field)?;
            s.string(&value)?;
            sink.field(field.len(), false);
            sink.value(value.len());
            s.estimate(listpack::entry_size_of_string(&field));
            s.estimate(listpack::entry_size_of_string(&value));
        }
    }
    s.elements = Some(n);
    Ok(())
}

/// A hash with field TTLs (Redis 7.4: type 24 after its minimum expiry, type 22 of the
/// release candidates): a count, then each field's TTL, the field and its value.
#[inline]
pub(super) fn walk_hash_with_ttls<const DEEP: bool, S: ValueSink>(
    vt: ValueType,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    if vt == ValueType::HashMetadata {
        r.skip(8, "hash minimum field expiry")?;
    }
    let n = read_count(r, 3, "hash length")?;
    for _ in 0..n {
        scratch.walked_to(r.offset());
        let ttl = read_length(r, "hash field TTL")?;
        let field = read_string(r, "hash field")?;
        let value = read_string(r, "hash value")?;
        if DEEP {
            s.string(&field)?;
            s.string(&value)?;
            s.fields_with_ttl = s.fields_with_ttl.saturating_add(u64::from(ttl != 0));
            sink.field(field.len(), ttl != 0);
            sink.value(value.len());
            // The listpack form stores each field's absolute expiry (0 = none).
            let expiry_entry = if ttl != 0 { 10 } else { 2 };
            s.estimate(listpack::entry_size_of_string(&field));
            s.estimate(listpack::entry_size_of_string(&value));
            s.estimate(expiry_entry);
        }
    }
    s.elements = Some(n);
    Ok(())
}

/// A Valkey 9 hash (type 22 under the VALKEY magic): a count, then each field, its value
/// and its expiry (`u64::MAX` for none).
#[inline]
pub(super) fn walk_valkey_hash<const DEEP: bool, S: ValueSink>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let n = read_count(r, 10, "hash length")?;
    for _ in 0..n {
        scratch.walked_to(r.offset());
        let field = read_string(r, "hash field")?;
        let value = read_string(r, "hash value")?;
        let expiry = r.read_u64_le("hash field expiry")?;
        if DEEP {
            s.string(&field)?;
            s.string(&value)?;
            s.fields_with_ttl = s
                .fields_with_ttl
                .saturating_add(u64::from(expiry != u64::MAX));
            sink.member(field.len());
            sink.value(value.len());
        }
    }
    s.elements = Some(n);
    Ok(())
}

/// A hash on a field-name template (types 29–32): the field names inline (29, 31) or from
/// the template the scanner resolved (30, 32), then the values in a listpack whose first
/// entry is the template id (29, 30) or as one string each (31, 32).
#[inline]
pub(super) fn walk_template_hash<const DEEP: bool, S: ValueSink>(
    values_in_listpack: bool,
    by_ref: bool,
    template: Option<&Template<'_>>,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let fields = if by_ref {
        let Some(t) = template else {
            return Err(DecodeError::malformed(
                r.offset(),
                "hash template id",
                "a template reference read without its template",
            ));
        };
        if !values_in_listpack {
            let at = r.offset();
            let id = read_length(r, "hash template id")?;
            if id != t.id {
                return Err(DecodeError::malformed(
                    at,
                    "hash template id",
                    format!("template {id} where {} was resolved", t.id),
                ));
            }
        }
        if DEEP {
            for name in t.names() {
                s.element_len(name?.len());
            }
        }
        t.field_count
    } else {
        inline_template_fields::<DEEP>(r, scratch, s)?
    };
    if values_in_listpack {
        let at = r.offset();
        let values = read_string(r, "hash template values")?;
        if DEEP {
            let (bytes, origin, compressed) = blob(values, at, &mut scratch.blob)?;
            sink.container(bytes.len() as u64);
            locate(template_values(bytes, origin, fields, s, sink), compressed)?;
        }
    } else {
        for _ in 0..fields {
            scratch.walked_to(r.offset());
            let value = read_string(r, "hash template value")?;
            if DEEP {
                s.string(&value)?;
                s.largest_value = s.largest_value.max(value.len());
                sink.value(value.len());
            }
        }
    }
    if DEEP {
        s.elements = Some(fields);
        s.all_integers = false;
    }
    Ok(())
}

/// The field names of a self-contained template hash: a format (0: a listpack of names,
/// 1: a count and one string each), then the names, strictly ascending. Returns the count.
#[inline]
fn inline_template_fields<const DEEP: bool>(
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
) -> Result<u64> {
    const READING: &str = "hash template field names";
    let at = r.offset();
    let mut order = FieldOrder::default();
    let fields = match read_length(r, "hash template field format")? {
        0 => {
            let at = r.offset();
            let names = read_string(r, READING)?;
            let (bytes, origin, compressed) = blob(names, at, &mut scratch.blob)?;
            let lp = locate(Listpack::parse(bytes, origin), compressed)?;
            let mut n = 0u64;
            let mut entry_at = origin.saturating_add(6);
            for entry in lp.iter() {
                let (name, size) = locate(entry, compressed)?;
                locate(order.check_element(name, entry_at), compressed)?;
                if DEEP {
                    s.element_len(name.len());
                }
                entry_at = entry_at.saturating_add(size);
                n = n.saturating_add(1);
            }
            n
        }
        1 => {
            let n = read_count(r, 1, "hash template field count")?;
            for _ in 0..n {
                let at = r.offset();
                let name = read_string(r, READING)?;
                order.check_string(&name, at)?;
                if DEEP {
                    s.element_len(name.len());
                }
            }
            n
        }
        format => {
            return Err(DecodeError::malformed(
                at,
                "hash template field format",
                format!("{format}, expected 0 (a listpack) or 1 (strings)"),
            ))
        }
    };
    if fields == 0 {
        return Err(DecodeError::malformed(
            at,
            READING,
            "a template hash without fields",
        ));
    }
    Ok(fields)
}

/// The values listpack of a template hash: a template id (an integer), then one value per
/// field.
#[inline]
fn template_values(
    bytes: &[u8],
    origin: u64,
    fields: u64,
    s: &mut ValueFacts,
    sink: &mut impl ValueSink,
) -> Result<()> {
    const READING: &str = "hash template values";
    let mut first_is_id = false;
    let mut largest = 0;
    let (n, _) = for_each_listpack(bytes, origin, |i, e, _| {
        if i == 0 {
            first_is_id = matches!(e, Element::Int(id) if id >= 0);
        } else {
            largest = largest.max(e.len());
            sink.value(e.len());
        }
    })?;
    s.largest_value = largest;
    s.largest_element = s.largest_element.max(largest);
    if n == 0 || !first_is_id {
        return Err(DecodeError::malformed(
            origin,
            READING,
            "the first entry is not a template id (a non-negative integer)",
        ));
    }
    if n != fields.saturating_add(1) {
        return Err(DecodeError::malformed(
            origin,
            READING,
            format!("{n} entries for {fields} fields (a template id and one value each)"),
        ));
    }
    Ok(())
}
