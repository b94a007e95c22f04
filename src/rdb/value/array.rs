//! Sparse arrays (type 28): the elements (strings, integers, doubles) and their indexes.

use super::super::error::{DecodeError, Result};
use super::super::length::{decimal_len, read_length, read_nonzero_count, read_string};
use super::super::value_sink::ValueSink;
use super::Walk;

impl<S: ValueSink> Walk<'_, '_, '_, S> {
    /// A sparse array (type 28): element count, an optional insert cursor, then per element
    /// its index, a tag and the value (string, 8-byte integer or 8-byte double).
    #[inline]
    pub(super) fn array<const DEEP: bool>(&mut self) -> Result<()> {
        let (r, scratch, s, sink) = self.parts();
        const INDEX: &str = "array element index";
        const TAG: &str = "array element tag";
        // Each element takes at least an index byte, a tag byte and one byte of value.
        let count = read_nonzero_count(
            r,
            3,
            "array element count",
            "an array without elements (the server deletes an emptied array)",
        )?;
        let at = r.offset();
        match read_length(r, "array insert cursor flag")? {
            0 => {}
            1 => {
                read_length(r, "array insert cursor")?;
            }
            flag => {
                return Err(DecodeError::malformed(
                    at,
                    "array insert cursor flag",
                    format!("{flag}, expected 0 or 1"),
                ))
            }
        }
        for _ in 0..count {
            scratch.walked_to(r.offset());
            let at = r.offset();
            let index = read_length(r, INDEX)?;
            if index == u64::MAX {
                return Err(DecodeError::malformed(
                    at,
                    INDEX,
                    "index 2^64-1 is reserved and never stored",
                ));
            }
            let at = r.offset();
            match read_length(r, TAG)? {
                // A heap string (0) or a short inline one (3): the same bytes on disk.
                tag @ (0 | 3) => {
                    let v = read_string(r, "array string element")?;
                    if DEEP {
                        s.string(&v)?;
                        sink.array_string(index, v.len(), tag == 3);
                    }
                }
                1 => {
                    let v = i64::from_le_bytes(r.read_array("array integer element")?);
                    if DEEP {
                        s.element_len(decimal_len(v));
                        sink.array_integer(index, v);
                    }
                }
                2 => {
                    let v = f64::from_le_bytes(r.read_array("array float element")?);
                    if DEEP {
                        s.element_len(float_text_len(v));
                        sink.array_double(index);
                    }
                }
                tag => {
                    return Err(DecodeError::malformed(
                        at,
                        TAG,
                        format!("unknown tag {tag} (0-3: string, integer, double, short string)"),
                    ))
                }
            }
        }
        if DEEP {
            s.elements = Some(count);
            s.all_integers = false;
        }
        Ok(())
    }
}

/// Length of the text an array returns for a double: the shortest form that reads back
/// as the same value, with `.0` after integral values.
fn float_text_len(v: f64) -> u64 {
    if !v.is_finite() {
        return if v.is_sign_negative() && !v.is_nan() {
            4
        } else {
            3
        };
    }
    ryu::Buffer::new().format_finite(v).len() as u64
}
