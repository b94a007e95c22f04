//! Ziplist (`ziplist.c`): the compact container of Redis 2.6–6.2 lists, hashes and zsets.
//!
//! Layout: total bytes (u32 LE), tail offset (u32 LE), count (u16 LE, 65535 = "count it"),
//! entries, 0xFF. An entry is the previous entry's length (1 byte, or 0xFE + u32), an
//! encoding header, and the data.

use super::bytes::{compact_entries, Bytes};
use super::element::Element;
use super::error::Result;

const HEADER: usize = 10;

/// A validated ziplist header over a blob. Its declared count is not kept: every reader
/// counts the entries it reads.
#[derive(Clone, Copy, Debug)]
pub struct Ziplist<'a> {
    entries: Bytes<'a>,
}

impl<'a> Ziplist<'a> {
    pub fn parse(blob: &'a [u8], origin: u64) -> Result<Self> {
        let (entries, _) = compact_entries(blob, origin, HEADER, "ziplist header")?;
        Ok(Ziplist { entries })
    }

    pub fn iter(&self) -> ZiplistIter<'a> {
        ZiplistIter { r: self.entries }
    }
}

pub struct ZiplistIter<'a> {
    r: Bytes<'a>,
}

impl<'a> ZiplistIter<'a> {
    fn read_entry(r: &mut Bytes<'a>) -> Result<Element<'a>> {
        const READING: &str = "ziplist entry";
        if r.read_u8(READING)? == 0xfe {
            r.skip(4, READING)?;
        }
        let b = r.read_u8(READING)?;
        Ok(match b >> 6 {
            0 => Element::Bytes(r.read_bytes(u64::from(b & 0x3f), READING)?),
            1 => {
                let lo = r.read_u8(READING)?;
                Element::Bytes(r.read_bytes((u64::from(b & 0x3f) << 8) | u64::from(lo), READING)?)
            }
            2 => {
                let len = r.read_u32_be(READING)?;
                Element::Bytes(r.read_bytes(u64::from(len), READING)?)
            }
            _ => match b {
                0xc0 => Element::Int(i64::from(r.read_i16_le(READING)?)),
                0xd0 => Element::Int(i64::from(r.read_i32_le(READING)?)),
                0xe0 => Element::Int(r.read_i64_le(READING)?),
                0xf0 => {
                    let x: [u8; 3] = r.read_array(READING)?;
                    Element::Int(i64::from(i32::from_le_bytes([0, x[0], x[1], x[2]]) >> 8))
                }
                0xfe => Element::Int(i64::from(r.read_i8(READING)?)),
                0xf1..=0xfd => Element::Int(i64::from((b & 0x0f).saturating_sub(1))),
                _ => return Err(r.malformed(READING, format!("invalid encoding byte 0x{b:02x}"))),
            },
        })
    }
}

impl<'a> Iterator for ZiplistIter<'a> {
    type Item = Result<Element<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.r.next_entry(Self::read_entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_strings_and_integers() {
        let body: &[u8] = &[
            0x00, 0x02, b'a', b'b', // prevlen 0, 6-bit string "ab"
            0x04, 0xf3, // immediate 2
            0x02, 0xfe, 0x9c, // int8 -100
            0x03, 0xc0, 0x39, 0x30, // int16 12345
        ];
        let total = (HEADER + body.len() + 1) as u32;
        let mut zl = total.to_le_bytes().to_vec();
        zl.extend_from_slice(&0u32.to_le_bytes());
        zl.extend_from_slice(&4u16.to_le_bytes());
        zl.extend_from_slice(body);
        zl.push(0xff);
        let parsed = Ziplist::parse(&zl, 0).unwrap();
        let got: Vec<_> = parsed.iter().map(|e| e.unwrap()).collect();
        assert_eq!(
            got,
            vec![
                Element::Bytes(b"ab"),
                Element::Int(2),
                Element::Int(-100),
                Element::Int(12345)
            ]
        );
    }
}
