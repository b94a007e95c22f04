//! Integers appended to row buffers as decimal text.
//!
//! Written by hand rather than with `itoa`: `itoa` formats into its own buffer, and
//! copying its variable-length result into the row is a call to `memcpy` per number, a
//! twentieth of a `keys` run on dumps of small keys (a dozen numbers per row). Here the
//! row grows by a fixed 20 bytes (two stores), the digits are written in place two at a
//! time, and the row is cut back to the number's length.

/// "00", "01", … "99".
const PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Integer types rows hold.
pub trait Decimal: Copy {
    /// Whether the value is negative, and its magnitude.
    fn sign_and_magnitude(self) -> (bool, u64);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            #[inline]
            fn sign_and_magnitude(self) -> (bool, u64) {
                (false, u64::from(self))
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64);

impl Decimal for i64 {
    #[inline]
    fn sign_and_magnitude(self) -> (bool, u64) {
        (self < 0, self.unsigned_abs())
    }
}

/// Appends `v` in decimal to `out`.
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, v: impl Decimal) {
    let (negative, mut v) = v.sign_and_magnitude();
    if negative {
        out.push(b'-');
    }
    let len = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let start = out.len();
    out.extend_from_slice(&[0u8; 20]);
    out.truncate(start + len);
    let digits = &mut out[start..];
    let mut end = len;
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        digits[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
        end -= 2;
    }
    if v >= 10 {
        let pair = v as usize * 2;
        digits[end - 2..end].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        digits[end - 1] = b'0' + v as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_as_display() {
        let mut unsigned = vec![0u64, 1, 9, 10, 11, 99, 100, 101, 999, 1000, u64::MAX];
        unsigned.extend((0..20).map(|p| 10u64.pow(p) - 1));
        unsigned.extend((0..20).map(|p| 10u64.pow(p)));
        unsigned.extend((0..64).map(|s| 0x9e37_79b9_7f4a_7c15u64 >> s));
        for v in unsigned {
            let mut out = b"x,".to_vec();
            push_decimal(&mut out, v);
            assert_eq!(out, format!("x,{v}").into_bytes());
        }
        for v in [
            0i64,
            -1,
            -9,
            -10,
            42,
            -1_700_000_000_000,
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = Vec::new();
            push_decimal(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
        let mut out = Vec::new();
        push_decimal(&mut out, 255u8);
        push_decimal(&mut out, 16383u16);
        assert_eq!(out, b"25516383");
    }
}
