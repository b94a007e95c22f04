//! Rules about single keys, evaluated while keys are folded: key names, big keys, JSON
//! strings, encodings, expiry before the dump, idle and LFU. Also feeds the small-string
//! pattern table that type.strings-as-hash is judged on after the merge.

use super::{Finding, LintConfig, Rule, RuleTally, Subject};
use crate::aggregates::figure::signed;
use crate::aggregates::groups::GroupTable;
use crate::aggregates::patterns::{classes, pattern_of, KeySeen, CLASS, NOT_ASCII, SPECIAL};
use crate::aggregates::prefixes::find_delimiter;
use crate::model::allocator::Allocator;
use crate::model::encoding::{Encoding, LISTPACK_OVERHEAD};
use crate::model::key_stats::KeyStats;
use crate::model::memory::{DICT_ENTRY, ROBJ};
use crate::model::server::{Family, ServerProfile, Version};
use crate::pass::fold::Source;
use crate::rdb::{RdbString, RedisType};
use crate::text::invisible::is_invisible;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize, Serializer};
use std::ops::AddAssign;
use std::sync::Arc;

pub struct KeyRules {
    config: Arc<LintConfig>,
    /// The server the dump's keys are modelled on (limits, version, allocator); `None`
    /// for the aggregate that only receives merges.
    profile: Option<ServerProfile>,
    /// Indexed like [`Rule::ALL`]; group rules stay empty here.
    rules: Vec<RuleTally>,
    /// Small string keys by pattern, for type.strings-as-hash: their elements are the
    /// strings' lengths.
    strings: GroupTable,
    /// A decompressed string, reused.
    text: Vec<u8>,
}

impl KeyRules {
    pub fn new(config: Arc<LintConfig>, source: Source) -> Self {
        KeyRules {
            rules: Rule::ALL
                .iter()
                .map(|_| RuleTally::new(config.max_findings))
                .collect(),
            strings: GroupTable::new(config.group_cap),
            profile: source.profile,
            config,
            text: Vec::new(),
        }
    }

    /// The allocator of the first dump's server, for estimates made after the merge.
    pub fn allocator(&self) -> Allocator {
        self.profile.map(|p| p.allocator).unwrap_or_default()
    }

    /// Small string keys by pattern (see type.strings-as-hash).
    pub fn strings(&self) -> &GroupTable {
        &self.strings
    }

    pub fn config(&self) -> &LintConfig {
        &self.config
    }

    /// The per-key rules' tallies, by rule.
    pub fn into_rules(self) -> impl Iterator<Item = (Rule, RuleTally)> {
        Rule::ALL.into_iter().zip(self.rules)
    }

    /// Checks `k` against the per-key rules. Their kept findings are the worst under a
    /// total order ([`RuleTally`]), so they merge the same whatever order keys come in.
    /// `seen` is what the patterns' pass saw of the key, split by this configuration's
    /// delimiter, when it saw all of it: the key's bytes are then not read again.
    #[inline(always)]
    pub fn add(&mut self, k: &KeyStats<'_>, seen: Option<KeySeen>) {
        let config = &*self.config;
        let t = &config.thresholds;
        let on = |r| config.enabled(r);
        let key = &*k.key;
        // Counts `k` under a rule and keeps it as a finding if it is among the worst.
        let mut found = |rule: Rule, value: i64, threshold: i64, saving: Option<u64>| {
            let rule_tally = &mut self.rules[rule as usize];
            if rule_tally.tally(1, k.memory_bytes) {
                rule_tally.keep(Finding {
                    rule,
                    db: Some(k.db),
                    subject: Subject::Key(k.key.as_ref().into()),
                    value,
                    threshold,
                    keys: 1,
                    memory_bytes: k.memory_bytes,
                    saving_bytes: saving,
                });
            }
        };
        if on(Rule::KeySpecialChars) {
            let bad = match seen {
                Some(seen) => special_chars_seen(key, seen.special),
                None => special_chars(key),
            };
            if bad > 0 {
                found(Rule::KeySpecialChars, signed(bad as u64), 0, None);
            }
        }
        if on(Rule::KeyCharset) {
            let bad = outside_charset(key);
            if bad > 0 {
                found(Rule::KeyCharset, signed(bad as u64), 0, None);
            }
        }
        if on(Rule::KeyTooLong) && key.len() as u64 > t.key_max_bytes {
            found(
                Rule::KeyTooLong,
                signed(key.len() as u64),
                signed(t.key_max_bytes),
                None,
            );
        }
        let delimited = || match seen {
            Some(seen) => seen.delimited,
            None => find_delimiter(key, 0, &config.delimiter).is_some(),
        };
        if on(Rule::KeyNoNamespace) && !delimited() {
            found(Rule::KeyNoNamespace, 0, 1, None);
        }
        let length = k.length().unwrap_or(0);
        let is_string = k.redis_type == RedisType::String;
        let big_string = is_string && length > t.bigkey_string_bytes;
        let big_collection =
            !is_string && k.redis_type != RedisType::Module && length > t.bigkey_elements;
        if big_string && on(Rule::BigkeyString) {
            found(
                Rule::BigkeyString,
                signed(length),
                signed(t.bigkey_string_bytes),
                None,
            );
        }
        if big_collection && on(Rule::BigkeyElements) {
            found(
                Rule::BigkeyElements,
                signed(length),
                signed(t.bigkey_elements),
                None,
            );
        }
        if (big_string || big_collection) && k.expiry_ms.is_some() && on(Rule::BigkeyExpiring) {
            let threshold = if big_string {
                t.bigkey_string_bytes
            } else {
                t.bigkey_elements
            };
            found(
                Rule::BigkeyExpiring,
                signed(length),
                signed(threshold),
                None,
            );
        }
        if is_string && on(Rule::ValueJsonString) {
            if let Some((value, threshold)) = Self::json_violation(config, &mut self.text, k) {
                found(Rule::ValueJsonString, value, threshold, None);
            }
        }
        // Only the big encodings of a hash, set, sorted set or list can be just over.
        let big = matches!(
            k.encoding,
            Encoding::Hashtable | Encoding::Skiplist | Encoding::Quicklist
        );
        if big && on(Rule::EncodingJustOverListpack) {
            if let Some((value, limit, saving)) = Self::just_over_listpack(self.profile, config, k)
            {
                found(
                    Rule::EncodingJustOverListpack,
                    signed(value),
                    signed(limit),
                    Some(saving),
                );
            }
        }
        if on(Rule::EncodingListpackTooLong)
            && k.encoding.is_listpack()
            && length > t.listpack_max_entries
        {
            found(
                Rule::EncodingListpackTooLong,
                signed(length),
                signed(t.listpack_max_entries),
                None,
            );
        }
        if let Some(ttl) = k.ttl_s.filter(|&s| s < 0) {
            if on(Rule::TtlAlreadyExpired) {
                found(Rule::TtlAlreadyExpired, ttl, 0, None);
            }
        }
        if let Some(idle) = k.idle_s.filter(|&s| s > t.idle_cold_seconds) {
            if on(Rule::IdleCold) {
                found(
                    Rule::IdleCold,
                    signed(idle),
                    signed(t.idle_cold_seconds),
                    None,
                );
            }
        }
        if let Some(freq) = k.lfu_freq.filter(|&f| f >= t.hot_lfu) {
            if on(Rule::HotLfu) {
                found(Rule::HotLfu, i64::from(freq), i64::from(t.hot_lfu), None);
            }
        }
    }

    /// An empty small-string pattern table like these rules', for a chunk of the file.
    pub fn small_strings(&self) -> SmallStrings {
        SmallStrings {
            config: self.config.clone(),
            table: self.strings.like(),
            pattern: Vec::new(),
        }
    }

    /// See [`GroupTable::trim`].
    pub fn trim(&mut self) {
        self.strings.trim();
    }

    /// Merges the small-string table of the next chunk of the file, in file order.
    pub fn absorb_small_strings(&mut self, strings: &mut SmallStrings) {
        self.strings.absorb(&mut strings.table);
    }
    /// (value, threshold) when the string is a JSON object or array over the byte
    /// threshold, or an array over the item threshold. Only strings long enough to break
    /// one of the two are decompressed and parsed: `[1,…]` takes 2 bytes per item.
    #[inline(always)]
    fn json_violation(
        config: &LintConfig,
        text: &mut Vec<u8>,
        k: &KeyStats<'_>,
    ) -> Option<(i64, i64)> {
        let t = &config.thresholds;
        // A string's length, as the rules read it.
        let len = k.length().unwrap_or(0);
        match len
            <= t.json_string_bytes
                .min(t.json_array_items.saturating_mul(2))
        {
            true => None,
            false => Self::parsed_json_violation(t, text, k.string_value?),
        }
    }

    /// [`KeyRules::json_violation`] of a string long enough to break a threshold.
    #[inline(never)]
    fn parsed_json_violation(
        t: &super::Thresholds,
        text: &mut Vec<u8>,
        s: RdbString<'_>,
    ) -> Option<(i64, i64)> {
        let len = s.len();
        let bytes = s.bytes(text).ok()?;
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace())?;
        let (bytes_over, items) = match bytes[start] {
            b'[' => {
                let items = serde_json::from_slice::<Vec<IgnoredAny>>(bytes).ok()?.len() as u64;
                (len > t.json_string_bytes, Some(items))
            }
            b'{' => {
                serde_json::from_slice::<IgnoredAny>(bytes).ok()?;
                (len > t.json_string_bytes, None)
            }
            _ => return None,
        };
        if bytes_over {
            Some((signed(len), signed(t.json_string_bytes)))
        } else {
            items
                .filter(|&n| n > t.json_array_items)
                .map(|n| (signed(n), signed(t.json_array_items)))
        }
    }

    /// When `k` has a big encoding (hashtable, skiplist, quicklist) although it is within
    /// the margin of the limits that would make it compact: (value, limit, estimated
    /// saving). Value and limit are those of the limit the key is over: entries, or the
    /// bytes of its longest element (of a list node for lists under a byte limit).
    fn just_over_listpack(
        profile: Option<ServerProfile>,
        config: &LintConfig,
        k: &KeyStats<'_>,
    ) -> Option<(u64, u64, u64)> {
        let p = profile?;
        let l = &p.limits;
        let m = config.thresholds.listpack_margin;
        let n = k.elements?;
        let largest = k.largest_element_bytes;
        let within = |entries: u64, value: u64| {
            n <= m.saturating_mul(entries) && largest <= m.saturating_mul(value)
        };
        // The limit that made the encoding big: entries, else the longest element.
        let over = |entries: u64, value: u64| {
            if n > entries || largest <= value {
                (n, entries)
            } else {
                (largest, value)
            }
        };
        let listpack_sets_and_lists = p.family == Family::Valkey || p.version >= Version(7, 2, 0);
        let a = p.allocator;
        let lp_bytes = k
            .summary
            .listpack_estimate
            .saturating_add(LISTPACK_OVERHEAD);
        // Most keys are compact or strings: the estimate is made only for the others.
        let listpack = || a.class(lp_bytes);
        let (value, limit, compact) = match k.encoding {
            Encoding::Hashtable => match k.redis_type {
                RedisType::Hash
                    if within(l.hash_max_listpack_entries, l.hash_max_listpack_value) =>
                {
                    let (value, limit) =
                        over(l.hash_max_listpack_entries, l.hash_max_listpack_value);
                    (value, limit, listpack())
                }
                RedisType::Set
                    if k.summary.all_integers
                        && n <= m.saturating_mul(l.set_max_intset_entries) =>
                {
                    // An intset header and 8-byte integers at most.
                    (
                        n,
                        l.set_max_intset_entries,
                        a.class(n.saturating_mul(8).saturating_add(8)),
                    )
                }
                RedisType::Set
                    if listpack_sets_and_lists
                        && within(l.set_max_listpack_entries, l.set_max_listpack_value) =>
                {
                    let (value, limit) = over(l.set_max_listpack_entries, l.set_max_listpack_value);
                    (value, limit, listpack())
                }
                _ => return None,
            },
            Encoding::Skiplist
                if within(l.zset_max_listpack_entries, l.zset_max_listpack_value) =>
            {
                let (value, limit) = over(l.zset_max_listpack_entries, l.zset_max_listpack_value);
                (value, limit, listpack())
            }
            Encoding::Quicklist
                if listpack_sets_and_lists
                    && k.summary.plain_nodes == 0
                    && list_within(l.list_max_listpack_size, m, n, k.summary.listpack_estimate) =>
            {
                match l.list_max_listpack_size {
                    s if s > 0 && n > s.unsigned_abs() => (n, s.unsigned_abs(), listpack()),
                    s if s > 0 => (lp_bytes, LIST_NODE_SAFETY_BYTES, listpack()),
                    s => (lp_bytes, list_node_bytes(s), listpack()),
                }
            }
            // Big, but past the margin (a list: or before 7.2, or with a plain node).
            Encoding::Skiplist | Encoding::Quicklist => return None,
            Encoding::Int
            | Encoding::Embstr
            | Encoding::Raw
            | Encoding::Ziplist
            | Encoding::Linkedlist
            | Encoding::Listpack
            | Encoding::Intset
            | Encoding::TemplateListpack
            | Encoding::TemplateArray
            | Encoding::Listpackex
            | Encoding::Zipmap
            | Encoding::Stream
            | Encoding::SlicedArray => return None,
        };
        // Compact, the key would cost its dict entry, value object, name and payload.
        let key = a.sds(k.key.len() as u64);
        let saving = k.memory_bytes.saturating_sub(
            (DICT_ENTRY + ROBJ)
                .saturating_add(key)
                .saturating_add(compact),
        );
        Some((value, limit, saving))
    }
}

/// Small string keys by pattern for type.strings-as-hash, as a chunk of the file fills
/// them: a heavy-hitter table, so merged in file order ([`KeyRules::absorb_small_strings`]).
pub struct SmallStrings {
    config: Arc<LintConfig>,
    table: GroupTable,
    /// The pattern being built, reused from key to key.
    pattern: Vec<u8>,
}

impl SmallStrings {
    /// Adds `k` if it is a small string; `pattern` is its pattern under the lint's
    /// delimiter when the caller has built it already. In line as far as telling that a
    /// key counts nothing: not a small string, or a pattern ending in an id (most keys).
    #[inline(always)]
    pub fn add(&mut self, k: &KeyStats<'_>, pattern: Option<&[u8]>) {
        let config = &*self.config;
        let length = k.length().unwrap_or(0);
        if k.redis_type == RedisType::String
            && config.enabled(Rule::TypeStringsAsHash)
            && length <= config.thresholds.strings_as_hash_value_bytes
            && !pattern.is_some_and(|p| ends_in_id(p, &config.delimiter))
        {
            self.add_small(k, pattern, length);
        }
    }

    /// [`SmallStrings::add`] of a small string of `length` bytes.
    #[inline(never)]
    fn add_small(&mut self, k: &KeyStats<'_>, pattern: Option<&[u8]>, length: u64) {
        let config = &*self.config;
        let pattern = match pattern {
            Some(p) => p,
            None => {
                pattern_of(&k.key, &config.delimiter, &mut self.pattern);
                &self.pattern
            }
        };
        if field_of(pattern, &config.delimiter).is_some() {
            self.table.add_counting(pattern, k, length);
        }
    }
}

/// Bytes a list node holds at most under a positive `list-max-listpack-size` (entries).
const LIST_NODE_SAFETY_BYTES: u64 = 8192;

/// Bytes of one list node under a negative `list-max-listpack-size` (-1 = 4 KB … -5 = 64 KB).
fn list_node_bytes(size: i64) -> u64 {
    // -1 … -5: 4 KB … 64 KB.
    4096u64 << size.unsigned_abs().clamp(1, 5).saturating_sub(1)
}

/// Whether a list of `n` elements whose listpack would take `bytes` fits in one node of
/// `m` times the `list-max-listpack-size` limit (negative: a byte class, -2 = 8 KB;
/// positive: entries).
fn list_within(size: i64, m: u64, n: u64, bytes: u64) -> bool {
    let bytes = bytes.saturating_add(LISTPACK_OVERHEAD);
    match size {
        s if s > 0 => {
            n <= m.saturating_mul(s.unsigned_abs())
                && bytes <= m.saturating_mul(LIST_NODE_SAFETY_BYTES)
        }
        s => bytes <= m.saturating_mul(list_node_bytes(s)),
    }
}

/// The last segment of a pattern when there is one before it and it is a name rather
/// than an id (`*`): the field a hash per entity would hold. Most patterns end in an id,
/// told inline from their last bytes; the others are read out of line.
#[inline(always)]
pub fn field_of<'p>(pattern: &'p [u8], delimiter: &[u8]) -> Option<(&'p [u8], &'p [u8])> {
    match ends_in_id(pattern, delimiter) {
        true => None,
        false => last_field(pattern, delimiter),
    }
}

/// [`field_of`] of a pattern that does not end in an id.
#[inline(never)]
fn last_field<'p>(pattern: &'p [u8], delimiter: &[u8]) -> Option<(&'p [u8], &'p [u8])> {
    let at = match delimiter {
        [d] => pattern.iter().rposition(|b| b == d),
        _ => pattern
            .windows(delimiter.len())
            .rposition(|w| w == delimiter),
    }?;
    let (parent, field) = (
        &pattern[..at],
        &pattern[at.saturating_add(delimiter.len())..],
    );
    (!parent.is_empty() && !field.is_empty() && field != b"*").then_some((parent, field))
}

/// Whether a pattern ends in an id (`…:*`), and so holds no field whatever comes before:
/// most do, told from their last bytes.
#[inline(always)]
fn ends_in_id(pattern: &[u8], delimiter: &[u8]) -> bool {
    match (pattern, delimiter) {
        ([.., d, b'*'], [delimiter]) => d == delimiter,
        _ => pattern
            .strip_suffix(b"*")
            .is_some_and(|rest| rest.ends_with(delimiter)),
    }
}

/// Bytes that break scripts and tools: whitespace, quotes, backslash, control bytes,
/// invalid UTF-8 and non-printable characters.
#[inline]
pub fn special_chars(key: &[u8]) -> usize {
    special_chars_seen(key, classes(key))
}

/// [`special_chars`] of a key whose byte [`classes`] are known: almost every key holds no
/// special byte and ends here, without reading the key again.
#[inline]
fn special_chars_seen(key: &[u8], classes: u8) -> usize {
    match classes & (SPECIAL | NOT_ASCII) {
        0 => 0,
        kinds => count_special_chars(key, kinds),
    }
}

/// [`special_chars`] of a key holding some: ASCII ones only (`kinds`), or more.
#[cold]
#[inline(never)]
fn count_special_chars(key: &[u8], kinds: u8) -> usize {
    let special = |b: u8| CLASS[usize::from(b)] & SPECIAL != 0;
    match kinds {
        SPECIAL => key.iter().filter(|&&b| special(b)).count(),
        _ => key
            .utf8_chunks()
            .map(|chunk| {
                let valid = chunk
                    .valid()
                    .chars()
                    .filter(|&c| match u8::try_from(c) {
                        Ok(b) if b.is_ascii() => special(b),
                        _ => c.is_control() || is_invisible(c),
                    })
                    .count();
                valid.saturating_add(chunk.invalid().len())
            })
            .sum(),
    }
}

/// Positions breaking the strict alphabet: a first byte that is not a letter, and bytes
/// outside `A-Za-z0-9_.:`.
pub fn outside_charset(key: &[u8]) -> usize {
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':');
    let outside = key.iter().filter(|b| !allowed(b)).count();
    match key.first() {
        Some(b) if allowed(b) && !b.is_ascii_alphabetic() => outside.saturating_add(1),
        None => 1,
        _ => outside,
    }
}

/// What [`KeyRules`] hold beside their configuration, as summary.json's mergeable state
/// writes it: each rule's tally (worst findings trimmed to the cap) by rule, and the
/// small-string pattern table.
#[derive(Serialize, Deserialize)]
pub struct KeyRulesState {
    rules: Vec<(Rule, RuleTally)>,
    strings: GroupTable,
}

impl Serialize for KeyRules {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Borrowed<'a> {
            rules: Vec<(Rule, RuleTally)>,
            strings: &'a GroupTable,
        }
        let rules = Rule::ALL
            .into_iter()
            .zip(&self.rules)
            .map(|(rule, tally)| {
                let mut tally = tally.clone();
                tally.trim();
                (rule, tally)
            })
            .collect();
        Borrowed {
            rules,
            strings: &self.strings,
        }
        .serialize(s)
    }
}

impl KeyRules {
    /// Rules read back from summary.json's mergeable state, checked with `config`; `profile`
    /// is the run's first dump's server (see [`KeyRules::allocator`]).
    pub fn restore(
        config: Arc<LintConfig>,
        profile: Option<ServerProfile>,
        state: KeyRulesState,
    ) -> Self {
        let mut rules = KeyRules::new(
            config,
            Source {
                file: 0,
                reference_ms: 0,
                profile,
            },
        );
        for (rule, mut tally) in state.rules {
            tally.trim();
            rules.rules[rule as usize] = tally;
        }
        rules.strings = state.strings;
        rules
    }
}

impl AddAssign for KeyRules {
    fn add_assign(&mut self, o: KeyRules) {
        self.profile = self.profile.or(o.profile);
        for (a, b) in self.rules.iter_mut().zip(o.rules) {
            a.merge(b);
        }
        self.strings += o.strings;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_characters() {
        for (key, special) in [
            (&b"user:1"[..], 0),
            (b"user:12345678:profile", 0),
            (b"user:123 5678:profile", 1),
            (b"user:12345678:profil\"", 1),
            (b"a b\n\"c'\\", 5),
            (b"\x1b[31m", 1),
            ("é☃".as_bytes(), 0),
            ("a\u{202e}b\u{a0}".as_bytes(), 2),
            (b"bin\xff\xfe", 2),
        ] {
            assert_eq!(special_chars(key), special, "{key:?}");
        }
    }

    #[test]
    fn strict_charset() {
        assert_eq!(outside_charset(b"user_1.a:b"), 0);
        assert_eq!(outside_charset(b"1user"), 1);
        assert_eq!(outside_charset(b"_user-x"), 2);
        assert_eq!(outside_charset(b"{tag}"), 2);
        assert_eq!(outside_charset(b""), 1);
    }

    #[test]
    fn fields_of_patterns() {
        assert_eq!(
            field_of(b"user:*:name", b":"),
            Some((&b"user:*"[..], &b"name"[..]))
        );
        assert_eq!(field_of(b"user:*", b":"), None);
        assert_eq!(field_of(b"name", b":"), None);
        assert_eq!(field_of(b"a::b::c", b"::"), Some((&b"a::b"[..], &b"c"[..])));
        // A field that only ends in `*` is a name; `*` alone after the delimiter is an id.
        assert_eq!(field_of(b"a:b*", b":"), Some((&b"a"[..], &b"b*"[..])));
        assert_eq!(field_of(b"a::*", b"::"), None);
        assert_eq!(field_of(b"a::b*", b"::"), Some((&b"a"[..], &b"b*"[..])));
        assert_eq!(field_of(b"*", b":"), None);
    }

    #[test]
    fn list_node_limits() {
        assert!(list_within(-2, 2, 10, 16_000));
        assert!(!list_within(-2, 2, 10, 16_380));
        assert!(list_within(128, 2, 256, 100));
        assert!(!list_within(128, 2, 257, 100));
    }
}
