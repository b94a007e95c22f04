//! Where a pass's per-key rows go, in file order: the ordered outputs beside the unordered
//! aggregate folds.
//!
//! The pool builds the rows of each chunk of keys it analyses ([`RowBuild`], one builder
//! per dump); the pass hands the chunks' rows to the run's [`RowSink`] in file order. The
//! sink's owner starts it before the first dump (the text header) and finishes it after the
//! last (the Parquet footer); `report::keys::sinks` is the one that writes CSV, JSON Lines,
//! redis-rdb-tools' CSV and Parquet.

use crate::model::key_stats::KeyStats;
use std::io;

/// The writer of a run's rows, fed one chunk's rows at a time in file order (from the
/// scanning side of the pipeline's join, hence `Send`).
pub trait RowSink: Send {
    /// Builds one dump's rows on the pool.
    type Builder: RowBuild;
    /// How the pool builds the rows of the dump `name`.
    fn builder(&self, name: &str) -> Self::Builder;
    /// Writes one chunk's rows after those before it.
    fn batch(&mut self, rows: <Self::Builder as RowBuild>::Rows) -> io::Result<()>;
    /// Flushes the rows written so far (a damaged dump's rows are out before its error).
    fn flush(&mut self) -> io::Result<()>;
}

/// Builds the rows of one dump's keys, shared by the pool's workers.
pub trait RowBuild: Sync {
    /// The rows of one chunk of keys.
    type Rows: Send;
    /// A chunk's empty rows.
    fn start(&self) -> Self::Rows;
    /// Appends the row of `key`.
    fn push(&self, rows: &mut Self::Rows, key: &KeyStats<'_>);
}

/// No rows: the sink of a pass that only aggregates.
pub struct NoRows;

impl RowSink for NoRows {
    type Builder = NoRows;

    fn builder(&self, _: &str) -> NoRows {
        NoRows
    }

    fn batch(&mut self, (): ()) -> io::Result<()> {
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl RowBuild for NoRows {
    type Rows = ();

    fn start(&self) {}

    fn push(&self, (): &mut (), _: &KeyStats<'_>) {}
}
