//! Listpack (`listpack.c`): the compact container of Redis 7+ hashes, sets, zsets, list
//! nodes and stream nodes.
//!
//! Layout: total bytes (u32 LE), element count (u16 LE, 65535 = "count it"), entries, 0xFF.
//! Each entry is an encoding byte, its data, and a 1–5 byte back-length used for reverse
//! traversal, which this forward reader only skips.

use super::bytes::{compact_entries, Bytes};
use super::element::Element;
use super::error::Result;
use super::length::RdbString;

const HEADER: usize = 6;

/// A validated listpack header over a blob.
#[derive(Clone, Copy, Debug)]
pub struct Listpack<'a> {
    entries: Bytes<'a>,
    /// Count from the header; `None` when it saturated at 65535.
    pub declared_len: Option<u16>,
}

impl<'a> Listpack<'a> {
    pub fn parse(blob: &'a [u8], origin: u64) -> Result<Self> {
        let (entries, declared_len) = compact_entries(blob, origin, HEADER, "listpack header")?;
        Ok(Listpack {
            entries,
            declared_len,
        })
    }

    pub fn iter(&self) -> ListpackIter<'a> {
        ListpackIter { r: self.entries }
    }
}

/// Forward iterator over listpack entries; stops after the first error.
pub struct ListpackIter<'a> {
    r: Bytes<'a>,
}

/// Bytes needed to store a back-length for an entry of `len` bytes.
#[inline]
pub fn backlen_size(len: u64) -> u64 {
    match len {
        0..=127 => 1,
        128..=16383 => 2,
        16384..=2097151 => 3,
        2097152..=268435455 => 4,
        _ => 5,
    }
}

impl<'a> ListpackIter<'a> {
    /// The next entry and the bytes it takes (encoding, data and back-length): the
    /// commonest two (a 7-bit integer, a string under 64 bytes, each with a one-byte
    /// back-length) read in line when whole, any other by [`ListpackIter::read_other_entry`].
    #[inline(always)]
    fn read_entry(r: &mut Bytes<'a>) -> Result<(Element<'a>, u64)> {
        let rest = r.rest();
        match rest.first().copied() {
            Some(b) if b & 0x80 == 0 && rest.len() >= 2 => {
                r.step_over(2);
                Ok((Element::Int(i64::from(b)), 2))
            }
            Some(b) if b & 0xc0 == 0x80 => {
                let len = usize::from(b & 0x3f);
                match rest.get(1..len.saturating_add(1)) {
                    // The back-length byte too must be there.
                    Some(data) if rest.len() > len.saturating_add(1) => {
                        let size = len.saturating_add(2);
                        r.step_over(size);
                        Ok((Element::Bytes(data), size as u64))
                    }
                    _ => Self::read_other_entry(r),
                }
            }
            _ => Self::read_other_entry(r),
        }
    }

    /// An entry of another encoding, or one cut short (which it reports).
    #[inline(never)]
    fn read_other_entry(r: &mut Bytes<'a>) -> Result<(Element<'a>, u64)> {
        const READING: &str = "listpack entry";
        let start = r.position();
        let b = r.read_u8(READING)?;
        let element = if b & 0x80 == 0 {
            Element::Int(i64::from(b & 0x7f))
        } else if b & 0xc0 == 0x80 {
            Element::Bytes(r.read_bytes(u64::from(b & 0x3f), READING)?)
        } else if b & 0xe0 == 0xc0 {
            let lo = r.read_u8(READING)?;
            let v = (u16::from(b & 0x1f) << 8) | u16::from(lo);
            // 13-bit two's complement.
            Element::Int(i64::from(i16::from_le_bytes((v << 3).to_le_bytes()) >> 3))
        } else if b & 0xf0 == 0xe0 {
            let lo = r.read_u8(READING)?;
            let len = (u64::from(b & 0x0f) << 8) | u64::from(lo);
            Element::Bytes(r.read_bytes(len, READING)?)
        } else {
            match b {
                0xf0 => {
                    let len = r.read_u32_le(READING)?;
                    Element::Bytes(r.read_bytes(u64::from(len), READING)?)
                }
                0xf1 => Element::Int(i64::from(r.read_i16_le(READING)?)),
                0xf2 => {
                    let x: [u8; 3] = r.read_array(READING)?;
                    Element::Int(i64::from(i32::from_le_bytes([0, x[0], x[1], x[2]]) >> 8))
                }
                0xf3 => Element::Int(i64::from(r.read_i32_le(READING)?)),
                0xf4 => Element::Int(r.read_i64_le(READING)?),
                _ => return Err(r.malformed(READING, format!("invalid encoding byte 0x{b:02x}"))),
            }
        };
        let entry_len = r.position().saturating_sub(start) as u64;
        let backlen = backlen_size(entry_len);
        r.skip(backlen, READING)?;
        Ok((element, entry_len.saturating_add(backlen)))
    }
}

impl<'a> Iterator for ListpackIter<'a> {
    /// An entry and its size in bytes.
    type Item = Result<(Element<'a>, u64)>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.r.next_entry(Self::read_entry)
    }
}

/// Bytes a listpack entry holding `element` takes (encoding, data and back-length), a
/// string that is a canonical integer encoded as the integer, as the format has it.
pub fn entry_size(element: Element<'_>) -> u64 {
    let body = match element {
        Element::Int(v) => match v {
            0..=127 => 1,
            -4096..=4095 => 2,
            -32768..=32767 => 3,
            -8388608..=8388607 => 4,
            -2147483648..=2147483647 => 5,
            _ => 9,
        },
        Element::Bytes(b) => match super::element::parse_canonical_i64(b) {
            Some(v) => return entry_size(Element::Int(v)),
            None => string_entry_body(b.len() as u64),
        },
    };
    body.saturating_add(backlen_size(body))
}

/// Bytes of the listpack entry that encodes the string element `s` (encoding, data and
/// back-length; an integer's as an integer entry, an LZF string's by its declared length).
/// This sizes the listpack entry that encodes the element; the memory model decides what
/// the server builds from that.
pub fn entry_size_of_string(s: &RdbString<'_>) -> u64 {
    match *s {
        RdbString::Raw(b) => entry_size(Element::Bytes(b)),
        RdbString::Int(v) => entry_size(Element::Int(v)),
        RdbString::Lzf { len, .. } => {
            let body = string_entry_body(len);
            body.saturating_add(backlen_size(body))
        }
    }
}

/// Bytes of the listpack entry that encodes the sorted-set score `score`: an integral score
/// is an integer entry, any other the shortest text that reads back as the same double.
/// This sizes the listpack entry that encodes the element; the memory model decides what
/// the server builds from that.
pub fn entry_size_of_score(score: f64) -> u64 {
    if score.fract() == 0.0 && score.abs() < 9.0e15 {
        return entry_size(Element::Int(score as i64));
    }
    let text_len = if score.is_finite() {
        ryu::Buffer::new().format_finite(score).len() as u64
    } else {
        4 // "inf", "-inf", "nan"
    };
    let body = string_entry_body(text_len);
    body.saturating_add(backlen_size(body))
}

/// Encoding plus data bytes of a string entry of `len` bytes.
pub fn string_entry_body(len: u64) -> u64 {
    match len {
        0..=63 => len.saturating_add(1),
        64..=4095 => len.saturating_add(2),
        _ => len.saturating_add(5),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(entries: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        for e in entries {
            body.extend_from_slice(e);
        }
        let total = body.len().saturating_add(HEADER + 1) as u32;
        let mut lp = total.to_le_bytes().to_vec();
        lp.extend_from_slice(&(entries.len() as u16).to_le_bytes());
        lp.extend_from_slice(&body);
        lp.push(0xff);
        lp
    }

    #[test]
    fn decodes_every_encoding() {
        let lp = build(&[
            &[0x05, 0x01],                         // 7-bit uint 5
            &[0x82, b'h', b'i', 0x03],             // 6-bit string "hi"
            &[0xdf, 0xff, 0x02],                   // 13-bit int -1
            &[0xf1, 0x00, 0x80, 0x03],             // int16 -32768
            &[0xf2, 0xff, 0xff, 0x7f, 0x04],       // int24 8388607
            &[0xf3, 0, 0, 0, 0x80, 0x05],          // int32 min
            &[0xf4, 1, 0, 0, 0, 0, 0, 0, 0, 0x09], // int64 1
        ]);
        let parsed = Listpack::parse(&lp, 0).unwrap();
        let got: Vec<_> = parsed.iter().map(|e| e.unwrap().0).collect();
        let sizes: Vec<_> = parsed.iter().map(|e| e.unwrap().1).collect();
        assert_eq!(sizes, vec![2, 4, 3, 4, 5, 6, 10]);
        assert_eq!(
            got,
            vec![
                Element::Int(5),
                Element::Bytes(b"hi"),
                Element::Int(-1),
                Element::Int(-32768),
                Element::Int(8388607),
                Element::Int(i64::from(i32::MIN)),
                Element::Int(1),
            ]
        );
        assert_eq!(parsed.declared_len, Some(7));
    }

    #[test]
    fn entry_past_the_blob_is_an_error_with_offset() {
        let mut lp = build(&[&[0x85, b'a']]);
        let n = lp.len();
        lp[n - 1] = 0xff;
        let parsed = Listpack::parse(&lp, 1000).unwrap();
        let err = parsed.iter().next().unwrap().unwrap_err();
        assert_eq!(err.offset, 1000 + HEADER as u64 + 1);
    }

    #[test]
    fn entry_sizes_match_redis_rules() {
        assert_eq!(entry_size(Element::Bytes(b"12")), 2);
        assert_eq!(entry_size(Element::Bytes(b"hello")), 7);
        assert_eq!(entry_size(Element::Int(1 << 40)), 10);
        assert_eq!(entry_size(Element::Bytes(&[b'x'; 200])), 2 + 200 + 2);
    }

    #[test]
    fn string_and_score_entries_are_sized_as_the_server_encodes_them() {
        assert_eq!(entry_size_of_string(&RdbString::Int(12)), 2);
        assert_eq!(entry_size_of_string(&RdbString::Raw(b"12")), 2);
        assert_eq!(entry_size_of_string(&RdbString::Raw(b"hello")), 7);
        // Integral scores are integer entries; others their shortest text ("1.5").
        assert_eq!(entry_size_of_score(1.0), 2);
        assert_eq!(entry_size_of_score(1.5), 5);
        assert_eq!(entry_size_of_score(f64::INFINITY), 6);
    }
}
