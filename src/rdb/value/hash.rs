//! Hashes on a field-name template (Redis 8.10, types 29–32). Hashes stored one field at a
//! time are read in [`super::plain`], those in one container blob in [`super::container`].

use super::super::bytes::Bytes;
use super::super::element::Element;
use super::super::error::{DecodeError, Result};
use super::super::length::{read_count, read_length, read_string};
use super::super::listpack::Listpack;
use super::super::template::{FieldOrder, Template};
use super::super::value_sink::ValueSink;
use super::{blob, locate, read_container, Scratch, ValueFacts, Walk};

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A hash on a field-name template (types 29–32): the field names inline (29, 31) or from
    /// the template the scanner resolved (30, 32), then the values in a listpack whose first
    /// entry is the template id (29, 30) or as one string each (31, 32).
    #[inline]
    pub(super) fn template_hash<const DEEP: bool>(
        &mut self,
        values_in_listpack: bool,
        by_ref: bool,
        template: Option<&Template<'_>>,
    ) -> Result<()> {
        let (r, scratch, s, sink) = self.parts();
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
            let read = |bytes: &[u8], origin, sink: &mut S| {
                template_values(bytes, origin, fields, s, sink)
            };
            read_container::<DEEP, S>(r, scratch, sink, "hash template values", read)?;
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
    let mut n = 0u64;
    for entry in Listpack::parse(bytes, origin)?.iter() {
        let (e, _) = entry?;
        if n == 0 {
            first_is_id = matches!(e, Element::Int(id) if id >= 0);
        } else {
            let len = e.len();
            largest = largest.max(len);
            sink.value(len);
        }
        n = n.saturating_add(1);
    }
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
