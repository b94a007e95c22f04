//! The pass: each dump read once, its keys analysed on the rayon pool, the per-key results
//! flowing two ways — unordered into the aggregates' per-thread folds, in file order to
//! the run's row sink. Every command's dumps go through the one driver, [`analysis`].
//!
//! In the order a dump flows: [`input`] opens it (memory map, or a spool of standard input
//! or a compressed dump); [`scan`] reads its records in batches (header, aux fields, keys,
//! checksum); [`allocator_detection`] picks the allocator the model assumes from a sample
//! of its keys; [`pipeline`] analyses each batch on the pool while the next is scanned,
//! keys passing the [`filter`]; [`analysis`] drives all of it per dump and hands the rows
//! to a [`row_sink::RowSink`]; [`progress`] is the bar on stderr.
//!
//! Layer: the pass, above the decoder and the model. May import `crate::rdb` and
//! `crate::model`; never `commands` or `flags`, and no output's format (rows leave through
//! [`row_sink::RowSink`], which `report::keys::sinks` implements). Three imports still reach
//! up, until what they name moves down: the per-key statistics the pipeline computes
//! (`analyze::KeyStats`, which itself imports only the decoder and the model); the
//! aggregator interface [`analysis`] folds into and summarises (`analyze::Aggregator`,
//! `Source`, `totals::Totals`); and `report::escape::escape_key`, for the key a damage
//! message names.

pub mod allocator_detection;
pub mod analysis;
pub mod filter;
pub mod input;
pub mod pipeline;
pub mod progress;
pub mod row_sink;
pub mod scan;
