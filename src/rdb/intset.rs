//! Intset (`intset.c`): a sorted array of 16, 32 or 64-bit integers, the encoding of small
//! all-integer sets. Layout: element width (u32 LE), count (u32 LE), elements (LE).

use super::bytes::Bytes;
use super::error::Result;

#[derive(Clone, Copy, Debug)]
pub struct Intset<'a> {
    contents: &'a [u8],
    pub width: usize,
    pub len: u32,
}

impl<'a> Intset<'a> {
    pub fn parse(blob: &'a [u8], origin: u64) -> Result<Self> {
        let mut r = Bytes::new(blob, origin);
        let width = r.read_u32_le("intset header")? as usize;
        if !matches!(width, 2 | 4 | 8) {
            return Err(r.malformed("intset header", format!("invalid element width {width}")));
        }
        let len = r.read_u32_le("intset header")?;
        let contents = r.read_bytes(
            u64::from(len).saturating_mul(width as u64),
            "intset contents",
        )?;
        if !r.is_empty() {
            return Err(r.malformed("intset contents", "bytes after the last element"));
        }
        Ok(Intset {
            contents,
            width,
            len,
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + 'a {
        let width = self.width;
        self.contents.chunks_exact(width).map(move |c| match width {
            2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
            4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            _ => i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_32_bit_members() {
        let mut blob = 4u32.to_le_bytes().to_vec();
        blob.extend_from_slice(&2u32.to_le_bytes());
        blob.extend_from_slice(&(-5i32).to_le_bytes());
        blob.extend_from_slice(&70000i32.to_le_bytes());
        let set = Intset::parse(&blob, 0).unwrap();
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![-5, 70000]);
    }

    #[test]
    fn length_beyond_blob_is_truncation() {
        let mut blob = 8u32.to_le_bytes().to_vec();
        blob.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(Intset::parse(&blob, 0).is_err());
    }
}
