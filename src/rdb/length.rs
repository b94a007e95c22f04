//! Length and string encodings (`rdbLoadLen`, `rdbGenericLoadStringObject`).
//!
//! A length is 6, 14, 32 or 64 bits, chosen by the top two bits of its first byte; the
//! fourth form (`11xxxxxx`) marks a specially encoded string: an 8/16/32-bit integer or an
//! LZF-compressed blob.

use super::bytes::Bytes;
use super::error::{Problem, Result};
use super::lzf;
use std::borrow::Cow;

/// A string as stored: borrowed raw bytes, an integer, or compressed bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdbString<'data> {
    Raw(&'data [u8]),
    Int(i64),
    Lzf {
        compressed: &'data [u8],
        len: u64,
        /// Absolute offset of the compressed bytes, for errors.
        offset: u64,
    },
}

/// Decimal digits (and sign) of an integer: its `STRLEN`.
pub fn decimal_len(v: i64) -> u64 {
    // Most integers of collections are small and not negative: counted in line.
    if (0..1000).contains(&v) {
        return u64::from(v >= 10)
            .wrapping_add(u64::from(v >= 100))
            .wrapping_add(1);
    }
    // At most 19 digits and a sign: the sums cannot overflow.
    let digits = v
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| u64::from(d).wrapping_add(1));
    digits.wrapping_add(u64::from(v < 0))
}

impl<'data> RdbString<'data> {
    /// The length of the string Redis would hold (`STRLEN`), without decompressing.
    pub fn len(&self) -> u64 {
        match *self {
            RdbString::Raw(b) => b.len() as u64,
            RdbString::Int(v) => decimal_len(v),
            RdbString::Lzf { len, .. } => len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that an LZF string really decompresses to its declared length (raw and
    /// integer strings are valid by construction).
    pub fn validate(&self) -> Result<()> {
        match *self {
            RdbString::Lzf {
                compressed,
                len,
                offset,
            } => lzf::validate(compressed, len, offset),
            _ => Ok(()),
        }
    }

    /// The bytes, borrowed when stored raw, else rendered into `scratch`.
    pub fn bytes<'s>(&self, scratch: &'s mut Vec<u8>) -> Result<&'s [u8]>
    where
        'data: 's,
    {
        match *self {
            RdbString::Raw(b) => Ok(b),
            RdbString::Int(v) => {
                scratch.clear();
                scratch.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
                Ok(scratch)
            }
            RdbString::Lzf {
                compressed,
                len,
                offset,
            } => {
                lzf::decompress_into(compressed, len, offset, scratch)?;
                Ok(scratch)
            }
        }
    }

    /// The bytes as an owned-or-borrowed value (allocates only for ints and LZF).
    pub fn to_cow(&self) -> Result<Cow<'data, [u8]>> {
        match *self {
            RdbString::Raw(b) => Ok(Cow::Borrowed(b)),
            _ => {
                let mut v = Vec::new();
                self.bytes(&mut v)?;
                Ok(Cow::Owned(v))
            }
        }
    }
}

/// A length, or the special string encoding that stood in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthOrEncoding {
    Length(u64),
    Encoded(u8),
}

#[inline]
pub fn read_length_or_encoding(
    r: &mut Bytes<'_>,
    reading: &'static str,
) -> Result<LengthOrEncoding> {
    let first = r.read_u8(reading)?;
    Ok(match first >> 6 {
        0 => LengthOrEncoding::Length(u64::from(first & 0x3f)),
        1 => {
            let second = r.read_u8(reading)?;
            LengthOrEncoding::Length((u64::from(first & 0x3f) << 8) | u64::from(second))
        }
        2 => match first {
            0x80 => LengthOrEncoding::Length(u64::from(r.read_u32_be(reading)?)),
            0x81 => LengthOrEncoding::Length(r.read_u64_be(reading)?),
            _ => {
                return Err(super::error::DecodeError::new(
                    r.offset().saturating_sub(1),
                    reading,
                    Problem::BadLengthEncoding(first),
                ))
            }
        },
        _ => LengthOrEncoding::Encoded(first & 0x3f),
    })
}

/// Reads a plain length; a string encoding marker here is an error.
#[inline]
pub fn read_length(r: &mut Bytes<'_>, reading: &'static str) -> Result<u64> {
    let at = r.offset();
    match read_length_or_encoding(r, reading)? {
        LengthOrEncoding::Length(n) => Ok(n),
        LengthOrEncoding::Encoded(e) => Err(super::error::DecodeError::new(
            at,
            reading,
            Problem::BadLengthEncoding(0xc0 | e),
        )),
    }
}

/// Reads a length and checks that at least `min_bytes_each` bytes per counted item remain,
/// so a corrupt count can neither drive a loop for long nor an allocation.
#[inline]
pub fn read_count(r: &mut Bytes<'_>, min_bytes_each: u64, reading: &'static str) -> Result<u64> {
    let at = r.offset();
    let n = read_length(r, reading)?;
    if n.saturating_mul(min_bytes_each) > r.remaining() as u64 {
        return Err(super::error::DecodeError::new(
            at,
            reading,
            Problem::Truncated {
                needed: n.saturating_mul(min_bytes_each),
                available: r.remaining() as u64,
            },
        ));
    }
    Ok(n)
}

/// Reads a count like [`read_count`], refusing zero: `zero` says why it cannot be.
pub fn read_nonzero_count(
    r: &mut Bytes<'_>,
    min_bytes_each: u64,
    reading: &'static str,
    zero: &'static str,
) -> Result<u64> {
    let at = r.offset();
    match read_count(r, min_bytes_each, reading)? {
        0 => Err(super::error::DecodeError::malformed(at, reading, zero)),
        n => Ok(n),
    }
}

/// Reads a string. Raw strings with a 6-bit length (most keys) take the shortest path,
/// those with a 14-bit length (most values) an inlined one; everything else goes through
/// [`read_string_general`]. (The scanner's straight path reads both from a slice,
/// [`short_raw_string`]; on a cursor, in the general path, these two cost less.)
#[inline(always)]
pub fn read_string<'data>(r: &mut Bytes<'data>, reading: &'static str) -> Result<RdbString<'data>> {
    match r.read_short_raw_string() {
        Some(bytes) => Ok(RdbString::Raw(bytes)),
        None => read_string_longer(r, reading),
    }
}

#[inline]
fn read_string_longer<'data>(
    r: &mut Bytes<'data>,
    reading: &'static str,
) -> Result<RdbString<'data>> {
    let mut fast = *r;
    if let Ok(first) = fast.read_u8(reading) {
        let len = match first >> 6 {
            0 => Some(u64::from(first)),
            1 => fast
                .read_u8(reading)
                .ok()
                .map(|second| (u64::from(first & 0x3f) << 8) | u64::from(second)),
            _ => None,
        };
        if let Some(Ok(bytes)) = len.map(|len| fast.read_bytes(len, reading)) {
            *r = fast;
            return Ok(RdbString::Raw(bytes));
        }
    }
    read_string_general(r, reading)
}

/// A length stored in 6 or 14 bits at `rest[at]`: the length and where what follows
/// starts; `None` for the other forms or past the end. Positions index `rest`, so adding
/// a byte or two cannot overflow.
#[inline(always)]
pub fn short_length(rest: &[u8], at: usize) -> Option<(usize, usize)> {
    let &first = rest.get(at)?;
    match first >> 6 {
        0 => Some((usize::from(first), at.wrapping_add(1))),
        1 => {
            let &second = rest.get(at.wrapping_add(1))?;
            let len = (usize::from(first & 0x3f) << 8) | usize::from(second);
            Some((len, at.wrapping_add(2)))
        }
        _ => None,
    }
}

/// A string stored raw with a 6- or 14-bit length at `rest[at]` (most keys and values):
/// its bytes and where what follows starts; `None`, for the caller to read it the general
/// way (which says what is wrong), for the other forms or a string past the end.
#[inline(always)]
pub fn short_raw_string(rest: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let (len, start) = short_length(rest, at)?;
    let end = start.wrapping_add(len);
    Some((rest.get(start..end)?, end))
}

#[inline(never)]
fn read_string_general<'data>(
    r: &mut Bytes<'data>,
    reading: &'static str,
) -> Result<RdbString<'data>> {
    let at = r.offset();
    match read_length_or_encoding(r, reading)? {
        LengthOrEncoding::Length(n) => Ok(RdbString::Raw(r.read_bytes(n, reading)?)),
        LengthOrEncoding::Encoded(0) => Ok(RdbString::Int(i64::from(r.read_i8(reading)?))),
        LengthOrEncoding::Encoded(1) => Ok(RdbString::Int(i64::from(r.read_i16_le(reading)?))),
        LengthOrEncoding::Encoded(2) => Ok(RdbString::Int(i64::from(r.read_i32_le(reading)?))),
        LengthOrEncoding::Encoded(3) => {
            let clen = read_length(r, reading)?;
            let len = read_length(r, reading)?;
            let offset = r.offset();
            let compressed = r.read_bytes(clen, reading)?;
            Ok(RdbString::Lzf {
                compressed,
                len,
                offset,
            })
        }
        LengthOrEncoding::Encoded(e) => Err(super::error::DecodeError::new(
            at,
            reading,
            Problem::BadLengthEncoding(0xc0 | e),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(bytes: &[u8]) -> RdbString<'_> {
        read_string(&mut Bytes::new(bytes, 0), "test").unwrap()
    }

    #[test]
    fn length_forms() {
        let mut r = Bytes::new(&[0x05, 0x41, 0x02, 0x80, 0, 0, 1, 0], 0);
        assert_eq!(read_length(&mut r, "t").unwrap(), 5);
        assert_eq!(read_length(&mut r, "t").unwrap(), 0x102);
        assert_eq!(read_length(&mut r, "t").unwrap(), 256);
    }

    #[test]
    fn decimal_lengths_match_the_printed_integers() {
        let mut edges = vec![0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1];
        let mut power = Some(1i64);
        while let Some(p) = power {
            edges.extend([p - 1, p, p + 1, -p, 1 - p, -p - 1]);
            power = p.checked_mul(10);
        }
        for v in edges {
            assert_eq!(decimal_len(v), v.to_string().len() as u64, "{v}");
        }
    }

    #[test]
    fn integer_strings_have_decimal_lengths() {
        assert_eq!(string(&[0xc0, 0xff]), RdbString::Int(-1));
        assert_eq!(string(&[0xc1, 0x39, 0x30]).len(), 5); // 12345
        assert_eq!(
            string(&[0xc2, 0x00, 0x00, 0x00, 0x80]),
            RdbString::Int(i32::MIN as i64)
        );
    }

    #[test]
    fn every_raw_length_form_reads_the_same_bytes() {
        for len in [0usize, 1, 63, 64, 300, 16383, 16384] {
            let text = vec![b'x'; len];
            let mut encoded = match len {
                0..=63 => vec![len as u8],
                64..=16383 => vec![0x40 | (len >> 8) as u8, len as u8],
                _ => [vec![0x80], (len as u32).to_be_bytes().to_vec()].concat(),
            };
            encoded.extend_from_slice(&text);
            encoded.push(0xee);
            let mut r = Bytes::new(&encoded, 10);
            assert_eq!(
                read_string(&mut r, "t").unwrap(),
                RdbString::Raw(&text),
                "{len}"
            );
            assert_eq!(r.remaining(), 1, "{len}");
        }
    }

    #[test]
    fn a_short_string_past_the_end_names_its_offset() {
        // A 6-bit length of 5 with 3 bytes left: the short path declines, the general one
        // says what is missing where.
        let mut r = Bytes::new(&[0x05, b'a', b'b', b'c'], 100);
        let err = read_string(&mut r, "key").unwrap_err();
        assert_eq!(err.offset, 101);
        assert_eq!(
            err.problem,
            Problem::Truncated {
                needed: 5,
                available: 3
            }
        );
    }

    #[test]
    fn bad_length_byte_names_its_offset() {
        let mut r = Bytes::new(&[0x01, 0x82], 100);
        r.read_u8("t").unwrap();
        let err = read_length(&mut r, "list length").unwrap_err();
        assert_eq!(err.offset, 101);
        assert_eq!(err.problem, Problem::BadLengthEncoding(0x82));
    }

    #[test]
    fn huge_count_is_rejected_before_looping() {
        let mut r = Bytes::new(&[0x81, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2], 0);
        assert!(read_count(&mut r, 1, "set size").is_err());
    }
}
