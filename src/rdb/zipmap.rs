//! Zipmap (`zipmap.c`): the small-hash container of Redis before 2.6.
//!
//! Layout: count byte (254 = "count it"), then `len key len free value` repeated, 0xFF.
//! A length is one byte below 254, else 254 followed by a u32 LE.

use super::bytes::Bytes;
use super::error::Result;

pub struct Zipmap<'a> {
    r: Bytes<'a>,
}

const END: u8 = 0xff;

impl<'a> Zipmap<'a> {
    pub fn parse(blob: &'a [u8], origin: u64) -> Result<Self> {
        let mut r = Bytes::new(blob, origin);
        r.read_u8("zipmap header")?;
        Ok(Zipmap { r })
    }

    fn read_len(r: &mut Bytes<'a>) -> Result<Option<u64>> {
        const READING: &str = "zipmap length";
        Ok(match r.read_u8(READING)? {
            END => None,
            254 => Some(u64::from(r.read_u32_le(READING)?)),
            b => Some(u64::from(b)),
        })
    }

    /// The next `(field, value)`, `None` at the terminator.
    pub fn next_pair(&mut self) -> Result<Option<(&'a [u8], &'a [u8])>> {
        const READING: &str = "zipmap entry";
        let Some(klen) = Self::read_len(&mut self.r)? else {
            return Ok(None);
        };
        let field = self.r.read_bytes(klen, READING)?;
        let Some(vlen) = Self::read_len(&mut self.r)? else {
            return Err(self.r.malformed(READING, "field without a value"));
        };
        let free = self.r.read_u8(READING)?;
        let value = self.r.read_bytes(vlen, READING)?;
        self.r.skip(u64::from(free), READING)?;
        Ok(Some((field, value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_with_free_space() {
        let blob = [2, 1, b'a', 2, 1, b'x', b'y', 0, 1, b'b', 0, 0, END];
        let mut zm = Zipmap::parse(&blob, 0).unwrap();
        assert_eq!(zm.next_pair().unwrap(), Some((&b"a"[..], &b"xy"[..])));
        assert_eq!(zm.next_pair().unwrap(), Some((&b"b"[..], &b""[..])));
        assert_eq!(zm.next_pair().unwrap(), None);
    }
}
