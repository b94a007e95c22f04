//! The per-key rows as Arrow columns: one schema for `keys.parquet` ([`super::parquet`])
//! and the Arrow IPC stream of `keys --format arrow` ([`super::arrow`]), the key columns
//! plus `file`, for DuckDB, Spark, ClickHouse, Trino, pyarrow or Polars.
//!
//! The rows of a chunk are gathered column by column ([`KeyColumns`]) on the pool worker
//! that analysed the keys; the writers encode them on the ordered side.
//!
//! The columns are `file` and then those of `aggregates::key_columns`, each value type
//! mapped to its Arrow builder and fields by [`ArrowCell`] (the key gives two: its
//! escaped text and `key_bytes`). Every number is a signed integer (Int64, or Int32 for
//! `lfu_freq` and `slot`): Spark, Trino and Hive have no unsigned types, and read
//! Parquet's `UINT_64` as `decimal(20,0)`. The counts a dump holds as unsigned 64-bit
//! values never reach 2^63 in a dump a server wrote; one above (an LRU idle time in a
//! damaged or hand-made dump) is written as `i64::MAX`.

use crate::aggregates::key_columns::{key_columns, EncodingName, Key, TypeName};
use crate::model::key_stats::KeyStats;
use crate::text::escape::{escape_key, neutralize_formula};
use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The key-value metadata entry naming the schema's version, in the Arrow schema (so in
/// an Arrow stream's schema message) and in a Parquet file's footer. Version 1, files
/// without the entry, wrote the unsigned columns as `UINT_64`, `UINT_16` and `UINT_8`;
/// version 2 writes signed integers.
pub const SCHEMA_VERSION_KEY: &str = "rdbscope.keys_schema";
pub const SCHEMA_VERSION: &str = "2";

/// The `file` column's one dictionary value, the dump's name: built once per dump and
/// shared by its chunks, so an Arrow stream sends the dictionary once, not per batch.
#[derive(Clone)]
pub struct FileName(ArrayRef);

impl FileName {
    pub fn new(name: &str) -> Self {
        FileName(Arc::new(StringArray::from(vec![name])))
    }
}

/// A value's Arrow column(s): the builder it is gathered in and the fields it becomes.
trait ArrowCell {
    type Builder;
    /// An empty builder for about `rows` values.
    fn builder(rows: usize) -> Self::Builder;
    fn append(self, to: &mut Self::Builder);
    /// The value's fields, the column named `name` first.
    fn fields(name: &str, out: &mut Vec<Field>);
    fn finish(builder: Self::Builder, out: &mut Vec<ArrayRef>);
}

/// A number as a signed Arrow integer, converted by `|v| native`: the column, and its
/// nullable form for the optional value.
macro_rules! number_cells {
    ($($t:ty => $builder:ty, $data_type:expr, |$v:ident| $native:expr;)*) => {$(
        impl ArrowCell for $t {
            type Builder = $builder;
            fn builder(rows: usize) -> $builder {
                <$builder>::with_capacity(rows)
            }
            #[inline]
            fn append(self, to: &mut $builder) {
                let $v = self;
                to.append_value($native);
            }
            fn fields(name: &str, out: &mut Vec<Field>) {
                out.push(Field::new(name, $data_type, false));
            }
            fn finish(mut builder: $builder, out: &mut Vec<ArrayRef>) {
                out.push(Arc::new(builder.finish()));
            }
        }

        impl ArrowCell for Option<$t> {
            type Builder = $builder;
            fn builder(rows: usize) -> $builder {
                <$builder>::with_capacity(rows)
            }
            #[inline]
            fn append(self, to: &mut $builder) {
                to.append_option(self.map(|$v| $native));
            }
            fn fields(name: &str, out: &mut Vec<Field>) {
                out.push(Field::new(name, $data_type, true));
            }
            fn finish(mut builder: $builder, out: &mut Vec<ArrayRef>) {
                out.push(Arc::new(builder.finish()));
            }
        }
    )*};
}
number_cells! {
    u64 => Int64Builder, DataType::Int64, |v| i64::try_from(v).unwrap_or(i64::MAX);
    i64 => Int64Builder, DataType::Int64, |v| v;
    u16 => Int32Builder, DataType::Int32, |v| i32::from(v);
    u8 => Int32Builder, DataType::Int32, |v| i32::from(v);
}

/// The key escaped as in keys.csv (so the two join on `key`), and its exact bytes
/// beside it as `key_bytes`.
impl ArrowCell for Key<'_> {
    type Builder = (StringBuilder, BinaryBuilder);
    fn builder(rows: usize) -> Self::Builder {
        (
            StringBuilder::with_capacity(rows, rows * 24),
            BinaryBuilder::with_capacity(rows, rows * 24),
        )
    }
    #[inline]
    fn append(self, (text, bytes): &mut Self::Builder) {
        text.append_value(neutralize_formula(escape_key(self.0)));
        bytes.append_value(self.0);
    }
    fn fields(name: &str, out: &mut Vec<Field>) {
        out.push(Field::new(name, DataType::Utf8, false));
        out.push(Field::new(format!("{name}_bytes"), DataType::Binary, false));
    }
    fn finish((mut text, mut bytes): Self::Builder, out: &mut Vec<ArrayRef>) {
        out.push(Arc::new(text.finish()));
        out.push(Arc::new(bytes.finish()));
    }
}

macro_rules! text_cells {
    ($($t:ty, $bytes_per_row:literal, |$v:ident| $text:expr;)*) => {$(
        impl ArrowCell for $t {
            type Builder = StringBuilder;
            fn builder(rows: usize) -> StringBuilder {
                StringBuilder::with_capacity(rows, rows * $bytes_per_row)
            }
            #[inline]
            fn append(self, to: &mut StringBuilder) {
                let $v = self;
                to.append_value($text);
            }
            fn fields(name: &str, out: &mut Vec<Field>) {
                out.push(Field::new(name, DataType::Utf8, false));
            }
            fn finish(mut builder: StringBuilder, out: &mut Vec<ArrayRef>) {
                out.push(Arc::new(builder.finish()));
            }
        }
    )*};
}
text_cells! {
    TypeName<'_>, 6, |t| t.name();
    EncodingName, 8, |e| e.name();
}

macro_rules! key_columns_struct {
    ($($field:ident $name:literal: $ty:ty = $doc:literal, |$k:ident| $get:expr;)*) => {
        /// The columns, in order: the key columns of `keys.csv` with the dump's name first
        /// and the key's exact bytes beside its escaped text.
        pub fn schema() -> SchemaRef {
            static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
            SCHEMA
                .get_or_init(|| {
                    let file = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
                    let mut fields = vec![Field::new("file", file, false)];
                    $(<$ty as ArrowCell>::fields($name, &mut fields);)*
                    let version = (SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string());
                    Arc::new(Schema::new_with_metadata(fields, HashMap::from([version])))
                })
                .clone()
        }

        /// The rows of one chunk of keys from one dump, column by column.
        pub struct KeyColumns {
            file: FileName,
            rows: usize,
            $($field: <$ty as ArrowCell>::Builder,)*
        }

        impl KeyColumns {
            /// Empty columns for about `rows` keys of the dump named `file`.
            pub fn new(file: FileName, rows: usize) -> Self {
                KeyColumns {
                    file,
                    rows: 0,
                    $($field: <$ty as ArrowCell>::builder(rows),)*
                }
            }

            /// Appends the row of `row`.
            pub fn push(&mut self, row: &KeyStats<'_>) {
                self.rows += 1;
                $(ArrowCell::append({ let $k = row; $get }, &mut self.$field);)*
            }

            /// The rows as a batch of [`schema`]'s columns.
            pub fn into_batch(self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
                // One dictionary entry, the dump's name, referred to by every row.
                let file = DictionaryArray::<Int32Type>::try_new(
                    Int32Array::from(vec![0; self.rows]),
                    self.file.0,
                )?;
                let mut columns: Vec<ArrayRef> = vec![Arc::new(file)];
                $(<$ty as ArrowCell>::finish(self.$field, &mut columns);)*
                RecordBatch::try_new(schema, columns)
            }
        }
    };
}
key_columns!(key_columns_struct);

#[cfg(test)]
mod tests {
    use super::*;

    /// A field's type as the README's table spells it: Parquet's physical and logical
    /// types, then Arrow's.
    fn types(field: &Field) -> (&'static str, &'static str) {
        match field.data_type() {
            DataType::Dictionary(..) => ("BYTE_ARRAY UTF8 (dictionary)", "dictionary<int32, utf8>"),
            DataType::Utf8 => ("BYTE_ARRAY UTF8", "utf8"),
            DataType::Binary => ("BYTE_ARRAY", "binary"),
            DataType::Int64 => ("INT64", "int64"),
            DataType::Int32 => ("INT32", "int32"),
            other => panic!("no README spelling for {other}"),
        }
    }

    /// The README's table of the columns' types, made from [`schema`]: consecutive
    /// columns of the same types on one row.
    fn readme_table() -> String {
        let mut rows: Vec<(Vec<String>, String)> = Vec::new();
        for field in schema().fields() {
            let (parquet, arrow) = types(field);
            let null = if field.is_nullable() {
                ", nullable"
            } else {
                ""
            };
            let kind = format!("{parquet}{null} | {arrow}{null}");
            match rows.last_mut() {
                Some((names, last)) if *last == kind => names.push(field.name().clone()),
                _ => rows.push((vec![field.name().clone()], kind)),
            }
        }
        let mut table = String::from("| column | Parquet | Arrow |\n|---|---|---|\n");
        for (names, kind) in rows {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            table += &format!("| {} | {kind} |\n", names.join(", "));
        }
        table
    }

    /// The README documents the schema once, as [`schema`] makes it.
    #[test]
    fn readme_types_table_is_the_schema() {
        let readme = include_str!("../../../README.md");
        let table = readme_table();
        assert!(
            readme.contains(&table),
            "README.md's Parquet and Arrow table should read:\n{table}"
        );
    }

    /// Unsigned counts become signed integers; the one value above i64::MAX a dump may
    /// record is clamped, the others kept.
    #[test]
    fn numbers_are_signed_and_clamped() {
        let mut columns = KeyColumns::new(FileName::new("dump.rdb"), 2);
        let mut key = KeyStats::new();
        key.idle_s = Some(u64::MAX);
        key.lfu_freq = Some(255);
        key.key = b"key:13358".as_slice().into(); // the last slot, 16383
        key.memory_bytes = 1 << 40;
        columns.push(&key);
        let batch = columns.into_batch(schema()).unwrap();
        let int64 = |name: &str| {
            let column = batch.column_by_name(name).unwrap();
            column
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
                .unwrap()
                .value(0)
        };
        let int32 = |name: &str| {
            let column = batch.column_by_name(name).unwrap();
            column
                .as_any()
                .downcast_ref::<Int32Array>()
                .unwrap()
                .value(0)
        };
        assert_eq!(int64("idle_s"), i64::MAX);
        assert_eq!(int64("memory_bytes"), 1 << 40);
        assert_eq!(int32("lfu_freq"), 255);
        assert_eq!(int32("slot"), 16383);
        assert_eq!(
            schema().metadata()[SCHEMA_VERSION_KEY],
            SCHEMA_VERSION,
            "the version travels with the schema"
        );
    }
}
