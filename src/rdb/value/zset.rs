//! Sorted sets stored one member at a time, with scores as text (type 3) or as binary
//! doubles (type 5). Sorted sets in one container blob are read in [`super::container`].

use super::super::bytes::Bytes;
use super::super::error::Result;
use super::super::length::{read_count, read_string};
use super::super::listpack;
use super::super::value_sink::ValueSink;
use super::super::value_type::ValueType;
use super::{Scratch, ValueFacts};

/// A plain sorted set (type 3 or 5): a count, then each member and its score.
#[inline]
pub(super) fn walk_plain_zset<const DEEP: bool, S: ValueSink>(
    vt: ValueType,
    r: &mut Bytes<'_>,
    scratch: &mut Scratch<'_>,
    s: &mut ValueFacts,
    sink: &mut S,
) -> Result<()> {
    let n = read_count(r, 2, "sorted set length")?;
    for _ in 0..n {
        scratch.walked_to(r.offset());
        let member = read_string(r, "sorted set member")?;
        let score = if vt == ValueType::ZSetBinary {
            f64::from_le_bytes(r.read_array("sorted set score")?)
        } else {
            let len = r.read_u8("sorted set score")?;
            let text = if len < 253 {
                r.read_bytes(u64::from(len), "sorted set score")?
            } else {
                &[]
            };
            if DEEP {
                text_score(len, text)
            } else {
                0.0
            }
        };
        if DEEP {
            s.string(&member)?;
            sink.zset_member(member.len());
            s.estimate(listpack::entry_size_of_string(&member));
            s.estimate(listpack::entry_size_of_score(score));
        }
    }
    s.elements = Some(n);
    Ok(())
}

/// Parses a score stored as text (`RDB_TYPE_ZSET`): length 253/254/255 mean nan/+inf/-inf.
fn text_score(len: u8, text: &[u8]) -> f64 {
    match len {
        253 => f64::NAN,
        254 => f64::INFINITY,
        255 => f64::NEG_INFINITY,
        _ => std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0.0),
    }
}
