//! Per-key rows as Parquet (`keys --format parquet -o FILE`, `keys.parquet` in
//! `report --out-dir`): the key columns plus `file`, for DuckDB, Spark, Trino or pandas.
//!
//! An ordered sink: [`ParquetKeys::begin`] writes nothing yet, [`ParquetKeys::batch`] takes
//! the rows of one chunk of keys in file order, [`ParquetKeys::finish`] writes the footer.
//! The rows of a chunk are gathered column by column ([`KeyColumns`]) on the pool worker
//! that analysed the keys; the writer encodes them on the ordered side. Row groups are
//! closed at 1Mi rows or 128 MiB encoded, whichever comes first, so memory stays bounded
//! whatever the dump's size: only the row group being filled is held.

use crate::analyze::KeyStats;
use crate::report::escape::{escape_key, neutralize_formula};
use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, Int64Builder, StringBuilder, UInt16Builder, UInt64Builder,
    UInt8Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};

/// Rows per row group at most: a scan's unit of work in the engines.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Encoded bytes per row group at most (dumps of long keys reach it before the rows).
const ROW_GROUP_BYTES: usize = 128 << 20;
/// Columns of few distinct values, dictionary-encoded.
const DICTIONARY_COLUMNS: [&str; 5] = ["file", "db", "type", "encoding", "lfu_freq"];

/// The columns, in order: the key columns of `keys.csv` with the dump's name first and
/// the key's exact bytes beside its escaped text.
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let field = |name: &str, data_type, nullable| Field::new(name, data_type, nullable);
            Arc::new(Schema::new(vec![
                field(
                    "file",
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    false,
                ),
                field("db", DataType::UInt64, false),
                field("key", DataType::Utf8, false),
                field("key_bytes", DataType::Binary, false),
                field("type", DataType::Utf8, false),
                field("encoding", DataType::Utf8, false),
                field("elements", DataType::UInt64, true),
                field("serialized_bytes", DataType::UInt64, false),
                field("memory_bytes", DataType::UInt64, false),
                field("largest_element_bytes", DataType::UInt64, false),
                field("expiry_ms", DataType::Int64, true),
                field("ttl_s", DataType::Int64, true),
                field("idle_s", DataType::UInt64, true),
                field("lfu_freq", DataType::UInt8, true),
                field("slot", DataType::UInt16, false),
            ]))
        })
        .clone()
}

/// The rows of one chunk of keys from one dump, column by column.
pub struct KeyColumns {
    file: Arc<str>,
    db: UInt64Builder,
    key: StringBuilder,
    key_bytes: BinaryBuilder,
    redis_type: StringBuilder,
    encoding: StringBuilder,
    elements: UInt64Builder,
    serialized_bytes: UInt64Builder,
    memory_bytes: UInt64Builder,
    largest_element_bytes: UInt64Builder,
    expiry_ms: Int64Builder,
    ttl_s: Int64Builder,
    idle_s: UInt64Builder,
    lfu_freq: UInt8Builder,
    slot: UInt16Builder,
}

impl KeyColumns {
    /// Empty columns for about `rows` keys of the dump named `file`.
    pub fn new(file: Arc<str>, rows: usize) -> Self {
        KeyColumns {
            file,
            db: UInt64Builder::with_capacity(rows),
            key: StringBuilder::with_capacity(rows, rows * 24),
            key_bytes: BinaryBuilder::with_capacity(rows, rows * 24),
            redis_type: StringBuilder::with_capacity(rows, rows * 6),
            encoding: StringBuilder::with_capacity(rows, rows * 8),
            elements: UInt64Builder::with_capacity(rows),
            serialized_bytes: UInt64Builder::with_capacity(rows),
            memory_bytes: UInt64Builder::with_capacity(rows),
            largest_element_bytes: UInt64Builder::with_capacity(rows),
            expiry_ms: Int64Builder::with_capacity(rows),
            ttl_s: Int64Builder::with_capacity(rows),
            idle_s: UInt64Builder::with_capacity(rows),
            lfu_freq: UInt8Builder::with_capacity(rows),
            slot: UInt16Builder::with_capacity(rows),
        }
    }

    /// Appends the row of `k`.
    pub fn push(&mut self, k: &KeyStats<'_>) {
        self.db.append_value(k.db);
        // The text keys.csv holds, so the two join on `key`.
        self.key
            .append_value(neutralize_formula(escape_key(&k.key)));
        self.key_bytes.append_value(&k.key);
        self.redis_type.append_value(k.type_name());
        self.encoding.append_value(k.encoding);
        self.elements.append_option(k.elements);
        self.serialized_bytes.append_value(k.serialized_bytes);
        self.memory_bytes.append_value(k.memory_bytes);
        self.largest_element_bytes
            .append_value(k.largest_element_bytes);
        self.expiry_ms.append_option(k.expiry_ms);
        self.ttl_s.append_option(k.ttl_s);
        self.idle_s.append_option(k.idle_s);
        self.lfu_freq.append_option(k.lfu_freq);
        self.slot.append_value(k.slot);
    }

    fn into_batch(mut self, schema: SchemaRef) -> Result<RecordBatch, ParquetError> {
        let rows = self.db.len();
        // One dictionary entry, the dump's name, referred to by every row.
        let file = DictionaryArray::<Int32Type>::try_new(
            Int32Array::from(vec![0; rows]),
            Arc::new(StringArray::from(vec![&*self.file])),
        )?;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(file),
            Arc::new(self.db.finish()),
            Arc::new(self.key.finish()),
            Arc::new(self.key_bytes.finish()),
            Arc::new(self.redis_type.finish()),
            Arc::new(self.encoding.finish()),
            Arc::new(self.elements.finish()),
            Arc::new(self.serialized_bytes.finish()),
            Arc::new(self.memory_bytes.finish()),
            Arc::new(self.largest_element_bytes.finish()),
            Arc::new(self.expiry_ms.finish()),
            Arc::new(self.ttl_s.finish()),
            Arc::new(self.idle_s.finish()),
            Arc::new(self.lfu_freq.finish()),
            Arc::new(self.slot.finish()),
        ];
        Ok(RecordBatch::try_new(schema, columns)?)
    }
}

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
        let properties = DICTIONARY_COLUMNS
            .iter()
            .fold(properties, |p, column| {
                p.set_column_dictionary_enabled((*column).into(), true)
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
