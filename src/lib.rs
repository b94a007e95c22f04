//! rdbscope: an offline analyzer for Redis and Valkey RDB dumps.
//!
//! [`rdb`] decodes (zero-copy, bounds-checked), [`model`] models what a server would make
//! of each value, [`analyze`] computes per-key statistics, [`report`] writes them.

pub mod allocator_detection;
pub mod analysis;
pub mod analyze;
pub mod commands;
pub mod filter;
pub mod flags;
pub mod input;
pub mod invisible;
pub mod lint;
pub mod model;
pub mod pipeline;
pub mod progress;
pub mod rdb;
pub mod report;
pub mod row_sink;
pub mod scan;
