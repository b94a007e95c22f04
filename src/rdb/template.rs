//! Hash templates (Redis 8.10, RDB 15): a field-name list stored once, at the top level
//! (opcode 242), that the hashes of types 30 and 32 refer to by id and hold only values for.
//!
//! Field names are strictly ascending, shortest first, then bytewise (so `age` < `name` <
//! `email`); a template has at least one field. The self-contained forms (types 29 and 31,
//! what `DUMP` writes) carry their names inline under the same rule.

use super::bytes::Bytes;
use super::element::Element;
use super::error::{DecodeError, Result};
use super::length::{read_length, read_nonzero_count, read_string, RdbString};
use super::listpack::Listpack;

/// One opcode-242 record, borrowed from the dump: its names are re-read when needed.
#[derive(Clone, Copy, Debug)]
pub struct Template<'data> {
    pub id: u64,
    pub field_count: u64,
    /// A cursor at the first field name.
    names: Bytes<'data>,
}

impl<'data> Template<'data> {
    /// Reads the record after its opcode, checking the field-name rules.
    pub fn read(r: &mut Bytes<'data>) -> Result<Template<'data>> {
        let id = read_length(r, "hash template id")?;
        let field_count = read_nonzero_count(
            r,
            1,
            "hash template field count",
            "a template without fields",
        )?;
        let names = *r;
        let mut order = FieldOrder::default();
        for _ in 0..field_count {
            let at = r.offset();
            let name = read_string(r, "hash template field name")?;
            order.check_string(&name, at)?;
        }
        Ok(Template {
            id,
            field_count,
            names,
        })
    }

    /// The field names, in order.
    pub fn names(&self) -> impl Iterator<Item = Result<RdbString<'data>>> {
        let mut r = self.names;
        (0..self.field_count).map(move |_| read_string(&mut r, "hash template field name"))
    }
}

/// Checks that field names arrive strictly ascending: shorter first, then bytewise.
#[derive(Default)]
pub struct FieldOrder {
    previous: Option<Vec<u8>>,
}

impl FieldOrder {
    /// The next name, read as an RDB string at `at`.
    pub fn check_string(&mut self, name: &RdbString<'_>, at: u64) -> Result<()> {
        name.validate()?;
        self.check(&name.to_cow()?, at)
    }

    /// The next name, read as a listpack entry at `at`.
    pub fn check_element(&mut self, name: Element<'_>, at: u64) -> Result<()> {
        match name {
            Element::Bytes(b) => self.check(b, at),
            Element::Int(v) => self.check(v.to_string().as_bytes(), at),
        }
    }

    fn check(&mut self, name: &[u8], at: u64) -> Result<()> {
        if let Some(previous) = &self.previous {
            let ascending = (previous.len(), previous.as_slice()) < (name.len(), name);
            if !ascending {
                return Err(DecodeError::malformed(
                    at,
                    "hash template field name",
                    "field names not strictly ascending (shorter first, then bytewise)",
                ));
            }
        }
        let previous = self.previous.get_or_insert_with(Vec::new);
        previous.clear();
        previous.extend_from_slice(name);
        Ok(())
    }
}

/// The template id a type-30 value names: the first entry of its values listpack, a
/// non-negative integer, and that entry's offset (the blob's when it is compressed).
/// `value` was read at `at`; an LZF blob is expanded into `scratch`.
pub fn listpack_template_id(
    value: &RdbString<'_>,
    value_end: u64,
    scratch: &mut Vec<u8>,
) -> Result<(u64, u64)> {
    const READING: &str = "hash template values";
    let (bytes, origin, compressed) = match *value {
        RdbString::Raw(b) => (b, value_end.saturating_sub(b.len() as u64), None),
        RdbString::Lzf { offset, .. } => (value.bytes(scratch)?, offset, Some(offset)),
        RdbString::Int(_) => {
            return Err(DecodeError::malformed(
                value_end,
                READING,
                "an integer where a listpack was expected",
            ))
        }
    };
    let first = Listpack::parse(bytes, origin).and_then(|lp| {
        lp.iter()
            .next()
            .transpose()?
            .ok_or_else(|| DecodeError::malformed(origin, READING, "an empty values listpack"))
    });
    let first = match compressed {
        Some(at) => first.map_err(|e| e.inside_compressed_blob(at))?,
        None => first?,
    };
    // The entry follows the 6-byte listpack header.
    let entry_at = compressed.unwrap_or(origin.saturating_add(6));
    match first.0 {
        Element::Int(id) if id >= 0 => Ok((id.unsigned_abs(), entry_at)),
        _ => Err(DecodeError::malformed(
            entry_at,
            READING,
            "the first entry is not a template id (a non-negative integer)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorter_names_sort_first_and_duplicates_are_refused() {
        let mut order = FieldOrder::default();
        for name in [&b""[..], b"z", b"age", b"name", b"email"] {
            order.check(name, 0).unwrap();
        }
        let mut order = FieldOrder::default();
        order.check(b"name", 0).unwrap();
        assert!(order.check(b"name", 7).is_err());
        let mut order = FieldOrder::default();
        order.check(b"name", 0).unwrap();
        assert_eq!(order.check(b"age", 9).unwrap_err().offset, 9);
        // Integer entries compare as their decimal text: "10" after "9".
        let mut order = FieldOrder::default();
        order.check_element(Element::Int(9), 0).unwrap();
        order.check_element(Element::Int(10), 0).unwrap();
    }

    #[test]
    fn a_template_record_and_its_names() {
        // id 0, 2 fields: "age", "name".
        let record = b"\x00\x02\x03age\x04name";
        let mut r = Bytes::new(record, 100);
        let t = Template::read(&mut r).unwrap();
        assert!(r.is_empty());
        assert_eq!((t.id, t.field_count), (0, 2));
        let names: Vec<_> = t.names().map(|n| n.unwrap().len()).collect();
        assert_eq!(names, [3, 4]);
        let e = Template::read(&mut Bytes::new(b"\x00\x00", 100)).unwrap_err();
        assert_eq!(e.offset, 101);
        let e = Template::read(&mut Bytes::new(b"\x00\x02\x04name\x03age", 100)).unwrap_err();
        assert_eq!(e.offset, 107);
    }
}
