//! Where the per-key rows of a run go, in file order: text rows ([`RowFormat`]: CSV, JSON
//! Lines, redis-rdb-tools' CSV), columns ([`ColumnFormat`]: Parquet, an Arrow IPC stream),
//! or text and Parquet (`report --out-dir --keys-format both`).
//!
//! Rows are built on the pool worker that analysed the keys, one [`RowBatch`] per chunk
//! ([`RowBuilder`], one per dump), and handed to the ordered writers ([`RowSinks`]) in
//! file order: `begin` (the text header), `batch` per chunk, `finish`. They are the pass's
//! [`RowSink`]: the pass drives them, through that trait, without knowing the formats.
//!
//! Columns are encoded (and Parquet compressed) on a thread of their own ([`RowSinks::with`]
//! scopes it), fed in file order through a channel of a few chunks: the thread that hands
//! chunks over also scans the dump, and encoding a chunk costs more than scanning it.

use super::arrow::ArrowKeys;
use super::columns::{FileName, KeyColumns};
use super::parquet::ParquetKeys;
use super::rows::{RowFormat, RowText};
use crate::model::key_stats::KeyStats;
use crate::pass::row_sink::{RowBuild, RowSink};
use crate::text::escape::{escape_key, neutralize_formula};
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

/// Rows a chunk of keys holds at most (see [`crate::pass::pipeline`]).
const CHUNK_ROWS: usize = 1024;

/// Chunks waiting for the columns' thread at most: enough to ride out a slow page, few
/// enough that the rows in flight stay a few megabytes.
const COLUMNS_QUEUE: usize = 8;

/// How a run's rows are written as columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnFormat {
    /// A Parquet file (its footer last: to a file only).
    Parquet,
    /// An Arrow IPC stream.
    Arrow,
}

/// The rows of one chunk of keys, in each form asked for.
#[derive(Default)]
pub struct RowBatch {
    text: RowText,
    columns: Option<KeyColumns>,
}

/// Builds the rows of one dump's keys (shared by the pool's workers).
pub struct RowBuilder {
    text: Option<RowFormat>,
    /// The dump's name as the text rows' first cell (empty with one dump).
    file_cell: Vec<u8>,
    /// The dump's name for the `file` column, when columns are written.
    column_file: Option<FileName>,
}

impl RowBuild for RowBuilder {
    type Rows = RowBatch;

    fn start(&self) -> RowBatch {
        RowBatch {
            text: match self.text {
                Some(_) => RowText::with_capacity(64 * 1024),
                None => RowText::default(),
            },
            columns: self
                .column_file
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
pub struct RowSinks<'s, 'w> {
    text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
    /// The text header, until it goes out with the first rows (or at the end of a run
    /// that read no key): a run refused before its first key writes nothing.
    header: Option<String>,
    columns: Option<ColumnThread<'s>>,
    /// Text rows name their dump (the run reads several).
    with_file: bool,
}

/// The columns' writer's thread: the chunks go to it in order, its outcome comes back when
/// it is joined.
struct ColumnThread<'s> {
    chunks: Option<SyncSender<KeyColumns>>,
    writer: Option<ScopedJoinHandle<'s, io::Result<()>>>,
}

impl<'s> ColumnThread<'s> {
    /// Starts the file or stream on a thread of `scope`, which writes every chunk it
    /// receives and then the footer or end of stream.
    fn start<'w: 's>(
        scope: &'s Scope<'s, 'w>,
        format: ColumnFormat,
        out: &'w mut (dyn Write + Send),
    ) -> Self {
        let (chunks, received) = sync_channel::<KeyColumns>(COLUMNS_QUEUE);
        let writer = scope.spawn(move || match format {
            ColumnFormat::Parquet => {
                let mut parquet = ParquetKeys::begin(out)?;
                for columns in received {
                    parquet.batch(columns)?;
                }
                parquet.finish()?.flush()
            }
            ColumnFormat::Arrow => {
                let mut arrow = ArrowKeys::begin(out)?;
                for columns in received {
                    arrow.batch(columns)?;
                }
                arrow.finish()?.flush()
            }
        });
        ColumnThread {
            chunks: Some(chunks),
            writer: Some(writer),
        }
    }

    fn send(&mut self, columns: KeyColumns) -> io::Result<()> {
        let sent = (self.chunks.as_ref()).is_some_and(|chunks| chunks.send(columns).is_ok());
        if sent {
            return Ok(());
        }
        // The writer stopped (a write failed): its error says why.
        self.join()
            .and(Err(io::Error::other("the columns' writer stopped")))
    }

    /// Waits for the writer to write what it was sent (and the footer, once the channel is
    /// closed); its error if it failed.
    fn join(&mut self) -> io::Result<()> {
        self.chunks.take();
        match self.writer.take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the columns' writer panicked"))),
            None => Ok(()),
        }
    }
}

impl<'s, 'w: 's> RowSinks<'s, 'w> {
    /// Runs `write` with the outputs started (the text header written, the columns'
    /// thread started), then completes them (the Parquet footer, the end of the Arrow
    /// stream) and flushes them. `several_dumps`: text rows gain a first `file` column
    /// (columns always have one).
    pub fn with<T>(
        text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
        columns: Option<(ColumnFormat, &'w mut (dyn Write + Send))>,
        several_dumps: bool,
        write: impl FnOnce(&mut RowSinks<'_, 'w>) -> io::Result<T>,
    ) -> io::Result<T> {
        std::thread::scope(|scope| {
            let mut sinks = RowSinks::begin(scope, text, columns, several_dumps);
            let mut written = write(&mut sinks);
            if written.is_ok() {
                if let Err(e) = sinks.write_header() {
                    written = Err(e);
                }
            }
            // The footer only after rows that all went out; the writer joined either way.
            let finished = sinks.finish();
            let written = written?;
            finished.map(|()| written)
        })
    }

    fn begin(
        scope: &'s Scope<'s, 'w>,
        text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
        columns: Option<(ColumnFormat, &'w mut (dyn Write + Send))>,
        several_dumps: bool,
    ) -> Self {
        let with_file = several_dumps;
        let header = text.as_ref().map(|(format, _)| format.header(with_file));
        let columns = columns.map(|(format, out)| ColumnThread::start(scope, format, out));
        RowSinks {
            text,
            header,
            columns,
            with_file,
        }
    }

    fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        match &mut self.columns {
            Some(columns) => columns.join(),
            None => Ok(()),
        }
    }
}

impl RowSinks<'_, '_> {
    /// Writes the text header if it has not gone out yet.
    fn write_header(&mut self) -> io::Result<()> {
        match (self.header.take(), &mut self.text) {
            (Some(header), Some((_, out))) => out.write_all(header.as_bytes()),
            _ => Ok(()),
        }
    }
}

impl RowSink for RowSinks<'_, '_> {
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
            column_file: (self.columns.as_ref())
                .map(|_| FileName::new(&neutralize_formula(escape_key(name.as_bytes())))),
        }
    }

    fn batch(&mut self, rows: RowBatch) -> io::Result<()> {
        self.write_header()?;
        if let Some((_, out)) = &mut self.text {
            out.write_all(rows.text.rows())?;
        }
        match (&mut self.columns, rows.columns) {
            (Some(thread), Some(columns)) => thread.send(columns),
            _ => Ok(()),
        }
    }

    /// The text rows (columns go out from their own thread: Parquet row groups whole,
    /// Arrow batches as its output's buffer fills).
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.text {
            Some((_, out)) => out.flush(),
            None => Ok(()),
        }
    }
}
