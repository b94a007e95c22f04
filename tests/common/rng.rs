//! Deterministic random data for the tests that fill a server.

/// xorshift64*: deterministic, no crate needed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let x = &mut self.0;
        *x ^= *x >> 12;
        *x ^= *x << 25;
        *x ^= *x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// Log-uniform in `lo..=hi` (lo ≥ 1): as many small sizes as big ones.
    pub fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        ((a + u * (b - a)).exp() as u64).clamp(lo, hi)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// Random lowercase letters and digits: too random for LZF to shrink.
    pub fn text(&mut self, len: u64) -> Vec<u8> {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        (0..len)
            .map(|_| ALPHABET[(self.next() >> 33) as usize % ALPHABET.len()])
            .collect()
    }

    /// An integer of random width (listpack/intset encodings from 7 bits to 64 bits).
    pub fn int(&mut self) -> i64 {
        let bits = self.range(1, 64);
        let v = (self.next() >> (64 - bits)) as i64;
        if self.chance(30) {
            v.wrapping_neg()
        } else {
            v
        }
    }

    /// A collection element: an integer (30 %) or text of 1..=`max_len` bytes.
    pub fn element(&mut self, max_len: u64) -> Vec<u8> {
        if self.chance(30) {
            self.int().to_string().into_bytes()
        } else {
            let len = self.log_range(1, max_len);
            self.text(len)
        }
    }

    /// A sorted-set score: an integer or a fraction.
    pub fn score(&mut self) -> Vec<u8> {
        let v = self.range(0, 2_000_000) as f64 - 1_000_000.0;
        let v = if self.chance(50) { v } else { v / 7.0 };
        v.to_string().into_bytes()
    }
}
