//! Where the per-key rows of a run go, in file order: text rows ([`RowFormat`]: CSV, JSON
//! Lines, redis-rdb-tools' CSV), Parquet ([`ParquetKeys`]), or both (`report --out-dir
//! --keys-format both`).
//!
//! Rows are built on the pool worker that analysed the keys, one [`RowBatch`] per chunk
//! ([`RowBuilder`], one per dump), and handed to the ordered writers ([`RowSinks`]) in
//! file order: `begin` (the text header), `batch` per chunk, `finish`. They are the pass's
//! [`RowSink`]: the pass drives them, through that trait, without knowing the formats.

use super::parquet::{KeyColumns, ParquetKeys};
use super::rows::RowFormat;
use crate::model::key_stats::KeyStats;
use crate::pass::row_sink::{RowBuild, RowSink};
use crate::text::escape::{escape_key, neutralize_formula};
use std::io::{self, Write};
use std::sync::Arc;

/// Rows a chunk of keys holds at most (see [`crate::pass::pipeline`]).
const CHUNK_ROWS: usize = 1024;

/// The rows of one chunk of keys, in each form asked for.
#[derive(Default)]
pub struct RowBatch {
    text: Vec<u8>,
    columns: Option<KeyColumns>,
}

/// Builds the rows of one dump's keys (shared by the pool's workers).
pub struct RowBuilder {
    text: Option<RowFormat>,
    /// The dump's name as the text rows' first cell (empty with one dump).
    file_cell: Vec<u8>,
    /// The dump's name for the Parquet `file` column, when Parquet is written.
    parquet_file: Option<Arc<str>>,
}

impl RowBuild for RowBuilder {
    type Rows = RowBatch;

    fn start(&self) -> RowBatch {
        RowBatch {
            text: match self.text {
                Some(_) => Vec::with_capacity(64 * 1024),
                None => Vec::new(),
            },
            columns: self
                .parquet_file
                .as_ref()
                .map(|file| KeyColumns::new(file.clone(), CHUNK_ROWS)),
        }
    }

    fn push(&self, rows: &mut RowBatch, k: &KeyStats<'_>) {
        if let Some(format) = self.text {
            format.render(k, &self.file_cell, &mut rows.text);
        }
        if let Some(columns) = &mut rows.columns {
            columns.push(k);
        }
    }
}

/// The writers a run's rows go to, in file order.
pub struct RowSinks<'w> {
    text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
    parquet: Option<ParquetKeys<&'w mut (dyn Write + Send)>>,
    /// Text rows name their dump (the run reads several).
    with_file: bool,
}

impl<'w> RowSinks<'w> {
    /// Starts the outputs: the text header, the Parquet writer. `several_dumps`: text rows
    /// gain a first `file` column (Parquet always has one).
    pub fn begin(
        text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
        parquet: Option<&'w mut (dyn Write + Send)>,
        several_dumps: bool,
    ) -> io::Result<Self> {
        let with_file = several_dumps;
        let text = match text {
            Some((format, out)) => {
                out.write_all(format.header(with_file).as_bytes())?;
                Some((format, out))
            }
            None => None,
        };
        let parquet = parquet.map(ParquetKeys::begin).transpose()?;
        Ok(RowSinks {
            text,
            parquet,
            with_file,
        })
    }

    /// Completes the outputs (the Parquet footer) and flushes them.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        if let Some(parquet) = self.parquet {
            parquet.finish()?.flush()?;
        }
        Ok(())
    }
}

impl RowSink for RowSinks<'_> {
    type Builder = RowBuilder;

    fn builder(&self, name: &str) -> RowBuilder {
        let text = self.text.as_ref().map(|(format, _)| *format);
        RowBuilder {
            text,
            file_cell: match text {
                Some(format) if self.with_file => format.file_cell(name),
                _ => Vec::new(),
            },
            // The text a CSV cell holds, as for the keys.
            parquet_file: self
                .parquet
                .as_ref()
                .map(|_| Arc::from(neutralize_formula(escape_key(name.as_bytes())))),
        }
    }

    fn batch(&mut self, rows: RowBatch) -> io::Result<()> {
        if let Some((_, out)) = &mut self.text {
            out.write_all(&rows.text)?;
        }
        match (&mut self.parquet, rows.columns) {
            (Some(parquet), Some(columns)) => parquet.batch(columns),
            _ => Ok(()),
        }
    }

    /// The text rows (Parquet row groups are written whole).
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.text {
            Some((_, out)) => out.flush(),
            None => Ok(()),
        }
    }
}
