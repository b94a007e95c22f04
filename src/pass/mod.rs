//! The pass: each dump read once, its keys analysed on the rayon pool, the per-key results
//! flowing two ways, both in file order — into the aggregates, and to the run's row sink.
//! Every command's dumps go through the one driver, [`analysis`].
//!
//! In the order a dump flows: [`input`] opens it (memory map, or a spool of standard input
//! or a compressed dump, or the payload a live server sends: [`live`]); [`scan`] reads its records in batches (header, aux fields, keys,
//! checksum); [`allocator_detection`] picks the allocator the model assumes from a sample
//! of its keys; [`pipeline`] analyses each batch on the pool while the next is scanned,
//! keys passing the [`filter`]; [`analysis`] drives all of it per dump and hands the rows
//! to a [`row_sink::RowSink`]; [`progress`] is the bar on stderr.
//!
//! [`fold`] is what the keys are folded into (the aggregator interface the aggregates
//! implement) and [`totals`] the per-dump totals every fold keeps for the per-file
//! breakdown.
//!
//! Layer: the pass, above the decoder and the model. May import `crate::rdb`,
//! `crate::text` and `crate::model`; never the aggregates (`aggregates`, `lint`), an output
//! (`report`: rows leave through [`row_sink::RowSink`], which `report::keys::sinks`
//! implements), `commands` or `flags`.

pub mod allocator_detection;
pub mod analysis;
pub mod filter;
pub mod fold;
pub mod input;
pub mod live;
pub mod pipeline;
pub mod progress;
pub mod row_sink;
pub mod scan;
pub mod totals;
