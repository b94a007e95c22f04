//! Where the per-key rows of a run go, in file order: text rows ([`RowFormat`]: CSV, JSON
//! Lines, redis-rdb-tools' CSV), Parquet ([`ParquetKeys`]), or both (`report --out-dir
//! --keys-format both`).
//!
//! Rows are built on the pool worker that analysed the keys, one [`RowBatch`] per chunk
//! ([`RowBuilder`], one per dump), and handed to the ordered writers ([`RowSinks`]) in
//! file order: `begin` (the text header), `batch` per chunk, `finish`. They are the pass's
//! [`RowSink`]: the pass drives them, through that trait, without knowing the formats.
//!
//! Parquet is encoded and compressed on a thread of its own ([`RowSinks::with`] scopes
//! it), fed in file order through a channel of a few chunks: the thread that hands chunks
//! over also scans the dump, and encoding a chunk costs more than scanning it.

use super::parquet::{KeyColumns, ParquetKeys};
use super::rows::RowFormat;
use crate::model::key_stats::KeyStats;
use crate::pass::row_sink::{RowBuild, RowSink};
use crate::text::escape::{escape_key, neutralize_formula};
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};

/// Rows a chunk of keys holds at most (see [`crate::pass::pipeline`]).
const CHUNK_ROWS: usize = 1024;

/// Chunks waiting for the Parquet thread at most: enough to ride out a slow page, few
/// enough that the rows in flight stay a few megabytes.
const PARQUET_QUEUE: usize = 8;

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
pub struct RowSinks<'s, 'w> {
    text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
    parquet: Option<ParquetThread<'s>>,
    /// Text rows name their dump (the run reads several).
    with_file: bool,
}

/// The Parquet writer's thread: the chunks go to it in order, its outcome comes back when
/// it is joined.
struct ParquetThread<'s> {
    chunks: Option<SyncSender<KeyColumns>>,
    writer: Option<ScopedJoinHandle<'s, io::Result<()>>>,
}

impl<'s> ParquetThread<'s> {
    /// Starts the file on a thread of `scope`, which writes every chunk it receives and
    /// then the footer.
    fn start<'w: 's>(scope: &'s Scope<'s, 'w>, out: &'w mut (dyn Write + Send)) -> Self {
        let (chunks, received) = sync_channel::<KeyColumns>(PARQUET_QUEUE);
        let writer = scope.spawn(move || {
            let mut parquet = ParquetKeys::begin(out)?;
            for columns in received {
                parquet.batch(columns)?;
            }
            parquet.finish()?.flush()
        });
        ParquetThread {
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
            .and(Err(io::Error::other("the Parquet writer stopped")))
    }

    /// Waits for the writer to write what it was sent (and the footer, once the channel is
    /// closed); its error if it failed.
    fn join(&mut self) -> io::Result<()> {
        self.chunks.take();
        match self.writer.take() {
            Some(writer) => writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the Parquet writer panicked"))),
            None => Ok(()),
        }
    }
}

impl<'s, 'w: 's> RowSinks<'s, 'w> {
    /// Runs `write` with the outputs started (the text header written, the Parquet thread
    /// started), then completes them (the Parquet footer) and flushes them. `several_dumps`:
    /// text rows gain a first `file` column (Parquet always has one).
    pub fn with<T>(
        text: Option<(RowFormat, &'w mut (dyn Write + Send))>,
        parquet: Option<&'w mut (dyn Write + Send)>,
        several_dumps: bool,
        write: impl FnOnce(&mut RowSinks<'_, 'w>) -> io::Result<T>,
    ) -> io::Result<T> {
        std::thread::scope(|scope| {
            let mut sinks = RowSinks::begin(scope, text, parquet, several_dumps)?;
            let written = write(&mut sinks);
            // The footer only after rows that all went out; the writer joined either way.
            let finished = sinks.finish();
            let written = written?;
            finished.map(|()| written)
        })
    }

    fn begin(
        scope: &'s Scope<'s, 'w>,
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
        let parquet = parquet.map(|out| ParquetThread::start(scope, out));
        Ok(RowSinks {
            text,
            parquet,
            with_file,
        })
    }

    fn finish(mut self) -> io::Result<()> {
        self.flush()?;
        match &mut self.parquet {
            Some(parquet) => parquet.join(),
            None => Ok(()),
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
            (Some(parquet), Some(columns)) => parquet.send(columns),
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
