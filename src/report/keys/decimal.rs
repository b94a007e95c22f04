//! Integers appended to row buffers as decimal text.
//!
//! Written by hand rather than with `itoa`: `itoa` formats into its own buffer, and
//! copying its variable-length result into the row is a call to `memcpy` per number, a
//! twentieth of a `keys` run on dumps of small keys (a dozen numbers per row). Here one
//! or two digits are pushed in line; longer numbers are built two digits at a time in a
//! 16-byte word, which the row grows by in one store before it is cut back to the
//! number's length. CSV rows written in place take the words themselves: [`below_65536`]
//! for numbers below 65,536, [`eight`] for numbers below 10^8, [`sixteen`] for longer ones.

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

/// Numbers below this have at most 8 digits (see [`eight`]).
pub const EIGHT_DIGITS: u64 = 100_000_000;

/// `v` (below 10^8) in decimal: its digits at the start of an 8-byte word, and how many
/// there are. The four pairs of digits are looked up and put in the word together, then
/// the zeros in front shifted out.
#[inline(always)]
pub fn eight(v: u32) -> ([u8; 8], usize) {
    let (high, low) = (v / 10_000, v % 10_000);
    let word =
        pair(high / 100) | pair(high % 100) << 16 | pair(low / 100) << 32 | pair(low % 100) << 48;
    let len = match v.checked_ilog10() {
        Some(log) => log as usize + 1,
        None => 1,
    };
    ((word >> (8 * (8 - len))).to_le_bytes(), len)
}

/// `v`, from 100 to 65,535 (a slot, most sizes of small keys), in decimal, as [`eight`]
/// writes it: its hundreds from a table ([`HUNDREDS`]), then the pair of digits below
/// them.
#[inline(always)]
pub fn below_65536(v: u32) -> ([u8; 8], usize) {
    let (high, low) = (v / 100, v % 100);
    let (digits, len) = HUNDREDS.get(high as usize).copied().unwrap_or_default();
    let len = usize::from(len);
    let word = u64::from(digits) | pair(low) << (8 * len);
    (word.to_le_bytes(), len + 2)
}

/// 0 to 655 (the hundreds of a number below 65,536) in decimal, at the start of a word,
/// and how many digits; nothing for 0.
const HUNDREDS: [(u32, u8); 656] = {
    const fn digit(d: usize) -> u32 {
        (b'0' + (d % 10) as u8) as u32
    }
    let mut t = [(0u32, 0u8); 656];
    let mut v = 1;
    while v < 656 {
        t[v] = match v {
            0..=9 => (digit(v), 1),
            10..=99 => (digit(v / 10) | digit(v) << 8, 2),
            _ => (digit(v / 100) | digit(v / 10) << 8 | digit(v) << 16, 3),
        };
        v += 1;
    }
    t
};

/// The pair of digits of `p` (below 100) in the low half of a word.
#[inline(always)]
fn pair(p: u32) -> u64 {
    let at = p as usize * 2;
    u64::from(u16::from_le_bytes([PAIRS[at], PAIRS[at + 1]]))
}

/// Numbers below this have at most 16 digits (see [`sixteen`]).
pub const SIXTEEN_DIGITS: u64 = 10_000_000_000_000_000;

/// Appends `v` in decimal to `out`. One or two digits (most cells of a row of small keys:
/// the db, sizes of a few dozen bytes, zero elements) are written in line, longer numbers
/// out of line.
#[inline(always)]
pub fn push_decimal(out: &mut Vec<u8>, v: impl Decimal) {
    let (negative, v) = v.sign_and_magnitude();
    if negative {
        out.push(b'-');
    }
    if v < 10 {
        out.push(b'0' + v as u8);
    } else if v < 100 {
        let pair = v as usize * 2;
        out.extend_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        push_digits(out, v);
    }
}

/// Appends `v` (100 or more) in decimal to `out`: up to 16 digits, two at a time from the
/// right of a 16-byte word, which is shifted left over the unused bytes and stored whole
/// (the row then cut back to the number's length); longer numbers 16 digits at a time.
#[inline(never)]
fn push_digits(out: &mut Vec<u8>, v: u64) {
    if v >= SIXTEEN_DIGITS {
        push_digits(out, v / SIXTEEN_DIGITS);
        push_sixteen(out, v % SIXTEEN_DIGITS, 16);
    } else {
        push_sixteen(out, v, 0);
    }
}

/// Appends `v` (below 10^16) with at least `min_len` digits (zeros in front).
#[inline(always)]
fn push_sixteen(out: &mut Vec<u8>, v: u64, min_len: usize) {
    let (word, len) = sixteen(v, min_len);
    let end = out.len() + len;
    out.extend_from_slice(&word);
    out.truncate(end);
}

/// `v` (below 10^16) in decimal, with at least `min_len` digits (zeros in front): its
/// digits at the start of a 16-byte word, and how many there are.
#[inline(always)]
pub fn sixteen(mut v: u64, min_len: usize) -> ([u8; 16], usize) {
    let mut digits = [b'0'; 16];
    let mut unused = 16;
    while v >= 100 && unused >= 2 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        digits[unused - 2..unused].copy_from_slice(&PAIRS[pair..pair + 2]);
        unused -= 2;
    }
    if v >= 10 && unused >= 2 {
        let pair = v as usize * 2;
        digits[unused - 2..unused].copy_from_slice(&PAIRS[pair..pair + 2]);
        unused -= 2;
    } else if v > 0 && unused >= 1 {
        digits[unused - 1] = b'0' + v as u8;
        unused -= 1;
    }
    let unused = unused.min(16 - min_len);
    let word = u128::from_be_bytes(digits) << (8 * unused);
    (word.to_be_bytes(), 16 - unused)
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
        for v in (0..2000).chain([9_999_999, 10_000_000, 12_345_678, 99_999_999]) {
            let (word, len) = eight(v);
            assert_eq!(&word[..len], v.to_string().as_bytes(), "{v}");
        }
        for v in 100..65_536 {
            let (word, len) = below_65536(v);
            assert_eq!(&word[..len], v.to_string().as_bytes(), "{v}");
        }
        let mut out = Vec::new();
        push_decimal(&mut out, 255u8);
        push_decimal(&mut out, 16383u16);
        assert_eq!(out, b"25516383");
    }
}
