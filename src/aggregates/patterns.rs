//! Key patterns: each key with the segments that look like ids replaced by `*`, so
//! `user:1:profile` … `user:99999:profile` are one row, `user:*:profile`. Drilled down
//! under a prefix, the prefix stays as it is and the rest of the key is patterned:
//! `user:42:*` under `user:42`.

use super::groups::{same_name, GroupTable, RunOfKeys};
use super::prefixes::{find_delimiter, PrefixConfig, Segmenting};
use crate::model::key_stats::KeyStats;
use crate::rdb::bytes::word_at;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// Byte classes, OR-ed over a segment to classify it in one branch-free pass. A byte that
/// is neither a digit nor a letter is `OTHER`, and also `SPECIAL` when it breaks scripts and
/// tools (space and controls, DEL, quotes, backslash) or `NOT_ASCII`: the pattern's pass
/// over a key so sees what lint's `key.special-chars` asks ([`KeySeen`]).
const DIGIT: u8 = 1;
const HEX_LETTER: u8 = 2;
const LETTER: u8 = 4;
const OTHER: u8 = 8;
pub const SPECIAL: u8 = 16;
pub const NOT_ASCII: u8 = 32;
/// The classes [`is_id`] tells segments apart by.
const ID_CLASSES: u8 = DIGIT | HEX_LETTER | LETTER | OTHER;

pub static CLASS: [u8; 256] = {
    let mut t = [OTHER | NOT_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = match c {
            b'0'..=b'9' => DIGIT,
            b'a'..=b'f' | b'A'..=b'F' => HEX_LETTER,
            b'g'..=b'z' | b'G'..=b'Z' => LETTER,
            0..=0x20 | 0x7f | b'"' | b'\'' | b'\\' => OTHER | SPECIAL,
            _ => OTHER,
        };
        b += 1;
    }
    t
};

/// What the pattern's one pass over a key saw of all of it, for lint's key rules (read
/// rather than the key again when patterns split keys as they do, over the whole key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeySeen {
    /// The OR of [`CLASS`] over the key's bytes, of `SPECIAL` and `NOT_ASCII` only.
    pub special: u8,
    /// Whether the key holds the delimiter.
    pub delimited: bool,
}

/// The OR of the classes of `segment`'s bytes.
#[inline]
pub fn classes(segment: &[u8]) -> u8 {
    segment.iter().fold(0, |m, &b| m | CLASS[usize::from(b)])
}

/// Whether a segment (whose [`classes`] are given) is an identifier rather than a name:
/// decimal digits, 8 or more hex digits with at least one digit among them (so words such
/// as `deadbeef`… still need a digit), a UUID, or 16 or more letters and digits mixing
/// both (tokens, base62 ids).
#[inline]
fn is_id(segment: &[u8], classes: u8) -> bool {
    let classes = classes & ID_CLASSES;
    let len = segment.len();
    let has_digit = classes & DIGIT != 0;
    match classes {
        0 => false,
        DIGIT => true,
        c if c & OTHER != 0 => len == 36 && is_uuid(segment),
        c if c & LETTER == 0 => len >= 8 && has_digit,
        _ => len >= 16 && has_digit,
    }
}

/// Whether `bytes` are 1 to 16 ASCII digits, told from two words of 8 (or 4) bytes that
/// may overlap rather than a byte at a time; `false` for any other length.
#[inline(always)]
fn digits_only(bytes: &[u8]) -> bool {
    /// Whether each byte of `w` is a digit: its high nibble 3, and its low one below 10
    /// (adding 6 keeps it below 16; no byte carries into the next).
    fn digits(w: u64, ones: u64) -> bool {
        let high = ones.wrapping_mul(0xf0);
        let threes = ones.wrapping_mul(0x30);
        w & high == threes && w.wrapping_add(ones.wrapping_mul(6)) & high == threes
    }
    const ONES_8: u64 = u64::from_le_bytes([1; 8]);
    const ONES_4: u64 = 0x0101_0101;
    let n = bytes.len();
    match n {
        8..=16 => {
            digits(word_at::<8>(bytes, 0), ONES_8)
                && digits(word_at::<8>(bytes, n.saturating_sub(8)), ONES_8)
        }
        4..=7 => {
            digits(word_at::<4>(bytes, 0), ONES_4)
                && digits(word_at::<4>(bytes, n.saturating_sub(4)), ONES_4)
        }
        1..=3 => bytes.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(s: &[u8]) -> bool {
    s.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| s[i] == b'-')
        && [&s[..8], &s[9..13], &s[14..18], &s[19..23], &s[24..]]
            .iter()
            .all(|part| classes(part) & !(DIGIT | HEX_LETTER) == 0)
}

#[derive(Serialize, Deserialize)]
pub struct Patterns {
    #[serde(flatten)]
    segmenting: Segmenting,
    table: GroupTable,
    /// The pattern being built, reused from key to key.
    #[serde(skip)]
    scratch: Vec<u8>,
    /// Where the delimiters of the key added last are, in order: its segments, which the
    /// prefixes take rather than look for them again ([`Patterns::delimiters`]).
    #[serde(skip)]
    delimiters: Vec<usize>,
    /// [`KeySeen::special`] of the key added last, below `under` ([`Patterns::seen`]).
    #[serde(skip)]
    special: u8,
    /// Keys to go before [`Patterns::same_pattern`] is tried again after it failed: keys
    /// of many patterns mixed seldom come in runs, and each try costs part of a key's read.
    #[serde(skip)]
    untried: u8,
    /// What [`Patterns::same_prefixes`] says of the key added last.
    #[serde(skip)]
    same_prefixes: bool,
    /// Whether the key added last was told from its last segment
    /// ([`Patterns::same_pattern`]): it then starts with the pattern's head, byte for byte
    /// (which the key the pattern was built from may not: a `*` there stands for an id).
    #[serde(skip)]
    told_last: bool,
}

impl Patterns {
    pub fn new(config: &PrefixConfig) -> Self {
        Patterns {
            segmenting: Segmenting::of(config),
            table: GroupTable::new(config.cap),
            scratch: Vec::new(),
            delimiters: Vec::new(),
            special: 0,
            untried: 0,
            same_prefixes: false,
            told_last: false,
        }
    }

    /// No key counted yet, with the same settings.
    pub fn like(&self) -> Self {
        Patterns {
            segmenting: self.segmenting.clone(),
            table: self.table.like(),
            scratch: Vec::new(),
            delimiters: Vec::new(),
            special: 0,
            untried: 0,
            same_prefixes: false,
            told_last: false,
        }
    }

    /// Counts `k` under its pattern.
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let same = self.segment_key(k);
        self.count(k, same);
    }

    /// Counts `k` under the pattern [`Patterns::segment_key`] found: `same` when that
    /// told it from its last segment (the name counted last, not compared again).
    #[inline(always)]
    pub fn count(&mut self, k: &KeyStats<'_>, same: bool) {
        match same {
            true => self.table.add_same(&self.scratch, k),
            false => self.table.add(&self.scratch, k),
        }
    }

    /// Counts a run of keys of the pattern counted last ([`RunOfKeys`]).
    pub fn count_run(&mut self, run: &RunOfKeys) {
        self.table.count_run(run);
    }

    /// Builds `k`'s pattern and finds its delimiters, without counting it: true when it
    /// has the pattern of the key before, told from its last segment.
    #[inline]
    pub fn segment_key(&mut self, k: &KeyStats<'_>) -> bool {
        // Keys of one pattern come in runs: most are told from their last segment.
        let same = self.segmenting.under.is_empty() && self.same_pattern_tried(&k.key);
        let Segmenting { delimiter, under } = &self.segmenting;
        match Some(&under[..])
            .filter(|under| !under.is_empty())
            .and_then(|under| k.key.strip_prefix(under))
        {
            _ if same => {}
            Some(rest) => {
                let classes = segment(rest, delimiter, &mut self.scratch, &mut self.delimiters);
                self.special = classes & (SPECIAL | NOT_ASCII);
                self.scratch.splice(0..0, under.iter().copied());
                let under = under.len();
                self.delimiters
                    .iter_mut()
                    .for_each(|at| *at = at.saturating_add(under));
            }
            None => {
                let classes = segment(&k.key, delimiter, &mut self.scratch, &mut self.delimiters);
                self.special = classes & (SPECIAL | NOT_ASCII);
            }
        }
        // Two keys in a row told from their last segment start with the same head, up to
        // their last delimiter.
        self.same_prefixes = same && self.told_last;
        self.told_last = same;
        same
    }

    /// Whether the key added last has the pattern of the key before it and the same bytes
    /// up to its last delimiter: its prefixes are then those of the key before, which
    /// tables count it under without comparing names.
    pub fn same_prefixes(&self) -> bool {
        self.same_prefixes
    }

    /// [`Patterns::same_pattern`], tried on the key after a key it held for, and on one key
    /// in eight after it failed.
    #[inline(always)]
    fn same_pattern_tried(&mut self, key: &[u8]) -> bool {
        if self.untried > 0 {
            self.untried = self.untried.saturating_sub(1);
            return false;
        }
        let same = self.same_pattern(key);
        if !same {
            self.untried = 7;
        }
        same
    }

    /// Whether `key` has the pattern, the delimiters and the [`KeySeen`] of the key added
    /// last, as it does when that pattern ends in the delimiter and `*` (`user:*`), no
    /// segment before it was cut short (its last delimiter is where the key's was, so
    /// every segment kept its length), and `key` is that pattern's head followed by an id.
    /// Each segment of the head is then a name that stays or a `*` that stays, and ids
    /// hold no special byte. A one-byte delimiter other than `*` only.
    #[inline(always)]
    fn same_pattern(&self, key: &[u8]) -> bool {
        let [d] = self.segmenting.delimiter[..] else {
            return false;
        };
        let Some(head) = self.scratch.strip_suffix(b"*") else {
            return false;
        };
        if d == b'*'
            || head.last() != Some(&d)
            || self.delimiters.last().copied() != head.len().checked_sub(1)
        {
            return false;
        }
        let Some((start, tail)) = key.split_at_checked(head.len()) else {
            return false;
        };
        if !same_name(start, head) {
            return false;
        }
        if !d.is_ascii_digit() && digits_only(tail) {
            // Digits (most ids): an id, and no delimiter among them.
            return true;
        }
        let mut mask = 0;
        for &b in tail {
            if b == d {
                return false;
            }
            mask |= CLASS[usize::from(b)];
        }
        is_id(tail, mask)
    }

    /// What the pattern's pass saw of the key added last: all of it when patterns are
    /// [`Patterns::built_with`] a delimiter.
    pub fn seen(&self) -> KeySeen {
        KeySeen {
            special: self.special,
            delimited: !self.delimiters.is_empty(),
        }
    }

    /// Where the delimiters of the key added last are, in order (below
    /// [`PrefixConfig::under`] when it starts with it).
    pub fn delimiters(&self) -> &[usize] {
        &self.delimiters
    }

    /// Whether these patterns split keys as `prefixes` do: then the prefixes of a key are
    /// read from its [`Patterns::delimiters`].
    pub fn segments_like(&self, prefixes: &super::prefixes::Prefixes) -> bool {
        self.segmenting == *prefixes.segmenting()
    }

    pub fn table(&self) -> &GroupTable {
        &self.table
    }

    /// See [`GroupTable::trim`].
    pub fn trim(&mut self) {
        self.table.trim();
    }

    /// The pattern of the key added last.
    pub fn current(&self) -> &[u8] {
        &self.scratch
    }

    /// Whether patterns are built with `delimiter` over the whole key (not drilled down):
    /// rules that group keys by pattern then reuse [`Patterns::current`] rather than build
    /// it again.
    pub fn built_with(&self, delimiter: &[u8]) -> bool {
        self.segmenting.delimiter == delimiter && self.segmenting.under.is_empty()
    }
}

/// The length of the segment `bytes` begins with (up to the first `d`, or all of it), and
/// the OR of its bytes' [`CLASS`].
#[inline(always)]
fn classify_segment(bytes: &[u8], d: u8) -> (usize, u8) {
    let mut mask = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == d {
            return (i, mask);
        }
        mask |= CLASS[usize::from(b)];
    }
    (bytes.len(), mask)
}

/// Writes the pattern of `key` into `out` (cleared first).
pub fn pattern_of(key: &[u8], delimiter: &[u8], out: &mut Vec<u8>) {
    segment(key, delimiter, out, &mut Vec::new());
}

/// Writes the pattern of `key` into `out` and where its delimiters are into `delimiters`
/// (both cleared first): one pass over the key for both. Returns the OR of [`CLASS`] over
/// the key's bytes.
fn segment(key: &[u8], delimiter: &[u8], out: &mut Vec<u8>, delimiters: &mut Vec<usize>) -> u8 {
    out.clear();
    delimiters.clear();
    // Inlined: out of line, its call cost as much as what it does on short segments.
    #[inline(always)]
    fn push(segment: &[u8], classes: u8, out: &mut Vec<u8>) {
        if is_id(segment, classes) {
            out.push(b'*');
        } else {
            out.extend_from_slice(segment);
        }
    }
    if let [d] = *delimiter {
        // One pass: classify bytes while looking for the delimiter, a segment at a time
        // in a loop of its own that keeps all it needs in registers.
        let mut rest = key;
        let mut start: usize = 0;
        let mut all = 0;
        loop {
            let (len, mask) = classify_segment(rest, d);
            all |= mask;
            push(&rest[..len], mask, out);
            let Some(after) = rest.get(len.saturating_add(1)..) else {
                return match delimiters.is_empty() {
                    true => mask,
                    false => all | CLASS[usize::from(d)],
                };
            };
            start = start.saturating_add(len);
            delimiters.push(start);
            out.push(d);
            start = start.saturating_add(1);
            rest = after;
        }
    }
    let mut from = 0;
    let mut all = classes(delimiter);
    loop {
        let end = find_delimiter(key, from, delimiter).unwrap_or(key.len());
        let segment = &key[from..end];
        let mask = classes(segment);
        all |= mask;
        push(segment, mask, out);
        if end == key.len() {
            return match delimiters.is_empty() {
                true => mask,
                false => all,
            };
        }
        delimiters.push(end);
        out.extend_from_slice(delimiter);
        from = end.saturating_add(delimiter.len());
    }
}

impl AddAssign for Patterns {
    fn add_assign(&mut self, mut other: Patterns) {
        self.absorb(&mut other);
    }
}

impl Patterns {
    /// Adds what `other` (the next chunk's) counted, and empties it
    /// ([`GroupTable::absorb`]). It forgets the key it segmented last too, as
    /// [`Patterns::like`] makes it: a key of the next chunk it is reused for is not told
    /// from that key's pattern, whose special bytes it no longer holds.
    pub fn absorb(&mut self, other: &mut Patterns) {
        self.table.absorb(&mut other.table);
        other.scratch.clear();
        other.delimiters.clear();
        other.special = 0;
        other.untried = 0;
        other.same_prefixes = false;
        other.told_last = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part reused for a later chunk sees each key's special bytes, though its first key
    /// has the pattern of the last key it saw (lint's key.special-chars reads them).
    #[test]
    fn a_part_absorbed_starts_afresh() {
        let key = |name: &str| {
            let mut k = KeyStats::new();
            k.key = std::borrow::Cow::Owned(name.as_bytes().to_vec());
            k
        };
        let mut all = Patterns::new(&PrefixConfig::default());
        let mut part = all.like();
        for chunk in 0..3 {
            for i in 0..3 {
                part.add(&key(&format!("café:{}", chunk * 10 + i)));
                assert_eq!(part.seen().special, NOT_ASCII, "chunk {chunk}, key {i}");
            }
            all.absorb(&mut part);
        }
        assert_eq!(all.table().rows()[0].stats.keys, 9);
    }

    #[test]
    fn digits_only_as_byte_by_byte() {
        for len in 0..=20usize {
            let digits: Vec<u8> = (0..len).map(|i| b'0' + (i * 7 % 10) as u8).collect();
            assert_eq!(digits_only(&digits), (1..=16).contains(&len), "{len}");
            for at in 0..len {
                // Bytes either side of the digits, and ones whose high or low nibble fits.
                for other in [
                    b'/',
                    b':',
                    b'#',
                    b'?',
                    b'a',
                    0x39 + 0x80,
                    0xb0,
                    0x3a,
                    0x3f,
                    0,
                ] {
                    let mut bytes = digits.clone();
                    bytes[at] = other;
                    assert!(!digits_only(&bytes), "{len} {at} {other}");
                }
            }
        }
    }

    fn pattern(key: &str) -> String {
        let mut out = Vec::new();
        pattern_of(key.as_bytes(), b":", &mut out);
        let mut long = Vec::new();
        pattern_of(key.replace(':', "::").as_bytes(), b"::", &mut long);
        assert_eq!(
            String::from_utf8_lossy(&long).replace("::", ":").as_bytes(),
            out
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ids_collapse_names_stay() {
        assert_eq!(pattern("user:1:profile"), "user:*:profile");
        assert_eq!(pattern("user:99999:profile"), "user:*:profile");
        assert_eq!(
            pattern("session:550e8400-e29b-41d4-a716-446655440000"),
            "session:*"
        );
        assert_eq!(pattern("cache:product:9f86d081884c7d65"), "cache:product:*");
        assert_eq!(pattern("tok:aZ3kP9qL2mX8vB4n"), "tok:*");
        // Names, short hex words and mixed names shorter than 16 stay.
        assert_eq!(pattern("cache:deadbeef:v2"), "cache:deadbeef:v2");
        assert_eq!(pattern("feed:cafe1234"), "feed:*");
        assert_eq!(pattern("user_123:x"), "user_123:x");
        assert_eq!(pattern("counter"), "counter");
        assert_eq!(pattern("12345"), "*");
        assert_eq!(pattern("a::b:"), "a::b:");
        assert_eq!(pattern(""), "");
    }

    /// A key told from its last segment ([`Patterns::same_pattern`]) gets the pattern,
    /// delimiters and special bytes a full read of it gives, whatever key came before.
    #[test]
    fn a_key_told_from_its_last_segment_is_read_as_a_whole() {
        let keys: &[&[u8]] = &[
            b"key:1",
            b"key:22",
            b"key:abc",
            b"key:5:6",
            b"a:1:2",
            b"a:*:3",
            b"a:*:33",
            b"ab:12:x*",
            b"ab:*:x123",
            b"ab:*:x*",
            b"s \x01:9",
            b"s \x01:10",
            b"*:7",
            b"*:8:9",
            b"k:",
            b"k:2",
            b"k::3",
            b"k:550e8400-e29b-41d4-a716-446655440000",
            b"k:550e8400-e29b-41d4-a716-44665544000z",
            b"\xc3\xa9:1",
            b"\xc3\xa9:2",
        ];
        let read = |key: &[u8]| {
            let (mut pattern, mut delimiters) = (Vec::new(), Vec::new());
            let classes = segment(key, b":", &mut pattern, &mut delimiters);
            (pattern, delimiters, classes & (SPECIAL | NOT_ASCII))
        };
        let mut hits = 0;
        for before in keys {
            for key in keys {
                let mut patterns = Patterns::new(&PrefixConfig::default());
                (patterns.scratch, patterns.delimiters, patterns.special) = read(before);
                if patterns.same_pattern(key) {
                    hits += 1;
                    let seen = (patterns.scratch, patterns.delimiters, patterns.special);
                    assert_eq!(seen, read(key), "{key:?} after {before:?}");
                }
            }
        }
        assert_eq!(hits, 24);
    }

    #[test]
    fn uuid_shape() {
        let id = |s: &[u8]| is_id(s, classes(s));
        assert!(id(b"550E8400-E29B-41D4-A716-446655440000"));
        assert!(!id(b"550e8400-e29b-41d4-a716-44665544000"));
        assert!(!id(b"550e8400_e29b_41d4_a716_446655440000"));
        assert!(!id(b"550e8400-e29b-41d4-a716-44665544000g"));
    }
}
