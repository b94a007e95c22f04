//! Key filters shared by every command: `--db`, `--type`, `--match GLOB`, `--regex RE`,
//! `--not-match GLOB`, `--no-expired`, `--under PREFIX` (checked before a value is decoded)
//! and `--min-memory BYTES` (after, on the estimate).

use crate::rdb::{KeyRecord, RedisType};
use regex::bytes::Regex;
use std::borrow::Cow;

#[derive(Clone, Debug, Default)]
pub struct KeyFilter {
    pub dbs: Vec<u64>,
    pub types: Vec<RedisType>,
    /// The key matches every one.
    pub patterns: Vec<Regex>,
    /// The key matches none.
    pub excluded: Vec<Regex>,
    /// The key starts with these bytes (`--under`: the prefix and its delimiter).
    pub key_prefix: Option<Vec<u8>>,
    /// Estimated memory at least this (0: any).
    pub min_memory_bytes: u64,
    /// Unix ms keys expired before are skipped, when the dump has no `ctime`.
    pub expired_before_ms: Option<i64>,
    /// The flags that made it, as given (`--db 99`, `--under cache`), for messages.
    pub flags: Vec<String>,
}

impl KeyFilter {
    pub fn is_empty(&self) -> bool {
        self.dbs.is_empty()
            && self.types.is_empty()
            && self.patterns.is_empty()
            && self.excluded.is_empty()
            && self.key_prefix.is_none()
            && self.min_memory_bytes == 0
            && self.expired_before_ms.is_none()
    }

    /// Whether the key passes what can be checked before its value is decoded: db, type,
    /// expiry (against `saved_at_ms`, the dump's `ctime`, when it has one), then the key.
    pub fn accepts<'a>(
        &self,
        record: &KeyRecord<'_>,
        saved_at_ms: Option<i64>,
        key: impl FnOnce() -> Option<Cow<'a, [u8]>>,
    ) -> bool {
        if !self.dbs.is_empty() && !self.dbs.contains(&record.db) {
            return false;
        }
        if !self.types.is_empty() && !self.types.contains(&record.value_type.redis_type()) {
            return false;
        }
        if let (Some(before), Some(at)) = (self.expired_before_ms, record.expire_ms) {
            if at < saved_at_ms.unwrap_or(before) {
                return false;
            }
        }
        if self.patterns.is_empty() && self.excluded.is_empty() && self.key_prefix.is_none() {
            return true;
        }
        match key() {
            Some(k) => {
                self.key_prefix.as_ref().is_none_or(|p| k.starts_with(p))
                    && self.patterns.iter().all(|p| p.is_match(&k))
                    && !self.excluded.iter().any(|p| p.is_match(&k))
            }
            None => false,
        }
    }

    /// Whether a key with this estimated memory passes `--min-memory`.
    pub fn keeps(&self, memory_bytes: u64) -> bool {
        memory_bytes >= self.min_memory_bytes
    }
}

/// Translates a Redis `KEYS`/`SCAN MATCH` glob (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes)
/// into an anchored byte regex.
pub fn glob_to_regex(glob: &str) -> Result<Regex, regex::Error> {
    let mut re = String::from("(?s-u)^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '\\' => match chars.next() {
                Some(n) => re.push_str(&regex::escape(&n.to_string())),
                None => re.push_str(r"\\"),
            },
            '[' => {
                let mut class = String::from("[");
                if chars.peek() == Some(&'^') {
                    chars.next();
                    class.push('^');
                }
                let mut closed = false;
                for n in chars.by_ref() {
                    if n == ']' {
                        closed = true;
                        break;
                    }
                    match n {
                        '\\' | '[' | '&' | '~' => {
                            class.push('\\');
                            class.push(n);
                        }
                        _ => class.push(n),
                    }
                }
                if !closed {
                    return Err(regex::Error::Syntax(format!("unclosed [ in glob {glob:?}")));
                }
                class.push(']');
                re.push_str(&class);
            }
            _ => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_glob_semantics() {
        let re = glob_to_regex("user:*:pro?ile").unwrap();
        assert!(re.is_match(b"user:42:profile"));
        assert!(!re.is_match(b"xuser:42:profile"));
        let re = glob_to_regex("h[ae]llo").unwrap();
        assert!(re.is_match(b"hallo") && !re.is_match(b"hillo"));
        let re = glob_to_regex("h[^e]llo").unwrap();
        assert!(re.is_match(b"hallo") && !re.is_match(b"hello"));
        let re = glob_to_regex(r"a\*b").unwrap();
        assert!(re.is_match(b"a*b") && !re.is_match(b"axb"));
        assert!(glob_to_regex("*").unwrap().is_match(b"bin\xff\n"));
    }
}
