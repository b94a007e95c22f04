//! Per-key rows as Parquet (`keys --format parquet -o FILE`, `keys.parquet` in
//! `report --out-dir`): the columns of [`super::columns`], for DuckDB, Spark, ClickHouse,
//! Trino or pandas.
//!
//! An ordered sink: [`ParquetKeys::begin`] writes nothing yet, [`ParquetKeys::batch`] takes
//! the rows of one chunk of keys in file order, [`ParquetKeys::finish`] writes the footer
//! (with the schema's version in its key-value metadata). Row groups are closed at 1Mi
//! rows or 128 MiB encoded, whichever comes first, so memory stays bounded whatever the
//! dump's size: only the row group being filled is held.

use super::columns::{schema, KeyColumns, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::io::{self, Write};

/// Rows per row group at most: a scan's unit of work in the engines.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Encoded bytes per row group at most (dumps of long keys reach it before the rows).
const ROW_GROUP_BYTES: usize = 128 << 20;
/// Columns of few distinct values, dictionary-encoded.
const DICTIONARY_COLUMNS: [&str; 5] = ["file", "db", "type", "encoding", "lfu_freq"];

/// The key's columns: its text as in CSV, and its bytes.
const KEY_COLUMNS: [&str; 2] = ["key", "key_bytes"];

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
            .set_dictionary_enabled(false)
            .set_key_value_metadata(Some(vec![KeyValue::new(
                SCHEMA_VERSION_KEY.to_string(),
                SCHEMA_VERSION.to_string(),
            )]));
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
        let batch =
            (rows.into_batch(self.schema.clone())).map_err(|e| io_error(ParquetError::from(e)))?;
        self.writer.write(&batch).map_err(io_error)
    }

    /// Closes the last row group and writes the footer; the output is handed back.
    pub fn finish(self) -> io::Result<W> {
        self.writer.into_inner().map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::columns::FileName;
    use super::*;
    use crate::model::key_stats::KeyStats;

    /// The columns the writer configures by name (dictionaries, no key statistics) are
    /// columns of the schema, and the file written has what was asked for on each.
    #[test]
    fn per_column_settings_reach_the_file() {
        use parquet::basic::{ConvertedType, Encoding};
        use parquet::file::reader::{FileReader, SerializedFileReader};

        let schema = schema();
        for name in DICTIONARY_COLUMNS.iter().chain(&KEY_COLUMNS) {
            assert!(
                schema.field_with_name(name).is_ok(),
                "{name} is not a column"
            );
        }
        let mut columns = KeyColumns::new(FileName::new("dump.rdb"), 2);
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
        let footer = reader.metadata().file_metadata();
        let version = footer
            .key_value_metadata()
            .unwrap()
            .iter()
            .find(|kv| kv.key == SCHEMA_VERSION_KEY);
        assert_eq!(
            version.and_then(|kv| kv.value.as_deref()),
            Some(SCHEMA_VERSION)
        );
        // Engines without unsigned types read every number as a plain integer.
        for column in footer.schema_descr().columns() {
            let converted = column.converted_type();
            assert!(
                !matches!(
                    converted,
                    ConvertedType::UINT_8
                        | ConvertedType::UINT_16
                        | ConvertedType::UINT_32
                        | ConvertedType::UINT_64
                ),
                "{} is {converted}",
                column.name()
            );
        }
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
}
