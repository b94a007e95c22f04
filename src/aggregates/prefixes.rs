//! Prefix rollup: keys grouped by their first 1, 2, … `depth` segments.
//!
//! A key counts under the prefixes that leave at least one segment of it out:
//! `user:42:profile` under `user` (depth 1) and `user:42` (depth 2), never under itself,
//! so a prefix always names a group and the table does not turn into a copy of the
//! keyspace. Keys without the delimiter belong to no prefix; they are tallied apart.
//!
//! Drilled down under a prefix (`--under cache`), only keys under it are counted and
//! depths are counted below it: `cache:page` is depth 1, `cache:page:1` depth 2; the
//! names keep the prefix, and keys with no delimiter below it are tallied apart.

use super::groups::{GroupStats, GroupTable, RunOfKeys};
use crate::model::key_stats::KeyStats;
use serde::{Deserialize, Serialize};
use std::ops::AddAssign;

/// The deepest prefix level a run may count (`--depth`).
pub const MAX_DEPTH: usize = 32;

/// How keys are split into segments, and how much of that is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrefixConfig {
    /// Non-empty.
    #[serde(
        serialize_with = "super::state_fields::bytes::serialize",
        deserialize_with = "super::state_fields::bytes::deserialize_non_empty"
    )]
    pub delimiter: Vec<u8>,
    /// Deepest prefix level counted (1 = first segment only).
    pub depth: usize,
    /// Most names kept per table before the rest goes to `(other)`.
    pub cap: usize,
    /// What every key counted starts with when drilled down (`--under`): the prefix and
    /// the delimiter, `cache:`; empty for the whole keyspace.
    #[serde(with = "super::state_fields::bytes")]
    pub under: Vec<u8>,
}

impl Default for PrefixConfig {
    fn default() -> Self {
        PrefixConfig {
            delimiter: b":".to_vec(),
            depth: 3,
            cap: 20_000,
            under: Vec::new(),
        }
    }
}

/// How a rollup cuts keys into segments, kept with its tables: [`PrefixConfig`]'s
/// `delimiter` and `under`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segmenting {
    #[serde(
        serialize_with = "super::state_fields::bytes::serialize",
        deserialize_with = "super::state_fields::bytes::deserialize_non_empty"
    )]
    pub delimiter: Vec<u8>,
    #[serde(with = "super::state_fields::bytes")]
    pub under: Vec<u8>,
}

impl Segmenting {
    pub fn of(config: &PrefixConfig) -> Self {
        Segmenting {
            delimiter: config.delimiter.clone(),
            under: config.under.clone(),
        }
    }
}

/// Position of the first `delimiter` in `hay` at or after `from`.
#[inline]
pub fn find_delimiter(hay: &[u8], from: usize, delimiter: &[u8]) -> Option<usize> {
    let rest = hay.get(from..)?;
    match delimiter {
        [b] => rest.iter().position(|c| c == b),
        d => rest.windows(d.len()).position(|w| w == d),
    }
    .map(|i| from.saturating_add(i))
}

#[derive(Serialize, Deserialize)]
pub struct Prefixes {
    #[serde(flatten)]
    segmenting: Segmenting,
    /// `tables[d - 1]` holds the depth-`d` prefixes.
    tables: Vec<GroupTable>,
    no_delimiter: GroupStats,
    /// Where [`Prefixes::add`] found the delimiters of the key added last, reused.
    #[serde(skip)]
    delimiters: Vec<usize>,
}

impl Prefixes {
    pub fn new(config: &PrefixConfig) -> Self {
        Prefixes {
            segmenting: Segmenting::of(config),
            tables: (0..config.depth)
                .map(|_| GroupTable::new(config.cap))
                .collect(),
            no_delimiter: GroupStats::default(),
            delimiters: Vec::new(),
        }
    }

    /// No key counted yet, with the same settings.
    pub fn like(&self) -> Self {
        Prefixes {
            segmenting: self.segmenting.clone(),
            tables: self.tables.iter().map(GroupTable::like).collect(),
            no_delimiter: GroupStats::default(),
            delimiters: Vec::new(),
        }
    }

    /// Counts `k` under its prefixes; a key not under [`PrefixConfig::under`] (which the
    /// run's filter keeps out) is not counted. Looks for the key's delimiters, then counts
    /// it as [`Prefixes::add_at`]; a report takes them from the key's pattern instead.
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let mut delimiters = std::mem::take(&mut self.delimiters);
        delimiters.clear();
        let Segmenting { delimiter, under } = &self.segmenting;
        let mut from = under.len();
        while delimiters.len() < self.tables.len() {
            let Some(end) = find_delimiter(&k.key, from, delimiter) else {
                break;
            };
            delimiters.push(end);
            from = end.saturating_add(delimiter.len());
        }
        self.add_at(k, &delimiters, false);
        self.delimiters = delimiters;
    }

    /// Counts `k` under its prefixes, ending at `delimiters`: where the delimiters of
    /// the key are, in order, as [`super::patterns::Patterns::delimiters`] found them.
    /// `same`: the key's prefixes are those of the key added before it
    /// ([`super::patterns::Patterns::same_prefixes`]), which each table counts without comparing
    /// names.
    #[inline]
    pub fn add_at(&mut self, k: &KeyStats<'_>, delimiters: &[usize], same: bool) {
        let key = &*k.key;
        let under = &self.segmenting.under;
        if !under.is_empty() && !key.starts_with(under) {
            return;
        }
        if delimiters.is_empty() {
            self.no_delimiter.add(k);
        }
        for (table, &end) in self.tables.iter_mut().zip(delimiters) {
            match same {
                true => table.add_same(&key[..end], k),
                false => table.add(&key[..end], k),
            }
        }
    }

    /// Whether the tables of the first `depths` depths each counted a key (see
    /// [`GroupTable::has_last`]).
    pub fn have_last(&self, depths: usize) -> bool {
        self.tables.iter().take(depths).all(GroupTable::has_last)
    }

    /// Counts a run of keys under the prefixes counted last at the first `depths` depths
    /// ([`GroupTable::count_run`]).
    pub fn count_run(&mut self, run: &RunOfKeys, depths: usize) {
        for table in self.tables.iter_mut().take(depths) {
            table.count_run(run);
        }
    }

    /// See [`GroupTable::trim`].
    pub fn trim(&mut self) {
        self.tables.iter_mut().for_each(GroupTable::trim);
    }

    pub fn segmenting(&self) -> &Segmenting {
        &self.segmenting
    }

    pub fn delimiter(&self) -> &[u8] {
        &self.segmenting.delimiter
    }

    /// The prefix and delimiter drilled down under, empty for the whole keyspace.
    pub fn under(&self) -> &[u8] {
        &self.segmenting.under
    }

    /// One table per depth, depth 1 first.
    pub fn tables(&self) -> &[GroupTable] {
        &self.tables
    }

    /// Keys holding no delimiter at all (below [`Prefixes::under`]).
    pub fn no_delimiter(&self) -> &GroupStats {
        &self.no_delimiter
    }
}

impl AddAssign for Prefixes {
    fn add_assign(&mut self, mut other: Prefixes) {
        self.absorb(&mut other);
    }
}

impl Prefixes {
    /// Adds what `other` (the next chunk's) counted, and empties it
    /// ([`GroupTable::absorb`]).
    pub fn absorb(&mut self, other: &mut Prefixes) {
        self.no_delimiter += &std::mem::take(&mut other.no_delimiter);
        for (a, b) in self.tables.iter_mut().zip(&mut other.tables) {
            a.absorb(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiters_of_any_length() {
        assert_eq!(find_delimiter(b"a:b:c", 0, b":"), Some(1));
        assert_eq!(find_delimiter(b"a:b:c", 2, b":"), Some(3));
        assert_eq!(find_delimiter(b"a:b:c", 4, b":"), None);
        assert_eq!(find_delimiter(b"a::b", 0, b"::"), Some(1));
        assert_eq!(find_delimiter(b"a::b", 3, b"::"), None);
        assert_eq!(find_delimiter(b"ab", 9, b":"), None);
    }
}
