//! One element of a compact container (ziplist, listpack, intset, zipmap).

use super::length::decimal_len;

/// A container entry: bytes borrowed from the blob, or an integer the container stored
/// in binary form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl Element<'_> {
    /// Length of the element as Redis returns it to a client (integers as decimal text).
    #[inline]
    pub fn len(&self) -> u64 {
        match *self {
            Element::Bytes(b) => b.len() as u64,
            Element::Int(v) => decimal_len(v),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether Redis would store this element in an intset (a `long long` in canonical
    /// decimal form).
    pub fn is_integer(&self) -> bool {
        match *self {
            Element::Int(_) => true,
            Element::Bytes(b) => parse_canonical_i64(b).is_some(),
        }
    }
}

/// Parses `b` as Redis's `string2ll` does: optional `-`, no leading zeros or `+`, no
/// spaces, fits in an i64. Only then does Redis encode the string as an integer.
#[inline]
pub fn parse_canonical_i64(b: &[u8]) -> Option<i64> {
    // Most strings fail on their first byte.
    let (negative, digits) = match b {
        [b'0'] => return Some(0),
        [b'-', digits @ ..] => (true, digits),
        [b'1'..=b'9', ..] => (false, b),
        _ => return None,
    };
    if b.len() > 20 || !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v
            .checked_mul(10)?
            .checked_add(u64::from(c.wrapping_sub(b'0')))?;
    }
    if negative {
        0i64.checked_sub_unsigned(v)
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_integers_only() {
        assert_eq!(parse_canonical_i64(b"0"), Some(0));
        assert_eq!(parse_canonical_i64(b"-12"), Some(-12));
        assert_eq!(parse_canonical_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_canonical_i64(b"9223372036854775808"), None);
        assert_eq!(parse_canonical_i64(b"012"), None);
        assert_eq!(parse_canonical_i64(b"-0"), None);
        assert_eq!(parse_canonical_i64(b"+1"), None);
        assert_eq!(parse_canonical_i64(b"1 "), None);
        assert_eq!(parse_canonical_i64(b""), None);
        assert_eq!(parse_canonical_i64(b"-"), None);
        assert_eq!(parse_canonical_i64(b"value:1"), None);
        assert_eq!(parse_canonical_i64(b"18446744073709551615"), None);
        assert_eq!(parse_canonical_i64(b"123456789012345678901"), None);
        assert_eq!(Element::Int(-100).len(), 4);
    }
}
