//! A bounds-checked cursor over a borrowed byte slice.
//!
//! Modelled on the `object` crate's readers: every read checks the remaining length first
//! and returns a [`DecodeError`] carrying the absolute offset, so no untrusted length can
//! index out of bounds or drive an allocation.

use super::error::{DecodeError, Problem, Result};

/// A cursor over `data`, whose first byte sits at absolute offset `origin` in the dump
/// (blobs decompressed from LZF keep the offset of their compressed source).
#[derive(Clone, Copy, Debug)]
pub struct Bytes<'data> {
    data: &'data [u8],
    pos: usize,
    origin: u64,
}

/// The `N` bytes (at most 8) of `bytes` from `at`, little-endian, as the low bytes of a
/// word; zero when they are not all there. Callers read a short key or segment as two
/// such words that may overlap, rather than a byte at a time.
#[inline(always)]
pub fn word_at<const N: usize>(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(b) = bytes.get(at..).and_then(<[u8]>::first_chunk::<N>) {
        if let Some(low) = w.get_mut(..N) {
            low.copy_from_slice(b);
        }
    }
    u64::from_le_bytes(w)
}

/// Folds up to 16 bytes with `f(acc, distance from the end, byte)`, unrolled for each
/// length (the length known, each byte's distance is a constant): `None` for more bytes.
/// Callers hash a short key with a lookup a byte, or check its bytes' classes, without a
/// loop's count and state carried from byte to byte.
#[inline(always)]
pub fn fold_short<T>(bytes: &[u8], init: T, f: impl Fn(T, usize, u8) -> T) -> Option<T> {
    macro_rules! by_length {
        ($($n:literal)*) => {
            match bytes.len() {
                $($n => {
                    let b: &[u8; $n] = bytes.first_chunk()?;
                    let to_end = (0..$n).rev();
                    Some(b.iter().zip(to_end).fold(init, |acc, (&b, at)| f(acc, at, b)))
                })*
                _ => None,
            }
        };
    }
    by_length!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// `Bytes::read_<int>`: an integer of fixed width read in the byte order its name says
/// (signed integers are two's complement in every RDB structure).
macro_rules! fixed_width_reads {
    ($($name:ident: $int:ident $from:ident,)*) => {$(
        #[inline]
        pub fn $name(&mut self, reading: &'static str) -> Result<$int> {
            self.read_array(reading).map($int::$from)
        }
    )*};
}

impl<'data> Bytes<'data> {
    pub fn new(data: &'data [u8], origin: u64) -> Self {
        Bytes {
            data,
            pos: 0,
            origin,
        }
    }

    /// Absolute offset of the next byte to be read.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.origin.saturating_add(self.pos as u64)
    }

    /// Position relative to the start of this cursor's slice.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == self.data.len()
    }

    /// The bytes between two positions of this cursor (from `start` to the current one).
    #[inline]
    pub fn since(&self, start: usize) -> &'data [u8] {
        &self.data[start..self.pos]
    }

    #[inline]
    fn truncated(&self, reading: &'static str, needed: u64) -> DecodeError {
        DecodeError::new(
            self.offset(),
            reading,
            Problem::Truncated {
                needed,
                available: self.remaining() as u64,
            },
        )
    }

    #[inline]
    pub fn peek_u8(&self, reading: &'static str) -> Result<u8> {
        match self.data.get(self.pos) {
            Some(&b) => Ok(b),
            None => Err(self.truncated(reading, 1)),
        }
    }

    #[inline]
    pub fn read_u8(&mut self, reading: &'static str) -> Result<u8> {
        let b = self.peek_u8(reading)?;
        self.pos = self.pos.saturating_add(1);
        Ok(b)
    }

    /// Reads `len` bytes; `len` comes from the input and is checked before any use.
    #[inline]
    pub fn read_bytes(&mut self, len: u64, reading: &'static str) -> Result<&'data [u8]> {
        if len > self.remaining() as u64 {
            return Err(self.truncated(reading, len));
        }
        let start = self.pos;
        // In bounds: `len` was checked against what remains.
        self.pos = start.saturating_add(len as usize);
        Ok(&self.data[start..self.pos])
    }

    /// The bytes not yet read.
    #[inline(always)]
    pub fn rest(&self) -> &'data [u8] {
        self.data.get(self.pos..).unwrap_or_default()
    }

    /// Steps over the next `len` bytes, which the caller read from [`Bytes::rest`].
    #[inline(always)]
    pub fn step_over(&mut self, len: usize) {
        self.pos = self.pos.saturating_add(len).min(self.data.len());
    }

    /// A string stored raw with a 6-bit length (under 64 bytes: most keys and small
    /// values), read on the shortest path: its bytes, or `None` with nothing consumed when
    /// the string has another form or runs past the end (the caller then reads it the
    /// general way, which says what is wrong).
    #[inline(always)]
    pub fn read_short_raw_string(&mut self) -> Option<&'data [u8]> {
        let &first = self.data.get(self.pos)?;
        if first >= 0x40 {
            return None;
        }
        // `pos` indexes a byte of `data`, so neither sum can overflow.
        let start = self.pos.saturating_add(1);
        let end = start.saturating_add(usize::from(first));
        let bytes = self.data.get(start..end)?;
        self.pos = end;
        Some(bytes)
    }

    #[inline]
    pub fn skip(&mut self, len: u64, reading: &'static str) -> Result<()> {
        self.read_bytes(len, reading).map(|_| ())
    }

    #[inline]
    pub fn read_array<const N: usize>(&mut self, reading: &'static str) -> Result<[u8; N]> {
        let bytes = self.read_bytes(N as u64, reading)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fixed_width_reads! {
        read_i8: i8 from_le_bytes,
        read_i16_le: i16 from_le_bytes,
        read_i32_le: i32 from_le_bytes,
        read_i64_le: i64 from_le_bytes,
        read_u16_le: u16 from_le_bytes,
        read_u32_le: u32 from_le_bytes,
        read_u32_be: u32 from_be_bytes,
        read_u64_le: u64 from_le_bytes,
        read_u64_be: u64 from_be_bytes,
    }

    /// The next entry `read` reads, `None` at the end. After an error the bytes end there:
    /// an iterator over entries stops at its first error.
    #[inline(always)]
    pub fn next_entry<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Option<Result<T>> {
        if self.is_empty() {
            return None;
        }
        let item = read(self);
        if item.is_err() {
            *self = Bytes::new(&[], self.offset());
        }
        Some(item)
    }

    /// An error of kind `Malformed` at the current offset.
    pub fn malformed(&self, reading: &'static str, message: impl Into<String>) -> DecodeError {
        DecodeError::malformed(self.offset(), reading, message)
    }
}

/// The entries of a compact container (listpack, ziplist) and its declared element count
/// (`None` when it saturated at 65535). `blob` starts with its total size (u32 LE) and
/// ends with 0xFF; the count (u16 LE) closes a header of `header` bytes.
pub fn compact_entries<'a>(
    blob: &'a [u8],
    origin: u64,
    header: usize,
    reading: &'static str,
) -> Result<(Bytes<'a>, Option<u16>)> {
    const END: u8 = 0xff;
    let mut r = Bytes::new(blob, origin);
    let total = r.read_u32_le(reading)? as usize;
    r.skip(header.saturating_sub(6) as u64, reading)?;
    let count = r.read_u16_le(reading)?;
    if total != blob.len() {
        return Err(r.malformed(
            reading,
            format!("declares {total} bytes but the blob holds {}", blob.len()),
        ));
    }
    let entries = match blob.split_last() {
        Some((&END, body)) if body.len() >= header => &body[header..],
        _ => return Err(r.malformed(reading, "missing 0xFF terminator")),
    };
    Ok((
        Bytes::new(entries, origin.saturating_add(header as u64)),
        (count != u16::MAX).then_some(count),
    ))
}
