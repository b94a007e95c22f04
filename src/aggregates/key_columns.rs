//! The per-key columns, defined once: their names, in order, what each holds, its value's
//! type and how to read it from a key's [`KeyStats`]. Every writer of per-key rows (CSV,
//! JSON Lines, Parquet in `report::keys`), the top-key records' CSV header and the
//! README's column table follow this list rather than naming the columns again.
//!
//! It lives here, with [`KeyStats`], rather than with the writers in `report`: the
//! top-key records (`top`, an aggregate) carry a prefix of these columns, and aggregates
//! may not import outputs. What each writer does with a value's type (a CSV cell, a JSON
//! value, an Arrow builder) is the writer's own, keyed by the types below.
//!
//! The list is a macro so that each writer expands it into straight-line code per row,
//! one call per column with the value's concrete type (no per-column dispatch at run
//! time: `keys` renders tens of millions of rows).

use crate::model::encoding::Encoding;
use crate::model::key_stats::KeyStats;
use crate::rdb::RedisType;
use std::borrow::Cow;

/// Calls the macro `$each` with the columns, in order, one per line:
/// `field "name": Type = "what it holds", |k| value;`, `k` a `&KeyStats`.
/// `field` is an identifier a writer may name things after; `Type` is the value's type
/// (`'static` standing for the row's lifetime).
macro_rules! key_columns {
    ($each:ident) => {
        $each! {
            db "db": u64 = "the database number", |k| k.db;
            key "key": $crate::aggregates::key_columns::Key<'static> =
                "the key, escaped (see Escaping)", |k| $crate::aggregates::key_columns::Key(&k.key);
            redis_type "type": $crate::aggregates::key_columns::TypeName<'static> =
                "what `TYPE` returns (a module's own type name for module values)",
                |k| $crate::aggregates::key_columns::TypeName(k);
            encoding "encoding": $crate::aggregates::key_columns::EncodingName =
                "what `OBJECT ENCODING` returns after that server version loads the dump with \
                default thresholds (from the `redis-ver` aux field; `--redis-version` overrides)",
                |k| $crate::aggregates::key_columns::EncodingName(k.encoding);
            elements "elements": Option<u64> =
                "a collection's elements: `LLEN`/`SCARD`/`ZCARD`/`HLEN`/`XLEN`; 0 for a string, which holds \
                no elements (its length is in `largest_element_bytes`; `keys --compat rdbtools` \
                keeps redis-rdb-tools' `num_elements`, `STRLEN` for strings); empty for modules", |k| k.elements;
            serialized_bytes "serialized_bytes": u64 =
                "the key's bytes in the file, type byte to end of value", |k| k.serialized_bytes;
            memory_bytes "memory_bytes": u64 =
                "what `MEMORY USAGE key SAMPLES 0` reports on the server that wrote the dump \
                (see \"Memory model\" below)", |k| k.memory_bytes;
            largest_element_bytes "largest_element_bytes": u64 =
                "bytes of the largest element (member, field or value; integers as decimal text)",
                |k| k.largest_element_bytes;
            expiry_ms "expiry_ms": Option<i64> =
                "the expiry, absolute Unix ms (empty: none)", |k| k.expiry_ms;
            ttl_s "ttl_s": Option<i64> =
                "seconds from the dump's `ctime` to the expiry (negative: already expired when saved)",
                |k| k.ttl_s;
            idle_s "idle_s": Option<u64> =
                "seconds since the last access, when the dump records it (LRU policies)", |k| k.idle_s;
            lfu_freq "lfu_freq": Option<u8> =
                "the access frequency counter, when the dump records it (LFU policies)", |k| k.lfu_freq;
            slot "slot": u16 = "the CRC16 cluster slot, honouring `{tags}`", |k| k.slot();
        }
    };
}
pub(crate) use key_columns;

/// A column's name and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub doc: &'static str,
}

macro_rules! column_list {
    ($($field:ident $name:literal: $ty:ty = $doc:literal, |$k:ident| $get:expr;)*) => {
        /// The columns, in order.
        pub const COLUMNS: &[Column] = &[$(Column { name: $name, doc: $doc }),*];
    };
}
key_columns!(column_list);

/// The columns a top-key record carries (summary.json's `top`, `top.csv`): those up to
/// `expiry_ms`; the rest (TTL, idle time, frequency, slot) are not kept per ranked key.
pub fn top_key_columns() -> impl Iterator<Item = &'static str> {
    let end = COLUMNS
        .iter()
        .position(|c| c.name == "expiry_ms")
        .map_or(COLUMNS.len(), |i| i.saturating_add(1));
    COLUMNS[..end].iter().map(|c| c.name)
}

/// The key's exact bytes; each writer escapes them its own way.
#[derive(Clone, Copy)]
pub struct Key<'a>(pub &'a [u8]);

/// The key's type name: Redis's own (text needing no quoting) or a module's.
#[derive(Clone, Copy)]
pub struct TypeName<'a>(pub &'a KeyStats<'a>);

impl TypeName<'_> {
    /// Redis's own type (its name needs no quoting), `None` for a module value.
    #[inline]
    pub fn builtin(self) -> Option<RedisType> {
        match self.0.module {
            None => Some(self.0.redis_type),
            Some(_) => None,
        }
    }

    pub fn name(self) -> Cow<'static, str> {
        self.0.type_name()
    }
}

/// What `OBJECT ENCODING` answers: a name of plain ASCII (letters and `-`), which no
/// writer quotes or escapes.
#[derive(Clone, Copy)]
pub struct EncodingName(pub Encoding);

impl EncodingName {
    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_key_columns_stop_at_the_expiry() {
        let top: Vec<_> = top_key_columns().collect();
        assert_eq!(
            top,
            [
                "db",
                "key",
                "type",
                "encoding",
                "elements",
                "serialized_bytes",
                "memory_bytes",
                "largest_element_bytes",
                "expiry_ms"
            ]
        );
    }

    /// The README's table under "Columns" is this list: same names, order and text.
    #[test]
    fn readme_table_is_the_schema() {
        let readme = include_str!("../../README.md");
        let table: String = std::iter::once("| column | |\n|---|---|\n".to_string())
            .chain(
                COLUMNS
                    .iter()
                    .map(|c| format!("| `{}` | {} |\n", c.name, c.doc)),
            )
            .collect();
        assert!(
            readme.contains(&table),
            "README.md's column table should read:\n{table}"
        );
    }
}
