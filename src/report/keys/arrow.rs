//! Per-key rows as an Arrow IPC stream (`keys --format arrow`, to standard output or `-o
//! FILE`; `report --out-dir DIR --keys-format arrow` on standard output): the columns of
//! [`super::columns`], one record batch per chunk of keys in file order, readable as they
//! are written by pyarrow, Polars, DuckDB or Spark's `mapInArrow` (no file, no footer to
//! wait for).
//!
//! An ordered sink like [`super::parquet`]: [`ArrowKeys::begin`] writes the schema message
//! (with the schema's version in its metadata), [`ArrowKeys::batch`] one record batch,
//! [`ArrowKeys::finish`] the end-of-stream marker. Batches are written uncompressed:
//! the stream is meant for a reader on the other end of a pipe.

use super::columns::{schema, KeyColumns};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, SchemaRef};
use std::io::{self, Write};

/// An Arrow IPC stream of per-key rows being written to `W`.
pub struct ArrowKeys<W: Write> {
    writer: StreamWriter<W>,
    schema: SchemaRef,
}

/// The I/O error an Arrow error wraps (a closed pipe stays one), else the error as I/O.
fn io_error(e: ArrowError) -> io::Error {
    match e {
        ArrowError::IoError(_, io) => io,
        ArrowError::ExternalError(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other),
        },
        other => io::Error::other(other),
    }
}

impl<W: Write> ArrowKeys<W> {
    /// Starts the stream: its schema message.
    pub fn begin(out: W) -> io::Result<Self> {
        let schema = schema();
        let writer = StreamWriter::try_new(out, &schema).map_err(io_error)?;
        Ok(ArrowKeys { writer, schema })
    }

    /// Writes the rows of one chunk as a record batch, after those of the chunks before.
    pub fn batch(&mut self, rows: KeyColumns) -> io::Result<()> {
        let batch = rows.into_batch(self.schema.clone()).map_err(io_error)?;
        self.writer.write(&batch).map_err(io_error)
    }

    /// Ends the stream; the output is handed back.
    pub fn finish(mut self) -> io::Result<W> {
        self.writer.finish().map_err(io_error)?;
        self.writer.into_inner().map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::columns::{FileName, SCHEMA_VERSION, SCHEMA_VERSION_KEY};
    use super::*;
    use crate::model::key_stats::KeyStats;
    use arrow_ipc::reader::StreamReader;

    /// The stream reads back as the schema and the rows written, the dump's name sent
    /// once as a dictionary whatever the number of batches.
    #[test]
    fn a_stream_reads_back_batch_by_batch() {
        let file = FileName::new("dump.rdb");
        let mut stream = ArrowKeys::begin(Vec::new()).unwrap();
        let mut key = KeyStats::new();
        for chunk in 0..3 {
            let mut columns = KeyColumns::new(file.clone(), 2);
            for i in 0..2 {
                key.key = format!("k:{chunk}:{i}").into_bytes().into();
                columns.push(&key);
            }
            stream.batch(columns).unwrap();
        }
        let bytes = stream.finish().unwrap();
        let reader = StreamReader::try_new(&bytes[..], None).unwrap();
        assert_eq!(reader.schema(), schema());
        assert_eq!(
            reader.schema().metadata()[SCHEMA_VERSION_KEY],
            SCHEMA_VERSION
        );
        let batches: Vec<_> = reader.map(Result::unwrap).collect();
        assert_eq!(batches.len(), 3);
        let keys = batches[2].column_by_name("key").unwrap();
        let keys = keys
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(keys.value(1), "k:2:1");
        // One dictionary message: the name is in the stream once.
        let name_count = bytes.windows(8).filter(|w| w == b"dump.rdb").count();
        assert_eq!(name_count, 1);
    }
}
