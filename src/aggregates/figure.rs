//! Conversions between the kinds of number a figure passes through, none of which can flip
//! a sign or wrap: counts are `u64`, TTLs and lint values `i64`, shares `f64`. Out of range
//! means the nearest representable figure (docs/untrusted-numbers.md).

/// A count or size as a signed figure (lint values, which TTLs make signed): at most
/// `i64::MAX`.
#[inline]
pub fn signed(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `part` in percent of `whole`, rounded down; 0 of nothing.
#[inline]
pub fn percent(part: u64, whole: u64) -> u64 {
    let share = (u128::from(part) * 100).checked_div(u128::from(whole));
    u64::try_from(share.unwrap_or(0)).unwrap_or(u64::MAX)
}

/// `part` as a percentage of `whole`, as a float (`part` may be a signed change); `None`
/// of nothing.
pub fn percent_of(part: f64, whole: u64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)] // A percentage for people: 53 bits are plenty.
    let whole = whole as f64;
    (whole != 0.0).then(|| part * 100.0 / whole)
}

/// The smallest count at least `x`: 0 for negative or NaN, `u64::MAX` beyond it.
#[inline]
#[allow(clippy::cast_sign_loss)] // Float-to-integer `as` saturates, and negatives are 0.
pub fn ceil_count(x: f64) -> u64 {
    x.ceil().max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_figures_take_the_nearest_value() {
        assert_eq!(signed(5), 5);
        assert_eq!(signed(u64::MAX), i64::MAX);
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(u64::MAX, u64::MAX), 100);
        assert_eq!(percent(u64::MAX, 1), u64::MAX);
        assert_eq!(percent(5, 0), 0);
        assert_eq!(ceil_count(2.1), 3);
        assert_eq!(ceil_count(-3.5), 0);
        assert_eq!(ceil_count(f64::NAN), 0);
        assert_eq!(ceil_count(1e30), u64::MAX);
    }
}
