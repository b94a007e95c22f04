//! Per-key rows as Parquet (`keys --format parquet -o FILE`, `keys.parquet` in
//! `report --out-dir`): the key columns plus `file`, for DuckDB, Spark, Trino or pandas.
//!
//! An ordered sink: [`ParquetKeys::begin`] writes nothing yet, [`ParquetKeys::batch`] takes
//! the rows of one chunk of keys in file order, [`ParquetKeys::finish`] writes the footer.
//! The rows of a chunk are gathered column by column ([`KeyColumns`]) on the pool worker
//! that analysed the keys; the writer encodes them on the ordered side. Row groups are
//! closed at 1Mi rows or 128 MiB encoded, whichever comes first, so memory stays bounded
//! whatever the dump's size: only the row group being filled is held.
//!
//! The columns are `file` and then those of `analyze::key_columns`, each value type
//! mapped to its Arrow builder and fields by [`ArrowCell`] (the key gives two: its
//! escaped text and `key_bytes`).

use crate::analyze::key_columns::{key_columns, Key, Label, TypeName};
use crate::model::key_stats::KeyStats;
use crate::text::escape::{escape_key, neutralize_formula};
use arrow_array::builder::{
    BinaryBuilder, Int64Builder, StringBuilder, UInt16Builder, UInt64Builder, UInt8Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

/// Rows per row group at most: a scan's unit of work in the engines.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Encoded bytes per row group at most (dumps of long keys reach it before the rows).
const ROW_GROUP_BYTES: usize = 128 << 20;
/// Columns of few distinct values, dictionary-encoded.
const DICTIONARY_COLUMNS: [&str; 5] = ["file", "db", "type", "encoding", "lfu_freq"];

/// The key's columns: its text as in CSV, and its bytes.
const KEY_COLUMNS: [&str; 2] = ["key", "key_bytes"];

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

/// A number (`nullable`: an optional one) in its Arrow builder, appended by `$append`.
macro_rules! number_cell {
    ($t:ty, $builder:ty, $data_type:expr, $nullable:literal, $append:ident) => {
        impl ArrowCell for $t {
            type Builder = $builder;
            fn builder(rows: usize) -> $builder {
                <$builder>::with_capacity(rows)
            }
            #[inline]
            fn append(self, to: &mut $builder) {
                to.$append(self);
            }
            fn fields(name: &str, out: &mut Vec<Field>) {
                out.push(Field::new(name, $data_type, $nullable));
            }
            fn finish(mut builder: $builder, out: &mut Vec<ArrayRef>) {
                out.push(Arc::new(builder.finish()));
            }
        }
    };
}

macro_rules! primitive_cells {
    ($($t:ty => $builder:ty, $data_type:expr;)*) => {$(
        number_cell!($t, $builder, $data_type, false, append_value);
        number_cell!(Option<$t>, $builder, $data_type, true, append_option);
    )*};
}
primitive_cells! {
    u64 => UInt64Builder, DataType::UInt64;
    i64 => Int64Builder, DataType::Int64;
    u16 => UInt16Builder, DataType::UInt16;
    u8 => UInt8Builder, DataType::UInt8;
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
    Label, 8, |l| l.0;
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
                    Arc::new(Schema::new(fields))
                })
                .clone()
        }

        /// The rows of one chunk of keys from one dump, column by column.
        pub struct KeyColumns {
            file: Arc<str>,
            rows: usize,
            $($field: <$ty as ArrowCell>::Builder,)*
        }

        impl KeyColumns {
            /// Empty columns for about `rows` keys of the dump named `file`.
            pub fn new(file: Arc<str>, rows: usize) -> Self {
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

            fn into_batch(self, schema: SchemaRef) -> Result<RecordBatch, ParquetError> {
                // One dictionary entry, the dump's name, referred to by every row.
                let file = DictionaryArray::<Int32Type>::try_new(
                    Int32Array::from(vec![0; self.rows]),
                    Arc::new(StringArray::from(vec![&*self.file])),
                )?;
                let mut columns: Vec<ArrayRef> = vec![Arc::new(file)];
                $(<$ty as ArrowCell>::finish(self.$field, &mut columns);)*
                Ok(RecordBatch::try_new(schema, columns)?)
            }
        }
    };
}
key_columns!(key_columns_struct);

/// A Parquet file of per-key rows being written to `W`.
pub struct ParquetKeys<W: Write + Send> {
    writer: ArrowWriter<W>,
    schema: SchemaRef,
}

fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other),
        },
        other => io::Error::other(other),
    }
}

impl<W: Write + Send> ParquetKeys<W> {
    /// Starts the file: zstd pages, dictionaries for the repetitive columns only.
    pub fn begin(out: W) -> io::Result<Self> {
        let properties = WriterProperties::builder()
            .set_created_by(format!("rdbscope {}", env!("CARGO_PKG_VERSION")))
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
            // Dictionaries only where few values repeat: the rest (unique keys, sizes,
            // times) would cost a hash per value for little, zstd does better there.
            .set_dictionary_enabled(false);
        let properties = DICTIONARY_COLUMNS.iter().fold(properties, |p, column| {
            p.set_column_dictionary_enabled((*column).into(), true)
        });
        // Keys arrive in hash-table order: a page's or row group's smallest and largest key
        // span the keyspace and prune nothing, and comparing every key to them was a
        // tenth of the Parquet writer's time.
        let properties = KEY_COLUMNS
            .iter()
            .fold(properties, |p, column| {
                p.set_column_statistics_enabled((*column).into(), EnabledStatistics::None)
            })
            .build();
        let schema = schema();
        let writer =
            ArrowWriter::try_new(out, schema.clone(), Some(properties)).map_err(io_error)?;
        Ok(ParquetKeys { writer, schema })
    }

    /// Writes the rows of one chunk, after those of the chunks before it.
    pub fn batch(&mut self, rows: KeyColumns) -> io::Result<()> {
        let batch = rows.into_batch(self.schema.clone()).map_err(io_error)?;
        self.writer.write(&batch).map_err(io_error)
    }

    /// Closes the last row group and writes the footer; the output is handed back.
    pub fn finish(self) -> io::Result<W> {
        self.writer.into_inner().map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the README's Parquet table spells a field's type.
    fn readme_type(field: &Field) -> String {
        let physical = match field.data_type() {
            DataType::Dictionary(..) => "BYTE_ARRAY UTF8 (dictionary)",
            DataType::Utf8 => "BYTE_ARRAY UTF8",
            DataType::Binary => "BYTE_ARRAY",
            DataType::UInt64 => "INT64 UINT_64",
            DataType::Int64 => "INT64",
            DataType::UInt16 => "INT32 UINT_16",
            DataType::UInt8 => "INT32 UINT_8",
            other => panic!("no README spelling for {other}"),
        };
        match field.is_nullable() {
            true => format!("{physical}, nullable"),
            false => physical.to_string(),
        }
    }

    /// The columns the writer configures by name (dictionaries, no key statistics) are
    /// columns of the schema, and the file written has what was asked for on each.
    #[test]
    fn per_column_settings_reach_the_file() {
        use parquet::basic::Encoding;
        use parquet::file::reader::{FileReader, SerializedFileReader};

        let schema = schema();
        for name in DICTIONARY_COLUMNS.iter().chain(&KEY_COLUMNS) {
            assert!(
                schema.field_with_name(name).is_ok(),
                "{name} is not a column"
            );
        }
        let mut columns = KeyColumns::new(Arc::from("dump.rdb"), 2);
        let mut key = KeyStats::new();
        for name in [&b"user:1"[..], b"user:2"] {
            key.key = name.into();
            columns.push(&key);
        }
        let file = tempfile::tempfile().unwrap();
        let mut parquet = ParquetKeys::begin(file.try_clone().unwrap()).unwrap();
        parquet.batch(columns).unwrap();
        parquet.finish().unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let group = reader.metadata().row_group(0);
        for column in group.columns() {
            let name = column.column_path().string();
            assert_eq!(
                column.statistics().is_none(),
                KEY_COLUMNS.contains(&name.as_str()),
                "statistics of {name}"
            );
            assert_eq!(
                column.encodings().any(|e| e == Encoding::RLE_DICTIONARY),
                DICTIONARY_COLUMNS.contains(&name.as_str()),
                "dictionary of {name}"
            );
        }
    }

    /// The README's Parquet table names the columns of [`schema`], in order, with their
    /// types.
    #[test]
    fn readme_parquet_table_is_the_schema() {
        let readme = include_str!("../../../README.md");
        let table = &readme[readme.find("| column | Parquet type |").unwrap()..];
        let documented: Vec<(String, String)> = table
            .lines()
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .flat_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let kind = cells[2].to_string();
                cells[1]
                    .split(',')
                    .map(move |name| (name.trim().trim_matches('`').to_string(), kind.clone()))
            })
            .collect();
        let schema = schema();
        let fields: Vec<(String, String)> = schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), readme_type(f)))
            .collect();
        assert_eq!(documented, fields);
    }
}
