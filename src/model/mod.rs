//! The model: what the server that loads a dump makes of each value. [`server`] is that
//! server (family, version, thresholds, allocator) and the [`encoding`] it gives a value;
//! [`memory`] the bytes it holds for it, from the [`facts`] the decoder's walk reports
//! through [`crate::rdb::ValueSink`]. [`key_stats`] applies all of it to one key record:
//! everything the outputs say about a key, from one walk of its value, priced once and its
//! [`allocations`] kept by request size; [`calibration`] sums those into what the keys add to
//! `used_memory` under every candidate for what the dump does not say.
//!
//! May import: the decoder (`crate::rdb`). Nothing here reads a dump's bytes itself.

pub mod allocations;
pub mod allocator;
pub mod array;
pub mod calibration;
pub mod encoding;
pub mod facts;
pub mod hyperloglog;
pub mod key_stats;
pub mod memory;
pub mod server;
