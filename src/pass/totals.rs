//! Totals over all keys, per db, per type and per type and encoding: what every fold of
//! a dump keeps for the per-file breakdown (see [`super::fold::Aggregator::totals`]).

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

use crate::model::encoding::Encoding;
use crate::model::key_stats::KeyStats;
use crate::rdb::module::{type_name, ModuleId};
use crate::rdb::RedisType;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::ops::AddAssign;

/// Adds `n` to a count of keys or a sum of bytes the file holds (key names, serialized
/// values): each key takes bytes of the file, so such a sum stays below the size of the
/// files read, far from `u64::MAX`, and adds without the saturation check a figure of
/// the memory model gets (docs/untrusted-numbers.md). Hot: a few of these every key.
#[inline(always)]
pub fn add_bounded(sum: &mut u64, n: u64) {
    *sum = sum.wrapping_add(n);
}

/// What a set of keys adds up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub keys: u64,
    /// Sum of element counts (module values count none).
    pub elements: u64,
    pub serialized_bytes: u64,
    pub memory_bytes: u64,
    pub keys_with_ttl: u64,
}

impl Counts {
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        add_bounded(&mut self.keys, 1);
        self.elements = self.elements.saturating_add(k.elements.unwrap_or(0));
        add_bounded(&mut self.serialized_bytes, k.serialized_bytes);
        self.memory_bytes = self.memory_bytes.saturating_add(k.memory_bytes);
        add_bounded(&mut self.keys_with_ttl, u64::from(k.expiry_ms.is_some()));
    }

    pub fn keys_without_ttl(&self) -> u64 {
        self.keys.saturating_sub(self.keys_with_ttl)
    }
}

impl AddAssign<&Counts> for Counts {
    fn add_assign(&mut self, o: &Counts) {
        self.keys = self.keys.saturating_add(o.keys);
        self.elements = self.elements.saturating_add(o.elements);
        self.serialized_bytes = self.serialized_bytes.saturating_add(o.serialized_bytes);
        self.memory_bytes = self.memory_bytes.saturating_add(o.memory_bytes);
        self.keys_with_ttl = self.keys_with_ttl.saturating_add(o.keys_with_ttl);
    }
}

/// A type as `TYPE` names it: module values are told apart by their module type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TypeKey {
    #[serde(rename = "type")]
    pub redis_type: RedisType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<ModuleId>,
}

impl TypeKey {
    pub fn of(k: &KeyStats<'_>) -> Self {
        TypeKey {
            redis_type: k.redis_type,
            module: k.module,
        }
    }

    pub fn name(&self) -> Cow<'static, str> {
        type_name(self.redis_type, self.module)
    }

    fn order(&self) -> (RedisType, u64) {
        (self.redis_type, self.module.map_or(0, |m| m.0))
    }
}

/// Rows of a small table found by linear search: a dump has a handful of dbs, types and
/// encodings, so this beats hashing on every key.
#[derive(Clone, Debug)]
struct Rows<K>(Vec<(K, Counts)>);

impl<K: PartialEq + Copy> Rows<K> {
    /// The index of `key`'s row, added if missing.
    fn index(&mut self, key: K) -> usize {
        match self.0.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.0.push((key, Counts::default()));
                self.0.len().saturating_sub(1)
            }
        }
    }

    fn get(&mut self, key: K) -> &mut Counts {
        let i = self.index(key);
        &mut self.0[i].1
    }

    fn merge(&mut self, other: &Rows<K>) {
        for (k, c) in &other.0 {
            *self.get(*k) += c;
        }
    }
}

impl<K> Default for Rows<K> {
    fn default() -> Self {
        Rows(Vec::new())
    }
}

/// A key's cell: its db, type and encoding. Every table of [`Totals`] sums cells.
type Cell = (u64, TypeKey, Encoding);

/// Types by encodings: [`Totals::kinds`].
const KINDS: usize = RedisType::ALL.len() * Encoding::ALL.len();

#[derive(Clone, Debug)]
pub struct Totals {
    /// What folding added, one row per cell. A key's row is found at the last row used
    /// when the key shares its cell with the key before (most do), where keeping the
    /// tables below key by key cost a search in each.
    cells: Rows<Cell>,
    /// Index in `cells` of the last row used.
    last: usize,
    /// Where in `cells` the row of each type and encoding of a key in db `kinds_db`
    /// without a module is, plus one (0: not looked up yet): a key whose cell is not the
    /// last one's is found without a search. Rows are only ever appended to `cells`, so
    /// the positions stay right.
    kinds: [u32; KINDS],
    kinds_db: u64,
    /// Every key that merges brought in from totals read back (as `by_db` below): what
    /// folding added is summed from the cells when asked for ([`Totals::all`]).
    all: Counts,
    /// What merges brought in from totals read back from summary.json, which keeps the
    /// tables, not the cells.
    by_db: Rows<u64>,
    by_type: Rows<TypeKey>,
    by_encoding: Rows<(TypeKey, Encoding)>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            cells: Rows::default(),
            last: 0,
            kinds: [0; KINDS],
            kinds_db: 0,
            all: Counts::default(),
            by_db: Rows::default(),
            by_type: Rows::default(),
            by_encoding: Rows::default(),
        }
    }
}

impl Totals {
    #[inline]
    pub fn add(&mut self, k: &KeyStats<'_>) {
        let cell = (k.db, TypeKey::of(k), k.encoding);
        match self.cells.0.get_mut(self.last) {
            Some((c, counts)) if *c == cell => counts.add(k),
            _ => self.add_elsewhere(cell, k),
        }
    }

    #[inline(never)]
    fn add_elsewhere(&mut self, cell: Cell, k: &KeyStats<'_>) {
        self.last = match k.module {
            None => {
                if k.db != self.kinds_db {
                    self.kinds = [0; KINDS];
                    self.kinds_db = k.db;
                }
                let kind = (k.redis_type as usize)
                    .wrapping_mul(Encoding::ALL.len())
                    .wrapping_add(k.encoding as usize)
                    % KINDS;
                match self.kinds[kind].checked_sub(1) {
                    Some(at) => at as usize,
                    None => {
                        let at = self.cells.index(cell);
                        self.kinds[kind] = u32::try_from(at).map_or(0, |at| at.saturating_add(1));
                        at
                    }
                }
            }
            Some(_) => self.cells.index(cell),
        };
        self.cells.0[self.last].1.add(k);
    }

    /// Every key.
    pub fn all(&self) -> Counts {
        let mut all = self.all;
        for (_, c) in &self.cells.0 {
            all += c;
        }
        all
    }

    /// By db number.
    pub fn by_db(&self) -> Vec<(u64, Counts)> {
        let mut rows = self.by_db.clone();
        for ((db, _, _), c) in &self.cells.0 {
            *rows.get(*db) += c;
        }
        rows.0.sort_unstable_by_key(|(db, _)| *db);
        rows.0
    }

    /// In the order of [`RedisType::ALL`], module types by id.
    pub fn by_type(&self) -> Vec<(TypeKey, Counts)> {
        let mut rows = self.by_type.clone();
        for ((_, t, _), c) in &self.cells.0 {
            *rows.get(*t) += c;
        }
        rows.0.sort_unstable_by_key(|(t, _)| t.order());
        rows.0
    }

    /// By type, then encoding name.
    pub fn by_encoding(&self) -> Vec<(TypeKey, Encoding, Counts)> {
        let mut rows = self.by_encoding.clone();
        for ((_, t, e), c) in &self.cells.0 {
            *rows.get((*t, *e)) += c;
        }
        let mut rows: Vec<_> = rows.0.into_iter().map(|((t, e), c)| (t, e, c)).collect();
        rows.sort_unstable_by_key(|(t, e, _)| (t.order(), e.name()));
        rows
    }
}

/// How [`Totals`] are written in summary.json's mergeable state: every row, sorted as the
/// reports list them (the order rows were met in depends on the threads).
#[derive(Serialize, Deserialize)]
struct TotalsState {
    all: Counts,
    by_db: Vec<(u64, Counts)>,
    by_type: Vec<(TypeKey, Counts)>,
    by_encoding: Vec<(TypeKey, Encoding, Counts)>,
}

impl Serialize for Totals {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TotalsState {
            all: self.all(),
            by_db: self.by_db(),
            by_type: self.by_type(),
            by_encoding: self.by_encoding(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Totals {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let state = TotalsState::deserialize(d)?;
        Ok(Totals {
            all: state.all,
            by_db: Rows(state.by_db),
            by_type: Rows(state.by_type),
            by_encoding: Rows(
                state
                    .by_encoding
                    .into_iter()
                    .map(|(t, e, c)| ((t, e), c))
                    .collect(),
            ),
            ..Totals::default()
        })
    }
}

impl AddAssign<&Totals> for Totals {
    fn add_assign(&mut self, o: &Totals) {
        self.cells.merge(&o.cells);
        self.all += &o.all;
        self.by_db.merge(&o.by_db);
        self.by_type.merge(&o.by_type);
        self.by_encoding.merge(&o.by_encoding);
    }
}

impl AddAssign for Totals {
    fn add_assign(&mut self, o: Totals) {
        *self += &o;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::module::ModuleId;

    /// Keys of several dbs, types, encodings and a module type, interleaved so that most
    /// keys change cell, and after a merge: the tables add up what a search per key gives.
    #[test]
    fn cells_found_by_kind_add_up_as_searched() {
        let kinds = [
            (RedisType::String, Encoding::Embstr, None),
            (RedisType::String, Encoding::Raw, None),
            (RedisType::Hash, Encoding::Listpack, None),
            (RedisType::Set, Encoding::Intset, None),
            (RedisType::Module, Encoding::Raw, Some(ModuleId(7))),
            (RedisType::Module, Encoding::Raw, Some(ModuleId(9))),
        ];
        let mut totals = Totals::default();
        let mut other = Totals::default();
        let mut expected: Vec<(Cell, Counts)> = Vec::new();
        for i in 0..600u64 {
            let (redis_type, encoding, module) = kinds[(i * 7 % 11 % 6) as usize];
            let mut k = KeyStats::new();
            k.db = [0, 3, 0, 0, 12][(i % 5) as usize];
            (k.redis_type, k.encoding, k.module) = (redis_type, encoding, module);
            k.memory_bytes = i;
            k.serialized_bytes = 2 * i;
            k.elements = Some(i % 4);
            match i % 3 {
                0 => other.add(&k),
                _ => totals.add(&k),
            }
            let cell = (k.db, TypeKey::of(&k), k.encoding);
            match expected.iter_mut().find(|(c, _)| *c == cell) {
                Some((_, counts)) => counts.add(&k),
                None => {
                    let mut counts = Counts::default();
                    counts.add(&k);
                    expected.push((cell, counts));
                }
            }
        }
        totals += other;
        let mut by_encoding: Vec<_> =
            expected
                .iter()
                .fold(Vec::new(), |mut rows, ((_, t, e), c)| {
                    match rows.iter_mut().find(|(rt, re, _)| rt == t && re == e) {
                        Some((_, _, counts)) => *counts += c,
                        None => rows.push((*t, *e, *c)),
                    }
                    rows
                });
        by_encoding.sort_unstable_by_key(|(t, e, _)| (t.order(), e.name()));
        assert_eq!(totals.by_encoding(), by_encoding);
        let dbs: Vec<u64> = totals.by_db().iter().map(|(db, _)| *db).collect();
        assert_eq!(dbs, [0, 3, 12]);
        let keys: u64 = totals.by_db().iter().map(|(_, c)| c.keys).sum();
        assert_eq!((keys, totals.all().keys), (600, 600));
        let memory_in_db_3: u64 = (0..600).filter(|i| i % 5 == 1).sum();
        assert_eq!(totals.by_db()[1].1.memory_bytes, memory_in_db_3);
    }
}
