//! Keys and memory per pattern and encoding, for the types a server stores in a compact
//! encoding until a threshold is crossed (hash, list, set, zset): two runs compared this way
//! show which patterns crossed from listpack to hashtable and what it cost.
//!
//! A weighted heavy-hitter table (see [`super::groups`]) whose names are
//! `<type> <encoding> <pattern>`: type and encoding names hold no space, so the first two
//! spaces split them.

use super::groups::GroupTable;
use crate::model::key_stats::KeyStats;
use crate::rdb::RedisType;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct PatternEncodings {
    table: GroupTable,
    /// The name being built, reused from key to key.
    #[serde(skip)]
    scratch: Vec<u8>,
}

/// Whether a server keeps keys of type `t` in a compact encoding up to a threshold.
fn has_thresholds(t: RedisType) -> bool {
    matches!(
        t,
        RedisType::Hash | RedisType::List | RedisType::Set | RedisType::ZSet
    )
}

impl PatternEncodings {
    pub fn new(capacity: usize) -> Self {
        PatternEncodings {
            table: GroupTable::new(capacity),
            scratch: Vec::new(),
        }
    }

    /// No key counted yet, with the same capacity.
    pub fn like(&self) -> Self {
        PatternEncodings {
            table: self.table.like(),
            scratch: Vec::new(),
        }
    }

    /// Counts `k` under its encoding and `pattern` (the key's pattern).
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>, pattern: &[u8]) {
        if !has_thresholds(k.redis_type) {
            return;
        }
        self.scratch.clear();
        self.scratch
            .extend_from_slice(k.redis_type.name().as_bytes());
        self.scratch.push(b' ');
        self.scratch.extend_from_slice(k.encoding.name().as_bytes());
        self.scratch.push(b' ');
        self.scratch.extend_from_slice(pattern);
        self.table.add(&self.scratch, k);
    }

    pub fn table(&self) -> &GroupTable {
        &self.table
    }

    /// See [`GroupTable::trim`].
    pub fn trim(&mut self) {
        self.table.trim();
    }
}

/// The type, the encoding and the pattern of a name of [`PatternEncodings::table`].
pub fn split_name(name: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let mut parts = name.splitn(3, |&b| b == b' ');
    let type_name = parts.next().unwrap_or_default();
    let encoding = parts.next().unwrap_or_default();
    (type_name, encoding, parts.next().unwrap_or_default())
}

impl PatternEncodings {
    /// Adds the keys `o` counted (another dump's, or the next chunk's), and empties it
    /// ([`GroupTable::absorb`]).
    pub fn absorb(&mut self, o: &mut PatternEncodings) {
        self.table.absorb(&mut o.table);
    }
}
