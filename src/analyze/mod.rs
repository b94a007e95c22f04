//! Per-key statistics computed from the decoder's records.

pub mod key_stats;

pub use key_stats::KeyStats;
