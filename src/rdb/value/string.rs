//! String values (type 0): the length, whether the string holds a canonical integer, and
//! whether it is a sparse HyperLogLog; also the integer check of plain set members.

use super::super::bytes::Bytes;
use super::super::error::Result;
use super::super::length::{read_string, RdbString};
use super::ValueFacts;

/// A string value: read, and described in `s` when `DEEP`.
#[inline]
pub(super) fn walk_string<const DEEP: bool>(r: &mut Bytes<'_>, s: &mut ValueFacts) -> Result<()> {
    let v = read_string(r, "string value")?;
    if DEEP {
        describe_string(&v, s)?;
    }
    Ok(())
}

/// Describes the string value `v` (as the scanner read it) in `s` (overwritten): what
/// [`super::summarize_value_into`] does for a string, on a straight path with no dispatch on the
/// value's type, handing the string back.
#[inline(always)]
pub fn summarize_string_into<'data>(
    v: RdbString<'data>,
    s: &mut ValueFacts,
) -> Result<RdbString<'data>> {
    *s = ValueFacts {
        all_integers: true,
        ..ValueFacts::default()
    };
    describe_string(&v, s)?;
    if s.largest_element > 20 {
        s.string_is_sparse_hll = is_sparse_hll(&v);
    }
    Ok(v)
}

/// A string value's length, and whether it holds a canonical integer. Always inlined: on
/// dumps of small strings it runs for every key, and out of line it cost 45 instructions a
/// key more (1M 20-byte strings, `info`).
#[inline(always)]
fn describe_string(v: &RdbString<'_>, s: &mut ValueFacts) -> Result<()> {
    v.validate()?;
    s.elements = Some(v.len());
    s.largest_element = v.len();
    s.string_is_integer = v.len() <= 20 && string_is_integer(v);
    Ok(())
}

/// The first bytes of a sparse HyperLogLog: the magic and the encoding byte
/// (`HLL_SPARSE`); the header's other 11 bytes are 3 unused and the cached cardinality.
const SPARSE_HLL_MAGIC: [u8; 5] = *b"HYLL\x01";

/// Whether a string begins as a sparse HyperLogLog, decompressing no more than its first
/// 5 bytes (an LZF stream always begins with a literal run, which holds them). Out of
/// line: inlined into the straight path of small strings, which never call it, it cost
/// 24 instructions a key (1M 20-byte strings, `report`).
#[inline(never)]
fn is_sparse_hll(v: &RdbString<'_>) -> bool {
    match *v {
        RdbString::Raw(b) => b.starts_with(&SPARSE_HLL_MAGIC),
        RdbString::Lzf { compressed, .. } => {
            super::super::lzf::prefix::<5>(compressed) == Some(SPARSE_HLL_MAGIC)
        }
        RdbString::Int(_) => false,
    }
}

/// Canonical-integer check of a plain string element, without decompressing
/// (LZF is only used for strings over 20 bytes, which can never be a 64-bit integer).
fn string_is_integer(s: &RdbString<'_>) -> bool {
    integer_value(s).is_some()
}

/// The integer a plain string element holds in canonical form, if any.
pub(super) fn integer_value(s: &RdbString<'_>) -> Option<i64> {
    match *s {
        RdbString::Int(v) => Some(v),
        RdbString::Raw(b) => super::super::element::parse_canonical_i64(b),
        RdbString::Lzf { .. } => None,
    }
}
